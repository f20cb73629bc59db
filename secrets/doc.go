// Package secrets is the application-level secret store and the worker's
// secret source.
//
// Stored secrets are set, listed (names, versions, access and timestamps
// only), deleted and given access lists by people through the API, CLI and
// dashboard, which call Service. Generated secrets are created per
// environment by Capture when a deployment first mounts a name declared in
// spec.secrets, and renewed only after Regenerate. Values are sealed with
// the keyring before they reach the store and opened only by Values, which
// the deploy worker calls with the versions a deployment pinned: no other
// method returns a value, so no API response, page, log line or event can
// contain one.
//
// Service satisfies pipeline.SecretSource (Capture, Values). Refusals are
// *Error with a snake_case Code (secret_missing, secret_access_denied,
// secret_name_conflict, ...), which the pipeline turns into a deployment
// failure.
//
// It imports store, keyring, manifest and savedmanifest; it must not import
// pipeline (which imports it), jobs, app, runtime (other than runtime/swarm's SecretValue type), views or
// forge.
package secrets

// Package savedmanifest reads an application's saved manifest: its current
// revision from the store, decoded.
//
// Current decodes as apply does (manifest.Decode, strict): the service
// layer and the secret store act on the manifest, so a revision this
// version cannot read is an error. CurrentLenient and DecodeLenient decode
// with encoding/json alone, ignoring fields this version no longer knows:
// the dashboard shows revisions saved by earlier versions rather than
// failing the page. For a revision saved by this version both give the same
// manifest.
//
// A decoding failure is a *DecodeError naming the revision. An application
// without a saved manifest (or not in the team) gives a nil manifest, a
// zero revision and no error.
//
// It imports store and manifest; it must not import app, pipeline, jobs,
// secrets, runtime or views (secrets and app/service import it), and
// manifest must not import it (manifest imports nothing from the rest of
// the module).
package savedmanifest

package service_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// referencedWeb has web named by depends_on, a job, a route and an export,
// and mounts the generated secret session at two paths.
const referencedWeb = header + webService + `
[[spec.services.secrets]]
name = "session"
target = "/run/secrets/session"

[[spec.services]]
name = "worker"
depends_on = ["web"]
[spec.services.source]
type = "image"
image = "example.com/worker:1"

[[spec.jobs]]
name = "migrate"
service = "web"
command = ["migrate"]
[[spec.jobs.secrets]]
name = "session"
target = "/run/secrets/job-session"

[[spec.routes]]
name = "site"
hostname = "notes.example.com"
service = "web"
port = 8080

[[spec.exports]]
service = "web"
applications = ["billing"]

[[spec.secrets]]
name = "session"
generate = { type = "random", bytes = 32 }
`

// notesKit edits the saved manifest of an applied application.
type notesKit struct {
	b     *applyBundle
	appID string
}

// editNotes applies doc and returns a kit editing its application.
func editNotes(t *testing.T, doc string) notesKit {
	t.Helper()
	b := setupApply(t)
	res, err := b.apply(t, doc, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return notesKit{b: b, appID: res.Application.ID}
}

// edit runs one edit of the saved manifest.
func (k notesKit) edit(e func(*manifest.Manifest) error) (service.ApplyResult, error) {
	return service.EditManifest(context.Background(), k.b.st, k.b.actor, k.b.enqueue, k.appID, nil, e, false)
}

// undeclare runs UndeclareSecret.
func (k notesKit) undeclare(t *testing.T, name string) error {
	t.Helper()
	e, err := service.UndeclareSecret(context.Background(), k.b.st, k.b.actor, k.appID, name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.edit(e)
	return err
}

// saved reads the current manifest and its revision.
func (k notesKit) saved(t *testing.T) (*manifest.Manifest, int64) {
	t.Helper()
	ctx := context.Background()
	cur, err := k.b.st.GetCurrentManifestRevision(ctx, k.b.actor.TeamID, k.appID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(cur.Manifest, "json")
	if err != nil {
		t.Fatal(err)
	}
	return m, cur.Revision
}

// paths lists the paths of a *ManifestError, failing unless err is one
// whose every error has code.
func paths(t *testing.T, err error, code string) []string {
	t.Helper()
	var me *service.ManifestError
	if !errors.As(err, &me) {
		t.Fatalf("error %v, want a ManifestError", err)
	}
	var out []string
	for _, e := range me.Errors {
		if e.Code != code {
			t.Fatalf("error %+v, want code %s", e, code)
		}
		out = append(out, e.Path)
	}
	return out
}

func TestRemoveService_RefusedWhileReferenced(t *testing.T) {
	t.Parallel()
	k := editNotes(t, referencedWeb)
	edit := k.edit

	_, err := edit(service.RemoveService("web"))
	got := paths(t, err, "service_referenced")
	want := []string{"spec.jobs[0].service", "spec.routes[0].service", "spec.exports[0].service"}
	if !slices.Equal(got, want) {
		t.Fatalf("referencing paths %v, want %v", got, want)
	}
	if _, rev := k.saved(t); rev != 1 {
		t.Fatalf("a refused removal saved revision %d", rev)
	}
	var ie *service.InputError
	if _, err := edit(service.RemoveService("ghost")); !errors.As(err, &ie) || ie.Code != "service_unknown" {
		t.Fatalf("removing an unknown service: %v", err)
	}

	// Once nothing but depends_on names it, the removal saves and drops
	// it from worker's depends_on.
	for _, e := range []func(*manifest.Manifest) error{service.RemoveJob("migrate"), service.RemoveRoute("site"), service.RemoveExport("web")} {
		if _, err := edit(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := edit(service.RemoveService("web")); err != nil {
		t.Fatal(err)
	}
	m, rev := k.saved(t)
	if rev != 5 || len(m.Spec.Services) != 1 || m.Spec.Services[0].Name != "worker" || m.Spec.Services[0].DependsOn != nil {
		t.Fatalf("after removal revision %d services %+v", rev, m.Spec.Services)
	}
}

func TestAddService_ValidatesTheWholeResult(t *testing.T) {
	t.Parallel()
	k := editNotes(t, header+webService)
	edit := k.edit

	worker := manifest.Service{Name: "worker", Source: manifest.Source{Type: manifest.SourceImage, Image: "example.com/worker:1"},
		Replicas: manifest.NewInt(2), DependsOn: []string{"web"}}
	if _, err := edit(service.AddService(worker)); err != nil {
		t.Fatal(err)
	}
	var ie *service.InputError
	if _, err := edit(service.AddService(worker)); !errors.As(err, &ie) || ie.Code != "service_name_taken" {
		t.Fatalf("adding worker twice: %v, want service_name_taken", err)
	}
	// A service depending on one the manifest lacks is invalid as a whole.
	broken := manifest.Service{Name: "cron", Source: worker.Source, DependsOn: []string{"ghost"}}
	var me *service.ManifestError
	if _, err := edit(service.AddService(broken)); !errors.As(err, &me) || me.Errors[0].Path != "spec.services[2].depends_on[0]" {
		t.Fatalf("adding a broken service: %v", err)
	}
	m, rev := k.saved(t)
	if rev != 2 || len(m.Spec.Services) != 2 || m.Spec.Services[1].Name != "worker" || m.Spec.Services[1].Replicas.N != 2 {
		t.Fatalf("revision %d services %+v", rev, m.Spec.Services)
	}
}

func TestUndeclareSecret_RefusedWhileMounted(t *testing.T) {
	t.Parallel()
	k := editNotes(t, referencedWeb)
	edit := k.edit

	err := k.undeclare(t, "session")
	got := paths(t, err, "secret_mounted")
	want := []string{"spec.services[0].secrets[0].name", "spec.jobs[0].secrets[0].name"}
	if !slices.Equal(got, want) {
		t.Fatalf("mount paths %v, want %v", got, want)
	}
	// Replacing the whole list refuses the same way.
	replace, err := service.ReplaceSecretDeclarations(context.Background(), k.b.st, k.b.actor, k.appID, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = edit(replace)
	if got := paths(t, err, "secret_mounted"); !slices.Equal(got, want) {
		t.Fatalf("replace: mount paths %v, want %v", got, want)
	}
	var ie *service.InputError
	if err := k.undeclare(t, "ghost"); !errors.As(err, &ie) || ie.Code != "secret_declaration_unknown" {
		t.Fatalf("undeclaring an unknown secret: %v", err)
	}

	// Declaring again replaces the declaration; a second name is added;
	// an invalid generator names its field.
	if _, err := edit(service.DeclareSecret(manifest.SecretDeclaration{Name: "session", Generate: manifest.Generate{Type: "random", Bytes: 64, Encoding: "base64url"}})); err != nil {
		t.Fatal(err)
	}
	if _, err := edit(service.DeclareSecret(manifest.SecretDeclaration{Name: "signing-key", Generate: manifest.Generate{Type: "rsa", Bits: 2048}})); err != nil {
		t.Fatal(err)
	}
	_, err = edit(service.DeclareSecret(manifest.SecretDeclaration{Name: "bad", Generate: manifest.Generate{Type: "rsa", Bits: 1024}}))
	if got := paths(t, err, "secret_generate_invalid"); !slices.Equal(got, []string{"spec.secrets[2].generate.bits"}) {
		t.Fatalf("invalid generator paths %v", got)
	}
	// A declaration nothing mounts goes.
	if err := k.undeclare(t, "signing-key"); err != nil {
		t.Fatal(err)
	}
	m, rev := k.saved(t)
	if rev != 4 || len(m.Spec.Secrets) != 1 || m.Spec.Secrets[0].Generate.Bytes != 64 || m.Spec.Secrets[0].Generate.Encoding != "base64url" {
		t.Fatalf("revision %d secrets %+v", rev, m.Spec.Secrets)
	}
}

// TestUndeclareSecret_MountByReference mounts a secret whose name is a
// variable: a declaration it renders to in any environment stays.
func TestUndeclareSecret_MountByReference(t *testing.T) {
	t.Parallel()
	k := editNotes(t, header+webService+`
[[spec.services.secrets]]
name = "${{ vars.key }}"
target = "/run/secrets/key"

[[spec.secrets]]
name = "key-live"
generate = { type = "random", bytes = 32 }

[[spec.secrets]]
name = "key-test"
generate = { type = "random", bytes = 32 }

[[spec.secrets]]
name = "unused"
generate = { type = "random", bytes = 32 }

[spec.variables]
key = "key-live"

[spec.environments.production]
[spec.environments.staging.variables]
key = "key-test"
`)
	for _, name := range []string{"key-live", "key-test"} {
		if got := paths(t, k.undeclare(t, name), "secret_mounted"); !slices.Equal(got, []string{"spec.services[0].secrets[0].name"}) {
			t.Fatalf("undeclaring %s: paths %v", name, got)
		}
	}
	if err := k.undeclare(t, "unused"); err != nil {
		t.Fatal(err)
	}
	if m, rev := k.saved(t); rev != 2 || len(m.Spec.Secrets) != 2 {
		t.Fatalf("revision %d secrets %+v", rev, m.Spec.Secrets)
	}
}

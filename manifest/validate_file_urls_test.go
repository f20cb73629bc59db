package manifest_test

import (
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

func TestFileURLErrors(t *testing.T) {
	t.Parallel()
	doc := header + `
[spec.manifest]
path = "slipway.toml"
[spec.manifest.repository]
url = "FILE:///srv/git/app.git"
branch = "main"

[[spec.services]]
name = "web"
[spec.services.source]
type = "git"
repository = { url = "https://git.example.com/app.git", branch = "main" }
build = { type = "docker" }

[[spec.services]]
name = "worker"
[spec.services.source]
type = "git"
repository = { url = "file:///etc", branch = "main" }
build = { type = "docker" }

[[spec.services]]
name = "api"
[spec.services.source]
type = "git"
repository = "self"
build = { type = "docker" }
`
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("Validate leaves the file:// policy to the caller, but: %v", errs)
	}
	errs := manifest.FileURLErrors(m)
	want := []string{"spec.manifest.repository.url", "spec.services[1].source.repository.url"}
	if len(errs) != len(want) {
		t.Fatalf("errors = %v, want %v", errs, want)
	}
	for i, e := range errs {
		if e.Path != want[i] || e.Code != manifest.CodeFileURLDisabled || e.Message == "" {
			t.Errorf("error %d = %+v, want %s on %s", i, e, manifest.CodeFileURLDisabled, want[i])
		}
	}
}

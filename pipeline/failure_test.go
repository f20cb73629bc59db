package pipeline

import (
	"errors"
	"fmt"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
)

// A deployment records its code and message apart and shows them as
// "code: message": the message must not name the code again, whichever
// runtime error it came from.
func TestFailure_NamesItsCodeOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"swarm", asFailure(fmt.Errorf("rollout web: %w", &swarm.Error{Code: swarm.CodeRolloutFailed, Object: "service web", Message: "the container exited with code 0"})),
			"rollout_failed: service web: the container exited with code 0"},
		{"image", fail(image.CodeUnavailable, "service %s: %s", "web", (&image.Error{Code: image.CodeUnavailable, Reference: "x:1", Message: "not found"}).Detail()),
			image.CodeUnavailable + ": service web: image x:1: not found"},
		{"build", buildFailure("spec.manifest.repository", &build.Error{Code: build.CodeBranchNotFound, Field: "branch", Message: "no branch next"}),
			"branch_not_found: spec.manifest.repository: branch: no branch next"},
		{"release", asCoded(manifest.CheckRelease(
			&manifest.Manifest{Spec: manifest.Spec{Services: []manifest.Service{{Name: "web", Source: manifest.Source{Image: "a"}}}}},
			&manifest.Manifest{Spec: manifest.Spec{Services: []manifest.Service{{Name: "web", Source: manifest.Source{Image: "b"}}}}}, "production")),
			`release_incompatible: the release's build inputs render differently in production: services.web.source.image: "a" -> "b"; keep per-environment values out of build inputs`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var f *Failure
			if !errors.As(c.err, &f) {
				t.Fatalf("%v is no *Failure", c.err)
			}
			if f.Error() != c.want {
				t.Errorf("failure %q,\nwant %q", f.Error(), c.want)
			}
		})
	}
}

package manifest

import (
	"errors"
	"reflect"
	"testing"
)

func TestCheckRelease(t *testing.T) {
	t.Parallel()
	release := func(image, origin string) *Manifest {
		return &Manifest{Spec: Spec{Services: []Service{
			{Name: "web", Source: Source{Type: SourceImage, Image: image}},
			{Name: "api", Source: Source{Type: SourceGit, Build: &Build{Dockerfile: "Dockerfile", Args: map[string]string{"ORIGIN": origin}}}},
		}}}
	}
	built := release("example.com/web:1", "staging")
	if err := CheckRelease(built, release("example.com/web:1", "staging"), "production"); err != nil {
		t.Fatalf("same build inputs: %v", err)
	}
	err := CheckRelease(built, release("example.com/web:2", "production"), "production")
	var re *ReleaseError
	if !errors.As(err, &re) || re.ErrorCode() != CodeReleaseIncompatible {
		t.Fatalf("different build inputs: %v, want a *ReleaseError", err)
	}
	want := []string{
		`services.web.source.image: "example.com/web:1" -> "example.com/web:2"`,
		`services.api.build.args.ORIGIN: "staging" -> "production"`,
	}
	if !reflect.DeepEqual(re.Changes, want) {
		t.Errorf("changes %q, want %q", re.Changes, want)
	}
	const msg = `the release's build inputs render differently in production: services.web.source.image: "example.com/web:1" -> "example.com/web:2"; services.api.build.args.ORIGIN: "staging" -> "production"; keep per-environment values out of build inputs`
	if err.Error() != msg {
		t.Errorf("message %q,\nwant %q", err.Error(), msg)
	}
}

package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild_PathTextIsAFieldError: a Dockerfile or context path the file
// system cannot look up (NUL, an over-long name) is a build.Error naming
// the field, refused before anything is read or sent to Docker.
func TestBuild_PathTextIsAFieldError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	co := &Checkout{Dir: dir, Commit: strings.Repeat("a", 40)}
	b := &Builder{Installation: "path-text-test"}
	for _, p := range []string{"Docker\x00file", "x\x1b[31m", strings.Repeat("a", 256), strings.Repeat("a/", 2100) + "Dockerfile"} {
		for _, field := range []string{"dockerfile", "context"} {
			req := BuildRequest{Checkout: co}
			if field == "dockerfile" {
				req.Dockerfile = p
			} else {
				req.Context = p
			}
			_, err := b.Build(context.Background(), req)
			var be *Error
			if !errors.As(err, &be) || be.Field != field || be.Code != CodeBuildPathInvalid {
				t.Errorf("%s %.30q: %v, want a %s error on %s", field, p, err, CodeBuildPathInvalid, field)
			}
		}
	}
}

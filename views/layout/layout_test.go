package layout

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/a-h/templ"

	"github.com/slipwayhq/slipway/views"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestLayout_Golden pins the page shells' markup so a change to them shows
// up in review as a golden diff.
func TestLayout_Golden(t *testing.T) {
	t.Parallel()
	req := views.Request{
		CSRF: "csrf-token-value", UserEmail: "owner@example.com", Path: "/members",
		Team:  views.TeamRef{ID: "team_a", Name: "Acme", Role: "owner"},
		Teams: []views.TeamRef{{ID: "team_a", Name: "Acme", Role: "owner"}, {ID: "team_b", Name: "Beta", Role: "viewer"}},
	}
	body := templ.Raw("<p>body</p>")
	tests := []struct {
		name string
		c    templ.Component
		req  views.Request
	}{
		{"app", App("Members", body), req},
		{"bare", Bare("Log in", body), views.Request{CSRF: "csrf-token-value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.c.Render(views.WithRequest(context.Background(), tt.req), &buf); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tt.name+".golden.html")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./views/layout -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("%s differs from %s; if intended, run go test ./views/layout -update\ngot:\n%s", tt.name, path, buf.String())
			}
		})
	}
}

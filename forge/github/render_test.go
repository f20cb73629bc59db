package github_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/forge/github"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestRenderComment(t *testing.T) {
	t.Parallel()
	routes := []github.RouteLink{
		{Name: "web", URL: "https://notes-feat-login-3fa2c1.dev.example.com"},
		{Name: "api|v1", URL: "https://api-notes-feat-login-3fa2c1.dev.example.com"},
	}
	base := github.CommentData{
		ApplicationID: "app_abc", ApplicationName: "notes",
		CommitSHA:     "0123456789abcdef0123456789abcdef01234567",
		DeploymentURL: "https://slipway.example.com/apps/notes/deployments/dep_1",
		Routes:        routes,
	}
	tests := []struct {
		name string
		edit func(d *github.CommentData)
	}{
		{name: "queued", edit: func(d *github.CommentData) { d.Status = github.CommentQueued }},
		{name: "building", edit: func(d *github.CommentData) { d.Status = github.CommentBuilding }},
		{name: "deploying", edit: func(d *github.CommentData) { d.Status = github.CommentDeploying }},
		{name: "ready", edit: func(d *github.CommentData) { d.Status = github.CommentReady }},
		{name: "failed", edit: func(d *github.CommentData) {
			d.Status = github.CommentFailed
			d.FailedStep = "build web"
			var lines []string
			for i := range 14 {
				lines = append(lines, "error line "+string(rune('a'+i)))
			}
			lines[1] = "```injected fence```"
			d.Error = strings.Join(lines, "\n")
		}},
		{name: "removed", edit: func(d *github.CommentData) { d.Status = github.CommentRemoved }},
		{name: "approval_required", edit: func(d *github.CommentData) {
			d.Status = github.CommentApprovalRequired
			d.DeploymentURL = ""
			d.ApprovalURL = "https://slipway.example.com/apps/notes/previews/pending"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := base
			tt.edit(&d)
			got := github.RenderComment(d)
			if !strings.HasPrefix(got, github.Marker("app_abc")+"\n") {
				t.Fatalf("comment does not start with the marker:\n%s", got)
			}
			path := filepath.Join("testdata", "comment_"+tt.name+".md")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("comment differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

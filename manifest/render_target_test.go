package manifest

import "testing"

// One rule for git.branch and git.sha: a deployment renders what it
// fetched, else its target's own; a plan renders what a deployment would
// fetch, with PlanGitSHA for a commit nothing pins.
func TestPlanContext_GitRules(t *testing.T) {
	t.Parallel()
	const pinned = "1111111111111111111111111111111111111111"
	const connPinned = "2222222222222222222222222222222222222222"
	repoBacked := func(branch, commit string) *Manifest {
		return &Manifest{Spec: Spec{Manifest: &ManifestSource{Path: "slipway.toml",
			Repository: &Repository{URL: "https://example.com/a.git", Branch: branch, Commit: commit}}}}
	}
	for _, c := range []struct {
		name                string
		m                   *Manifest
		target              Target
		wantBranch, wantSHA string
	}{
		{"not repository-backed", &Manifest{}, Target{Name: "production"}, "", ""},
		{"connection's branch, unpinned", repoBacked("main", ""), Target{Name: "production"}, "main", PlanGitSHA},
		{"connection's pinned commit", repoBacked("main", connPinned), Target{Name: "production"}, "main", connPinned},
		{"environment's branch wins, unpinned", repoBacked("main", connPinned), Target{Name: "staging", Branch: "next"}, "next", PlanGitSHA},
		{"environment's commit on the connection's branch", repoBacked("main", ""), Target{Name: "production", Commit: pinned}, "main", pinned},
		{"preview of a branch", repoBacked("main", ""), Target{Name: "pr-1", Preview: true, Branch: "feature"}, "feature", PlanGitSHA},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rc := PlanContext(c.m, c.target)
			if rc.GitBranch != c.wantBranch || rc.GitSHA != c.wantSHA {
				t.Errorf("git = %q @ %q, want %q @ %q", rc.GitBranch, rc.GitSHA, c.wantBranch, c.wantSHA)
			}
			if rc.DeploymentID != PlanDeploymentID || rc.Environment != c.target.Name || rc.Preview != c.target.Preview {
				t.Errorf("context %+v does not render target %+v as a plan", rc, c.target)
			}
		})
	}
}

func TestDeploymentContext_FetchedWins(t *testing.T) {
	t.Parallel()
	target := Target{Name: "pr-1", Slug: "pr-1", Preview: true, Branch: "feature", Commit: ""}
	rc := DeploymentContext(target, "dep_1", "feature", "abc123")
	if rc.GitBranch != "feature" || rc.GitSHA != "abc123" || rc.DeploymentID != "dep_1" || !rc.Preview || rc.Slug != "pr-1" {
		t.Errorf("fetched deployment renders with %+v", rc)
	}
	pinned := Target{Name: "production", Branch: "main", Commit: "def456"}
	if rc := DeploymentContext(pinned, "dep_2", "", ""); rc.GitBranch != "main" || rc.GitSHA != "def456" {
		t.Errorf("unfetched deployment renders git %q @ %q, want the target's main @ def456", rc.GitBranch, rc.GitSHA)
	}
}

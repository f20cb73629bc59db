package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func TestGitHubRepositoryURL(t *testing.T) {
	for _, c := range []struct {
		web, repo string
		want      bool
	}{
		{"https://github.com/", "https://github.com/acme/notes.git", true},
		{"https://github.com/", "https://github.com/Acme/Notes", true},
		{"https://github.com/", "https://github.com/acme/other.git", false},
		{"https://github.com/", "https://evil.example/acme/notes.git", false},
		{"https://github.com/", "http://github.com/acme/notes.git", false},
		{"https://github.com/", "https://user:pw@github.com/acme/notes.git", false},
		{"https://github.com/", "git@github.com:acme/notes.git", false},
		{"https://ghe.example/", "https://ghe.example/acme/notes.git", true},
		{"https://github.com/", "file:///srv/acme/notes.git", false},
	} {
		if got := jobs.GitHubRepositoryURL(c.web, c.repo, "acme/notes"); got != c.want {
			t.Errorf("GitHubRepositoryURL(%s, %s) = %v, want %v", c.web, c.repo, got, c.want)
		}
	}
}

func TestGitHubCredentials_TokenOnlyForTheConnectedRepository(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	fake := githubtest.New(t)
	fake.AddInstallation(31, "acme", githubtest.Repo{ID: 310, FullName: "acme/notes", Private: true})
	cfg := fake.Config()
	src := &github.Source{Static: &cfg, Options: github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond}}}
	creds := &jobs.GitHubCredentials{Store: st, Tokens: src}

	team, err := st.CreateTeam(ctx, "Acme", "acme")
	must(t, err)
	user, err := st.CreateUser(ctx, "ada@example.com", "Ada", "hash")
	must(t, err)
	must(t, st.AddMember(ctx, team.ID, user.ID, store.RoleOwner))
	app, err := st.CreateApplication(ctx, team.ID, "notes")
	must(t, err)
	other, err := st.CreateApplication(ctx, team.ID, "other")
	must(t, err)
	_, err = st.BindGitHubInstallation(ctx, team.ID, 31, user.ID)
	must(t, err)
	_, err = st.LinkGitHubRepository(ctx, team.ID, app.ID, 31, 310, "acme/notes")
	must(t, err)
	repoURL := fake.URL + "/acme/notes.git"

	auth, err := creds.RepositoryAuth(ctx, team.ID, app.ID, repoURL)
	must(t, err)
	if auth.Username != "x-access-token" || auth.Password == "" || fake.CountCalls("POST", "/app/installations/31/access_tokens") != 1 {
		t.Fatalf("connected repository: auth user %q, token set %v", auth.Username, auth.Password != "")
	}
	// Another URL, another application, or a suspended installation: no
	// token leaves.
	for name, c := range map[string]struct{ app, url string }{
		"other repository":  {app.ID, fake.URL + "/acme/secrets.git"},
		"other host":        {app.ID, "https://evil.example/acme/notes.git"},
		"other application": {other.ID, repoURL},
	} {
		a, err := creds.RepositoryAuth(ctx, team.ID, c.app, c.url)
		if err != nil || a.Password != "" {
			t.Errorf("%s: got a token (%v)", name, err)
		}
	}
	must(t, st.SetGitHubInstallationSuspended(ctx, 31, true))
	if a, err := creds.RepositoryAuth(ctx, team.ID, app.ID, repoURL); err != nil || a.Password != "" {
		t.Errorf("suspended installation: got a token (%v)", err)
	}
	// A GitHub that cannot mint tokens leaves the read anonymous, not failed.
	must(t, st.SetGitHubInstallationSuspended(ctx, 31, false))
	fake.Fail("POST", "/app/installations/", 500, 100, nil)
	creds2 := &jobs.GitHubCredentials{Store: st, Tokens: &github.Source{Static: &cfg, Options: github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond, Attempts: 2}}}}
	if a, err := creds2.RepositoryAuth(ctx, team.ID, app.ID, repoURL); err != nil || a.Password != "" || strings.Contains(a.Username, "token") {
		t.Errorf("GitHub down: auth %q, err %v; want anonymous", a.Username, err)
	}
}

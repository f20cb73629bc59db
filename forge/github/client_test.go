package github_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/forge/github/githubtest"
)

const (
	testInstallation = int64(77)
	testRepo         = "acme/notes"
)

type testBundle struct {
	ctx    context.Context
	fake   *githubtest.Server
	client *github.Client
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	fake := githubtest.New(t)
	fake.AddInstallation(testInstallation, "acme",
		githubtest.Repo{ID: 1, FullName: testRepo}, githubtest.Repo{ID: 2, FullName: "acme/api", Private: true})
	client, err := github.New(fake.Config(), github.Options{Retry: github.RetryPolicy{BaseDelay: time.Millisecond, MaxWait: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return &testBundle{ctx: context.Background(), fake: fake, client: client}
}

func TestClient_InstallationToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tok, err := b.client.InstallationToken(b.ctx, testInstallation)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "ghs_") {
		t.Fatalf("token = %q", tok)
	}
	again, err := b.client.InstallationToken(b.ctx, testInstallation)
	if err != nil || again != tok {
		t.Fatalf("second token = %q, %v; want the cached %q", again, err, tok)
	}
	if n := b.fake.CountCalls(http.MethodPost, "/access_tokens"); n != 1 {
		t.Fatalf("token requests = %d, want 1 (cached)", n)
	}
	if _, err := b.client.InstallationToken(b.ctx, 999); err == nil {
		t.Fatal("token of an unknown installation: want an error")
	}
}

func TestClient_ListInstallationRepositories(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var repos []githubtest.Repo
	for i := range 130 { // more than one page of 100
		repos = append(repos, githubtest.Repo{ID: int64(100 + i), FullName: "big/r" + strings.Repeat("x", i%3) + string(rune('a'+i%26))})
	}
	b.fake.AddInstallation(88, "big", repos...)
	got, err := b.client.ListInstallationRepositories(b.ctx, 88)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 130 || got[129].ID != 229 || got[0].DefaultBranch != "main" {
		t.Fatalf("got %d repositories (last %+v)", len(got), got[len(got)-1])
	}
}

func TestClient_CollaboratorPermission(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.SetPermission(testRepo, "wendy", "write")
	b.fake.SetPermission(testRepo, "mia", "maintain")
	b.fake.SetPermission(testRepo, "rita", "read")
	b.fake.SetPermission(testRepo, "ada", "admin")
	for _, tt := range []struct {
		user  string
		want  github.Permission
		write bool
	}{
		{"wendy", "write", true}, {"mia", "maintain", true}, {"ada", "admin", true},
		{"rita", "read", false}, {"stranger", "none", false},
	} {
		got, err := b.client.CollaboratorPermission(b.ctx, testInstallation, testRepo, tt.user)
		if err != nil {
			t.Fatalf("%s: %v", tt.user, err)
		}
		if got != tt.want || got.CanWrite() != tt.write {
			t.Errorf("%s: permission %q (write %v), want %q (%v)", tt.user, got, got.CanWrite(), tt.want, tt.write)
		}
	}
}

func TestClient_UpsertComment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const app = "app_one"
	b.fake.AddComment(testRepo, 5, "someone", "looks good")
	body := func(sha string) string {
		return github.RenderComment(github.CommentData{ApplicationID: app, ApplicationName: "notes", Status: github.CommentQueued, CommitSHA: sha})
	}
	id, err := b.client.UpsertComment(b.ctx, testInstallation, testRepo, 5, app, 0, body("aaaaaaa"))
	if err != nil {
		t.Fatal(err)
	}
	// The stored id is used when known, and the marker finds the comment when
	// it is not (a lost update of the bookkeeping row).
	if id2, err := b.client.UpsertComment(b.ctx, testInstallation, testRepo, 5, app, id, body("bbbbbbb")); err != nil || id2 != id {
		t.Fatalf("update with known id: %d, %v", id2, err)
	}
	if id3, err := b.client.UpsertComment(b.ctx, testInstallation, testRepo, 5, app, 0, body("ccccccc")); err != nil || id3 != id {
		t.Fatalf("update found by marker: %d, %v", id3, err)
	}
	// Another application keeps a comment of its own.
	if other, err := b.client.UpsertComment(b.ctx, testInstallation, testRepo, 5, "app_two", 0, "hello"); err != nil || other == id {
		t.Fatalf("other application: %d, %v", other, err)
	}
	var mine []githubtest.Comment
	for _, c := range b.fake.Comments(testRepo, 5) {
		if strings.Contains(c.Body, github.Marker(app)) {
			mine = append(mine, c)
		}
	}
	if len(mine) != 1 || mine[0].Updates != 2 || !strings.Contains(mine[0].Body, "ccccccc") {
		t.Fatalf("comments of the application = %+v, want one, updated twice, showing ccccccc", mine)
	}
	if n := len(b.fake.Comments(testRepo, 5)); n != 3 {
		t.Fatalf("comments on the PR = %d, want 3", n)
	}
}

func TestClient_UpsertComment_RecreatesDeleted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id, err := b.client.UpsertComment(b.ctx, testInstallation, testRepo, 6, "app_x", 123456, "body")
	if err != nil {
		t.Fatal(err)
	}
	if id == 123456 {
		t.Fatal("a deleted comment's id was kept")
	}
	if cs := b.fake.Comments(testRepo, 6); len(cs) != 1 || !strings.HasPrefix(cs[0].Body, github.Marker("app_x")) {
		t.Fatalf("comments = %+v, want one carrying the marker", cs)
	}
}

func TestClient_CreateStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	err := b.client.CreateStatus(b.ctx, testInstallation, testRepo, "abc123", github.Status{
		State: github.StateSuccess, Context: github.StatusContext("notes"),
		Description: strings.Repeat("d", 200), TargetURL: "https://slipway.example.com/deployments/dep_1",
	})
	if err != nil {
		t.Fatal(err)
	}
	st := b.fake.Statuses(testRepo)
	if len(st) != 1 || st[0].SHA != "abc123" || st[0].Context != "slipway/notes" || st[0].State != "success" ||
		st[0].TargetURL != "https://slipway.example.com/deployments/dep_1" || len([]rune(st[0].Description)) != 140 {
		t.Fatalf("statuses = %+v", st)
	}
}

func TestClient_Retry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		header    http.Header
		times     int
		wantErr   bool
		wantCalls int
	}{
		{name: "5xx then success", status: http.StatusBadGateway, times: 2, wantCalls: 3},
		{name: "secondary rate limit with Retry-After", status: http.StatusForbidden, header: http.Header{"Retry-After": {"0"}}, times: 1, wantCalls: 2},
		{name: "429", status: http.StatusTooManyRequests, times: 1, wantCalls: 2},
		{name: "bounded attempts", status: http.StatusServiceUnavailable, times: 10, wantErr: true, wantCalls: 4},
		{name: "wait beyond MaxWait fails at once", status: http.StatusForbidden, header: http.Header{"Retry-After": {"3600"}}, times: 1, wantErr: true, wantCalls: 1},
		{name: "rate limit reset too far", status: http.StatusForbidden,
			header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"9999999999"}}, times: 1, wantErr: true, wantCalls: 1},
		{name: "plain 403 is not retried", status: http.StatusForbidden, times: 1, wantErr: true, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if _, err := b.client.InstallationToken(b.ctx, testInstallation); err != nil {
				t.Fatal(err)
			}
			b.fake.Fail(http.MethodPost, "/repos/acme/notes/statuses/", tt.status, tt.times, tt.header)
			err := b.client.CreateStatus(b.ctx, testInstallation, testRepo, "sha1", github.Status{State: github.StatePending, Context: "slipway/x"})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if n := b.fake.CountCalls(http.MethodPost, "/statuses/"); n != tt.wantCalls {
				t.Fatalf("calls = %d, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestClient_NoKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.fake.Config()
	cfg.PrivateKey = nil
	c, err := github.New(cfg, github.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.InstallationToken(b.ctx, testInstallation); !errors.Is(err, github.ErrNoPrivateKey) {
		t.Fatalf("err = %v, want ErrNoPrivateKey", err)
	}
	cfg.PrivateKey = []byte("not a key")
	var ce *github.ConfigError
	if _, err := github.New(cfg, github.Options{}); !errors.As(err, &ce) || ce.Code != "private_key_invalid" {
		t.Fatalf("err = %v, want private_key_invalid", err)
	}
}

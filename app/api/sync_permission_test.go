package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// TestApply_SyncNeedsDeployScope: a save that turns the repository's sync
// on, or declares an environment with sync = true while the repository
// syncs, deploys what moved at the next listing, so a token with apps:write
// but not apps:deploy is refused it (403 naming apps:deploy) and nothing is
// saved; other saves of the same application go through.
func TestApply_SyncNeedsDeployScope(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	_, writer, err := service.CreateToken(context.Background(), b.st, service.Actor{TeamID: b.team.ID, UserID: b.ownerID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "writer", Scopes: []string{string(auth.AppsRead), string(auth.AppsWrite)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	connected := notes + `
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://example.com/notes.git", branch = "main" }
`
	syncing := connected + `sync = { mode = "poll", interval_seconds = 300 }
`
	optedIn := syncing + `
[spec.environments.staging]
sync = true
`
	apply := func(token, doc string) reply {
		return b.do(t, token, http.MethodPost, "/api/v1/applications/apply", "application/toml", []byte(doc))
	}
	refused := func(r reply, why string) {
		t.Helper()
		want(t, r, http.StatusForbidden, "permission_denied")
		if details, _ := r.body["details"].(map[string]any); details["permission"] != string(auth.AppsDeploy) || !strings.Contains(r.raw, why) {
			t.Fatalf("refusal %s, want apps:deploy and %q", r.raw, why)
		}
	}

	want(t, apply(writer, connected), http.StatusCreated, "")
	refused(apply(writer, syncing), "turning the repository's sync on")
	m, rev := b.saved(t, "notes")
	if rev != 1 || m.Spec.Manifest.Sync != nil {
		t.Fatalf("a refused save changed the application: revision %d, sync %+v", rev, m.Spec.Manifest.Sync)
	}
	want(t, apply(b.owner, syncing), http.StatusOK, "")
	// Sync stays on: a save that opts no environment in needs only apps:write.
	want(t, apply(writer, syncing+"\n[spec.environments.staging]\n"), http.StatusOK, "")
	refused(apply(writer, optedIn), "sync = true for staging")
	want(t, apply(b.owner, optedIn), http.StatusOK, "")
	// Field edits save manifests too: one on an application that declares
	// synced environments needs apps:deploy as well.
	refused(b.do(t, writer, http.MethodPut, "/api/v1/applications/notes/variables/LEVEL", "application/json", []byte(`{"value":"1"}`)), "sync = true for staging")
}

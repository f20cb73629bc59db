package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func TestIdempotency_DeployTwiceCreatesOneDeployment(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	ctx := context.Background()
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")

	path := "/api/v1/applications/notes/environments/production/deploy"
	first := b.do(t, b.owner, http.MethodPost, path, "", nil, "Idempotency-Key", "deploy-1")
	want(t, first, http.StatusAccepted, "")
	second := b.do(t, b.owner, http.MethodPost, path, "", nil, "Idempotency-Key", "deploy-1")
	want(t, second, http.StatusAccepted, "")
	if first.raw != second.raw {
		t.Fatalf("replay differs:\n%s\n%s", first.raw, second.raw)
	}
	ds, err := b.st.ListDeployments(ctx, b.team.ID, store.DeploymentFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || len(b.jobs.queued()) != 1 {
		t.Fatalf("deployments %d jobs %d, want 1 and 1", len(ds), len(b.jobs.queued()))
	}

	// Without a key, or with another, the request runs again. (The first
	// queued deployment is superseded, so count requests through jobs.)
	want(t, b.do(t, b.owner, http.MethodPost, path, "", nil, "Idempotency-Key", "deploy-2"), http.StatusAccepted, "")
	want(t, b.do(t, b.owner, http.MethodPost, path, "", nil), http.StatusAccepted, "")
	if n := len(b.jobs.queued()); n != 3 {
		t.Fatalf("jobs %d after two more distinct requests, want 3", n)
	}
	// The same key with a different query is a different request.
	r := b.do(t, b.owner, http.MethodPost, path+"?x=1", "", nil, "Idempotency-Key", "deploy-1")
	want(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused")
}

func TestIdempotency_ApplyTwiceSavesOneRevision(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	ctx := context.Background()
	doc := strings.Replace(notes, "notes:1", "notes:7", 1)
	first := b.apply(t, doc, "", "Idempotency-Key", "apply-abc")
	want(t, first, http.StatusCreated, "")
	// A replay answers exactly as the first time (201 created), not as a
	// fresh apply would (200 unchanged).
	second := b.apply(t, doc, "", "Idempotency-Key", "apply-abc")
	want(t, second, http.StatusCreated, "")
	if first.raw != second.raw {
		t.Fatalf("replay differs:\n%s\n%s", first.raw, second.raw)
	}
	a, err := b.st.GetApplicationByName(ctx, b.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	// Change the manifest meanwhile: the replay must not save it again.
	want(t, b.apply(t, strings.Replace(doc, "notes:7", "notes:8", 1), ""), http.StatusOK, "")
	want(t, b.apply(t, doc, "", "Idempotency-Key", "apply-abc"), http.StatusCreated, "")
	revs, err := b.st.ListManifestRevisions(ctx, b.team.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 2 {
		t.Fatalf("revisions %d, want 2 (the keyed apply once, the change once)", len(revs))
	}

	// Same key, different body.
	r := b.apply(t, strings.Replace(doc, "notes:7", "notes:9", 1), "", "Idempotency-Key", "apply-abc")
	want(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused")
	// A malformed key.
	r = b.apply(t, doc, "", "Idempotency-Key", "has space")
	want(t, r, http.StatusBadRequest, "idempotency_key_invalid")
}

func TestIdempotency_InProgressAndExpiry(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	ctx := context.Background()
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")
	tok, err := b.st.AuthenticateAPIToken(ctx, store.HashToken(b.owner), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/applications/notes/environments/production/deploy"
	k := store.IdempotencyKey{TeamID: b.team.ID, Principal: tok.ID, Key: "slow", Method: http.MethodPost, Path: path}
	// Another server is running this request right now.
	r := b.do(t, b.owner, http.MethodPost, path, "", nil, "Idempotency-Key", "probe")
	want(t, r, http.StatusAccepted, "")
	probe := k
	probe.Key = "probe"
	_, rec, err := b.st.ClaimIdempotencyKey(ctx, probe, []byte("another request"), time.Now(), time.Minute, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	outcome, _, err := b.st.ClaimIdempotencyKey(ctx, k, rec.RequestHash, time.Now(), time.Minute, time.Hour)
	if err != nil || outcome != store.ClaimAcquired {
		t.Fatalf("claim = %v, %v", outcome, err)
	}
	r = b.do(t, b.owner, http.MethodPost, path, "", nil, "Idempotency-Key", "slow")
	want(t, r, http.StatusConflict, "idempotency_key_in_progress")
	n := len(b.jobs.queued())

	// A key older than 24 hours is forgotten: the request runs again.
	outcome, _, err = b.st.ClaimIdempotencyKey(ctx, probe, rec.RequestHash, time.Now().Add(25*time.Hour), time.Minute, time.Hour)
	if err != nil || outcome != store.ClaimAcquired {
		t.Fatalf("expired key not taken over: %v, %v", outcome, err)
	}
	if gone, err := b.st.DeleteExpiredIdempotencyKeys(ctx, time.Now().Add(48*time.Hour)); err != nil || gone < 2 {
		t.Fatalf("deleted %d, %v", gone, err)
	}
	want(t, b.do(t, b.owner, http.MethodPost, path, "", nil, "Idempotency-Key", "slow"), http.StatusAccepted, "")
	if len(b.jobs.queued()) != n+1 {
		t.Fatalf("after expiry the request did not run")
	}
}

// TestIdempotency_ConcurrentDuplicates sends the same keyed deploy from
// several clients at once over a committed database: exactly one runs,
// the others get its answer or idempotency_key_in_progress.
func TestIdempotency_ConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	b := &deployBundle{st: st, jobs: &fakeJobs{}}
	b.f = fiber.New()
	api.Register(b.f.Group("/api/v1"), api.Config{Store: st, Logger: slog.New(slog.DiscardHandler), Now: time.Now, Jobs: b.jobs})
	u, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "race@example.com", Password: "correct horse battery", TeamName: "Racers"})
	if err != nil {
		t.Fatal(err)
	}
	b.team = team
	_, b.owner, err = service.CreateToken(ctx, st, service.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.AllScopes},
		service.TokenRequest{Name: "owner", Scopes: auth.Strings(auth.AllScopes)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want(t, b.apply(t, notes, ""), http.StatusCreated, "")

	const clients = 8
	path := "/api/v1/applications/notes/environments/production/deploy"
	replies := make([]reply, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() { replies[i] = b.do(t, b.owner, http.MethodPost, path, "", nil, "Idempotency-Key", "together") })
	}
	wg.Wait()
	var ran string
	for _, r := range replies {
		switch {
		case r.status == http.StatusAccepted:
			if ran != "" && r.raw != ran {
				t.Fatalf("two different answers to one key:\n%s\n%s", ran, r.raw)
			}
			ran = r.raw
		case r.status == http.StatusConflict && r.body["code"] == "idempotency_key_in_progress":
		default:
			t.Fatalf("unexpected answer %d %s", r.status, r.raw)
		}
	}
	ds, err := st.ListDeployments(ctx, team.ID, store.DeploymentFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ran == "" {
		t.Fatalf("%d deployments from %d identical keyed requests, want 1", len(ds), clients)
	}
}

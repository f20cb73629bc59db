package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func TestIdempotencyKey_Lifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, err := st.CreateTeam(ctx, "Idem A", "idem-a")
	must(t, err)
	b, err := st.CreateTeam(ctx, "Idem B", "idem-b")
	must(t, err)
	now := time.Now()
	k := store.IdempotencyKey{TeamID: a.ID, Principal: "tok_1", Key: "k1", Method: "POST", Path: "/api/v1/x"}
	claim := func(k store.IdempotencyKey, hash string, at time.Time) (store.ClaimOutcome, store.IdempotencyRecord) {
		t.Helper()
		o, rec, err := st.ClaimIdempotencyKey(ctx, k, []byte(hash), at, time.Minute, 24*time.Hour)
		must(t, err)
		return o, rec
	}

	if o, _ := claim(k, "h1", now); o != store.ClaimAcquired {
		t.Fatalf("first claim = %v", o)
	}
	if o, _ := claim(k, "h1", now); o != store.ClaimInProgress {
		t.Fatalf("claim while running = %v", o)
	}
	must(t, st.CompleteIdempotencyKey(ctx, k, 201, "application/json", []byte(`{"ok":true}`)))
	if o, rec := claim(k, "h1", now); o != store.ClaimReplay || rec.Status != 201 || string(rec.Body) != `{"ok":true}` || rec.ContentType != "application/json" {
		t.Fatalf("replay = %v %+v", o, rec)
	}
	if o, _ := claim(k, "h2", now); o != store.ClaimMismatch {
		t.Fatalf("other request, same key = %v", o)
	}
	// Another team, token, method or path is another key.
	for _, other := range []store.IdempotencyKey{
		{TeamID: b.ID, Principal: k.Principal, Key: k.Key, Method: k.Method, Path: k.Path},
		{TeamID: a.ID, Principal: "tok_2", Key: k.Key, Method: k.Method, Path: k.Path},
		{TeamID: a.ID, Principal: k.Principal, Key: k.Key, Method: "DELETE", Path: k.Path},
		{TeamID: a.ID, Principal: k.Principal, Key: k.Key, Method: k.Method, Path: "/api/v1/y"},
	} {
		if o, _ := claim(other, "h1", now); o != store.ClaimAcquired {
			t.Fatalf("%+v = %v, want a fresh claim", other, o)
		}
	}
	// A finished key is kept 24 hours, then taken over.
	if o, _ := claim(k, "h2", now.Add(23*time.Hour)); o != store.ClaimMismatch {
		t.Fatalf("at 23h = %v", o)
	}
	if o, _ := claim(k, "h2", now.Add(25*time.Hour)); o != store.ClaimAcquired {
		t.Fatalf("at 25h = %v", o)
	}
	// An abandoned claim is taken over after its claim time; a released one at once.
	if o, _ := claim(k, "h2", now.Add(25*time.Hour+2*time.Minute)); o != store.ClaimAcquired {
		t.Fatalf("abandoned claim not taken over: %v", o)
	}
	must(t, st.ReleaseIdempotencyKey(ctx, k))
	if o, _ := claim(k, "h3", now.Add(25*time.Hour+2*time.Minute)); o != store.ClaimAcquired {
		t.Fatalf("after release = %v", o)
	}
	// Completing a key twice, or another team's, finds nothing to complete.
	must(t, st.CompleteIdempotencyKey(ctx, k, 200, "", nil))
	if err := st.CompleteIdempotencyKey(ctx, k, 200, "", nil); err == nil {
		t.Fatal("completed a finished key again")
	}
	gone, err := st.DeleteExpiredIdempotencyKeys(ctx, now.Add(72*time.Hour))
	must(t, err)
	if gone != 5 {
		t.Fatalf("swept %d expired keys, want 5", gone)
	}
}

// TestIdempotencyKey_ConcurrentClaims races claims of one key on separate
// connections: exactly one acquires.
func TestIdempotencyKey_ConcurrentClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	team, err := st.CreateTeam(ctx, "Idem race", "idem-race")
	must(t, err)
	k := store.IdempotencyKey{TeamID: team.ID, Principal: "tok_1", Key: "race", Method: "POST", Path: "/api/v1/x"}
	const n = 12
	outcomes := make([]store.ClaimOutcome, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			outcomes[i], _, errs[i] = st.ClaimIdempotencyKey(ctx, k, []byte("h"), time.Now(), time.Minute, time.Hour)
		})
	}
	wg.Wait()
	acquired := 0
	for i := range n {
		must(t, errs[i])
		if outcomes[i] == store.ClaimAcquired {
			acquired++
		} else if outcomes[i] != store.ClaimInProgress {
			t.Fatalf("claim %d = %v", i, outcomes[i])
		}
	}
	if acquired != 1 {
		t.Fatalf("%d of %d concurrent claims acquired, want 1", acquired, n)
	}
}

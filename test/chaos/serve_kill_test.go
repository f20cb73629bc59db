package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/test/chaos/chaostest"
	"github.com/slipwayhq/slipway/test/summary"
)

// envsPerSave is how many environments each save declares: they are
// created in the save's transaction, which makes it long enough for a kill
// to land inside it, and they show whether the save committed whole.
const envsPerSave = 12

// saveDoc is save number n of the application: its marker variable and
// environments name n, so what the store holds tells which saves landed.
func saveDoc(app string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[spec.variables]
marker = "save-%d"
`, app, n)
	for k := range envsPerSave {
		fmt.Fprintf(&b, "\n[spec.environments.s%d-%d]\n", n, k)
	}
	fmt.Fprintf(&b, `
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "example.invalid/web:%d"
`, n)
	return []byte(b.String())
}

// TestServeKilledDuringManifestSave saves manifests through the API and
// kills `slipway serve` with SIGKILL while each is in flight, at moments
// bisected onto the commit, restarting it every time. After each kill the application must hold
// either the previous or the new revision, whole: consecutive revision
// rows, the current revision's manifest and source agreeing, exactly the
// environments the saved revisions declared, one manifest.save event per
// revision, and every save the API acknowledged kept.
func TestServeKilledDuringManifestSave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := chaostest.Binary(t)
	url, st := chaostest.Database(t)
	pool := st.Pool()
	id := swarmtest.ID()
	team := chaostest.NewTeam(t, st, id)
	app := "torn-" + id
	port := chaostest.FreePort(t)
	srv := chaostest.StartServeOn(t, bin, url, port)
	c := team.Client(t, srv)

	// Three saves with serve alive; the last two (the first also creates
	// the application) measure how long one takes.
	saved := 0 // the highest save number known to be committed
	var took time.Duration
	for n := 1; n <= 3; n++ {
		start := time.Now()
		if _, err := c.Apply(ctx, saveDoc(app, n), client.ApplyOptions{}); err != nil {
			t.Fatalf("save %d: %v", n, err)
		}
		if n > 1 {
			took = max(took, time.Since(start))
		}
		saved = n
	}
	checkSaves(t, st, team.Team.ID, c, app, saved, saved)

	// Each kill aims at the moment the save commits, by bisection: a
	// save that was acknowledged moves the next kill earlier, one that did
	// not land moves it later, so the kills home in on the commit, where a
	// torn save would show.
	const kills = 10
	lo, hi := time.Duration(0), took*3/2
	var outcomes [3]int // not saved, saved but unacknowledged, acknowledged
	for k := range kills {
		n := saved + 1
		if hi-lo < 4*time.Millisecond {
			// Timing drifts on a busy machine: widen the bracket again.
			lo, hi = max(0, lo-20*time.Millisecond), hi+20*time.Millisecond
		}
		delay := (lo + hi) / 2
		acked := make(chan error, 1)
		go func() {
			_, err := c.Apply(ctx, saveDoc(app, n), client.ApplyOptions{})
			acked <- err
		}()
		time.Sleep(delay)
		srv.Kill()
		ackErr := <-acked
		waitBackendsSettled(t, pool)
		srv = chaostest.StartServeOn(t, bin, url, port)
		c = team.Client(t, srv)
		// The current revision is n's or the previous one; an
		// acknowledged save must be there.
		minimum := saved
		if ackErr == nil {
			minimum = n
		}
		got := checkSaves(t, st, team.Team.ID, c, app, minimum, n)
		t.Logf("kill %d after %s: save %d acknowledged=%v, current revision is save %d", k, delay, n, ackErr == nil, got)
		switch {
		case ackErr == nil:
			outcomes[2]++
			hi = delay
		case got == n:
			outcomes[1]++
		default:
			outcomes[0]++
			lo = delay
		}
		saved = got
	}
	summary.Fault(t, "serve SIGKILLed during manifest saves",
		"%d kills around the commit of a %s save: %d left the old revision whole, %d landed whole unacknowledged, %d acknowledged and kept; none torn",
		kills, took.Round(time.Millisecond), outcomes[0], outcomes[1], outcomes[2])
}

// checkSaves checks the application's saved state through the store and
// the API, and returns the save number its current revision holds, which
// must lie in [minimum, maximum]. Save n is revision n.
func checkSaves(t *testing.T, st *store.Store, teamID string, c *client.Client, appName string, minimum, maximum int) int {
	t.Helper()
	ctx := context.Background()
	a, err := st.GetApplicationByName(ctx, teamID, appName)
	if err != nil {
		t.Fatal(err)
	}
	cur := int(a.CurrentRevision)
	if cur < minimum || cur > maximum {
		t.Fatalf("current revision %d, want between %d and %d", cur, minimum, maximum)
	}
	revs, err := st.ListManifestRevisions(ctx, teamID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != cur {
		t.Fatalf("%d revision rows, current revision %d: a revision is missing or dangling", len(revs), cur)
	}
	for i, r := range revs {
		if want := int64(cur - i); r.Revision != want {
			t.Fatalf("revision rows %v are not 1..%d", revs, cur)
		}
		full, err := st.GetManifestRevision(ctx, teamID, a.ID, r.Revision)
		if err != nil {
			t.Fatal(err)
		}
		marker := fmt.Sprintf("save-%d", r.Revision)
		if !strings.Contains(string(full.Manifest), `"`+marker+`"`) || string(full.Source) != string(saveDoc(appName, int(r.Revision))) {
			t.Fatalf("revision %d holds manifest %s and source %q, not save %d", r.Revision, full.Manifest, full.Source, r.Revision)
		}
	}
	envs, err := st.ListEnvironments(ctx, teamID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names, want []string
	for _, e := range envs {
		names = append(names, e.Name)
	}
	for n := 1; n <= cur; n++ {
		for k := range envsPerSave {
			want = append(want, fmt.Sprintf("s%d-%d", n, k))
		}
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("environments %v, want exactly those of saves 1..%d: %v", names, cur, want)
	}
	events, err := st.ListEvents(ctx, teamID, store.EventFilter{ObjectType: "application", ObjectID: a.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	saves := 0
	for _, e := range events {
		if e.Verb == "manifest.save" {
			saves++
		}
	}
	if saves != cur {
		t.Fatalf("%d manifest.save events for %d revisions", saves, cur)
	}
	shown, err := c.Manifest(ctx, appName)
	if err != nil {
		t.Fatal(err)
	}
	if int(shown.Revision) != cur || shown.Source != string(saveDoc(appName, cur)) {
		t.Fatalf("GET manifest = revision %d source %q, want save %d", shown.Revision, shown.Source, cur)
	}
	return cur
}

// waitBackendsSettled waits until no session of the test's database but
// the test's own is inside a statement or a transaction: Postgres has
// finished (committed or rolled back) what the killed process started.
func waitBackendsSettled(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	chaostest.WaitFor(t, time.Minute, "the killed process's transactions to end", func() bool {
		var n int
		err := pool.QueryRow(context.Background(), `
			SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()
			  AND state IS NOT NULL AND state <> 'idle'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}

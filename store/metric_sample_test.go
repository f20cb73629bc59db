package store_test

import (
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestStore_EnsureMetricSeries: missing series are created once, known
// ones keep their ids, and a key naming another team's environment gets
// no series.
func TestStore_EnsureMetricSeries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	web := store.SeriesKey{TeamID: b.a.team.ID, EnvironmentID: b.a.env.ID, Kind: store.SeriesService, Name: "web"}
	route := store.SeriesKey{TeamID: b.a.team.ID, EnvironmentID: b.a.env.ID, Kind: store.SeriesRoute, Name: "notes.example.com"}
	foreign := store.SeriesKey{TeamID: b.a.team.ID, EnvironmentID: b.b.env.ID, Kind: store.SeriesService, Name: "web"}

	first, err := b.st.EnsureMetricSeries(b.ctx, []store.SeriesKey{web})
	must(t, err)
	if len(first) != 1 || first[web] == 0 {
		t.Fatalf("first call: %v, want web's new series", first)
	}
	// web exists, route is new, foreign is refused: the write path.
	second, err := b.st.EnsureMetricSeries(b.ctx, []store.SeriesKey{web, route, foreign})
	must(t, err)
	if len(second) != 2 || second[web] != first[web] || second[route] == 0 || second[route] == second[web] {
		t.Fatalf("second call: %v, want web's id %d kept, a new route series and no foreign one", second, first[web])
	}
	// All known: the read-only path gives the same ids.
	third, err := b.st.EnsureMetricSeries(b.ctx, []store.SeriesKey{route, web})
	must(t, err)
	if len(third) != 2 || third[web] != second[web] || third[route] != second[route] {
		t.Fatalf("third call: %v, want %v", third, second)
	}
}

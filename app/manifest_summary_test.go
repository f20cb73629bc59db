package app

import (
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestManifestSummaries: a deployment's summary is decoded once and then
// remembered by id (the bytes are not read again), each caller gets its
// own copy to fill in, and past its size the oldest is forgotten.
func TestManifestSummaries(t *testing.T) {
	rendered := []byte(`{"metadata":{"name":"shop"},"spec":{"services":[{"name":"web","replicas":2,"source":{"type":"image","image":"registry.example/shop:1"}}],` +
		`"routes":[{"hostname":"shop.example.com","service":"web","port":8080}]}}`)
	s := newManifestSummaries(2)
	d := &store.Deployment{ID: "dep_1", RenderedManifest: rendered}
	first, ok := s.of(d)
	if !ok || len(first.services) != 1 || first.services[0].Name != "web" || first.services[0].Replicas != "2" || len(first.routes) != 1 {
		t.Fatalf("summary %+v %v", first, ok)
	}
	first.services[0].Running, first.routes[0].URL = "changed", "changed"

	// Remembered: the same id with bytes that do not decode still answers,
	// without the first caller's changes.
	again, ok := s.of(&store.Deployment{ID: "dep_1", RenderedManifest: []byte("not json")})
	if !ok || again.services[0].Running != "" || again.routes[0].URL != "http://shop.example.com/" {
		t.Fatalf("remembered summary %+v %v, want the decoded one unchanged", again, ok)
	}
	if _, ok := s.of(&store.Deployment{ID: "dep_x", RenderedManifest: []byte("not json")}); ok {
		t.Fatal("a manifest that does not decode has a summary")
	}
	if _, ok := s.of(&store.Deployment{ID: "dep_y"}); ok {
		t.Fatal("a deployment without a rendered manifest has a summary")
	}

	// Two more fill it past its size: dep_1 is forgotten and decoded again.
	for _, id := range []string{"dep_2", "dep_3"} {
		if _, ok := s.of(&store.Deployment{ID: id, RenderedManifest: rendered}); !ok {
			t.Fatalf("%s: no summary", id)
		}
	}
	if _, ok := s.of(&store.Deployment{ID: "dep_1", RenderedManifest: []byte("not json")}); ok {
		t.Fatal("dep_1 still remembered past the size")
	}
	if len(s.byID) != 2 || len(s.order) != 2 {
		t.Fatalf("%d summaries, %d in order, want 2", len(s.byID), len(s.order))
	}
}

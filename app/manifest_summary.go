package app

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// manifestSummary is what the Overview and Environments tabs show of a
// deployment's rendered manifest: its services, its routes and the
// manifest's warnings.
type manifestSummary struct {
	services []page.ServiceRow
	routes   []page.RouteRow
	warnings []string
}

// manifestSummaryCacheSize is how many deployments' summaries the server
// remembers.
const manifestSummaryCacheSize = 1024

// manifestSummaries remembers the summaries of the deployments shown
// lately, by deployment id: a deployment's rendered manifest never changes
// once captured (store.RecordCapture), and decoding it again was a tenth
// of an application page's CPU. It holds at most max entries and forgets
// the oldest first. Only deployments a team-scoped query has just returned
// are looked up, by their id (unique across teams), so it never shows one
// team's manifest to another.
type manifestSummaries struct {
	mu    sync.Mutex
	byID  map[string]manifestSummary
	order []string // ids, oldest first
	max   int
}

func newManifestSummaries(max int) *manifestSummaries {
	return &manifestSummaries{byID: map[string]manifestSummary{}, max: max}
}

// of is the summary of d's rendered manifest, false when it has none or it
// does not decode. The slices are the caller's to change.
func (s *manifestSummaries) of(d *store.Deployment) (manifestSummary, bool) {
	if d == nil || d.RenderedManifest == nil {
		return manifestSummary{}, false
	}
	s.mu.Lock()
	sum, ok := s.byID[d.ID]
	s.mu.Unlock()
	if !ok {
		var m manifest.Manifest
		if err := json.Unmarshal(d.RenderedManifest, &m); err != nil {
			return manifestSummary{}, false
		}
		sum.services, sum.routes = servicesAndRoutes(&m)
		for _, w := range manifest.Warnings(&m) {
			sum.warnings = append(sum.warnings, w.Path+": "+w.Message)
		}
		s.remember(d.ID, sum)
	}
	// The pages fill in live replica counts and certificates: copies.
	return manifestSummary{services: slices.Clone(sum.services), routes: slices.Clone(sum.routes), warnings: sum.warnings}, true
}

func (s *manifestSummaries) remember(id string, sum manifestSummary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; ok {
		return
	}
	if len(s.order) >= s.max {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
	s.byID[id] = sum
	s.order = append(s.order, id)
}

package pipeline

import (
	"context"
	"strings"

	"github.com/slipwayhq/slipway/store"
)

// RetainedReleases is how many succeeded deployments per environment keep
// their images, so they can be restored or promoted again.
const RetainedReleases = 5

// RetainedImages is the set of image IDs, and of digest-pinned
// references, that cleanup must keep.
func RetainedImages(ctx context.Context, st *store.Store) (map[string]bool, error) {
	all, err := st.ListRetainedDeploymentSteps(ctx, RetainedReleases)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, raw := range all {
		p, err := ParseProgress(raw)
		if err != nil {
			continue
		}
		if prep := p.Find("prepare"); prep != nil {
			for k, v := range prep.Detail {
				// id:<service> is the local image; <service> what runs,
				// a registry reference when pushed.
				if strings.HasPrefix(k, "id:") || !strings.Contains(k, ":") && strings.Contains(v, "@") {
					keep[v] = true
				}
			}
		}
	}
	return keep, nil
}

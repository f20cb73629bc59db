package partial

import (
	"context"

	"github.com/slipwayhq/slipway/views"
)

// applyCommand is the empty state's how-to, naming the address this
// dashboard is reached at. It is a Go string because templ collapses
// whitespace in markup, and these lines must stay lines.
func applyCommand(ctx context.Context) string {
	return "export SLIPWAY_URL=" + views.From(ctx).PublicURL + `
export SLIPWAY_TOKEN=slw_…   # from the API tokens page
slipway app apply --file slipway.toml`
}

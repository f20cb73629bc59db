package partial

// applyCommand is the empty state's how-to. It is a Go string because templ
// collapses whitespace in markup, and these lines must stay lines.
const applyCommand = `export SLIPWAY_URL=http://127.0.0.1:8080
export SLIPWAY_TOKEN=slw_…   # from the API tokens page
slipway app apply --file slipway.toml`

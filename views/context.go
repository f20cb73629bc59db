package views

import "context"

// TeamRef names a team in the switcher and the header.
type TeamRef struct {
	ID   string
	Name string
	Role string
}

// Request is what every page of a signed-in (or signing-in) visitor may read.
type Request struct {
	CSRF      string
	UserEmail string // empty when nobody is signed in
	Team      TeamRef
	Teams     []TeamRef
	Path      string          // the request path, to mark the current nav item
	Scopes    map[string]bool // what the member may do in Team
	// InstallationAdmin users also see the installation's nodes.
	InstallationAdmin bool
	// Flash is the answer to the visitor's last save, deploy, create or
	// delete, shown once at the top of the page; nil when there is none.
	Flash *Flash
	// PublicURL is where the dashboard is reached (the configured
	// public_url, else the request's own address), for snippets to copy.
	PublicURL string
}

// Flash is a one-time message: what happened and what to do next.
type Flash struct {
	Kind    string `json:"k"` // ok or error
	Message string `json:"m"`
}

type ctxKey struct{}

// WithRequest returns ctx carrying r for templates.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// From returns the Request in ctx (zero when absent, e.g. in tests).
func From(ctx context.Context) Request {
	r, _ := ctx.Value(ctxKey{}).(Request)
	return r
}

// Can reports whether the current member holds scope.
func Can(ctx context.Context, scope string) bool { return From(ctx).Scopes[scope] }

package app_test

import (
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/static"
	"github.com/slipwayhq/slipway/views/viewstest"
)

// TestTemplates_TargetsResolve reads every template (through the Go that
// templ generated from it) and checks that each form action, formaction,
// hx-get/hx-post/hx-put/hx-patch/hx-delete and link href names a route the
// dashboard registers, with the method the element uses: a form posting to
// /invitations while the route is POST /members/invitations fails here.
//
// The scan is viewstest.Targets: URLs built in Go are followed
// symbolically, a value holding a whole URL must be listed in
// viewstest.Opaque.
func TestTemplates_TargetsResolve(t *testing.T) {
	t.Parallel()
	f := app.New(app.Config{GitHub: &app.GitHub{Source: &github.Source{}}})
	var routes []route
	for _, r := range f.GetRoutes(true) {
		routes = append(routes, route{method: r.Method, segs: strings.Split(strings.Trim(r.Path, "/"), "/")})
	}
	targets, err := viewstest.Targets()
	if err != nil {
		t.Error(err)
	}
	if len(targets) < 100 {
		t.Fatalf("found only %d targets in the templates; the scanner is broken", len(targets))
	}
	seen := map[string]bool{}
	for _, tg := range targets {
		for _, u := range tg.URLs {
			key := tg.Method + " " + u + " " + tg.Where
			if seen[key] {
				continue
			}
			seen[key] = true
			if msg := checkTarget(routes, tg.Method, u); msg != "" {
				t.Errorf("%s: %s %s=%q: %s", tg.Where, tg.Method, tg.Attr, u, msg)
			}
		}
	}
}

type route struct {
	method string
	segs   []string
}

// checkTarget says why u (a pattern, * for one segment) matches no route
// of method, or "".
func checkTarget(routes []route, method, u string) string {
	if u == "external" || strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "#") || strings.HasPrefix(u, "mailto:") {
		return ""
	}
	if !strings.HasPrefix(u, "/") {
		return "not an absolute path"
	}
	u, _, _ = strings.Cut(u, "#")
	u, _, _ = strings.Cut(u, "?")
	if strings.HasPrefix(u, "/static/") {
		if method != http.MethodGet {
			return "static files answer GET only"
		}
		if _, err := fs.Stat(static.FS, strings.TrimPrefix(u, "/static/")); err != nil {
			return "no such static file"
		}
		return ""
	}
	segs := strings.Split(strings.Trim(u, "/"), "/")
	var methods []string
	for _, r := range routes {
		if matchSegments(r.segs, segs) {
			if r.method == method {
				return ""
			}
			methods = append(methods, r.method)
		}
	}
	if len(methods) > 0 {
		sort.Strings(methods)
		return "the route answers " + strings.Join(methods, ", ") + " only"
	}
	return "no route matches"
}

func matchSegments(route, u []string) bool {
	if len(route) != len(u) {
		return false
	}
	for i := range route {
		switch {
		case strings.Contains(u[i], "*"):
			if u[i] == "" {
				return false
			}
		case strings.HasPrefix(route[i], ":"):
		case route[i] != u[i]:
			return false
		}
	}
	return true
}

package app_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/forge/github"
	"github.com/slipwayhq/slipway/static"
)

// TestTemplates_TargetsResolve reads every template (through the Go that
// templ generated from it) and checks that each form action, formaction,
// hx-get/hx-post/hx-put/hx-patch/hx-delete and link href names a route the
// dashboard registers, with the method the element uses: a form posting to
// /invitations while the route is POST /members/invitations fails here.
//
// URLs built in Go are followed symbolically: string literals are kept,
// concatenations joined, calls to the views' own helpers (a.url("manifest"),
// previewURL(a, slug)) evaluated with their arguments, and any other value
// (an id) stands for one path segment. A URL that is a bare value (a field
// holding a whole URL) must be listed in opaqueURLs with what it holds.
func TestTemplates_TargetsResolve(t *testing.T) {
	t.Parallel()
	f := app.New(app.Config{GitHub: &app.GitHub{Source: &github.Source{}}})
	var routes []route
	for _, r := range f.GetRoutes(true) {
		routes = append(routes, route{method: r.Method, segs: strings.Split(strings.Trim(r.Path, "/"), "/")})
	}
	targets := templateTargets(t, filepath.Join("..", "views"))
	if len(targets) < 100 {
		t.Fatalf("found only %d targets in the templates; the scanner is broken", len(targets))
	}
	seen := map[string]bool{}
	for _, tg := range targets {
		for _, u := range tg.urls {
			key := tg.method + " " + u + " " + tg.where
			if seen[key] {
				continue
			}
			seen[key] = true
			if msg := checkTarget(routes, tg.method, u); msg != "" {
				t.Errorf("%s: %s %s=%q: %s", tg.where, tg.method, tg.attr, u, msg)
			}
		}
	}
}

// opaqueURLs are the template values that hold a whole URL made in Go,
// by template file and expression, with the route patterns each holds (*
// is one path segment; "external" a public address outside the dashboard).
var opaqueURLs = map[string][]string{
	"application:s.LogsURL":        {"/applications/*/environments/*/services/*/logs"},
	"deployments:l.URL":            {"/applications/*/environments/*/services/*/logs"},
	"deployment:u":                 {"external"}, // a deployed route's public address (Visit)
	"events:p.URL":                 {"/applications/*", "/applications/*/environments", "/applications/*/deployments/*"},
	"team_events:e.ApplicationURL": {"/applications/*"},
	"getting_started:i.URL":        {"/applications", "/github", "/members", "/tokens"},
	"application:r.URL":            {"external"}, // a route's public address
	"application_previews:p.URL":   {"external"}, // a preview's public address
	"events_older:olderURL":        {"/events", "/applications/*/events"},
	"service_logs:v.URL":           {"/applications/*/environments/*/services/*/logs"},
	"service_logs:v.DownloadURL":   {"/applications/*/environments/*/services/*/logs/download"},
	"github:v.Action":              {"external"}, // GitHub's App-manifest endpoint
	"github:v.AppURL":              {"external"}, // the App's page on GitHub
	"layout:href":                  {"/applications", "/members", "/tokens", "/github", "/events", "/account"},
	"environment_daytwo:v.Base":    {"/applications/*/environments/*/daytwo"},
	"deliveries:v.URL":             {"/notifications/*/deliveries"},
	"usage:url":                    {"/applications/*/environments/*/usage"},
	"usage:v.URL":                  {"/applications/*/environments/*/usage"},
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

// target is one attribute naming a URL.
type target struct {
	where  string // the generated file and line, and the template line
	attr   string
	method string
	urls   []string
}

// urlAttr matches the end of a literal HTML chunk that opens a URL
// attribute whose value an expression gives.
var urlAttr = regexp.MustCompile(`\s(action|formaction|href|src|hx-get|hx-post|hx-put|hx-patch|hx-delete)="$`)

// literalAttr matches a URL attribute written out in the template.
var literalAttr = regexp.MustCompile(`\s(action|formaction|href|src|hx-get|hx-post|hx-put|hx-patch|hx-delete)="([^"]*)"`)

func templateTargets(t *testing.T, dir string) []target {
	t.Helper()
	fset := token.NewFileSet()
	ev := &evaluator{fset: fset, funcs: map[string][]*ast.FuncDecl{}}
	var files []*ast.File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				ev.funcs[fd.Name.Name] = append(ev.funcs[fd.Name.Name], fd)
			}
		}
		if strings.HasSuffix(path, "_templ.go") {
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []target
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			out = append(out, scanFunc(t, fset, ev, fd)...)
		}
	}
	return out
}

// scanFunc walks one generated component in source order: the HTML it
// writes (literal chunks, "\x00" where an expression goes) and the
// expressions that fill URL attributes.
func scanFunc(t *testing.T, fset *token.FileSet, ev *evaluator, fd *ast.FuncDecl) []target {
	var html strings.Builder
	var out []target
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pos := fset.Position(call.Pos())
		where := fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)
		switch {
		case sel.Sel.Name == "WriteString" && len(call.Args) == 3:
			lit, ok := call.Args[2].(*ast.BasicLit)
			if !ok {
				return true
			}
			chunk, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			for _, m := range literalAttr.FindAllStringSubmatchIndex(chunk, -1) {
				attr, value := chunk[m[2]:m[3]], chunk[m[4]:m[5]]
				prefix := html.String() + chunk[:m[0]]
				out = append(out, target{where: where, attr: attr, method: methodOf(attr, prefix), urls: []string{value}})
			}
			html.WriteString(chunk)
		case sel.Sel.Name == "NewAttributeExpression" && len(call.Args) == 1:
			m := urlAttr.FindStringSubmatch(html.String())
			html.WriteString("\x00")
			if m == nil {
				return true
			}
			attr := m[1]
			urls := ev.eval(call.Args[0], nil, 0)
			for _, u := range urls {
				if strings.HasPrefix(u, "*") {
					t.Errorf("%s: %s={ %s } holds a URL the test cannot follow: add it to opaqueURLs with the routes it holds", where, attr, exprString(fset, call.Args[0]))
				}
			}
			out = append(out, target{where: where, attr: attr, method: methodOf(attr, html.String()), urls: urls})
		}
		return true
	})
	return out
}

// methodOf is the method a browser uses for attr, given the HTML before
// it: a form's method (GET unless it says post) for action and formaction.
func methodOf(attr, before string) string {
	switch attr {
	case "hx-post":
		return http.MethodPost
	case "hx-put":
		return http.MethodPut
	case "hx-patch":
		return http.MethodPatch
	case "hx-delete":
		return http.MethodDelete
	case "action", "formaction":
		form := before[max(strings.LastIndex(before, "<form"), 0):]
		if strings.Contains(form, `method="post"`) {
			return http.MethodPost
		}
	}
	return http.MethodGet
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	p, q := fset.Position(e.Pos()), fset.Position(e.End())
	src, err := os.ReadFile(p.Filename)
	if err != nil {
		return "?"
	}
	return string(src[p.Offset:q.Offset])
}

// evaluator follows string expressions through the views' helpers.
type evaluator struct {
	fset  *token.FileSet
	funcs map[string][]*ast.FuncDecl
}

// opaque is what opaqueURLs lists for e, or "*".
func (ev *evaluator) opaque(e ast.Expr) []string {
	file := strings.TrimSuffix(filepath.Base(ev.fset.Position(e.Pos()).Filename), "_templ.go")
	file = strings.TrimSuffix(file, ".go")
	if v, ok := opaqueURLs[file+":"+exprString(ev.fset, e)]; ok {
		return v
	}
	return []string{"*"}
}

// eval returns the strings e may be, "*" standing for any value. env binds
// the parameters of the helper being evaluated.
func (ev *evaluator) eval(e ast.Expr, env map[string][]string, depth int) []string {
	if depth > 8 {
		return []string{"*"}
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			if s, err := strconv.Unquote(e.Value); err == nil {
				return []string{s}
			}
		}
		return []string{"*"}
	case *ast.ParenExpr:
		return ev.eval(e.X, env, depth)
	case *ast.Ident:
		if v, ok := env[e.Name]; ok {
			return v
		}
		return ev.opaque(e)
	case *ast.SelectorExpr:
		return ev.opaque(e)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return []string{"*"}
		}
		var out []string
		for _, l := range ev.eval(e.X, env, depth) {
			for _, r := range ev.eval(e.Y, env, depth) {
				out = append(out, joinStar(l, r))
			}
		}
		return out
	case *ast.CallExpr:
		name := ""
		switch fn := e.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			if x, ok := fn.X.(*ast.Ident); ok && x.Name == "templ" && (fn.Sel.Name == "SafeURL" || fn.Sel.Name == "URL") && len(e.Args) == 1 {
				return ev.eval(e.Args[0], env, depth)
			}
			name = fn.Sel.Name
		}
		if name == "string" && len(e.Args) == 1 {
			return ev.eval(e.Args[0], env, depth)
		}
		for _, fd := range ev.funcs[name] {
			if fd.Type.Params.NumFields() != len(e.Args) || fd.Type.Results.NumFields() != 1 {
				continue
			}
			bound := map[string][]string{}
			i := 0
			for _, field := range fd.Type.Params.List {
				for _, n := range field.Names {
					bound[n.Name] = ev.eval(e.Args[i], env, depth+1)
					i++
				}
			}
			out, _ := ev.returns(fd.Body.List, bound, depth+1)
			if len(out) > 0 {
				return out
			}
		}
	}
	return []string{"*"}
}

// returns evaluates what a helper's statements may return; done is true
// when they always return. An if comparing a bound parameter with a string
// is decided; any other branch may go either way.
func (ev *evaluator) returns(stmts []ast.Stmt, env map[string][]string, depth int) (out []string, done bool) {
	for _, st := range stmts {
		switch st := st.(type) {
		case *ast.ReturnStmt:
			if len(st.Results) == 1 {
				out = append(out, ev.eval(st.Results[0], env, depth)...)
			}
			return out, true
		case *ast.IfStmt:
			decided, value := ev.decide(st.Cond, env)
			var body []string
			var bodyDone bool
			if !decided || value {
				body, bodyDone = ev.returns(st.Body.List, env, depth)
				out = append(out, body...)
			}
			elseDone := false
			if st.Else != nil && (!decided || !value) {
				var els []ast.Stmt
				switch e := st.Else.(type) {
				case *ast.BlockStmt:
					els = e.List
				default:
					els = []ast.Stmt{e}
				}
				var more []string
				more, elseDone = ev.returns(els, env, depth)
				out = append(out, more...)
			}
			switch {
			case decided && value && bodyDone, decided && !value && elseDone, bodyDone && elseDone:
				return out, true
			}
		case *ast.SwitchStmt, *ast.ForStmt, *ast.RangeStmt, *ast.BlockStmt:
			ast.Inspect(st, func(n ast.Node) bool {
				if ret, ok := n.(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
					out = append(out, ev.eval(ret.Results[0], env, depth)...)
				}
				return true
			})
		}
	}
	return out, false
}

// decide evaluates `param == "literal"` (or !=) when param is bound to
// one known string.
func (ev *evaluator) decide(cond ast.Expr, env map[string][]string) (decided, value bool) {
	b, ok := cond.(*ast.BinaryExpr)
	if !ok || (b.Op != token.EQL && b.Op != token.NEQ) {
		return false, false
	}
	id, ok := b.X.(*ast.Ident)
	lit, ok2 := b.Y.(*ast.BasicLit)
	if !ok || !ok2 || lit.Kind != token.STRING {
		return false, false
	}
	v, ok := env[id.Name]
	if !ok || len(v) != 1 || strings.Contains(v[0], "*") {
		return false, false
	}
	want, _ := strconv.Unquote(lit.Value)
	return true, (v[0] == want) == (b.Op == token.EQL)
}

// joinStar concatenates, keeping a run of unknown values one "*".
func joinStar(l, r string) string {
	if strings.HasSuffix(l, "*") && strings.HasPrefix(r, "*") {
		return l + r[1:]
	}
	return l + r
}

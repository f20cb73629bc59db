package viewstest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Target is one attribute of a template naming a URL.
type Target struct {
	Where  string // the generated file and line
	Attr   string // action, formaction, href, src, hx-get, hx-post…
	Method string // the method a browser uses for it
	// URLs are the patterns it may hold ("*" one segment; "external" a
	// public address outside the dashboard).
	URLs []string
}

// Form is true when the target submits something: a form's action or a
// button's formaction, or an htmx attribute sending anything but GET.
// Links, sources and hx-get (live updates) are not forms.
func (t Target) Form() bool {
	switch t.Attr {
	case "action", "formaction", "hx-post", "hx-put", "hx-patch", "hx-delete":
		return true
	}
	return false
}

// Opaque lists the template values that hold a whole URL made in Go, by
// template file and expression, with the patterns each holds ("external"
// a public address outside the dashboard).
var Opaque = map[string][]string{
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

// Dir is the views directory of this repository.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// Targets reads every template of the views directory (through the Go
// templ generated from it) and returns each attribute naming a URL.
//
// URLs built in Go are followed symbolically: string literals are kept,
// concatenations joined, calls to the views' own helpers (a.url("manifest"),
// previewURL(a, slug)) evaluated with their arguments, and any other value
// (an id) stands for one path segment. A URL that is a bare value (a field
// holding a whole URL) must be listed in Opaque; the error names each that
// is not.
func Targets() ([]Target, error) {
	fset := token.NewFileSet()
	ev := &evaluator{fset: fset, funcs: map[string][]*ast.FuncDecl{}}
	var files []*ast.File
	err := filepath.WalkDir(Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				ev.funcs[fd.Name.Name] = append(ev.funcs[fd.Name.Name], fd)
			}
		}
		if strings.HasSuffix(p, "_templ.go") {
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Target
	var errs []error
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			out = append(out, scanFunc(fset, ev, fd, &errs)...)
		}
	}
	return out, errors.Join(errs...)
}

// Match is true when the concrete path p has the shape of pattern (each
// "*" one non-empty segment, or part of one).
func Match(pattern, p string) bool {
	ps, us := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(p, "/"), "/")
	if len(ps) != len(us) {
		return false
	}
	for i := range ps {
		if ok, _ := path.Match(ps[i], us[i]); !ok || us[i] == "" {
			return false
		}
	}
	return true
}

// urlAttr matches the end of a literal HTML chunk that opens a URL
// attribute whose value an expression gives.
var urlAttr = regexp.MustCompile(`\s(action|formaction|href|src|hx-get|hx-post|hx-put|hx-patch|hx-delete)="$`)

// literalAttr matches a URL attribute written out in the template.
var literalAttr = regexp.MustCompile(`\s(action|formaction|href|src|hx-get|hx-post|hx-put|hx-patch|hx-delete)="([^"]*)"`)

// scanFunc walks one generated component in source order: the HTML it
// writes (literal chunks, "\x00" where an expression goes) and the
// expressions that fill URL attributes.
func scanFunc(fset *token.FileSet, ev *evaluator, fd *ast.FuncDecl, errs *[]error) []Target {
	var html strings.Builder
	var out []Target
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
				*errs = append(*errs, fmt.Errorf("%s: %w", where, err))
				return true
			}
			for _, m := range literalAttr.FindAllStringSubmatchIndex(chunk, -1) {
				attr, value := chunk[m[2]:m[3]], chunk[m[4]:m[5]]
				prefix := html.String() + chunk[:m[0]]
				out = append(out, Target{Where: where, Attr: attr, Method: methodOf(attr, prefix), URLs: []string{value}})
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
					*errs = append(*errs, fmt.Errorf("%s: %s={ %s } holds a URL the scan cannot follow: add it to viewstest.Opaque with the routes it holds", where, attr, exprString(fset, call.Args[0])))
				}
			}
			out = append(out, Target{Where: where, Attr: attr, Method: methodOf(attr, html.String()), URLs: urls})
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

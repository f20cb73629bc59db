package viewstest

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// evaluator follows string expressions through the views' helpers.
type evaluator struct {
	fset  *token.FileSet
	funcs map[string][]*ast.FuncDecl
}

// opaque is what Opaque lists for e, or "*".
func (ev *evaluator) opaque(e ast.Expr) []string {
	file := strings.TrimSuffix(filepath.Base(ev.fset.Position(e.Pos()).Filename), "_templ.go")
	file = strings.TrimSuffix(file, ".go")
	if v, ok := Opaque[file+":"+exprString(ev.fset, e)]; ok {
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

package skali

import (
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
)

// lineIndex maps each source path (applications.web.routes.public.tls) to the
// line its key is on, so diagnostics can point into the YAML file.
func lineIndex(data []byte) map[string]int {
	lines := map[string]int{}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return lines
	}
	for _, doc := range file.Docs {
		walk(doc.Body, "", lines, 0)
	}
	return lines
}

func walk(n ast.Node, path string, lines map[string]int, depth int) {
	if n == nil || depth > 64 {
		return
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		for _, mv := range v.Values {
			walk(mv, path, lines, depth+1)
		}
	case *ast.MappingValueNode:
		if v.Key == nil || v.Key.GetToken() == nil {
			return
		}
		p := convert.Join(path, v.Key.GetToken().Value)
		if _, seen := lines[p]; !seen {
			lines[p] = v.Key.GetToken().Position.Line
		}
		walk(v.Value, p, lines, depth+1)
	case *ast.SequenceNode:
		for i, item := range v.Values {
			p := convert.Index(path, i)
			if item != nil && item.GetToken() != nil {
				lines[p] = item.GetToken().Position.Line
			}
			walk(item, p, lines, depth+1)
		}
	case *ast.AnchorNode:
		walk(v.Value, path, lines, depth+1)
	case *ast.TagNode:
		walk(v.Value, path, lines, depth+1)
	}
}

// lookup finds the line of path, or of its nearest ancestor that has one.
func lookup(lines map[string]int) func(string) int {
	return func(path string) int {
		for p := path; p != ""; {
			if l, ok := lines[p]; ok {
				return l
			}
			cut := -1
			for i := len(p) - 1; i >= 0; i-- {
				if p[i] == '.' || p[i] == '[' {
					cut = i
					break
				}
			}
			if cut <= 0 {
				break
			}
			p = p[:cut]
		}
		return 0
	}
}

package config

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
)

// markdownIntro is the prose above the generated tables.
//
//go:embed markdown_intro.md
var markdownIntro string

// Markdown is docs/configuration.md, generated from the struct tags of
// Config and the values of Default; TestDocCurrent fails when the checked-in
// file differs (go test ./config -run TestDocCurrent -update rewrites it).
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString(markdownIntro)
	def := Default()
	for _, s := range sections() {
		if s.Key == "" {
			b.WriteString("\n## Top level\n\n")
		} else {
			fmt.Fprintf(&b, "\n## `[%s]`\n\n%s\n\n", s.Key, s.Doc)
		}
		b.WriteString("| key | environment | type | default | description |\n|---|---|---|---|---|\n")
		for _, f := range s.Fields {
			env := "`" + f.Env + "`"
			for _, a := range f.Aliases {
				env += "<br>`" + a + "`"
			}
			doc := f.Doc
			if f.Secret {
				doc += " *Secret.*"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s |\n", f.Key, env, f.typeName(), f.tomlValue(&def), mdEscape.Replace(doc))
		}
	}
	return b.Bytes()
}

// mdEscape keeps descriptions inside their table cell and out of HTML.
var mdEscape = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;")

package config

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// DefaultFile is the commented default configuration: every key with its
// description, its environment variable and its default, commented out, so
// uncommenting a line is the whole of changing a setting. It decodes to
// Default.
func DefaultFile() []byte {
	var b bytes.Buffer
	b.WriteString(`# Slipway daemon configuration (slipway serve, worker and dev).
#
# Every key below is commented out at its default value: uncomment a line to
# change it. Each key can also be set by the environment variable named above
# it, which wins over this file; explicit command-line flags win over both.
# Check a file with: slipway config validate --config PATH
# Reference: docs/configuration.md
`)
	def := Default()
	for _, s := range sections() {
		if s.Key != "" {
			b.WriteString("\n")
			comment(&b, s.Doc)
			fmt.Fprintf(&b, "[%s]\n", s.Key)
		}
		for _, f := range s.Fields {
			b.WriteString("\n")
			comment(&b, f.Doc)
			env := "env: " + f.Env
			if len(f.Aliases) > 0 {
				env += " (or " + strings.Join(f.Aliases, ", ") + ")"
			}
			comment(&b, env)
			fmt.Fprintf(&b, "# %s = %s\n", f.Key[strings.LastIndex(f.Key, ".")+1:], f.tomlValue(&def))
		}
	}
	return b.Bytes()
}

// WriteDefault writes DefaultFile to path, readable only by its owner since
// an operator may put secrets in it. It never replaces an existing file:
// the error then wraps fs.ErrExist, which `slipway dev` ignores when it
// seeds <data-dir>/slipway.toml on every start.
func WriteDefault(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write default configuration: %w", err)
	}
	if _, err := f.Write(DefaultFile()); err != nil {
		f.Close()
		return fmt.Errorf("write default configuration %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write default configuration %s: %w", path, err)
	}
	return nil
}

// comment writes text as "# " lines of at most about 78 columns.
func comment(b *bytes.Buffer, text string) {
	for _, line := range wrap(text, 76) {
		b.WriteString("# " + line + "\n")
	}
}

func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

package partial

import (
	"strconv"
	"strings"
)

// gutterSlack is how many numbers the gutter shows past the last line, so
// typing new lines does not outrun it before the next validation.
const gutterSlack = 20

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }

// errorAt is the tooltip for line n: its errors' messages, or "".
func errorAt(errs []ManifestErrorView, n int) string {
	var msgs []string
	for _, e := range errs {
		if e.Line == n {
			msgs = append(msgs, e.Code+": "+e.Message)
		}
	}
	return strings.Join(msgs, "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// shortHash is how plan tables show a hash (the title holds all of it).
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

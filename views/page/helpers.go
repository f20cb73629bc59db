package page

import "net/http"

func statusTitle(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "Error"
}

// orDash is s, or an em dash for a value that could not be read.
func orDash(s string) string { return orDefault(s, "—") }

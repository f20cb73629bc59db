package views

import "strconv"

// Plural counts n things in words: "1 application", "2 applications",
// "0 applications".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

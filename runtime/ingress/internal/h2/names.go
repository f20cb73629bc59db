package h2

import (
	"net/http"
	"strings"
)

// Field names: HTTP/2 carries them in lower case, net/http's Header keys
// are canonical. The common ones are converted without allocating.
var (
	canonicalOf = map[string]string{}
	lowerOf     = map[string]string{}
)

func init() {
	for _, n := range []string{"accept", "accept-charset", "accept-encoding", "accept-language", "accept-ranges",
		"access-control-allow-origin", "age", "authorization", "cache-control", "content-disposition",
		"content-encoding", "content-language", "content-length", "content-security-policy", "content-type",
		"cookie", "date", "dnt", "etag", "expect", "expires", "from", "if-match", "if-modified-since",
		"if-none-match", "if-range", "if-unmodified-since", "last-modified", "link", "location", "origin",
		"priority", "range", "referer", "referrer-policy", "retry-after", "sec-ch-ua", "sec-ch-ua-mobile",
		"sec-ch-ua-platform", "sec-fetch-dest", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-user",
		"server", "set-cookie", "strict-transport-security", "trailer", "upgrade-insecure-requests",
		"user-agent", "vary", "via", "x-content-type-options", "x-frame-options", "x-powered-by",
		"x-request-id", "x-requested-with", "idempotency-key"} {
		c := http.CanonicalHeaderKey(n)
		canonicalOf[n] = c
		lowerOf[c] = n
	}
}

// canonicalName is http.CanonicalHeaderKey of a lower-case field name.
func canonicalName(lower string) string {
	if c, ok := canonicalOf[lower]; ok {
		return c
	}
	return http.CanonicalHeaderKey(lower)
}

// lowerName is a Header key in lower case.
func lowerName(name string) string {
	if l, ok := lowerOf[name]; ok {
		return l
	}
	for i := range len(name) {
		if 'A' <= name[i] && name[i] <= 'Z' {
			return strings.ToLower(name)
		}
	}
	return name
}

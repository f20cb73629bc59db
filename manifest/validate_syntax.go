package manifest

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checkName checks the spec's name rule, shared by applications, services,
// volumes, jobs, routes, secrets and environments. It returns "" when the
// name is valid, else what is wrong.
func checkName(name string) string {
	switch {
	case name == "":
		return "is required"
	case len(name) > 63:
		return "must be at most 63 characters, got " + strconv.Itoa(len(name))
	case name[0] < 'a' || name[0] > 'z':
		return quoteValue(name) + " must start with a lowercase letter"
	case name[len(name)-1] == '-':
		return quoteValue(name) + " cannot end with a hyphen"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return quoteValue(name) + " may only contain lowercase letters, digits and hyphens"
		}
	}
	return ""
}

// controlProblem returns what is wrong with runtime text: invalid UTF-8, NUL
// or control characters other than tab, newline and carriage return.
func controlProblem(s string, allowNewlines bool) string {
	checkedUTF8 := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != 0x7f {
			if c >= 0x80 && !checkedUTF8 {
				if !utf8.ValidString(s) {
					return "is not valid UTF-8"
				}
				checkedUTF8 = true
			}
			continue
		}
		if allowNewlines && (c == '\t' || c == '\n' || c == '\r') {
			continue
		}
		return "contains control character " + strconv.QuoteRune(rune(c))
	}
	return ""
}

// checkEnvKey checks an environment variable or build argument name.
func checkEnvKey(key string) string {
	switch {
	case key == "":
		return "names cannot be empty"
	case strings.ContainsRune(key, '='):
		return "name " + quoteValue(key) + " cannot contain ="
	case strings.ContainsAny(key, " \t\r\n"):
		return "name " + quoteValue(key) + " cannot contain whitespace"
	}
	if p := controlProblem(key, false); p != "" {
		return "name " + quoteValue(key) + " " + p
	}
	return ""
}

// Reserved container paths.
const (
	secretsDir = "/run/secrets"
)

// reservedDirs are owned by Slipway inside every container: the probe and
// the telemetry socket.
var reservedDirs = []string{"/run/slipway", "/run/piqueld"}

// managedDirs are every directory other targets stay out of.
var managedDirs = []string{secretsDir, "/run/slipway", "/run/piqueld"}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// checkAbsolutePath checks a container target: absolute, normalized, not /.
func checkAbsolutePath(p string) string {
	switch {
	case p == "":
		return "is required"
	case p[0] != '/':
		return quoteValue(p) + " must be an absolute path"
	case p == "/":
		return "cannot be /"
	}
	if prob := controlProblem(p, false); prob != "" {
		return prob
	}
	if c := path.Clean(p); c != p {
		return quoteValue(p) + " must be normalized; write " + quoteValue(c)
	}
	return ""
}

// checkRepoPath checks a path relative to a repository root that must stay
// inside it and out of .git.
func checkRepoPath(p string, allowRoot bool) string {
	if p == "" {
		return "is required"
	}
	if prob := controlProblem(p, false); prob != "" {
		return prob
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return quoteValue(p) + " must be relative to the repository root, with / separators"
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return quoteValue(p) + " leaves the repository"
	}
	if c == "." && !allowRoot {
		return quoteValue(p) + " must name a file"
	}
	if len(p) > maxRepoPathBytes {
		return fmt.Sprintf("is %d bytes long; repository paths are at most %d", len(p), maxRepoPathBytes)
	}
	for _, part := range strings.Split(c, "/") {
		if part == ".git" {
			return quoteValue(p) + " cannot point into .git"
		}
		if len(part) > maxRepoPathElement {
			return fmt.Sprintf("has a %d-byte element; file names are at most %d bytes", len(part), maxRepoPathElement)
		}
	}
	return ""
}

// The file system's limits (NAME_MAX, PATH_MAX): a longer repository path
// cannot name a file in any checkout.
const (
	maxRepoPathElement = 255
	maxRepoPathBytes   = 4096
)

// checkGitURL accepts file, git, http(s) and ssh URLs and scp-like
// user@host:path addresses. Remote helpers such as ext:: are rejected, and so
// are passwords: Git uses the host's credentials.
func checkGitURL(raw string) string {
	if raw == "" {
		return "is required"
	}
	if prob := controlProblem(raw, false); prob != "" || strings.ContainsAny(raw, " \t") {
		return "cannot contain whitespace or control characters"
	}
	if i := strings.Index(raw, "::"); i >= 0 && !strings.Contains(raw[:i], "/") {
		return quoteValue(raw) + " uses a remote helper; use a file, git, http(s) or ssh URL"
	}
	if !strings.Contains(raw, "://") {
		// scp-like: [user@]host:path
		host, rest, ok := strings.Cut(raw, ":")
		if ok && rest != "" && host != "" && !strings.Contains(host, "/") {
			return ""
		}
		return quoteValue(raw) + " is not a repository URL; use a file, git, http(s) or ssh URL"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return quoteValue(raw) + " is not a valid URL"
	}
	switch u.Scheme {
	case "file":
		if u.Path == "" {
			return quoteValue(raw) + " has no path"
		}
		return ""
	case "git", "http", "https", "ssh":
	default:
		return "scheme " + quoteValue(u.Scheme) + " is not allowed; use file, git, http, https or ssh"
	}
	if u.Host == "" {
		return quoteValue(raw) + " has no host"
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return "cannot contain a password; Git uses the host's credentials"
	}
	return ""
}

// checkBranch applies the gist of git check-ref-format to a branch name.
func checkBranch(b string) string {
	switch {
	case b == "":
		return "cannot be empty"
	case strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, "."):
		return quoteValue(b) + " is not a valid branch name"
	case strings.Contains(b, "..") || strings.Contains(b, "//") || strings.Contains(b, "@{") || strings.HasSuffix(b, ".lock") || b == "@":
		return quoteValue(b) + " is not a valid branch name"
	case strings.ContainsAny(b, " ~^:?*[\\\x7f"):
		return quoteValue(b) + " is not a valid branch name"
	}
	if controlProblem(b, false) != "" {
		return quoteValue(b) + " is not a valid branch name"
	}
	return ""
}

// checkCommit requires a full lowercase SHA-1 commit hash.
func checkCommit(c string) string {
	if len(c) != 40 {
		return quoteValue(c) + " must be a full 40-character commit hash"
	}
	for i := 0; i < len(c); i++ {
		if !(c[i] >= '0' && c[i] <= '9' || c[i] >= 'a' && c[i] <= 'f') {
			return quoteValue(c) + " must be a full commit hash in lowercase hexadecimal"
		}
	}
	return ""
}

var (
	imagePathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	imageTag           = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageDigestAlgo    = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}
	fileMode           = regexp.MustCompile(`^0[0-7]{3}$`)
	dockerStage        = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
)

// imageRef is a parsed image reference.
type imageRef struct {
	domain, path, tag, digest string
}

// parseImage parses a Docker/OCI image reference, returning what is wrong
// with it when it is invalid.
func parseImage(ref string) (imageRef, string) {
	var r imageRef
	switch {
	case ref == "":
		return r, "is required"
	case len(ref) > maxImageReferenceLength:
		return r, "is longer than " + strconv.Itoa(maxImageReferenceLength) + " characters"
	case strings.Contains(ref, "://"):
		return r, quoteValue(ref) + " must not include a URL scheme; write it as registry/repository:tag"
	case strings.ContainsAny(ref, " \t\r\n"):
		return r, quoteValue(ref) + " cannot contain whitespace"
	}
	if prob := controlProblem(ref, false); prob != "" {
		return r, prob
	}
	name := ref
	if at := strings.LastIndexByte(ref, '@'); at >= 0 {
		name, r.digest = ref[:at], ref[at+1:]
		if strings.ContainsRune(name, '@') || strings.ContainsRune(r.digest, '/') {
			return r, "must not contain credentials; registries are logged in on the host"
		}
		algo, hex, ok := strings.Cut(r.digest, ":")
		want, known := imageDigestAlgo[algo]
		if !ok || !known || len(hex) != want || strings.Trim(hex, "0123456789abcdef") != "" {
			return r, "digest " + quoteValue(r.digest) + " is malformed; expected sha256: and 64 lowercase hexadecimal digits"
		}
	}
	if colon := strings.LastIndexByte(name, ':'); colon > strings.LastIndexByte(name, '/') {
		name, r.tag = name[:colon], name[colon+1:]
		if !imageTag.MatchString(r.tag) {
			return r, "tag " + quoteValue(r.tag) + " is malformed; tags use letters, digits, _, . and -, at most 128, not starting with . or -"
		}
	}
	rest := name
	if first, after, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		r.domain, rest = first, after
		if msg := checkRegistryHost(first); msg != "" {
			return r, msg
		}
	}
	if rest == "" {
		return r, quoteValue(ref) + " has no repository name"
	}
	if r.domain != "" && len(r.domain)+1+len(rest) > 255 || r.domain == "" && len(rest) > 255 {
		return r, "repository name is longer than 255 characters"
	}
	for _, comp := range strings.Split(rest, "/") {
		if !imagePathComponent.MatchString(comp) {
			if strings.ToLower(comp) != comp {
				return r, "repository " + quoteValue(rest) + " must be lowercase"
			}
			return r, "repository " + quoteValue(rest) + " is malformed; components use lowercase letters, digits and single separators (., _, __ or -)"
		}
	}
	r.path = rest
	return r, ""
}

// checkRegistryHost accepts host[:port] with a DNS or IPv4 host; IPv6
// literals are rejected.
func checkRegistryHost(h string) string {
	if strings.HasPrefix(h, "[") {
		return "registry " + quoteValue(h) + " is an IPv6 literal; use a hostname"
	}
	host, port, hasPort := strings.Cut(h, ":")
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return "registry " + quoteValue(h) + " has an invalid port"
		}
	}
	if host == "" || len(host) > 253 {
		return "registry " + quoteValue(h) + " is not a valid hostname"
	}
	for _, label := range strings.Split(host, ".") {
		if !dnsLabel(strings.ToLower(label)) {
			return "registry " + quoteValue(h) + " is not a valid hostname"
		}
	}
	return ""
}

// CanonicalImage returns the reference with its registry host lowercased.
// Invalid references are returned unchanged.
func CanonicalImage(ref string) string {
	r, msg := parseImage(ref)
	if msg != "" || r.domain == "" || strings.ToLower(r.domain) == r.domain {
		return ref
	}
	return strings.ToLower(r.domain) + ref[len(r.domain):]
}

// dnsLabel checks a lowercase DNS label.
func dnsLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// NormalizeHostname lowercases a hostname and drops a trailing dot.
func NormalizeHostname(h string) string {
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// CheckHostname checks a route hostname as validation does, after
// normalizing it; it returns the code and message of the problem, or
// empty strings.
func CheckHostname(h string) (code, msg string) { return checkHostname(NormalizeHostname(h)) }

// checkHostname checks a normalized route hostname. It returns the code and
// message of the problem, or empty strings.
func checkHostname(h string) (code, msg string) {
	switch {
	case h == "":
		return "hostname_invalid", "is required"
	case strings.Contains(h, "://"):
		return "hostname_invalid", quoteValue(h) + " must be a hostname without a scheme"
	case strings.ContainsRune(h, '/'):
		return "hostname_invalid", quoteValue(h) + " must be a hostname without a path"
	case strings.ContainsAny(h, "[]:"):
		return "hostname_invalid", quoteValue(h) + " must be a hostname without a port"
	case len(h) > 253:
		return "hostname_invalid", "is longer than 253 characters"
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			return "hostname_invalid", quoteValue(h) + " must be ASCII; write internationalized names in Punycode (xn--)"
		}
	}
	labels := strings.Split(h, ".")
	if strings.ContainsRune(h, '*') {
		if labels[0] != "*" || strings.ContainsRune(strings.Join(labels[1:], "."), '*') {
			return "wildcard_hostname_invalid", quoteValue(h) + ": * is allowed only as the whole first label, as in *.tenants.example.com"
		}
		if len(labels) < 3 {
			return "wildcard_hostname_invalid", quoteValue(h) + " is too broad; a wildcard needs at least two labels after *."
		}
		labels = labels[1:]
	}
	if len(labels) < 2 {
		return "hostname_invalid", quoteValue(h) + " must be a public DNS name with a domain, such as app.example.com"
	}
	for _, l := range labels {
		if !dnsLabel(l) {
			return "hostname_invalid", quoteValue(h) + " is not a valid DNS name: labels are 1-63 letters, digits or hyphens, not starting or ending with a hyphen"
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "hostname_invalid", quoteValue(h) + " is an IP address or has a numeric top-level domain; use a DNS name"
	}
	return "", ""
}

// hostnameServes reports whether a route hostname (exact or wildcard)
// serves host.
func hostnameServes(route, host string) bool {
	if route == host {
		return true
	}
	if rest, ok := strings.CutPrefix(route, "*."); ok {
		label, parent, found := strings.Cut(host, ".")
		return found && label != "" && parent == rest
	}
	return false
}

// checkRedirectTo checks a redirect target and returns its hostname.
func checkRedirectTo(to string) (host, msg string) {
	if to == "" {
		return "", "is required"
	}
	if strings.ContainsAny(to, "{}") {
		return "", quoteValue(to) + " cannot contain { or }"
	}
	if prob := controlProblem(to, false); prob != "" || strings.ContainsAny(to, " \t") {
		return "", "cannot contain whitespace or control characters"
	}
	u, err := url.Parse(to)
	if err != nil {
		return "", quoteValue(to) + " is not a valid URL"
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", quoteValue(to) + " must be an http or https URL"
	case u.User != nil:
		return "", quoteValue(to) + " cannot contain credentials"
	case u.RawQuery != "" || u.ForceQuery:
		return "", quoteValue(to) + " cannot contain a query; preserve_path appends the request's"
	case u.Fragment != "" || strings.Contains(to, "#"):
		return "", quoteValue(to) + " cannot contain a fragment"
	case u.Opaque != "":
		return "", quoteValue(to) + " is not a valid URL"
	}
	host = u.Hostname()
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", quoteValue(to) + " has an invalid port"
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", quoteValue(to) + " has an empty port"
	}
	if host != strings.ToLower(host) {
		return "", quoteValue(to) + " must use a lowercase hostname"
	}
	if strings.ContainsRune(host, '*') {
		return "", quoteValue(to) + " cannot redirect to a wildcard"
	}
	if _, m := checkHostname(host); m != "" {
		return "", "hostname " + m
	}
	return host, ""
}

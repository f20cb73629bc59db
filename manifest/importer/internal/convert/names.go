package convert

import (
	"fmt"
	"regexp"
	"strings"
)

var nameRE = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidName reports whether s is a valid native name (services, volumes,
// routes, secrets, applications).
func ValidName(s string) bool { return nameRE.MatchString(s) }

// Name turns a source identifier into a native name: lowercase, every run of
// other characters becomes one hyphen, a leading non-letter gets an "x-"
// prefix, and the result is cut to 63 characters.
func Name(s string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			hyphen = false
			continue
		}
		if !hyphen && b.Len() > 0 {
			b.WriteByte('-')
			hyphen = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		out = "x"
	}
	if out[0] < 'a' || out[0] > 'z' {
		out = "x-" + out
	}
	if len(out) > 63 {
		out = strings.TrimRight(out[:63], "-")
	}
	return out
}

// Names hands out unique native names within one namespace.
type Names map[string]bool

// Claim returns a unique name derived from want, adding -2, -3, … on clashes.
func (n Names) Claim(want string) string {
	base := Name(want)
	name := base
	for i := 2; n[name]; i++ {
		suffix := fmt.Sprintf("-%d", i)
		cut := base
		if len(cut)+len(suffix) > 63 {
			cut = strings.TrimRight(cut[:63-len(suffix)], "-")
		}
		name = cut + suffix
	}
	n[name] = true
	return name
}

// EscapeRefs protects literal "${{" in source text, which Slipway would
// otherwise read as a variable reference.
func EscapeRefs(s string) string { return strings.ReplaceAll(s, "${{", "$${{") }

// EscapeAll applies EscapeRefs to each element.
func EscapeAll(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = EscapeRefs(s)
	}
	return out
}

var (
	envKeyRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	hostLabel  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	imagePath  = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	imageHost  = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]{1,5})?$`)
	imageTag   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageDigst = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// ValidEnvKey reports whether s is usable as an environment variable name.
func ValidEnvKey(s string) bool { return len(s) <= 255 && envKeyRE.MatchString(s) }

// CheckHostname returns the lowercase hostname, or an error explaining why it
// is not a public DNS name. A name holding ${{ }} references is returned
// unchanged once its literal text fits a hostname around them (each
// reference may stand for one or more whole labels or part of one); the
// rest is checked when it is rendered.
func CheckHostname(h string, wildcard bool) (string, error) {
	if strings.Contains(h, "${{") {
		return h, checkTemplatedHostname(h, wildcard)
	}
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	if len(h) > 253 || h == "" {
		return "", fmt.Errorf("%q is not a DNS hostname", h)
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return "", fmt.Errorf("%q is not a public DNS hostname (it needs a dot)", h)
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "", fmt.Errorf("%q is an IP address or has a numeric top-level domain; use a DNS name", h)
	}
	for i, l := range labels {
		if i == 0 && l == "*" && wildcard {
			continue
		}
		if !hostLabel.MatchString(l) {
			return "", fmt.Errorf("%q is not a DNS hostname (no schemes, paths, ports or wildcards)", h)
		}
	}
	return h, nil
}

// checkTemplatedHostname checks h with each ${{ }} reference read as the
// label text "x": what is around the references must be hostname labels.
func checkTemplatedHostname(h string, wildcard bool) error {
	var probe strings.Builder
	for rest := h; ; {
		i := strings.Index(rest, "${{")
		if i < 0 {
			probe.WriteString(rest)
			break
		}
		end := strings.Index(rest[i:], "}}")
		if end < 0 {
			return fmt.Errorf("%q has a reference without its closing }}", h)
		}
		probe.WriteString(rest[:i] + "x")
		rest = rest[i+end+2:]
	}
	for i, l := range strings.Split(strings.ToLower(probe.String()), ".") {
		if (i > 0 || l != "*" || !wildcard) && !hostLabel.MatchString(l) {
			return fmt.Errorf("%q is not a DNS hostname around its references (letters, digits, hyphens and dots only)", h)
		}
	}
	return nil
}

// CheckImage validates a Docker image reference the way Slipway does: no URL
// schemes or credentials, a well-formed tag and digest. It returns the
// reference with a lowercase registry host.
func CheckImage(ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("the image reference is empty")
	}
	if strings.Contains(ref, "://") {
		return "", fmt.Errorf("image %q has a URL scheme; write registry/name:tag", ref)
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest && !imageDigst.MatchString(digest) {
		return "", fmt.Errorf("image %q has a malformed digest or credentials", ref)
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
		if !imageTag.MatchString(tag) {
			return "", fmt.Errorf("image %q has a malformed tag", ref)
		}
	}
	host, path := "", name
	if first, rest, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		if !imageHost.MatchString(first) || strings.Contains(first, "[") {
			return "", fmt.Errorf("image %q has an invalid registry host", ref)
		}
		host, path = strings.ToLower(first)+"/", rest
	}
	if !imagePath.MatchString(path) || len(name) > 255 {
		return "", fmt.Errorf("image %q has an invalid repository name (lowercase letters, digits and separators)", ref)
	}
	out := host + path
	if tag != "" {
		out += ":" + tag
	}
	if hasDigest {
		out += "@" + digest
	}
	return out, nil
}

// CleanPath validates an absolute container path and returns it normalized.
func CleanPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") || TextProblem(p, false) != "" {
		return "", fmt.Errorf("%q is not an absolute container path", p)
	}
	clean := cleanSlash(p)
	if clean == "/" {
		return "", fmt.Errorf("%q cannot be the root directory", p)
	}
	if clean == "/run/slipway" || strings.HasPrefix(clean, "/run/slipway/") || clean == "/run/piqueld" || strings.HasPrefix(clean, "/run/piqueld/") {
		return "", fmt.Errorf("%q is reserved for Slipway", p)
	}
	return clean, nil
}

func cleanSlash(p string) string {
	var parts []string
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, seg)
		}
	}
	return "/" + strings.Join(parts, "/")
}

package build

import (
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// remote is a validated repository address.
type remote struct {
	raw string
	// protocol is the go-git transport that will serve it: file, http,
	// https, ssh or git.
	protocol string
	// dir is the repository directory for file:// URLs; file remotes are read
	// in-process and never through go-git's file transport, which would run
	// the git-upload-pack binary.
	dir string
}

// scpLike matches git's "[user@]host:path" form. Git only treats it as scp-like
// when no slash comes before the first colon.
var scpLike = regexp.MustCompile(`^(?:[A-Za-z0-9._~+-]+@)?([A-Za-z0-9.\-\[\]]+):([^:].*)$`)

// parseRemote validates a repository URL. It accepts file://, http(s)://,
// ssh://, git:// and scp-like git@host:path addresses and rejects everything
// else before any network or process activity: remote helpers ("ext::",
// "fd::", any "transport::address"), unknown schemes, bare local paths and
// credentials embedded in the URL.
func parseRemote(raw string) (*remote, error) {
	const field = "url"
	if strings.TrimSpace(raw) == "" {
		return nil, newError(CodeRepositoryURLInvalid, field, "repository URL is empty")
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
		return nil, newError(CodeRepositoryURLInvalid, field, "repository URL %q contains spaces or control characters", RedactURL(raw))
	}
	if strings.HasPrefix(raw, "-") {
		return nil, newError(CodeRepositoryURLInvalid, field, "repository URL must not start with '-'")
	}
	scheme, _, hasScheme := strings.Cut(raw, "://")
	// "<transport>::<address>" selects a git remote helper; ext:: runs an
	// arbitrary command. Checked before the scheme so "ext::sh -c x://y" is
	// not mistaken for a URL.
	if helper, _, ok := strings.Cut(raw, "::"); ok && (!hasScheme || len(helper) < len(scheme)) {
		return nil, newError(CodeTransportUnsupported, field, "remote helper %q is not supported; use an https://, ssh:// or file:// URL", helper+"::")
	}
	if hasScheme {
		return parseSchemeURL(raw, strings.ToLower(scheme))
	}
	if m := scpLike.FindStringSubmatch(raw); m != nil && !strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, ".") {
		return checkEndpoint(&remote{raw: raw, protocol: "ssh"})
	}
	return nil, newError(CodeRepositoryURLInvalid, field, "%q is not a repository URL; local repositories must be given as file:///absolute/path", raw)
}

func parseSchemeURL(raw, scheme string) (*remote, error) {
	const field = "url"
	switch scheme {
	case "file", "http", "https", "ssh", "git":
	default:
		return nil, newError(CodeTransportUnsupported, field, "transport %q is not supported; use https://, ssh://, git:// or file://", scheme)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &Error{Code: CodeRepositoryURLInvalid, Field: field, Message: "repository URL does not parse", Err: scrub(err, raw)}
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return nil, newError(CodeRepositoryURLInvalid, field, "repository URL %s embeds a password; pass credentials through the installation instead", RedactURL(raw))
		}
	}
	if scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return nil, newError(CodeRepositoryURLInvalid, field, "file URL %q names host %q; use file:///absolute/path", raw, u.Host)
		}
		if u.RawQuery != "" || u.Fragment != "" || !path.IsAbs(u.Path) {
			return nil, newError(CodeRepositoryURLInvalid, field, "file URL %q must be file:///absolute/path", raw)
		}
		return &remote{raw: raw, protocol: "file", dir: path.Clean(u.Path)}, nil
	}
	if u.Host == "" {
		return nil, newError(CodeRepositoryURLInvalid, field, "repository URL %s has no host", RedactURL(raw))
	}
	return checkEndpoint(&remote{raw: raw, protocol: scheme})
}

// checkEndpoint makes sure go-git reads the address the way we validated it,
// so a crafted URL cannot reach a different transport.
func checkEndpoint(r *remote) (*remote, error) {
	ep, err := transport.NewEndpoint(r.raw)
	if err != nil {
		return nil, &Error{Code: CodeRepositoryURLInvalid, Field: "url", Message: "repository URL does not parse", Err: scrub(err, r.raw)}
	}
	if ep.Protocol != r.protocol {
		return nil, newError(CodeTransportUnsupported, "url", "repository URL %s resolves to transport %q", RedactURL(r.raw), ep.Protocol)
	}
	return r, nil
}

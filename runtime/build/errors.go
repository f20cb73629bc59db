package build

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Error codes returned in Error.Code. They are part of the API contract: the
// deployment pipeline records them on the deployment and shows them to users.
const (
	CodeRepositoryURLInvalid  = "repository_url_invalid"
	CodeTransportUnsupported  = "transport_unsupported"
	CodeFileURLDisabled       = "file_url_disabled"
	CodeRepositoryUnreachable = "repository_unreachable"
	CodeBranchNotFound        = "branch_not_found"
	CodeCommitNotFound        = "commit_not_found"
	CodeCheckoutFailed        = "checkout_failed"
	CodePathOutsideRepository = "path_outside_repository"
	CodeManifestNotFound      = "manifest_not_found"
	CodeFileNotFound          = "file_not_found"
	CodeFileNotUTF8           = "file_not_utf8"
	CodeBuildPathInvalid      = "build_path_invalid"
	CodeBuildArgInvalid       = "build_arg_invalid"
	CodeBuildArgsTooLarge     = "build_args_too_large"
	CodeBuildFailed           = "build_failed"
	CodeBuildTimeout          = "build_timeout"
)

// Error is a user-facing failure of a checkout, a repository read or a build.
// Field names the request argument that was wrong ("url", "branch",
// "dockerfile", "args.NODE_ENV", ...) so callers can prefix it with the
// manifest path of the source.
type Error struct {
	Code    string
	Field   string
	Message string
	// Output holds the last lines of build output for build_failed.
	Output string
	Err    error
}

func (e *Error) Error() string { return e.text(" (" + e.Code + ")") }

func (e *Error) Unwrap() error { return e.Err }

// Detail is the error without its code, for a record that keeps the code
// apart (a deployment's error_code and error_message).
func (e *Error) Detail() string { return e.text("") }

// text is "field: message<code>: err", each part when present.
func (e *Error) text(code string) string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	b.WriteString(code)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// ErrorCode returns the code of the first *Error in err's chain, or "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newError(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// RedactURL returns rawURL without a password in its user info and without
// its query and fragment, which is how URLs appear in errors and logs.
// scp-like addresses (git@host:path) carry no secret and are returned as is.
func RedactURL(rawURL string) string {
	if !strings.Contains(rawURL, "://") {
		return rawURL
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "<invalid url>"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// scrub wraps a library error so that its text never carries the raw URL or
// a credential: go-git embeds endpoints in some messages.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

func scrub(err error, rawURL string, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if rawURL != "" {
		msg = strings.ReplaceAll(msg, rawURL, RedactURL(rawURL))
	}
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return &scrubbed{msg: msg, err: err}
}

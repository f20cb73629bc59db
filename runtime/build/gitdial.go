package build

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"golang.org/x/net/proxy"

	"github.com/slipwayhq/slipway/outbound"
)

// Every connection to a remote repository is checked by the call's
// outbound policy (Auth.Outbound; the strict one when nil) where it is
// made, each transport its own way, because go-git takes no dialer per
// operation:
//
//   - http and https: go-git's client for these schemes is process-wide,
//     so it is replaced once by one whose transport dials under the
//     policy the request's context carries (outbound.WithPolicy), and
//     fails closed when it carries none. Redirects are dialled the same way.
//   - ssh: go-git dials through a proxy when the fetch names one; the
//     "proxy" here is a scheme registered with golang.org/x/net/proxy that
//     dials directly under the operation's policy.
//   - git://: go-git dials with net.Dial and no hook at all, so the host is
//     resolved and checked here and the fetch connects to the checked
//     address literally, with no second resolution. The git protocol's
//     host= field then carries the address instead of the name.
func init() {
	hc := githttp.NewClient(&http.Client{Transport: outbound.ContextTransport()})
	client.InstallProtocol("http", hc)
	client.InstallProtocol("https", hc)
	proxy.RegisterDialerType(sshDialScheme, func(u *url.URL, _ proxy.Dialer) (proxy.Dialer, error) {
		p, ok := sshPolicies.Load(u.Host)
		if !ok {
			return nil, fmt.Errorf("%s: no outbound policy for this connection", outbound.Code)
		}
		return p.(*outbound.Policy), nil
	})
}

const sshDialScheme = "slipway-outbound"

// sshPolicies maps the ids in this process's ssh "proxy" URLs to the
// policy of the operation that made them.
var sshPolicies sync.Map

// connection is how one operation reaches a remote under its policy.
type connection struct {
	ctx   context.Context
	url   string // the URL to hand go-git: r.raw, or a git:// URL on the checked address
	proxy transport.ProxyOptions
	done  func()
}

// connect prepares an operation on r under auth's outbound policy.
func (a Auth) connect(ctx context.Context, r *remote) (*connection, error) {
	p := outbound.OrStrict(a.Outbound)
	c := &connection{ctx: outbound.WithPolicy(ctx, p), url: r.raw, done: func() {}}
	switch r.protocol {
	case "ssh":
		// Checked ahead too, so a refusal does not wait for the SSH
		// agent or known_hosts; the dial is checked again where it
		// connects.
		ep, err := transport.NewEndpoint(r.raw)
		if err != nil {
			return nil, &Error{Code: CodeRepositoryURLInvalid, Field: "url", Message: "repository URL does not parse", Err: scrub(err, r.raw)}
		}
		if _, err := checkedAddress(ctx, p, ep.Host); err != nil {
			return nil, refusedOrUnreachable(err, r)
		}
		id := make([]byte, 16)
		_, _ = rand.Read(id)
		key := hex.EncodeToString(id)
		sshPolicies.Store(key, p)
		c.proxy = transport.ProxyOptions{URL: sshDialScheme + "://" + key}
		c.done = func() { sshPolicies.Delete(key) }
	case "git":
		u, err := url.Parse(r.raw)
		if err != nil {
			return nil, &Error{Code: CodeRepositoryURLInvalid, Field: "url", Message: "repository URL does not parse", Err: scrub(err, r.raw)}
		}
		addr, err := checkedAddress(ctx, p, u.Hostname())
		if err != nil {
			return nil, refusedOrUnreachable(err, r)
		}
		port := u.Port()
		if port == "" {
			port = strconv.Itoa(9418)
		}
		u.Host = net.JoinHostPort(addr.String(), port)
		c.url = u.String()
	}
	return c, nil
}

// checkedAddress resolves host under p and returns the first address p
// allows; a refusal names the host.
func checkedAddress(ctx context.Context, p *outbound.Policy, host string) (netip.Addr, error) {
	addrs, err := p.Resolve(ctx, host)
	if err != nil {
		return netip.Addr{}, err
	}
	var refusal error
	for _, a := range addrs {
		err := p.Check(host, a)
		if err == nil {
			return a.Unmap(), nil
		}
		if refusal == nil {
			refusal = err
		}
	}
	if refusal == nil {
		refusal = fmt.Errorf("%s resolves to no address", host)
	}
	return netip.Addr{}, refusal
}

// refusedOrUnreachable turns a refused destination into
// destination_not_allowed on the URL, and anything else into
// repository_unreachable.
func refusedOrUnreachable(err error, r *remote) error {
	var refusal *outbound.Error
	if errors.As(err, &refusal) {
		return &Error{Code: outbound.Code, Field: "url", Message: fmt.Sprintf("repository URL %s: %s", RedactURL(r.raw), refusal.Error())}
	}
	return &Error{Code: CodeRepositoryUnreachable, Field: "url", Message: fmt.Sprintf("cannot reach %s", RedactURL(r.raw)), Err: remoteCause(err)}
}

// remoteCause is what a failed remote operation may show: the kind of
// failure, never text the remote sent (an HTTP body, an error line), which
// could carry back what some service that is not a git server answered.
func remoteCause(err error) error {
	err = unwrapGoGit(err)
	var httpErr *githttp.Err
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired):
		return transport.ErrAuthenticationRequired
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return transport.ErrAuthorizationFailed
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return transport.ErrRepositoryNotFound
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &httpErr):
		return fmt.Errorf("the server answered HTTP status %d", httpErr.StatusCode())
	case errors.As(err, &dnsErr):
		return dnsErr
	case errors.As(err, &opErr):
		// Our own dial or read: addresses and errno, nothing the remote sent.
		return opErr
	}
	return &hiddenCause{err: err}
}

// unwrapGoGit exposes what go-git's PermanentError and UnexpectedError
// hold (they have no Unwrap), so errors.As sees a refused dial or an HTTP
// status inside them.
func unwrapGoGit(err error) error {
	for {
		var perm *plumbing.PermanentError
		var unexpected *plumbing.UnexpectedError
		switch {
		case errors.As(err, &perm):
			err = perm.Err
		case errors.As(err, &unexpected):
			err = unexpected.Err
		default:
			return err
		}
	}
}

// hiddenCause stands for a remote failure whose text is not shown.
type hiddenCause struct{ err error }

func (h *hiddenCause) Error() string {
	return "the remote did not answer as a git server (its reply is not shown)"
}
func (h *hiddenCause) Unwrap() error { return h.err }

package registry

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/swarm"
)

// Modes of a Provider (config [registry] mode).
const (
	ModeAuto     = "auto"
	ModeEmbedded = "embedded"
	ModeExternal = "external"
	ModeOff      = "off"
)

// NodeLister counts the Swarm's nodes (mode auto).
type NodeLister interface {
	NodeList(ctx context.Context, options swarm.NodeListOptions) ([]swarm.Node, error)
}

// Provider decides where a worker's built images go, and keeps the
// embedded registry running when that is where.
type Provider struct {
	Mode string
	// External is the registry of mode external.
	External Target
	// Embedded runs the embedded registry (modes auto and embedded).
	Embedded *Embedded
	// APIURL overrides the embedded registry's API address.
	APIURL string
	// Nodes counts nodes for mode auto.
	Nodes NodeLister
	// Engine pushes.
	Engine Engine

	mu       sync.Mutex
	checked  time.Time
	target   Target
	ensureOK time.Time
}

// recheck is how long a decision (and a successful Ensure) holds.
const recheck = time.Minute

// Target returns where images go now: an empty Target means nowhere (a
// single-node Swarm in mode auto, or mode off). In the embedded modes it
// makes sure the registry and this node's relay run first.
func (p *Provider) Target(ctx context.Context) (Target, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.Mode {
	case ModeOff, "":
		return Target{}, nil
	case ModeExternal:
		return p.External, nil
	}
	if p.Mode == ModeAuto && time.Since(p.checked) > recheck {
		nodes, err := p.Nodes.NodeList(ctx, swarm.NodeListOptions{})
		if err != nil {
			return Target{}, fmt.Errorf("registry: count the Swarm's nodes: %w", err)
		}
		p.checked = time.Now()
		p.target = Target{}
		if len(nodes) > 1 {
			p.target = p.Embedded.Target(p.APIURL)
		}
	}
	if p.Mode == ModeEmbedded {
		p.target = p.Embedded.Target(p.APIURL)
	}
	if !p.target.Enabled() || time.Since(p.ensureOK) < recheck {
		return p.target, nil
	}
	if err := p.Embedded.Ensure(ctx); err != nil {
		return Target{}, err
	}
	p.ensureOK = time.Now()
	return p.target, nil
}

// Push pushes a local image to t (see Target.Push).
func (p *Provider) Push(ctx context.Context, t Target, imageID, repo string) (string, error) {
	return t.Push(ctx, p.Engine, imageID, repo)
}

// ExternalTarget reads [registry] url ("host[:port]/prefix", https unless
// it starts with http://) into a Target.
func ExternalTarget(rawURL, user, password, apiURL string) (Target, error) {
	scheme := "https"
	rest := rawURL
	if s, r, ok := strings.Cut(rawURL, "://"); ok {
		scheme, rest = s, r
	}
	u, err := url.Parse(scheme + "://" + rest)
	if err != nil || u.Host == "" || (scheme != "http" && scheme != "https") {
		return Target{}, fmt.Errorf("registry url %q: want host[:port]/prefix, optionally after http:// or https:// (registry_url_invalid)", rawURL)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix == "" {
		prefix = "slipway"
	}
	if apiURL == "" {
		apiURL = scheme + "://" + u.Host
	}
	return Target{Host: u.Host, Prefix: prefix, User: user, Password: password, APIURL: apiURL}, nil
}

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/routelive"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// GatewayConnector joins the gateway container to a network and returns
// its address there, and detaches it again (runtime/ingress/gatewayctl.Manager).
type GatewayConnector interface {
	ConnectNetwork(ctx context.Context, network string) (ip string, err error)
	DisconnectNetwork(ctx context.Context, network string) error
}

// GatewayJoiner is a GatewayConnector whose gateways join networks
// themselves (NodeGateways: the agents of the ingress nodes). JoinNetwork
// asks them to join env's network and returns their addresses there
// (comma-separated) once each has joined; a *routelive.NotJoinedError
// comes with the addresses that did.
type GatewayJoiner interface {
	JoinNetwork(ctx context.Context, env store.Environment, network string) (ips string, err error)
}

// GatewayRoutes is the RoutesHook of a Slipway with a gateway: it keeps
// each environment's deployed routes in the store (serve publishes them to
// the gateway) and connects the gateway to ingress overlays.
type GatewayRoutes struct {
	Store   *store.Store
	Gateway GatewayConnector
	// WaitLive makes Activate wait until every gateway serves the routes
	// it set (routelive.WaitRouteLive), at most LiveBound
	// (routelive.DefaultWait when zero). Off where no gateway reports
	// (ingress disabled).
	WaitLive  bool
	LiveBound time.Duration
}

var _ RoutesHook = (*GatewayRoutes)(nil)

// CodeGatewayUnavailable is a deployment failure when a routed environment
// cannot be joined to the gateway.
const CodeGatewayUnavailable = "gateway_unavailable"

// Withdraw drops the environment's routes whose hostname the new rendered
// manifest no longer has. Routes it keeps stay as they are (pointing at
// the old backends) until Activate, so a route whose destination changes
// goes over only once the new backend converged.
func (g *GatewayRoutes) Withdraw(ctx context.Context, d store.Deployment, env store.Environment, rendered []byte) error {
	m, err := manifest.Decode(rendered, "json")
	if err != nil {
		return fmt.Errorf("withdraw routes: decode rendered manifest: %w", err)
	}
	keep := map[string]bool{}
	for _, rt := range m.Spec.Routes {
		keep[store.NormalizeHostname(rt.Hostname)] = true
	}
	if err := g.reserve(ctx, d, env, keep); err != nil {
		return err
	}
	current, err := g.Store.ListEnvironmentRoutes(ctx, d.TeamID, env.ID)
	if err != nil {
		return err
	}
	kept := current[:0]
	for _, r := range current {
		if keep[r.Hostname] {
			kept = append(kept, r)
		}
	}
	if len(kept) == len(current) {
		return nil
	}
	return g.Store.SetEnvironmentRoutes(ctx, d.TeamID, env.ID, kept)
}

// Activate makes the environment's routes exactly the rendered manifest's
// and, with WaitLive, returns once every gateway serves them. A
// *routelive.NotLiveError says the bound passed first: the routes are set
// and the deployment goes on, with that as a warning.
func (g *GatewayRoutes) Activate(ctx context.Context, d store.Deployment, env store.Environment, rendered []byte) error {
	m, err := manifest.Decode(rendered, "json")
	if err != nil {
		return fmt.Errorf("activate routes: decode rendered manifest: %w", err)
	}
	routes := DeployedRoutes(d, env, m)
	if err := g.conflictFailure(ctx, env, g.Store.SetEnvironmentRoutes(ctx, d.TeamID, env.ID, routes)); err != nil {
		return err
	}
	// The routes hold the network for the gateways from now on (Join
	// asked for it until they did).
	if err := g.Store.EndGatewayNetworkRequest(ctx, d.TeamID, env.ID); err != nil {
		return err
	}
	if !g.WaitLive || len(routes) == 0 {
		return nil
	}
	// The version read after the routes were set holds them (or a later
	// table does).
	version, err := g.Store.RouteTableVersion(ctx)
	if err != nil {
		return err
	}
	hostnames := make([]string, 0, len(routes))
	for _, r := range routes {
		hostnames = append(hostnames, r.Hostname)
	}
	return routelive.WaitRouteLive(ctx, g.Store, version, hostnames, g.LiveBound)
}

// reserve checks hostname ownership again at deploy time, before anything
// rolls out: the environment keeps what it reserved on apply and adds the
// hostnames this deployment routes (a restore may route names the saved
// manifest dropped).
func (g *GatewayRoutes) reserve(ctx context.Context, d store.Deployment, env store.Environment, hosts map[string]bool) error {
	held, err := g.Store.ListHostnames(ctx, d.TeamID, env.ID)
	if err != nil {
		return err
	}
	all := make([]string, 0, len(held)+len(hosts))
	missing := false
	for _, h := range held {
		all = append(all, h.Hostname)
	}
	for h := range hosts {
		if !slices.ContainsFunc(held, func(r store.HostnameReservation) bool { return r.Hostname == h }) {
			all, missing = append(all, h), true
		}
	}
	if !missing {
		return nil
	}
	return g.conflictFailure(ctx, env, g.Store.SetEnvironmentHostnames(ctx, d.TeamID, env.ID, all))
}

// conflictFailure names who holds a hostname env cannot have: the
// environment, when it is the team's own, and how to fix it.
func (g *GatewayRoutes) conflictFailure(ctx context.Context, env store.Environment, err error) error {
	var c *store.ConflictError
	if !errors.As(err, &c) || c.Code != "hostname_conflict" {
		return err
	}
	owner, oerr := g.Store.TeamHostnameOwner(ctx, env.TeamID, c.Value)
	switch {
	case errors.Is(oerr, store.ErrNotFound):
		return fail("hostname_conflict", "%s", HostnameConflictMessage(c.Value, nil, env))
	case oerr != nil:
		return oerr
	}
	return fail("hostname_conflict", "%s", HostnameConflictMessage(c.Value, &owner, env))
}

// HostnameConflictMessage says why env cannot serve hostname: another
// environment of the same application serves it (two environments never
// share a hostname; give each its own through a variable), an application
// of the team does, or someone outside the team (owner nil, never named).
func HostnameConflictMessage(hostname string, owner *store.HostnameOwner, env store.Environment) string {
	switch {
	case owner == nil:
		return fmt.Sprintf("hostname %s belongs to another application: choose another hostname", hostname)
	case owner.ApplicationID == env.ApplicationID:
		return fmt.Sprintf("hostname %s is served by %s, another environment of this application: two environments cannot serve one hostname. "+
			"Give %s its own: write the route's hostname as \"${{ vars.domain }}\" and set domain in [spec.environments.%s.variables] and [spec.environments.%s.variables]",
			hostname, owner.EnvironmentName, env.Name, owner.EnvironmentName, env.Name)
	}
	return fmt.Sprintf("hostname %s belongs to application %s (environment %s): choose another hostname, or remove the route there first", hostname, owner.ApplicationName, owner.EnvironmentName)
}

// Connect joins the gateway to the environment's ingress overlay; its
// address there is what routed services trust as a proxy.
func (g *GatewayRoutes) Connect(ctx context.Context, env store.Environment, network string) (string, error) {
	ip, err := g.Gateway.ConnectNetwork(ctx, network)
	if err != nil {
		return "", fail(CodeGatewayUnavailable, "the gateway could not join network %s (is the gateway container running?): %v", network, err)
	}
	return ip, nil
}

// Join makes the gateways join the environment's ingress overlay before a
// deployment creates the services routed there, and returns their
// addresses on it, as Connect does. Gateways that join networks
// themselves (a GatewayJoiner) are asked to and waited for: a
// *routelive.NotJoinedError comes with the addresses of those that did,
// to be left as a warning.
func (g *GatewayRoutes) Join(ctx context.Context, env store.Environment, network string) (string, error) {
	j, ok := g.Gateway.(GatewayJoiner)
	if !ok {
		return g.Connect(ctx, env, network)
	}
	ips, err := j.JoinNetwork(ctx, env, network)
	var notJoined *routelive.NotJoinedError
	if err != nil && !errors.As(err, &notJoined) {
		return "", fail(CodeGatewayUnavailable, "the gateways could not be asked to join network %s: %v", network, err)
	}
	return ips, err
}

// Release withdraws every route of an environment that is going away and
// detaches the gateway from its ingress overlay. Teardown must call it
// before removing the environment's networks: Docker refuses to remove a
// network the gateway is still attached to.
func (g *GatewayRoutes) Release(ctx context.Context, env store.Environment) error {
	if _, err := g.Store.DeleteEnvironmentRoutes(ctx, env.TeamID, env.ID); err != nil {
		return err
	}
	if err := g.Store.EndGatewayNetworkRequest(ctx, env.TeamID, env.ID); err != nil {
		return err
	}
	return g.Gateway.DisconnectNetwork(ctx, swarm.IngressNetworkName(store.ShortID(env.ID)))
}

// DeployedRoutes returns the rows a deployment's rendered manifest serves
// in env: backends are the services' dnsrr names on the environment's
// ingress overlay, and each route gets its effective visibility.
func DeployedRoutes(d store.Deployment, env store.Environment, m *manifest.Manifest) []store.DeployedRoute {
	short := store.ShortID(env.ID)
	ceiling := VisibilityCeiling(env, m)
	out := make([]store.DeployedRoute, 0, len(m.Spec.Routes))
	for _, rt := range m.Spec.Routes {
		r := store.DeployedRoute{
			TeamID: d.TeamID, ApplicationID: env.ApplicationID, EnvironmentID: env.ID, DeploymentID: d.ID,
			Hostname:   store.NormalizeHostname(rt.Hostname),
			Visibility: stricter(rt.Visibility, ceiling),
		}
		if rt.Redirect != nil {
			r.RedirectTo, r.RedirectStatus = rt.Redirect.To, rt.Redirect.Status
			// The manifest's default is to preserve the path.
			r.PreservePath = rt.Redirect.PreservePath == nil || *rt.Redirect.PreservePath
		} else {
			r.Service = rt.Service
			r.BackendService = swarm.ServiceName(short, rt.Service)
			r.BackendPort = rt.Port
			r.BackendNetwork = swarm.IngressNetworkName(short)
		}
		out = append(out, r)
	}
	return out
}

// VisibilityCeiling is the strictest visibility env's routes may have: the
// environment's own setting, else its manifest block's
// ([spec.environments.<name>] visibility, default public; for previews
// [spec.previews] visibility, default private).
func VisibilityCeiling(env store.Environment, m *manifest.Manifest) string {
	if env.Visibility != "" {
		return env.Visibility
	}
	if env.Kind == store.KindPreview {
		if m.Spec.Previews != nil && m.Spec.Previews.Visibility != "" {
			return m.Spec.Previews.Visibility
		}
		return manifest.VisibilityPrivate
	}
	if b, ok := m.Spec.Environments[env.Name]; ok && b.Visibility != "" {
		return b.Visibility
	}
	return manifest.VisibilityPublic
}

// stricter returns private unless both a route (default private) and its
// ceiling are public.
func stricter(route, ceiling string) string {
	if route == manifest.VisibilityPublic && ceiling == manifest.VisibilityPublic {
		return manifest.VisibilityPublic
	}
	return manifest.VisibilityPrivate
}

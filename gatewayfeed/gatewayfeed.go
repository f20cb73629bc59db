// Package gatewayfeed is the control plane's side of the gateway: it
// serves the route table to gateways over a unix socket (and optionally
// TCP behind the gateway token), republishing it whenever the store's
// routes change, takes the gateways' certificate reports into the store,
// and serves them the certificate storage they share (certstore).
// It converts the store's deployed routes into ingress routes.
//
// It joins store and runtime/ingress; it must not import app, pipeline,
// jobs, views or cmd (cmd wires it).
package gatewayfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/slipwayhq/slipway/certstore"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/store"
)

// SocketName is the route feed's socket in its directory.
const SocketName = "gateway.sock"

// PollInterval is how often the store's route table version is read.
const PollInterval = time.Second

// Start listens on <dir>/gateway.sock and serves the route table there
// (ingress.RoutesPath, long-poll), republishing whenever the store's
// version moves, and takes the gateway's certificate reports
// (ingress.CertificatesPath) and the gateway agents' address reports
// (ingress.AddressesPath) into the store, and serves the gateways'
// shared certificate storage (ingress.StoragePath, certstore, sealed
// with kr), until ctx ends. With tcp.Addr set it serves the same on TCP behind the gateway token, for gateways on
// other nodes, and returns the bound TCP address (nil without one).
func Start(ctx context.Context, st *store.Store, kr *keyring.Keyring, dir string, tcp TCP, logger *slog.Logger) (net.Addr, error) {
	// Only the control plane and the gateway (root in its container) may
	// reach the socket: it hands out every team's routes.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway socket directory %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway socket directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, SocketName)
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("gateway socket %s: another control plane is serving it (gateway_socket_in_use)", path)
	}
	// A socket left by a control plane that did not stop cleanly.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("gateway socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("gateway socket %s: %w", path, err)
	}
	pub := ingress.NewPublisher()
	mux := http.NewServeMux()
	mux.Handle(ingress.RoutesPath, pub)
	mux.Handle(ingress.CertificatesPath, ingress.CertificateReceiver(func(ctx context.Context, r ingress.CertificateReport) error {
		return storeCertificateReport(ctx, st, r)
	}))
	// Gateway agents' reports of their gateway's address on each ingress
	// overlay: what the services routed there trust.
	mux.Handle(ingress.AddressesPath, ingress.AddressReceiver(func(ctx context.Context, r ingress.AddressReport) error {
		return st.ReportGatewayAddresses(ctx, r.Gateway, r.Addresses)
	}))
	// A stopping gateway agent asks whether its node is still an ingress
	// node: if not, its gateway goes, and so do its reports.
	mux.Handle(ingress.LeavePath, ingress.LeaveHandler(func(ctx context.Context, r ingress.LeaveRequest) (ingress.LeaveAnswer, error) {
		return leave(ctx, st, tcp.IngressNode, r)
	}))
	// Every gateway's ACME certificates, in Postgres: one per hostname,
	// obtained once under certmagic's lock and served by all gateways.
	mux.Handle(ingress.StoragePath, ingress.StorageHandler(certstore.New(st, kr), logger))
	var tcpAddr net.Addr
	if tcp.Addr != "" {
		tcpLn, err := listenTCP(tcp)
		if err != nil {
			ln.Close()
			return nil, err
		}
		tcpAddr = tcpLn.Addr()
		serve(ctx, tcpLn, ingress.RequireToken(tcp.Token, mux), logger)
	}
	serve(ctx, ln, mux, logger)
	go func() {
		<-ctx.Done()
		_ = os.Remove(path)
	}()
	go feedRoutes(ctx, st, pub, logger)
	logger.Info("gateway route feed listening", "socket", path, "tcp", tcpAddr)
	return tcpAddr, nil
}

// serve serves h on ln until ctx ends.
func serve(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("gateway route feed stopped", "addr", ln.Addr(), "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		// Long-polls would hold Shutdown for their whole wait.
		_ = srv.Close()
	}()
}

// feedRoutes publishes the route table once at start (even empty: gateways
// get 503 until then) and again whenever its version changes. When the
// first network request it published expires, it deletes the expired
// requests, which moves the version.
func feedRoutes(ctx context.Context, st *store.Store, pub *ingress.Publisher, logger *slog.Logger) {
	published := int64(-1)
	var expires time.Time
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		var err error
		if !expires.IsZero() && time.Now().After(expires) {
			_, err = st.ExpireGatewayNetworkRequests(ctx)
		}
		var v int64
		if err == nil {
			v, err = st.RouteTableVersion(ctx)
		}
		if err == nil && v != published {
			var table ingress.Table
			if table, expires, err = loadRouteTable(ctx, st, logger); err == nil {
				pub.Publish(table)
				published = table.Version
				logger.Debug("published route table", "version", table.Version, "routes", len(table.Routes), "networks", len(table.Networks))
			}
		}
		if err != nil && ctx.Err() == nil {
			logger.Warn("read route table", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// loadRouteTable converts the store's routes into the gateway's table,
// with the networks deployments asked the gateways to join, and returns
// when the first of those requests expires (zero without one). A route
// the gateway would refuse is left out and logged, because the gateway
// refuses a whole table for one bad route.
func loadRouteTable(ctx context.Context, st *store.Store, logger *slog.Logger) (ingress.Table, time.Time, error) {
	// The version is read first: a request made after it is either in
	// this table or moves the version again.
	version, routes, err := st.RouteTable(ctx)
	if err != nil {
		return ingress.Table{}, time.Time{}, err
	}
	networks, expires, err := st.RequestedGatewayNetworks(ctx)
	if err != nil {
		return ingress.Table{}, time.Time{}, err
	}
	table := ingress.Table{Version: version, Routes: make([]ingress.Route, 0, len(routes)), Networks: networks}
	for _, r := range routes {
		ir := ingressRoute(r)
		if err := (ingress.Table{Routes: []ingress.Route{ir}}).Validate(); err != nil {
			logger.Error("route left out of the gateway table", "hostname", r.Hostname, "environment", r.EnvironmentID, "err", err)
			continue
		}
		table.Routes = append(table.Routes, ir)
	}
	return table, expires, nil
}

func ingressRoute(r store.DeployedRoute) ingress.Route {
	ir := ingress.Route{
		Hostname: r.Hostname, Visibility: ingress.Visibility(r.Visibility),
		TeamID: r.TeamID, AppID: r.ApplicationID, EnvID: r.EnvironmentID,
	}
	if r.RedirectTo != "" {
		ir.Redirect = &ingress.Redirect{To: r.RedirectTo, Status: r.RedirectStatus, PreservePath: r.PreservePath}
	} else {
		ir.Backend = &ingress.Backend{Service: r.BackendService, Port: r.BackendPort, Network: r.BackendNetwork}
	}
	return ir
}

// storeCertificateReport keeps the gateway's certificate state of every
// routed hostname for the API, the CLI and the dashboard, and what the
// gateway serves (the table version and the routes it can serve) for the
// deployment pipeline (routelive.WaitRouteLive). Gateways that predate
// those reports send no name.
func storeCertificateReport(ctx context.Context, st *store.Store, r ingress.CertificateReport) error {
	certs := make([]store.RouteCertificate, 0, len(r.Certificates))
	for _, c := range r.Certificates {
		certs = append(certs, store.RouteCertificate{Hostname: c.Hostname, State: string(c.State), ExpiresAt: c.ExpiresAt, LastError: c.LastError})
	}
	if err := st.ReportRouteCertificates(ctx, certs); err != nil {
		return err
	}
	if r.Gateway == "" {
		return nil
	}
	return st.ReportGateway(ctx, store.GatewayReport{Gateway: r.Gateway, TableVersion: r.TableVersion, Live: r.Live})
}

// TCP is the optional TCP listener of the route feed
// ([ingress] feed_addr), for gateways on other nodes, which cannot open
// the unix socket. Every request must carry the gateway token.
type TCP struct {
	Addr  string
	Token string
	// IngressNode says whether a Swarm node is still labelled for ingress
	// (serve reads the node from a manager), for the agents that stop
	// (ingress.LeavePath). Nil keeps every gateway.
	IngressNode func(ctx context.Context, nodeID string) (bool, error)
}

// leave answers a stopping agent: its gateway is removed when its node is
// no longer an ingress node, and then the gateway's reports are deleted
// at once, so deployments neither wait for it nor trust its addresses.
func leave(ctx context.Context, st *store.Store, ingressNode func(context.Context, string) (bool, error), r ingress.LeaveRequest) (ingress.LeaveAnswer, error) {
	if ingressNode == nil {
		return ingress.LeaveAnswer{}, nil
	}
	still, err := ingressNode(ctx, r.Node)
	if err != nil || still {
		return ingress.LeaveAnswer{}, err
	}
	if err := st.ForgetGateway(ctx, r.Gateway); err != nil {
		return ingress.LeaveAnswer{}, err
	}
	return ingress.LeaveAnswer{Remove: true}, nil
}

func listenTCP(tcp TCP) (net.Listener, error) {
	if tcp.Token == "" {
		// RequireToken refuses everything without one; refuse to start
		// instead of listening for nothing.
		return nil, errors.New("ingress.feed_addr needs ingress.gateway_token_file (gateway_token_missing)")
	}
	ln, err := net.Listen("tcp", tcp.Addr)
	if err != nil {
		return nil, fmt.Errorf("ingress.feed_addr %s: %w", tcp.Addr, err)
	}
	return ln, nil
}

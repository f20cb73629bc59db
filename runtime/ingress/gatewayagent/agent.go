package gatewayagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
)

// NodeLabel marks the nodes that run a gateway: the agent's global service
// is constrained to node.labels.dev.slipway.ingress == true.
const NodeLabel = "dev.slipway.ingress"

// SocketName is the relay's socket in the agent's socket directory, where
// the gateway container reads its routes (as from serve's on one node).
const SocketName = "gateway.sock"

// stateFile keeps the last route table the agent read, so a restarted
// agent knows which networks its gateway belongs on while serve is down.
const stateFile = "agent-routes.json"

// DefaultInterval is how often the agent checks its gateway container and
// its networks when Interval is zero; a new route table is acted on at
// once.
const DefaultInterval = 15 * time.Second

// reportEvery repeats an unchanged address report, so serve can tell a
// live gateway from one that is gone.
const reportEvery = 5 * time.Minute

// Agent keeps one node's gateway.
type Agent struct {
	// Engine is the node's own Docker engine.
	Engine client.APIClient
	// Gateway describes the container (ports, image, ACME settings);
	// SocketDir and SocketName are set by the agent. An empty Image is
	// built from the running binary (gatewayctl.BuildDevImage).
	Gateway gatewayctl.Config
	// Name is the container's name (gatewayctl.ContainerName when empty).
	Name string
	// SocketDir is a host directory, mounted at the same path in the
	// agent's container: the relay's socket is made there and the gateway
	// container mounts it.
	SocketDir string
	// ControlURL is serve's route feed on TCP ([ingress] feed_addr) and
	// Token the gateway token it requires.
	ControlURL string
	Token      string
	// GatewayName is what the gateway reports itself as (routes live,
	// addresses); the node's hostname makes it unique.
	GatewayName string
	// NodeID is the Swarm node's ID: a stopping agent asks serve whether
	// the node is still an ingress node (leave). Empty keeps the gateway.
	NodeID   string
	Interval time.Duration
	Log      *slog.Logger

	mu       sync.Mutex
	networks map[string]bool // nil until a route table is known
	changed  chan struct{}
	client   *http.Client
}

// Run relays the control channel, feeds on serve's route table and keeps
// the gateway container, joined to the routed networks, until ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	if a.Log == nil {
		a.Log = slog.Default()
	}
	if a.ControlURL == "" || a.Token == "" {
		return errors.New("gateway agent: needs serve's feed URL and the gateway token (control_plane_missing)")
	}
	a.changed = make(chan struct{}, 1)
	a.client = &http.Client{Timeout: 15 * time.Second}
	stopRelay, err := a.relay(ctx)
	if err != nil {
		return err
	}
	feeder := &ingress.Feeder{
		Source:    ingress.Source{URL: a.ControlURL, Token: a.Token},
		StatePath: filepath.Join(a.SocketDir, stateFile),
		Apply:     a.apply,
		Log:       a.Log,
	}
	go func() {
		if err := feeder.Run(ctx); err != nil && ctx.Err() == nil {
			a.Log.Error("gateway agent: route feed stopped", "err", err)
		}
	}()
	m := gatewayctl.New(a.Engine, a.Log, a.Name)
	a.keep(ctx, m)
	// The gateway reports nothing more once serve may have forgotten it.
	stopRelay()
	a.leave(m)
	return nil
}

// leaveTimeout bounds what a stopping agent does before it exits (the
// stack gives it a longer stop_grace_period).
const leaveTimeout = 10 * time.Second

// leave runs when the agent stops. Swarm stops it when its node loses the
// ingress label, and also when the agent is restarted or upgraded: it asks
// serve whether the node is still an ingress node and removes the gateway
// (its container and bridge) only when serve says it is not; serve then
// forgot the gateway's reports. Without an answer the gateway keeps
// serving: going dark on an agent upgrade is the worse mistake.
func (a *Agent) leave(m *gatewayctl.Manager) {
	if a.NodeID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	defer cancel()
	var ans ingress.LeaveAnswer
	if err := a.call(ctx, http.MethodPost, ingress.LeavePath, ingress.LeaveRequest{Gateway: a.GatewayName, Node: a.NodeID}, &ans); err != nil {
		a.Log.Warn("gateway agent stopping: cannot ask serve whether this node is still an ingress node, so its gateway stays; if the node lost its label, remove it with docker rm -f "+m.Name(), "err", err)
		return
	}
	if !ans.Remove {
		a.Log.Info("gateway agent stopping: this node is still an ingress node, its gateway keeps serving")
		return
	}
	bridge := a.Gateway.Network
	if bridge == "" {
		bridge = m.Name()
	}
	err := m.Remove(ctx)
	if err == nil {
		if err = a.Engine.NetworkRemove(ctx, bridge); cerrdefs.IsNotFound(err) {
			err = nil
		}
	}
	if err != nil {
		a.Log.Error("gateway agent stopping: this node is no longer an ingress node, but its gateway could not be removed", "err", err)
		return
	}
	a.Log.Info("gateway agent stopping: this node is no longer an ingress node; its gateway was removed")
}

// apply takes a new route table: the networks its backends are on and
// those deployments asked the gateways to join before routing there.
func (a *Agent) apply(t ingress.Table) error {
	nets := map[string]bool{}
	for _, r := range t.Routes {
		if r.Backend != nil && r.Backend.Network != "" {
			nets[r.Backend.Network] = true
		}
	}
	for _, n := range t.Networks {
		nets[n] = true
	}
	a.mu.Lock()
	a.networks = nets
	a.mu.Unlock()
	select {
	case a.changed <- struct{}{}:
	default:
	}
	return nil
}

// routed returns the networks of the last table, nil before the first.
func (a *Agent) routed() map[string]bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.networks == nil {
		return nil
	}
	return maps.Clone(a.networks)
}

// keep checks the container and its networks on every interval and on
// every new table.
func (a *Agent) keep(ctx context.Context, m *gatewayctl.Manager) {
	cfg := a.Gateway
	cfg.SocketDir, cfg.SocketName = a.SocketDir, SocketName
	if cfg.Env == nil {
		cfg.Env = map[string]string{}
	}
	cfg.Env[ingress.EnvName] = a.GatewayName
	sup := &gatewayctl.Supervisor{Manager: m, Config: cfg, BuildImage: func(ctx context.Context) (string, error) { return m.BuildDevImage(ctx, "") }}
	interval := a.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastErr string
	var reported map[string]string
	var reportedAt time.Time
	for {
		_, err := sup.Ensure(ctx)
		var addrs map[string]string
		if err == nil {
			addrs, err = a.sync(ctx, m, cfg)
		}
		if err == nil && (!maps.Equal(addrs, reported) || time.Since(reportedAt) > reportEvery) {
			if err = a.report(ctx, addrs); err == nil {
				reported, reportedAt = addrs, time.Now()
			}
		}
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && lastErr != "":
			a.Log.Info("gateway agent: the gateway is running and joined again")
			lastErr = ""
		case err != nil && err.Error() != lastErr:
			a.Log.Warn("gateway agent: cannot keep the gateway; retrying", "every", interval, "err", err)
			lastErr = err.Error()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.changed:
		}
	}
}

// sync joins the gateway to every routed network it is not on and makes
// it leave those no longer routed, and returns its address on each
// network it is on (its own bridge aside).
func (a *Agent) sync(ctx context.Context, m *gatewayctl.Manager, cfg gatewayctl.Config) (map[string]string, error) {
	bridge := cfg.Network
	if bridge == "" {
		bridge = m.Name()
	}
	on, err := m.Addresses(ctx)
	if err != nil {
		return nil, err
	}
	want := a.routed()
	var errs []error
	for n := range want {
		if on[n] != "" {
			continue
		}
		ip, err := m.ConnectNetwork(ctx, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		on[n] = ip
		a.Log.Info("gateway joined ingress network", "network", n, "address", ip)
	}
	// Before the first table nothing is known to be unrouted.
	for n := range on {
		if n == bridge || want == nil || want[n] {
			continue
		}
		if err := m.DisconnectNetwork(ctx, n); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(on, n)
		a.Log.Info("gateway left ingress network", "network", n)
	}
	delete(on, bridge)
	return on, errors.Join(errs...)
}

// report sends the gateway's addresses to serve.
func (a *Agent) report(ctx context.Context, addrs map[string]string) error {
	err := a.call(ctx, http.MethodPut, ingress.AddressesPath, ingress.AddressReport{Gateway: a.GatewayName, Addresses: addrs}, nil)
	if err != nil {
		return fmt.Errorf("report the gateway's addresses: %w", err)
	}
	return nil
}

// call sends in as JSON to serve's feed with the token and decodes the
// answer into out (unless nil).
func (a *Agent) call(ctx context.Context, method, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.ControlURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.Token)
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(out)
}

// relay serves SocketDir/gateway.sock for the gateway container: every
// request is forwarded to serve's feed with the gateway token added, the
// long-polls and held storage locks streamed as they come. It stops when
// ctx ends; the function it returns stops it at once and returns once it
// has.
func (a *Agent) relay(ctx context.Context) (func(), error) {
	target, err := url.Parse(a.ControlURL)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("gateway agent: control URL %q must be http(s)://host:port (control_url_invalid)", a.ControlURL)
	}
	// Only root (the agent, the gateway in its container) may reach it:
	// it hands out every team's routes.
	if err := os.MkdirAll(a.SocketDir, 0o700); err != nil {
		return nil, fmt.Errorf("gateway agent: socket directory: %w", err)
	}
	path := filepath.Join(a.SocketDir, SocketName)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("gateway agent: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("gateway agent: %w", err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
			r.Out.Header.Set("Authorization", "Bearer "+a.Token)
		},
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(a.Log.Handler(), slog.LevelWarn),
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("gateway agent: relay stopped", "err", err)
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = srv.Close()
			_ = os.Remove(path)
		})
	}
	go func() {
		<-ctx.Done()
		stop()
	}()
	return stop, nil
}

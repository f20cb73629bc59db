package gatewayctl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/nat"

	"github.com/slipwayhq/slipway/runtime/ingress"
)

const (
	// ContainerName is the gateway container's name on a Slipway host.
	ContainerName = "slipway-gateway"
	// LabelConfigHash records what the container was created from, so
	// EnsureGateway only recreates it when something changed.
	LabelConfigHash = "dev.slipway.gateway.config-hash"
	// LabelRole marks every object gatewayctl creates.
	LabelRole = "dev.slipway.role"

	containerSocketDir = "/run/slipway"
	containerDataDir   = "/data"
	privatePort        = "8000/tcp"
	metricsPort        = "9100/tcp"
	// containerMetricsToken is where the metrics token file is mounted:
	// outside /run/slipway, which the socket directory is mounted over.
	containerMetricsToken = "/etc/slipway-gateway/metrics-token"
)

// Config describes the gateway container.
type Config struct {
	// Name defaults to ContainerName; tests use their own.
	Name string
	// Image is the image reference (production: from configuration; dev:
	// what BuildDevImage returned).
	Image string
	// HostIP is the host address the public ports bind to ("" for all).
	HostIP string
	// HTTPPort and HTTPSPort are the published host ports (80, 443 by
	// default); 0 disables HTTPS.
	HTTPPort  int
	HTTPSPort int
	// PrivateAddr is the host "ip:port" of the private listener, e.g. a
	// VPN interface address; empty disables it.
	PrivateAddr string
	// SocketDir is the host directory holding the control plane's unix
	// socket, mounted at /run/slipway; SocketName is the socket in it.
	SocketDir  string
	SocketName string
	// MetricsAddr is the host "ip:port" where the gateway's /metrics
	// (slipway_gateway_* per route) is published; empty disables it.
	// MetricsTokenFile is the host file (absolute path) holding the bearer
	// token scrapes must send; it is mounted read-only, never put in the
	// container's environment.
	MetricsAddr      string
	MetricsTokenFile string
	// ControlURL and Token are the TCP alternative to the socket.
	ControlURL string
	Token      string
	// DataVolume is the named volume for routes, certificates and the
	// internal CA (default slipway-gateway-data).
	DataVolume string
	// Network is the bridge network the gateway lives on (default
	// slipway-gateway). A user-defined bridge, unlike Docker's default
	// one, gives the container Docker's embedded DNS, which resolves the
	// dnsrr service names once overlays are connected.
	Network string
	// Env is passed to the gateway as is (SLIPWAY_ACME_*, ...).
	Env map[string]string
	// Labels are added to the container, network and volume.
	Labels map[string]string

	// subnet is Network's subnet, where the private and metrics listeners
	// bind inside the container (ingress listenAddr), never on the
	// environments' overlays.
	subnet string
}

// Environment variables ConfigFromEnv reads.
const (
	EnvHTTPPort    = "SLIPWAY_GATEWAY_HTTP_PORT"
	EnvHTTPSPort   = "SLIPWAY_GATEWAY_HTTPS_PORT"
	EnvPrivateAddr = "SLIPWAY_GATEWAY_PRIVATE_ADDR"
	EnvImage       = "SLIPWAY_GATEWAY_IMAGE"
)

// ConfigFromEnv reads the host-side settings; the control plane fills in
// SocketDir and, for dev, Image.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{HTTPPort: 80, HTTPSPort: 443, PrivateAddr: getenv(EnvPrivateAddr), Image: getenv(EnvImage), Env: map[string]string{}}
	for _, p := range []struct {
		env string
		dst *int
	}{{EnvHTTPPort, &c.HTTPPort}, {EnvHTTPSPort, &c.HTTPSPort}} {
		if s := getenv(p.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > 65535 {
				return Config{}, fmt.Errorf("%s=%q: must be a port number (gateway_port_invalid)", p.env, s)
			}
			*p.dst = n
		}
	}
	if c.PrivateAddr != "" {
		if _, _, err := net.SplitHostPort(c.PrivateAddr); err != nil {
			return Config{}, fmt.Errorf("%s=%q: must be ip:port (gateway_private_addr_invalid)", EnvPrivateAddr, c.PrivateAddr)
		}
	}
	for _, k := range []string{ingress.EnvACMEDirectory, ingress.EnvACMEEmail, ingress.EnvACMECARoot, ingress.EnvCertDir, ingress.EnvInternalCA,
		ingress.EnvMaxBodyBytes, ingress.EnvBodyIdleTimeout, ingress.EnvSendTimeout, ingress.EnvTrustedProxies} {
		if v := getenv(k); v != "" {
			c.Env[k] = v
		}
	}
	return c, nil
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = ContainerName
	}
	if c.DataVolume == "" {
		c.DataVolume = c.Name + "-data"
	}
	if c.Network == "" {
		c.Network = c.Name
	}
	if c.SocketName == "" {
		c.SocketName = "gateway.sock"
	}
	return c
}

// Manager manages one gateway container.
type Manager struct {
	cli  client.APIClient
	log  *slog.Logger
	name string
}

// New returns a Manager for the container called name ("" for
// ContainerName).
func New(cli client.APIClient, log *slog.Logger, name string) *Manager {
	if name == "" {
		name = ContainerName
	}
	if log == nil {
		log = slog.Default()
	}
	return &Manager{cli: cli, log: log, name: name}
}

// Name is the container's name.
func (m *Manager) Name() string { return m.name }

// EnsureGateway makes the gateway container exist, match cfg and run. It
// is idempotent: an up-to-date running container is left alone, and a
// container created from another image or configuration is replaced and
// reconnected to the overlays the old one was on.
func (m *Manager) EnsureGateway(ctx context.Context, cfg Config) (string, error) {
	cfg.Name = m.name
	cfg = cfg.withDefaults()
	if cfg.Image == "" {
		return "", errors.New("gateway image is empty: set SLIPWAY_GATEWAY_IMAGE or build the dev image (gateway_image_missing)")
	}
	img, err := m.cli.ImageInspect(ctx, cfg.Image)
	if err != nil {
		return "", fmt.Errorf("inspect gateway image %s: %w", cfg.Image, err)
	}
	subnet, err := m.ensureNetwork(ctx, cfg)
	if err != nil {
		return "", err
	}
	cfg.subnet = subnet
	if err := m.ensureVolume(ctx, cfg); err != nil {
		return "", err
	}
	ccfg, hcfg, err := containerSpec(cfg)
	if err != nil {
		return "", err
	}
	hash, err := specHash(img.ID, ccfg, hcfg)
	if err != nil {
		return "", err
	}
	ccfg.Labels[LabelConfigHash] = hash

	var overlays []string
	existing, err := m.cli.ContainerInspect(ctx, m.name)
	switch {
	case err == nil:
		if existing.Config != nil && existing.Config.Labels[LabelConfigHash] == hash {
			if existing.State == nil || !existing.State.Running {
				if err := m.cli.ContainerStart(ctx, existing.ID, container.StartOptions{}); err != nil {
					return "", fmt.Errorf("start gateway container: %w", err)
				}
			}
			return existing.ID, nil
		}
		for name := range existing.NetworkSettings.Networks {
			if name != cfg.Network {
				overlays = append(overlays, name)
			}
		}
		sort.Strings(overlays)
		m.log.Info("replacing gateway container", "container", m.name, "reason", "image or configuration changed")
		if err := m.cli.ContainerRemove(ctx, existing.ID, container.RemoveOptions{Force: true}); err != nil {
			return "", fmt.Errorf("remove outdated gateway container: %w", err)
		}
	case cerrdefs.IsNotFound(err):
	default:
		return "", fmt.Errorf("inspect gateway container: %w", err)
	}

	created, err := m.cli.ContainerCreate(ctx, ccfg, hcfg, &network.NetworkingConfig{
		EndpointsConfig: map[string]*network.EndpointSettings{cfg.Network: {}},
	}, nil, m.name)
	if err != nil {
		return "", fmt.Errorf("create gateway container: %w", err)
	}
	for _, n := range overlays {
		if err := m.cli.NetworkConnect(ctx, n, created.ID, &network.EndpointSettings{}); err != nil {
			m.log.Warn("reconnect gateway to network", "network", n, "err", err)
		}
	}
	if err := m.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return "", fmt.Errorf("start gateway container: %w", err)
	}
	return created.ID, nil
}

func containerSpec(cfg Config) (*container.Config, *container.HostConfig, error) {
	env := map[string]string{
		ingress.EnvListenHTTP: ":80",
		ingress.EnvDataDir:    containerDataDir,
		// The gateway reports the routes it serves under this name.
		ingress.EnvName: cfg.Name,
	}
	for k, v := range cfg.Env {
		env[k] = v
	}
	exposed := nat.PortSet{"80/tcp": {}}
	bindings := nat.PortMap{"80/tcp": {{HostIP: cfg.HostIP, HostPort: strconv.Itoa(cfg.HTTPPort)}}}
	if cfg.HTTPSPort > 0 {
		env[ingress.EnvListenHTTPS] = ":443"
		exposed["443/tcp"] = struct{}{}
		bindings["443/tcp"] = []nat.PortBinding{{HostIP: cfg.HostIP, HostPort: strconv.Itoa(cfg.HTTPSPort)}}
	} else {
		env[ingress.EnvListenHTTPS] = ""
	}
	if cfg.PrivateAddr != "" {
		host, port, err := net.SplitHostPort(cfg.PrivateAddr)
		if err != nil {
			return nil, nil, fmt.Errorf("private_addr %q: %w (gateway_private_addr_invalid)", cfg.PrivateAddr, err)
		}
		env[ingress.EnvListenPrivate] = cfg.innerAddr("8000")
		exposed[privatePort] = struct{}{}
		bindings[privatePort] = []nat.PortBinding{{HostIP: host, HostPort: port}}
	}
	var mounts []mount.Mount
	mounts = append(mounts, mount.Mount{Type: mount.TypeVolume, Source: cfg.DataVolume, Target: containerDataDir})
	hostMounts, err := hostPathMounts(env)
	if err != nil {
		return nil, nil, err
	}
	mounts = append(mounts, hostMounts...)
	if cfg.MetricsAddr != "" {
		host, port, err := net.SplitHostPort(cfg.MetricsAddr)
		if err != nil {
			return nil, nil, fmt.Errorf("metrics_addr %q: %w (gateway_metrics_addr_invalid)", cfg.MetricsAddr, err)
		}
		if !path.IsAbs(cfg.MetricsTokenFile) {
			return nil, nil, fmt.Errorf("metrics_addr %s needs metrics_token_file, an absolute path of the file holding the bearer token (gateway_metrics_token_missing)", cfg.MetricsAddr)
		}
		env[ingress.EnvMetricsAddr] = cfg.innerAddr("9100")
		env[ingress.EnvMetricsTokenFile] = containerMetricsToken
		exposed[metricsPort] = struct{}{}
		bindings[metricsPort] = []nat.PortBinding{{HostIP: host, HostPort: port}}
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: cfg.MetricsTokenFile, Target: containerMetricsToken, ReadOnly: true})
	}
	if cfg.SocketDir != "" {
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: cfg.SocketDir, Target: containerSocketDir})
		env[ingress.EnvControlSocket] = path.Join(containerSocketDir, cfg.SocketName)
	}
	if cfg.ControlURL != "" {
		env[ingress.EnvControlURL] = cfg.ControlURL
		env[ingress.EnvToken] = cfg.Token
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	envList := make([]string, 0, len(keys))
	for _, k := range keys {
		envList = append(envList, k+"="+env[k])
	}
	labels := map[string]string{LabelRole: "gateway"}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	return &container.Config{
			Image: cfg.Image,
			// Set here, not left to the image: the Slipway release image
			// (entrypoint /slipway) serves as the gateway's image too.
			Entrypoint:   []string{"/slipway", "gateway"},
			Env:          envList,
			ExposedPorts: exposed,
			Labels:       labels,
		}, &container.HostConfig{
			PortBindings:  bindings,
			Mounts:        mounts,
			RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyUnlessStopped},
			LogConfig:     container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "10m", "max-file": "3"}},
		}, nil
}

// specHash covers the image ID (a rebuilt dev image under the same tag
// must replace the container) and everything the container is created
// from.
func specHash(imageID string, c *container.Config, h *container.HostConfig) (string, error) {
	b, err := json.Marshal(struct {
		Image string
		C     *container.Config
		H     *container.HostConfig
	}{imageID, c, h})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// innerAddr is where a listener Docker publishes binds in the container:
// the container's address on its bridge (subnet form, see ingress
// listenAddr), so tenants on the overlays it joins cannot reach it.
func (c Config) innerAddr(port string) string {
	return c.subnet + ":" + port
}

// ensureNetwork makes the gateway's bridge exist and returns its subnet.
func (m *Manager) ensureNetwork(ctx context.Context, cfg Config) (string, error) {
	n, err := m.cli.NetworkInspect(ctx, cfg.Network, network.InspectOptions{})
	if err == nil {
		return bridgeSubnet(n)
	}
	if !cerrdefs.IsNotFound(err) {
		return "", fmt.Errorf("inspect gateway network %s: %w", cfg.Network, err)
	}
	labels := map[string]string{LabelRole: "gateway"}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	if _, err := m.cli.NetworkCreate(ctx, cfg.Network, network.CreateOptions{Driver: "bridge", Labels: labels}); err != nil {
		return "", fmt.Errorf("create gateway network %s: %w", cfg.Network, err)
	}
	if n, err = m.cli.NetworkInspect(ctx, cfg.Network, network.InspectOptions{}); err != nil {
		return "", fmt.Errorf("inspect gateway network %s: %w", cfg.Network, err)
	}
	return bridgeSubnet(n)
}

func bridgeSubnet(n network.Inspect) (string, error) {
	for _, c := range n.IPAM.Config {
		if p, err := netip.ParsePrefix(c.Subnet); err == nil && p.Addr().Is4() {
			return p.Masked().String(), nil
		}
	}
	return "", fmt.Errorf("gateway network %s has no IPv4 subnet (gateway_network_invalid)", n.Name)
}

func (m *Manager) ensureVolume(ctx context.Context, cfg Config) error {
	labels := map[string]string{LabelRole: "gateway"}
	for k, v := range cfg.Labels {
		labels[k] = v
	}
	// VolumeCreate of an existing local volume returns it unchanged.
	if _, err := m.cli.VolumeCreate(ctx, volume.CreateOptions{Name: cfg.DataVolume, Labels: labels}); err != nil {
		return fmt.Errorf("create gateway volume %s: %w", cfg.DataVolume, err)
	}
	return nil
}

// ConnectNetwork attaches the running gateway to an (attachable) ingress
// overlay without restarting it, and returns the gateway's address on it,
// which the network's routed services receive as SLIPWAY_INGRESS_PROXIES.
// Connecting twice is not an error.
func (m *Manager) ConnectNetwork(ctx context.Context, networkName string) (string, error) {
	if ip, err := m.addressOn(ctx, networkName); err == nil && ip != "" {
		return ip, nil
	}
	if err := m.cli.NetworkConnect(ctx, networkName, m.name, &network.EndpointSettings{}); err != nil {
		return "", fmt.Errorf("connect gateway to network %s: %w", networkName, err)
	}
	// The address is assigned by the time NetworkConnect returns, but an
	// overlay attachment can take a moment to show in inspect.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ip, err := m.addressOn(ctx, networkName)
		if err == nil && ip != "" {
			return ip, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("gateway address on network %s: %v", networkName, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// DisconnectNetwork detaches the gateway from a network; detaching from a
// network it is not on is not an error.
func (m *Manager) DisconnectNetwork(ctx context.Context, networkName string) error {
	if ip, err := m.addressOn(ctx, networkName); err == nil && ip == "" {
		return nil
	}
	if err := m.cli.NetworkDisconnect(ctx, networkName, m.name, true); err != nil {
		// The engine's own answer that the gateway is not on the network
		// (its inspect can still list an endpoint there): already done.
		if strings.Contains(err.Error(), "is not connected to") {
			return nil
		}
		return fmt.Errorf("disconnect gateway from network %s: %w", networkName, err)
	}
	return nil
}

// Addresses returns the gateway's IPv4 address on every network it is on.
func (m *Manager) Addresses(ctx context.Context) (map[string]string, error) {
	c, err := m.cli.ContainerInspect(ctx, m.name)
	if err != nil {
		return nil, fmt.Errorf("inspect gateway container: %w", err)
	}
	out := map[string]string{}
	if c.NetworkSettings != nil {
		for name, ep := range c.NetworkSettings.Networks {
			if ep != nil && ep.IPAddress != "" {
				out[name] = ep.IPAddress
			}
		}
	}
	return out, nil
}

func (m *Manager) addressOn(ctx context.Context, networkName string) (string, error) {
	addrs, err := m.Addresses(ctx)
	if err != nil {
		return "", err
	}
	if ip, ok := addrs[networkName]; ok {
		return ip, nil
	}
	// The inspect output names networks by name; callers may pass an ID.
	n, err := m.cli.NetworkInspect(ctx, networkName, network.InspectOptions{})
	if err != nil {
		return "", err
	}
	return addrs[n.Name], nil
}

// Remove stops and removes the gateway container (the volume stays).
func (m *Manager) Remove(ctx context.Context) error {
	err := m.cli.ContainerRemove(ctx, m.name, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove gateway container: %w", err)
	}
	return nil
}

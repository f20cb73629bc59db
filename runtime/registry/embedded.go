package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	dockerregistry "github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"
)

// Names of the embedded registry's Swarm objects.
const (
	NetworkName = "slipway-registry"
	ServiceName = "slipway-registry"
	RelayName   = "slipway-registry-relay"
	VolumeName  = "slipway-registry-data"
	// DefaultPort is the port the relay publishes on every node.
	DefaultPort = 5000
	// NodeLabel marks the node the operator wants the registry (and its
	// volume) on; without one, the node of the engine that first made it.
	NodeLabel = "dev.slipway.registry"

	labelRole     = "dev.slipway.role"
	labelNode     = "dev.slipway.registry.node"
	labelSpecHash = "dev.slipway.registry.spec-hash"
	containerPort = 5000
	passwordFile  = "registry-password"
	dataDir       = "/data"
)

// Environment variables `slipway registry serve` reads in its container.
const (
	EnvDir          = "SLIPWAY_REGISTRY_DIR"
	EnvPasswordFile = "SLIPWAY_REGISTRY_PASSWORD_FILE"
	EnvListen       = "SLIPWAY_REGISTRY_LISTEN"
)

// Embedded makes and keeps the embedded registry's Swarm objects through
// a manager's engine.
type Embedded struct {
	Engine client.APIClient
	// Image is the slipway image (entrypoint /slipway) every node can run.
	Image string
	// BuildImage makes one when Image is empty (the worker's own binary
	// FROM scratch: present on its node only).
	BuildImage func(ctx context.Context) (string, error)
	// Port is the relay's port on every node (DefaultPort when zero).
	Port int
	// Password is the registry account's password.
	Password string
	Log      *slog.Logger
}

func (e *Embedded) port() int {
	if e.Port == 0 {
		return DefaultPort
	}
	return e.Port
}

// Target is where builds push to: the relay on the local node.
func (e *Embedded) Target(apiURL string) Target {
	host := "127.0.0.1:" + strconv.Itoa(e.port())
	if apiURL == "" {
		apiURL = "http://" + host
	}
	return Target{Host: host, Prefix: "slipway", User: User, Password: e.Password, APIURL: apiURL}
}

// Ensure makes the overlay, the password secret, the registry service
// (pinned to the node holding its volume) and the relay exist and match,
// and waits until the registry and this node's relay run.
func (e *Embedded) Ensure(ctx context.Context) error {
	if e.Image == "" && e.BuildImage != nil {
		img, err := e.BuildImage(ctx)
		if err != nil {
			return fmt.Errorf("registry: build the slipway image: %w", err)
		}
		e.Image = img
	}
	if e.Image == "" {
		return errors.New("registry: no slipway image for the embedded registry: set [registry] image (registry_image_missing)")
	}
	if e.Password == "" {
		return errors.New("registry: no password (registry_password_missing)")
	}
	if e.Log == nil {
		e.Log = slog.New(slog.DiscardHandler)
	}
	node, err := e.ensureNetwork(ctx)
	if err != nil {
		return err
	}
	secret, err := e.ensureSecret(ctx)
	if err != nil {
		return err
	}
	if err := e.ensureService(ctx, e.registrySpec(node, secret)); err != nil {
		return err
	}
	if err := e.ensureService(ctx, e.relaySpec()); err != nil {
		return err
	}
	return e.waitRunning(ctx)
}

// ensureNetwork makes the overlay, recording on it the node the registry
// is pinned to, and returns that node's ID. A network of that name made
// by a stack file (deploy/slipway-stack.yml) is used as it is; the node
// is then recorded on the registry service.
func (e *Embedded) ensureNetwork(ctx context.Context) (string, error) {
	list, err := e.Engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("name", NetworkName))})
	if err != nil {
		return "", fmt.Errorf("list networks: %w", err)
	}
	for _, n := range list {
		if n.Name != NetworkName {
			continue
		}
		if id := n.Labels[labelNode]; id != "" {
			return id, nil
		}
		return e.pinnedNode(ctx)
	}
	node, err := e.pinnedNode(ctx)
	if err != nil {
		return "", err
	}
	_, err = e.Engine.NetworkCreate(ctx, NetworkName, network.CreateOptions{
		Driver: "overlay", Scope: "swarm", Attachable: true,
		Labels: map[string]string{labelRole: "registry", labelNode: node},
	})
	if err != nil {
		return "", fmt.Errorf("create network %s: %w", NetworkName, err)
	}
	return node, nil
}

// pinnedNode is the node the registry runs on: the one its service is
// already pinned to, else the node labelled NodeLabel=true, else this
// engine's own node. Once chosen it never changes by itself: the volume
// holding the images lives there (docs/cluster.md says how to move it).
func (e *Embedded) pinnedNode(ctx context.Context) (string, error) {
	svc, _, err := e.Engine.ServiceInspectWithRaw(ctx, ServiceName, swarm.ServiceInspectOptions{})
	if err == nil && svc.Spec.Labels[labelNode] != "" {
		return svc.Spec.Labels[labelNode], nil
	}
	nodes, err := e.Engine.NodeList(ctx, swarm.NodeListOptions{Filters: filters.NewArgs(filters.Arg("node.label", NodeLabel+"=true"))})
	if err != nil {
		return "", fmt.Errorf("list nodes: %w", err)
	}
	if len(nodes) > 0 {
		return nodes[0].ID, nil
	}
	info, err := e.Engine.Info(ctx)
	if err != nil {
		return "", fmt.Errorf("engine info: %w", err)
	}
	if info.Swarm.NodeID == "" {
		return "", errors.New("registry: this engine is not part of a Swarm (swarm_inactive)")
	}
	return info.Swarm.NodeID, nil
}

// ensureSecret makes the secret holding the password, named by a hash of
// it (secrets are immutable: a new password is a new secret).
func (e *Embedded) ensureSecret(ctx context.Context) (*swarm.SecretReference, error) {
	sum := sha256.Sum256([]byte("slipway-registry\x00" + e.Password))
	name := "slipway-registry-password-" + hex.EncodeToString(sum[:6])
	list, err := e.Engine.SecretList(ctx, swarm.SecretListOptions{Filters: filters.NewArgs(filters.Arg("name", name))})
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	id := ""
	for _, s := range list {
		if s.Spec.Name == name {
			id = s.ID
		}
	}
	if id == "" {
		resp, err := e.Engine.SecretCreate(ctx, swarm.SecretSpec{
			Annotations: swarm.Annotations{Name: name, Labels: map[string]string{labelRole: "registry"}},
			Data:        []byte(e.Password),
		})
		if err != nil {
			return nil, fmt.Errorf("create secret %s: %w", name, err)
		}
		id = resp.ID
	}
	return &swarm.SecretReference{SecretID: id, SecretName: name,
		File: &swarm.SecretReferenceFileTarget{Name: passwordFile, UID: "0", GID: "0", Mode: 0o400}}, nil
}

func (e *Embedded) registrySpec(node string, secret *swarm.SecretReference) swarm.ServiceSpec {
	one := uint64(1)
	return swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: ServiceName, Labels: map[string]string{labelRole: "registry", labelNode: node}},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{
				Image:   e.Image,
				Command: []string{"/slipway", "registry", "serve"},
				Env: []string{
					EnvDir + "=" + dataDir,
					EnvPasswordFile + "=/run/secrets/" + passwordFile,
					EnvListen + "=:" + strconv.Itoa(containerPort),
				},
				Secrets: []*swarm.SecretReference{secret},
				Mounts:  []mount.Mount{{Type: mount.TypeVolume, Source: VolumeName, Target: dataDir}},
			},
			// The volume holding the images is on that node only.
			Placement:     &swarm.Placement{Constraints: []string{"node.id==" + node}},
			Networks:      []swarm.NetworkAttachmentConfig{{Target: NetworkName, Aliases: []string{ServiceName}}},
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionAny},
		},
		Mode:         swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &one}},
		UpdateConfig: &swarm.UpdateConfig{Parallelism: 1, Order: swarm.UpdateOrderStopFirst},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR},
	}
}

func (e *Embedded) relaySpec() swarm.ServiceSpec {
	return swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: RelayName, Labels: map[string]string{labelRole: "registry-relay"}},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{
				Image:   e.Image,
				Command: []string{"/slipway", "registry", "relay", "--listen", ":" + strconv.Itoa(containerPort), "--upstream", ServiceName + ":" + strconv.Itoa(containerPort)},
			},
			Networks:      []swarm.NetworkAttachmentConfig{{Target: NetworkName}},
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionAny},
		},
		Mode: swarm.ServiceMode{Global: &swarm.GlobalService{}},
		// The published port holds the node's port: the old task must go
		// before the new one binds it.
		UpdateConfig: &swarm.UpdateConfig{Parallelism: 1, Order: swarm.UpdateOrderStopFirst},
		EndpointSpec: &swarm.EndpointSpec{Mode: swarm.ResolutionModeDNSRR, Ports: []swarm.PortConfig{{
			Protocol: swarm.PortConfigProtocolTCP, TargetPort: containerPort, PublishedPort: uint32(e.port()), PublishMode: swarm.PortConfigPublishModeHost,
		}}},
	}
}

// ensureService creates the service or updates it when its spec hash
// changed.
func (e *Embedded) ensureService(ctx context.Context, spec swarm.ServiceSpec) error {
	b, _ := json.Marshal(spec)
	sum := sha256.Sum256(b)
	spec.Labels[labelSpecHash] = hex.EncodeToString(sum[:8])
	have, _, err := e.Engine.ServiceInspectWithRaw(ctx, spec.Name, swarm.ServiceInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		if _, err := e.Engine.ServiceCreate(ctx, spec, swarm.ServiceCreateOptions{}); err != nil {
			return fmt.Errorf("create service %s: %w", spec.Name, err)
		}
		e.Log.Info("registry service created", "service", spec.Name)
		return nil
	case err != nil:
		return fmt.Errorf("inspect service %s: %w", spec.Name, err)
	case have.Spec.Labels[labelSpecHash] == spec.Labels[labelSpecHash]:
		return nil
	}
	if _, err := e.Engine.ServiceUpdate(ctx, have.ID, have.Version, spec, swarm.ServiceUpdateOptions{}); err != nil {
		return fmt.Errorf("update service %s: %w", spec.Name, err)
	}
	e.Log.Info("registry service updated", "service", spec.Name)
	return nil
}

// waitRunning waits until the registry's task and this node's relay task
// run and this node's engine reaches the registry through the relay.
func (e *Embedded) waitRunning(ctx context.Context) error {
	info, err := e.Engine.Info(ctx)
	if err != nil {
		return fmt.Errorf("engine info: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last string
	for {
		regOK, regMsg := e.running(ctx, ServiceName, "")
		relayOK, relayMsg := e.running(ctx, RelayName, info.Swarm.NodeID)
		if regOK && relayOK {
			// A running task is not yet a listening registry, nor a relay
			// that reaches it over the overlay: wait until this node's
			// engine logs in through the relay, as the push will.
			err := e.answers(ctx)
			if err == nil {
				return nil
			}
			regMsg = "not answering through this node's relay: " + err.Error()
		}
		last = regMsg + relayMsg
		select {
		case <-ctx.Done():
			return fmt.Errorf("registry: the embedded registry did not start: %s (registry_unavailable)", last)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// answers logs this node's engine in to the registry through its relay.
func (e *Embedded) answers(ctx context.Context) error {
	t := e.Target("")
	_, err := e.Engine.RegistryLogin(ctx, dockerregistry.AuthConfig{ServerAddress: t.Host, Username: t.User, Password: t.Password})
	return err
}

// running reports whether the service has a running task (on node, when
// set), or what its last task said.
func (e *Embedded) running(ctx context.Context, service, node string) (bool, string) {
	f := filters.NewArgs(filters.Arg("service", service), filters.Arg("desired-state", "running"))
	if node != "" {
		f.Add("node", node)
	}
	tasks, err := e.Engine.TaskList(ctx, swarm.TaskListOptions{Filters: f})
	if err != nil {
		return false, err.Error()
	}
	msg := service + ": no task yet; "
	for _, t := range tasks {
		if t.Status.State == swarm.TaskStateRunning {
			return true, ""
		}
		msg = fmt.Sprintf("%s: task %s %s; ", service, t.Status.State, t.Status.Err)
	}
	return false, msg
}

// Remove deletes the embedded registry's services, network and secrets
// (the volume, holding the images, stays).
func (e *Embedded) Remove(ctx context.Context) error {
	var errs []error
	for _, name := range []string{RelayName, ServiceName} {
		if err := e.Engine.ServiceRemove(ctx, name); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	secrets, err := e.Engine.SecretList(ctx, swarm.SecretListOptions{Filters: filters.NewArgs(filters.Arg("label", labelRole+"=registry"))})
	errs = append(errs, err)
	for _, s := range secrets {
		errs = append(errs, retryInUse(ctx, func() error { return e.Engine.SecretRemove(ctx, s.ID) }))
	}
	errs = append(errs, retryInUse(ctx, func() error {
		err := e.Engine.NetworkRemove(ctx, NetworkName)
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		return err
	}))
	return errors.Join(errs...)
}

// retryInUse retries f for a while: objects stay in use until the
// services' tasks are gone.
func retryInUse(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

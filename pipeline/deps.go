package pipeline

import (
	"context"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// SwarmDriver is the part of runtime/swarm the pipeline drives.
type SwarmDriver interface {
	Observe(ctx context.Context, env swarm.EnvRef) (swarm.Observed, error)
	EnsureNetworks(ctx context.Context, desired swarm.DesiredState) error
	EnsureVolumes(ctx context.Context, desired swarm.DesiredState) error
	EnsureConfigs(ctx context.Context, desired swarm.DesiredState) error
	EnsureSecrets(ctx context.Context, desired swarm.DesiredState) error
	UpdateService(ctx context.Context, want swarm.ServiceSpec) (changed bool, err error)
	WaitConverged(ctx context.Context, want swarm.ServiceSpec, timeout time.Duration) error
	RunJob(ctx context.Context, job swarm.JobSpec) (swarm.JobResult, error)
	StopService(ctx context.Context, env swarm.EnvRef, service string) error
	RemoveService(ctx context.Context, env swarm.EnvRef, swarmName string) error
	RemoveObject(ctx context.Context, a swarm.Action) error
	// LocalNode is the node volumes are created on; CheckVolumeNodes fails
	// with volume_node_unavailable when a pinned volume's node cannot run
	// tasks (volumes.go).
	LocalNode(ctx context.Context) (swarm.Node, error)
	CheckVolumeNodes(ctx context.Context, desired swarm.DesiredState) error
}

// ImageResolver pins image references (runtime/image), pulling with the
// team's own registry credentials.
type ImageResolver interface {
	Resolve(ctx context.Context, ref string, a image.Access) (image.Resolved, error)
}

// RegistryLogins opens a team's own registry accounts (secrets.Service):
// ok is false when the team has none for the registry of ref.
type RegistryLogins interface {
	RegistryLogin(ctx context.Context, teamID, ref string) (login secrets.RegistryLogin, ok bool, err error)
}

// RoutesHook activates a converged deployment's routes on the gateway and
// withdraws the ones it no longer has. Nil means no ingress.
type RoutesHook interface {
	// Withdraw removes routes the deployment drops, before their backends go.
	Withdraw(ctx context.Context, d store.Deployment, env store.Environment, rendered []byte) error
	// Activate publishes the deployment's routes once its backends converged.
	Activate(ctx context.Context, d store.Deployment, env store.Environment, rendered []byte) error
	// Connect joins the gateway to the environment's ingress overlay (which
	// exists by then) and returns the gateway's addresses on it, the value
	// of SLIPWAY_INGRESS_PROXIES for routed services.
	Connect(ctx context.Context, env store.Environment, network string) (proxies string, err error)
	// Join is Connect for a deployment, before it creates the services:
	// gateways that join networks themselves are asked to and waited for
	// (bounded). A *routelive.NotJoinedError comes with the addresses of
	// those that joined: a warning, not a failure.
	Join(ctx context.Context, env store.Environment, network string) (proxies string, err error)
}

// SourceBuilder checks out and builds git sources (runtime/build).
type SourceBuilder interface {
	PrepareSource(ctx context.Context, req build.SourceRequest) (*build.BuildResult, error)
}

// SecretSource supplies the secret files a deployment mounts. Values are
// decrypted only here, in the worker, and only for the pinned versions.
type SecretSource interface {
	// Capture pins a version of every secret the rendered manifest mounts
	// in env (generating declared secrets that have no value there yet) and
	// returns name -> version. Refusals (secret_missing,
	// secret_access_denied) are *Failure.
	Capture(ctx context.Context, teamID string, env store.Environment, m *manifest.Manifest) (map[string]string, error)
	// Values returns the values of pinned versions.
	Values(ctx context.Context, teamID string, env store.Environment, pinned map[string]string) (map[string]swarm.SecretValue, error)
}

// RepositoryCredentials supplies the credentials that read an
// application's repository (checkouts, builds and branch listings). The
// zero Auth means anonymous. Credentials are never logged or stored.
type RepositoryCredentials interface {
	RepositoryAuth(ctx context.Context, teamID, appID, repositoryURL string) (build.Auth, error)
}

// Queue inserts the work that follows a deployment's changes in the
// transaction of tx that makes them, so both happen or neither does. jobs
// implements it with River (jobs.Queue); the pipeline knows no job queue.
type Queue interface {
	// Deploy queues deployment id to be advanced (a rollback).
	Deploy(ctx context.Context, tx *store.Store, teamID, deploymentID string) error
	// StateChanged follows a state change of d written in tx (its GitHub
	// commit status and pull request comment).
	StateChanged(ctx context.Context, tx *store.Store, d store.Deployment) error
	// LinksChanged queues the reconciliation of the team's links.
	LinksChanged(ctx context.Context, tx *store.Store, teamID string) error
}

// noQueue queues nothing: a Pipeline without a Queue (tests that drive
// single steps).
type noQueue struct{}

func (noQueue) Deploy(context.Context, *store.Store, string, string) error         { return nil }
func (noQueue) StateChanged(context.Context, *store.Store, store.Deployment) error { return nil }
func (noQueue) LinksChanged(context.Context, *store.Store, string) error           { return nil }

package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// CodeTelemetryNotGranted warns that a receives_telemetry service runs
// without the socket because its environment is not granted telemetry.
const CodeTelemetryNotGranted = "telemetry_not_granted"

// TelemetryHost is where the daemon keeps its telemetry receivers' socket
// directories, one per environment under Root, and the "uid:gid" the
// receivers run as (the daemon's own when empty) so both can use the
// socket. An empty Root mounts nothing.
type TelemetryHost struct {
	Root string
	User string
}

// telemetryMount gives the environment's receives_telemetry service the
// socket directory when the environment is granted telemetry; without the
// grant a deployment (not a reconcile) records telemetry_not_granted.
func (r *run) telemetryMount(ctx context.Context, in *swarm.DesiredInput) error {
	receiver := ""
	for _, s := range r.rendered.Spec.Services {
		if s.ReceivesTelemetry {
			receiver = s.Name
		}
	}
	if receiver == "" {
		return nil
	}
	granted, err := r.p.Store.EnvironmentTelemetryGranted(ctx, r.d.TeamID, r.env.ID)
	if err != nil {
		return err
	}
	if !granted || r.env.Kind == store.KindPreview {
		if r.d.State != store.StateSucceeded {
			r.event(ctx, "deployment.warning", map[string]any{"code": CodeTelemetryNotGranted, "service": receiver,
				"message": fmt.Sprintf("service %s receives telemetry but %s is not granted it: it runs without the socket (slipway env telemetry APP %s on)", receiver, r.env.Name, r.env.Name)})
		}
		return nil
	}
	h := r.p.Telemetry
	if h.Root == "" {
		return nil
	}
	dir := filepath.Join(h.Root, store.ShortID(r.env.ID))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("telemetry socket directory: %w", err)
	}
	in.TelemetryDir = dir
	in.TelemetryUser = h.User
	if in.TelemetryUser == "" {
		in.TelemetryUser = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
	}
	return nil
}

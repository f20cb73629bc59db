package service

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// TelemetryGrant is an environment's telemetry grant after a change.
type TelemetryGrant struct {
	Environment store.Environment
	Granted     bool
	// Receiver is the service of the environment's saved manifest that
	// sets receives_telemetry; "" when none does.
	Receiver string
}

// SetEnvironmentTelemetry grants (on) or revokes an environment's
// telemetry: its receives_telemetry service gets, or loses, the daemon's
// socket directory at /run/slipway/telemetry. A reconcile is queued in the
// same transaction, so the mount follows within seconds without a
// deployment (Swarm restarts the service to change it). Previews are never
// granted. The caller checks the telemetry:grant permission.
func SetEnvironmentTelemetry(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName string, on bool) (TelemetryGrant, error) {
	var out TelemetryGrant
	err := st.WithTx(ctx, func(tx *store.Store) error {
		env, err := EnvironmentByName(ctx, tx, a.TeamID, appID, envName) // previews are never granted
		if err != nil {
			return err
		}
		if err := tx.SetEnvironmentTelemetry(ctx, a.TeamID, env.ID, on); err != nil {
			return err
		}
		out = TelemetryGrant{Environment: env, Granted: on}
		if m, _, err := savedmanifest.Current(ctx, tx, a.TeamID, appID); err == nil && m != nil {
			out.Receiver = TelemetryReceiver(m)
		}
		if err := record(ctx, tx, a, "environment.telemetry", "environment", env.ID, map[string]any{"granted": on}); err != nil {
			return err
		}
		if err := enqueue(ctx, tx, jobs.ReconcileArgs{}); err != nil {
			return fmt.Errorf("queue reconcile: %w", err)
		}
		return nil
	})
	return out, err
}

// TelemetryReceiver names the manifest's receives_telemetry service, or "".
func TelemetryReceiver(m *manifest.Manifest) string {
	for _, s := range m.Spec.Services {
		if s.ReceivesTelemetry {
			return s.Name
		}
	}
	return ""
}

// TelemetryWarnings returns telemetry_not_granted when m has a telemetry
// receiver that would run in env without the grant (previews never have
// it), for plans to show.
func TelemetryWarnings(ctx context.Context, st *store.Store, teamID string, env store.Environment, m *manifest.Manifest) (manifest.Errors, error) {
	receiver := TelemetryReceiver(m)
	if receiver == "" {
		return nil, nil
	}
	granted, err := st.EnvironmentTelemetryGranted(ctx, teamID, env.ID)
	if err != nil {
		return nil, err
	}
	if granted && env.Kind != store.KindPreview {
		return nil, nil
	}
	for i, s := range m.Spec.Services {
		if s.Name == receiver {
			return manifest.Errors{{Path: fmt.Sprintf("spec.services[%d].receives_telemetry", i), Code: "telemetry_not_granted",
				Message: fmt.Sprintf("%s is not granted telemetry: service %s will run without the socket (slipway env telemetry APP %s on)", env.Name, receiver, env.Name)}}, nil
		}
	}
	return nil, nil
}

package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

type statusReader struct {
	statuses []ServiceStatus
	err      error
}

func (s statusReader) ServiceStatus(context.Context, string) ([]ServiceStatus, error) {
	return s.statuses, s.err
}

// TestSourceDrift_NamesEveryServiceNotRunningAsDeployed checks the drift
// logic against statuses as the runtime reader reports them.
func TestSourceDrift_NamesEveryServiceNotRunningAsDeployed(t *testing.T) {
	t.Parallel()
	rendered, _ := json.Marshal(map[string]any{
		"api_version": "slipway.dev/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "notes"},
		"spec": map[string]any{"services": []any{
			map[string]any{"name": "web", "source": map[string]any{"type": "image", "image": "notes:1"}},
			map[string]any{"name": "worker", "source": map[string]any{"type": "image", "image": "notes:1"}},
			map[string]any{"name": "cron", "source": map[string]any{"type": "image", "image": "notes:1"}},
		}},
	})
	d := store.Deployment{RenderedManifest: rendered, Steps: json.RawMessage(
		`[{"name":"prepare","state":"succeeded","detail":{"web":"notes:1","worker":"notes:1","cron":"notes:1"}}]`)}
	healthy := ServiceStatus{Service: "web", Image: "notes:1@sha256:abc", Health: "healthy", Running: 1, Desired: 1}
	worker := ServiceStatus{Service: "worker", Image: "notes:2", Health: "healthy", Running: 1, Desired: 1}
	all := []ServiceStatus{healthy, worker, {Service: "cron", Image: "notes:1", Health: "starting", Desired: 2}}
	drift, err := sourceDrift{statusReader{statuses: all}}.DeploymentDrift(context.Background(), store.Environment{}, d)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(drift, "\n")
	if len(drift) != 2 || !strings.Contains(got, "services.worker runs notes:2") || !strings.Contains(got, "services.cron is starting (0/2 replicas)") {
		t.Fatalf("drift = %q", drift)
	}
	drift, _ = sourceDrift{statusReader{statuses: []ServiceStatus{healthy}}}.DeploymentDrift(context.Background(), store.Environment{}, d)
	if len(drift) != 2 || !strings.Contains(strings.Join(drift, "\n"), "services.worker is not running") {
		t.Fatalf("missing services: %q", drift)
	}
	drift, _ = sourceDrift{statusReader{err: fmt.Errorf("%w: dial", ErrRuntimeUnavailable)}}.DeploymentDrift(context.Background(), store.Environment{}, d)
	if len(drift) != 1 {
		t.Fatalf("an unreachable engine counts as ready: %q", drift)
	}
}

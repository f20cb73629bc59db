package api

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// sourceDrift checks, through the runtime reader, that a promotion's
// source runs its current deployment as deployed: every service present,
// converged and healthy, on the image the deployment prepared.
type sourceDrift struct{ r RuntimeReader }

func (s sourceDrift) DeploymentDrift(ctx context.Context, env store.Environment, d store.Deployment) ([]string, error) {
	statuses, err := s.r.ServiceStatus(ctx, env.ID)
	if errors.Is(err, ErrRuntimeUnavailable) {
		// Unknown is not ready: promoting must not rest on a guess.
		return []string{"Docker cannot be reached to check its services"}, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := manifest.Decode(d.RenderedManifest, "json")
	if err != nil {
		return []string{"its captured manifest does not decode"}, nil
	}
	progress, _ := pipeline.ParseProgress(d.Steps)
	images := map[string]string{}
	if prep := progress.Find("prepare"); prep != nil {
		images = prep.Detail
	}
	running := map[string]ServiceStatus{}
	for _, st := range statuses {
		running[st.Service] = st
	}
	var drift []string
	for _, svc := range m.Spec.Services {
		st, ok := running[svc.Name]
		switch {
		case !ok:
			drift = append(drift, fmt.Sprintf("services.%s is not running", svc.Name))
		case st.Health != "healthy":
			drift = append(drift, fmt.Sprintf("services.%s is %s (%d/%d replicas)", svc.Name, st.Health, st.Running, st.Desired))
		case images[svc.Name] != "" && st.Image != images[svc.Name] && !strings.HasPrefix(st.Image, images[svc.Name]+"@"):
			drift = append(drift, fmt.Sprintf("services.%s runs %s, not the deployed %s", svc.Name, st.Image, images[svc.Name]))
		}
	}
	return drift, nil
}

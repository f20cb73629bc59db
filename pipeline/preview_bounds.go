package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// PreviewBounds are the daemon's [previews] resource bounds. Every preview
// service that leaves a CPU or memory limit unset gets the default, and
// replicas above MaxReplicas are capped; explicit limits are kept. Each
// change is a warning on the deployment, never an error. Environments are
// never bounded. Zero fields bound nothing.
type PreviewBounds struct {
	DefaultCPUMillis   int
	DefaultMemoryBytes int64
	MaxReplicas        int
}

// BoundWarning is one change the bounds made: the field path and what
// happened to it.
type BoundWarning struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warning codes of the preview bounds.
const (
	CodePreviewDefaultLimit   = "preview_default_limit"
	CodePreviewReplicasCapped = "preview_replicas_capped"
)

// BoundPreview applies b to a rendered preview manifest in place and
// returns a warning per change, in service order.
func BoundPreview(m *manifest.Manifest, b PreviewBounds) []BoundWarning {
	var out []BoundWarning
	for i := range m.Spec.Services {
		svc := &m.Spec.Services[i]
		path := "spec.services." + svc.Name
		if b.DefaultCPUMillis > 0 && (svc.Resources == nil || svc.Resources.CPUMillis == nil) {
			if svc.Resources == nil {
				svc.Resources = &manifest.Resources{}
			}
			svc.Resources.CPUMillis = manifest.NewInt(int64(b.DefaultCPUMillis))
			out = append(out, BoundWarning{Path: path + ".resources.cpu_millis", Code: CodePreviewDefaultLimit,
				Message: fmt.Sprintf("no CPU limit set: the preview default of %d millicores applies", b.DefaultCPUMillis)})
		}
		if b.DefaultMemoryBytes > 0 && (svc.Resources == nil || svc.Resources.MemoryBytes == nil) {
			if svc.Resources == nil {
				svc.Resources = &manifest.Resources{}
			}
			svc.Resources.MemoryBytes = manifest.NewInt(b.DefaultMemoryBytes)
			out = append(out, BoundWarning{Path: path + ".resources.memory_bytes", Code: CodePreviewDefaultLimit,
				Message: fmt.Sprintf("no memory limit set: the preview default of %d bytes applies", b.DefaultMemoryBytes)})
		}
		if n := svc.Replicas.Or(manifest.DefaultReplicas); b.MaxReplicas > 0 && n > int64(b.MaxReplicas) {
			svc.Replicas = manifest.NewInt(int64(b.MaxReplicas))
			out = append(out, BoundWarning{Path: path + ".replicas", Code: CodePreviewReplicasCapped,
				Message: fmt.Sprintf("%d replicas capped to the previews' max_replicas of %d", n, b.MaxReplicas)})
		}
	}
	return out
}

// boundPreview bounds the rendered manifest when the run deploys a preview.
func (r *run) boundPreview(m *manifest.Manifest) []BoundWarning {
	if r.env.Kind != store.KindPreview {
		return nil
	}
	return BoundPreview(m, r.p.PreviewBounds)
}

// recordBoundWarnings keeps the warnings on the capture step (as
// "warning:<path>" details) and records one deployment.warning event.
func (r *run) recordBoundWarnings(ctx context.Context, warnings []BoundWarning) error {
	if len(warnings) == 0 {
		return nil
	}
	step := r.progress.Find("capture")
	if step.Detail == nil {
		step.Detail = map[string]string{}
	}
	for _, w := range warnings {
		step.Detail["warning:"+w.Path] = w.Code + ": " + w.Message
	}
	r.event(ctx, "deployment.warning", map[string]any{"warnings": warnings})
	return r.save(ctx)
}

// DeploymentWarnings lists the warnings recorded on a deployment's
// progress (the preview bounds and imports on the capture step, routes not
// yet live on the routes step), ordered by path.
func DeploymentWarnings(d store.Deployment) []string {
	p, err := ParseProgress(d.Steps)
	if err != nil {
		return nil
	}
	warnings := map[string]string{}
	for _, step := range p.Steps {
		for k, v := range step.Detail {
			if path, ok := strings.CutPrefix(k, "warning:"); ok {
				warnings[path] = v
			}
		}
	}
	paths := make([]string, 0, len(warnings))
	for path := range warnings {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	var out []string
	for _, path := range paths {
		out = append(out, path+": "+warnings[path])
	}
	return out
}

// limitOnly names the resources the preview bounds filled in, from the
// capture's warnings: they limit the preview's services but reserve
// nothing on the node (swarm.DesiredInput.LimitOnly), so a node full of
// idle previews still places the environments that declared what they need.
func (r *run) limitOnly() map[string]swarm.LimitOnly {
	c := r.progress.Find("capture")
	if c == nil {
		return nil
	}
	out := map[string]swarm.LimitOnly{}
	for k, v := range c.Detail {
		path, ok := strings.CutPrefix(k, "warning:spec.services.")
		if !ok || !strings.HasPrefix(v, CodePreviewDefaultLimit) {
			continue
		}
		svc, field, ok := strings.Cut(path, ".resources.")
		if !ok {
			continue
		}
		lo := out[svc]
		switch field {
		case "cpu_millis":
			lo.CPU = true
		case "memory_bytes":
			lo.Memory = true
		}
		out[svc] = lo
	}
	return out
}

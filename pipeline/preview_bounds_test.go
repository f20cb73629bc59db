package pipeline_test

import (
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
)

func TestBoundPreview(t *testing.T) {
	t.Parallel()
	m := &manifest.Manifest{Spec: manifest.Spec{Services: []manifest.Service{
		{Name: "web", Replicas: manifest.NewInt(5)},
		{Name: "api", Replicas: manifest.NewInt(2), Resources: &manifest.Resources{CPUMillis: manifest.NewInt(250), MemoryBytes: manifest.NewInt(64 << 20)}},
		{Name: "worker", Resources: &manifest.Resources{MemoryBytes: manifest.NewInt(1 << 30)}},
	}}}
	warnings := pipeline.BoundPreview(m, pipeline.PreviewBounds{DefaultCPUMillis: 500, DefaultMemoryBytes: 512 << 20, MaxReplicas: 2})
	var paths []string
	for _, w := range warnings {
		paths = append(paths, w.Path+"="+w.Code)
	}
	want := []string{
		"spec.services.web.resources.cpu_millis=preview_default_limit",
		"spec.services.web.resources.memory_bytes=preview_default_limit",
		"spec.services.web.replicas=preview_replicas_capped",
		"spec.services.worker.resources.cpu_millis=preview_default_limit",
	}
	if len(paths) != len(want) {
		t.Fatalf("warnings %v, want %v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("warnings %v, want %v", paths, want)
		}
	}
	web, api, worker := m.Spec.Services[0], m.Spec.Services[1], m.Spec.Services[2]
	if web.Replicas.Or(1) != 2 || web.Resources.CPUMillis.Or(0) != 500 || web.Resources.MemoryBytes.Or(0) != 512<<20 {
		t.Errorf("web bounded to %d replicas, %d millicores, %d bytes; want 2, 500, 512 MiB",
			web.Replicas.Or(1), web.Resources.CPUMillis.Or(0), web.Resources.MemoryBytes.Or(0))
	}
	// Explicit limits and replicas within the cap are kept.
	if api.Replicas.Or(1) != 2 || api.Resources.CPUMillis.Or(0) != 250 || api.Resources.MemoryBytes.Or(0) != 64<<20 {
		t.Errorf("api changed: %+v %+v", api.Replicas, api.Resources)
	}
	if worker.Resources.MemoryBytes.Or(0) != 1<<30 || worker.Resources.CPUMillis.Or(0) != 500 {
		t.Errorf("worker %+v, want its own memory limit and the default CPU", worker.Resources)
	}
	// Zero bounds change nothing.
	if w := pipeline.BoundPreview(&manifest.Manifest{Spec: manifest.Spec{Services: []manifest.Service{{Name: "x", Replicas: manifest.NewInt(9)}}}}, pipeline.PreviewBounds{}); len(w) != 0 {
		t.Errorf("zero bounds warned %v", w)
	}
}

package swarm

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/manifest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// sampleInput is an application with most of the manifest's service
// surface: a routed web service with an HTTP check, files and a secret; a
// worker with a writable volume and a command check; a migration job.
func sampleInput() DesiredInput {
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Metadata:   manifest.Metadata{Name: "notes"},
		Spec: manifest.Spec{
			Volumes: []manifest.Volume{{Name: "data"}},
			Services: []manifest.Service{
				{
					Name:        "web",
					Source:      manifest.Source{Type: manifest.SourceImage, Image: "example/web:1"},
					Replicas:    manifest.NewInt(2),
					Environment: map[string]string{"LOG_LEVEL": "info", "A_FIRST": "1"},
					Command:     []string{"/app"},
					Arguments:   []string{"--port", "8080"},
					Healthcheck: &manifest.Healthcheck{Type: manifest.HealthcheckHTTP, Port: manifest.NewInt(8080), StartPeriodSeconds: manifest.NewInt(5)},
					Resources:   &manifest.Resources{CPUMillis: manifest.NewInt(500), MemoryBytes: manifest.NewInt(256 << 20)},
					Files: []manifest.File{
						{Target: "/etc/web/config.toml", Content: "listen = 8080\n"},
						{Target: "/etc/web/logo.svg", Path: "assets/logo.svg", Mode: "0440"},
					},
					Secrets:   []manifest.SecretMount{{Name: "db-password", Target: "/run/secrets/db-password"}},
					DependsOn: []string{"worker"},
				},
				{
					Name:        "worker",
					Source:      manifest.Source{Type: manifest.SourceImage, Image: "example/worker:1"},
					Mounts:      []manifest.Mount{{Volume: "data", Target: "/data"}},
					Healthcheck: &manifest.Healthcheck{Type: manifest.HealthcheckCommand, Command: []string{"/app", "check"}, IntervalSeconds: manifest.NewInt(5), TimeoutSeconds: manifest.NewInt(2), Retries: manifest.NewInt(4)},
					Rollout:     &manifest.Rollout{MonitorSeconds: manifest.NewInt(10)},
				},
			},
			Jobs: []manifest.Job{{
				Name:         "migrate",
				Service:      "worker",
				Command:      []string{"/app", "migrate"},
				VolumeAccess: manifest.VolumeAccessExcl,
				Environment:  map[string]string{"MIGRATING": "yes"},
				Secrets:      []manifest.SecretMount{{Name: "db-owner", Target: "/run/secrets/owner"}},
			}},
		},
	}
	return DesiredInput{
		Manifest:     m,
		TeamID:       "team-1",
		AppID:        "app-1",
		EnvID:        "env-1",
		EnvShortID:   "a1b2c3",
		DeploymentID: "dep-1",
		Images: map[string]string{
			"web":    "example/web:1@sha256:" + strings.Repeat("a", 64),
			"worker": "sha256:" + strings.Repeat("b", 64),
		},
		Secrets: map[string]SecretValue{
			"db-password": {Value: []byte("s3cret"), Version: "3"},
			"db-owner":    {Value: []byte("owner"), Version: "1"},
		},
		RepositoryFiles: map[string][]byte{"assets/logo.svg": []byte("<svg/>")},
		Routed:          []string{"web"},
		IngressProxies:  "10.0.9.0/24",
		Probe:           []byte("probe-binary"),
	}
}

func TestDesired_Golden(t *testing.T) {
	tests := []struct {
		name string
		in   func() DesiredInput
	}{
		{name: "two_services", in: sampleInput},
		{name: "defaults", in: func() DesiredInput {
			in := sampleInput()
			in.Manifest = &manifest.Manifest{Metadata: manifest.Metadata{Name: "notes"}, Spec: manifest.Spec{
				Services: []manifest.Service{{Name: "web", Healthcheck: &manifest.Healthcheck{Type: manifest.HealthcheckHTTP, Port: manifest.NewInt(80)}}},
				Jobs:     []manifest.Job{{Name: "seed", Service: "web"}},
			}}
			in.Images = map[string]string{"web": "example/web:2"}
			in.Routed = nil
			return in
		}},
		{name: "empty", in: func() DesiredInput {
			in := sampleInput()
			in.Manifest = &manifest.Manifest{Metadata: manifest.Metadata{Name: "notes"}}
			return in
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Desired(tt.in())
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			path := filepath.Join("testdata", tt.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestDesired_Golden -update)", err)
			}
			if !bytes.Equal(b, want) {
				t.Fatalf("desired state differs from %s (go test -update rewrites it):\n%s", path, b)
			}
			again, _ := Desired(tt.in())
			b2, _ := json.MarshalIndent(again, "", "  ")
			if !bytes.Equal(append(b2, '\n'), b) {
				t.Fatal("Desired is not deterministic")
			}
		})
	}
}

func TestDesired_Rules(t *testing.T) {
	st, err := Desired(sampleInput())
	if err != nil {
		t.Fatal(err)
	}
	web, _ := st.Service("web")
	worker, _ := st.Service("worker")
	if got := web.Spec.UpdateConfig.Order; got != swarm.UpdateOrderStartFirst {
		t.Errorf("web order %s, want start-first (no writable volume)", got)
	}
	if got := worker.Spec.UpdateConfig.Order; got != swarm.UpdateOrderStopFirst {
		t.Errorf("worker order %s, want stop-first (writable volume)", got)
	}
	if web.Spec.EndpointSpec.Mode != swarm.ResolutionModeDNSRR {
		t.Error("web is not dnsrr")
	}
	if got := web.Spec.TaskTemplate.ContainerSpec.Healthcheck.Test; strings.Join(got, " ") != "CMD /run/slipway/probe http --port 8080 --path /health --timeout 3" {
		t.Errorf("web health test %v", got)
	}
	if !contains(web.Spec.TaskTemplate.ContainerSpec.Env, IngressProxiesEnv+"=10.0.9.0/24") {
		t.Error("routed web lacks SLIPWAY_INGRESS_PROXIES")
	}
	if contains(worker.Spec.TaskTemplate.ContainerSpec.Env, IngressProxiesEnv+"=10.0.9.0/24") || len(worker.Spec.TaskTemplate.Networks) != 1 {
		t.Error("unrouted worker joined the ingress")
	}
	job, _ := st.Job("migrate")
	if got := job.StopServices; len(got) != 1 || got[0] != "worker" {
		t.Errorf("exclusive job stops %v, want [worker]", got)
	}
	if m := job.Spec.TaskTemplate.ContainerSpec.Mounts[0]; m.ReadOnly {
		t.Error("exclusive job mounts its volume read-only")
	}
	if contains(worker.Spec.TaskTemplate.ContainerSpec.Env, "MIGRATING=yes") {
		t.Error("job environment leaked into the service")
	}
	for _, k := range []string{LabelManaged, LabelTeam, LabelApp, LabelEnv, LabelService, LabelDeployment, LabelSpecHash} {
		if web.Spec.Labels[k] == "" {
			t.Errorf("web lacks label %s", k)
		}
	}
	for _, n := range st.Networks {
		if n.Labels[LabelManaged] != "true" || n.Labels[LabelEnv] != "env-1" {
			t.Errorf("network %s lacks labels", n.Name)
		}
	}

	// A new deployment of the same manifest changes nothing but the
	// deployment label, so the spec hash is stable.
	in := sampleInput()
	in.DeploymentID = "dep-2"
	st2, _ := Desired(in)
	web2, _ := st2.Service("web")
	if web2.Spec.Labels[LabelSpecHash] != web.Spec.Labels[LabelSpecHash] {
		t.Error("spec hash depends on the deployment id")
	}
	if d := ServiceDrift(web.Spec, web2.Spec, nil); len(d) != 0 {
		t.Errorf("a redeploy drifts: %v", d)
	}
	if j2, _ := st2.Job("migrate"); j2.Spec.Name == job.Spec.Name {
		t.Error("two deployments share a job run name")
	}
}

func TestDesired_Telemetry(t *testing.T) {
	in := sampleInput()
	in.Manifest.Spec.Services[0].ReceivesTelemetry = true
	in.Manifest.Spec.Services[0].Mounts = nil
	notGranted, err := Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	web, _ := notGranted.Service("web")
	if len(web.Spec.TaskTemplate.ContainerSpec.Mounts) != 0 || web.Spec.UpdateConfig.Order != swarm.UpdateOrderStopFirst {
		t.Fatalf("without a grant: mounts %v, order %s (the socket counts as a writable mount)", web.Spec.TaskTemplate.ContainerSpec.Mounts, web.Spec.UpdateConfig.Order)
	}
	in.TelemetryDir, in.TelemetryUser = "/var/lib/slipway/telemetry/env-1", "999:999"
	granted, err := Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	web, _ = granted.Service("web")
	cs := web.Spec.TaskTemplate.ContainerSpec
	if len(cs.Mounts) != 1 || cs.Mounts[0].Target != TelemetryPath || cs.Mounts[0].Source != in.TelemetryDir || cs.User != "999:999" {
		t.Fatalf("granted: mounts %v user %q", cs.Mounts, cs.User)
	}
	worker, _ := granted.Service("worker")
	if worker.Spec.TaskTemplate.ContainerSpec.User != "" {
		t.Fatal("a service that does not receive telemetry runs as the daemon's user")
	}
}

// Services join every link network the environment joins now; a job
// joins only the import networks of JobLinks, never an export's alias.
func TestDesired_LinkNetworks(t *testing.T) {
	in := sampleInput()
	in.Links = []LinkAttachment{{NetworkID: "net-kept"}, {NetworkID: "net-dropped"}, {NetworkID: "net-export", Service: "worker", Alias: "worker.notes"}}
	in.JobLinks = []LinkAttachment{{NetworkID: "net-kept"}, {NetworkID: "net-export", Service: "worker", Alias: "worker.notes"}}
	got, err := Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	targets := func(nets []swarm.NetworkAttachmentConfig) []string {
		var out []string
		for _, n := range nets {
			out = append(out, n.Target)
		}
		return out
	}
	worker, _ := got.Service("worker")
	if nets := targets(worker.Spec.TaskTemplate.Networks); !contains(nets, "net-kept") || !contains(nets, "net-dropped") || !contains(nets, "net-export") {
		t.Errorf("worker joins %v, want every link network", nets)
	}
	job := targets(got.Jobs[0].Spec.TaskTemplate.Networks)
	if len(job) != 2 || job[0] != NetworkName(in.EnvShortID) || job[1] != "net-kept" {
		t.Errorf("job joins %v, want its private network and net-kept only", job)
	}
}

func TestObjectName(t *testing.T) {
	short := ObjectName("abc", "web")
	if short != "slw-abc-web" {
		t.Fatalf("got %s", short)
	}
	long := strings.Repeat("s", 80)
	a, b := ObjectName("abc", long), ObjectName("abc", long+"x")
	if len(a) > 63 || len(b) > 63 || a == b || !strings.HasPrefix(a, "slw-abc-sss") {
		t.Fatalf("long names %q %q", a, b)
	}
}

func TestDesired_BadInput(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*DesiredInput)
		object string
	}{
		{name: "missing image", mutate: func(in *DesiredInput) { delete(in.Images, "worker") }, object: "spec.services[1].source"},
		{name: "missing secret", mutate: func(in *DesiredInput) { delete(in.Secrets, "db-password") }, object: "spec.services[0].secrets[0].name"},
		{name: "missing repository file", mutate: func(in *DesiredInput) { in.RepositoryFiles = nil }, object: "spec.services[0].files[1].path"},
		{name: "job of an unknown service", mutate: func(in *DesiredInput) { in.Manifest.Spec.Jobs[0].Service = "nope" }, object: "spec.jobs[0].service"},
		{name: "job secret missing", mutate: func(in *DesiredInput) { delete(in.Secrets, "db-owner") }, object: "spec.jobs[0].secrets[0].name"},
		{name: "http check without port", mutate: func(in *DesiredInput) { in.Manifest.Spec.Services[0].Healthcheck.Port = nil }, object: "spec.services[0].healthcheck.port"},
		{name: "bad mode", mutate: func(in *DesiredInput) { in.Manifest.Spec.Services[0].Files[0].Mode = "999" }, object: "spec.services[0].files[0].mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := sampleInput()
			tt.mutate(&in)
			_, err := Desired(in)
			var e *Error
			if !asError(err, &e) || e.Object != tt.object {
				t.Fatalf("got %v, want an error about %s", err, tt.object)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestDesired_VolumeNodes: a service mounting a pinned volume, and a job
// of that service, are constrained to the volume's node; a service without
// volumes is not, and without pins nothing is.
func TestDesired_VolumeNodes(t *testing.T) {
	t.Parallel()
	in := sampleInput()
	in.VolumeNodes = map[string]string{"data": "node-a"}
	st, err := Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	worker, _ := st.Service("worker")
	if p := worker.Spec.TaskTemplate.Placement; p == nil || len(p.Constraints) != 1 || p.Constraints[0] != "node.id==node-a" {
		t.Fatalf("worker placement %+v, want node.id==node-a", p)
	}
	web, _ := st.Service("web")
	if web.Spec.TaskTemplate.Placement != nil {
		t.Fatalf("web mounts no volume but is placed: %+v", web.Spec.TaskTemplate.Placement)
	}
	for _, j := range st.Jobs {
		if j.Service == "worker" {
			if p := j.Spec.TaskTemplate.Placement; p == nil || p.Constraints[0] != "node.id==node-a" {
				t.Fatalf("job %s placement %+v, want its service's", j.Job, p)
			}
		}
	}
	if len(st.Volumes) != 1 || st.Volumes[0].Node != "node-a" || st.Volumes[0].Volume != "data" {
		t.Fatalf("volumes %+v, want data pinned to node-a", st.Volumes)
	}
	in.VolumeNodes = nil
	if st, err = Desired(in); err != nil {
		t.Fatal(err)
	}
	if w, _ := st.Service("worker"); w.Spec.TaskTemplate.Placement != nil {
		t.Fatalf("worker placed without a pin: %+v", w.Spec.TaskTemplate.Placement)
	}
}

// A service's spec-hash label is the manifest's per-service hash, so a
// change to one service (or to a repository file only another mounts)
// leaves the other services' labels as they were.
func TestDesired_ServiceHashLabel(t *testing.T) {
	t.Parallel()
	in := sampleInput()
	label := func(in DesiredInput, service string) string {
		t.Helper()
		d, err := Desired(in)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := d.Service(service)
		if !ok {
			t.Fatalf("no service %s", service)
		}
		return s.Spec.Labels[LabelSpecHash]
	}
	want, err := manifest.ServiceHash(in.Manifest, "worker", in.RepositoryFiles)
	if err != nil {
		t.Fatal(err)
	}
	worker, web := label(in, "worker"), label(in, "web")
	if worker != want {
		t.Fatalf("worker's label %s, want manifest.ServiceHash %s", worker, want)
	}
	changed := sampleInput()
	changed.Manifest.Spec.Services[0].Environment["LOG_LEVEL"] = "debug"
	changed.RepositoryFiles = map[string][]byte{"assets/logo.svg": []byte("<svg>new</svg>")}
	if got := label(changed, "worker"); got != worker {
		t.Errorf("changing web changed worker's label %s -> %s", worker, got)
	}
	if got := label(changed, "web"); got == web {
		t.Errorf("changing web kept its label %s", web)
	}
}

// TestDesired_Confined: every service and job runs with no-new-privileges,
// a process limit and a memory limit (the default when the manifest sets
// none), never with added capabilities or a host path, and reserves on
// the node what its manifest's resources say, except defaults the daemon
// filled in.
func TestDesired_Confined(t *testing.T) {
	t.Parallel()
	in := sampleInput()
	st, err := Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]swarm.ServiceSpec{}
	for _, s := range st.Services {
		specs[s.Service] = s.Spec
	}
	for _, j := range st.Jobs {
		specs["job "+j.Job] = j.Spec
	}
	for name, spec := range specs {
		cs, r := spec.TaskTemplate.ContainerSpec, spec.TaskTemplate.Resources
		if cs.Privileges == nil || !cs.Privileges.NoNewPrivileges || len(cs.CapabilityAdd) > 0 {
			t.Errorf("%s: privileges %+v, capabilities added %v", name, cs.Privileges, cs.CapabilityAdd)
		}
		if r == nil || r.Limits == nil || r.Limits.Pids != DefaultPidsLimit || r.Limits.MemoryBytes <= 0 {
			t.Errorf("%s: resources %+v, want a memory and a %d process limit", name, r, DefaultPidsLimit)
		}
	}
	web, worker := specs["web"].TaskTemplate.Resources, specs["worker"].TaskTemplate.Resources
	if web.Limits.NanoCPUs != 500e6 || web.Limits.MemoryBytes != 256<<20 || web.Reservations == nil ||
		web.Reservations.NanoCPUs != 500e6 || web.Reservations.MemoryBytes != 256<<20 {
		t.Errorf("web (500m, 256 MiB in its manifest): %+v %+v", web.Limits, web.Reservations)
	}
	if worker.Limits.MemoryBytes != DefaultMemoryLimit || worker.Reservations != nil {
		t.Errorf("worker (no resources): limits %+v reservations %+v, want the default memory limit and no reservation", worker.Limits, worker.Reservations)
	}

	in.PidsLimit, in.DefaultMemoryBytes = 64, 128<<20
	in.LimitOnly = map[string]LimitOnly{"web": {CPU: true}}
	st, err = Desired(in)
	if err != nil {
		t.Fatal(err)
	}
	web, worker = st.Services[0].Spec.TaskTemplate.Resources, st.Services[1].Spec.TaskTemplate.Resources
	if web.Limits.Pids != 64 || worker.Limits.MemoryBytes != 128<<20 {
		t.Errorf("configured limits not applied: web %+v, worker %+v", web.Limits, worker.Limits)
	}
	if web.Limits.NanoCPUs != 500e6 || web.Reservations.NanoCPUs != 0 || web.Reservations.MemoryBytes != 256<<20 {
		t.Errorf("a defaulted CPU limit must limit and not reserve: %+v %+v", web.Limits, web.Reservations)
	}
}

// TestDesired_HostPathsRefused: the only host path a container may get is
// its environment's telemetry directory, and never the Docker socket or a
// directory holding it.
func TestDesired_HostPathsRefused(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"/var/run", "/run", "/", "/var/run/docker.sock", "/run/docker.sock", "relative/dir"} {
		in := sampleInput()
		in.Manifest.Spec.Services[1].ReceivesTelemetry = true
		in.TelemetryDir, in.TelemetryUser = dir, "1000:1000"
		if _, err := Desired(in); err == nil || !strings.Contains(err.Error(), "not confined") {
			t.Errorf("telemetry directory %q: %v, want the spec refused", dir, err)
		}
	}
	in := sampleInput()
	in.Manifest.Spec.Services[1].ReceivesTelemetry = true
	in.TelemetryDir, in.TelemetryUser = "/var/lib/slipway/telemetry/a1b2c3", "1000:1000"
	if _, err := Desired(in); err != nil {
		t.Fatalf("a telemetry directory: %v", err)
	}
}

// TestServiceDrift_Limits: a process limit or a reservation changed by
// hand is drift the reconciler repairs.
func TestServiceDrift_Limits(t *testing.T) {
	t.Parallel()
	st, err := Desired(sampleInput())
	if err != nil {
		t.Fatal(err)
	}
	want := st.Services[0].Spec
	for _, change := range []func(*swarm.ResourceRequirements){
		func(r *swarm.ResourceRequirements) { r.Limits.Pids = 0 },
		func(r *swarm.ResourceRequirements) { r.Reservations = nil },
	} {
		got := want
		r := *want.TaskTemplate.Resources
		l := *r.Limits
		r.Limits = &l
		change(&r)
		got.TaskTemplate.Resources = &r
		if drift := ServiceDrift(got, want, nil); len(drift) == 0 || drift[0].Field != "resources" {
			t.Errorf("changed resources %+v: drift %v", r, drift)
		}
	}
}

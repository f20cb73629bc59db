package manifest_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/manifest"
)

// bigManifest is a valid manifest of 64 services that uses every feature:
// image and git (self and repository) sources, environment, command and
// arguments, both health checks, resources, mounts, files, secrets,
// dependencies, rollout settings, routes with redirects and wildcards, jobs,
// generated secrets, variables, environments, previews, spec.manifest,
// exports and imports.
func bigManifest() []byte {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString(`
[spec.manifest]
path = "deploy/app.toml"
sync = { mode = "poll", interval_seconds = 120 }
[spec.manifest.repository]
url = "https://git.example.com/team/app.git"
branch = "main"

[spec.variables]
domain = "example.com"
replicas = 2
log_level = "info"

[spec.environments.staging]
sync = true
visibility = "private"
[spec.environments.staging.variables]
domain = "staging.example.com"
[spec.environments.production]
promote_from = "staging"
rollback = "automatic"
[spec.environments.production.variables]
replicas = 3

[spec.previews]
visibility = "private"
[spec.previews.variables]
domain = "${{ env.slug }}.dev.example.com"
`)
	for i := range 8 {
		fmt.Fprintf(&b, "[[spec.volumes]]\nname = \"vol-%d\"\n", i)
	}
	for i := range 16 {
		fmt.Fprintf(&b, "[[spec.secrets]]\nname = \"gen-%d\"\ngenerate = { type = \"random\", bytes = 32 }\n", i)
	}
	for i := range 64 {
		fmt.Fprintf(&b, "\n[[spec.services]]\nname = \"svc-%d\"\nreplicas = \"${{ vars.replicas }}\"\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "depends_on = [\"svc-%d\"]\n", (i-1)/2)
		}
		b.WriteString("command = [\"server\"]\narguments = [\"--port\", \"8080\", \"--log\", \"${{ vars.log_level }}\"]\n")
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "[spec.services.source]\ntype = \"image\"\nimage = \"registry.example.com:5000/team/svc-%d:1.%d.0\"\n", i, i)
		case 1:
			b.WriteString("[spec.services.source]\ntype = \"git\"\nrepository = \"self\"\n[spec.services.source.build]\ntype = \"docker\"\ndockerfile = \"services/Dockerfile\"\ncontext = \"services\"\ntarget = \"runtime\"\nargs = { VERSION = \"1\", ORIGIN = \"https://example.com\" }\n")
		default:
			b.WriteString("[spec.services.source]\ntype = \"git\"\n[spec.services.source.repository]\nurl = \"git@example.com:team/lib.git\"\ncommit = \"0123456789abcdef0123456789abcdef01234567\"\n[spec.services.source.build]\ntype = \"docker\"\n")
		}
		b.WriteString("[spec.services.environment]\n")
		for k := range 4 {
			fmt.Fprintf(&b, "KEY_%d = \"value-%d-%d\"\n", k, i, k)
		}
		b.WriteString("ORIGIN = \"https://${{ vars.domain }}\"\n")
		if i%2 == 0 {
			b.WriteString("[spec.services.healthcheck]\ntype = \"http\"\nport = 8080\npath = \"/health\"\ninterval_seconds = 10\ntimeout_seconds = 3\nstart_period_seconds = 30\nretries = 3\n")
		} else {
			b.WriteString("[spec.services.healthcheck]\ntype = \"command\"\ncommand = [\"check\", \"--fast\"]\n")
		}
		if i%2 == 0 {
			b.WriteString("[spec.services.resources]\ncpu_millis = 500\nmemory_bytes = 268435456\n")
		}
		// Every service uses some of the remaining features, every
		// feature is used by some service, as in a real application.
		switch i % 4 {
		case 0:
			b.WriteString("[spec.services.rollout]\norder = \"stop-first\"\nmonitor_seconds = 30\n")
			fmt.Fprintf(&b, "[[spec.services.mounts]]\nvolume = \"vol-%d\"\ntarget = \"/data\"\nread_only = %v\n", i%8, i%8 != 0)
			b.WriteString("[[spec.services.files]]\ntarget = \"/data/config.yaml\"\ncontent = \"listen: 8080\\nlevel: info\\n\"\nmode = \"0440\"\n")
		case 1:
			b.WriteString("[[spec.services.files]]\ntarget = \"/etc/app/extra.yaml\"\npath = \"config/extra.yaml\"\n")
		case 2:
			b.WriteString("[[spec.services.secrets]]\nname = \"stored-key\"\ntarget = \"/run/secrets/stored\"\n")
		}
		fmt.Fprintf(&b, "[[spec.services.secrets]]\nname = \"gen-%d\"\ntarget = \"/run/secrets/gen\"\n", i%16)
	}
	for i := range 48 {
		fmt.Fprintf(&b, "\n[[spec.routes]]\nname = \"r-%d\"\nhostname = \"svc-%d.${{ vars.domain }}\"\nservice = \"svc-%d\"\nport = 8080\nvisibility = \"public\"\n", i, i, i)
	}
	b.WriteString("\n[[spec.routes]]\nname = \"tenants\"\nhostname = \"*.tenants.example.com\"\nservice = \"svc-0\"\nport = 8080\n")
	for i := range 15 {
		fmt.Fprintf(&b, "\n[[spec.routes]]\nname = \"old-%d\"\nhostname = \"old-%d.example.net\"\nredirect = { to = \"https://example.com/r/%d\", status = 301 }\n", i, i, i)
	}
	for i := range 16 {
		fmt.Fprintf(&b, "\n[[spec.jobs]]\nname = \"job-%d\"\nservice = \"svc-%d\"\ncommand = [\"migrate\"]\ntimeout_seconds = 600\n[spec.jobs.environment]\nJOB_ONLY = \"1\"\n[[spec.jobs.secrets]]\nname = \"owner\"\ntarget = \"/run/secrets/owner\"\n", i, i)
	}
	for i := range 8 {
		fmt.Fprintf(&b, "\n[[spec.exports]]\nservice = \"svc-%d\"\napplications = [\"billing\", \"notes\"]\npreviews = true\n", i)
		fmt.Fprintf(&b, "[[spec.imports]]\napplication = \"auth\"\nservice = \"api-%d\"\nenvironment = \"staging\"\n", i)
	}
	return []byte(b.String())
}

func TestBigManifest_Valid(t *testing.T) {
	t.Parallel()
	data := bigManifest()
	if len(data) > manifest.MaxTOMLBytes {
		t.Fatalf("the benchmark manifest is %d bytes, over the TOML cap", len(data))
	}
	m, err := manifest.Decode(data, "toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Spec.Services) != 64 {
		t.Fatalf("%d services", len(m.Spec.Services))
	}
	if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("the benchmark manifest is invalid:\n%s", manifest.FormatText(errs))
	}
}

// cpuTime is the CPU time this process has used. The benchmark reports it
// per operation beside ns/op, because on a machine shared with other work
// wall-clock time mostly measures waiting for a CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchmarkDecodeValidate(b *testing.B, data []byte) {
	benchmarkDecoder(b, data, func(data []byte) (*manifest.Manifest, error) { return manifest.Decode(data, "toml") })
}

func benchmarkDecoder(b *testing.B, data []byte, decode func([]byte) (*manifest.Manifest, error)) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	start, n := cpuTime(), 0
	defer func() {
		if n > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(n), "cpu-ns/op")
		}
	}()
	for b.Loop() {
		n++
		m, err := decode(data)
		if err != nil {
			b.Fatal(err)
		}
		if errs := manifest.Validate(m, manifest.ValidateOptions{}); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkDecodeValidate64Services is the performance goal: under 2 ms/op.
func BenchmarkDecodeValidate64Services(b *testing.B) {
	benchmarkDecodeValidate(b, bigManifest())
}

func BenchmarkDecodeValidateMinimal(b *testing.B) {
	data, err := os.ReadFile("../examples/minimal.toml")
	if err != nil {
		b.Fatal(err)
	}
	benchmarkDecodeValidate(b, data)
}

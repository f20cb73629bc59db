package manifest

import (
	"strings"
	"testing"
)

const planHashBase = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

[spec.variables]
domain = "example.com"

[spec.environments.production]
[spec.environments.staging]
[spec.environments.staging.variables]
domain = "staging.example.com"

[[spec.services]]
name = "api"
[spec.services.source]
type = "image"
image = "registry.example/api:1"
[spec.services.environment]
HOST = "${{ vars.domain }}"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "registry.example/web:1"
`

func planHashManifest(t *testing.T, src string) *Manifest {
	t.Helper()
	m, err := Decode([]byte(src), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if errs := Validate(m, ValidateOptions{}); len(errs) > 0 {
		t.Fatalf("invalid: %v", errs)
	}
	return m
}

// deployedTarget is env as a deployment of m there left it: m rendered
// for env and the spec hash the pipeline recorded.
func deployedTarget(t *testing.T, m *Manifest, env string) HashTarget {
	t.Helper()
	target := HashTarget{Environment: env, Context: PlanContext(m, Target{Name: env})}
	if m == nil {
		return target
	}
	rendered, errs := Render(m, target.Context)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	hash, err := SpecHash(rendered, nil)
	if err != nil {
		t.Fatal(err)
	}
	target.Deployed, target.DeployedSpecHash = rendered, hash
	return target
}

func changes(e EnvironmentHash) map[string]string {
	out := map[string]string{}
	for _, s := range e.Services {
		out[s.Service] = s.Change
	}
	return out
}

func TestPlanHashes(t *testing.T) {
	t.Parallel()
	base := planHashManifest(t, planHashBase)
	newImage := planHashManifest(t, strings.Replace(planHashBase, "registry.example/web:1", "registry.example/web:2", 1))
	renamed := planHashManifest(t, strings.Replace(planHashBase, `name = "web"`, `name = "www"`, 1))
	// Reordered and reformatted: the same specification.
	reordered := planHashManifest(t, strings.Replace(planHashBase, "[spec.environments.production]\n[spec.environments.staging]\n", "[spec.environments.staging]\n", 1)+"\n[spec.environments.production]\n")

	t.Run("nothing deployed", func(t *testing.T) {
		t.Parallel()
		got := PlanHashes(base, []HashTarget{{Environment: "production", Context: PlanContext(base, Target{Name: "production"})}})
		want := deployedTarget(t, base, "production")
		if len(got) != 1 || got[0].SpecHash != want.DeployedSpecHash || !got[0].Changed || got[0].Unknown != "" {
			t.Fatalf("got %+v, want spec hash %s, changed", got, want.DeployedSpecHash)
		}
		if c := changes(got[0]); c["api"] != HashAdded || c["web"] != HashAdded {
			t.Errorf("services %v, want both added", c)
		}
	})
	t.Run("the same specification deployed", func(t *testing.T) {
		t.Parallel()
		got := PlanHashes(reordered, []HashTarget{deployedTarget(t, base, "production")})[0]
		if got.Changed || got.SpecHash != got.DeployedSpecHash {
			t.Fatalf("got %+v, want unchanged", got)
		}
		if c := changes(got); c["api"] != HashUnchanged || c["web"] != HashUnchanged {
			t.Errorf("services %v, want both unchanged", c)
		}
	})
	t.Run("one service changed", func(t *testing.T) {
		t.Parallel()
		got := PlanHashes(newImage, []HashTarget{deployedTarget(t, base, "production")})[0]
		if !got.Changed || got.SpecHash == got.DeployedSpecHash {
			t.Fatalf("got %+v, want changed", got)
		}
		if c := changes(got); c["api"] != HashUnchanged || c["web"] != HashChanged {
			t.Errorf("services %v, want api unchanged, web changed", c)
		}
		for _, s := range got.Services {
			if s.Service == "web" && (s.SpecHash == s.DeployedSpecHash || s.DeployedSpecHash == "") {
				t.Errorf("web: %+v, want both hashes, differing", s)
			}
		}
	})
	t.Run("a service renamed is one added and one removed", func(t *testing.T) {
		t.Parallel()
		got := PlanHashes(renamed, []HashTarget{deployedTarget(t, base, "production")})[0]
		if c := changes(got); c["api"] != HashUnchanged || c["www"] != HashAdded || c["web"] != HashRemoved || len(c) != 3 {
			t.Errorf("services %v", c)
		}
	})
	t.Run("each environment renders with its own variables", func(t *testing.T) {
		t.Parallel()
		got := PlanHashes(base, []HashTarget{deployedTarget(t, base, "production"), deployedTarget(t, base, "staging")})
		if got[0].SpecHash == got[1].SpecHash || got[0].Changed || got[1].Changed {
			t.Fatalf("production %+v, staging %+v: want different hashes, each unchanged", got[0], got[1])
		}
	})
	t.Run("deploy-time values", func(t *testing.T) {
		t.Parallel()
		m := planHashManifest(t, planHashBase+"[spec.services.environment]\nRELEASE = \"${{ deployment.id }}\"\n")
		got := PlanHashes(m, []HashTarget{deployedTarget(t, base, "production")})[0]
		if got.SpecHash != "" || got.Changed || !strings.Contains(got.Unknown, "deployment.id") {
			t.Fatalf("got %+v, want unknown because of deployment.id", got)
		}
		if c := changes(got); c["api"] != HashUnchanged || c["web"] != HashUnknown {
			t.Errorf("services %v, want api unchanged, web unknown", c)
		}
	})
	t.Run("repository files", func(t *testing.T) {
		t.Parallel()
		repo := "[spec.manifest]\npath = \"slipway.toml\"\n[spec.manifest.repository]\nurl = \"https://git.example.com/shop.git\"\nbranch = \"main\"\n\n"
		m := planHashManifest(t, strings.Replace(planHashBase, "[spec.variables]", repo+"[spec.variables]", 1)+"[[spec.services.files]]\ntarget = \"/etc/web.conf\"\npath = \"config/web.conf\"\n")
		got := PlanHashes(m, []HashTarget{{Environment: "production", Context: PlanContext(m, Target{Name: "production"})}})[0]
		if got.SpecHash != "" || !strings.Contains(got.Unknown, "repository files") {
			t.Fatalf("got %+v, want unknown because of repository files", got)
		}
		for _, s := range got.Services {
			if (s.Service == "api") != (s.SpecHash != "") {
				t.Errorf("%s: hash %q; only api, which mounts nothing, has one", s.Service, s.SpecHash)
			}
		}
	})
}

func TestFormatPlan_Hashes(t *testing.T) {
	t.Parallel()
	base := planHashManifest(t, planHashBase)
	next := planHashManifest(t, strings.Replace(planHashBase, "registry.example/web:1", "registry.example/web:2", 1))
	p := NewPlan(base, next, nil)
	p.Hashes = PlanHashes(next, []HashTarget{deployedTarget(t, base, "production")})
	h := p.Hashes[0]
	var api, web ServiceHashChange
	for _, s := range h.Services {
		if s.Service == "api" {
			api = s
		} else {
			web = s
		}
	}
	text := FormatPlan(p)
	for _, want := range []string{
		"\nSpec hash:\n  production: " + h.SpecHash + " (changes from " + h.DeployedSpecHash[:12] + ")\n",
		"    = api " + api.SpecHash[:12] + "\n",
		"    ~ web " + web.SpecHash[:12] + " (was " + web.DeployedSpecHash[:12] + ")\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q:\n%s", want, text)
		}
	}
	if p := NewPlan(base, next, nil); strings.Contains(FormatPlan(p), "Spec hash") {
		t.Error("a plan without hashes prints a Spec hash section")
	}
}

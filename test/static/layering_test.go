package static

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/slipwayhq/slipway"

// Outside packages named by the layering rules.
const (
	postgres = "github.com/jackc/pgx"
	river    = "github.com/riverqueue/river"
	docker   = "github.com/docker/docker"
	fiber    = "github.com/gofiber/fiber"
	nethttp  = "net/http"
)

// layerRule is one "must not import" sentence of a package's doc.go.
// Paths without a dot are module-relative; a trailing "/..." on pkg
// applies the rule to every package below it too. Forbidden paths match
// themselves and everything below them. Rules about this module's packages
// hold for what the package imports itself (its doc.go names its direct
// imports); rules about outside packages (Postgres, Docker, Fiber, HTTP)
// hold for everything it depends on, directly or not. Tests are excluded.
type layerRule struct {
	pkg    string
	forbid []string
	// except lists dependencies the doc.go names as allowed exceptions.
	except []string
}

// layerRules is the one list of the import rules stated in doc.go files.
// A doc.go that states a rule has its line here; TestLayering_DocsAndRulesAgree
// fails when a doc.go says "must not import" and no rule names its package.
var layerRules = []layerRule{
	{pkg: "manifest", forbid: []string{postgres, docker, nethttp, "store", "runtime", "pipeline", "jobs", "app", "savedmanifest", "secrets", "views", "forge"}},
	{pkg: "manifest/importer/...", forbid: []string{postgres, docker, nethttp, "cmd", "app", "store"}},
	{pkg: "runtime/...", forbid: []string{postgres, "store", "pipeline", "jobs", "app"}},
	{pkg: "runtime/docker", forbid: []string{"store", "pipeline", "jobs", "app", "runtime/swarm", "runtime/build", "runtime/image", "runtime/registry", "runtime/ingress"}},
	{pkg: "manifest/importer/internal/convert", forbid: []string{module + "/", nethttp}, except: []string{"manifest"}},
	{pkg: "runtime/ingress/gatewayctl", forbid: []string{postgres, "store", "pipeline", "jobs", "app", "cmd"}},
	{pkg: "runtime/ingress/gatewayagent", forbid: []string{postgres, "store", "pipeline", "jobs", "app", "cmd", "gatewayfeed"}},
	{pkg: "store/localpg", forbid: []string{"app", "pipeline", "jobs", "runtime"}},
	{pkg: "runtime/build", forbid: []string{postgres, river}},
	{pkg: "runtime/ingress/...", forbid: []string{postgres, "store", "pipeline", "jobs", "app", "cmd"}},
	{pkg: "certstore", forbid: []string{"app", "pipeline", "jobs", "views", "cmd", "runtime"}},
	{pkg: "telemetry", forbid: []string{module + "/"}},
	{pkg: "config", forbid: []string{module + "/", postgres, docker, nethttp}},
	{pkg: "tracing", forbid: []string{"store", "pipeline", "jobs", "app"}},
	{pkg: "views/...", forbid: []string{"store", fiber, "app"}},
	{pkg: "metrics", forbid: []string{module + "/", postgres, docker}},
	{pkg: "app/webhook", forbid: []string{"app/service", "app/api", "views", "runtime", "cmd"}},
	{pkg: "app/auth", forbid: []string{module + "/", fiber}},
	{pkg: "store/authcache", forbid: []string{"app", "views", fiber}},
	{pkg: "store/changecache", forbid: []string{"app", "views", fiber}},
	{pkg: "app/api/client", forbid: []string{"store", "views", "app/service"}},
	{pkg: "app/...", forbid: []string{"cmd"}},
	{pkg: "app", forbid: []string{"runtime", "cmd"}},
	{pkg: "app/api", forbid: []string{"app", "views"}, except: []string{"app/auth", "app/service"}},
	{pkg: "jobs", forbid: []string{"app", "views", "cmd"}},
	{pkg: "manifest/tomledit", forbid: []string{module + "/"}},
	{pkg: "runtime/image", forbid: []string{"store", "pipeline", "jobs", "app"}},
	{pkg: "runtime/registry", forbid: []string{postgres, "store", "jobs", "app", "pipeline"}},
	{pkg: "runtime/swarm", forbid: []string{postgres, "store", "pipeline", "jobs", "app"}},
	{pkg: "app/service", forbid: []string{fiber, "views", "runtime"}},
	{pkg: "static", forbid: []string{module + "/"}},
	{pkg: "keyring", forbid: []string{module + "/"}},
	{pkg: "pipeline", forbid: []string{"app", "views", "cmd", "jobs"}},
	{pkg: "migrations", forbid: []string{module + "/"}},
	{pkg: "forge/github", forbid: []string{"app", "pipeline", "jobs", "runtime", "views", "cmd"}},
	{pkg: "secrets", forbid: []string{"pipeline", "jobs", "app", "runtime", "views", "forge"}, except: []string{"runtime/swarm"}},
	{pkg: "store/...", forbid: []string{"app", "pipeline", "jobs", "runtime", "views", "forge"}},
	{pkg: "links", forbid: []string{"store", "runtime", "pipeline", "jobs", "app"}},
	{pkg: "backup", forbid: []string{module + "/"}},
	{pkg: "outbound", forbid: []string{module + "/"}},
	{pkg: "quota", forbid: []string{"app", "pipeline", "jobs", "runtime"}},
	{pkg: "archive", forbid: []string{module + "/"}},
	{pkg: "backupstore", forbid: []string{postgres, docker, "store", "runtime", "pipeline", "jobs", "app"}},
	{pkg: "backupctl", forbid: []string{"app", "views", "cmd", "jobs"}},
	{pkg: "scheduler", forbid: []string{"app", "views", "cmd", "jobs"}},
	{pkg: "notify", forbid: []string{"app", "jobs", "pipeline", "runtime", "views", "cmd"}},
	{pkg: "notify/send", forbid: []string{module + "/"}},
	{pkg: "runtime/usage", forbid: []string{postgres, "store", "jobs", "app", "pipeline", "views"}},
	{pkg: "sampler", forbid: []string{"app", "jobs", "pipeline", "views", "cmd"}},
	{pkg: "views/chart", forbid: []string{module + "/"}},
	{pkg: "savedmanifest", forbid: []string{"app", "pipeline", "jobs", "secrets", "runtime", "views"}},
}

type listedPackage struct {
	ImportPath string
	Dir        string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// full turns a rule's path into an import path.
func full(p string) string {
	if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") || p == nethttp {
		return p
	}
	return module + "/" + p
}

// covers reports whether path is pattern or lies below it.
func covers(pattern, path string) bool {
	pattern = strings.TrimSuffix(pattern, "/")
	return path == pattern || strings.HasPrefix(path, pattern+"/")
}

func (r layerRule) applies(importPath string) bool {
	if base, ok := strings.CutSuffix(r.pkg, "/..."); ok {
		return covers(full(base), importPath)
	}
	return importPath == full(r.pkg)
}

func (r layerRule) violations(p listedPackage) []string {
	var bad []string
	for _, f := range r.forbid {
		target, deps := full(f), p.Deps
		if f == module+"/" {
			target = module
		}
		if strings.HasPrefix(target, module) {
			deps = p.Imports
		}
		for _, dep := range deps {
			if covers(target, dep) && !r.allowed(p.ImportPath, dep) {
				bad = append(bad, dep+" (forbids "+f+")")
			}
		}
	}
	return bad
}

func (r layerRule) allowed(self, dep string) bool {
	if covers(self, dep) && self != module {
		return true // a package's own subpackages
	}
	for _, e := range r.except {
		if dep == full(e) {
			return true
		}
	}
	return false
}

func TestLayering_ImportRulesHold(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range layerRules {
		matched := false
		for _, p := range pkgs {
			if !r.applies(p.ImportPath) || strings.Contains(p.ImportPath, "test") {
				continue
			}
			matched = true
			for _, v := range r.violations(p) {
				t.Errorf("%s imports %s", strings.TrimPrefix(p.ImportPath, module+"/"), v)
			}
		}
		if !matched {
			t.Errorf("rule for %s matches no package: update layerRules", r.pkg)
		}
	}
}

// TestLayering_DocsAndRulesAgree keeps the doc.go sentences and layerRules
// together: every package whose doc.go says it must not import something
// has a rule.
func TestLayering_DocsAndRulesAgree(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.Contains(p.ImportPath, "test") || p.ImportPath == module {
			continue
		}
		doc := readDoc(t, p.Dir)
		if !strings.Contains(doc, "must not import") && !strings.Contains(doc, "imports only") {
			continue
		}
		ruled := false
		for _, r := range layerRules {
			// A rule for a whole subtree speaks for its root's doc.go only.
			base, wide := strings.CutSuffix(r.pkg, "/...")
			if r.applies(p.ImportPath) && (!wide || full(base) == p.ImportPath) {
				ruled = true
			}
		}
		if !ruled {
			t.Errorf("%s/doc.go states an import rule that layerRules does not check", strings.TrimPrefix(p.ImportPath, module+"/"))
		}
	}
}

// readDoc returns the package comment of dir/doc.go as one line of text.
func readDoc(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "doc.go"))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	} else if err != nil {
		t.Fatal(err)
	}
	var words []string
	for line := range strings.Lines(string(b)) {
		if text, ok := strings.CutPrefix(strings.TrimSpace(line), "//"); ok {
			words = append(words, strings.TrimSpace(text))
		}
	}
	return strings.Join(words, " ")
}

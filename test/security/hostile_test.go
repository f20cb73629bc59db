package security

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/test/summary"
)

// baseManifest is a valid manifest touching every named thing the hostile
// table replaces one at a time.
func baseManifest() map[string]any {
	return map[string]any{
		"api_version": "slipway.dev/v1alpha1",
		"kind":        "Application",
		"metadata":    map[string]any{"name": "notes"},
		"spec": map[string]any{
			"services": []any{
				map[string]any{
					"name":        "web",
					"source":      map[string]any{"type": "image", "image": "registry.example.com/team/web:1.2"},
					"healthcheck": map[string]any{"type": "http", "port": 3000, "path": "/health"},
					"mounts":      []any{map[string]any{"volume": "data", "target": "/data"}},
					"files":       []any{map[string]any{"target": "/etc/notes.conf", "content": "x"}},
					"secrets":     []any{map[string]any{"name": "api-key", "target": "/run/secrets/api-key"}},
				},
				map[string]any{
					"name": "worker",
					"source": map[string]any{
						"type":       "git",
						"repository": map[string]any{"url": "https://git.example.com/team/notes.git", "branch": "main"},
						"build":      map[string]any{"type": "docker", "dockerfile": "Dockerfile"},
					},
				},
			},
			"volumes":      []any{map[string]any{"name": "data"}},
			"routes":       []any{map[string]any{"name": "web", "hostname": "notes.example.com", "service": "web", "port": 3000}},
			"secrets":      []any{map[string]any{"name": "api-key", "generate": map[string]any{"type": "random", "bytes": 32}}},
			"environments": map[string]any{"production": map[string]any{}},
		},
	}
}

// canaryPayloads are the hostile strings. Each one that a shell, git or a
// path join could act on would create or reveal the canary file, which the
// tests check does not exist afterwards.
func canaryPayloads(canary string) []string {
	return []string{
		"x;touch " + canary,
		"$(touch " + canary + ")",
		"`touch " + canary + "`",
		"x\ntouch " + canary,
		"x|touch " + canary,
		"x&&touch " + canary,
		"--upload-pack=touch " + canary,
		"-oProxyCommand=touch " + canary,
		"../../../../etc/passwd",
		"..",
		"x\x00y",
		"x\x1b[31mred",
		"x\r\nX-Injected: 1",
		strings.Repeat("a", 300),
		"nаme", // Cyrillic а (U+0430)
		"ѕеrvісе",
		"ext::sh -c touch% " + canary,
		"fd::17",
		"file:///etc",
		"file://" + canary,
		"<script>alert(1)</script>",
		"${{ secrets.api-key }}",
	}
}

// setPath replaces the value at a dotted path of maps and slice indexes.
func setPath(doc map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	var cur any = doc
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = v
				return
			}
			cur = c[p]
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil {
				panic(path)
			}
			if last {
				c[n] = v
				return
			}
			cur = c[n]
		default:
			panic(path)
		}
	}
}

// renameKey moves the map entry at path/from to path/to.
func renameKey(doc map[string]any, path, from, to string) {
	var cur any = doc
	for _, p := range strings.Split(path, ".") {
		cur = cur.(map[string]any)[p]
	}
	m := cur.(map[string]any)
	m[to] = m[from]
	delete(m, from)
}

// manifestField is one place a string enters a manifest: how to put the
// payload there and the field path its error must name.
type manifestField struct {
	name    string
	errPath string
	set     func(doc map[string]any, v string)
}

func at(path string) func(map[string]any, string) {
	return func(doc map[string]any, v string) { setPath(doc, path, v) }
}

// jsonPath turns "spec.services.0.name" into "spec.services[0].name".
func jsonPath(path string) string {
	var b strings.Builder
	for i, p := range strings.Split(path, ".") {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func field(name, path string) manifestField {
	return manifestField{name: name, errPath: jsonPath(path), set: at(path)}
}

var manifestFields = []manifestField{
	field("application name", "metadata.name"),
	{name: "environment name", errPath: "spec.environments", set: func(doc map[string]any, v string) { renameKey(doc, "spec.environments", "production", v) }},
	field("service name", "spec.services.0.name"),
	field("route name", "spec.routes.0.name"),
	field("volume name", "spec.volumes.0.name"),
	field("secret name", "spec.secrets.0.name"),
	field("secret mount name", "spec.services.0.secrets.0.name"),
	field("image reference", "spec.services.0.source.image"),
	field("route hostname", "spec.routes.0.hostname"),
	field("file target", "spec.services.0.files.0.target"),
	field("mount target", "spec.services.0.mounts.0.target"),
	field("secret target", "spec.services.0.secrets.0.target"),
	field("health-check path", "spec.services.0.healthcheck.path"),
	field("git repository URL", "spec.services.1.source.repository.url"),
	field("git branch", "spec.services.1.source.repository.branch"),
	field("git commit", "spec.services.1.source.repository.commit"),
	field("Dockerfile path", "spec.services.1.source.build.dockerfile"),
	field("build context", "spec.services.1.source.build.context"),
	field("build target", "spec.services.1.source.build.target"),
	field("environment branch", "spec.environments.production.branch"),
}

// manifestVerdict decodes and validates doc and reports whether an error
// names errPath (or a field under it).
func manifestVerdict(doc map[string]any, errPath string) (rejected bool, errs []string) {
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	m, err := manifest.Decode(b, "json")
	var fes manifest.Errors
	if err != nil {
		e, ok := err.(manifest.Errors)
		if !ok {
			return false, []string{"decode: " + err.Error()}
		}
		fes = e
	} else {
		fes = manifest.Validate(m, manifest.ValidateOptions{})
	}
	for _, fe := range fes {
		errs = append(errs, fe.Error())
		if fe.Code != "" && fe.Message != "" && strings.HasPrefix(fe.Path, errPath) {
			rejected = true
		}
	}
	return rejected, errs
}
func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// tally counts the hostile inputs tried and the ones let through unsafely.
type tally struct {
	tried, unsafe int
}

// reject records a case that must be refused with an error naming the
// field; ok says whether it was.
func (c *tally) check(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	c.tried++
	if !ok {
		c.unsafe++
		t.Errorf("accepted unsafely: "+format, args...)
	}
}

// TestHostileInputs applies every payload to every place a string enters
// Slipway today and expects each to be rejected with an error naming the
// field and a code, or carried as inert data (stored and shown verbatim,
// HTML-escaped, never run). Payloads that a shell or git would run touch a
// canary file, which must not exist at the end.
func TestHostileInputs(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "canary")
	payloads := canaryPayloads(canary)
	var c tally

	t.Run("manifest", func(t *testing.T) { hostileManifest(t, &c, payloads) })
	t.Run("git", func(t *testing.T) { hostileGit(t, &c, payloads) })
	t.Run("build paths", func(t *testing.T) { hostileBuildPaths(t, &c, payloads) })
	t.Run("http", func(t *testing.T) { hostileHTTP(t, &c, payloads) })
	t.Run("webhook", func(t *testing.T) { hostileWebhook(t, &c, payloads) })

	if _, err := os.Stat(canary); !errors.Is(err, os.ErrNotExist) {
		c.unsafe++
		t.Errorf("the canary %s exists: a payload was executed (%v)", canary, err)
	}
	if c.tried < 500 {
		t.Errorf("only %d hostile inputs tried; the table lost entries", c.tried)
	}
	summary.Line(t, "hostile inputs: %d tried, %d accepted unsafely", c.tried, c.unsafe)
}

// carriedByBuild are manifest fields validation may pass through because
// runtime/build checks them where they are used (hostileGit and
// hostileBuildPaths prove those checks), or which reach Docker only as a
// JSON field of the Engine API (the build target).
var carriedByBuild = map[string]bool{
	"git repository URL": true, // file:// is the installation's choice: refused by service.ApplyManifest and runtime/build unless [git] allow_file_urls
	"git branch":         true,
	"environment branch": true,
	"Dockerfile path":    true,
	"build context":      true,
	"build target":       true,
}

func hostileManifest(t *testing.T, c *tally, payloads []string) {
	if ok, errs := manifestVerdict(baseManifest(), ""); ok {
		t.Fatalf("the base manifest is invalid: %v", errs)
	}
	for _, f := range manifestFields {
		for _, p := range payloads {
			doc := baseManifest()
			f.set(doc, p)
			rejected, errs := manifestVerdict(doc, f.errPath)
			c.check(t, rejected || carriedByBuild[f.name], "manifest %s %q: errors %v", f.name, p, errs)
		}
	}
	// Unknown keys, hostile or not, are errors naming them.
	doc := baseManifest()
	setPath(doc, "spec.services.0.$(touch x)", "1")
	rejected, errs := manifestVerdict(doc, "spec.services[0]")
	c.check(t, rejected, "manifest unknown key: errors %v", errs)
}

// gitFixture is a one-commit repository on branch main, served as file://.
func gitFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("Dockerfile"); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}
	if _, err := wt.Commit("init", &git.CommitOptions{Author: sig}); err != nil {
		t.Fatal(err)
	}
	return "file://" + dir
}

// buildField reports whether err is a runtime/build error naming field.
func buildField(err error, field string) bool {
	var be *build.Error
	return errors.As(err, &be) && be.Field == field && be.Code != ""
}

// hostileGit puts each payload in the repository URL and in the branch of
// runtime/build's resolution (what checkouts, sync and previews call).
func hostileGit(t *testing.T, c *tally, payloads []string) {
	ctx := context.Background()
	repoURL := gitFixture(t)
	// The fixture is file://, so the installation switch is on here; the
	// URL payloads are tried with it off (the default) and on.
	local := build.Auth{AllowFileURLs: true}
	if _, err := build.ResolveCommit(ctx, repoURL, "main", "", local); err != nil {
		t.Fatalf("the fixture repository does not resolve: %v", err)
	}
	if _, err := build.ResolveCommit(ctx, repoURL, "main", "", build.Auth{}); !buildField(err, "url") {
		c.unsafe++
		t.Errorf("a file:// repository resolved with allow_file_urls off: %v", err)
	}
	for _, p := range payloads {
		for _, auth := range []build.Auth{{}, local} {
			_, err := build.ResolveCommit(ctx, p, "main", "", auth)
			// With the switch on, a file:// URL naming a non-repository is
			// carried to go-git, read in-process, and fails as unreachable.
			c.check(t, buildField(err, "url"), "git URL %q (file URLs allowed: %t): %v", p, auth.AllowFileURLs, err)
		}

		_, err := build.ResolveCommit(ctx, repoURL, p, "", local)
		c.check(t, buildField(err, "branch"), "git branch %q: %v", p, err)

		_, err = build.ResolveCommit(ctx, repoURL, "", p, local)
		c.check(t, buildField(err, "commit"), "git commit %q: %v", p, err)
	}
}

// hostileBuildPaths aims the Dockerfile and the context at each payload in
// a checkout that also holds a symlink out of the repository.
func hostileBuildPaths(t *testing.T, c *tally, payloads []string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	co := &build.Checkout{Dir: dir, Commit: strings.Repeat("a", 40), URL: "file:///fixture"}
	// No engine: every case must fail before the build reaches Docker.
	b := &build.Builder{Installation: "security-test"}
	for _, p := range append(payloads, "escape/passwd", "/etc/passwd") {
		_, err := b.Build(context.Background(), build.BuildRequest{Checkout: co, Dockerfile: p})
		c.check(t, buildField(err, "dockerfile"), "Dockerfile %q: %v", p, err)
		_, err = b.Build(context.Background(), build.BuildRequest{Checkout: co, Context: p})
		c.check(t, buildField(err, "context"), "build context %q: %v", p, err)
	}
}

// normalize is what an HTML parser does to text: CRLF becomes LF and NUL
// becomes U+FFFD.
func normalize(s string) string {
	return strings.NewReplacer("\r\n", "\n", "\r", "\n", "\x00", "\uFFFD").Replace(s)
}

// shownVerbatim says whether the page shows p as text and nowhere as markup.
func shownVerbatim(pg page, sel *goquery.Selection, p string) bool {
	if pg.doc == nil || !strings.Contains(normalize(sel.Text()), normalize(p)) {
		return false
	}
	return !strings.Contains(p, "<") || !strings.Contains(pg.body, p)
}

func hostileHTTP(t *testing.T, c *tally, payloads []string) {
	s := newSite(t)
	for _, p := range payloads {
		// Team names are free text: created and shown escaped, or refused.
		r := s.post(t, "/teams", url.Values{"team": {p}})
		switch r.status {
		case 303:
			pg := s.get(t, "/applications")
			c.check(t, shownVerbatim(pg, pg.testid("current-team"), p), "team name %q shown as %q", p, pg.testid("current-team").Text())
		case 422:
			c.check(t, r.testid("error-team").Text() != "", "team name %q refused without a field error", p)
		default:
			c.check(t, false, "team name %q: status %d", p, r.status)
		}

		// Token names: the same, in the token list.
		r = s.post(t, "/tokens", url.Values{"name": {p}, "scopes": {"apps:read"}})
		switch r.status {
		case 201, 303:
			pg := s.get(t, "/tokens")
			c.check(t, shownVerbatim(pg, pg.testid("token-list"), p), "token name %q not shown verbatim", p)
		case 422:
			c.check(t, r.testid("error-name").Text() != "", "token name %q refused without a field error", p)
		default:
			c.check(t, false, "token name %q: status %d", p, r.status)
		}

		// The first-run form checks the team name before it finds the
		// installation set up (a redirect to the login page).
		r = s.post(t, "/setup", url.Values{"email": {"first@example.com"}, "team": {p}, "password": {"correct horse battery"}})
		c.check(t, r.status == 303 || r.status == 422 && r.testid("error-team").Text() != "", "setup team name %q: status %d", p, r.status)
		r = s.post(t, "/setup", url.Values{"email": {p}, "team": {"Acme"}, "password": {"correct horse battery"}})
		c.check(t, r.status == 422 && r.testid("error-email").Text() != "", "setup e-mail %q: status %d", p, r.status)

		// Log-in e-mails are looked up, never stored: a wrong address is
		// refused or fails like a wrong password, never with a 500.
		r = s.post(t, "/login", url.Values{"email": {p}, "password": {"correct horse battery"}})
		c.check(t, r.status == 401 || r.status == 429 || r.status == 422 && r.testid("error-email").Text() != "", "login e-mail %q: status %d", p, r.status)

		// API tokens: created and listed verbatim, or refused naming the field.
		a := s.api(t, "POST", "/api/v1/tokens", `{"name":`+jsonString(p)+`,"scopes":["apps:read"]}`)
		switch a.status {
		case 201:
			c.check(t, strings.Contains(s.api(t, "GET", "/api/v1/tokens", "").raw, jsonString(strings.TrimSpace(p))[1:]), "API token name %q not listed verbatim", p)
		default:
			c.check(t, a.status == 422 && a.field() == "name" && a.code() != "", "API token name %q: %s", p, a.raw)
		}

		// Invitation e-mails must be addresses.
		r = s.post(t, "/members/invitations", url.Values{"email": {p}, "role": {"member"}})
		c.check(t, r.status == 422 && r.testid("error-email").Text() != "", "invitation e-mail %q: status %d", p, r.status)
		r = s.post(t, "/members/invitations", url.Values{"email": {"x@example.com"}, "role": {p}})
		c.check(t, r.status == 422 && r.testid("error-role").Text() != "", "invitation role %q: status %d", p, r.status)

		// The JSON API: application names are refused naming the field.
		a = s.api(t, "POST", "/api/v1/applications", `{"name":`+jsonString(p)+`}`)
		c.check(t, a.status == 422 && a.field() == "name" && a.code() != "", "API application name %q: %s", p, a.raw)

		// A git source naming a file:// repository is refused by the
		// API's apply while [git] allow_file_urls is off (the default).
		if strings.HasPrefix(p, "file://") {
			doc := `{"api_version":"slipway.dev/v1alpha1","kind":"Application","metadata":{"name":"files"},"spec":{"services":[` +
				`{"name":"web","source":{"type":"git","repository":{"url":` + jsonString(p) + `,"branch":"main"},"build":{"type":"docker"}}}]}}`
			a := s.api(t, "POST", "/api/v1/applications/apply", doc)
			c.check(t, a.status == 422 && strings.Contains(a.raw, `"file_url_disabled"`) && strings.Contains(a.raw, "spec.services[0].source.repository.url"),
				"API apply of a file:// repository %q: %s", p, a.raw)
		}

		// Unknown JSON keys are refused, naming the key.
		a = s.api(t, "POST", "/api/v1/applications", `{"name":"ok",`+jsonString(p)+`:1}`)
		c.check(t, a.status == 400 && a.code() == "field_unknown", "API unknown key %q: %s", p, a.raw)
	}
}

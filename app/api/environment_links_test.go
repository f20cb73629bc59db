package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// deployed records a succeeded deployment of the application's environment
// that ran doc (which uses no variables), with its spec hash, as the worker
// would.
func (b *deployBundle) deployed(t *testing.T, appName, envName, doc string) {
	t.Helper()
	ctx := context.Background()
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := manifest.SpecHash(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	app, err := b.st.GetApplicationByName(ctx, b.team.ID, appName)
	if err != nil {
		t.Fatal(err)
	}
	env, err := b.st.GetEnvironmentByName(ctx, b.team.ID, app.ID, envName)
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.st.CreateDeployment(ctx, b.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	advance(t, b.st, b.team.ID, d.ID, store.StateCapturing)
	if _, err := b.st.RecordCapture(ctx, b.team.ID, d.ID, store.Capture{Manifest: raw, Rendered: raw, Variables: json.RawMessage(`{}`), SpecHash: hash}); err != nil {
		t.Fatal(err)
	}
	advance(t, b.st, b.team.ID, d.ID, store.StatePreparing, store.StateRollingOut, store.StateSucceeded)
}

func (b *deployBundle) links(t *testing.T, app, env string) api.EnvironmentLinks {
	t.Helper()
	r := b.do(t, b.viewer, http.MethodGet, "/api/v1/applications/"+app+"/environments/"+env+"/links", "", nil)
	want(t, r, http.StatusOK, "")
	var l api.EnvironmentLinks
	mustDecode(t, r, &l)
	return l
}

func TestEnvironmentLinks_FollowWhatIsDeployed(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	const envs = "\n[spec.environments.production]\n[spec.environments.staging]\n"
	auth := `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "auth"
[[spec.services]]
name = "api"
[spec.services.source]
type = "image"
image = "example.com/auth:1"
[[spec.exports]]
service = "api"
applications = ["notes"]
` + envs
	importing := notes + "\n[[spec.imports]]\napplication = \"auth\"\nservice = \"api\"\n" + envs
	want(t, b.apply(t, auth, ""), http.StatusCreated, "")
	want(t, b.apply(t, importing, ""), http.StatusCreated, "")

	// Saved but not deployed: nothing to report.
	if l := b.links(t, "notes", "production"); len(l.Imports) != 0 {
		t.Fatalf("a saved-only manifest reports imports: %+v", l)
	}

	b.deployed(t, "notes", "production", importing)
	l := b.links(t, "notes", "production")
	if len(l.Imports) != 1 || l.Imports[0].Reason != "not_exported" || l.Imports[0].Message == "" {
		t.Fatalf("import before auth deployed its export: %+v, want not_exported", l.Imports)
	}

	b.deployed(t, "auth", "production", auth)
	b.deployed(t, "notes", "staging", importing)
	l = b.links(t, "notes", "production")
	if len(l.Imports) != 1 || l.Imports[0].Reason != "" || l.Imports[0].Name != "api.auth" || l.Imports[0].Environment != "production" {
		t.Fatalf("import once both deployed: %+v, want it linked as api.auth", l.Imports)
	}
	// staging of auth never deployed: staging of notes connects nothing.
	if l := b.links(t, "notes", "staging"); len(l.Imports) != 1 || l.Imports[0].Reason != "not_exported" {
		t.Fatalf("staging import: %+v, want not_exported", l.Imports)
	}
	// Planning the manifest again warns for staging only.
	m, err := manifest.Decode([]byte(importing), "toml")
	if err != nil {
		t.Fatal(err)
	}
	app, err := b.st.GetApplicationByName(context.Background(), b.team.ID, "notes")
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := service.PlanWarnings(context.Background(), b.st, b.team.ID, app.ID, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || warnings[0].Code != "import_unconnected" || warnings[0].Path != "spec.imports[0]" || !strings.HasPrefix(warnings[0].Message, "environment staging: ") {
		t.Fatalf("plan warnings %+v, want import_unconnected for staging only", warnings)
	}
	l = b.links(t, "auth", "production")
	if len(l.Importers) != 1 || l.Importers[0].Application != "notes" || l.Importers[0].Environment != "production" || l.Importers[0].Service != "api" {
		t.Fatalf("auth's importers: %+v, want notes production", l.Importers)
	}
}

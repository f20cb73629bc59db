package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

const promotedApp = header + `
[spec.variables]
origin = "https://notes.example"
[spec.environments.staging]
variables = { origin = "https://staging.notes.example" }
[spec.environments.production]
promote_from = "staging"
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "example.com/notes:1"
`

// promotionBundle is an application with staging and a production that
// promotes from it.
type promotionBundle struct {
	*applyBundle
	app store.Application
}

func setupPromotion(t *testing.T, doc string) *promotionBundle {
	t.Helper()
	b := setupApply(t)
	res, err := b.apply(t, doc, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &promotionBundle{applyBundle: b, app: res.Application}
}

func (b *promotionBundle) env(t *testing.T, name string) store.Environment {
	t.Helper()
	e, err := b.st.GetEnvironmentByName(context.Background(), b.actor.TeamID, b.app.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// deploy records a deployment of the environment as the worker would:
// captured (the current revision rendered for it), prepared (one image)
// and finished in state final.
func (b *promotionBundle) deploy(t *testing.T, envName string, final store.DeploymentState) store.Deployment {
	t.Helper()
	ctx, team := context.Background(), b.actor.TeamID
	env := b.env(t, envName)
	rev, err := b.st.GetCurrentManifestRevision(ctx, team, b.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(rev.Manifest, "json")
	if err != nil {
		t.Fatal(err)
	}
	rendered, errs := manifest.Render(m, manifest.RenderContext{Environment: env.Name, Slug: env.Slug})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	renderedJSON, _ := json.Marshal(rendered)
	d, err := b.st.CreateDeployment(ctx, team, store.DeploymentParams{EnvironmentID: env.ID, Revision: rev.Revision, Origin: store.OriginBuild, Actor: "user:test"})
	if err != nil {
		t.Fatal(err)
	}
	move := func(from, to store.DeploymentState) {
		t.Helper()
		if _, err := b.st.TransitionDeployment(ctx, team, d.ID, []store.DeploymentState{from}, to); err != nil {
			t.Fatal(err)
		}
	}
	move(store.StateRequested, store.StateCapturing)
	if _, err := b.st.RecordCapture(ctx, team, d.ID, store.Capture{Manifest: rev.Manifest, Rendered: renderedJSON, Variables: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	steps := `[{"name":"capture","state":"succeeded"},{"name":"prepare","state":"succeeded","detail":{"web":"example.com/notes:1","id:web":"sha256:` + strings.Repeat("a", 64) + `"}}]`
	if err := b.st.SetDeploymentSteps(ctx, team, d.ID, json.RawMessage(steps)); err != nil {
		t.Fatal(err)
	}
	move(store.StateCapturing, store.StatePreparing)
	switch final {
	case store.StateSucceeded:
		move(store.StatePreparing, store.StateRollingOut)
		move(store.StateRollingOut, store.StateSucceeded)
	case store.StateFailed:
		if _, err := b.st.FailDeployment(ctx, team, d.ID, "test_failed", "failed on purpose"); err != nil {
			t.Fatal(err)
		}
	}
	if d, err = b.st.GetDeployment(ctx, team, d.ID); err != nil {
		t.Fatal(err)
	}
	return d
}

func (b *promotionBundle) promote(t *testing.T, env string, opts service.PromoteOptions) (service.PromotionResult, error) {
	t.Helper()
	return service.PromoteEnvironment(context.Background(), b.st, b.actor, b.enqueue, b.app.ID, env, opts)
}

// codes returns every precondition code err carries.
func codes(err error) []string {
	var pe *service.PromotionError
	if errors.As(err, &pe) {
		var out []string
		for _, p := range pe.Problems {
			out = append(out, p.Code)
		}
		return out
	}
	var ie *service.InputError
	if errors.As(err, &ie) {
		return []string{ie.Code}
	}
	var nf *service.NotFoundError
	if errors.As(err, &nf) {
		return []string{nf.Code}
	}
	return nil
}

func wantCodes(t *testing.T, err error, want ...string) {
	t.Helper()
	got := codes(err)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("codes = %v (err %v), want %v", got, err, want)
	}
}

func (b *promotionBundle) deploymentCount(t *testing.T) int {
	t.Helper()
	ds, err := b.st.ListDeployments(context.Background(), b.actor.TeamID, store.DeploymentFilter{ApplicationID: b.app.ID})
	if err != nil {
		t.Fatal(err)
	}
	return len(ds)
}

func TestPromoteEnvironment_PromotesTheSourcesCurrentDeployment(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	src := b.deploy(t, "staging", store.StateSucceeded)
	before := b.deploymentCount(t)

	planned, err := b.promote(t, "production", service.PromoteOptions{Plan: true})
	if err != nil {
		t.Fatal(err)
	}
	if planned.Deployment != nil || len(b.queued) != 0 || b.deploymentCount(t) != before {
		t.Fatalf("a plan changed something: %+v, queued %v", planned.Deployment, b.queued)
	}
	p := planned.Plan
	if p.SourceEnvironment != "staging" || p.SourceDeployment != src.ID || p.ReleaseID != src.ID || len(p.Problems) != 0 {
		t.Fatalf("plan = %+v", p)
	}
	if len(p.Images) != 1 || p.Images[0].Service != "web" || !strings.HasPrefix(p.Images[0].ImageID, "sha256:") {
		t.Fatalf("plan images = %+v", p.Images)
	}
	if len(p.Changes) == 0 {
		t.Fatal("a first promotion shows no changes against an empty environment")
	}

	res, err := b.promote(t, "production", service.PromoteOptions{DeploymentID: src.ID})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Deployment
	if d == nil || d.Origin != store.OriginPromotion || d.PromotedFrom != src.ID || d.EnvironmentID != b.env(t, "production").ID {
		t.Fatalf("promotion deployment = %+v", d)
	}
	if len(b.queued) != 1 || b.queued[0].DeploymentID != d.ID {
		t.Fatalf("queued = %+v", b.queued)
	}
	rels, err := b.st.ListReleases(context.Background(), b.actor.TeamID, b.app.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 1 || rels[0].ID != src.ID || rels[0].EnvironmentName != "staging" ||
		len(rels[0].Receivers) != 1 || rels[0].Receivers[0].DeploymentID != d.ID || rels[0].Receivers[0].EnvironmentName != "production" {
		t.Fatalf("releases = %+v", rels)
	}

	// The promotion is live: another one is refused until it finishes.
	_, err = b.promote(t, "production", service.PromoteOptions{})
	wantCodes(t, err, "application_busy")
}

func TestPromoteEnvironment_RefusesUnpromotedAndUnreadySources(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	_, err := b.promote(t, "staging", service.PromoteOptions{})
	wantCodes(t, err, "environment_not_promoted")

	_, err = b.promote(t, "production", service.PromoteOptions{})
	wantCodes(t, err, "promotion_source_not_ready")

	ok := b.deploy(t, "staging", store.StateSucceeded)
	b.deploy(t, "staging", store.StateFailed)
	_, err = b.promote(t, "production", service.PromoteOptions{})
	wantCodes(t, err, "promotion_source_not_ready")

	// --release works for any environment, including an unpromoted one.
	res, err := b.promote(t, "staging", service.PromoteOptions{ReleaseID: ok.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deployment.Origin != store.OriginRelease || res.Deployment.PromotedFrom != ok.ID {
		t.Fatalf("release deployment = %+v", res.Deployment)
	}
	_, err = b.promote(t, "production", service.PromoteOptions{ReleaseID: "dep_unknown"})
	wantCodes(t, err, "release_unknown")
	if b.deploymentCount(t) != 3 {
		t.Fatalf("refused promotions created deployments: %d", b.deploymentCount(t))
	}
}

func TestPromoteEnvironment_SourceChanged(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	reviewed := b.deploy(t, "staging", store.StateSucceeded)
	b.deploy(t, "staging", store.StateSucceeded)
	_, err := b.promote(t, "production", service.PromoteOptions{DeploymentID: reviewed.ID})
	wantCodes(t, err, "promotion_source_changed")
}

// movingInspector deploys the source again the first time it is asked,
// between the checks and acceptance.
type movingInspector struct {
	b     *promotionBundle
	t     *testing.T
	moved bool
}

func (m *movingInspector) ImagePresent(context.Context, string) (bool, error) {
	if !m.moved {
		m.moved = true
		m.b.deploy(m.t, "staging", store.StateSucceeded)
	}
	return true, nil
}

func TestPromoteEnvironment_AcceptanceChecksTheSourceAgain(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	b.deploy(t, "staging", store.StateSucceeded)
	before := b.deploymentCount(t)
	_, err := b.promote(t, "production", service.PromoteOptions{Images: &movingInspector{b: b, t: t}})
	wantCodes(t, err, "promotion_source_changed")
	if n := b.deploymentCount(t); n != before+1 || len(b.queued) != 0 {
		t.Fatalf("a refused promotion saved something: %d deployments (want %d), queued %v", n, before+1, b.queued)
	}
}

type absentImages struct{}

func (absentImages) ImagePresent(context.Context, string) (bool, error) { return false, nil }

type missingSecrets struct{}

func (missingSecrets) SecretIssues(context.Context, string, store.Environment, *manifest.Manifest) ([]service.SecretIssue, error) {
	return []service.SecretIssue{{Code: "secret_missing", Names: []string{"db", "smtp"}}}, nil
}

func TestPromoteEnvironment_ReportsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	// The build argument renders from a per-environment variable, so the
	// release built in staging cannot run in production.
	doc := strings.Replace(promotedApp, `[spec.services.source]
type = "image"
image = "example.com/notes:1"`, `[spec.services.source]
type = "git"
repository = { url = "https://example.com/notes.git", branch = "main" }
[spec.services.source.build]
type = "docker"
args = { ORIGIN = "${{ vars.origin }}" }`, 1)
	b := setupPromotion(t, doc)
	b.deploy(t, "staging", store.StateSucceeded)
	opts := service.PromoteOptions{Images: absentImages{}, Secrets: missingSecrets{}}
	_, err := b.promote(t, "production", opts)
	wantCodes(t, err, "release_incompatible", "image_unavailable", "secrets_unavailable")
	var ie *service.InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Message, "build.args.ORIGIN") || !strings.Contains(ie.Message, "db, smtp") {
		t.Fatalf("input error = %+v", ie)
	}
	opts.Plan = true
	res, err := b.promote(t, "production", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Problems) != 3 || len(res.Plan.Secrets) != 1 || res.Plan.Images[0].Present == nil || *res.Plan.Images[0].Present {
		t.Fatalf("plan = %+v", res.Plan)
	}
}

func TestSetEnvironmentSource(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx := context.Background()
	set := func(env string, o service.SourceOptions) (store.Environment, error) {
		return service.SetEnvironmentSource(ctx, b.st, b.actor, b.app.ID, env, o)
	}
	_, err := set("production", service.SourceOptions{Tracking: true})
	wantCodes(t, err, "environment_declared")

	for _, name := range []string{"canary", "qa"} {
		if _, err := b.st.CreateEnvironment(ctx, b.actor.TeamID, store.EnvironmentParams{ApplicationID: b.app.ID, Kind: store.KindEnvironment, Name: name, Slug: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.st.CreateEnvironment(ctx, b.actor.TeamID, store.EnvironmentParams{ApplicationID: b.app.ID, Kind: store.KindPreview, Name: "pr-1", Slug: "pr-1", Branch: "feature"}); err != nil {
		t.Fatal(err)
	}
	_, err = set("canary", service.SourceOptions{PromoteFrom: "pr-1"})
	wantCodes(t, err, "promotion_source_invalid")
	_, err = set("canary", service.SourceOptions{PromoteFrom: "nowhere"})
	wantCodes(t, err, "promotion_source_invalid")
	_, err = set("canary", service.SourceOptions{PromoteFrom: "canary"})
	wantCodes(t, err, "promotion_cycle")

	canary, err := set("canary", service.SourceOptions{PromoteFrom: "staging"})
	if err != nil {
		t.Fatal(err)
	}
	if canary.PromoteFrom != b.env(t, "staging").ID {
		t.Fatalf("canary promotes from %q", canary.PromoteFrom)
	}
	if _, err := set("qa", service.SourceOptions{PromoteFrom: "canary"}); err != nil {
		t.Fatal(err)
	}
	_, err = set("canary", service.SourceOptions{PromoteFrom: "qa"})
	wantCodes(t, err, "promotion_cycle")

	// A chain: qa promotes what canary received from staging.
	src := b.deploy(t, "staging", store.StateSucceeded)
	res, err := b.promote(t, "canary", service.PromoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := b.st.ReleaseOf(ctx, b.actor.TeamID, res.Deployment.ID)
	if err != nil || rel.ID != src.ID {
		t.Fatalf("release of the canary promotion = %+v, %v", rel.ID, err)
	}
	// The promotion is still requested: the source may not change under it.
	_, err = set("canary", service.SourceOptions{Tracking: true})
	wantCodes(t, err, "application_busy")
	if _, err := service.CancelDeployment(ctx, b.st, b.actor, b.enqueue, res.Deployment.ID); err != nil {
		t.Fatal(err)
	}
	tracked, err := set("canary", service.SourceOptions{Tracking: true})
	if err != nil || tracked.PromoteFrom != "" {
		t.Fatalf("tracking: %+v, %v", tracked, err)
	}
}

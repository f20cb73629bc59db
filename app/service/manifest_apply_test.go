package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

type applyBundle struct {
	st     *store.Store
	actor  service.Actor
	queued []jobs.DeployArgs
}

func setupApply(t *testing.T) *applyBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	team, err := st.CreateTeam(ctx, "Apply", "apply-team")
	if err != nil {
		t.Fatal(err)
	}
	return &applyBundle{st: st, actor: service.Actor{TeamID: team.ID, UserID: "usr_test"}}
}

func (b *applyBundle) enqueue(_ context.Context, _ *store.Store, args river.JobArgs) error {
	if d, ok := args.(jobs.DeployArgs); ok {
		b.queued = append(b.queued, d)
	}
	return nil
}

func (b *applyBundle) apply(t *testing.T, doc string, opts service.ApplyOptions) (service.ApplyResult, error) {
	t.Helper()
	return service.ApplyManifest(context.Background(), b.st, b.actor, b.enqueue, []byte(doc), opts)
}

const header = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "notes"
`

const webService = `
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "example.com/notes:1"
`

func TestApplyManifest_CreatesApplicationRevisionAndProduction(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	res, err := b.apply(t, header+webService, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Revision.Revision != 1 || len(res.CreatedEnvironments) != 1 || res.CreatedEnvironments[0] != "production" {
		t.Fatalf("first apply: %+v", res)
	}
	if len(b.queued) != 0 || len(res.Deployments) != 0 {
		t.Fatalf("apply without deploy queued deployments: %v", b.queued)
	}
	again, err := b.apply(t, header+webService, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Unchanged || again.Revision.Revision != 1 {
		t.Fatalf("applying the same manifest again saved a revision: %+v", again.Revision)
	}
	changed := strings.Replace(header+webService, "notes:1", "notes:2", 1)
	third, err := b.apply(t, changed, service.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	if third.Revision.Revision != 2 || len(third.Deployments) != 1 || len(b.queued) != 1 || b.queued[0].DeploymentID != third.Deployments[0].ID {
		t.Fatalf("apply --deploy: revision %d, deployments %v, queued %v", third.Revision.Revision, third.Deployments, b.queued)
	}
}

func TestApplyManifest_InvalidSavesNothing(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	doc := header + webService + "\n[[spec.routes]]\nhostname = \"bad host\"\nservice = \"nope\"\nport = 80\n"
	_, err := b.apply(t, doc, service.ApplyOptions{Deploy: true})
	var me *service.ManifestError
	if !errors.As(err, &me) || len(me.Errors) < 2 {
		t.Fatalf("want every validation error, got %v", err)
	}
	for _, e := range me.Errors {
		if e.Path == "" || e.Code == "" || e.Line == 0 {
			t.Errorf("error without path, code or line: %+v", e)
		}
	}
	if _, err := b.st.GetApplicationByName(context.Background(), b.actor.TeamID, "notes"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an invalid manifest created the application: %v", err)
	}
}

func TestApplyManifest_DeclaredEnvironmentsConverge(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	doc := header + webService + `
[spec.environments.staging]
[spec.environments.production]
promote_from = "staging"
rollback = "automatic"
`
	res, err := b.apply(t, doc, service.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.CreatedEnvironments, ",") != "production,staging" {
		t.Fatalf("created %v", res.CreatedEnvironments)
	}
	// Promoted environments wait for a promotion: only staging deploys.
	if len(res.Deployments) != 1 {
		t.Fatalf("deployments %v, want staging's only", res.Deployments)
	}
	staging, err := b.st.GetEnvironmentByName(ctx, b.actor.TeamID, res.Application.ID, "staging")
	if err != nil {
		t.Fatal(err)
	}
	prod, err := b.st.GetEnvironmentByName(ctx, b.actor.TeamID, res.Application.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	if prod.PromoteFrom != staging.ID || prod.Rollback != "automatic" {
		t.Fatalf("production promote_from %q rollback %q, want %q automatic", prod.PromoteFrom, prod.Rollback, staging.ID)
	}
	if _, err := service.RequestDeployment(ctx, b.st, b.actor, b.enqueue, res.Application.ID, "production"); !isInputCode(err, "environment_promoted") {
		t.Fatalf("deploying a promoted environment: %v", err)
	}

	// Dropping the production block keeps the environment and reports it;
	// the previous block set its source, so it returns to the default.
	res, err = b.apply(t, header+webService+"\n[spec.environments.staging]\n", service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Undeclared, ",") != "production" {
		t.Fatalf("undeclared %v, want production", res.Undeclared)
	}
	if _, err := b.st.GetEnvironmentByName(ctx, b.actor.TeamID, res.Application.ID, "production"); err != nil {
		t.Fatalf("an undeclared environment was deleted: %v", err)
	}
}

func TestApplyManifest_ExpectedRevisionConflict(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	if _, err := b.apply(t, header+webService, service.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.apply(t, strings.Replace(header+webService, ":1", ":2", 1), service.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := int64(1)
	_, err := b.apply(t, strings.Replace(header+webService, ":1", ":3", 1), service.ApplyOptions{ExpectedRevision: &stale})
	if !isInputCode(err, "generation_conflict") {
		t.Fatalf("saving over revision 2 while expecting 1: %v", err)
	}
}

func isInputCode(err error, code string) bool {
	var ie *service.InputError
	return errors.As(err, &ie) && ie.Code == code
}

package service_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// rolloutByVariable mounts a writable volume and takes its rollout order
// from a variable that only production sets to start-first.
// It is the fixture the offline plan's test (cmd/slipway) reads too.
func rolloutByVariable(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../manifest/testdata/warnings/rollout_by_variable.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Apply and field edits judge rollout_start_first_writable_volume per
// environment, with the environment's own variable values: the
// unrendered manifest has no start-first, production's rendering does.
func TestApplyManifest_WarningsHonourEnvironmentVariables(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	startFirst := func(ws manifest.Errors) []string {
		var out []string
		for _, w := range ws {
			if w.Code == "rollout_start_first_writable_volume" {
				target, _, _ := strings.Cut(w.Message, ":")
				out = append(out, w.Path+": "+target)
			}
		}
		return out
	}
	res, err := b.apply(t, rolloutByVariable(t), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := startFirst(res.Warnings); len(w) != 1 || w[0] != "spec.services[0].rollout.order: environment production" {
		t.Fatalf("apply warnings %q, want rollout_start_first_writable_volume for production only", w)
	}
	edit, err := service.EditVariable(context.Background(), b.st, b.actor, res.Application.ID,
		service.VariableEdit{Name: "order", Environment: "staging", Value: new(manifest.StringValue("start-first"))})
	if err != nil {
		t.Fatal(err)
	}
	res, err = service.EditManifest(context.Background(), b.st, b.actor, b.enqueue, res.Application.ID, nil, edit, false)
	if err != nil {
		t.Fatal(err)
	}
	if w := startFirst(res.Warnings); len(w) != 2 {
		t.Fatalf("warnings after staging's edit %q, want production and staging", w)
	}
	edit, err = service.EditVariable(context.Background(), b.st, b.actor, res.Application.ID,
		service.VariableEdit{Name: "order", Environment: "production", Value: new(manifest.StringValue("stop-first"))})
	if err != nil {
		t.Fatal(err)
	}
	res, err = service.EditManifest(context.Background(), b.st, b.actor, b.enqueue, res.Application.ID, nil, edit, false)
	if err != nil {
		t.Fatal(err)
	}
	if w := startFirst(res.Warnings); len(w) != 1 || w[0] != "spec.services[0].rollout.order: environment staging" {
		t.Fatalf("warnings after production's edit %q, want staging only", w)
	}
}

// A promotion plan renders the release for the target with the target's
// variables, so start-first in production alone warns there.
func TestPromoteEnvironment_PlanWarnsWithTargetVariables(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(rolloutByVariable(t), "[spec.environments.staging]\n", "[spec.environments.staging]\n[spec.environments.production]\npromote_from = \"staging\"\n", 1)
	b := setupPromotion(t, doc)
	b.deploy(t, "staging", store.StateSucceeded)
	res, err := b.promote(t, "production", service.PromoteOptions{Plan: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range res.Plan.Warnings {
		got = append(got, w.Code+" "+w.Path+" "+w.Message)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "rollout_start_first_writable_volume spec.services[0].rollout.order environment production: ") {
		t.Fatalf("promotion plan warnings %q, want start-first for production", got)
	}
}

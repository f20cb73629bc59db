package service_test

import (
	"context"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
)

// TestEnvironmentSourceEdits_RefuseDeclaredSource: env branch and env sync
// refuse an environment whose block sets its source, keep working for one
// whose block sets none, and sync needs a manifest repository.
func TestEnvironmentSourceEdits_RefuseDeclaredSource(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx := context.Background()

	_, err := service.SetEnvironmentBranch(ctx, b.st, b.actor, b.app.ID, "production", "release", "")
	wantCodes(t, err, "environment_declared")
	_, err = service.SetEnvironmentSync(ctx, b.st, b.actor, b.app.ID, "production", true)
	wantCodes(t, err, "environment_declared")
	if env := b.env(t, "production"); env.Branch == "release" || env.Sync {
		t.Fatalf("refused edits changed production: branch %q sync %v", env.Branch, env.Sync)
	}

	_, err = service.SetEnvironmentSync(ctx, b.st, b.actor, b.app.ID, "staging", true)
	wantCodes(t, err, "manifest_repository_required")
	if _, err := service.SetEnvironmentSync(ctx, b.st, b.actor, b.app.ID, "staging", false); err != nil {
		t.Fatalf("sync off for staging: %v", err)
	}
	env, err := service.SetEnvironmentBranch(ctx, b.st, b.actor, b.app.ID, "staging", "release", "")
	if err != nil || env.Branch != "release" {
		t.Fatalf("branch of staging (its block sets no source): %q %v", env.Branch, err)
	}
}

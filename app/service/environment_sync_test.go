package service_test

import (
	"context"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
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
	// Its block sets no source, so only the missing repository refuses it.
	_, err = service.SetEnvironmentBranch(ctx, b.st, b.actor, b.app.ID, "staging", "release", "")
	wantCodes(t, err, "manifest_repository_required")
}

// TestSetEnvironmentBranchSync_AllOrNothing: the dashboard's branch and
// sync save changes both, recording each one's event, or, when either is
// refused, neither: a branch is not kept when sync then fails.
func TestSetEnvironmentBranchSync_AllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	save := func(b *promotionBundle, env, branch string, sync bool) error {
		_, err := service.SetEnvironmentBranchSync(ctx, b.st, b.actor, b.app.ID, env, branch, sync)
		return err
	}

	repo := setupPromotion(t, header+`
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://example.com/notes.git", branch = "main" }
`)
	qa := repo.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "qa", Branch: "main", Commit: "0123456789012345678901234567890123456789"})
	wantCodes(t, save(repo, "qa", "bad..name", true), "branch_invalid")
	if env := repo.env(t, "qa"); env.Branch != "main" || env.Sync {
		t.Fatalf("refused save changed qa: branch %q sync %v", env.Branch, env.Sync)
	}
	if err := save(repo, "qa", "release", true); err != nil {
		t.Fatal(err)
	}
	if env := repo.env(t, "qa"); env.Branch != "release" || env.Commit != "" || !env.Sync {
		t.Fatalf("qa after the save: branch %q commit %q sync %v, want release, unpinned, sync on", env.Branch, env.Commit, env.Sync)
	}
	events, err := repo.st.ListEvents(ctx, repo.actor.TeamID, store.EventFilter{ObjectID: qa.ID})
	if err != nil {
		t.Fatal(err)
	}
	verbs := map[string]int{}
	for _, e := range events {
		verbs[e.Verb]++
	}
	if verbs["environment.branch_set"] != 1 || verbs["environment.sync"] != 1 {
		t.Fatalf("events %v, want one environment.branch_set and one environment.sync", verbs)
	}
}

// TestSetEnvironmentBranchSync_SyncRefusedKeepsBranch: without a manifest
// repository (as for a form sent before the repository was disconnected)
// the save is refused and changes neither the branch nor sync.
// Its store is a pool, not a test transaction whose savepoints nest
// whatever the code does: each transaction commits for real.
func TestSetEnvironmentBranchSync_SyncRefusedKeepsBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	team, err := st.CreateTeam(ctx, "Apply", "apply-team")
	if err != nil {
		t.Fatal(err)
	}
	ab := &applyBundle{st: st, actor: service.Actor{TeamID: team.ID, UserID: "usr_test"}}
	res, err := ab.apply(t, promotedApp, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := &promotionBundle{applyBundle: ab, app: res.Application}
	_, err = service.SetEnvironmentBranchSync(ctx, b.st, b.actor, b.app.ID, "staging", "release", true)
	wantCodes(t, err, "manifest_repository_required")
	if env := b.env(t, "staging"); env.Branch != "" || env.Sync {
		t.Fatalf("refused save changed staging: branch %q sync %v", env.Branch, env.Sync)
	}
}

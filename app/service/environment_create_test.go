package service_test

import (
	"context"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

func TestCreateEnvironment_CreatesUndeclaredAndRefuses(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx := context.Background()
	create := func(name string, opts service.CreateOptions) (store.Environment, error) {
		return service.CreateEnvironment(ctx, b.st, b.actor, b.app.ID, name, opts)
	}

	env, err := create("qa", service.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if env.Name != "qa" || env.Slug != "qa" || env.Kind != store.KindEnvironment {
		t.Fatalf("created %+v", env)
	}
	if n := b.deploymentCount(t); n != 0 {
		t.Errorf("creating deployed something: %d deployments", n)
	}

	_, err = create("staging", service.CreateOptions{})
	wantCodes(t, err, "environment_declared")
	_, err = create("qa", service.CreateOptions{})
	wantCodes(t, err, "environment_name_taken")
	_, err = create("Bad_Name", service.CreateOptions{})
	wantCodes(t, err, "name_invalid")
	// The saved manifest reads no repository: there is no branch to follow.
	_, err = create("feature", service.CreateOptions{Branch: "feature"})
	wantCodes(t, err, "manifest_repository_required")
}

// TestCreateEnvironment_Branch: an environment of a repository-backed
// application follows the branch it is created with (trimmed), or the
// default one (recorded as ""); an invalid git branch name is refused
// with branch_invalid and creates nothing.
func TestCreateEnvironment_Branch(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, header+`
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://example.com/notes.git", branch = "main" }
`)
	ctx := context.Background()
	create := func(name, branch string) (store.Environment, error) {
		return service.CreateEnvironment(ctx, b.st, b.actor, b.app.ID, name, service.CreateOptions{Branch: branch})
	}
	for _, bad := range []string{"bad..name", "-x", "feature/", "a b", "x.lock"} {
		_, err := create("qa", bad)
		wantCodes(t, err, "branch_invalid")
	}
	if b.exists(t, "qa") {
		t.Fatal("a refused branch created the environment")
	}
	qa, err := create("qa", " feature/login ")
	if err != nil {
		t.Fatal(err)
	}
	if got := b.env(t, "qa"); got.ID != qa.ID || got.Branch != "feature/login" {
		t.Fatalf("qa follows %q, want feature/login", got.Branch)
	}
	if edge, err := create("edge", ""); err != nil || edge.Branch != "" {
		t.Fatalf("edge without a branch: %q %v, want the default (\"\")", edge.Branch, err)
	}
}

func TestRenameEnvironment_Refusals(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, promotedApp)
	ctx := context.Background()
	rename := func(from, to string) (store.Environment, error) {
		return service.RenameEnvironment(ctx, b.st, b.actor, b.app.ID, from, to)
	}
	qa := b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "qa"})
	b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "edge"})
	b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindPreview, Name: "pv-feature", Slug: "pv-feature", Branch: "feature", Slot: "x"})

	_, err := rename("staging", "stage")
	wantCodes(t, err, "environment_declared")
	_, err = rename("qa", "production")
	wantCodes(t, err, "environment_declared")
	_, err = rename("qa", "edge")
	wantCodes(t, err, "environment_name_taken")
	_, err = rename("qa", "pv-feature")
	wantCodes(t, err, "environment_name_taken")
	_, err = rename("pv-feature", "other")
	wantCodes(t, err, service.CodeEnvironmentNotFound)
	_, err = rename("nowhere", "other")
	wantCodes(t, err, service.CodeEnvironmentNotFound)
	_, err = rename("qa", "-bad")
	wantCodes(t, err, "name_invalid")

	got, err := rename("qa", "testing")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != qa.ID || got.Name != "testing" || got.Slug != "testing" {
		t.Fatalf("renamed %+v, want id %s named testing", got, qa.ID)
	}
	if b.exists(t, "qa") {
		t.Error("the old name still resolves")
	}
	events, err := b.st.ListEvents(ctx, b.actor.TeamID, store.EventFilter{ObjectID: qa.ID})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events {
		found = found || e.Verb == "environment.rename"
	}
	if !found {
		t.Errorf("no environment.rename event among %+v", events)
	}
}

// For an application without a repository a block in the saved manifest
// declares its environment (environment_declared comes first); a
// repository-backed environment deploys the manifest last fetched from its
// own branch, whose blocks configure it without declaring it.
func TestRenameEnvironment_ConfiguredByFetchedManifest(t *testing.T) {
	t.Parallel()
	b := setupPromotion(t, header+`
[spec.manifest]
path = "slipway.toml"
repository = { url = "https://example.com/notes.git", branch = "main" }
`)
	ctx := context.Background()
	qa := b.addEnvironment(t, store.EnvironmentParams{Kind: store.KindEnvironment, Name: "qa", Branch: "qa"})
	fetch := func(doc string) {
		t.Helper()
		d, err := b.st.CreateDeployment(ctx, b.actor.TeamID, store.DeploymentParams{EnvironmentID: qa.ID, Revision: 1, Origin: store.OriginBuild, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.RecordDeploymentFetch(ctx, b.actor.TeamID, store.DeploymentFetch{
			DeploymentID: d.ID, RepositoryURL: "https://example.com/notes.git", Branch: "qa",
			Commit: "0123456789012345678901234567890123456789", ManifestPath: "slipway.toml", Manifest: []byte(doc),
		}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.TransitionDeployment(ctx, b.actor.TeamID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateCancelled); err != nil {
			t.Fatal(err)
		}
	}
	fetch(header + "[spec.environments.qa]\nvisibility = \"private\"\n")
	_, err := service.RenameEnvironment(ctx, b.st, b.actor, b.app.ID, "qa", "testing")
	wantCodes(t, err, "environment_configured")

	fetch(header + "[spec.environments.testing]\nvisibility = \"private\"\n")
	_, err = service.RenameEnvironment(ctx, b.st, b.actor, b.app.ID, "qa", "testing")
	wantCodes(t, err, "environment_configured")

	fetch(header)
	if _, err := service.RenameEnvironment(ctx, b.st, b.actor, b.app.ID, "qa", "testing"); err != nil {
		t.Fatalf("rename after the block left the fetched manifest: %v", err)
	}
}

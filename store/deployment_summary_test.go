package store_test

import (
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func init() { tenancyCovered["DeploymentSummaries"] = "TestStore_DeploymentSummaries" }

// TestStore_DeploymentSummaries reads the team's deployments by id and
// leaves another team's out, even when asked for by id.
func TestStore_DeploymentSummaries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mine, err := b.st.CreateDeployment(b.ctx, b.a.team.ID, store.DeploymentParams{EnvironmentID: b.a.env.ID, Revision: 0, Origin: store.OriginBuild})
	must(t, err)
	theirs, err := b.st.CreateDeployment(b.ctx, b.b.team.ID, store.DeploymentParams{EnvironmentID: b.b.env.ID, Origin: store.OriginBuild})
	must(t, err)
	got, err := b.st.DeploymentSummaries(b.ctx, b.a.team.ID, []string{mine.ID, theirs.ID, "dep_missing"})
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("summaries %+v, want team A's deployment alone", got)
	}
	s := got[mine.ID]
	if s.ApplicationID != b.a.app.ID || s.EnvironmentID != b.a.env.ID || s.State != store.StateRequested || s.Origin != store.OriginBuild {
		t.Fatalf("summary %+v", s)
	}
}

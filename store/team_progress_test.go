package store_test

import (
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func init() { tenancyCovered["GetTeamProgress"] = "TestStore_GetTeamProgress" }

// TestStore_GetTeamProgress reads each first step from the team's own
// state: another team's applications, deployments and tokens never tick it.
func TestStore_GetTeamProgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	empty, err := b.st.CreateTeam(b.ctx, "gamma", "gamma")
	must(t, err)
	// Team B gets deployed, tokens and a second member: none shows in gamma.
	d, err := b.st.CreateDeployment(b.ctx, b.b.team.ID, store.DeploymentParams{EnvironmentID: b.b.env.ID, Origin: store.OriginBuild})
	must(t, err)
	for _, to := range []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded} {
		d, err = b.st.TransitionDeployment(b.ctx, b.b.team.ID, d.ID, []store.DeploymentState{d.State}, to)
		must(t, err)
	}
	_, hash := secret(t)
	_, err = b.st.CreateAPIToken(b.ctx, b.b.team.ID, store.APITokenParams{Name: "ci", TokenHash: hash})
	must(t, err)
	must(t, b.st.AddMember(b.ctx, b.b.team.ID, b.a.owner.ID, store.RoleViewer))

	p, err := b.st.GetTeamProgress(b.ctx, empty.ID)
	must(t, err)
	if p != (store.TeamProgress{}) {
		t.Fatalf("an empty team's progress %+v", p)
	}
	p, err = b.st.GetTeamProgress(b.ctx, b.b.team.ID)
	must(t, err)
	if !p.Applications || !p.Deployed || !p.Tokens || !p.Teammates || p.Routed || p.GitHub || p.Done() {
		t.Fatalf("team B's progress %+v", p)
	}
}

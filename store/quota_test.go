package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestStore_Quotas: the defaults and a team's overrides round-trip, nil
// meaning "not set"; another team's overrides are its own.
func TestStore_Quotas(t *testing.T) {
	t.Parallel()
	// The defaults are one row for the installation: a database of the
	// test's own, so no other test's transaction waits on it.
	st := storetest.NewSchema(t)
	b := &testBundle{ctx: t.Context(), st: st}
	b.a, b.b = newTenant(t, b.ctx, st, "alpha"), newTenant(t, b.ctx, st, "beta")
	d, o, err := st.GetQuotas(b.ctx, b.a.team.ID)
	must(t, err)
	if d != (store.Quotas{}) || o != (store.Quotas{}) {
		t.Fatalf("fresh installation: defaults %+v overrides %+v, want none", d, o)
	}
	must(t, st.SetQuotaDefaults(b.ctx, store.Quotas{Applications: ptr[int64](5), ConcurrentDeployments: ptr[int64](2)}))
	must(t, st.SetQuotaDefaults(b.ctx, store.Quotas{Applications: ptr[int64](6), ConcurrentDeployments: ptr[int64](2)}))
	must(t, st.SetTeamQuotas(b.ctx, b.a.team.ID, store.Quotas{Applications: ptr[int64](1)}))
	d, o, err = st.GetQuotas(b.ctx, b.a.team.ID)
	must(t, err)
	if *d.Applications != 6 || *d.ConcurrentDeployments != 2 || d.Volumes != nil || *o.Applications != 1 || o.ConcurrentDeployments != nil {
		t.Fatalf("defaults %+v overrides %+v", d, o)
	}
	if _, o, _ := st.GetQuotas(b.ctx, b.b.team.ID); o != (store.Quotas{}) {
		t.Fatalf("team B sees team A's overrides: %+v", o)
	}
	if err := st.SetTeamQuotas(b.ctx, b.a.team.ID, store.Quotas{ConcurrentBuilds: ptr[int64](0)}); err == nil {
		t.Fatal("a concurrency quota of 0 was stored; nothing would ever run")
	}
}

// TestStore_DeploymentAndBuildSlots: a team holds at most max deployments
// (leases) and builds at once; a free one is taken again; other teams are
// not counted; an expired lease frees its slot.
func TestStore_DeploymentAndBuildSlots(t *testing.T) {
	t.Parallel()
	b := setup(t)
	newDep := func(team tenant) store.Deployment {
		env, err := b.st.CreateEnvironment(b.ctx, team.team.ID, store.EnvironmentParams{ApplicationID: team.app.ID, Kind: store.KindEnvironment,
			Name: "e" + randomSuffix(t), Slug: "e" + randomSuffix(t)})
		must(t, err)
		d, err := b.st.CreateDeployment(b.ctx, team.team.ID, store.DeploymentParams{EnvironmentID: env.ID, Origin: store.OriginBuild, Actor: "test"})
		must(t, err)
		return d
	}
	a1, a2, a3, bd := newDep(b.a), newDep(b.a), newDep(b.a), newDep(b.b)
	must(t, b.st.AcquireDeploymentSlot(b.ctx, b.a.team.ID, a1.ID, "w1", time.Minute, 2))
	must(t, b.st.AcquireDeploymentSlot(b.ctx, b.a.team.ID, a2.ID, "w2", time.Minute, 2))
	if err := b.st.AcquireDeploymentSlot(b.ctx, b.a.team.ID, a3.ID, "w3", time.Minute, 2); !errors.Is(err, store.ErrTeamBusy) {
		t.Fatalf("third deployment of a team limited to 2: %v, want ErrTeamBusy", err)
	}
	must(t, b.st.AcquireDeploymentSlot(b.ctx, b.b.team.ID, bd.ID, "w4", time.Minute, 1)) // another team's slots
	must(t, b.st.AcquireDeploymentSlot(b.ctx, b.a.team.ID, a1.ID, "w1", time.Minute, 2)) // renewing holds no new slot
	must(t, b.st.ReleaseDeploymentLease(b.ctx, b.a.team.ID, a2.ID, "w2"))
	must(t, b.st.AcquireDeploymentSlot(b.ctx, b.a.team.ID, a3.ID, "w3", time.Minute, 2))

	// Builds: a1 and a3 are held and preparing.
	for _, d := range []store.Deployment{a1, a3} {
		_, err := b.st.TransitionDeployment(b.ctx, b.a.team.ID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing)
		must(t, err)
		_, err = b.st.TransitionDeployment(b.ctx, b.a.team.ID, d.ID, []store.DeploymentState{store.StateCapturing}, store.StatePreparing)
		must(t, err)
	}
	must(t, b.st.ClaimBuildSlot(b.ctx, b.a.team.ID, a1.ID, 1))
	if err := b.st.ClaimBuildSlot(b.ctx, b.a.team.ID, a3.ID, 1); !errors.Is(err, store.ErrTeamBusy) {
		t.Fatalf("second build of a team limited to 1: %v, want ErrTeamBusy", err)
	}
	if c, _ := b.st.CountQuotaUse(b.ctx, b.a.team.ID); c.Deployments != 2 || c.Builds != 1 {
		t.Fatalf("use %+v, want 2 deployments and 1 build", c)
	}
	must(t, b.st.ReleaseBuildSlot(b.ctx, b.a.team.ID, a1.ID))
	must(t, b.st.ClaimBuildSlot(b.ctx, b.a.team.ID, a3.ID, 1))
	// A dead worker's expired lease frees its build slot too.
	must(t, b.st.AcquireDeploymentLease(b.ctx, b.a.team.ID, a3.ID, "w3", -time.Second))
	must(t, b.st.ClaimBuildSlot(b.ctx, b.a.team.ID, a1.ID, 1))
}

func randomSuffix(t *testing.T) string {
	s, _ := secret(t)
	return s[:8]
}

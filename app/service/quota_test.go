package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/summary"
)

// limit gives the team its own value of each quota in m.
func limit(t *testing.T, st *store.Store, teamID string, m map[quota.Name]int64) {
	t.Helper()
	if err := st.SetTeamQuotas(context.Background(), teamID, quota.Row(m)); err != nil {
		t.Fatal(err)
	}
}

// wantQuota checks err is quota_exceeded on quota q, naming its limit and
// the use, with details for the API.
func wantQuota(t *testing.T, err error, q quota.Name, limit, use int64) {
	t.Helper()
	var ie *service.InputError
	if !errors.As(err, &ie) || ie.Code != quota.Code {
		t.Fatalf("err = %v, want %s on %s", err, quota.Code, q)
	}
	if ie.Details["quota"] != string(q) || ie.Details["limit"] != limit || ie.Details["use"] != use {
		t.Fatalf("details %v, want quota %s, limit %d, use %d", ie.Details, q, limit, use)
	}
	for _, want := range []string{string(q), quota.Format(q, limit), quota.Format(q, use)} {
		if !strings.Contains(ie.Message, want) {
			t.Fatalf("message %q does not name %q", ie.Message, want)
		}
	}
}

func appManifest(name, extra string) string {
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q
%s
[[spec.services]]
name = "web"
replicas = 2
[spec.services.source]
type = "image"
image = "example.com/notes:1"
[spec.services.resources]
cpu_millis = 250
memory_bytes = 67108864
`, name, extra)
}

// TestQuota_SaveRefusedBeforeAnythingChanges: each counted quota and the
// resources a save would run refuse the save with quota_exceeded naming
// the quota, its limit and the use, and leave the team exactly as it was;
// with room left, the same save goes through.
func TestQuota_SaveRefusedBeforeAnythingChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		limits     map[quota.Name]int64
		first      string // saved before, within the quota
		doc        string
		q          quota.Name
		limit, use int64
	}{
		{"applications", map[quota.Name]int64{quota.Applications: 1}, appManifest("one", ""), appManifest("two", ""), quota.Applications, 1, 1},
		{"environments", map[quota.Name]int64{quota.Environments: 2}, "",
			appManifest("envs", "[spec.environments.a]\n[spec.environments.b]\n[spec.environments.c]\n"), quota.Environments, 2, 0},
		{"volumes", map[quota.Name]int64{quota.Volumes: 1}, appManifest("vols", "[[spec.volumes]]\nname = \"a\"\n"),
			appManifest("vols", "[[spec.volumes]]\nname = \"a\"\n[[spec.volumes]]\nname = \"b\"\n"), quota.Volumes, 1, 1},
		{"replicas", map[quota.Name]int64{quota.Replicas: 3}, "", appManifest("big", "[spec.environments.a]\n[spec.environments.b]\n"), quota.Replicas, 3, 0},
		{"cpu", map[quota.Name]int64{quota.CPUMillis: 400}, "", appManifest("cpu", ""), quota.CPUMillis, 400, 0},
		{"memory", map[quota.Name]int64{quota.MemoryBytes: 64 << 20}, "", appManifest("mem", ""), quota.MemoryBytes, 64 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupApply(t)
			ctx := context.Background()
			limit(t, b.st, b.actor.TeamID, tt.limits)
			if tt.first != "" {
				if _, err := b.apply(t, tt.first, service.ApplyOptions{}); err != nil {
					t.Fatalf("first save within the quota: %v", err)
				}
			}
			before, err := quota.Measure(ctx, b.st, b.actor.TeamID)
			if err != nil {
				t.Fatal(err)
			}
			apps, _ := b.st.ListApplications(ctx, b.actor.TeamID)
			_, err = b.apply(t, tt.doc, service.ApplyOptions{Deploy: true})
			wantQuota(t, err, tt.q, tt.limit, tt.use)
			after, _ := quota.Measure(ctx, b.st, b.actor.TeamID)
			apps2, _ := b.st.ListApplications(ctx, b.actor.TeamID)
			if fmt.Sprint(before) != fmt.Sprint(after) || len(apps) != len(apps2) || len(b.queued) != 0 {
				t.Fatalf("a refused save changed the team: use %v -> %v, %d -> %d applications, %d deployments queued", before, after, len(apps), len(apps2), len(b.queued))
			}
			// With room, the same save passes.
			limit(t, b.st, b.actor.TeamID, map[quota.Name]int64{})
			if _, err := b.apply(t, tt.doc, service.ApplyOptions{}); err != nil {
				t.Fatalf("the save without the quota: %v", err)
			}
		})
	}
	// After the parallel subtests.
	t.Cleanup(func() {
		if !t.Failed() {
			summary.Line(t, "quotas: %d kinds of save over a quota refused with quota_exceeded (quota, limit, use) before anything changed", len(tests))
		}
	})
}

// TestQuota_LoweredQuotaOnlyStopsGrowth: a team over a quota the operator
// lowered can still save what does not add to it, and is refused what does.
func TestQuota_LoweredQuotaOnlyStopsGrowth(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	if _, err := b.apply(t, appManifest("one", "[[spec.volumes]]\nname = \"a\"\n[[spec.volumes]]\nname = \"b\"\n"), service.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	limit(t, b.st, b.actor.TeamID, map[quota.Name]int64{quota.Volumes: 1, quota.Applications: 1})
	if _, err := b.apply(t, appManifest("one", "[[spec.volumes]]\nname = \"a\"\n[[spec.volumes]]\nname = \"b\"\n[spec.variables]\nx = 1\n"), service.ApplyOptions{}); err != nil {
		t.Fatalf("a save adding no volume, over a lowered quota: %v", err)
	}
	_, err := b.apply(t, appManifest("one", "[[spec.volumes]]\nname = \"a\"\n[[spec.volumes]]\nname = \"b\"\n[[spec.volumes]]\nname = \"c\"\n"), service.ApplyOptions{})
	wantQuota(t, err, quota.Volumes, 1, 2)
}

// TestQuota_CreateApplicationEnvironmentPreviewSecret: the other ways in
// (the dashboard's new application and environment forms, previews) count
// too.
func TestQuota_CreateApplicationAndEnvironment(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	res, err := b.apply(t, appManifest("one", ""), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	limit(t, b.st, b.actor.TeamID, map[quota.Name]int64{quota.Applications: 1, quota.Environments: 1})
	_, err = service.CreateApplication(ctx, b.st, b.actor, "two")
	wantQuota(t, err, quota.Applications, 1, 1)
	_, err = service.CreateEnvironment(ctx, b.st, b.actor, res.Application.ID, "staging", service.CreateOptions{})
	wantQuota(t, err, quota.Environments, 1, 1)
	if n, _ := b.st.CountQuotaUse(ctx, b.actor.TeamID); n.Applications != 1 || n.Environments != 1 {
		t.Fatalf("refused creations left %+v", n)
	}
}

// TestQuota_ConcurrentSavesCannotBothTakeTheLastOne: of ten saves racing
// for the last application under the quota, exactly one wins.
func TestQuota_ConcurrentSavesCannotBothTakeTheLastOne(t *testing.T) {
	t.Parallel()
	st := storetest.NewSchema(t)
	ctx := context.Background()
	team, err := st.CreateTeam(ctx, "Race", "race-team")
	if err != nil {
		t.Fatal(err)
	}
	limit(t, st, team.ID, map[quota.Name]int64{quota.Applications: 3})
	actor := service.Actor{TeamID: team.ID, UserID: "usr_test"}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = service.ApplyManifest(ctx, st, actor, func(context.Context, *store.Store, river.JobArgs) error { return nil },
				[]byte(appManifest(fmt.Sprintf("app-%d", i), "")), service.ApplyOptions{})
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		var ie *service.InputError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &ie) && ie.Code == quota.Code:
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if n, _ := st.CountQuotaUse(ctx, team.ID); ok != 3 || n.Applications != 3 {
		t.Fatalf("%d saves succeeded and the team has %d applications; want 3 and 3", ok, n.Applications)
	}
}

// TestQuota_Measure: what the team uses, from its rows and from what its
// environments run (the rendered manifest of each one's latest success).
func TestQuota_Measure(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	res, err := b.apply(t, appManifest("one", "[[spec.volumes]]\nname = \"a\"\n"), service.ApplyOptions{Deploy: true})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Deployments[0]
	rendered, _ := json.Marshal(map[string]any{"api_version": "slipway.dev/v1alpha1", "kind": "Application", "metadata": map[string]any{"name": "one"},
		"spec": map[string]any{"services": []any{map[string]any{"name": "web", "replicas": 3, "source": map[string]any{"type": "image", "image": "x"},
			"resources": map[string]any{"cpu_millis": 100, "memory_bytes": 1 << 20}}}}})
	for _, s := range []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded} {
		if s == store.StatePreparing {
			if _, err := b.st.RecordCapture(ctx, b.actor.TeamID, d.ID, store.Capture{Manifest: rendered, Rendered: rendered, Variables: []byte("{}")}); err != nil {
				t.Fatal(err)
			}
		}
		if d, err = b.st.TransitionDeployment(ctx, b.actor.TeamID, d.ID, []store.DeploymentState{d.State}, s); err != nil {
			t.Fatal(err)
		}
	}
	use, err := quota.Measure(ctx, b.st, b.actor.TeamID)
	if err != nil {
		t.Fatal(err)
	}
	want := quota.Use{quota.Applications: 1, quota.Environments: 1, quota.Volumes: 1, quota.Replicas: 3, quota.CPUMillis: 300, quota.MemoryBytes: 3 << 20}
	for n, v := range want {
		if use[n] != v {
			t.Errorf("%s = %d, want %d (use %v)", n, use[n], v, use)
		}
	}
}

// TestQuota_Previews: a team's previews quota holds across its
// applications (the installation's [previews] limits are another bound),
// and an existing preview is still returned at the quota.
func TestQuota_Previews(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupPreviews(t, service.PreviewLimits{MaxPerApplication: 10, MaxTotal: 10})
	limit(t, b.st, b.actor.TeamID, map[quota.Name]int64{quota.Previews: 1})
	b.create(t, "a", "", false)
	other := b.applyApp(t, "other")
	_, err := b.previews.Create(ctx, b.actor, b.enqueue, other.ID, service.PreviewRequest{Branch: "b"})
	wantQuota(t, err, quota.Previews, 1, 1)
	if p := b.create(t, "a", "", false); p.Created {
		t.Fatal("the existing preview was created again")
	}
}

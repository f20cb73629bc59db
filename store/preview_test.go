package store_test

import (
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
)

func init() {
	for _, m := range []string{"ListPreviews", "GetPreviewBySlug", "LockPreviewCounts", "MarkPreviewDeleting",
		"RecordPreviewVolumes", "ListPreviewVolumes", "LatestDeployment", "SyncRequestedCommit"} {
		tenancyCovered[m] = "TestPreviews_TeamScoped"
	}
}

// TestPreviews_TeamScoped gives team B a preview with a deployment and an
// inventoried volume, and calls every preview method as team A on it.
func TestPreviews_TeamScoped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st, a, other := b.ctx, b.st, b.a.team.ID, b.b
	pv, err := st.CreateEnvironment(ctx, other.team.ID, store.EnvironmentParams{
		ApplicationID: other.app.ID, Kind: store.KindPreview, Name: "notes-feat-x-abc123", Slug: "notes-feat-x-abc123",
		Branch: "feat/x", Untrusted: true,
	})
	must(t, err)
	if !pv.Untrusted || pv.DeletingAt != nil {
		t.Fatalf("created preview %+v, want untrusted and not deleting", pv)
	}
	_, err = st.CreateDeployment(ctx, other.team.ID, store.DeploymentParams{EnvironmentID: pv.ID, Origin: store.OriginBuild})
	must(t, err)
	must(t, st.RecordPreviewVolumes(ctx, other.team.ID, pv.ID, []string{"vol-a", "vol-b", "vol-a"}))

	if ps, err := st.ListPreviews(ctx, a, other.app.ID); err != nil || len(ps) != 0 {
		t.Errorf("ListPreviews from team A = %d, %v", len(ps), err)
	}
	_, err = st.GetPreviewBySlug(ctx, a, other.app.ID, pv.Slug)
	wantErr(t, err, store.ErrNotFound)
	_, err = st.MarkPreviewDeleting(ctx, a, pv.ID, time.Now())
	wantErr(t, err, store.ErrNotFound)
	_, err = st.LatestDeployment(ctx, a, pv.ID)
	wantErr(t, err, store.ErrNotFound)
	must(t, st.RecordPreviewVolumes(ctx, a, pv.ID, []string{"vol-foreign"}))
	if vs, err := st.ListPreviewVolumes(ctx, a, pv.ID); err != nil || len(vs) != 0 {
		t.Errorf("ListPreviewVolumes from team A = %v, %v", vs, err)
	}
	// An environment (not a preview) keeps no inventory.
	must(t, st.RecordPreviewVolumes(ctx, b.a.team.ID, b.a.env.ID, []string{"vol-env"}))
	if vs, err := st.ListPreviewVolumes(ctx, b.a.team.ID, b.a.env.ID); err != nil || len(vs) != 0 {
		t.Errorf("environment inventory = %v, %v", vs, err)
	}
	err = st.WithTx(ctx, func(tx *store.Store) error {
		c, err := tx.LockPreviewCounts(ctx, a, other.app.ID)
		if err == nil && (c.Application != 0 || c.Total != 1) {
			t.Errorf("counts from team A on team B's app = %+v, want 0 of the app, 1 in total", c)
		}
		return err
	})
	must(t, err)

	// The head recorded for team B's preview is team B's to read.
	must(t, st.MarkSyncRequested(ctx, other.team.ID, pv.ID, "0123456789abcdef0123456789abcdef01234567"))
	_, err = st.SyncRequestedCommit(ctx, a, pv.ID)
	wantErr(t, err, store.ErrNotFound)
	if head, err := st.SyncRequestedCommit(ctx, other.team.ID, pv.ID); err != nil || head != "0123456789abcdef0123456789abcdef01234567" {
		t.Fatalf("team B's recorded head = %q, %v", head, err)
	}

	// Team B's preview is untouched, and its own calls see everything.
	got, err := st.GetPreviewBySlug(ctx, other.team.ID, other.app.ID, pv.Slug)
	must(t, err)
	if got.DeletingAt != nil {
		t.Fatal("team A marked team B's preview deleting")
	}
	vs, err := st.ListPreviewVolumes(ctx, other.team.ID, pv.ID)
	must(t, err)
	if len(vs) != 2 || vs[0] != "vol-a" || vs[1] != "vol-b" {
		t.Fatalf("team B's inventory = %v, want vol-a, vol-b", vs)
	}
	at := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	marked, err := st.MarkPreviewDeleting(ctx, other.team.ID, pv.ID, at)
	must(t, err)
	again, err := st.MarkPreviewDeleting(ctx, other.team.ID, pv.ID, time.Now())
	must(t, err)
	if marked.DeletingAt == nil || !again.DeletingAt.Equal(*marked.DeletingAt) {
		t.Fatalf("deleting_at %v then %v, want the first time kept", marked.DeletingAt, again.DeletingAt)
	}
	_, err = st.MarkPreviewDeleting(ctx, other.team.ID, other.env.ID, time.Now())
	wantErr(t, err, store.ErrNotFound)
}

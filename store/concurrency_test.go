package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// These tests commit from several goroutines at once, so they run on a
// database of their own rather than in one rolled-back transaction.

func concurrently(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errs
}

func TestStore_ConcurrentRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.NewSchema(t)
	ten := newTenant(t, ctx, st, "gamma")
	second, err := st.CreateUser(ctx, "second@example.com", "", "hash")
	must(t, err)
	must(t, st.AddMember(ctx, ten.team.ID, second.ID, store.RoleOwner))

	t.Run("deployment requests", func(t *testing.T) {
		errs := concurrently(8, func(int) error {
			_, err := st.CreateDeployment(ctx, ten.team.ID, store.DeploymentParams{EnvironmentID: ten.env.ID, Origin: store.OriginBuild})
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		ds, err := st.ListDeployments(ctx, ten.team.ID, store.DeploymentFilter{EnvironmentID: ten.env.ID})
		must(t, err)
		counts := map[store.DeploymentState]int{}
		for _, d := range ds {
			counts[d.State]++
		}
		if counts[store.StateRequested] != 1 || counts[store.StateSuperseded] != 7 {
			t.Fatalf("states after 8 concurrent requests = %v, want 1 requested and 7 superseded", counts)
		}
	})

	t.Run("invitation accepted twice", func(t *testing.T) {
		_, hash := secret(t)
		_, err := st.CreateInvitation(ctx, ten.team.ID, store.InvitationParams{
			Email: "i@example.com", Role: store.RoleViewer, TokenHash: hash, ExpiresAt: time.Now().Add(hour),
		})
		must(t, err)
		// The invitation is bound to its address, so the race is the
		// invited account accepting from two tabs at once.
		u, err := st.CreateUser(ctx, "i@example.com", "", "hash")
		must(t, err)
		errs := concurrently(2, func(int) error {
			_, err := st.AcceptInvitation(ctx, hash, u.ID, time.Now())
			return err
		})
		ok, used := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrInvitationUsed):
				used++
			default:
				t.Fatalf("AcceptInvitation: %v", err)
			}
		}
		if ok != 1 || used != 1 {
			t.Fatalf("%d accepted, %d refused as used; want 1 and 1", ok, used)
		}
	})

	t.Run("both owners step down", func(t *testing.T) {
		owners := []string{ten.owner.ID, second.ID}
		errs := concurrently(2, func(i int) error {
			return st.UpdateMemberRole(ctx, ten.team.ID, owners[i], store.RoleAdmin)
		})
		lastOwner := 0
		for _, err := range errs {
			if errors.Is(err, store.ErrLastOwner) {
				lastOwner++
			} else {
				must(t, err)
			}
		}
		if lastOwner != 1 {
			t.Fatalf("%d demotions refused, want exactly 1 (errors %v)", lastOwner, errs)
		}
	})

	t.Run("manifest revisions", func(t *testing.T) {
		errs := concurrently(6, func(int) error {
			_, err := st.CreateManifestRevision(ctx, ten.team.ID, ten.app.ID, store.RevisionParams{Manifest: []byte(`{}`)})
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		revs, err := st.ListManifestRevisions(ctx, ten.team.ID, ten.app.ID)
		must(t, err)
		for i, r := range revs {
			if r.Revision != int64(len(revs)-i) {
				t.Fatalf("revisions not consecutive: %d at position %d of %d", r.Revision, i, len(revs))
			}
		}
		if len(revs) != 6 {
			t.Fatalf("%d revisions, want 6", len(revs))
		}
	})
}

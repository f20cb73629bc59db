package store_test

import (
	"context"
	"testing"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestUsers_InstallationAdmin: the installation's first user is its
// installation admin, later ones are not until granted, and a revoke
// takes it back.
func TestUsers_InstallationAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	first, err := st.CreateUser(ctx, "first@example.com", "", "hash")
	must(t, err)
	second, err := st.CreateUser(ctx, "second@example.com", "", "hash")
	must(t, err)
	if !first.InstallationAdmin || second.InstallationAdmin {
		t.Fatalf("first %v, second %v: want only the first user an installation admin", first.InstallationAdmin, second.InstallationAdmin)
	}
	must(t, st.SetInstallationAdmin(ctx, second.ID, true))
	admins, err := st.ListInstallationAdmins(ctx)
	must(t, err)
	if len(admins) != 2 || admins[0].Email != "first@example.com" || admins[1].Email != "second@example.com" {
		t.Fatalf("admins = %+v", admins)
	}
	must(t, st.SetInstallationAdmin(ctx, first.ID, false))
	if u, err := st.GetUser(ctx, first.ID); err != nil || u.InstallationAdmin {
		t.Fatalf("first after revoke: %+v %v", u, err)
	}
	wantErr(t, st.SetInstallationAdmin(ctx, "usr_missing", true), store.ErrNotFound)
}

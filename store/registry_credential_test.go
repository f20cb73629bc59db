package store_test

import (
	"testing"

	"github.com/slipwayhq/slipway/store"
)

func init() {
	for _, m := range []string{"SetRegistryCredential", "ListRegistryCredentials", "DeleteRegistryCredential", "RegistryCredentialCiphertext"} {
		tenancyCovered[m] = "TestRegistryCredentials_TeamScoped"
	}
}

func sealedAs(text string) func(store.SealedRef) (store.Sealed, error) {
	return func(store.SealedRef) (store.Sealed, error) {
		return store.Sealed{KeyID: "k1", Nonce: []byte("nonce"), Ciphertext: []byte(text)}, nil
	}
}

// TestRegistryCredentials_TeamScoped gives team B an account on ghcr.io
// and calls every method as team A: A sees, opens and deletes nothing of
// B's, and setting A's own account on the same host leaves B's alone.
func TestRegistryCredentials_TeamScoped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, st, a, other := b.ctx, b.st, b.a.team.ID, b.b.team.ID
	theirs, err := st.SetRegistryCredential(ctx, other, "ghcr.io", "b-bot", "user:b", sealedAs("b-secret"))
	must(t, err)

	if list, err := st.ListRegistryCredentials(ctx, a); err != nil || len(list) != 0 {
		t.Fatalf("ListRegistryCredentials from team A = %+v, %v", list, err)
	}
	_, _, _, err = st.RegistryCredentialCiphertext(ctx, a, "ghcr.io")
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, st.DeleteRegistryCredential(ctx, a, "ghcr.io"), store.ErrNotFound)

	var ref store.SealedRef
	mine, err := st.SetRegistryCredential(ctx, a, "ghcr.io", "a-bot", "user:a", func(r store.SealedRef) (store.Sealed, error) {
		ref = r
		return sealedAs("a-secret")(r)
	})
	must(t, err)
	if mine.ID == theirs.ID || ref.TeamID != a || ref.SecretID != mine.ID || ref.Name != "ghcr.io" || ref.Kind != store.SealedRegistry {
		t.Fatalf("team A's credential %+v sealed as %+v: want its own row", mine, ref)
	}
	c, _, sealed, err := st.RegistryCredentialCiphertext(ctx, other, "ghcr.io")
	must(t, err)
	if c.ID != theirs.ID || c.Username != "b-bot" || string(sealed.Ciphertext) != "b-secret" {
		t.Fatalf("team B's credential after team A's = %+v %q", c, sealed.Ciphertext)
	}
	if _, err := st.SetRegistryCredential(ctx, "team_missing", "ghcr.io", "x", "", sealedAs("x")); err == nil {
		t.Fatal("a credential for a team that does not exist was stored")
	}
}

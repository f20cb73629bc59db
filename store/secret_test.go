package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// fakeSeal records the ref it was called with and "seals" by tagging the
// ref: the store treats sealed values as opaque bytes.
func fakeSeal(keyID string, got *store.SealedRef) func(store.SealedRef) (store.Sealed, error) {
	return func(r store.SealedRef) (store.Sealed, error) {
		if got != nil {
			*got = r
		}
		return store.Sealed{KeyID: keyID, Nonce: []byte("nonce-123456"), Ciphertext: []byte(fmt.Sprintf("ct:%s:%d", r.Name, r.Version))}, nil
	}
}

func TestStore_SecretValue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team, app := b.a.team.ID, b.a.app.ID

	var ref store.SealedRef
	sec, err := b.st.SetSecretValue(b.ctx, team, app, "db-password", "user:u1", fakeSeal("k1", &ref))
	must(t, err)
	if sec.CurrentVersion != 1 || !sec.AllEnvironments || sec.Previews || len(sec.EnvironmentIDs) != 0 || sec.CreatedBy != "user:u1" {
		t.Fatalf("new secret = %+v", sec)
	}
	if ref != (store.SealedRef{Kind: store.SealedStored, TeamID: team, ApplicationID: app, SecretID: sec.ID, Name: "db-password", Version: 1}) {
		t.Fatalf("seal ref = %+v", ref)
	}
	sec, err = b.st.SetSecretValue(b.ctx, team, app, "db-password", "user:u2", fakeSeal("k1", &ref))
	must(t, err)
	if sec.CurrentVersion != 2 || ref.Version != 2 {
		t.Fatalf("second set = %+v, ref %+v", sec, ref)
	}
	vs, err := b.st.ListSecretVersions(b.ctx, team, sec.ID)
	must(t, err)
	if len(vs) != 2 || vs[0].Version != 2 || vs[0].CreatedBy != "user:u2" || vs[1].KeyID != "k1" {
		t.Fatalf("versions = %+v", vs)
	}
	gotRef, sealed, err := b.st.SecretCiphertext(b.ctx, team, app, sec.ID, 1)
	must(t, err)
	if string(sealed.Ciphertext) != "ct:db-password:1" || gotRef.Name != "db-password" || gotRef.Version != 1 {
		t.Fatalf("ciphertext = %q %+v", sealed.Ciphertext, gotRef)
	}

	_, err = b.st.SetSecretValue(b.ctx, team, app, "Bad_Name", "", fakeSeal("k1", nil))
	wantErr(t, err, store.ErrInvalid)

	// Access: listed environments of the same application only.
	staging, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{
		ApplicationID: app, Kind: store.KindEnvironment, Name: "staging", Slug: "notes-staging"})
	must(t, err)
	preview, err := b.st.CreateEnvironment(b.ctx, team, store.EnvironmentParams{
		ApplicationID: app, Kind: store.KindPreview, Name: "pr-1", Branch: "pr-1", Slug: "notes-pr-1"})
	must(t, err)
	sec, err = b.st.SetSecretAccess(b.ctx, team, sec.ID, store.SecretAccess{EnvironmentIDs: []string{staging.ID, staging.ID}, Previews: true})
	must(t, err)
	if sec.AllEnvironments || !sec.Previews || len(sec.EnvironmentIDs) != 1 || sec.EnvironmentIDs[0] != staging.ID {
		t.Fatalf("access = %+v", sec)
	}
	for _, bad := range [][]string{{staging.ID, preview.ID}, {staging.ID, b.b.env.ID}, {"env_missing"}} {
		_, err = b.st.SetSecretAccess(b.ctx, team, sec.ID, store.SecretAccess{EnvironmentIDs: bad})
		wantErr(t, err, store.ErrNotFound)
	}
	got, err := b.st.GetSecret(b.ctx, team, sec.ID)
	must(t, err)
	if len(got.EnvironmentIDs) != 1 || !got.Previews {
		t.Fatalf("a refused access change changed the secret: %+v", got)
	}
	// A deleted environment drops out of every list.
	must(t, b.st.DeleteEnvironment(b.ctx, team, staging.ID))
	got, err = b.st.GetSecretByName(b.ctx, team, app, "db-password")
	must(t, err)
	if len(got.EnvironmentIDs) != 0 || got.AllEnvironments {
		t.Fatalf("after deleting the listed environment: %+v", got)
	}

	// Delete marks: the name is free, pinned versions stay readable.
	must(t, b.st.DeleteSecret(b.ctx, team, sec.ID))
	_, err = b.st.GetSecret(b.ctx, team, sec.ID)
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, b.st.DeleteSecret(b.ctx, team, sec.ID), store.ErrNotFound)
	list, err := b.st.ListSecrets(b.ctx, team, app)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("ListSecrets after delete = %+v", list)
	}
	if _, _, err := b.st.SecretCiphertext(b.ctx, team, app, sec.ID, 2); err != nil {
		t.Fatalf("pinned version of a deleted secret: %v", err)
	}
	again, err := b.st.SetSecretValue(b.ctx, team, app, "db-password", "", fakeSeal("k1", nil))
	must(t, err)
	if again.ID == sec.ID || again.CurrentVersion != 1 {
		t.Fatalf("set after delete = %+v", again)
	}
}

func TestStore_SecretTenancy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Beta's secret and generated value; alpha's id must reach none of it.
	sec, err := b.st.SetSecretValue(b.ctx, b.b.team.ID, b.b.app.ID, "api-key", "", fakeSeal("k1", nil))
	must(t, err)
	_, _, err = b.st.EnsureGeneratedSecret(b.ctx, b.b.team.ID, b.b.env.ID, "session-key", "", fakeSeal("k1", nil))
	must(t, err)

	a := b.a.team.ID
	_, err = b.st.SetSecretValue(b.ctx, a, b.b.app.ID, "api-key", "", fakeSeal("k1", nil))
	wantErr(t, err, store.ErrNotFound)
	_, err = b.st.GetSecret(b.ctx, a, sec.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = b.st.GetSecretByName(b.ctx, a, b.b.app.ID, "api-key")
	wantErr(t, err, store.ErrNotFound)
	list, err := b.st.ListSecrets(b.ctx, a, b.b.app.ID)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("ListSecrets across teams = %+v", list)
	}
	_, err = b.st.ListSecretVersions(b.ctx, a, sec.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = b.st.SetSecretAccess(b.ctx, a, sec.ID, store.SecretAccess{AllEnvironments: true, Previews: true})
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, b.st.DeleteSecret(b.ctx, a, sec.ID), store.ErrNotFound)
	_, _, err = b.st.SecretCiphertext(b.ctx, a, b.b.app.ID, sec.ID, 1)
	wantErr(t, err, store.ErrNotFound)
	// Alpha's team id with alpha's own application still cannot pick
	// beta's secret id.
	_, _, err = b.st.SecretCiphertext(b.ctx, a, b.a.app.ID, sec.ID, 1)
	wantErr(t, err, store.ErrNotFound)

	_, _, err = b.st.EnsureGeneratedSecret(b.ctx, a, b.b.env.ID, "session-key", "", fakeSeal("k1", nil))
	wantErr(t, err, store.ErrNotFound)
	_, err = b.st.GetGeneratedSecret(b.ctx, a, b.b.env.ID, "session-key")
	wantErr(t, err, store.ErrNotFound)
	gs, err := b.st.ListGeneratedSecrets(b.ctx, a, b.b.env.ID)
	must(t, err)
	if len(gs) != 0 {
		t.Fatalf("ListGeneratedSecrets across teams = %+v", gs)
	}
	_, err = b.st.RequestSecretRegeneration(b.ctx, a, b.b.env.ID, "session-key")
	wantErr(t, err, store.ErrNotFound)
	_, _, err = b.st.GeneratedSecretCiphertext(b.ctx, a, b.b.env.ID, "session-key", 1)
	wantErr(t, err, store.ErrNotFound)

	// Beta's rows are untouched.
	got, err := b.st.GetSecret(b.ctx, b.b.team.ID, sec.ID)
	must(t, err)
	if got.CurrentVersion != 1 || got.Previews {
		t.Fatalf("beta's secret changed: %+v", got)
	}
	g, err := b.st.GetGeneratedSecret(b.ctx, b.b.team.ID, b.b.env.ID, "session-key")
	must(t, err)
	if g.Regenerate || g.CurrentVersion != 1 {
		t.Fatalf("beta's generated secret changed: %+v", g)
	}
}

func TestStore_GeneratedSecret(t *testing.T) {
	t.Parallel()
	b := setup(t)
	team, env := b.a.team.ID, b.a.env.ID

	calls := 0
	var ref store.SealedRef
	gen := func(r store.SealedRef) (store.Sealed, error) {
		calls++
		return fakeSeal("k1", &ref)(r)
	}
	v, created, err := b.st.EnsureGeneratedSecret(b.ctx, team, env, "session-key", "dep_1", gen)
	must(t, err)
	if v != 1 || !created || calls != 1 {
		t.Fatalf("first ensure = %d %v (calls %d)", v, created, calls)
	}
	if ref != (store.SealedRef{Kind: store.SealedGenerated, TeamID: team, ApplicationID: b.a.app.ID, EnvironmentID: env, Name: "session-key", Version: 1}) {
		t.Fatalf("ref = %+v", ref)
	}
	// Kept: no generation on the next capture.
	v, created, err = b.st.EnsureGeneratedSecret(b.ctx, team, env, "session-key", "dep_2", gen)
	must(t, err)
	if v != 1 || created || calls != 1 {
		t.Fatalf("second ensure = %d %v (calls %d)", v, created, calls)
	}
	_, err = b.st.RequestSecretRegeneration(b.ctx, team, env, "never-generated")
	wantErr(t, err, store.ErrNotFound)
	g, err := b.st.RequestSecretRegeneration(b.ctx, team, env, "session-key")
	must(t, err)
	if !g.Regenerate || g.CurrentVersion != 1 {
		t.Fatalf("after regenerate request = %+v", g)
	}
	v, created, err = b.st.EnsureGeneratedSecret(b.ctx, team, env, "session-key", "dep_3", gen)
	must(t, err)
	if v != 2 || !created || calls != 2 {
		t.Fatalf("ensure after regenerate = %d %v (calls %d)", v, created, calls)
	}
	g, err = b.st.GetGeneratedSecret(b.ctx, team, env, "session-key")
	must(t, err)
	if g.Regenerate || g.CurrentVersion != 2 {
		t.Fatalf("after regeneration = %+v", g)
	}
	// Old versions stay for deployments that pinned them.
	_, old, err := b.st.GeneratedSecretCiphertext(b.ctx, team, env, "session-key", 1)
	must(t, err)
	if !bytes.Equal(old.Ciphertext, []byte("ct:session-key:1")) {
		t.Fatalf("version 1 = %q", old.Ciphertext)
	}
	list, err := b.st.ListGeneratedSecrets(b.ctx, team, env)
	must(t, err)
	if len(list) != 1 || list[0].Name != "session-key" {
		t.Fatalf("list = %+v", list)
	}
}

func TestStore_ResealAll(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sec, err := b.st.SetSecretValue(b.ctx, b.a.team.ID, b.a.app.ID, "one", "", fakeSeal("old", nil))
	must(t, err)
	_, _, err = b.st.EnsureGeneratedSecret(b.ctx, b.b.team.ID, b.b.env.ID, "two", "", fakeSeal("old", nil))
	must(t, err)
	_, err = b.st.SetSecretValue(b.ctx, b.a.team.ID, b.a.app.ID, "three", "", fakeSeal("new", nil))
	must(t, err)

	var seen []store.SealedRef
	n, err := b.st.ResealAll(b.ctx, "new", func(r store.SealedRef, old store.Sealed) (store.Sealed, error) {
		if old.KeyID == "new" {
			t.Errorf("row %+v already under the new key was resealed", r)
		}
		seen = append(seen, r)
		return store.Sealed{KeyID: "new", Nonce: []byte("n2"), Ciphertext: append([]byte("re:"), old.Ciphertext...)}, nil
	})
	must(t, err)
	counts, err := b.st.CountSealedByKey(b.ctx)
	must(t, err)
	// Other tests share the database; only this test's rows are counted
	// by name below, so check that no "old" row of ours is left.
	if n < 2 || len(seen) < 2 || counts["old"] != 0 {
		t.Fatalf("resealed %d (%+v), counts %v", n, seen, counts)
	}
	_, sealed, err := b.st.SecretCiphertext(b.ctx, b.a.team.ID, b.a.app.ID, sec.ID, 1)
	must(t, err)
	if sealed.KeyID != "new" || string(sealed.Ciphertext) != "re:ct:one:1" {
		t.Fatalf("resealed row = %+v", sealed)
	}
	_, err = b.st.ResealAll(b.ctx, "newer", func(store.SealedRef, store.Sealed) (store.Sealed, error) {
		return store.Sealed{KeyID: "wrong"}, nil
	})
	if err == nil {
		t.Fatal("ResealAll accepted a reseal under another key than the one kept")
	}
}

// TestStore_SecretConcurrency runs on a pool, where each call commits:
// concurrent sets number their versions one after the other, and
// concurrent captures of one environment generate a value once.
func TestStore_SecretConcurrency(t *testing.T) {
	t.Parallel()
	st := storetest.NewSchema(t)
	ctx := t.Context()
	tn := newTenant(t, ctx, st, "gamma")

	const n = 8
	errs := make(chan error, n)
	versions := make(chan int, n)
	gens := make(chan bool, n)
	for range n {
		go func() {
			sec, err := st.SetSecretValue(ctx, tn.team.ID, tn.app.ID, "shared", "", fakeSeal("k1", nil))
			if err == nil {
				versions <- sec.CurrentVersion
			}
			_, created, gerr := st.EnsureGeneratedSecret(ctx, tn.team.ID, tn.env.ID, "gen", "", fakeSeal("k1", nil))
			if gerr == nil {
				gens <- created
			}
			errs <- errors.Join(err, gerr)
		}()
	}
	for range n {
		must(t, <-errs)
	}
	close(versions)
	close(gens)
	seen := map[int]bool{}
	for v := range versions {
		seen[v] = true
	}
	created := 0
	for c := range gens {
		if c {
			created++
		}
	}
	vs, err := st.ListSecretVersions(ctx, tn.team.ID, mustSecret(t, st, tn).ID)
	must(t, err)
	if len(seen) != n || len(vs) != n || vs[0].Version != n || created != 1 {
		t.Fatalf("versions seen %v, stored %d, generated %d times", seen, len(vs), created)
	}
}

func mustSecret(t *testing.T, st *store.Store, tn tenant) store.Secret {
	t.Helper()
	sec, err := st.GetSecretByName(t.Context(), tn.team.ID, tn.app.ID, "shared")
	must(t, err)
	return sec
}

package secrets_test

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
)

// dumpDatabase returns every row of every table in the schema as JSON
// text (bytea as \x hex), so a test can grep the whole database.
func dumpDatabase(t *testing.T, b *testBundle) string {
	t.Helper()
	rows, err := b.st.Tx().Query(b.ctx, `
		SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	must(t, err)
	var tables [][2]string
	var schema, name string
	_, err = pgx.ForEachRow(rows, []any{&schema, &name}, func() error {
		tables = append(tables, [2]string{schema, name})
		return nil
	})
	must(t, err)
	if len(tables) < 10 {
		t.Fatalf("found only %d tables: %v", len(tables), tables)
	}
	var all strings.Builder
	for _, tb := range tables {
		ident := pgx.Identifier{tb[0], tb[1]}.Sanitize()
		var text string
		must(t, b.st.Tx().QueryRow(b.ctx, `SELECT coalesce(string_agg(row_to_json(t)::text, E'\n'), '') FROM `+ident+` t`).Scan(&text))
		all.WriteString(tb[1] + ": " + text + "\n")
	}
	return all.String()
}

// TestService_ValuesOnlyCiphertextAtRest stores and generates values, then
// greps every row of every table for them in any common encoding.
func TestService_ValuesOnlyCiphertextAtRest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	plain := "s3cr3t-Plaintext-Marker-0123456789"
	_, err := b.svc.Set(b.ctx, b.team, b.app.ID, "db-password", []byte(plain), "user:u1")
	must(t, err)
	registryToken := "ghp_RegistryToken-Marker-9876543210"
	_, err = b.svc.SetRegistryCredential(b.ctx, b.team, "ghcr.io", "bot", []byte(registryToken), "user:u1")
	must(t, err)
	m := manifestMounting(t, []string{"db-password", "session-key"}, "session-key=random:24")
	pins, err := b.svc.Capture(b.ctx, b.team, b.prod, m)
	must(t, err)
	vals, err := b.svc.Values(b.ctx, b.team, b.prod, pins)
	must(t, err)
	generated := string(vals["session-key"].Value)
	if string(vals["db-password"].Value) != plain || len(generated) != 48 {
		t.Fatalf("values = %q, %q", vals["db-password"].Value, generated)
	}

	dump := dumpDatabase(t, b)
	if !strings.Contains(dump, `"key_id":"`+b.kr.CurrentID()+`"`) {
		t.Fatal("the dump holds no sealed row: the scan would prove nothing")
	}
	for _, v := range []string{plain, generated, registryToken} {
		for _, form := range []string{
			v, hex.EncodeToString([]byte(v)), base64.StdEncoding.EncodeToString([]byte(v)),
			base64.RawStdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)),
		} {
			if strings.Contains(dump, form) {
				t.Fatalf("a table holds a secret value (as %q)", form)
			}
		}
	}
	// The key never lands in the database either.
	if strings.Contains(dump, strings.TrimSpace(b.keyText)) {
		t.Fatal("the key-encryption key is stored in the database")
	}
}

// TestService_Tampering moves ciphertexts between rows and relabels key
// ids: none of it opens.
func TestService_Tampering(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, err := b.svc.Set(b.ctx, b.team, b.app.ID, "alpha", []byte("value-a"), "")
	must(t, err)
	_, err = b.svc.Set(b.ctx, b.team, b.app.ID, "alpha", []byte("value-a2"), "")
	must(t, err)
	c, err := b.svc.Set(b.ctx, b.team, b.app.ID, "gamma", []byte("value-c"), "")
	must(t, err)
	m := manifestMounting(t, []string{"alpha", "gamma", "gen"}, "gen=random:16")
	pins, err := b.svc.Capture(b.ctx, b.team, b.prod, m)
	must(t, err)
	_, err = b.svc.Capture(b.ctx, b.team, b.staging, m)
	must(t, err)
	_, err = b.svc.Values(b.ctx, b.team, b.prod, pins)
	must(t, err)

	tx := b.st.Tx()
	exec := func(sql string, args ...any) {
		t.Helper()
		tag, err := tx.Exec(b.ctx, sql, args...)
		must(t, err)
		if tag.RowsAffected() != 1 {
			t.Fatalf("%s touched %d rows", sql, tag.RowsAffected())
		}
	}
	tests := []struct {
		name   string
		tamper string
		args   []any
		pin    map[string]string
		code   string
	}{
		{"other secret's ciphertext", `
			UPDATE secret_versions v SET nonce = o.nonce, ciphertext = o.ciphertext
			FROM secret_versions o WHERE v.secret_id = $1 AND v.version = 2 AND o.secret_id = $2 AND o.version = 1`,
			[]any{a.ID, c.ID}, map[string]string{"alpha": pins["alpha"]}, keyring.CodeOpenFailed},
		{"older version's ciphertext", `
			UPDATE secret_versions v SET nonce = o.nonce, ciphertext = o.ciphertext
			FROM secret_versions o WHERE v.secret_id = $1 AND v.version = 2 AND o.secret_id = $1 AND o.version = 1`,
			[]any{a.ID}, map[string]string{"alpha": pins["alpha"]}, keyring.CodeOpenFailed},
		{"other environment's generated value", `
			UPDATE generated_secret_versions v SET nonce = o.nonce, ciphertext = o.ciphertext
			FROM generated_secret_versions o WHERE v.environment_id = $1 AND v.name = 'gen' AND o.environment_id = $2 AND o.name = 'gen'`,
			[]any{b.prod.ID, b.staging.ID}, map[string]string{"gen": pins["gen"]}, keyring.CodeOpenFailed},
		{"unknown key id", `UPDATE secret_versions SET key_id = 'deadbeef' WHERE secret_id = $1`,
			[]any{c.ID}, map[string]string{"gamma": pins["gamma"]}, keyring.CodeKeyUnknown},
	}
	for _, tt := range tests {
		// Sequential: each tampers with the shared transaction's rows.
		exec(tt.tamper, tt.args...)
		vals, err := b.svc.Values(b.ctx, b.team, b.prod, tt.pin)
		se := wantCode(t, err, tt.code)
		if vals != nil || strings.Contains(se.Message, "value-") {
			t.Fatalf("%s: returned %v, message %q", tt.name, vals, se.Message)
		}
	}
}

func TestService_RotateKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.svc.Set(b.ctx, b.team, b.app.ID, "api-key", []byte("stored-value"), "")
	must(t, err)
	m := manifestMounting(t, []string{"api-key", "gen"}, "gen=random:16")
	pins, err := b.svc.Capture(b.ctx, b.team, b.prod, m)
	must(t, err)
	before, err := b.svc.Values(b.ctx, b.team, b.prod, pins)
	must(t, err)
	_, err = b.svc.SetRegistryCredential(b.ctx, b.team, "ghcr.io", "bot", []byte("registry-token"), "")
	must(t, err)

	newText, err := keyring.Generate()
	must(t, err)
	newOnly, err := keyring.Parse([]byte(newText))
	must(t, err)
	// Without the old key nothing opens: rotation is what makes it unneeded.
	_, err = secrets.New(b.st, newOnly).Values(b.ctx, b.team, b.prod, pins)
	wantCode(t, err, keyring.CodeKeyUnknown)

	both, err := keyring.Parse([]byte(newText + "\n" + b.keyText))
	must(t, err)
	n, err := secrets.New(b.st, both).RotateKey(b.ctx)
	must(t, err)
	if n != 3 {
		t.Fatalf("rotated %d rows, want 3", n)
	}
	counts, err := b.st.CountSealedByKey(b.ctx)
	must(t, err)
	if counts[b.kr.CurrentID()] != 0 || counts[newOnly.CurrentID()] != 3 {
		t.Fatalf("rows by key after rotation = %v", counts)
	}
	after, err := secrets.New(b.st, newOnly).Values(b.ctx, b.team, b.prod, pins)
	must(t, err)
	for name, v := range before {
		if string(after[name].Value) != string(v.Value) {
			t.Fatalf("%s changed in rotation", name)
		}
	}
	if login, _, err := secrets.New(b.st, newOnly).RegistryLogin(b.ctx, b.team, "ghcr.io/a/b"); err != nil || login.Password != "registry-token" {
		t.Fatalf("registry password after rotation: %q %v", login.Password, err)
	}
	// The old key alone no longer opens anything; a second rotation has
	// nothing to do.
	_, err = b.svc.Values(b.ctx, b.team, b.prod, pins)
	wantCode(t, err, keyring.CodeKeyUnknown)
	n, err = secrets.New(b.st, newOnly).RotateKey(b.ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("second rotation resealed %d rows", n)
	}
	// A keyring missing a key the rows need stops the rotation with its code.
	thirdText, err := keyring.Generate()
	must(t, err)
	third, err := keyring.Parse([]byte(thirdText))
	must(t, err)
	_, err = secrets.New(b.st, third).RotateKey(b.ctx)
	var ke *keyring.Error
	if !errors.As(err, &ke) || ke.Code != keyring.CodeKeyUnknown {
		t.Fatalf("rotation without the old key: %v", err)
	}
}

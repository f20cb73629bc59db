package secrets_test

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

type testBundle struct {
	ctx     context.Context
	st      *store.Store
	kr      *keyring.Keyring
	keyText string
	svc     *secrets.Service
	team    string
	app     store.Application
	prod    store.Environment
	staging store.Environment
	preview store.Environment
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	keyText, err := keyring.Generate()
	must(t, err)
	kr, err := keyring.Parse([]byte(keyText))
	must(t, err)
	team, err := st.CreateTeam(ctx, "alpha", "alpha")
	must(t, err)
	app, err := st.CreateApplication(ctx, team.ID, "notes")
	must(t, err)
	env := func(kind store.EnvironmentKind, name, branch string) store.Environment {
		e, err := st.CreateEnvironment(ctx, team.ID, store.EnvironmentParams{
			ApplicationID: app.ID, Kind: kind, Name: name, Branch: branch, Slug: "notes-" + name})
		must(t, err)
		return e
	}
	return &testBundle{
		ctx: ctx, st: st, kr: kr, keyText: keyText, svc: secrets.New(st, kr), team: team.ID, app: app,
		prod:    env(store.KindEnvironment, "production", ""),
		staging: env(store.KindEnvironment, "staging", ""),
		preview: env(store.KindPreview, "pr-7", "feature"),
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantCode asserts a *secrets.Error with code and, when names is not nil,
// exactly those names.
func wantCode(t *testing.T, err error, code string, names ...string) *secrets.Error {
	t.Helper()
	var se *secrets.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if names != nil && strings.Join(se.Names, ",") != strings.Join(names, ",") {
		t.Fatalf("names = %v, want %v", se.Names, names)
	}
	return se
}

// manifestMounting returns a manifest whose web service mounts names and
// which declares decls ("name=type:arg").
func manifestMounting(t *testing.T, mounts []string, decls ...string) *manifest.Manifest {
	t.Helper()
	var b strings.Builder
	b.WriteString("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n")
	for _, d := range decls {
		name, gen, _ := strings.Cut(d, "=")
		typ, arg, _ := strings.Cut(gen, ":")
		b.WriteString("[[spec.secrets]]\nname = \"" + name + "\"\n")
		switch typ {
		case "rsa":
			b.WriteString("generate = { type = \"rsa\", bits = " + arg + " }\n")
		case "base64url":
			b.WriteString("generate = { type = \"random\", bytes = " + arg + ", encoding = \"base64url\" }\n")
		default:
			b.WriteString("generate = { type = \"random\", bytes = " + arg + " }\n")
		}
	}
	b.WriteString("[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"image\"\nimage = \"example/web:1\"\n")
	for _, m := range mounts {
		b.WriteString("[[spec.services.secrets]]\nname = \"" + m + "\"\ntarget = \"/run/secrets/" + m + "\"\n")
	}
	m, err := manifest.Decode([]byte(b.String()), "toml")
	must(t, err)
	return m
}

func TestService_RoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.svc.Set(b.ctx, b.team, b.app.ID, "db-password", []byte("v1-plain"), "user:u1")
	must(t, err)
	_, err = b.svc.Set(b.ctx, b.team, b.app.ID, "db-password", []byte("v2-plain"), "user:u1")
	must(t, err)
	m := manifestMounting(t, []string{"db-password"})

	pins, err := b.svc.Capture(b.ctx, b.team, b.prod, m)
	must(t, err)
	if !regexp.MustCompile(`^sec_[a-z2-7]+@2$`).MatchString(pins["db-password"]) || len(pins) != 1 {
		t.Fatalf("pins = %v", pins)
	}
	vals, err := b.svc.Values(b.ctx, b.team, b.prod, pins)
	must(t, err)
	if string(vals["db-password"].Value) != "v2-plain" || vals["db-password"].Version != pins["db-password"] {
		t.Fatalf("values = %+v", vals)
	}

	// Narrowing access leaves what production pinned alone; its next
	// capture is refused.
	_, err = b.svc.SetAccess(b.ctx, b.team, b.app.ID, "db-password", store.SecretAccess{EnvironmentIDs: []string{b.staging.ID}}, "user:test")
	must(t, err)
	if _, err := b.svc.Values(b.ctx, b.team, b.prod, pins); err != nil {
		t.Fatalf("narrowed access broke a pinned version: %v", err)
	}
	_, err = b.svc.Capture(b.ctx, b.team, b.prod, m)
	wantCode(t, err, secrets.CodeAccessDenied, "db-password")
	_, err = b.svc.SetAccess(b.ctx, b.team, b.app.ID, "db-password", store.SecretAccess{AllEnvironments: true}, "user:test")
	must(t, err)

	// A pin is a version: a later set does not change what it opens.
	_, err = b.svc.Set(b.ctx, b.team, b.app.ID, "db-password", []byte("v3-plain"), "user:u1")
	must(t, err)
	vals, err = b.svc.Values(b.ctx, b.team, b.prod, pins)
	must(t, err)
	if string(vals["db-password"].Value) != "v2-plain" {
		t.Fatalf("pinned value changed to %q", vals["db-password"].Value)
	}
	// Even after the secret is deleted, a restore can open its pin.
	must(t, b.svc.Delete(b.ctx, b.team, b.app.ID, "db-password", "user:test"))
	_, err = b.svc.Capture(b.ctx, b.team, b.prod, m)
	wantCode(t, err, secrets.CodeMissing, "db-password")
	vals, err = b.svc.Values(b.ctx, b.team, b.prod, pins)
	must(t, err)
	if string(vals["db-password"].Value) != "v2-plain" {
		t.Fatalf("pinned value of a deleted secret = %q", vals["db-password"].Value)
	}
	_, err = b.svc.Values(b.ctx, b.team, b.prod, map[string]string{"db-password": "sec_nope@1"})
	wantCode(t, err, secrets.CodeVersionUnavailable, "db-password")
	_, err = b.svc.Values(b.ctx, b.team, b.prod, map[string]string{"db-password": "garbage"})
	wantCode(t, err, secrets.CodePinInvalid)
}

func TestService_SetRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	declared := manifestMounting(t, []string{"session-key"}, "session-key=random:32")
	raw, err := json.Marshal(declared)
	must(t, err)
	_, err = b.st.CreateManifestRevision(b.ctx, b.team, b.app.ID, store.RevisionParams{Manifest: raw, Author: "user:u1"})
	must(t, err)

	tests := []struct {
		name, secret string
		value        []byte
		code         string
	}{
		{"declared name", "session-key", []byte("x"), secrets.CodeNameConflict},
		{"bad name", "Session_Key", []byte("x"), secrets.CodeNameInvalid},
		{"empty value", "api-key", nil, secrets.CodeValueEmpty},
		{"too large", "api-key", bytes.Repeat([]byte("x"), secrets.MaxValueSize+1), secrets.CodeValueTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.svc.Set(b.ctx, b.team, b.app.ID, tt.secret, tt.value, "user:u1")
			wantCode(t, err, tt.code)
		})
	}
	list, err := b.svc.List(b.ctx, b.team, b.app.ID)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("refused sets stored %+v", list)
	}
	_, err = b.svc.Set(b.ctx, b.team, "app_missing", "api-key", []byte("x"), "")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("set on a missing application: %v", err)
	}
	_, err = b.svc.SetAccess(b.ctx, b.team, b.app.ID, "absent", store.SecretAccess{AllEnvironments: true}, "user:test")
	wantCode(t, err, secrets.CodeNotFound, "absent")
}

func TestService_CaptureRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, n := range []string{"api-key", "staging-only", "preview-ok"} {
		_, err := b.svc.Set(b.ctx, b.team, b.app.ID, n, []byte("value-of-"+n), "user:u1")
		must(t, err)
	}
	_, err := b.svc.SetAccess(b.ctx, b.team, b.app.ID, "staging-only", store.SecretAccess{EnvironmentIDs: []string{b.staging.ID}}, "user:test")
	must(t, err)
	_, err = b.svc.SetAccess(b.ctx, b.team, b.app.ID, "preview-ok", store.SecretAccess{AllEnvironments: true, Previews: true}, "user:test")
	must(t, err)
	_, err = b.svc.SetAccess(b.ctx, b.team, b.app.ID, "api-key", store.SecretAccess{EnvironmentIDs: []string{b.preview.ID}}, "user:test")
	wantCode(t, err, secrets.CodeEnvironmentUnknown)

	// A preview of a fork's pull request never mounts a stored secret.
	untrusted := b.preview
	untrusted.Untrusted = true
	tests := []struct {
		name   string
		env    store.Environment
		mounts []string
		decls  []string
		code   string // "" = captured
		names  []string
	}{
		{"every missing one at once", b.prod, []string{"zeta", "api-key", "alpha"}, nil, secrets.CodeMissing, []string{"alpha", "zeta"}},
		{"missing before denied", b.prod, []string{"staging-only", "nope"}, nil, secrets.CodeMissing, []string{"nope"}},
		{"listed environment", b.staging, []string{"staging-only", "api-key"}, nil, "", nil},
		{"unlisted environment", b.prod, []string{"staging-only", "api-key"}, nil, secrets.CodeAccessDenied, []string{"staging-only"}},
		{"every environment excludes previews", b.preview, []string{"api-key", "preview-ok"}, nil, secrets.CodeAccessDenied, []string{"api-key"}},
		{"listed excludes previews", b.preview, []string{"staging-only"}, nil, secrets.CodeAccessDenied, []string{"staging-only"}},
		{"previews flag", b.preview, []string{"preview-ok"}, nil, "", nil},
		{"untrusted preview despite the flag", untrusted, []string{"preview-ok"}, nil, secrets.CodeAccessDenied, []string{"preview-ok"}},
		{"declared and stored", b.prod, []string{"api-key"}, []string{"api-key=random:16"}, secrets.CodeNameConflict, []string{"api-key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := manifestMounting(t, tt.mounts, tt.decls...)
			pins, err := b.svc.Capture(b.ctx, b.team, tt.env, m)
			if tt.code == "" {
				must(t, err)
				if len(pins) != len(tt.mounts) {
					t.Fatalf("pins = %v", pins)
				}
				must(t, b.svc.Check(b.ctx, b.team, tt.env, m))
				return
			}
			se := wantCode(t, err, tt.code, tt.names...)
			if tt.code == secrets.CodeAccessDenied && !strings.Contains(se.Message, tt.env.Name) {
				t.Fatalf("message does not name the environment: %s", se.Message)
			}
			wantCode(t, b.svc.Check(b.ctx, b.team, tt.env, m), tt.code, tt.names...)
		})
	}

	// Problems lists every kind at once, for promotion checks.
	m := manifestMounting(t, []string{"staging-only", "nope", "api-key", "absent"}, "api-key=random:16")
	ps, err := b.svc.Problems(b.ctx, b.team, b.prod, m)
	must(t, err)
	var got []string
	for _, p := range ps {
		got = append(got, p.Code+":"+strings.Join(p.Names, "+"))
		if p.Refusal().Code != p.Code || !strings.Contains(p.Refusal().Message, p.Names[0]) {
			t.Fatalf("problem %+v: refusal %v", p, p.Refusal())
		}
	}
	if want := "secret_name_conflict:api-key secret_missing:absent+nope secret_access_denied:staging-only"; strings.Join(got, " ") != want {
		t.Fatalf("problems = %v, want %s", got, want)
	}
	ps, err = b.svc.Problems(b.ctx, b.team, b.staging, manifestMounting(t, []string{"staging-only"}))
	if err != nil || len(ps) != 0 {
		t.Fatalf("problems for an allowed mount = %+v, %v", ps, err)
	}

	// A refused capture generates nothing.
	m = manifestMounting(t, []string{"nope", "session-key"}, "session-key=random:16")
	_, err = b.svc.Capture(b.ctx, b.team, b.prod, m)
	wantCode(t, err, secrets.CodeMissing, "nope")
	gs, err := b.svc.Generated(b.ctx, b.team, b.prod.ID)
	must(t, err)
	if len(gs) != 0 {
		t.Fatalf("a refused capture generated %+v", gs)
	}
}

func TestService_Generated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := manifestMounting(t, []string{"session-key", "token"}, "session-key=random:32", "token=base64url:48", "unused=random:16")
	value := func(env store.Environment, pins map[string]string, name string) string {
		t.Helper()
		vals, err := b.svc.Values(b.ctx, b.team, env, pins)
		must(t, err)
		return string(vals[name].Value)
	}
	pins1, err := b.svc.Capture(b.ctx, b.team, b.prod, m)
	must(t, err)
	if pins1["session-key"] != "generated@1" || pins1["token"] != "generated@1" || len(pins1) != 2 {
		t.Fatalf("pins = %v", pins1)
	}
	v1 := value(b.prod, pins1, "session-key")
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(v1) {
		t.Fatalf("hex value = %q", v1)
	}
	tok := value(b.prod, pins1, "token")
	if strings.ContainsAny(tok, "=+/") || len(tok) != 64 {
		t.Fatalf("base64url value = %q", tok)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(tok); err != nil || len(raw) != 48 {
		t.Fatalf("base64url decodes to %d bytes: %v", len(raw), err)
	}
	gs, err := b.svc.Generated(b.ctx, b.team, b.prod.ID)
	must(t, err)
	if len(gs) != 2 {
		t.Fatalf("generated = %+v (unmounted declarations are not generated)", gs)
	}

	// Kept across captures, even when the declaration changes.
	changed := manifestMounting(t, []string{"session-key"}, "session-key=base64url:16")
	pins2, err := b.svc.Capture(b.ctx, b.team, b.prod, changed)
	must(t, err)
	if pins2["session-key"] != "generated@1" || value(b.prod, pins2, "session-key") != v1 {
		t.Fatalf("value changed without regenerate: %v", pins2)
	}
	// Each environment and preview has its own.
	pinsS, err := b.svc.Capture(b.ctx, b.team, b.preview, m)
	must(t, err)
	if value(b.preview, pinsS, "session-key") == v1 {
		t.Fatal("a preview shares production's generated value")
	}

	_, err = b.svc.Regenerate(b.ctx, b.team, b.staging.ID, "session-key")
	wantCode(t, err, secrets.CodeGeneratedNotFound, "session-key")
	g, err := b.svc.Regenerate(b.ctx, b.team, b.prod.ID, "session-key")
	must(t, err)
	if !g.Regenerate {
		t.Fatalf("regenerate = %+v", g)
	}
	// Running deployments keep their pin until the next capture.
	if value(b.prod, pins1, "session-key") != v1 {
		t.Fatal("regenerate changed a pinned value")
	}
	pins3, err := b.svc.Capture(b.ctx, b.team, b.prod, m)
	must(t, err)
	v3 := value(b.prod, pins3, "session-key")
	if pins3["session-key"] != "generated@2" || v3 == v1 || len(v3) != 64 {
		t.Fatalf("after regenerate: %v %q", pins3, v3)
	}
	pins4, err := b.svc.Capture(b.ctx, b.team, b.prod, m)
	must(t, err)
	if pins4["session-key"] != "generated@2" || pins4["token"] != "generated@1" {
		t.Fatalf("regenerate did not stick to one version: %v", pins4)
	}
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	for _, bits := range []int{2048, 3072} {
		pemBytes, err := secrets.Generate(manifest.Generate{Type: manifest.GenerateRSA, Bits: bits})
		must(t, err)
		block, rest := pem.Decode(pemBytes)
		if block == nil || block.Type != "PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
			t.Fatalf("%d: not one PKCS#8 PEM block: %q", bits, pemBytes)
		}
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		must(t, err)
		rk, ok := key.(*rsa.PrivateKey)
		if !ok || rk.N.BitLen() != bits {
			t.Fatalf("%d: key = %T", bits, key)
		}
		must(t, rk.Validate())
	}
	for _, n := range []int{16, 512} {
		v, err := secrets.Generate(manifest.Generate{Type: manifest.GenerateRandom, Bytes: n})
		must(t, err)
		if raw, err := hex.DecodeString(string(v)); err != nil || len(raw) != n || strings.ToLower(string(v)) != string(v) {
			t.Fatalf("hex %d: %q", n, v)
		}
		v, err = secrets.Generate(manifest.Generate{Type: manifest.GenerateRandom, Bytes: n, Encoding: manifest.EncodingBase64URL})
		must(t, err)
		if raw, err := base64.RawURLEncoding.DecodeString(string(v)); err != nil || len(raw) != n {
			t.Fatalf("base64url %d: %q", n, v)
		}
	}
	a, _ := secrets.Generate(manifest.Generate{Type: manifest.GenerateRandom, Bytes: 16})
	c, _ := secrets.Generate(manifest.Generate{Type: manifest.GenerateRandom, Bytes: 16})
	if bytes.Equal(a, c) {
		t.Fatal("two random values are equal")
	}
	for _, g := range []manifest.Generate{
		{Type: manifest.GenerateRandom, Bytes: 15},
		{Type: manifest.GenerateRandom, Bytes: 513},
		{Type: manifest.GenerateRandom, Bytes: 0},
		{Type: manifest.GenerateRandom, Bytes: 16, Encoding: "base32"},
		{Type: manifest.GenerateRSA, Bits: 1024},
		{Type: "uuid"},
	} {
		_, err := secrets.Generate(g)
		wantCode(t, err, secrets.CodeGenerateInvalid)
	}
}

func TestGenerate_RSA4096(t *testing.T) {
	if testing.Short() {
		t.Skip("4096-bit key generation takes seconds")
	}
	t.Parallel()
	pemBytes, err := secrets.Generate(manifest.Generate{Type: manifest.GenerateRSA, Bits: 4096})
	must(t, err)
	block, _ := pem.Decode(pemBytes)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	must(t, err)
	if key.(*rsa.PrivateKey).N.BitLen() != 4096 {
		t.Fatal("not 4096 bits")
	}
}

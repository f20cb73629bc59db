package secrets_test

import (
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
)

func TestNormalizeRegistryHost(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"ghcr.io", "ghcr.io"},
		{"  GHCR.io ", "ghcr.io"},
		{"https://registry.example.com:5000/", "registry.example.com:5000"},
		{"http://10.0.0.5:5000/v2/", "10.0.0.5:5000"},
		{"index.docker.io", "docker.io"},
		{"https://index.docker.io/v1/", "docker.io"},
		{"registry-1.docker.io", "docker.io"},
		{"", ""},
		{"[::1]:5000", ""},
		{"user:pw@host", ""},
		{"-bad.example", ""},
		{"host:port", ""},
	} {
		got, err := secrets.NormalizeRegistryHost(tt.in)
		if tt.want == "" {
			wantCode(t, err, secrets.CodeRegistryHostInvalid)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeRegistryHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for ref, want := range map[string]string{
		"postgres:16": "docker.io",
		"library/postgres@sha256:" + strings.Repeat("a", 64): "docker.io",
		"a//b":                            "",
		"ghcr.io/acme/web:1":              "ghcr.io",
		"Registry.Example.com:5000/a/b:c": "registry.example.com:5000",
		"registry.example.com:5000/a/b:c": "registry.example.com:5000",
		"localhost:5000/x":                "localhost:5000",
	} {
		got, err := secrets.ImageRegistryHost(ref)
		if want == "" {
			if err == nil {
				t.Errorf("ImageRegistryHost(%q) = %q, want an error", ref, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ImageRegistryHost(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
}

// TestService_RegistryCredentials sets, lists, replaces, opens and
// deletes a team's registry account; another team's lookup never finds
// it, and every refusal names its field.
func TestService_RegistryCredentials(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tt := range []struct {
		name, host, user, password, field, code string
	}{
		{"bad host", "https://", "u", "p", "host", secrets.CodeRegistryHostInvalid},
		{"no username", "ghcr.io", " ", "p", "username", secrets.CodeRegistryUsernameInvalid},
		{"two-line username", "ghcr.io", "a\nb", "p", "username", secrets.CodeRegistryUsernameInvalid},
		{"no password", "ghcr.io", "u", "", "password", secrets.CodeRegistryPasswordEmpty},
		{"huge password", "ghcr.io", "u", strings.Repeat("x", secrets.MaxRegistryPasswordSize+1), "password", secrets.CodeRegistryPasswordTooLarge},
	} {
		_, err := b.svc.SetRegistryCredential(b.ctx, b.team, tt.host, tt.user, []byte(tt.password), "user:u1")
		if se := wantCode(t, err, tt.code); se.Field != tt.field {
			t.Errorf("%s: field %q, want %q", tt.name, se.Field, tt.field)
		}
	}

	c, err := b.svc.SetRegistryCredential(b.ctx, b.team, "https://GHCR.io/", "bot", []byte("tok-1"), "user:u1")
	must(t, err)
	again, err := b.svc.SetRegistryCredential(b.ctx, b.team, "ghcr.io", "bot2", []byte("tok-2"), "user:u2")
	must(t, err)
	if again.ID != c.ID || again.Host != "ghcr.io" || again.Username != "bot2" || again.CreatedBy != "user:u2" {
		t.Fatalf("replaced credential = %+v, want the same row (%s) for ghcr.io with bot2 by user:u2", again, c.ID)
	}
	list, err := b.svc.RegistryCredentials(b.ctx, b.team)
	must(t, err)
	if len(list) != 1 || list[0].Host != "ghcr.io" || list[0].Username != "bot2" {
		t.Fatalf("list = %+v", list)
	}

	login, ok, err := b.svc.RegistryLogin(b.ctx, b.team, "ghcr.io/acme/web:1")
	must(t, err)
	if !ok || login != (secrets.RegistryLogin{Host: "ghcr.io", Username: "bot2", Password: "tok-2"}) {
		t.Fatalf("login = %+v %v", login, ok)
	}
	if _, ok, err := b.svc.RegistryLogin(b.ctx, b.team, "quay.io/acme/web:1"); err != nil || ok {
		t.Fatalf("login for another registry = %v %v, want none", ok, err)
	}
	other, err := b.st.CreateTeam(b.ctx, "beta", "beta")
	must(t, err)
	if _, ok, err := b.svc.RegistryLogin(b.ctx, other.ID, "ghcr.io/acme/web:1"); err != nil || ok {
		t.Fatalf("another team's login for ghcr.io = %v %v, want none", ok, err)
	}
	if has, err := b.st.RegistryHostHasCredentials(b.ctx, "ghcr.io"); err != nil || !has {
		t.Fatalf("RegistryHostHasCredentials(ghcr.io) = %v %v", has, err)
	}

	// Team beta's row for the same host, given alpha's ciphertext, opens
	// nothing: the sealing binds team, row and host.
	_, err = b.svc.SetRegistryCredential(b.ctx, other.ID, "ghcr.io", "beta-bot", []byte("beta-token"), "")
	must(t, err)
	tag, err := b.st.Tx().Exec(b.ctx, `
		UPDATE registry_credentials r SET nonce = o.nonce, ciphertext = o.ciphertext
		FROM registry_credentials o WHERE r.team_id = $1 AND o.team_id = $2 AND r.host = o.host`, other.ID, b.team)
	must(t, err)
	if tag.RowsAffected() != 1 {
		t.Fatalf("tampering touched %d rows", tag.RowsAffected())
	}
	_, _, err = b.svc.RegistryLogin(b.ctx, other.ID, "ghcr.io/acme/web:1")
	wantCode(t, err, keyring.CodeOpenFailed)

	must(t, b.svc.DeleteRegistryCredential(b.ctx, b.team, "ghcr.io"))
	wantCode(t, b.svc.DeleteRegistryCredential(b.ctx, b.team, "ghcr.io"), secrets.CodeRegistryCredentialMissing)
	if _, ok, err := b.svc.RegistryLogin(b.ctx, b.team, "ghcr.io/acme/web:1"); err != nil || ok {
		t.Fatalf("login after delete = %v %v", ok, err)
	}
}

package auth

import (
	"strings"
	"testing"
)

func TestHashPassword_RoundTrip(t *testing.T) {
	t.Parallel()
	h, err := HashPassword(TestArgon2, "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=1024,t=1,p=1$") {
		t.Fatalf("encoding %q does not record its parameters", h)
	}
	h2, _ := HashPassword(TestArgon2, "correct horse battery")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt is not random")
	}
	tests := []struct {
		name string
		pw   string
		want bool
	}{
		{"right", "correct horse battery", true},
		{"wrong", "correct horse battery!", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := VerifyPassword(h, tt.pw)
			if err != nil || ok != tt.want {
				t.Fatalf("VerifyPassword = %v, %v; want %v", ok, err, tt.want)
			}
		})
	}
}

func TestVerifyPassword_Malformed(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=18$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA", "$argon2id$v=19$m=1024,t=1,p=1$!!$AA"} {
		if _, err := VerifyPassword(enc, "x"); err == nil {
			t.Errorf("VerifyPassword(%q) accepted a malformed hash", enc)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pw, code string
	}{
		{"ok", "twelve chars", ""},
		{"short", "eleven char", "password_too_short"},
		{"multibyte counts characters", "ééééééééééé", "password_too_short"},
		{"long", strings.Repeat("é", 65), "password_too_long"},
		{"max bytes ok", strings.Repeat("a", 128), ""},
		{"spaces", strings.Repeat(" ", 12), "password_blank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPassword(tt.pw)
			got := ""
			if pe, ok := err.(*PasswordError); ok {
				got = pe.Code
			}
			if got != tt.code {
				t.Fatalf("CheckPassword code %q, want %q", got, tt.code)
			}
		})
	}
}

func TestRole_Scopes(t *testing.T) {
	t.Parallel()
	if got := ScopesOf(RoleViewer); len(got) != 2 || !RoleViewer.Has(AppsRead) || !RoleViewer.Has(LogsRead) {
		t.Fatalf("viewer scopes %v", got)
	}
	for _, s := range []Scope{AppsRead, AppsWrite, AppsDeploy, LogsRead, SecretsWrite} {
		if !RoleDeveloper.Has(s) {
			t.Errorf("developer lacks %s", s)
		}
	}
	for _, s := range []Scope{AppsDelete, MembersManage, TokensManage} {
		if RoleDeveloper.Has(s) {
			t.Errorf("developer has %s", s)
		}
	}
	if len(ScopesOf(RoleOwner)) != len(AllScopes) || len(ScopesOf(RoleAdmin)) != len(AllScopes) {
		t.Fatal("owner and admin must hold every scope")
	}
	if RoleAdmin.CanAssign(RoleOwner) || RoleAdmin.CanManage(RoleOwner) || !RoleOwner.CanAssign(RoleOwner) {
		t.Fatal("only owners make or manage owners")
	}
	if RoleDeveloper.CanAssign(RoleViewer) {
		t.Fatal("developers cannot manage members")
	}
	if _, err := ParseRole("root"); err == nil {
		t.Fatal("ParseRole accepted root")
	}
}

func TestParseScopes(t *testing.T) {
	t.Parallel()
	got, err := ParseScopes([]string{"logs:read", "apps:read", "apps:read"})
	if err != nil || strings.Join(Strings(got), ",") != "apps:read,logs:read" {
		t.Fatalf("ParseScopes = %v, %v", got, err)
	}
	if _, err := ParseScopes([]string{"apps:fly"}); err == nil {
		t.Fatal("unknown scope accepted")
	}
	if m := Subset([]Scope{AppsRead, AppsDelete}, ScopesOf(RoleDeveloper)); m != AppsDelete {
		t.Fatalf("Subset missing = %q", m)
	}
}

// TestMeanings: every scope and role the pages list is explained.
func TestMeanings(t *testing.T) {
	for _, s := range AllScopes {
		if s.Meaning() == "" {
			t.Errorf("scope %s has no meaning", s)
		}
	}
	for _, r := range Roles {
		if r.Meaning() == "" {
			t.Errorf("role %s has no meaning", r)
		}
	}
}

package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Acme Inc.", "acme-inc"},
		{"  Ünïcode & Co  ", "n-code-co"},
		{"42 team", "t-42-team"},
		{"!!!", "t"},
	}
	for _, tt := range tests {
		if got := service.Slug(tt.in); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSignup_SlugTakenAndDuplicateEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	req := service.SignupRequest{Email: "a@example.com", Password: "correct horse battery", TeamName: "Acme"}
	_, t1, err := service.Signup(ctx, st, auth.TestArgon2, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Email = "b@example.com"
	_, t2, err := service.Signup(ctx, st, auth.TestArgon2, req)
	if err != nil {
		t.Fatal(err)
	}
	if t1.Slug == t2.Slug || t2.Slug[:5] != "acme-" {
		t.Fatalf("slugs %q and %q", t1.Slug, t2.Slug)
	}
	req.Email = "A@EXAMPLE.COM"
	_, _, err = service.Signup(ctx, st, auth.TestArgon2, req)
	var ie *service.InputError
	if !errors.As(err, &ie) || ie.Field != "email" || ie.Code != "email_taken" {
		t.Fatalf("duplicate e-mail: %v", err)
	}
	req.Email, req.FirstRun = "c@example.com", true
	if _, _, err := service.Signup(ctx, st, auth.TestArgon2, req); !errors.Is(err, service.ErrSetupDone) {
		t.Fatalf("first run after users exist: %v", err)
	}
}

func TestBootstrap_Idempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	first, err := service.Bootstrap(ctx, st, auth.TestArgon2, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if first.Password == "" || first.Team.Slug != "dev" || !auth.HasPrefix(first.Token, auth.TokenPrefix) {
		t.Fatalf("first bootstrap %+v", first)
	}
	second, err := service.Bootstrap(ctx, st, auth.TestArgon2, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if second.Password != "" || second.User.ID != first.User.ID || second.Team.ID != first.Team.ID || second.Token == first.Token {
		t.Fatalf("second bootstrap %+v", second)
	}
	tok, err := st.AuthenticateAPIToken(ctx, store.HashToken(second.Token), time.Now())
	if err != nil || len(tok.Scopes) != len(auth.AllScopes) {
		t.Fatalf("bootstrap token %+v, %v", tok, err)
	}
}

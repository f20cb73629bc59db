package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store/storetest"
)

func TestClient_AgainstServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	f := app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = f.Listener(ln) }()
	t.Cleanup(func() { _ = f.Shutdown() })

	u, team, err := service.Signup(ctx, st, auth.TestArgon2, service.SignupRequest{Email: "owner@example.com", Password: "correct horse battery", TeamName: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	actor := service.Actor{TeamID: team.ID, UserID: u.ID, Scopes: auth.AllScopes}
	_, secret, err := service.CreateToken(ctx, st, actor, service.TokenRequest{Name: "cli", Scopes: []string{"apps:read", "apps:write"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New("http://"+ln.Addr().String(), secret)
	if err != nil {
		t.Fatal(err)
	}
	me, err := c.Me(ctx)
	if err != nil || me.User.Email != "owner@example.com" || me.Team.ID != team.ID || len(me.Scopes) != 2 {
		t.Fatalf("Me = %+v, %v", me, err)
	}
	if _, err := c.CreateApplication(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	apps, err := c.Applications(ctx)
	if err != nil || len(apps) != 1 || apps[0].Name != "web" {
		t.Fatalf("Applications = %+v, %v", apps, err)
	}
	err = c.Do(ctx, "DELETE", "/applications/"+apps[0].ID, nil, nil)
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Code != "permission_denied" || apiErr.Details["permission"] != "apps:delete" {
		t.Fatalf("delete without apps:delete: %v", err)
	}
	if !client.IsNotFound(c.Do(ctx, "GET", "/applications/app_missing", nil, nil)) {
		t.Fatal("missing application is not 404")
	}
}

func TestNew_BadConfig(t *testing.T) {
	t.Parallel()
	if _, err := client.New("ftp://x", "slw_x"); err == nil {
		t.Fatal("accepted ftp URL")
	}
	if _, err := client.New("http://127.0.0.1:1", ""); err == nil {
		t.Fatal("accepted empty token")
	}
}

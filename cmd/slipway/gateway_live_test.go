package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/gatewayfeed"
	"github.com/slipwayhq/slipway/keyring/keyringtest"
	"github.com/slipwayhq/slipway/routelive"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestGatewayFeed_RoutesLive runs serve's gateway feed on a real store and
// a real gateway: once routes are set, routelive.WaitRouteLive returns as
// soon as the gateway serves the new table and the route's backend
// accepted a connection (a redirect at once); a route whose backend
// accepts nothing is reported not live after the bound, and live once
// the backend listens.
func TestGatewayFeed_RoutesLive(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.NewSchema(t)
	tenant := storetest.NewTenant(t, st, "live", "notes")
	team, env := tenant.Team, tenant.Env
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	downPort := freeTCPPort(t)

	dir, err := os.MkdirTemp("", "gwlive")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if _, err := gatewayfeed.Start(ctx, st, keyringtest.New(t), filepath.Join(dir, "feed"), gatewayfeed.TCP{}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- ingress.Run(ctx, ingress.Config{
			HTTPAddr: "127.0.0.1:0",
			Source:   ingress.Source{SocketPath: filepath.Join(dir, "feed", gatewayfeed.SocketName)},
			DataDir:  filepath.Join(dir, "gateway"),
			Name:     "gw-live-test",
			Log:      slog.New(slog.DiscardHandler),
			Resolver: loopbackResolver{},
		})
	}()
	t.Cleanup(func() { cancel(); <-done })

	route := func(host string, port int) store.DeployedRoute {
		return store.DeployedRoute{Hostname: host, Visibility: "public", Service: "web", BackendService: "web-" + host, BackendPort: port}
	}
	upPort := up.Addr().(*net.TCPAddr).Port
	set := func(routes ...store.DeployedRoute) int64 {
		t.Helper()
		if err := st.SetEnvironmentRoutes(ctx, team.ID, env.ID, routes); err != nil {
			t.Fatal(err)
		}
		v, err := st.RouteTableVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// The gateway reports once it has its first table.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		reports, err := st.ListGatewayReports(ctx, time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(reports) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the gateway never reported")
		}
	}

	redirect := store.DeployedRoute{Hostname: "old.example.com", Visibility: "public", RedirectTo: "https://new.example.com", RedirectStatus: 308}
	v := set(route("app.example.com", upPort), redirect)
	if err := routelive.WaitRouteLive(ctx, st, v, []string{"app.example.com", "old.example.com"}, 30*time.Second); err != nil {
		t.Fatalf("routes with an answering backend and a redirect: %v", err)
	}

	v = set(route("app.example.com", upPort), redirect, route("down.example.com", downPort))
	err = routelive.WaitRouteLive(ctx, st, v, []string{"down.example.com"}, 2*time.Second)
	var notLive *routelive.NotLiveError
	if !errors.As(err, &notLive) || !strings.Contains(err.Error(), "gw-live-test has no backend answering for down.example.com") {
		t.Fatalf("a route whose backend accepts nothing: %v", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(downPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := routelive.WaitRouteLive(ctx, st, v, []string{"down.example.com", "app.example.com"}, 30*time.Second); err != nil {
		t.Fatalf("once the backend listens: %v", err)
	}
}

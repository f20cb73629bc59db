package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/gatewayfeed"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring/keyringtest"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestGatewayFeed_TCPWithToken feeds one gateway over serve's TCP feed with
// the right token file, which then proxies a stored route, and another with
// a wrong token, which never gets the table; the feed answers requests
// with a wrong or missing token 401 without a route or a stored report.
func TestGatewayFeed_TCPWithToken(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.NewSchema(t)
	backendLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "remote backend")
	})}
	go backend.Serve(backendLn)
	t.Cleanup(func() { backend.Close() })
	const host = "remote.example.com"
	tenant, dir := newFeedFixture(t, st, "remote", host, backendLn.Addr().(*net.TCPAddr).Port)
	team, env := tenant.Team, tenant.Env

	const token = "gw-token-0123456789"
	feedAddr, err := gatewayfeed.Start(ctx, st, keyringtest.New(t), filepath.Join(dir, "feed"), gatewayfeed.TCP{Addr: "127.0.0.1:0", Token: token}, slog.New(slog.DiscardHandler))
	if err != nil || feedAddr == nil {
		t.Fatalf("feed: %v %v", feedAddr, err)
	}
	feedURL := "http://" + feedAddr.String()

	runGateway := func(name, tok string) string {
		tokenFile := writeTokenFile(t, dir, name, tok)
		addr := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			done <- ingress.Run(ctx, ingress.Config{
				HTTPAddr: "127.0.0.1:0",
				Source:   ingress.Source{URL: feedURL, TokenFile: tokenFile},
				DataDir:  filepath.Join(dir, name),
				Log:      slog.New(slog.DiscardHandler),
				Resolver: loopbackResolver{},
				Ready:    func(a ingress.Addrs) { addr <- a.HTTP },
			})
		}()
		t.Cleanup(func() { cancel(); <-done })
		select {
		case a := <-addr:
			return a
		case err := <-done:
			t.Fatalf("gateway %s: %v", name, err)
		}
		return ""
	}
	through := func(gw string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+gw+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	good, bad := runGateway("good", token), runGateway("bad", "not-the-token")
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, body := through(good)
		if status == http.StatusOK && body == "remote backend" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway fed over TCP: %d %q", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status, _ := through(bad); status != http.StatusNotFound {
		t.Fatalf("gateway with a wrong token: status %d, want 404 (no table)", status)
	}

	for _, auth := range []string{"", "Bearer not-the-token", "Bearer " + token + "x", token} {
		for _, req := range []*http.Request{
			mustRequest(t, http.MethodGet, feedURL+ingress.RoutesPath, ""),
			mustRequest(t, http.MethodPut, feedURL+ingress.CertificatesPath, `{"table_version":1,"certificates":[{"hostname":"`+host+`","state":"failed","last_error":"forged"}]}`),
		} {
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), host) {
				t.Fatalf("%s %s with Authorization %q: %d %q, want 401 without routes", req.Method, req.URL.Path, auth, resp.StatusCode, b)
			}
		}
	}
	certs, err := st.ListEnvironmentCertificates(ctx, team.ID, env.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c := certs[host]; c.LastError == "forged" {
		t.Fatalf("a report without the token was stored: %+v", c)
	}
	// The right token is accepted on the same endpoints.
	req := mustRequest(t, http.MethodGet, feedURL+ingress.RoutesPath, "")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), host) {
		t.Fatalf("routes with the token: %d %q", resp.StatusCode, b)
	}
}

func mustRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// TestGatewayFeedTCPFromConfig reads [ingress] feed_addr and the token
// file; an unreadable file is an error naming the key.
func TestGatewayFeedTCPFromConfig(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	if tcp, err := gatewayFeedTCPFromConfig(cfg); err != nil || tcp.Addr != "" {
		t.Fatalf("default: %+v %v, want no TCP feed", tcp, err)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(" s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Ingress.FeedAddr, cfg.Ingress.GatewayTokenFile = "10.0.0.1:8081", file
	if tcp, err := gatewayFeedTCPFromConfig(cfg); err != nil || tcp.Addr != "10.0.0.1:8081" || tcp.Token != "s3cret-token" {
		t.Fatalf("with a token file: %+v %v", tcp, err)
	}
	cfg.Ingress.GatewayTokenFile = filepath.Join(t.TempDir(), "missing")
	if _, err := gatewayFeedTCPFromConfig(cfg); err == nil || !strings.Contains(err.Error(), "ingress.gateway_token_file") {
		t.Fatalf("missing token file: %v", err)
	}
	if _, err := gatewayfeed.Start(context.Background(), nil, nil, t.TempDir(), gatewayfeed.TCP{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("the TCP feed listened without a token")
	}
}

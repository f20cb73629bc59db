package gatewayfeed_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/slipwayhq/slipway/gatewayfeed"
	"github.com/slipwayhq/slipway/keyring/keyringtest"
	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestStart_ServesSealedCertificateStorage: the feed serves the gateways'
// certificate storage, kept in Postgres and sealed there, and without the
// gateway token on TCP nobody reads it.
func TestStart_ServesSealedCertificateStorage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.NewSchema(t)
	dir := filepath.Join(t.TempDir(), "gateway")
	tcp, err := gatewayfeed.Start(ctx, st, keyringtest.New(t), dir, gatewayfeed.TCP{Addr: "127.0.0.1:0", Token: "gateway-token"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := socketClient(dir)
	const key = "certificates/acme/a.example/a.example.key"
	value := []byte("private key of a.example")
	req, _ := http.NewRequest(http.MethodPut, "http://gateway"+ingress.StoragePath+"store?key="+key, bytes.NewReader(value))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("store: %s", resp.Status)
	}
	raw, err := st.CertObjectValue(ctx, key)
	if err != nil || bytes.Contains(raw.Ciphertext, value) {
		t.Fatalf("the stored row holds the value in clear (%v)", err)
	}
	resp, err = c.Get("http://gateway" + ingress.StoragePath + "load?key=" + key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, value) {
		t.Fatalf("load: %s %q", resp.Status, got)
	}
	resp, err = http.Get("http://" + tcp.String() + ingress.StoragePath + "load?key=" + key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || bytes.Contains(got, value) {
		t.Fatalf("load on TCP without the gateway token: %s %q", resp.Status, got)
	}
}

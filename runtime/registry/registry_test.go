package registry_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/slipwayhq/slipway/runtime/registry"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// serve runs the embedded registry on a loopback port (the engine trusts
// plain HTTP there) and returns its host:port.
func serve(t *testing.T, password string) (string, *registry.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := registry.NewServer(ctx, registry.ServerConfig{Dir: t.TempDir(), Password: password, GCDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String(), srv
}

// TestServer_PushPullPrune checks the registry refuses anonymous and
// wrong credentials, pushes a real image with the engine, pulls the pushed
// digest, then prunes it (nothing kept) and checks its manifest is gone at
// once and its layer after garbage collection.
func TestServer_PushPullPrune(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cli := swarmtest.Client(t)
	host, srv := serve(t, "s3cret")
	target := registry.Target{Host: host, Prefix: "slipway", User: registry.User, Password: "s3cret", APIURL: "http://" + host}

	resp, err := http.Get("http://" + host + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("anonymous /v2/: %s %q, want 401 with a Basic challenge", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}

	img := swarmtest.Image(t, "job")
	info, err := cli.ImageInspect(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	repo := target.Repository("Team_1", "app", "web")
	if want := host + "/slipway/team-1/app-web"; repo != want {
		t.Fatalf("Repository = %q, want %q", repo, want)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), repo+":id-"+strings.TrimPrefix(info.ID, "sha256:")[:12], image.RemoveOptions{})
	})

	// (The engine retries a refused push for ~50 s: ask the API instead.)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/v2/", nil)
	req.SetBasicAuth(registry.User, "wrong")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/v2/ with a wrong password: %s, want 401", resp.Status)
	}
	ref, err := target.Push(ctx, cli, info.ID, repo)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref, repo+"@sha256:") {
		t.Fatalf("Push = %q, want %s@sha256:...", ref, repo)
	}
	again, err := target.Push(ctx, cli, info.ID, repo)
	if err != nil || again != ref {
		t.Fatalf("second push = %q %v, want the same %q", again, err, ref)
	}
	digest := ref[strings.Index(ref, "@")+1:]
	pull := func() error {
		rc, err := cli.ImagePull(ctx, ref, image.PullOptions{RegistryAuth: target.Auth()})
		if err != nil {
			return err
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		if strings.Contains(string(b), `"error"`) {
			return &pullErr{string(b)}
		}
		return nil
	}
	if err := pull(); err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}

	head := func(path string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "http://"+host+"/v2/slipway/team-1/app-web/"+path, nil)
		req.SetBasicAuth(registry.User, "s3cret")
		req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// The pushed layer is stored compressed: find it by the manifest.
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/v2/slipway/team-1/app-web/manifests/"+digest, nil)
	req.SetBasicAuth(registry.User, "s3cret")
	req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json")
	mresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Layers []struct{ Digest string } `json:"layers"`
	}
	if err := json.NewDecoder(mresp.Body).Decode(&manifest); err != nil || len(manifest.Layers) == 0 {
		t.Fatalf("manifest of %s: %v %+v", ref, err, manifest)
	}
	mresp.Body.Close()
	layer := "blobs/" + manifest.Layers[0].Digest
	if code := head(layer); code != http.StatusOK {
		t.Fatalf("HEAD %s before pruning: %d", layer, code)
	}

	if deleted, err := target.Prune(ctx, map[string]bool{digest: true}, nil); err != nil || len(deleted) != 0 {
		t.Fatalf("Prune keeping the digest deleted %q (%v)", deleted, err)
	}
	deleted, err := target.Prune(ctx, map[string]bool{}, nil)
	if err != nil || len(deleted) != 1 || deleted[0] != "slipway/team-1/app-web@"+digest {
		t.Fatalf("Prune = %q %v, want the one manifest", deleted, err)
	}
	if code := head("manifests/" + digest); code != http.StatusNotFound {
		t.Fatalf("HEAD manifest %s after pruning: %d, want 404", digest, code)
	}
	if code := head(layer); code != http.StatusOK {
		t.Fatalf("HEAD %s after pruning, before garbage collection: %d, want 200", layer, code)
	}
	if err := srv.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	if code := head(layer); code != http.StatusNotFound {
		t.Fatalf("HEAD %s after garbage collection: %d, want 404", layer, code)
	}
}

type pullErr struct{ s string }

func (e *pullErr) Error() string { return e.s }

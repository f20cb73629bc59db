// Package registrytest runs a private image registry for tests: the
// embedded registry (runtime/registry.Server, HTTP basic authentication
// as user registry.User) on a plain-HTTP listener, and pushes images to
// it with an engine. Only tests import it.
package registrytest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/runtime/registry"
)

// Registry is a running private registry.
type Registry struct {
	// Host is its host:port.
	Host     string
	Password string
}

// Serve runs a registry on addr ("127.0.0.1:0": engines trust plain
// HTTP on loopback) until the test ends.
func Serve(t testing.TB, addr, password string) *Registry {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := registry.NewServer(ctx, registry.ServerConfig{Dir: t.TempDir(), Password: password, GCDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return &Registry{Host: ln.Addr().String(), Password: password}
}

// Auth is the X-Registry-Auth value of the registry's account.
func (r *Registry) Auth() string { return registry.EncodeAuth(r.Host, registry.User, r.Password) }

// Push pushes the engine's local image imageID as <host>/<repo>:<tag> and
// returns that reference (its local tag is removed when the test ends).
func (r *Registry) Push(t testing.TB, cli *client.Client, imageID, repo, tag string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ref := r.Host + "/" + repo + ":" + tag
	if err := cli.ImageTag(ctx, imageID, ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), ref, image.RemoveOptions{})
	})
	rc, err := cli.ImagePush(ctx, ref, image.PushOptions{RegistryAuth: r.Auth()})
	if err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	defer rc.Close()
	out, err := io.ReadAll(rc)
	if err != nil || strings.Contains(string(out), `"error"`) {
		t.Fatalf("push %s: %v %s", ref, err, out)
	}
	return ref
}

// Variant builds, on the engine, an image of base with a label of its own
// (so a new image ID sharing base's layers, which a test may pull, remove
// and pull again without touching base) and returns its ID; it is removed
// when the test ends.
func Variant(t testing.TB, cli *client.Client, base string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	df := []byte("FROM " + base + "\nLABEL dev.slipway.test.variant=" + hex.EncodeToString(nonce[:]) + "\n")
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(df)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("build a variant of %s: %v", base, err)
	}
	defer resp.Body.Close()
	var id string
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
			Aux   *struct {
				ID string `json:"ID"`
			} `json:"aux"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if msg.Error != "" {
			t.Fatalf("build a variant of %s: %s", base, msg.Error)
		}
		if msg.Aux != nil && msg.Aux.ID != "" {
			id = msg.Aux.ID
		}
	}
	if id == "" {
		t.Fatalf("build a variant of %s: no image ID", base)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), id, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	return id
}

package pipeline_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	imageresolver "github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/registry"
	"github.com/slipwayhq/slipway/runtime/registry/registrytest"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
)

// TestPrepare_PrivateImageNeedsTheTeamsOwnCredentials deploys an image of
// a registry that refuses anonymous pulls. Another team (no credentials)
// cannot use it, neither before the image is on the node nor once the
// first team's credentials brought it there, nor by naming its ID; the
// team whose credentials are stored pulls it and runs it, with Swarm
// given those credentials; and nobody reaches another team's images in
// Slipway's own registry.
func TestPrepare_PrivateImageNeedsTheTeamsOwnCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := pipelinetest.Setup(t, "production")
	cli := swarmtest.Client(t)
	reg := registrytest.Serve(t, "127.0.0.1:0", "pw-"+swarmtest.ID())
	id := registrytest.Variant(t, cli, swarmtest.Image(t, "web"))
	ref := reg.Push(t, cli, id, "private/web", "v1")
	// Not on this node any more: the first deployment must pull it.
	if _, err := cli.ImageRemove(ctx, id, image.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}

	svc := secrets.New(b.Store, testKeyring(t))
	p := *b.Pipeline
	// The test registry listens on loopback, which only dev mode allows.
	p.Images = imageresolver.NewResolver(cli, true).WithOutbound(outbound.New(outbound.Config{AllowLoopback: true}))
	p.Logins = svc
	if _, err := svc.SetRegistryCredential(ctx, b.Team.ID, "http://"+reg.Host+"/", registry.User, []byte(reg.Password), "user:test"); err != nil {
		t.Fatal(err)
	}
	other := otherTeam(t, b)
	manifest := func(app, image string) string {
		return fmt.Sprintf("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = %q\n[[spec.services]]\nname = \"web\"\n[spec.services.source]\ntype = \"image\"\nimage = %q\n", app, image)
	}

	refused := func(when, image, want string) {
		t.Helper()
		d := other.deploy(t, &p, manifest(other.app.Name, image))
		if d.State != store.StateFailed || d.ErrorCode != imageresolver.CodeUnavailable || !strings.Contains(d.ErrorMessage, want) {
			t.Fatalf("%s: the other team's deployment of %s ended %s %s %q, want failed image_unavailable saying %q", when, image, d.State, d.ErrorCode, d.ErrorMessage, want)
		}
	}
	refused("image absent", ref, "pull failed")

	d := b.DeployTo(t, &p, b.App.ID, b.Env.ID, manifest(b.App.Name, ref))
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	web := b.Services(t)["web"]
	if img := web.Spec.TaskTemplate.ContainerSpec.Image; !strings.HasPrefix(img, ref+"@sha256:") {
		t.Fatalf("web runs %s, want %s pinned to its digest", img, ref)
	}

	refused("image on the node", ref, "does not let this team pull it")
	info, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	refused("named by its ID", strings.TrimPrefix(info.ID, "sha256:")[:12], "name it by its repository")

	// Slipway's own registry: the team's repositories only.
	own := registry.Target{Host: reg.Host, Prefix: "slipway", User: registry.User, Password: reg.Password}
	p.Registry = fixedRegistry{own}
	refused("another team's build", own.Repository(b.Team.ID, b.App.Name, "web")+":id-0123456789ab", "other teams built")
}

type fixedRegistry struct{ t registry.Target }

func (f fixedRegistry) Target(context.Context) (registry.Target, error) { return f.t, nil }
func (f fixedRegistry) Push(context.Context, registry.Target, string, string) (string, error) {
	return "", fmt.Errorf("no push in this test")
}

func testKeyring(t *testing.T) *keyring.Keyring {
	t.Helper()
	raw := make([]byte, keyring.KeySize)
	_, _ = rand.Read(raw)
	k, err := keyring.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return keyring.New(k)
}

// teamOf is a second team in the bundle's database, with one application
// and environment.
type teamOf struct {
	b    *pipelinetest.Bundle
	team store.Team
	app  store.Application
	env  store.Environment
}

func otherTeam(t *testing.T, b *pipelinetest.Bundle) *teamOf {
	t.Helper()
	ctx := context.Background()
	id := swarmtest.ID()
	o := &teamOf{b: b}
	var err error
	o.team, err = b.Store.CreateTeam(ctx, "Other "+id, "other-"+id)
	must(t, err)
	o.app, err = b.Store.CreateApplication(ctx, o.team.ID, "other-"+id)
	must(t, err)
	o.env, err = b.Store.CreateEnvironment(ctx, o.team.ID, store.EnvironmentParams{
		ApplicationID: o.app.ID, Kind: store.KindEnvironment, Name: "production", Slug: "production",
	})
	must(t, err)
	swarmtest.RemoveOnCleanup(t, "dev.slipway.team="+o.team.ID)
	return o
}

func (o *teamOf) deploy(t *testing.T, p *pipeline.Pipeline, toml string) store.Deployment {
	t.Helper()
	return o.b.DeployAs(t, p, o.team.ID, o.app.ID, o.env.ID, toml)
}

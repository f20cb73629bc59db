package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// commentedShop is a TOML manifest as a person writes it: comments on
// their own lines and after values.
const commentedShop = `# The shop: one web service.
api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "notes"

# Defaults for every environment.
[spec.variables]
web_replicas = 1 # more in production

[[spec.services]]
name = "web"
replicas = "${{ vars.web_replicas }}"

[spec.services.source]
type = "image"
image = "ghcr.io/example/notes:1" # pinned

[spec.services.environment]
# Verbose until launch.
LOG_LEVEL = "debug"
`

// TestEditManifest_KeepsTOML: a variable edit and a service environment
// edit of a TOML manifest save TOML, with every comment, changing only the
// lines they concern (it once saved the manifest as JSON).
func TestEditManifest_KeepsTOML(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	res, err := b.apply(t, commentedShop, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appID := res.Application.ID
	edit, err := service.EditVariable(ctx, b.st, b.actor, appID, service.VariableEdit{Name: "web_replicas", Value: ptr(manifest.IntValue(3))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := service.EditManifest(ctx, b.st, b.actor, b.enqueue, appID, nil, edit, false); err != nil {
		t.Fatal(err)
	}
	level := "info"
	if _, err := service.EditManifest(ctx, b.st, b.actor, b.enqueue, appID, nil, service.EditService("web", service.ServiceEdit{Environment: map[string]*string{"LOG_LEVEL": &level, "TZ": ptr("UTC")}}), false); err != nil {
		t.Fatal(err)
	}
	cur, err := b.st.GetCurrentManifestRevision(ctx, b.actor.TeamID, appID)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"web_replicas = 1 # more", "web_replicas = 3 # more",
		`LOG_LEVEL = "debug"`+"\n", `LOG_LEVEL = "info"`+"\n"+`TZ = "UTC"`+"\n",
	).Replace(commentedShop)
	if cur.Revision != 3 || cur.SourceFormat != "toml" || cur.Source != want {
		t.Fatalf("revision %d saved as %s:\n%s\nwant toml:\n%s", cur.Revision, cur.SourceFormat, cur.Source, want)
	}
}

func ptr[T any](v T) *T { return &v }

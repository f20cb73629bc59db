package manifest_test

import (
	"reflect"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

func TestVariableUses(t *testing.T) {
	t.Parallel()
	m, err := manifest.Decode([]byte(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "notes"
[spec.variables]
web_replicas = 2
domain = "notes.example.com"
unused = "x"
[[spec.services]]
name = "web"
replicas = "${{ vars.web_replicas }}"
[spec.services.source]
type = "image"
image = "ghcr.io/example/notes:1"
[spec.services.environment]
ORIGIN = "https://${{ vars.domain }}/"
APP = "${{ app.name }}"
[[spec.routes]]
hostname = "${{ vars.domain }}"
service = "web"
port = 8080
`), "toml")
	if err != nil {
		t.Fatal(err)
	}
	got := manifest.VariableUses(m)
	want := map[string][]string{
		"web_replicas": {"spec.services[0].replicas"},
		"domain":       {"spec.services[0].environment.ORIGIN", "spec.routes[0].hostname"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("uses = %v, want %v", got, want)
	}
}

package main

import (
	"strings"
	"testing"
)

const linksAuth = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "linkauth"
[[spec.services]]
name = "api"
[spec.services.source]
type = "image"
image = "example.com/notes:1"
[[spec.exports]]
service = "api"
applications = ["linknotes"]
[spec.environments.production]
`

const linksNotes = `api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = "linknotes"
[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = "example.com/notes:1"
[[spec.imports]]
application = "linkauth"
service = "api"
[[spec.imports]]
application = "linkauth"
service = "admin"
[spec.environments.production]
`

func TestCLI_EnvLinks(t *testing.T) {
	s := startCLIServer(t)
	for _, doc := range []string{linksAuth, linksNotes} {
		if _, stderr, code := runCLI(t, "app", "apply", "--file", writeManifest(t, doc)); code != 0 {
			t.Fatalf("apply: %d %s", code, stderr)
		}
	}
	stdout, stderr, code := runCLI(t, "env", "links", "linknotes", "production")
	if code != 0 || !strings.Contains(stdout, "has no links") {
		t.Fatalf("links before any deployment: %d\n%s\n%s", code, stdout, stderr)
	}
	for _, app := range []string{"linkauth", "linknotes"} {
		stdout, stderr, code := runCLI(t, "env", "deploy", app, "production")
		if code != 0 {
			t.Fatalf("deploy %s: %d %s", app, code, stderr)
		}
		s.succeedWithCapture(t, deploymentIDIn(t, stdout))
	}
	stdout, stderr, code = runCLI(t, "env", "links", "linknotes", "production")
	if code != 0 || !strings.Contains(stdout, "api of linkauth") || !strings.Contains(stdout, "api.linkauth") ||
		!strings.Contains(stdout, "admin of linkauth") || !strings.Contains(stdout, "not connected: ") {
		t.Fatalf("links of the importer: %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "app", "links", "linkauth", "--env", "production")
	if code != 0 || !strings.Contains(stdout, "IMPORTED BY") || !strings.Contains(stdout, "linknotes") {
		t.Fatalf("links of the exporter: %d\n%s\n%s", code, stdout, stderr)
	}
}

package docker_test

import (
	"testing"

	"github.com/docker/docker/api/types/versions"

	"github.com/slipwayhq/slipway/runtime/docker"
)

// TestConnect_FromEnvironment: the client follows DOCKER_HOST and
// negotiates the version with the real engine.
func TestConnect_FromEnvironment(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	if got := cli.DaemonHost(); got != "unix:///nonexistent/docker.sock" {
		t.Fatalf("daemon host %q, want the one DOCKER_HOST names", got)
	}
	cli.Close()

	t.Setenv("DOCKER_HOST", "")
	cli, err = docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	v, err := cli.ServerVersion(t.Context())
	if err != nil {
		t.Fatalf("docker is required: %v", err)
	}
	// Negotiated: never newer than the engine (a 20.10 engine has 1.41,
	// older than this client's default).
	if versions.GreaterThan(cli.ClientVersion(), v.APIVersion) {
		t.Fatalf("client speaks API %s, engine %s: the version was not negotiated", cli.ClientVersion(), v.APIVersion)
	}
}

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/riverqueue/river"

	appservice "github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/pipeline"
	slwswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// restoreManifest runs service api from image with replicas tasks, the
// variable version as VERSION, the stored secret db-password as a file
// and conf as /etc/app/app.conf.
func restoreManifest(app, image string, replicas int, version, conf string) string {
	return fmt.Sprintf(`
api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %q

[spec.variables]
version = %q

[[spec.services]]
name = "api"
replicas = %d
command = ["/app", "--sleep", "3600"]
secrets = [{ name = "db-password", target = "/run/secrets/db-password" }]
[spec.services.source]
type = "image"
image = %q
[spec.services.environment]
VERSION = "${{ vars.version }}"
[[spec.services.files]]
target = "/etc/app/app.conf"
content = %q
`, app, version, replicas, image, conf)
}

// TestRestore_BringsBackAnEarlierDeploymentExactly deploys version one of
// an application (job image, two replicas, VERSION=one, a file and the
// stored secret's first value), then version two (another image, one
// replica, other variable, file and secret value), then restores the
// first deployment through the service `slipway env restore` calls. The
// Swarm must run deployment one's spec again, the containers must hold
// the secret's first value although it was changed since, and the
// services must belong to the restore deployment.
func TestRestore_BringsBackAnEarlierDeploymentExactly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupSecrets(t)
	jobImage, webImage := swarmtest.Image(t, "job"), swarmtest.Image(t, "web")
	setSecret := func(prefix string) string {
		t.Helper()
		var rnd [12]byte
		_, _ = rand.Read(rnd[:])
		value := prefix + hex.EncodeToString(rnd[:])
		_, err := b.svc.Set(ctx, b.team.ID, b.app.ID, "db-password", []byte(value), "test")
		secretsMust(t, err)
		return value
	}

	firstValue := setSecret("first-")
	one := b.deploy(t, restoreManifest(b.app.Name, jobImage, 2, "one", "config one"), "db-password")
	specOne, _ := runningContainers(t, b.cli, b.env.ID, "api")

	secondValue := setSecret("second-")
	two := b.deploy(t, restoreManifest(b.app.Name, webImage, 1, "two", "config two"), "db-password")
	specTwo, _ := runningContainers(t, b.cli, b.env.ID, "api")
	if specTwo.Spec.TaskTemplate.ContainerSpec.Image == specOne.Spec.TaskTemplate.ContainerSpec.Image ||
		pinnedSecret(t, two) == pinnedSecret(t, one) {
		t.Fatalf("deployment two runs image %s with secret version %s, like deployment one: the test needs them to differ",
			specTwo.Spec.TaskTemplate.ContainerSpec.Image, pinnedSecret(t, two))
	}

	actor := appservice.Actor{TeamID: b.team.ID, UserID: "usr_e2e"}
	// The restore is advanced by hand below; its deploy job is not inserted.
	queueNothing := func(context.Context, *store.Store, river.JobArgs) error { return nil }
	requested, err := appservice.RestoreDeployment(ctx, b.st, actor, queueNothing, one.ID)
	secretsMust(t, err)
	restored := b.advance(t, requested.ID)
	if restored.Origin != store.OriginRestore || restored.RestoredFrom != one.ID {
		t.Fatalf("deployment %s has origin %s restored from %q, want restore of %s", restored.ID, restored.Origin, restored.RestoredFrom, one.ID)
	}
	if !bytes.Equal(restored.RenderedManifest, one.RenderedManifest) || !bytes.Equal(restored.Variables, one.Variables) {
		t.Fatalf("the restore rendered\n%s\nwith %s, want deployment one's\n%s\nwith %s",
			restored.RenderedManifest, restored.Variables, one.RenderedManifest, one.Variables)
	}
	if got, want := pinnedSecret(t, restored), pinnedSecret(t, one); got != want {
		t.Fatalf("the restore pinned secret version %s, want deployment one's %s", got, want)
	}

	svc, running := runningContainers(t, b.cli, b.env.ID, "api")
	spec := svc.Spec
	if spec.Labels[slwswarm.LabelDeployment] != restored.ID {
		t.Errorf("api carries deployment label %q, want the restore %s", spec.Labels[slwswarm.LabelDeployment], restored.ID)
	}
	cs := spec.TaskTemplate.ContainerSpec
	if cs.Image != specOne.Spec.TaskTemplate.ContainerSpec.Image || !slices.Contains(cs.Env, "VERSION=one") || *spec.Mode.Replicated.Replicas != 2 {
		t.Errorf("api runs image %s, env %v, %d replicas; want deployment one's image %s, VERSION=one, 2 replicas",
			cs.Image, cs.Env, *spec.Mode.Replicated.Replicas, specOne.Spec.TaskTemplate.ContainerSpec.Image)
	}
	if got, want := comparableSpec(t, spec), comparableSpec(t, specOne.Spec); got != want {
		t.Errorf("api's spec after the restore differs from deployment one's:\n got %s\nwant %s", got, want)
	}
	if len(running) != 2 {
		t.Fatalf("%d running api containers, want deployment one's 2", len(running))
	}
	oneImageID := prepareDetail(t, one)["id:api"]
	for _, c := range running {
		if c.Image != oneImageID {
			t.Errorf("container %s runs image %s, want deployment one's %s", c.ID[:12], c.Image, oneImageID)
		}
		out := execOutput(t, b.cli, c.ID, "/app", "--cat", "/run/secrets/db-password,/etc/app/app.conf", "--env", "VERSION")
		want := "/run/secrets/db-password 0444 " + firstValue + "\n/etc/app/app.conf 0444 config one\nVERSION=one\n"
		if out != want {
			t.Errorf("container %s holds\n%s\nwant deployment one's secret value, file and variable\n%s", c.ID[:12], out, want)
		}
		if strings.Contains(out, secondValue) {
			t.Errorf("container %s holds the secret's second value", c.ID[:12])
		}
	}
}

// pinnedSecret is the version of db-password deployment d pinned.
func pinnedSecret(t *testing.T, d store.Deployment) string {
	t.Helper()
	progress, err := pipeline.ParseProgress(d.Steps)
	secretsMust(t, err)
	capture := progress.Find("capture")
	if capture == nil || capture.Detail["secret:db-password"] == "" {
		t.Fatalf("deployment %s pinned no version of db-password: %s", d.ID, d.Steps)
	}
	return capture.Detail["secret:db-password"]
}

func prepareDetail(t *testing.T, d store.Deployment) map[string]string {
	t.Helper()
	progress, err := pipeline.ParseProgress(d.Steps)
	secretsMust(t, err)
	prep := progress.Find("prepare")
	if prep == nil {
		t.Fatalf("deployment %s has no prepare step: %s", d.ID, d.Steps)
	}
	return prep.Detail
}

// comparableSpec is a service spec as JSON without what legitimately
// differs between two deployments of the same spec: the deployment label
// and the IDs Docker gave the (re)created secrets and configs, which are
// named by their content.
func comparableSpec(t *testing.T, spec swarm.ServiceSpec) string {
	t.Helper()
	raw, err := json.Marshal(spec)
	secretsMust(t, err)
	var c swarm.ServiceSpec
	secretsMust(t, json.Unmarshal(raw, &c))
	delete(c.Labels, slwswarm.LabelDeployment)
	for _, s := range c.TaskTemplate.ContainerSpec.Secrets {
		s.SecretID = ""
	}
	for _, f := range c.TaskTemplate.ContainerSpec.Configs {
		f.ConfigID = ""
	}
	out, err := json.Marshal(c)
	secretsMust(t, err)
	return string(out)
}

// runningContainers is the environment's service as `docker service
// inspect` shows it and its running tasks' containers.
func runningContainers(t *testing.T, cli *client.Client, envID, service string) (swarm.Service, []container.InspectResponse) {
	t.Helper()
	ctx := context.Background()
	services, err := cli.ServiceList(ctx, swarm.ServiceListOptions{
		Filters: filters.NewArgs(filters.Arg("label", slwswarm.LabelEnv+"="+envID), filters.Arg("label", slwswarm.LabelService+"="+service)),
	})
	if err != nil || len(services) != 1 {
		t.Fatalf("services %s of environment %s: %d, %v", service, envID, len(services), err)
	}
	tasks, err := cli.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(
		filters.Arg("service", services[0].ID), filters.Arg("desired-state", "running"))})
	secretsMust(t, err)
	var out []container.InspectResponse
	for _, task := range tasks {
		if task.Status.State != swarm.TaskStateRunning || task.Status.ContainerStatus == nil {
			continue
		}
		c, err := cli.ContainerInspect(ctx, task.Status.ContainerStatus.ContainerID)
		secretsMust(t, err)
		out = append(out, c)
	}
	return services[0], out
}

// execOutput runs cmd in the container (docker exec) and returns its
// standard output; it must exit 0.
func execOutput(t *testing.T, cli *client.Client, containerID string, cmd ...string) string {
	t.Helper()
	ctx := context.Background()
	exec, err := cli.ContainerExecCreate(ctx, containerID, container.ExecOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	secretsMust(t, err)
	att, err := cli.ContainerExecAttach(ctx, exec.ID, container.ExecAttachOptions{})
	secretsMust(t, err)
	defer att.Close()
	var stdout, stderr bytes.Buffer
	_, err = stdcopy.StdCopy(&stdout, &stderr, att.Reader)
	secretsMust(t, err)
	res, err := cli.ContainerExecInspect(ctx, exec.ID)
	secretsMust(t, err)
	if res.ExitCode != 0 {
		t.Fatalf("exec %v in %s exited %d: %s", cmd, containerID[:12], res.ExitCode, stderr.String())
	}
	return stdout.String()
}

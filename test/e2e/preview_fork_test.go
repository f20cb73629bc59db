package e2e

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/slipwayhq/slipway/app/webhook"
	slwswarm "github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// forkPreviewManifest is the manifest of the fork test: web, mounting the
// stored secret api-key when mountSecret, and plain, which mounts no
// secret, each routed at a hostname of the preview's slug.
func forkPreviewManifest(app, image string, mountSecret bool) string {
	mount := ""
	if mountSecret {
		mount = `[[spec.services.secrets]]
name = "api-key"
target = "/run/secrets/api-key"
`
	}
	return fmt.Sprintf(`api_version = "slipway.dev/v1alpha1"
kind = "Application"
[metadata]
name = %[1]q

[spec.variables]
domain = "%[1]s.prod.test"
plain_domain = "plain.%[1]s.prod.test"

[spec.previews]
visibility = "public"
[spec.previews.variables]
domain = "${{ env.slug }}.preview.test"
plain_domain = "plain-${{ env.slug }}.preview.test"

[[spec.services]]
name = "web"
[spec.services.source]
type = "image"
image = %[2]q
[spec.services.environment]
VERSION = "${{ git.sha }}"
[spec.services.healthcheck]
type = "http"
port = 8080
path = "/health"
interval_seconds = 2
timeout_seconds = 2
start_period_seconds = 30
retries = 5
%[3]s
[[spec.services]]
name = "plain"
[spec.services.source]
type = "image"
image = %[2]q
[spec.services.environment]
VERSION = "${{ git.sha }}"

[[spec.routes]]
hostname = "${{ vars.domain }}"
service = "web"
port = 8080
visibility = "public"

[[spec.routes]]
hostname = "${{ vars.plain_domain }}"
service = "plain"
port = 8080
visibility = "public"
`, app, image, mount)
}

// pullHead commits manifest as the new head of pull request number from a
// fork. As GitHub keeps a fork's commits in the base repository, the commit
// is reachable only from refs/pull/<number>/head (on top of its previous
// head), never from a branch.
func (g *ghRepoFixture) pullHead(number int, manifest, msg string) string {
	g.t.Helper()
	pullRef := plumbing.ReferenceName(fmt.Sprintf("refs/pull/%d/head", number))
	scratch := plumbing.NewBranchReferenceName(fmt.Sprintf("fork-scratch-%d", number))
	w, err := g.repo.Worktree()
	ghMust(g.t, err)
	from := plumbing.ZeroHash
	if ref, err := g.repo.Reference(pullRef, false); err == nil {
		from = ref.Hash()
	}
	ghMust(g.t, w.Checkout(&git.CheckoutOptions{Branch: scratch, Create: true, Hash: from, Force: true}))
	sha := g.commit(scratch.Short(), manifest, msg)
	ghMust(g.t, g.repo.Storer.SetReference(plumbing.NewHashReference(pullRef, plumbing.NewHash(sha))))
	ghMust(g.t, w.Checkout(&git.CheckoutOptions{Branch: plumbing.Main, Force: true}))
	ghMust(g.t, g.repo.Storer.RemoveReference(scratch))
	return sha
}

// leakScanner finds a secret value in raw, hex, base64 and base64url form.
type leakScanner struct {
	forms map[string]string // encoded value -> its encoding's name
}

func newLeakScanner(value string) leakScanner {
	b := []byte(value)
	return leakScanner{forms: map[string]string{
		value:                                   "raw",
		hex.EncodeToString(b):                   "hex",
		base64.StdEncoding.EncodeToString(b):    "base64",
		base64.RawStdEncoding.EncodeToString(b): "base64 (unpadded)",
		base64.URLEncoding.EncodeToString(b):    "base64url",
		base64.RawURLEncoding.EncodeToString(b): "base64url (unpadded)",
	}}
}

// find names the encodings of the value that text holds.
func (s leakScanner) find(text []byte) []string {
	var hits []string
	for form, name := range s.forms {
		if strings.Contains(string(text), form) {
			hits = append(hits, name)
		}
	}
	return hits
}

// containerFiles reads every regular file a running service's container
// sees (mounted secrets included; /proc, /sys and /dev excluded), through
// the gateway at Host host and the test image's /files endpoint.
func containerFiles(t *testing.T, gw, host string) map[string][]byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, gw+"/files?root=/", nil)
	ghMust(t, err)
	req.Host = host
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	ghMust(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /files of %s: %d", host, resp.StatusCode)
	}
	out := map[string][]byte{}
	tr := tar.NewReader(resp.Body)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		ghMust(t, err)
		b, err := io.ReadAll(tr)
		ghMust(t, err)
		out[h.Name] = b
	}
}

// TestGitHub_ForkPreviewNeverMountsStoredSecrets deploys, end to end on the
// real Swarm, the preview of a pull request from a fork whose application
// has a stored secret that allows previews. Signed deliveries go through
// the webhook intake and the real GitHub jobs against the fake GitHub. The
// fork's pull request waits for approval; once a member approves it, the
// preview deploys from pull/<n>/head and fails with secret_access_denied
// naming the secret while its manifest mounts it, runs without it once the
// fork drops the mount, and keeps running so when a later approved head
// mounts it again. The secret is in no Swarm secret or service of the
// preview, in no file of its containers, in no API answer and in nothing
// sent to GitHub. A same-repository pull request by a writer, with the
// same manifest, mounts it: its Swarm secret, service and container file
// show that the Swarm and file checks see a mounted secret.
func TestGitHub_ForkPreviewNeverMountsStoredSecrets(t *testing.T) {
	t.Parallel()
	bin := slipwayBinary(t)
	cli := swarmtest.Client(t)
	image := swarmtest.Image(t, "web")
	id := swarmtest.ID()
	appName := "fork-" + strings.ToLower(id)
	gatewayName := "slipway-gw-fork-" + id
	envs := devCleanup(t, cli, gatewayName)
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "slipway-fork-e2e-")
	ghMust(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ghMust(t, os.Chmod(dir, 0o755))

	repo := newGHRepo(t, filepath.Join(dir, "notes.git"))
	repo.commit("main", forkPreviewManifest(appName, image, true), "main")
	trustedSHA := repo.commit("feature", forkPreviewManifest(appName, image, true)+"\n# feature\n", "feature")
	forkSHA1 := repo.pullHead(8, forkPreviewManifest(appName, image, true)+"\n# fork 1\n", "fork 1: mounts api-key")

	gh := startGitHubDev(t, bin, gatewayName, dir, repo.url())
	gh.fake.SetPermission(ghRepo, "wendy", "write")
	gh.connectApplication(t, appName)
	base, token := gh.base, gh.token
	runCLI := cliRunner(t, bin, base, token, "")
	deliver := func(delivery string, body []byte) {
		t.Helper()
		if code := postWebhook(t, base, delivery+"-"+id, "pull_request", body, webhook.SignatureHeader(gh.secret, body)); code != http.StatusAccepted {
			t.Fatalf("delivery %s: %d, want 202", delivery, code)
		}
	}

	// The stored secret, allowing previews.
	random := make([]byte, 12)
	_, err = rand.Read(random)
	ghMust(t, err)
	value := "fork-canary-" + hex.EncodeToString(random)
	scan := newLeakScanner(value)
	for _, form := range []string{value, base64.StdEncoding.EncodeToString([]byte(value)), hex.EncodeToString([]byte(value))} {
		if len(scan.find([]byte("<"+form+">"))) == 0 {
			t.Fatalf("the scanner misses the value embedded as %q", form)
		}
	}
	var stored struct {
		Previews bool `json:"previews"`
	}
	api(t, "PUT", base+"/api/v1/applications/"+appName+"/secrets/api-key", token, "application/json",
		`{"value":"`+value+`","previews":true}`, &stored)
	if !stored.Previews {
		t.Fatalf("secret api-key does not allow previews: %+v", stored)
	}

	type deployment struct {
		ID           string `json:"id"`
		State        string `json:"state"`
		Terminal     bool   `json:"terminal"`
		ErrorCode    string `json:"error_code"`
		ErrorMessage string `json:"error_message"`
	}
	type preview struct {
		ID         string      `json:"id"`
		Slug       string      `json:"slug"`
		Branch     string      `json:"branch"`
		Untrusted  bool        `json:"untrusted"`
		Deployment *deployment `json:"deployment"`
	}
	previewOf := func(branch string) (preview, bool) {
		var l struct{ Previews []preview }
		api(t, "GET", base+"/api/v1/applications/"+appName+"/previews", token, "", "", &l)
		for _, p := range l.Previews {
			if p.Branch == branch {
				return p, true
			}
		}
		return preview{}, false
	}
	// settled waits for a terminal deployment of branch's preview other
	// than the one before.
	settled := func(branch, before string) preview {
		t.Helper()
		var p preview
		eventually(t, "deployment of "+branch, 5*time.Minute, func() (bool, string) {
			var ok bool
			p, ok = previewOf(branch)
			if ok {
				envs.Add(p.ID)
			}
			if !ok || p.Deployment == nil || p.Deployment.ID == before {
				return false, fmt.Sprintf("%+v", p)
			}
			return p.Deployment.Terminal, p.Deployment.State
		})
		return p
	}
	comment := func(number int, want ...string) func() (bool, string) { return ghComment(gh.fake, number, want...) }
	gw := fmt.Sprintf("http://127.0.0.1:%d", gh.gwPort)
	serves := func(host, path, want string) func() (bool, string) {
		return func() (bool, string) {
			status, body, err := get(gw+path, host)
			return err == nil && status == http.StatusOK && strings.TrimSpace(body) == want, fmt.Sprintf("%d %q %v", status, body, err)
		}
	}

	// The control: a writer's pull request from the repository itself
	// deploys automatically and mounts the secret.
	deliver("trusted", ghPullRequest("opened", 7, "feature", trustedSHA, "wendy", ghRepoID))
	trusted := settled("feature", "")
	if trusted.Deployment.State != "succeeded" || trusted.Untrusted {
		t.Fatalf("the writer's preview: %+v %+v, want a trusted succeeded deployment", trusted, trusted.Deployment)
	}
	trustedHost := trusted.Slug + ".preview.test"
	eventually(t, "the writer's preview reads the secret", 90*time.Second, serves(trustedHost, "/file?path=/run/secrets/api-key", value))

	// The fork's pull request: no preview until a member approves it.
	deliver("fork-opened", ghPullRequest("opened", 8, "main", forkSHA1, "mallory", ghForkRepoID))
	eventually(t, "approval comment", 60*time.Second, comment(8, "Waiting for approval", forkSHA1[:12]))
	if p, ok := previewOf("pull/8/head"); ok {
		t.Fatalf("the fork's pull request got a preview before an approval: %+v", p)
	}
	if l := runCLI("preview", "approve", appName, "8"); !strings.Contains(l, "from a fork") {
		t.Errorf("slipway preview approve:\n%s", l)
	}

	// Approved, its manifest mounting api-key: refused, naming the secret.
	fork := settled("pull/8/head", "")
	if !fork.Untrusted {
		t.Errorf("the fork's preview %+v is not marked untrusted", fork)
	}
	// denied reports a deployment that is not refused as a leak and goes
	// on, so the checks below show what such a leak reaches.
	denied := func(d *deployment) bool {
		t.Helper()
		if d.State != "failed" || d.ErrorCode != "secret_access_denied" || !strings.Contains(d.ErrorMessage, `"api-key"`) || !strings.Contains(d.ErrorMessage, "fork") {
			t.Errorf("LEAK: fork preview deployment ended %s %s: %s; want failed secret_access_denied naming \"api-key\" and forks", d.State, d.ErrorCode, d.ErrorMessage)
			return false
		}
		return true
	}
	if denied(fork.Deployment) {
		eventually(t, "failed comment", 60*time.Second, comment(8, "Failed", "secret_access_denied", "api-key", forkSHA1[:12]))
		if s, _, _ := envObjectCount(t, cli, fork.ID); s != 0 {
			t.Errorf("the refused fork preview left %d services", s)
		}
	}

	// The fork drops the mount: the new head waits for an approval again,
	// then runs without the secret.
	forkSHA2 := repo.pullHead(8, forkPreviewManifest(appName, image, false), "fork 2: no secret")
	deliver("fork-sync-2", ghPullRequest("synchronize", 8, "main", forkSHA2, "mallory", ghForkRepoID))
	eventually(t, "approval comment of the second head", 60*time.Second, comment(8, "Waiting for approval", forkSHA2[:12]))
	var approval struct {
		HeadSHA  string `json:"head_sha"`
		FromFork bool   `json:"from_fork"`
	}
	api(t, "POST", base+"/api/v1/applications/"+appName+"/pull-requests/8/approve", token, "", "", &approval)
	if approval.HeadSHA != forkSHA2 || !approval.FromFork {
		t.Fatalf("approval %+v, want the fork's head %s", approval, forkSHA2)
	}
	fork = settled("pull/8/head", fork.Deployment.ID)
	if fork.Deployment.State != "succeeded" {
		t.Fatalf("fork preview without the mount: %+v", fork.Deployment)
	}
	forkHost := fork.Slug + ".preview.test"
	eventually(t, "the fork's preview through the gateway", 90*time.Second, serves(forkHost, "/version", forkSHA2))
	eventually(t, "the fork's plain service through the gateway", 90*time.Second, serves("plain-"+forkHost, "/version", forkSHA2))
	if status, body, err := get(gw+"/file?path=/run/secrets/api-key", forkHost); err != nil || status != http.StatusNotFound {
		t.Errorf("the fork's preview reading /run/secrets/api-key: %d %q %v, want 404", status, body, err)
	}

	// A later head mounting it again, approved too, is refused as well and
	// leaves the running preview as it was.
	forkSHA3 := repo.pullHead(8, forkPreviewManifest(appName, image, true)+"\n# fork 3\n", "fork 3: mounts api-key again")
	deliver("fork-sync-3", ghPullRequest("synchronize", 8, "main", forkSHA3, "mallory", ghForkRepoID))
	eventually(t, "approval comment of the third head", 60*time.Second, comment(8, "Waiting for approval", forkSHA3[:12]))
	runCLI("preview", "approve", appName, "#8")
	fork = settled("pull/8/head", fork.Deployment.ID)
	if denied(fork.Deployment) {
		eventually(t, "failed comment of the third head", 60*time.Second, comment(8, "Failed", "secret_access_denied", forkSHA3[:12]))
		eventually(t, "the fork's preview still at its second head", 30*time.Second, serves(forkHost, "/version", forkSHA2))
	}

	// The Swarm: no secret of the fork's preview, and no reference from its
	// services, is the stored secret; the writer's preview has both.
	storedSecrets, err := cli.SecretList(ctx, swarm.SecretListOptions{Filters: filters.NewArgs(filters.Arg("label", "dev.slipway.secret=api-key"))})
	ghMust(t, err)
	storedNames := map[string]string{} // secret name -> environment
	for _, s := range storedSecrets {
		storedNames[s.Spec.Name] = s.Spec.Labels[slwswarm.LabelEnv]
		if s.Spec.Labels[slwswarm.LabelEnv] == fork.ID {
			t.Errorf("LEAK: Swarm secret %s holds api-key for the fork's preview", s.Spec.Name)
		}
	}
	servicesOf := func(envID string) []swarm.Service {
		l, err := cli.ServiceList(ctx, swarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", slwswarm.LabelEnv+"="+envID))})
		ghMust(t, err)
		return l
	}
	mountsStored := func(svc swarm.Service) bool {
		for _, ref := range svc.Spec.TaskTemplate.ContainerSpec.Secrets {
			if _, ok := storedNames[ref.SecretName]; ok || (ref.File != nil && ref.File.Name == "api-key") {
				return true
			}
		}
		return false
	}
	trustedMounts := 0
	for _, svc := range servicesOf(trusted.ID) {
		if mountsStored(svc) {
			trustedMounts++
		}
	}
	if trustedMounts != 1 {
		t.Fatalf("%d services of the writer's preview mount api-key, want 1 (web): the check sees nothing", trustedMounts)
	}
	forkServices := servicesOf(fork.ID)
	if len(forkServices) != 2 {
		t.Fatalf("the fork's preview runs %d services, want web and plain", len(forkServices))
	}
	scanned, leaks := 0, 0
	found := func(what string, text []byte) {
		t.Helper()
		scanned++
		if hits := scan.find(text); len(hits) > 0 {
			leaks++
			t.Errorf("LEAK: %s holds the secret value (%s)", what, strings.Join(hits, ", "))
		}
	}
	for _, svc := range forkServices {
		if mountsStored(svc) {
			t.Errorf("LEAK: fork preview service %s references the stored secret", svc.Spec.Name)
		}
		_, raw, err := cli.ServiceInspectWithRaw(ctx, svc.ID, swarm.ServiceInspectOptions{})
		ghMust(t, err)
		found("docker service inspect "+svc.Spec.Name, raw)
	}

	// The containers' files, as their code sees them: the writer's web
	// holds the value, so reading them is shown to see a mounted secret;
	// no file of the fork's web or plain does.
	trustedFiles := containerFiles(t, gw, trustedHost)
	seen := false
	for _, b := range trustedFiles {
		seen = seen || len(scan.find(b)) > 0
	}
	if !seen {
		t.Fatalf("no file of the writer's web container holds the value (%d files read): the check sees nothing", len(trustedFiles))
	}
	forkFiles := 0
	for _, host := range []string{forkHost, "plain-" + forkHost} {
		files := containerFiles(t, gw, host)
		if _, ok := files["/app"]; !ok {
			t.Fatalf("the files of %s lack /app: %d files read", host, len(files))
		}
		forkFiles += len(files)
		for name, b := range files {
			found("file "+name+" of the fork preview's container at "+host, b)
		}
	}

	// The API: the previews, the fork's deployments, the application's
	// deployments and the audit log.
	apiGET := func(path string) []byte {
		var raw json.RawMessage
		api(t, "GET", base+"/api/v1"+path, token, "", "", &raw)
		found("GET "+path, raw)
		return raw
	}
	apiGET("/applications/" + appName + "/previews")
	apiGET("/applications/" + appName + "/previews/" + fork.Slug)
	apiGET("/applications/" + appName + "/previews/" + fork.Slug + "/routes")
	var deps struct {
		Deployments []deployment `json:"deployments"`
	}
	ghMust(t, json.Unmarshal(apiGET("/applications/"+appName+"/deployments?env="+fork.Slug+"&limit=100"), &deps))
	if len(deps.Deployments) != 3 {
		t.Errorf("the fork's preview lists %d deployments, want 3", len(deps.Deployments))
	}
	for _, d := range deps.Deployments {
		apiGET("/deployments/" + d.ID)
	}
	apiGET("/applications/" + appName + "/deployments?limit=100")
	var events struct {
		Events []struct {
			Verb string `json:"verb"`
		} `json:"events"`
	}
	ghMust(t, json.Unmarshal(apiGET("/events?limit=200"), &events))
	verbs := map[string]int{}
	for _, e := range events.Events {
		verbs[e.Verb]++
	}
	if verbs["preview.approval_requested"] != 3 || verbs["preview.approved"] != 3 {
		t.Errorf("audit log: %d approval requests and %d approvals, want 3 each", verbs["preview.approval_requested"], verbs["preview.approved"])
	}

	// GitHub: the comment, and every request Slipway made to it.
	for _, c := range gh.fake.Comments(ghRepo, 8) {
		found("the fork's pull request comment", []byte(c.Body))
	}
	for _, c := range gh.fake.Calls() {
		found("GitHub call "+c.Method+" "+c.Path, []byte(c.Path+"\n"+c.Body))
	}
	t.Logf("fork preview: %d hits of the stored secret in %d scanned outputs (%d of them container files)", leaks, scanned, forkFiles)
}

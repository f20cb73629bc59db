package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store/storetest"
)

// errorPaths returns the paths of a 422 manifest_validation_failed answer
// whose errors all carry code.
func errorPaths(t *testing.T, r reply, code string) []string {
	t.Helper()
	want(t, r, http.StatusUnprocessableEntity, "manifest_validation_failed")
	var out []string
	for _, e := range r.body["details"].(map[string]any)["errors"].([]any) {
		fe := e.(map[string]any)
		if fe["code"] != code {
			t.Fatalf("error %v, want code %s", fe, code)
		}
		out = append(out, fe["path"].(string))
	}
	return out
}

func TestFieldEdit_AddAndRemoveService(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	worker := `{"name":"worker","source":{"type":"image","image":"example.com/worker:1"},"replicas":2,"depends_on":["db"]}`
	want(t, b.edit(t, http.MethodPost, "/services", worker, "If-Match", "1"), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPost, "/services", worker), http.StatusConflict, "service_name_taken")
	// The body is read by the manifest's strict decoder: a mistyped value
	// is refused naming its field, never read as zero.
	want(t, b.edit(t, http.MethodPost, "/services", `{"name":"x","sauce":{}}`), http.StatusBadRequest, "unknown_field")
	r := b.edit(t, http.MethodPost, "/services", `{"name":"x","source":{"type":"image","image":"example.com/x:1"},"replicas":"two"}`)
	want(t, r, http.StatusBadRequest, "type_mismatch")
	if r.body["details"].(map[string]any)["field"] != "replicas" {
		t.Fatalf("mistyped replicas: %s", r.raw)
	}
	want(t, b.edit(t, http.MethodPost, "/services", `{"name":"x"}]},"spec":{"services":[{"name":"y"}`), http.StatusBadRequest, "json_malformed")
	want(t, b.edit(t, http.MethodPost, "/services", `{"name":"cron","source":{"type":"image","image":"example.com/cron:1"}}`, "If-Match", "1"),
		http.StatusConflict, "generation_conflict")
	r = b.edit(t, http.MethodPost, "/services", `{"name":"cron","source":{"type":"image","image":"example.com/cron:1"},"depends_on":["ghost"]}`)
	if got := errorPaths(t, r, "service_dependency_missing"); !slices.Equal(got, []string{"spec.services[3].depends_on[0]"}) {
		t.Fatalf("invalid service: %s", r.raw)
	}
	m, rev := b.saved(t, "shop")
	if rev != 2 || len(m.Spec.Services) != 3 || m.Spec.Services[2].Name != "worker" || m.Spec.Services[2].Replicas.N != 2 {
		t.Fatalf("after add revision %d services %+v", rev, m.Spec.Services)
	}

	// db is named by web's and worker's depends_on, the migrate job and
	// the export: the job and the export refuse the removal, each named.
	r = b.edit(t, http.MethodDelete, "/services/db", "")
	if got := errorPaths(t, r, "service_referenced"); !slices.Equal(got, []string{"spec.jobs[0].service", "spec.exports[0].service"}) {
		t.Fatalf("removing a referenced service: %s", r.raw)
	}
	want(t, b.edit(t, http.MethodDelete, "/services/ghost", ""), http.StatusNotFound, "service_unknown")
	want(t, b.edit(t, http.MethodDelete, "/jobs/migrate", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/exports/db", ""), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/services/db", "", "If-Match", "3"), http.StatusConflict, "generation_conflict")
	r = b.edit(t, http.MethodDelete, "/services/db?deploy=true", "", "If-Match", "4")
	want(t, r, http.StatusOK, "")
	if n := len(r.body["deployments"].([]any)); n != 2 {
		t.Fatalf("?deploy=true queued %d deployments: %s", n, r.raw)
	}
	m, rev = b.saved(t, "shop")
	if rev != 5 || len(m.Spec.Services) != 2 || m.Spec.Services[0].DependsOn != nil || m.Spec.Services[1].DependsOn != nil {
		t.Fatalf("after removal revision %d services %+v", rev, m.Spec.Services)
	}
}

func TestFieldEdit_GeneratedSecretDeclarations(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t)
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	want(t, b.edit(t, http.MethodPut, "/generated-secrets/session", `{"generate":{"type":"random","bytes":32}}`), http.StatusOK, "")
	want(t, b.edit(t, http.MethodPut, "/generated-secrets/session", `{"name":"other","generate":{"type":"random","bytes":32}}`), http.StatusBadRequest, "name_mismatch")
	r := b.edit(t, http.MethodPut, "/generated-secrets/key", `{"generate":{"type":"rsa","bits":1000}}`)
	if got := errorPaths(t, r, "secret_generate_invalid"); !slices.Equal(got, []string{"spec.secrets[1].generate.bits"}) {
		t.Fatalf("invalid generator: %s", r.raw)
	}
	// A stored secret's name can't be declared too.
	want(t, b.edit(t, http.MethodPut, "/secrets/api-key", `{"value":"`+secretValue+`"}`), http.StatusOK, "")
	r = b.edit(t, http.MethodPut, "/generated-secrets/api-key", `{"generate":{"type":"random","bytes":16}}`)
	if got := errorPaths(t, r, "secret_name_conflict"); !slices.Equal(got, []string{"spec.secrets[1].name"}) {
		t.Fatalf("declaring a stored name: %s", r.raw)
	}

	// web mounts session: removing the declaration names the mount.
	want(t, b.edit(t, http.MethodPost, "/services", `{"name":"api","source":{"type":"image","image":"example.com/api:1"},`+
		`"secrets":[{"name":"session","target":"/run/secrets/session"}]}`), http.StatusOK, "")
	r = b.edit(t, http.MethodDelete, "/generated-secrets/session", "")
	if got := errorPaths(t, r, "secret_mounted"); !slices.Equal(got, []string{"spec.services[2].secrets[0].name"}) {
		t.Fatalf("undeclaring a mounted secret: %s", r.raw)
	}
	r = b.edit(t, http.MethodPut, "/generated-secrets", `{"secrets":[{"name":"signing","generate":{"type":"rsa","bits":2048}}]}`)
	if got := errorPaths(t, r, "secret_mounted"); !slices.Equal(got, []string{"spec.services[2].secrets[0].name"}) {
		t.Fatalf("replacing away a mounted secret: %s", r.raw)
	}
	want(t, b.edit(t, http.MethodPut, "/generated-secrets", `{"secrets":[{"name":"session","generate":{"type":"random","bytes":48,"encoding":"base64url"}},`+
		`{"name":"signing","generate":{"type":"rsa","bits":2048}}]}`, "If-Match", "3"), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/generated-secrets/signing", "", "If-Match", "3"), http.StatusConflict, "generation_conflict")
	want(t, b.edit(t, http.MethodDelete, "/generated-secrets/signing", "", "If-Match", "4"), http.StatusOK, "")
	want(t, b.edit(t, http.MethodDelete, "/generated-secrets/signing", ""), http.StatusNotFound, "secret_declaration_unknown")
	m, rev := b.saved(t, "shop")
	if rev != 5 || len(m.Spec.Secrets) != 1 || m.Spec.Secrets[0].Name != "session" || m.Spec.Secrets[0].Generate.Bytes != 48 {
		t.Fatalf("revision %d secrets %+v", rev, m.Spec.Secrets)
	}
	if len(b.jobs.queued()) != 0 {
		t.Fatalf("edits without ?deploy queued %d deployments", len(b.jobs.queued()))
	}
}

// TestFieldEdit_ConcurrentEditsOverHTTP sends two field edits of the same
// revision at once, over TCP to the API on a database of its own (each
// request commits its own transaction), several times: each time exactly
// one saves, the other is 409 generation_conflict, and the saved manifest
// holds the winner's change and not the loser's.
func TestFieldEdit_ConcurrentEditsOverHTTP(t *testing.T) {
	t.Parallel()
	b := setupDeployOn(t, storetest.NewSchema(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// fasthttp serves the app's handler without Fiber's startup banner.
	srv := &fasthttp.Server{Handler: b.f.Handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	base := "http://" + ln.Addr().String() + "/api/v1/applications/shop"
	want(t, b.apply(t, twoServices, ""), http.StatusCreated, "")

	send := func(method, path, body string, revision int64) (int, string, error) {
		req, err := http.NewRequest(method, base+path, bytes.NewReader([]byte(body)))
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+b.owner)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("If-Match", strconv.FormatInt(revision, 10))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		var out struct {
			Code string `json:"code"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out.Code, err
	}

	for round := int64(1); round <= 5; round++ {
		worker := fmt.Sprintf("worker-%d", round)
		secret := fmt.Sprintf("key-%d", round)
		edits := []struct{ method, path, body string }{
			{http.MethodPost, "/services", `{"name":"` + worker + `","source":{"type":"image","image":"example.com/worker:1"}}`},
			{http.MethodPut, "/generated-secrets/" + secret, `{"generate":{"type":"random","bytes":16}}`},
		}
		status := make([]int, len(edits))
		codes := make([]string, len(edits))
		errs := make([]error, len(edits))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, e := range edits {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				status[i], codes[i], errs[i] = send(e.method, e.path, e.body, round)
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i := range edits {
			switch {
			case errs[i] != nil:
				t.Fatalf("round %d edit %d: %v", round, i, errs[i])
			case status[i] == http.StatusOK && winner < 0:
				winner = i
			case status[i] != http.StatusConflict || codes[i] != "generation_conflict":
				t.Fatalf("round %d: statuses %v codes %v, want one 200 and one 409 generation_conflict", round, status, codes)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no edit saved: statuses %v codes %v", round, status, codes)
		}
		m, rev := b.saved(t, "shop")
		hasWorker := slices.ContainsFunc(m.Spec.Services, func(s manifest.Service) bool { return s.Name == worker })
		hasSecret := slices.ContainsFunc(m.Spec.Secrets, func(s manifest.SecretDeclaration) bool { return s.Name == secret })
		if rev != round+1 || hasWorker != (winner == 0) || hasSecret != (winner == 1) {
			t.Fatalf("round %d: revision %d, worker saved %v, secret saved %v; winner was edit %d", round, rev, hasWorker, hasSecret, winner)
		}
	}
}

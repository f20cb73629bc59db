package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/slipwayhq/slipway/store"
)

// shopWithSessionKey is shopManifest with a declared secret that web mounts.
const shopWithSessionKey = `api_version = "slipway.dev/v1alpha1"
kind = "Application"

[metadata]
name = "shop"

[[spec.secrets]]
name = "session-key"
generate = { type = "random", bytes = 32 }

[[spec.services]]
name = "web"

[spec.services.source]
type = "image"
image = "registry.example/shop:1"

[[spec.services.secrets]]
name = "session-key"
target = "/run/secrets/session"
`

// TestGeneratedSecrets_Edit drives the Generated secrets card of the
// Secrets tab: declarations are listed with their size and mounts, added,
// changed and removed as manifest revisions (with the form's revision
// checked), refusals name the field path and code where they happened,
// and a viewer sees the list without forms and gets 403.
func TestGeneratedSecrets_Edit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupSecrets(t)
	owner, br, a := b.ownerWithApp(t, shopWithSessionKey)
	tab := "/applications/" + a.ID + "/secrets"
	base := "/applications/" + a.ID + "/generated-secrets"
	row := func(r response, name string) string {
		t.Helper()
		cells := r.doc.Find(`[data-testid="declaration-row"][data-secret="` + name + `"] td`).Map(func(_ int, td *goquery.Selection) string {
			return strings.Join(strings.Fields(td.Text()), " ")
		})
		return strings.Join(cells, " | ")
	}

	r := br.get(tab)
	wantStatus(t, r, http.StatusOK)
	if got := row(r, "session-key"); got != "session-key | random | 32 bytes, hex | service web at /run/secrets/session | Remove" {
		t.Fatalf("declaration row %q", got)
	}
	if testid(r, "declare-form").Length() != 1 {
		t.Fatalf("an owner has no declaration form: %s", truncate(r.body))
	}

	// Add: a plain post is redirected; htmx gets the tab with the notice.
	wantStatus(t, br.post(base, url.Values{"name": {"signing-key"}, "type": {"rsa"}, "bytes": {""}, "encoding": {"hex"}, "bits": {"4096"}, "revision": {"1"}}), http.StatusSeeOther)
	r = br.htmx(base, url.Values{"name": {"api-key"}, "type": {"random"}, "bytes": {"48"}, "encoding": {"base64url"}, "bits": {"3072"}, "revision": {"2"}})
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "secrets-notice").Text(), "revision 3") {
		t.Fatalf("htmx declare: %s", truncate(r.body))
	}
	if got := row(r, "api-key"); got != "api-key | random | 48 bytes, base64url | nothing, so never generated | Remove" {
		t.Fatalf("api-key row %q", got)
	}
	// Saving a declared name changes its declaration; an empty size takes the default.
	wantStatus(t, br.post(base, url.Values{"name": {"signing-key"}, "type": {"rsa"}, "bits": {""}, "revision": {"3"}}), http.StatusSeeOther)
	r = br.get(tab)
	if got := testid(r, "declaration-row").Length(); got != 3 {
		t.Fatalf("%d declarations, want 3", got)
	}
	if got := row(r, "signing-key"); !strings.HasPrefix(got, "signing-key | rsa | 3072 bits |") {
		t.Fatalf("signing-key row %q", got)
	}
	rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil || rev.Revision != 4 || !strings.Contains(string(rev.Manifest), `"bits": 3072`) || !strings.Contains(string(rev.Manifest), `"base64url"`) {
		t.Fatalf("revision %d %s (%v)", rev.Revision, rev.Manifest, err)
	}

	// A stored secret's name cannot be declared.
	wantStatus(t, br.post(tab, url.Values{"name": {"api-token"}, "value": {"stored-value"}}), http.StatusOK)

	refusals := []struct {
		name string
		path string
		form url.Values
		at   string // the error's selector
		want []string
	}{
		{"remove while mounted", "/session-key/remove", url.Values{"revision": {"4"}},
			`[data-secret="session-key"] [data-testid="declaration-error"]`, []string{"spec.services[0].secrets[0].name", "service web mounts generated secret session-key at /run/secrets/session", "(secret_mounted)"}},
		{"stale form", "", url.Values{"name": {"other"}, "type": {"random"}, "revision": {"1"}},
			`[data-testid="declare-error"]`, []string{"expected_revision", "(generation_conflict)"}},
		{"stored name", "", url.Values{"name": {"api-token"}, "type": {"random"}, "revision": {"4"}},
			`[data-testid="declare-error"]`, []string{"spec.secrets[", ".name", "(secret_name_conflict)"}},
		{"too few bytes", "", url.Values{"name": {"short"}, "type": {"random"}, "bytes": {"8"}, "revision": {"4"}},
			`[data-testid="declare-error"]`, []string{".generate.bytes", "(secret_generate_invalid)"}},
		{"bytes not a number", "", url.Values{"name": {"short"}, "type": {"random"}, "bytes": {"many"}, "revision": {"4"}},
			`[data-testid="declare-error"]`, []string{"generate.bytes", "(not_an_integer)"}},
		{"remove unknown", "/nope/remove", url.Values{"revision": {"4"}},
			`[data-testid="declare-error"]`, []string{"name: the manifest declares no generated secret \"nope\" (secret_declaration_unknown)"}},
	}
	for _, tc := range refusals {
		r := br.post(base+tc.path, tc.form)
		wantStatus(t, r, http.StatusUnprocessableEntity)
		got := r.doc.Find(tc.at).Text()
		if n := r.doc.Find(".field-error").Length(); n != 1 {
			t.Errorf("%s: %d errors shown, want 1", tc.name, n)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: error %q, want %q", tc.name, got, w)
			}
		}
	}
	// htmx swaps only 2xx answers in, so its refusal is 200 with the error inline.
	r = br.htmx(base+"/session-key/remove", url.Values{"revision": {"4"}})
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "declaration-error").Text(), "secret_mounted") {
		t.Fatalf("htmx refusal: %s", truncate(r.body))
	}
	if rev, err := b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID); err != nil || rev.Revision != 4 {
		t.Fatalf("a refusal saved revision %d (%v)", rev.Revision, err)
	}

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vb := b.sessionBrowser(t, viewer)
	r = vb.get(tab)
	wantStatus(t, r, http.StatusOK)
	if testid(r, "declaration-row").Length() != 3 {
		t.Fatalf("a viewer does not see the declarations: %s", truncate(r.body))
	}
	if testid(r, "declare-form").Length()+testid(r, "declaration-remove").Length() != 0 {
		t.Fatal("a viewer is offered declaration forms")
	}
	wantStatus(t, vb.post(base, url.Values{"name": {"other"}, "type": {"random"}}), http.StatusForbidden)
	wantStatus(t, vb.post(base+"/api-key/remove", nil), http.StatusForbidden)

	wantStatus(t, br.post(base+"/api-key/remove", url.Values{"revision": {"4"}}), http.StatusSeeOther)
	r = br.htmx(base+"/signing-key/remove", url.Values{"revision": {"5"}})
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(testid(r, "secrets-notice").Text(), "revision 6") || testid(r, "declaration-row").Length() != 1 {
		t.Fatalf("after removing two declarations: %s", truncate(r.body))
	}
	rev, err = b.store.GetCurrentManifestRevision(ctx, owner.team.ID, a.ID)
	if err != nil || rev.Revision != 6 || strings.Contains(string(rev.Manifest), "signing-key") || strings.Contains(string(rev.Manifest), "api-key") {
		t.Fatalf("revision %d %s (%v)", rev.Revision, rev.Manifest, err)
	}
}

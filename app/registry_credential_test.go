package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store"
)

// TestRegistryCredentialsPage saves, replaces and deletes a registry
// account through the dashboard as an owner: no page holds the password,
// a refusal names its field and keeps host and user; a viewer sees hosts
// only, with no form; another team sees none of them.
func TestRegistryCredentialsPage(t *testing.T) {
	t.Parallel()
	b := setupSecrets(t)
	owner := b.signup(t, "owner@example.com", "Registry")
	br := b.sessionBrowser(t, owner.user)
	noPassword := func(r response) response {
		t.Helper()
		if strings.Contains(r.body, pageSecretValue) {
			t.Fatalf("the page contains the password:\n%s", truncate(r.body))
		}
		return r
	}

	r := noPassword(br.get("/registry-credentials"))
	wantStatus(t, r, http.StatusOK)
	if testid(r, "registry-credentials-empty").Length() != 1 || testid(r, "registry-credential-form").Length() != 1 || testid(r, "nav-registry-credentials").Length() != 1 {
		t.Fatalf("empty page: %s", truncate(r.body))
	}
	r = noPassword(br.post("/registry-credentials", url.Values{"host": {"ghcr.io"}, "username": {"bot"}, "password": {""}}))
	wantStatus(t, r, http.StatusUnprocessableEntity)
	if !strings.Contains(testid(r, "error-password").Text(), "registry_password_empty") || r.doc.Find("#f-host").AttrOr("value", "") != "ghcr.io" {
		t.Fatalf("refused form: %s", truncate(r.body))
	}
	r = noPassword(br.post("/registry-credentials", url.Values{"host": {"https://GHCR.io/"}, "username": {"bot"}, "password": {pageSecretValue}}))
	wantStatus(t, r, http.StatusSeeOther)
	r = noPassword(br.get("/registry-credentials"))
	row := r.doc.Find(`[data-testid="registry-credential-row"][data-host="ghcr.io"]`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "bot") {
		t.Fatalf("after save: %s", truncate(r.body))
	}

	viewer := b.addMember(t, owner.team, "viewer@example.com", store.RoleViewer)
	vr := noPassword(b.sessionBrowser(t, viewer).get("/registry-credentials"))
	wantStatus(t, vr, http.StatusOK)
	if testid(vr, "registry-credential-row").Length() != 1 || testid(vr, "registry-credential-form").Length() != 0 || testid(vr, "registry-credential-delete").Length() != 0 {
		t.Fatalf("viewer's page: %s", truncate(vr.body))
	}
	wantStatus(t, b.sessionBrowser(t, viewer).post("/registry-credentials/ghcr.io/delete", nil), http.StatusForbidden)

	other := b.signup(t, "other@example.com", "Others")
	or := noPassword(b.sessionBrowser(t, other.user).get("/registry-credentials"))
	if testid(or, "registry-credential-row").Length() != 0 {
		t.Fatalf("another team sees this team's registries: %s", truncate(or.body))
	}

	wantStatus(t, br.post("/registry-credentials/ghcr.io/delete", nil), http.StatusSeeOther)
	if list, err := b.store.ListRegistryCredentials(context.Background(), owner.team.ID); err != nil || len(list) != 0 {
		t.Fatalf("after delete: %+v %v", list, err)
	}
}

package security

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// TestViewerCannotDeploy: a viewer's token, even one created with the
// deploy scope listed, cannot deploy, cancel or restore — the scope check
// runs before the application is even looked up.
func TestViewerCannotDeploy(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	v, err := s.st.CreateUser(ctx, "viewer@example.com", "", "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.st.AddMember(ctx, s.team.ID, v.ID, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	viewer := service.Actor{TeamID: s.team.ID, UserID: v.ID, Scopes: auth.ScopesOf(auth.RoleViewer)}
	if _, _, err := service.CreateToken(ctx, s.st, viewer, service.TokenRequest{Name: "deploy", Scopes: []string{string(auth.AppsDeploy)}}, time.Now()); err == nil {
		t.Fatal("a viewer created a token with apps:deploy")
	}
	_, secret, err := service.CreateToken(ctx, s.st, viewer, service.TokenRequest{Name: "read", Scopes: []string{string(auth.AppsRead)}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s.token = secret
	for _, path := range []string{
		"/api/v1/applications/notes/environments/production/deploy",
		"/api/v1/deployments/dep_x/cancel",
		"/api/v1/deployments/dep_x/restore",
	} {
		r := s.api(t, http.MethodPost, path, `{}`)
		if r.status != http.StatusForbidden {
			t.Errorf("viewer POST %s: %d %s, want 403", path, r.status, r.raw)
		}
	}
}

package security

import (
	"context"
	"net/http"
	"net/url"
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

// TestInvitation_CannotRaiseRole: a viewer who gets hold of an admin
// invitation link for their own team, even one sent to their own address,
// cannot use it to become admin; the accept is refused and their role is
// unchanged. (A link sent to another address is refused before that; see
// app/member_test.go TestInvitation_Accept.)
func TestInvitation_CannotRaiseRole(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	v, err := s.st.CreateUser(ctx, "viewer@example.com", "", "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.st.AddMember(ctx, s.team.ID, v.ID, store.RoleViewer); err != nil {
		t.Fatal(err)
	}
	secret := auth.NewSecret(auth.InvitationPrefix)
	if _, err := s.st.CreateInvitation(ctx, s.team.ID, store.InvitationParams{
		Email: "Viewer@Example.com", Role: store.RoleAdmin, TokenHash: store.HashToken(secret),
		InvitedBy: s.user.ID, ExpiresAt: time.Now().Add(time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	// Sign the site's browser in as the viewer.
	s.cookie = auth.NewSecret("")
	if _, err := s.st.CreateSession(ctx, store.Session{ID: store.HashToken(s.cookie), UserID: v.ID, CSRFSecret: []byte(auth.NewSecret("")), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	s.get(t, "/invitations/"+secret)
	r := s.post(t, "/invitations/"+secret+"/accept", url.Values{})
	// 409 "already a member", not a CSRF or session refusal: the accept
	// itself ran and was refused.
	if r.status != http.StatusConflict {
		t.Errorf("a viewer accepting an admin invitation to their own team: status %d, want 409", r.status)
	}
	m, err := s.st.GetMember(ctx, s.team.ID, v.ID)
	if err != nil || m.Role != store.RoleViewer {
		t.Fatalf("viewer's membership after the accept: %+v %v, want viewer", m, err)
	}
}

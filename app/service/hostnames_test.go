package service_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// routed is a manifest of application name with one public route per
// hostname, all to its web service.
func routed(name string, hostnames ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = %q\n", name)
	b.WriteString(webService)
	for _, h := range hostnames {
		fmt.Fprintf(&b, "\n[[spec.routes]]\nhostname = %q\nservice = \"web\"\nport = 8080\nvisibility = \"public\"\n", h)
	}
	return b.String()
}

func uniqueDomain(t *testing.T) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + ".example.com"
}

// otherTeam is a second team applying on the same store.
func otherTeam(t *testing.T, b *applyBundle, slug string) *applyBundle {
	t.Helper()
	team, err := b.st.CreateTeam(context.Background(), slug, slug)
	if err != nil {
		t.Fatal(err)
	}
	return &applyBundle{st: b.st, actor: service.Actor{TeamID: team.ID, UserID: "usr_other"}}
}

func wantHostnameConflict(t *testing.T, err error, field, hostname string) *service.InputError {
	t.Helper()
	var in *service.InputError
	if !errors.As(err, &in) || in.Code != "hostname_conflict" || in.Field != field || !strings.Contains(in.Message, hostname) {
		t.Fatalf("err = %v, want hostname_conflict on %s naming %s", err, field, hostname)
	}
	return in
}

func TestApplyManifest_HostnameConflictBetweenTeams(t *testing.T) {
	t.Parallel()
	a := setupApply(t)
	ctx := context.Background()
	domain := uniqueDomain(t)
	if _, err := a.apply(t, routed("notes", "www."+domain), service.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	b := otherTeam(t, a, "rival")
	_, err := b.apply(t, routed("rivalapp", "free."+domain, "WWW."+domain), service.ApplyOptions{})
	in := wantHostnameConflict(t, err, "spec.routes[1].hostname", "www."+domain)
	if strings.Contains(in.Message, "notes") {
		t.Fatalf("the conflict names another team's application: %q", in.Message)
	}
	// Atomic: nothing of the rival's apply was saved, not even its free hostname.
	if _, err := b.st.GetApplicationByName(ctx, b.actor.TeamID, "rivalapp"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rival application after a failed apply: %v", err)
	}
	if _, err := b.apply(t, routed("rivalapp", "free."+domain), service.ApplyOptions{}); err != nil {
		t.Fatalf("free hostname after the failed apply: %v", err)
	}

	// Within one team the owner is named.
	_, err = a.apply(t, routed("second", "www."+domain), service.ApplyOptions{})
	in = wantHostnameConflict(t, err, "spec.routes[0].hostname", "www."+domain)
	if !strings.Contains(in.Message, "application notes") {
		t.Fatalf("a conflict inside the team should name the owner: %q", in.Message)
	}

	// Dropping the route releases the hostname for others.
	if _, err := a.apply(t, routed("notes"), service.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.apply(t, routed("rivalapp", "free."+domain, "www."+domain), service.ApplyOptions{}); err != nil {
		t.Fatalf("released hostname: %v", err)
	}
}

func TestApplyManifest_HostnameBelowAnotherTeamsWildcard(t *testing.T) {
	t.Parallel()
	a := setupApply(t)
	domain := uniqueDomain(t)
	if _, err := a.apply(t, routed("tenants", "*."+domain), service.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	b := otherTeam(t, a, "squatter")
	_, err := b.apply(t, routed("squat", "acme."+domain), service.ApplyOptions{})
	in := wantHostnameConflict(t, err, "spec.routes[0].hostname", "acme."+domain)
	if strings.Contains(in.Message, "tenants") {
		t.Fatalf("the conflict names another team's application: %q", in.Message)
	}
	// Two labels below the wildcard is not covered by it.
	if _, err := b.apply(t, routed("squat", "x.acme."+domain), service.ApplyOptions{}); err != nil {
		t.Fatalf("a name two labels below the wildcard: %v", err)
	}
}

package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
)

// TestHostnameClashes_SameApplication: an environment created by hand
// renders production's literal hostname; the clash names production as
// an environment of the same application and how to give each its own,
// not "another application".
func TestHostnameClashes_SameApplication(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	host := "www." + uniqueDomain(t)
	res, err := b.apply(t, routed("notes", host), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := service.CreateEnvironment(ctx, b.st, b.actor, res.Application.ID, "staging", service.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clashes, err := service.HostnameClashes(ctx, b.st, b.actor, res.Application.ID, "staging")
	if err != nil {
		t.Fatal(err)
	}
	if len(clashes) != 1 || !strings.Contains(clashes[0], "served by production, another environment of this application") ||
		!strings.Contains(clashes[0], "[spec.environments.staging.variables]") || strings.Contains(clashes[0], "another application") {
		t.Fatalf("clashes %q", clashes)
	}
	if clashes, err := service.HostnameClashes(ctx, b.st, b.actor, res.Application.ID, "production"); err != nil || len(clashes) != 0 {
		t.Fatalf("production clashes with itself: %q %v", clashes, err)
	}
}

// TestGiveOwnHostnames: an environment created by hand for a manifest
// whose route names a literal hostname gets one of its own through a
// variable: production keeps serving the literal (the variable's
// default), the new environment renders, reserves and no longer clashes
// on its own, the TOML keeps its comment, and a chosen hostname is used
// as given.
func TestGiveOwnHostnames(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	host := "www." + uniqueDomain(t)
	res, err := b.apply(t, "# Notes, kept through edits.\n"+routed("notes", host), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appID := res.Application.ID
	staging, err := service.CreateEnvironment(ctx, b.st, b.actor, appID, "staging", service.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	own, err := service.GiveOwnHostnames(ctx, b.st, b.actor, b.enqueue, appID, "staging", "")
	want := strings.Replace(host, "www.", "www-staging.", 1)
	if err != nil || len(own) != 1 || own[0].Hostname != want || own[0].Shared != host || own[0].Variable != "hostname" || own[0].Field != "spec.routes[0].hostname" {
		t.Fatalf("own hostnames %+v, %v; want %s through vars.hostname", own, err, want)
	}
	if clashes, err := service.HostnameClashes(ctx, b.st, b.actor, appID, "staging"); err != nil || len(clashes) != 0 {
		t.Fatalf("staging still clashes: %q %v", clashes, err)
	}
	held, err := b.st.ListHostnames(ctx, b.actor.TeamID, staging.ID)
	if err != nil || len(held) != 1 || held[0].Hostname != want {
		t.Fatalf("staging reserves %+v (%v), want %s", held, err, want)
	}
	rev, err := b.st.GetCurrentManifestRevision(ctx, b.actor.TeamID, appID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"# Notes, kept through edits.", `hostname = "${{ vars.hostname }}"`, "[spec.environments.staging.variables]", "[spec.environments.production]"} {
		if rev.SourceFormat != "toml" || !strings.Contains(rev.Source, s) {
			t.Fatalf("saved %s source lacks %q:\n%s", rev.SourceFormat, s, rev.Source)
		}
	}
	if clashes, err := service.HostnameClashes(ctx, b.st, b.actor, appID, "production"); err != nil || len(clashes) != 0 {
		t.Fatalf("production clashes: %q %v", clashes, err)
	}

	// Routes that all reference variables get nothing more.
	if _, err := service.CreateEnvironment(ctx, b.st, b.actor, appID, "qa", service.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if own, err := service.GiveOwnHostnames(ctx, b.st, b.actor, b.enqueue, appID, "qa", ""); err != nil || len(own) != 0 {
		t.Fatalf("with no literal hostname left: %+v %v", own, err)
	}

	// A chosen hostname, and the checks on it.
	other, err := b.apply(t, routed("shop", "shop."+uniqueDomain(t), "api."+uniqueDomain(t)), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := service.CreateEnvironment(ctx, b.st, b.actor, other.Application.ID, "demo", service.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := service.GiveOwnHostnames(ctx, b.st, b.actor, b.enqueue, other.Application.ID, "demo", "demo.example.com"); fieldCode(err) != "hostname:hostname_ambiguous" {
		t.Fatalf("one hostname for two literal routes: %v", err)
	}
	single, err := b.apply(t, routed("blog", "blog."+uniqueDomain(t)), service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := service.CreateEnvironment(ctx, b.st, b.actor, single.Application.ID, "demo", service.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := service.GiveOwnHostnames(ctx, b.st, b.actor, b.enqueue, single.Application.ID, "demo", "not a host"); fieldCode(err) != "hostname:hostname_invalid" {
		t.Fatalf("an invalid hostname: %v", err)
	}
	chosen := "Demo." + uniqueDomain(t)
	own, err = service.GiveOwnHostnames(ctx, b.st, b.actor, b.enqueue, single.Application.ID, "demo", chosen)
	if err != nil || len(own) != 1 || own[0].Hostname != strings.ToLower(chosen) {
		t.Fatalf("chosen hostname: %+v %v", own, err)
	}
}

// fieldCode is "field:code" of an *InputError, "" otherwise.
func fieldCode(err error) string {
	var ie *service.InputError
	if !errors.As(err, &ie) {
		return ""
	}
	return ie.Field + ":" + ie.Code
}

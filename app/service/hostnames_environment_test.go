package service_test

import (
	"context"
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

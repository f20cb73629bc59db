package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

func TestSetEnvironmentTelemetry_WarningsFollowGrant(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	ctx := context.Background()
	doc := header + strings.Replace(webService, `name = "web"`, "name = \"web\"\nreceives_telemetry = true", 1)
	res, err := b.apply(t, doc, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	env, err := b.st.GetEnvironmentByName(ctx, b.actor.TeamID, res.Application.ID, "production")
	if err != nil {
		t.Fatal(err)
	}
	w, err := service.TelemetryWarnings(ctx, b.st, b.actor.TeamID, env, m)
	if err != nil || len(w) != 1 || w[0].Code != "telemetry_not_granted" || w[0].Path != "spec.services[0].receives_telemetry" {
		t.Fatalf("ungranted warnings %v, %v", w, err)
	}
	g, err := service.SetEnvironmentTelemetry(ctx, b.st, b.actor, b.enqueue, res.Application.ID, "production", true)
	if err != nil || !g.Granted || g.Receiver != "web" {
		t.Fatalf("grant %+v, %v", g, err)
	}
	if w, err := service.TelemetryWarnings(ctx, b.st, b.actor.TeamID, env, m); err != nil || len(w) != 0 {
		t.Fatalf("granted warnings %v, %v", w, err)
	}
	_, err = service.SetEnvironmentTelemetry(ctx, b.st, b.actor, b.enqueue, res.Application.ID, "nowhere", true)
	if err == nil || errors.As(err, new(*service.InputError)) {
		t.Fatalf("unknown environment: %v, want not found", err)
	}
}

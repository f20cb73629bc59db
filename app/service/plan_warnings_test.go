package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
)

// Apply responses carry telemetry_not_granted for every environment whose
// receiver would run without the grant, and stop once it is granted.
func TestApplyManifest_WarnsTelemetryNotGranted(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	doc := header + strings.Replace(webService, `name = "web"`, "name = \"web\"\nreceives_telemetry = true", 1)
	telemetryWarnings := func(res service.ApplyResult) []string {
		var out []string
		for _, w := range res.Warnings {
			if w.Code == "telemetry_not_granted" {
				out = append(out, w.Path+": "+w.Message)
			}
		}
		return out
	}
	res, err := b.apply(t, doc, service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := telemetryWarnings(res); len(w) != 1 || !strings.HasPrefix(w[0], "spec.services[0].receives_telemetry: production is not granted") {
		t.Fatalf("warnings of the first apply %q, want telemetry_not_granted for production", w)
	}
	if _, err := service.SetEnvironmentTelemetry(context.Background(), b.st, b.actor, b.enqueue, res.Application.ID, "production", true); err != nil {
		t.Fatal(err)
	}
	res, err = b.apply(t, doc+"\n[spec.services.environment]\nMODE = \"granted\"\n", service.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := telemetryWarnings(res); len(w) != 0 {
		t.Fatalf("warnings after the grant %q, want none", w)
	}
	// Without a receiver, nothing to warn about.
	res, err = b.apply(t, header+webService, service.ApplyOptions{})
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("apply without a receiver: warnings %+v, %v", res.Warnings, err)
	}
}

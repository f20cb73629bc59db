package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/tracing/tracingtest"
)

// TestExportLogs_TeesConsole: the teed logger still writes every record to
// the console, and exports those at the console's level (info) and above
// as OTLP log records.
func TestExportLogs_TeesConsole(t *testing.T) {
	t.Setenv("SLIPWAY_LOG_LEVEL", "info")
	rc := tracingtest.New(t)
	var console bytes.Buffer
	cfg := config.Default()
	cfg.DataDir = ""
	cfg.Telemetry.OTLPEndpoint = rc.URL
	logger, stop := exportLogs(context.Background(), slog.New(slog.NewTextHandler(&console, nil)), cfg, "slipway-test")
	logger.Debug("not shown")
	logger.Info("worker started", "queue", "default")
	stop()

	if !strings.Contains(console.String(), "msg=\"worker started\" queue=default") || strings.Contains(console.String(), "not shown") {
		t.Errorf("console got %q", console.String())
	}
	var bodies []string
	for _, r := range rc.Logs() {
		bodies = append(bodies, r.Body.GetStringValue())
		if tracingtest.AttrOf(r.Attributes, "queue") != "default" {
			t.Errorf("record attributes %v", r.Attributes)
		}
	}
	if strings.Join(bodies, ",") != "worker started" {
		t.Errorf("exported %q, want only the info record", bodies)
	}
}

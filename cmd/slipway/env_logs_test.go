package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"10m":                  now.Add(-10 * time.Minute),
		"2h":                   now.Add(-2 * time.Hour),
		"2026-12-01T08:00:00Z": time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "-5m", "0s"} {
		if _, err := parseSince(in, now); err == nil || !strings.Contains(err.Error(), "since_invalid") {
			t.Errorf("parseSince(%q): %v, want since_invalid", in, err)
		}
	}
}

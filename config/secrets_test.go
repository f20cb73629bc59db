package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMetrics_ReadToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("  abc123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		m        Metrics
		want     string
		wantCode string
	}{
		{"off", Metrics{}, "", ""},
		{"inline", Metrics{Token: "xyz"}, "xyz", ""},
		{"file, trimmed", Metrics{TokenFile: file}, "abc123", ""},
		{"missing file", Metrics{TokenFile: filepath.Join(dir, "nope")}, "", CodeFileUnreadable},
		{"empty file", Metrics{TokenFile: empty}, "", CodeRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.m.ReadToken()
			var e *Error
			if tt.wantCode != "" {
				if !errors.As(err, &e) || e.Code != tt.wantCode || e.Key != "metrics.token_file" {
					t.Fatalf("err = %v, want %s on metrics.token_file", err, tt.wantCode)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ReadToken() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestConfig_BaseURL(t *testing.T) {
	t.Parallel()
	c := Default()
	if got := c.BaseURL(); got != "http://127.0.0.1:8080" {
		t.Errorf("default BaseURL = %s", got)
	}
	c.PublicURL = "https://slipway.example.com/"
	if got := c.BaseURL(); got != "https://slipway.example.com" {
		t.Errorf("BaseURL = %s", got)
	}
}

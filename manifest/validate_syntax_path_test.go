package manifest

import (
	"strings"
	"testing"
)

func TestCheckRepoPath_Limits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, want string
	}{
		{"NUL", "Docker\x00file", "control"},
		{"long element", strings.Repeat("a", 256), "256-byte element"},
		{"long path", strings.Repeat("abcdefgh/", 600) + "Dockerfile", "bytes long"},
		{"longest element", strings.Repeat("a", 255), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkRepoPath(tt.path, false)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("checkRepoPath = %q, want %q", got, tt.want)
			}
		})
	}
}

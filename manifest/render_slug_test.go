package manifest

import (
	"regexp"
	"strings"
	"testing"
)

func TestPreviewSlug(t *testing.T) {
	t.Parallel()
	dns := regexp.MustCompile(`^[a-z][a-z0-9-]*[a-z0-9]$`)
	tests := []struct {
		app, branch, slot string
		prefix            string
	}{
		{"notes", "feat/login", "", "notes-feat-login-"},
		{"notes", "Feat/Login", "", "notes-feat-login-"},
		{"notes", "feat/login", "agent-2", "notes-feat-login-agent-2-"},
		{"notes", "dependabot/npm_and_yarn/some-very-long-package-name-1.2.3", "", "notes-dependabot-npm-and-yarn-som"},
		{"notes", "--__--", "", "notes-"},
		{"9lives", "main", "", "p9lives-main-"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		got := PreviewSlug(tt.app, tt.branch, tt.slot)
		if !strings.HasPrefix(got, tt.prefix) || len(got) > maxPreviewSlug || !dns.MatchString(got) || strings.Contains(got, "--") {
			t.Errorf("PreviewSlug(%q, %q, %q) = %q, want a DNS label of at most %d bytes starting %q", tt.app, tt.branch, tt.slot, got, maxPreviewSlug, tt.prefix)
		}
		if seen[got] {
			t.Errorf("PreviewSlug(%q, %q, %q) = %q collides", tt.app, tt.branch, tt.slot, got)
		}
		seen[got] = true
		if again := PreviewSlug(tt.app, tt.branch, tt.slot); again != got {
			t.Errorf("PreviewSlug is not stable: %q then %q", got, again)
		}
	}
	// Branches that differ only in punctuation or case still get their own slug.
	if PreviewSlug("notes", "feat/login", "") == PreviewSlug("notes", "feat-login", "") {
		t.Error("feat/login and feat-login share a slug")
	}
	if PreviewSlug("a-b", "c", "") == PreviewSlug("a", "b-c", "") {
		t.Error("the hash does not separate application and branch")
	}
}

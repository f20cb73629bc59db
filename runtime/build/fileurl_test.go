package build

import (
	"testing"
	"time"
)

// TestAuth_FileURLsNeedTheSwitch: without the installation's
// allow_file_urls switch, every entry point refuses a file:// repository
// with file_url_disabled on url before reading it, and a listing cached
// under the switch is not served without it.
func TestAuth_FileURLsNeedTheSwitch(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	url := b.repo.url()

	_, err := CheckoutRepository(t.Context(), CheckoutRequest{URL: url, Branch: "main", Dir: t.TempDir()})
	wantCode(t, err, CodeFileURLDisabled)
	_, err = ListHeads(t.Context(), url, Auth{})
	wantCode(t, err, CodeFileURLDisabled)
	_, err = ResolveCommit(t.Context(), url, "", b.first, Auth{})
	wantCode(t, err, CodeFileURLDisabled)
	if be, ok := err.(*Error); !ok || be.Field != "url" {
		t.Fatalf("error %v does not name url", err)
	}

	var l Lister
	if _, err := l.Heads(t.Context(), url, local, time.Hour); err != nil {
		t.Fatalf("with the switch on: %v", err)
	}
	_, err = l.Heads(t.Context(), url, Auth{}, time.Hour)
	wantCode(t, err, CodeFileURLDisabled)

	// Other transports are unaffected by the switch.
	if _, err := ResolveCommit(t.Context(), "https://git.example.com/app.git", "", b.first, Auth{}); err != nil {
		t.Fatalf("a pinned https source: %v", err)
	}
}

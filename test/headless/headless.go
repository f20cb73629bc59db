package headless

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// ExecPath is where Debian's chromium package installs the browser.
const ExecPath = "/usr/bin/chromium"

// Need skips t in -short runs and where Chromium is not installed.
func Need(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	if _, err := os.Stat(ExecPath); err != nil {
		t.Skip("needs Chromium at " + ExecPath)
	}
}

// Start starts Chromium with a fresh profile and returns a context for
// its first tab; extra adds allocator options (host resolver rules, a
// window size), ctxOpts go to chromedp.NewContext (event listeners).
// The browser is running when Start returns, and it lives until the
// returned cancel is called, not as long as the first action's context:
// tests give each step its own timeout.
func Start(t testing.TB, extra []chromedp.ExecAllocatorOption, ctxOpts ...chromedp.ContextOption) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ExecPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
	}, extra...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx, ctxOpts...)
	cancel := func() { bcancel(); acancel() }
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		cancel()
		t.Fatalf("start chromium: %v", err)
	}
	return bctx, cancel
}

package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
	"github.com/slipwayhq/slipway/test/headless"
)

// TestTeamEvents_OlderInChromium clicks "Older events" in headless
// Chromium: htmx replaces the button's row with the next page's rows and
// its own button, in place, until the oldest event, each event once.
func TestTeamEvents_OlderInChromium(t *testing.T) {
	headless.Need(t)
	t.Parallel()
	// A browser sends requests side by side (the page, its favicon), which
	// one shared test transaction cannot serve: a schema of its own.
	st := storetest.NewSchema(t)
	b := &testBundle{store: st, clock: &clock{t: time.Now()}}
	b.app = app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Now: b.clock.now, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	ctx := context.Background()
	owner := b.signup(t, "owner@example.com", "Acme")
	for i := range 110 {
		if _, err := b.store.RecordEvent(ctx, owner.team.ID, store.EventParams{Actor: "system", Verb: "thing.happen", ObjectType: "member", Details: map[string]int{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := b.store.ListEvents(ctx, owner.team.ID, store.EventFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	session := b.sessionBrowser(t, owner.user).cookies["slipway_session"]
	base := b.listen(t)

	bctx, bcancel := headless.Start(t, nil)
	defer bcancel()
	tctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	rows := `document.querySelectorAll('[data-testid="team-event-row"]').length`
	waitRows := func(n int) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](fmt.Sprintf("%s === %d", rows, n))(ctx, tg)
			return err
		})
	}
	older := `[data-testid="team-events-older"] a`
	if err := chromedp.Do(tctx,
		chromedp.Navigate(base+"/healthz"), // the cookie below is the dashboard origin's
		chromedp.Evaluate[chromedp.Void](`document.cookie = "slipway_session=`+session+`; path=/"`),
		chromedp.Navigate(base+"/events"),
		chromedp.WaitVisible(chromedp.CSS(older)),
		waitRows(50),
		chromedp.Click(chromedp.CSS(older)),
		waitRows(100),
		chromedp.Click(chromedp.CSS(older)),
		waitRows(len(all)),
		chromedp.WaitNotPresent(chromedp.CSS(older)),
	); err != nil {
		html, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('main') ? document.querySelector('main').innerHTML.slice(0, 3000) : document.body.innerHTML.slice(0, 3000)`))
		t.Fatalf("paging in Chromium: %v\n%s", err, html)
	}
	distinct, err := chromedp.Run(tctx, chromedp.Evaluate[int](`new Set([...document.querySelectorAll('[data-testid="team-event-row"]')].map(r => r.textContent)).size`))
	if err != nil || distinct != len(all) {
		t.Fatalf("%d distinct rows (%v), want the %d events once each", distinct, err, len(all))
	}
	// The URL stays /events: the older pages came in place.
	if u, err := chromedp.Run(tctx, chromedp.Evaluate[string](`location.pathname + location.search`)); err != nil || u != "/events" {
		t.Errorf("location %q (%v), want /events", u, err)
	}
}

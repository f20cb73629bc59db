package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
)

// TestDashboard_ApplicationPages pages through the applications list in
// Chromium: 25 a page with page links under the table, the links keeping
// the search typed into the list's search box, and a new search (the
// plain GET form's Search button) starting again at the first page.
func TestDashboard_ApplicationPages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts slipway dev and Chromium")
	}
	id := swarmtest.ID()
	p, base, _ := devSession(t, "pages", id)
	p.signup("Pages " + id)
	// ui's waits start again when a navigation cuts them.
	o := &ui{t: t, ctx: p.ctx, shots: p.shots, who: "pages"}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	rows := `document.querySelectorAll('[data-testid="application-row"]').length`
	first := `document.querySelector('[data-testid="application-link"]').textContent.trim()`
	query := func(key string) string {
		return fmt.Sprintf(`(new URLSearchParams(location.search).get(%q) || "")`, key)
	}

	// 27 applications named pg-00 … pg-26 and one other, made with the
	// list's own create form as a visitor would (one request each from the
	// page, with its CSRF field).
	o.run("open the list", chromedp.Navigate(base+"/applications"), chromedp.WaitVisible(css(`[data-testid="application-create-form"]`)))
	made := o.eval("create the applications", `(() => {
		const csrf = document.querySelector('[data-testid="application-create-form"] input[name="_csrf"]').value;
		const names = ["other"];
		for (let i = 0; i < 27; i++) names.push("pg-" + String(i).padStart(2, "0"));
		let ok = 0;
		for (const name of names) {
			const x = new XMLHttpRequest();
			x.open("POST", "/applications", false);
			x.setRequestHeader("Content-Type", "application/x-www-form-urlencoded");
			x.send(new URLSearchParams({_csrf: csrf, name}).toString());
			if (x.status === 200) ok++;
		}
		return String(ok);
	})()`)
	if made != "28" {
		t.Fatalf("created %s applications, want 28", made)
	}

	o.run("first page", chromedp.Navigate(base+"/applications"), chromedp.WaitVisible(css(`[data-testid="application-pages"]`)))
	if got := o.eval("read the first page", `document.querySelector('[data-testid="application-count"]').textContent.replace(/\s+/g, " ").trim() + " | " + `+rows+` + " | " + `+first); got != "Showing 1–25 of 28 applications | 25 | other" {
		t.Errorf("first page: %q", got)
	}
	o.run("next page", chromedp.Click(css(`[data-testid="application-page-next"]`)))
	o.until("on page 2", query("page")+` === "2" && `+rows+` === 3 && document.querySelector('[data-testid="application-page-current"]').textContent.trim() === "2"`)

	// The list's search box narrows it as one types (htmx), from page 1.
	o.run("search the list", chromedp.SendKeys(css(`#application-search`), "pg-"))
	o.until("the search shows its first page", query("q")+` === "pg-" && `+query("page")+` === "" && `+rows+` === 25 && `+first+` === "pg-00"`)
	o.run("next page of the search", chromedp.Click(css(`[data-testid="application-page-next"]`)))
	o.until("page 2 of the search", query("q")+` === "pg-" && `+query("page")+` === "2" && `+rows+` === 2 && `+first+` === "pg-25" && document.querySelector('#application-search').value === "pg-"`)
	o.run("back to page 1 by its number", chromedp.Click(css(`[data-testid="application-page-link"]`)))
	o.until("page 1 of the search", query("q")+` === "pg-" && `+query("page")+` === "" && `+rows+` === 25 && `+first+` === "pg-00"`)

	// From page 2, a new search by the Search button starts at page 1.
	o.run("page 2 again", chromedp.Navigate(base+"/applications?q=pg-&page=2"), chromedp.WaitVisible(css(`[data-testid="application-page-current"]`)))
	o.run("search again by the button",
		chromedp.SetValue(css(`#application-search`), "pg-2"),
		chromedp.Click(css(`[data-testid="application-search-form"] button[type="submit"]`)),
	)
	o.until("the new search's first page", query("q")+` === "pg-2" && `+query("page")+` === "" && `+rows+` === 7 && !document.querySelector('[data-testid="application-pages"]')`)
}

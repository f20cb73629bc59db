package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// eventList names the parts of a paged events list for walkEvents: the
// data-testid of its rows, of its "Older events" row and of its filter
// form (which an older page, being rows only, must not carry).
type eventList struct{ row, older, filter string }

// olderURL is the address the page's "Older events" row loads, "".
func (l eventList) olderURL(doc *goquery.Document) string {
	href, _ := doc.Find(`[data-testid="` + l.older + `"] a`).Attr("hx-get")
	return href
}

// walkEvents opens path and follows its "Older events" rows as htmx
// would, and returns the event id of every row and how many pages there
// were.
func walkEvents(t *testing.T, br *browser, l eventList, path string) (details []string, pages int) {
	t.Helper()
	r := br.get(path)
	wantStatus(t, r, http.StatusOK)
	doc := r.doc
	for {
		pages++
		doc.Find(`[data-testid="` + l.row + `"]`).Each(func(_ int, s *goquery.Selection) {
			details = append(details, s.AttrOr("data-event-id", ""))
		})
		next := l.olderURL(doc)
		if next == "" || pages > 10 {
			return details, pages
		}
		frag := br.poll(next)
		wantStatus(t, frag, http.StatusOK)
		if strings.Contains(frag.body, "<html") || strings.Contains(frag.body, l.filter) {
			t.Fatalf("the older page came back as a whole page")
		}
		var err error
		if doc, err = goquery.NewDocumentFromReader(strings.NewReader("<table>" + frag.body + "</table>")); err != nil {
			t.Fatal(err)
		}
	}
}

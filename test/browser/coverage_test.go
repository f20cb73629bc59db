package browser

import (
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"

	"github.com/slipwayhq/slipway/views/viewstest"
)

// formWalks are the tests whose clicks the form coverage counts: it is
// checked when all of them ran and passed.
var formWalks = []string{
	"TestDashboard_CreatePlanDeploy",
	"TestDashboard_FormsThroughTheUI",
	"TestDashboard_ActionForms",
	"TestDashboard_LogsAndDeployment",
}

// notClicked are the template forms no browser test submits, each with
// the reason. Nothing else may be left out.
var notClicked = map[string]string{
	"POST /applications/*/pull-requests/*/approve": "needs a fork's pull request delivered by a signed webhook and cloned from the fake GitHub's git server; " +
		"test/e2e/preview_fork_test.go approves one through the API and the CLI, and app/github_test.go renders the button",
}

// submission is one request a form (or htmx on its behalf) sent.
type submission struct {
	method, path string
}

// submitted collects, across the package's tests, what the browser tabs
// submitted: every request other than GET (only forms and htmx send those
// here), a GET form's navigation (reason formSubmissionGet, which a
// test's own Navigate never has) and htmx's GETs carrying a query (a GET
// form enhanced by htmx).
var submitted = struct {
	sync.Mutex
	seen  map[submission]bool
	walks map[string]bool // test name: passed
}{seen: map[submission]bool{}, walks: map[string]bool{}}

// recordSubmissions is a chromedp listener adding to submitted.
func recordSubmissions(ev any) {
	var s submission
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		r := e.Request
		switch {
		case r.Method != http.MethodGet:
			s.method = r.Method
		case (e.Type == network.ResourceTypeXHR || e.Type == network.ResourceTypeFetch) && strings.Contains(r.URL, "?"):
			s.method = http.MethodGet
		default:
			return
		}
		s.path = r.URL
	case *cdppage.EventFrameRequestedNavigation:
		if e.Reason != cdppage.ClientNavigationReasonFormSubmissionGet {
			return
		}
		s.method, s.path = http.MethodGet, e.URL
	default:
		return
	}
	u, err := url.Parse(s.path)
	if err != nil {
		return
	}
	s.path = u.Path
	submitted.Lock()
	submitted.seen[s] = true
	submitted.Unlock()
}

// walked notes that t opened a browser, and (when it ends) whether it
// passed.
func walked(t *testing.T) {
	t.Cleanup(func() {
		submitted.Lock()
		submitted.walks[t.Name()] = !t.Failed() && !t.Skipped()
		submitted.Unlock()
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && !testing.Short() {
		if msg := formCoverage(); msg != "" {
			fmt.Fprintln(os.Stderr, "--- FAIL: form coverage\n"+msg)
			code = 1
		}
	}
	os.Exit(code)
}

// formCoverage says which template forms no walk submitted (or which
// exemption is stale), or "" when every form was clicked. It checks only
// when every walk ran and passed.
func formCoverage() string {
	submitted.Lock()
	defer submitted.Unlock()
	run := flag.Lookup("test.run").Value.String()
	for _, w := range formWalks {
		if passed, ran := submitted.walks[w]; !ran || !passed {
			if ran || run == "" {
				return w + " did not run to the end: it is in formWalks but no such test clicked its way through"
			}
			if re, err := regexp.Compile(run); err == nil && re.MatchString(w) {
				return w + " matches -run but did not run to the end"
			}
			fmt.Fprintf(os.Stderr, "form coverage not checked: %s did not run\n", w)
			return ""
		}
	}
	targets, err := viewstest.Targets()
	if err != nil {
		return err.Error()
	}
	var missing []string
	exempt, reported := map[string]bool{}, map[string]bool{}
	for _, tg := range targets {
		if !tg.Form() {
			continue
		}
		for _, pattern := range tg.URLs {
			if pattern == "external" {
				continue
			}
			pattern, _, _ = strings.Cut(pattern, "#")
			pattern, _, _ = strings.Cut(pattern, "?")
			key := tg.Method + " " + pattern
			clicked := false
			for s := range submitted.seen {
				if s.method == tg.Method && viewstest.Match(pattern, s.path) {
					clicked = true
					break
				}
			}
			if _, ok := notClicked[key]; ok {
				exempt[key] = true
				if clicked {
					missing = append(missing, key+" is in notClicked but was clicked: remove it from the list")
				}
				continue
			}
			if !clicked && !reported[key] {
				reported[key] = true
				missing = append(missing, key+" was never submitted by a click (e.g. "+tg.Attr+" at "+tg.Where+")")
			}
		}
	}
	for key := range notClicked {
		if !exempt[key] {
			missing = append(missing, key+" is in notClicked but no template has that form")
		}
	}
	sort.Strings(missing)
	return strings.Join(slices.Compact(missing), "\n")
}

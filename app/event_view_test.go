package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/slipwayhq/slipway/app"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

// TestAuditLog_Readable: the audit log and the Events tab read as
// sentences naming who did what to which application and environment,
// with links; a deployment is one row (its request, with the state it
// reached), however many steps the worker recorded; the Application
// column is filled; times are relative with the exact time on hover;
// setting and deleting a secret are there, by name. No raw JSON, no
// internal ids.
func TestAuditLog_Readable(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	kr, err := keyring.Parse([]byte(must1(keyring.Generate())))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{store: st, clock: &clock{t: time.Now()}}
	b.app = app.New(app.Config{Store: st, Argon2: auth.TestArgon2, Now: b.clock.now, Jobs: rc, Secrets: secrets.New(st, kr),
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	owner := b.signup(t, "owner@example.com", "Acme")
	br := b.sessionBrowser(t, owner.user)
	appID, d := deployShop(t, b, br, owner.team.ID)
	ctx := context.Background()
	// The worker's progress, as the pipeline records it.
	for _, to := range []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded} {
		if d, err = st.TransitionDeployment(ctx, owner.team.ID, d.ID, []store.DeploymentState{d.State}, to); err != nil {
			t.Fatal(err)
		}
		if _, err := st.RecordEvent(ctx, owner.team.ID, store.EventParams{Actor: "worker", Verb: "deployment." + string(to), ObjectType: "deployment", ObjectID: d.ID,
			Details: map[string]any{"application_id": appID, "environment_id": d.EnvironmentID}}); err != nil {
			t.Fatal(err)
		}
	}
	secretsPath := "/applications/" + appID + "/secrets"
	wantStatus(t, br.post(secretsPath, url.Values{"name": {"db-password"}, "value": {"audit-SECRET-value"}}), http.StatusOK)
	wantStatus(t, br.post(secretsPath+"/db-password/delete", nil), http.StatusOK)

	b.clock.advance(3 * time.Hour)
	r := br.get("/events")
	wantStatus(t, r, http.StatusOK)
	rows := testid(r, "team-event-row")
	var deployRows []string
	rows.Each(func(_ int, s *goquery.Selection) {
		text := strings.Join(strings.Fields(s.Text()), " ")
		if strings.Contains(text, "{") || regexp.MustCompile(`\b(app|dep|env|sec)_[a-z0-9]{10,}`).MatchString(text) || strings.Contains(text, "audit-SECRET-value") {
			t.Errorf("row %q shows raw JSON, an internal id or a value", text)
		}
		if s.AttrOr("data-kind", "") == "deployment" {
			deployRows = append(deployRows, strings.Join(strings.Fields(s.Find(`td`).Eq(1).Text()), " "))
		}
		if app := strings.TrimSpace(s.Find(`[data-testid="event-application"]`).Text()); app != "shop" && s.AttrOr("data-kind", "") != "team" {
			t.Errorf("row %q names application %q, want shop", text, app)
		}
		tm := s.Find(`[data-testid="event-time"]`)
		if tm.Text() != "3 hours ago" || !strings.HasSuffix(tm.AttrOr("title", ""), " UTC") {
			t.Errorf("row time %q (title %q), want relative with the exact time on hover", tm.Text(), tm.AttrOr("title", ""))
		}
	})
	if len(deployRows) != 1 || !strings.HasPrefix(deployRows[0], "owner@example.com deployed revision 1 of shop to production") || !strings.Contains(deployRows[0], "succeeded") {
		t.Fatalf("deployment rows %q, want one saying who deployed what where and how it went", deployRows)
	}
	for _, want := range []string{"owner@example.com set secret db-password of shop (version 1)", "owner@example.com deleted secret db-password of shop", "owner@example.com created application shop"} {
		if !strings.Contains(strings.Join(strings.Fields(testid(r, "team-event-list").Text()), " "), want) {
			t.Errorf("the audit log lacks %q", want)
		}
	}
	if href, _ := r.doc.Find(`[data-kind="deployment"] a[href$="/deployments/` + d.ID + `"]`).Attr("href"); href == "" {
		t.Error("the deployment row does not link the deployment")
	}
	// Filtered by kind, every step of the deployment shows.
	if n := testid(br.get("/events?kind=deployment"), "team-event-row").Length(); n != 5 {
		t.Errorf("kind=deployment shows %d rows, want the request and its 4 steps", n)
	}
	// The Events tab reads the same.
	r = br.get("/applications/" + appID + "/events")
	if n := r.doc.Find(`[data-testid="event-row"][data-verb^="deployment."]`).Length(); n != 1 {
		t.Errorf("the Events tab shows %d deployment rows, want 1", n)
	}
}

func must1[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

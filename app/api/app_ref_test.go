package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
)

// TestAppRef_IDOrNameAnswerAlike: every route under /applications/{app}
// answers the same whether {app} is the application's id or its name, and
// {env} the environment's id or its name. Each route runs on two
// identical applications (one by id, one by name), so a change one call
// makes cannot hide the other's answer.
func TestAppRef_IDOrNameAnswerAlike(t *testing.T) {
	t.Parallel()
	f := fiber.New()
	api.Register(f.Group("/api/v1"), api.Config{Logger: slog.New(slog.DiscardHandler), Now: time.Now})
	routes := f.GetRoutes(true)
	for _, rt := range routes {
		if !strings.Contains(rt.Path, ":app") || rt.Method == http.MethodHead {
			continue
		}
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			// One team, two identical applications: one addressed by id,
			// the other by name. (Two teams would wait on each other: sign-up
			// takes a lock each test's transaction holds until it ends.)
			b := setupDeploy(t)
			answer := func(name string, byName bool) (int, string) {
				want(t, b.apply(t, strings.Replace(notes, `name = "notes"`, `name = "`+name+`"`, 1), ""), http.StatusCreated, "")
				apps := b.do(t, b.owner, http.MethodGet, "/api/v1/applications/"+name, "", nil)
				appRef := apps.body["id"].(string)
				envs := b.do(t, b.owner, http.MethodGet, "/api/v1/applications/"+appRef+"/environments", "", nil)
				list, _ := envs.body["environments"].([]any)
				if len(list) == 0 {
					t.Fatalf("no environments: %s", envs.raw)
				}
				env := list[0].(map[string]any)
				envRef := env["id"].(string)
				if byName {
					appRef, envRef = name, env["name"].(string)
				}
				path := strings.NewReplacer(":application", "x", ":app", appRef, ":env", envRef, ":service", "web", ":name", "db", ":slug", "x",
					":route", "x", ":job", "x", ":variable", "x", ":number", "1").Replace(rt.Path)
				var body []byte
				ct := ""
				if rt.Method != http.MethodGet && rt.Method != http.MethodDelete {
					body, ct = []byte(`{}`), "application/json"
				}
				req := httptest.NewRequest(rt.Method, path, bytes.NewReader(body))
				if ct != "" {
					req.Header.Set("Content-Type", ct)
				}
				req.Header.Set("Authorization", "Bearer "+b.owner)
				res, err := b.f.Test(req, -1)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				var e struct{ Code string }
				_ = json.NewDecoder(res.Body).Decode(&e) // 204s have no body
				return res.StatusCode, e.Code
			}
			idStatus, idCode := answer("notes", false)
			nameStatus, nameCode := answer("other", true)
			if idStatus != nameStatus || idCode != nameCode {
				t.Errorf("by id: %d %s; by name: %d %s", idStatus, idCode, nameStatus, nameCode)
			}
		})
	}
}

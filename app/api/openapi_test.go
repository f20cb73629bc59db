package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json from the handlers' types")

const openAPIFile = "../../docs/openapi.json"

// TestOpenAPI_CheckedInIsCurrent fails when docs/openapi.json differs from
// what the code generates; `go test ./app/api -run OpenAPI -update`
// regenerates it.
func TestOpenAPI_CheckedInIsCurrent(t *testing.T) {
	t.Parallel()
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(openAPIFile, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onDisk, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatalf("%v; run go test ./app/api -run OpenAPI -update", err)
	}
	if !bytes.Equal(onDisk, doc) {
		t.Fatalf("docs/openapi.json is stale; run go test ./app/api -run OpenAPI -update and commit it")
	}
}

var fiberParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

// TestOpenAPI_DescribesEveryRoute walks the routes Register mounts and
// requires each in the document, with every reference resolving, and the
// document served without a token.
func TestOpenAPI_DescribesEveryRoute(t *testing.T) {
	t.Parallel()
	f := fiber.New()
	api.Register(f.Group("/api/v1"), api.Config{Logger: slog.New(slog.DiscardHandler), Now: time.Now})

	res, err := f.Test(httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /api/v1/openapi.json without a token: %d %s", res.StatusCode, raw)
	}
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}

	seen := 0
	for _, rt := range f.GetRoutes(true) {
		if !strings.HasPrefix(rt.Path, "/api/v1/") || rt.Method == http.MethodHead || rt.Method == http.MethodOptions || rt.Method == http.MethodConnect || rt.Method == http.MethodTrace {
			continue
		}
		path := fiberParam.ReplaceAllString(rt.Path, "{$1}")
		if _, ok := doc.Paths[path][strings.ToLower(rt.Method)]; !ok {
			t.Errorf("route %s %s is not in the OpenAPI document: add it to routeTable in app/api/openapi_routes.go", rt.Method, rt.Path)
		}
		seen++
	}
	if seen < 30 {
		t.Fatalf("only %d routes registered; the walk looks wrong", seen)
	}
	// And nothing documented that is not served.
	ops := 0
	for _, byMethod := range doc.Paths {
		ops += len(byMethod)
	}
	if ops != seen {
		t.Errorf("the document lists %d operations, the app serves %d", ops, seen)
	}

	// Every $ref points at a schema that exists.
	for _, m := range regexp.MustCompile(`"\$ref":\s*"#/components/schemas/([^"]+)"`).FindAllStringSubmatch(string(raw), -1) {
		if _, ok := doc.Components.Schemas[m[1]]; !ok {
			t.Errorf("dangling reference to %s", m[1])
		}
	}
	// The wire types are described field by field.
	apply := doc.Paths["/api/v1/applications/{app}/services/{service}"]["patch"]
	body, _ := json.Marshal(apply)
	if !strings.Contains(string(body), `"#/components/schemas/ServiceUpdateRequest"`) || !strings.Contains(string(body), `"If-Match"`) {
		t.Fatalf("PATCH service operation: %s", body)
	}
	req, _ := json.Marshal(doc.Components.Schemas["ServiceUpdateRequest"])
	for _, field := range []string{"replicas", "image", "environment"} {
		if !strings.Contains(string(req), `"`+field+`"`) {
			t.Fatalf("ServiceUpdateRequest lacks %s: %s", field, req)
		}
	}
}

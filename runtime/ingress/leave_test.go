package ingress

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLeaveHandler answers a valid POST with the function's decision and
// refuses other methods and requests without a gateway or a node.
func TestLeaveHandler(t *testing.T) {
	t.Parallel()
	var got LeaveRequest
	h := LeaveHandler(func(_ context.Context, r LeaveRequest) (LeaveAnswer, error) {
		got = r
		return LeaveAnswer{Remove: r.Node == "gone"}, nil
	})
	send := func(method, body string) (int, LeaveAnswer) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, LeavePath, strings.NewReader(body)))
		var ans LeaveAnswer
		if rec.Code == http.StatusOK {
			if err := json.NewDecoder(rec.Body).Decode(&ans); err != nil {
				t.Fatal(err)
			}
		}
		return rec.Code, ans
	}
	if code, ans := send(http.MethodPost, `{"gateway":"slipway-gateway@n3","node":"gone"}`); code != http.StatusOK || !ans.Remove || got.Gateway != "slipway-gateway@n3" {
		t.Fatalf("%d %+v (asked %+v), want remove", code, ans, got)
	}
	if code, ans := send(http.MethodPost, `{"gateway":"slipway-gateway@n2","node":"still"}`); code != http.StatusOK || ans.Remove {
		t.Fatalf("%d %+v, want keep", code, ans)
	}
	for _, tc := range []struct{ method, body string }{
		{http.MethodGet, ""},
		{http.MethodPost, `{"gateway":"slipway-gateway@n2"}`},
		{http.MethodPost, `{"node":"n2"}`},
		{http.MethodPost, `{"gateway":"g","node":"` + strings.Repeat("n", 65) + `"}`},
		{http.MethodPost, `not json`},
	} {
		if code, _ := send(tc.method, tc.body); code == http.StatusOK {
			t.Errorf("%s %q answered 200", tc.method, tc.body)
		}
	}
}

package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/slipwayhq/slipway/app/api"
)

func (f *fakeRuntime) Nodes(context.Context) ([]api.Node, error) {
	return []api.Node{{ID: "n1", Hostname: "node1", Role: "manager", Leader: true, Availability: "active", State: "ready",
		EngineVersion: "20.10.24", CPUs: 2, MemoryBytes: 4 << 30, Labels: map[string]string{"dev.slipway.ingress": "true"}}}, f.err
}

// TestNodes_InstallationAdminsOnly: the installation's first user (an
// installation admin) lists the nodes with any token of theirs; a team
// member who is not one, even the team's viewer, is refused with
// installation_admin_required, and /me says which one is.
func TestNodes_InstallationAdminsOnly(t *testing.T) {
	t.Parallel()
	b := setupDeploy(t)
	st, raw := b.call(t, b.owner, http.MethodGet, "/api/v1/nodes", nil)
	wantCall(t, st, raw, http.StatusOK, "")
	var l api.NodeList
	if err := json.Unmarshal([]byte(raw), &l); err != nil || len(l.Nodes) != 1 || l.Nodes[0].Hostname != "node1" || l.Nodes[0].Labels["dev.slipway.ingress"] != "true" {
		t.Fatalf("nodes: %s", raw)
	}
	st, raw = b.call(t, b.viewer, http.MethodGet, "/api/v1/nodes", nil)
	wantCall(t, st, raw, http.StatusForbidden, api.CodeInstallationAdminRequired)

	for token, want := range map[string]bool{b.owner: true, b.viewer: false} {
		st, raw = b.call(t, token, http.MethodGet, "/api/v1/me", nil)
		wantCall(t, st, raw, http.StatusOK, "")
		var me api.Me
		if err := json.Unmarshal([]byte(raw), &me); err != nil || me.InstallationAdmin != want {
			t.Fatalf("me: %s, want installation_admin %v", raw, want)
		}
	}
	if err := b.st.SetInstallationAdmin(context.Background(), b.ownerID, false); err != nil {
		t.Fatal(err)
	}
	st, raw = b.call(t, b.owner, http.MethodGet, "/api/v1/nodes", nil)
	wantCall(t, st, raw, http.StatusForbidden, api.CodeInstallationAdminRequired)
}

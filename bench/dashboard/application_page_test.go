package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

const (
	bigServices    = 20
	bigDeployments = 200
)

// seedBigApplication gives the first team an application of bigServices
// services and a route, and bigDeployments deployments of its production
// environment (every tenth one failed), each holding its rendered
// manifest as a real one does. It returns the application's id.
func seedBigApplication(b *testing.B, ctx context.Context, st *store.Store, teamID, userID string) string {
	var src strings.Builder
	src.WriteString("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n\n[metadata]\nname = \"big\"\n\n")
	for i := range bigServices {
		fmt.Fprintf(&src, "[[spec.services]]\nname = \"svc-%02d\"\nreplicas = 2\n\n[spec.services.source]\ntype = \"image\"\nimage = \"registry.example/big/svc-%02d:1\"\n\n", i, i)
	}
	src.WriteString("[[spec.routes]]\nhostname = \"big.example.com\"\nservice = \"svc-00\"\nport = 8080\n\n")
	actor := service.Actor{TeamID: teamID, UserID: userID, Scopes: auth.AllScopes}
	res, err := service.ApplyManifest(ctx, st, actor, nil, []byte(src.String()), service.ApplyOptions{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := manifest.Decode([]byte(src.String()), "toml")
	if err != nil {
		b.Fatal(err)
	}
	rendered, _ := json.Marshal(m)
	envs, err := st.ListEnvironments(ctx, teamID, res.Application.ID)
	if err != nil || len(envs) != 1 {
		b.Fatalf("environments %v %v", envs, err)
	}
	for i := range bigDeployments {
		env := envs[0]
		d, err := st.CreateDeployment(ctx, teamID, store.DeploymentParams{EnvironmentID: env.ID, Revision: 1, Origin: store.OriginBuild, Actor: "user:" + userID})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.TransitionDeployment(ctx, teamID, d.ID, []store.DeploymentState{store.StateRequested}, store.StateCapturing); err != nil {
			b.Fatal(err)
		}
		if _, err := st.RecordCapture(ctx, teamID, d.ID, store.Capture{Manifest: rendered, Rendered: rendered, Variables: []byte("{}")}); err != nil {
			b.Fatal(err)
		}
		path := []store.DeploymentState{store.StateCapturing, store.StatePreparing, store.StateRollingOut, store.StateSucceeded}
		if i%10 == 9 {
			path = []store.DeploymentState{store.StateCapturing, store.StateFailed}
		}
		for j := 1; j < len(path); j++ {
			if _, err := st.TransitionDeployment(ctx, teamID, d.ID, path[j-1:j], path[j]); err != nil {
				b.Fatal(err)
			}
		}
	}
	return res.Application.ID
}

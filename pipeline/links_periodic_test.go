package pipeline_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// A link whose network went away (a links_reconcile that failed or never
// ran after it was lost) is repaired by the periodic reconcile scan: the
// network is created again and the importer's services join it.
func TestLinks_PeriodicReconcileRecreatesLostNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lb := setupLinks(t)
	web := swarmtest.Image(t, "web")
	lb.deployApp(t, "auth", serviceManifest("auth", web, "\n[[spec.exports]]\nservice = \"api\"\napplications = [\"notes\"]\n", "api"))
	if _, res := lb.deployApp(t, "notes", serviceManifest("notes", web, "\n[[spec.imports]]\napplication = \"auth\"\nservice = \"api\"\n", "web")); len(res.Connected) != 1 {
		t.Fatalf("notes' import connected %v, want one link", res.Connected)
	}
	nets, err := lb.Driver.ListLinkNetworks(ctx, lb.Team.ID)
	must(t, err)
	if len(nets) != 1 {
		t.Fatalf("link networks %+v, want one", nets)
	}
	lost := nets[0]

	// Lose the network: detach both environments and remove it behind
	// Slipway's back (the environment_links row stays).
	for _, app := range []string{"auth", "notes"} {
		env := lb.envs[app]
		_, err := lb.Driver.SetLinkAttachments(ctx, swarm.EnvRef{ID: env.ID, ShortID: store.ShortID(env.ID)}, nil, map[string]bool{lost.ID: true})
		must(t, err)
	}
	// Swarm refuses to remove a network until the detached tasks are gone.
	pipelinetest.Eventually(t, "the link network removed", 3*time.Minute, func() (bool, string) {
		err := lb.Driver.RemoveLinkNetwork(ctx, lost)
		return err == nil, fmt.Sprint(err)
	})
	// Swarm lists a removed network for a moment after removing it; the
	// periodic pass must see it gone.
	pipelinetest.Eventually(t, "the removed link network no longer listed", 2*time.Minute, func() (bool, string) {
		nets, err := lb.Driver.ListLinkNetworks(ctx, lb.Team.ID)
		must(t, err)
		for _, n := range nets {
			if n.ID == lost.ID {
				return false, fmt.Sprintf("%+v", nets)
			}
		}
		return true, ""
	})

	must(t, lb.linked.ReconcileAll(ctx))

	// The removed network can still show up in listings for a moment on a
	// busy engine (it was seen listed beside the new one): wait for the
	// listing to settle on the new network alone.
	pipelinetest.Eventually(t, "one link network, created again", 2*time.Minute, func() (bool, string) {
		nets, err = lb.Driver.ListLinkNetworks(ctx, lb.Team.ID)
		must(t, err)
		ok := len(nets) == 1 && nets[0].ID != lost.ID && nets[0].Name == lost.Name
		return ok, fmt.Sprintf("%+v (lost %s)", nets, lost.ID)
	})
	notes := lb.envs["notes"]
	joined, err := lb.Driver.EnvLinks(ctx, swarm.EnvRef{ID: notes.ID, ShortID: store.ShortID(notes.ID)})
	must(t, err)
	found := false
	for _, a := range joined {
		found = found || a.NetworkID == nets[0].ID
	}
	if !found {
		t.Fatalf("notes joins %+v, want the recreated network %s", joined, nets[0].ID)
	}
}

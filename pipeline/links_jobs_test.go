package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/docker/docker/api/types/filters"
	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/pipeline/pipelinetest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/runtime/swarm/swarmtest"
	"github.com/slipwayhq/slipway/store"
)

// deployUnlinked deploys app like deploy, but leaves the links_reconcile
// the deployment enqueued for the caller to run.
func (lb *linkBundle) deployUnlinked(t *testing.T, app, toml string) store.Deployment {
	t.Helper()
	env := lb.envs[app]
	d := lb.DeployTo(t, lb.linked, env.ApplicationID, env.ID, toml)
	pipelinetest.ExpectState(t, d, store.StateSucceeded)
	lb.expectLinksEnqueued(t)
	return d
}

// jobNetworks returns the networks the run of job in deployment d joined.
func (lb *linkBundle) jobNetworks(t *testing.T, d store.Deployment, job string) []string {
	t.Helper()
	list, err := swarmtest.Client(t).ServiceList(context.Background(), dockerswarm.ServiceListOptions{Filters: filters.NewArgs(
		filters.Arg("label", swarm.LabelDeployment+"="+d.ID), filters.Arg("label", swarm.LabelJob+"="+job))})
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("deployment %s has %d runs of job %s, want 1", d.ID, len(list), job)
	}
	var out []string
	for _, n := range list[0].Spec.TaskTemplate.Networks {
		out = append(out, n.Target)
	}
	return out
}

// serviceNetworks returns the networks an environment's service joins.
func (lb *linkBundle) serviceNetworks(t *testing.T, app, service string) []string {
	t.Helper()
	svc, _, err := swarmtest.Client(t).ServiceInspectWithRaw(context.Background(), swarm.ServiceName(store.ShortID(lb.envs[app].ID), service), dockerswarm.ServiceInspectOptions{})
	must(t, err)
	var out []string
	for _, n := range svc.Spec.TaskTemplate.Networks {
		out = append(out, n.Target)
	}
	return out
}

// linkNetworkIDs returns the IDs of the team's link networks.
func (lb *linkBundle) linkNetworkIDs(t *testing.T) []string {
	t.Helper()
	nets, err := lb.Driver.ListLinkNetworks(context.Background(), lb.Team.ID)
	must(t, err)
	var out []string
	for _, n := range nets {
		out = append(out, n.ID)
	}
	return out
}

// A job reaches the links of the deployment it runs in that are already
// connected: not an import its deployment adds (the exporter joins only
// once that deployment succeeded), nor one its deployment drops.
func TestLinks_JobsReachConnectedImportsOnly(t *testing.T) {
	t.Parallel()
	lb := setupLinks(t)
	web := swarmtest.Image(t, "web")
	job := swarmtest.Image(t, "job")
	ctx := context.Background()

	exports := "\n[[spec.exports]]\nservice = \"api\"\napplications = [\"notes\"]\n"
	lb.deployApp(t, "auth", serviceManifest("auth", web, exports, "api"))

	jobSpec := "\n[[spec.jobs]]\nname = \"migrate\"\nservice = \"worker\"\ncommand = [\"/app\", \"--print\", \"migrated\"]\nrun = \"before-rollout\"\n"
	importAuth := "\n[[spec.imports]]\napplication = \"auth\"\nservice = \"api\"\n"
	worker := fmt.Sprintf("api_version = \"slipway.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n"+
		"\n[[spec.services]]\nname = \"worker\"\ncommand = [\"/app\", \"--sleep\", \"3600\"]\n[spec.services.source]\ntype = \"image\"\nimage = %q\n", job)
	notes := worker + jobSpec + importAuth

	// The deployment adding the import: links_reconcile may run at any
	// time (another deployment, the periodic reconcile), but connects the
	// import only once the deployment succeeded, after its job ran.
	pending := lb.RequestDeployment(t, lb.envs["notes"].ApplicationID, lb.envs["notes"].ID, notes)
	res, err := lb.linked.ReconcileLinks(ctx, lb.Team.ID)
	must(t, err)
	if len(res.Connected) != 0 {
		t.Fatalf("links_reconcile connected %v while the importing deployment was not promoted", res.Connected)
	}
	d1 := lb.AdvanceWith(t, lb.linked, pending.ID)
	pipelinetest.ExpectState(t, d1, store.StateSucceeded)
	lb.expectLinksEnqueued(t)
	if ids := lb.linkNetworkIDs(t); len(ids) != 0 {
		t.Fatalf("link networks %v exist before links_reconcile ran; the exporter joined before the importing deployment succeeded", ids)
	}
	if nets := lb.jobNetworks(t, d1, "migrate"); len(nets) != 1 {
		t.Fatalf("the job of the deployment adding the import joined %v, want its private network only", nets)
	}
	res, err = lb.linked.ReconcileLinks(ctx, lb.Team.ID)
	must(t, err)
	if len(res.Connected) != 1 {
		t.Fatalf("links_reconcile after notes connected %v, want its import", res.Connected)
	}
	link := lb.linkNetworkIDs(t)
	if len(link) != 1 {
		t.Fatalf("link networks %v, want one", link)
	}

	// A later deployment keeping the import: its job joins the link.
	d2, _ := lb.deployApp(t, "notes", notes)
	if nets := lb.jobNetworks(t, d2, "migrate"); !slices.Contains(nets, link[0]) {
		t.Fatalf("the job of a deployment keeping the import joined %v, want the link network %s too", nets, link[0])
	}

	// A deployment dropping the import: its services keep the link until
	// links_reconcile removes it, its job does not join it.
	d3 := lb.deployUnlinked(t, "notes", worker+jobSpec)
	if nets := lb.serviceNetworks(t, "notes", "worker"); !slices.Contains(nets, link[0]) {
		t.Fatalf("notes' worker joined %v before links_reconcile ran, want the link network %s still", nets, link[0])
	}
	if nets := lb.jobNetworks(t, d3, "migrate"); slices.Contains(nets, link[0]) {
		t.Fatalf("the job of a deployment dropping the import joined the link network %s: %v", link[0], nets)
	}
	res, err = lb.linked.ReconcileLinks(ctx, lb.Team.ID)
	must(t, err)
	if len(res.Removed) != 1 {
		t.Fatalf("links_reconcile after dropping the import removed %v, want its link", res.Removed)
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// This file turns store rows into what the application pages show; the
// handlers (one per file) load, call these and render.

// loadApplication reads the :app parameter within the visitor's team; an
// application of another team is not found.
func (h *handler) loadApplication(c *fiber.Ctx, tab string) (store.Application, page.AppHeader, error) {
	a, err := h.store.GetApplication(c.UserContext(), visitorOf(c).current.Team.ID, c.Params("app"))
	if err != nil {
		return store.Application{}, page.AppHeader{}, err
	}
	header, err := h.appHeader(c.UserContext(), a, tab)
	return a, header, err
}

// loadEnvironment is loadApplication with the :environment parameter (an
// id) read within it; an environment of another application, or a
// preview, is not found.
func (h *handler) loadEnvironment(c *fiber.Ctx, tab string) (store.Application, page.AppHeader, store.Environment, error) {
	a, header, err := h.loadApplication(c, tab)
	if err != nil {
		return a, header, store.Environment{}, err
	}
	env, err := h.store.GetEnvironment(c.UserContext(), a.TeamID, c.Params("environment"))
	if err == nil && env.ApplicationID != a.ID {
		err = fiber.ErrNotFound
	}
	return a, header, env, err
}

// appHeader names the application with its environments: which have a
// saved revision they do not run yet (pending) and which Deploy builds.
func (h *handler) appHeader(ctx context.Context, a store.Application, tab string) (page.AppHeader, error) {
	envs, err := h.store.ListEnvironments(ctx, a.TeamID, a.ID)
	if err != nil {
		return page.AppHeader{}, err
	}
	// Two queries whatever the number of environments; the header needs
	// only each one's latest revision, not its deployments' manifests.
	latest, err := h.store.LatestDeploymentPerEnvironment(ctx, a.TeamID, a.ID)
	if err != nil {
		return page.AppHeader{}, err
	}
	deployed := map[string]int64{}
	for id, d := range latest {
		deployed[id] = d.Latest.Revision
	}
	return headerOf(a, tab, envs, deployed), nil
}

// headerOf is the header of a's tab from its environments and the
// revision each one's latest deployment deployed (by environment id).
func headerOf(a store.Application, tab string, envs []store.Environment, deployed map[string]int64) page.AppHeader {
	header := page.AppHeader{ID: a.ID, Name: a.Name, Revision: a.CurrentRevision, Tab: tab}
	for _, e := range envs {
		if e.Kind != store.KindEnvironment {
			continue
		}
		he := page.HeaderEnvironment{ID: e.ID, Name: e.Name, PromoteOnly: e.PromoteFrom != "", Deployed: deployed[e.ID]}
		he.Pending = a.CurrentRevision > he.Deployed
		header.Envs = append(header.Envs, he)
	}
	sort.Slice(header.Envs, func(i, j int) bool { return header.Envs[i].Name < header.Envs[j].Name })
	return header
}

// isFragment is true when htmx asks for a piece of a page rather than a
// whole one (render makes the same distinction for its shell).
func isFragment(c *fiber.Ctx) bool {
	return c.Get("HX-Request") == "true" && c.Get("HX-Boosted") != "true"
}

// enqueue inserts a job in the transaction of tx, for the service layer.
func (h *handler) enqueue(ctx context.Context, tx *store.Store, args river.JobArgs) error {
	if h.jobs == nil {
		return errors.New("enqueue: this server was started without a job queue")
	}
	if _, err := h.jobs.InsertTx(ctx, tx.Tx(), args, nil); err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return nil
}

// people names actors ("user:<id>", "token:<id>") as the team knows them.
type people map[string]string

func (h *handler) people(ctx context.Context, teamID string) (people, error) {
	members, err := h.store.ListMembers(ctx, teamID)
	if err != nil {
		return nil, err
	}
	p := people{}
	for _, m := range members {
		p["user:"+m.UserID] = m.Email
	}
	return p, nil
}

func (p people) name(actor string) string {
	if n, ok := p[actor]; ok {
		return n
	}
	switch {
	case strings.HasPrefix(actor, "token:"):
		return "an API token"
	case strings.HasPrefix(actor, "user:"):
		return "a former member"
	case actor == "":
		return "someone"
	}
	return actor
}

// environmentStatus is an environment with its latest deployment and the
// latest one that succeeded (what runs now), either nil.
type environmentStatus struct {
	env       store.Environment
	latest    *store.Deployment
	succeeded *store.Deployment
}

func (s environmentStatus) state() string {
	return store.EnvironmentState(s.latest, s.succeeded != nil)
}

// environmentStatuses pairs the application's environments (not
// previews) with their current deployments, by name.
func environmentStatuses(envs []store.Environment, current map[string]store.CurrentDeployments) []environmentStatus {
	var out []environmentStatus
	for _, e := range envs {
		if e.Kind != store.KindEnvironment {
			continue
		}
		c := current[e.ID]
		out = append(out, environmentStatus{env: e, latest: c.Latest, succeeded: c.Succeeded})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].env.Name < out[j].env.Name })
	return out
}

// environmentViews turns statuses into the Overview/Environments rows;
// services and routes come from the manifest the running deployment
// rendered (or, while none ran, the one being deployed).
func (h *handler) environmentViews(statuses []environmentStatus, who people, appID string) []page.EnvironmentView {
	names := map[string]string{}
	for _, s := range statuses {
		names[s.env.ID] = s.env.Name
	}
	out := make([]page.EnvironmentView, len(statuses))
	for i, s := range statuses {
		v := page.EnvironmentView{
			ID: s.env.ID, Name: s.env.Name, State: s.state(), PromoteFrom: names[s.env.PromoteFrom],
			Branch: s.env.Branch, Sync: s.env.Sync, Visibility: s.env.Visibility, Rollback: s.env.Rollback,
		}
		if s.latest != nil {
			d := h.deploymentView(*s.latest, s.env, who)
			v.Latest = &d
		}
		source := s.succeeded
		if source == nil {
			source = s.latest
		}
		if sum, ok := h.manifests.of(source); ok {
			v.Services, v.Routes, v.Warnings = sum.services, sum.routes, sum.warnings
		}
		out[i] = v
	}
	return out
}

func servicesAndRoutes(m *manifest.Manifest) ([]page.ServiceRow, []page.RouteRow) {
	var services []page.ServiceRow
	for _, s := range m.Spec.Services {
		image := s.Source.Image
		if s.Source.Type == manifest.SourceGit {
			image = "built from git"
			if s.Source.Repository != nil && s.Source.Repository.URL != "" {
				image = "built from " + s.Source.Repository.URL
			}
		}
		services = append(services, page.ServiceRow{Name: s.Name, Replicas: fmt.Sprint(s.Replicas.Or(1)), Image: image})
	}
	var routes []page.RouteRow
	for _, r := range m.Spec.Routes {
		row := page.RouteRow{Hostname: r.Hostname}
		if !strings.HasPrefix(r.Hostname, "*.") {
			// http until the gateway reports a trusted certificate
			// (addCertificates), as the routes API does.
			row.URL = "http://" + r.Hostname + "/"
		}
		switch {
		case r.Redirect != nil:
			row.Target = "redirect to " + r.Redirect.To
		default:
			row.Target = fmt.Sprintf("%s:%d", r.Service, r.Port)
		}
		routes = append(routes, row)
	}
	return services, routes
}

// deploymentView is a deployment with its steps, as the timeline shows it.
func (h *handler) deploymentView(d store.Deployment, env store.Environment, who people) partial.DeploymentView {
	now := h.now()
	v := partial.DeploymentView{
		ID: d.ID, ApplicationID: d.ApplicationID, Environment: env.Name, State: string(d.State), Revision: d.Revision, SpecHash: d.SpecHash,
		Origin: string(d.Origin), Actor: who.name(d.Actor), Created: when(&d.CreatedAt),
		ErrorCode: d.ErrorCode, ErrorMessage: d.ErrorMessage, Terminal: d.State.Terminal(),
		Restorable: d.RenderedManifest != nil, Retryable: env.PromoteFrom == "",
	}
	if env.Kind == store.KindPreview {
		v.PreviewBranch = env.Branch
	}
	end := now
	if d.FinishedAt != nil {
		end = *d.FinishedAt
	}
	start := d.CreatedAt
	v.Elapsed = elapsed(end.Sub(start))
	progress, err := pipeline.ParseProgress(d.Steps)
	if err != nil {
		// A record the worker wrote and this reader cannot parse is shown as
		// missing rather than failing the page.
		h.log.Warn("deployment steps unreadable", "deployment", d.ID, "err", err)
	}
	for _, s := range progress.Steps {
		stop := now
		if s.FinishedAt != nil {
			stop = *s.FinishedAt
		} else if v.Terminal {
			stop = end
		}
		v.Steps = append(v.Steps, partial.StepView{
			Name: s.Name, Label: stepLabel(s.Name), State: s.State, Message: s.Message, Output: s.Output,
			Elapsed: elapsed(stop.Sub(s.StartedAt)),
		})
	}
	return v
}

// stepLabel names a pipeline step as the timeline shows it.
func stepLabel(name string) string {
	if kind, target, ok := strings.Cut(name, ":"); ok {
		switch kind {
		case "job":
			return "Running job " + target
		case "rollout":
			return "Rolling out " + target
		}
		return name
	}
	switch name {
	case "capture":
		return "Capturing"
	case "prepare":
		return "Preparing images"
	case "plan":
		return "Planning"
	case "routes":
		return "Activating routes"
	case "cleanup":
		return "Cleaning up"
	}
	return name
}

// elapsed is a duration as people read it: 850ms, 12s, 3m04s.
func elapsed(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// manifestErrorViews lists a *service.ManifestError's errors in line order.
func manifestErrorViews(err error) ([]partial.ManifestErrorView, bool) {
	var me *service.ManifestError
	if !errors.As(err, &me) {
		return nil, false
	}
	out := make([]partial.ManifestErrorView, len(me.Errors))
	for i, e := range me.Errors {
		out[i] = partial.ManifestErrorView{Line: e.Line, Column: e.Column, Path: e.Path, Code: e.Code, Message: e.Message}
	}
	sort.SliceStable(out, func(i, j int) bool {
		// Errors without a line go last; they concern the whole document.
		li, lj := out[i].Line, out[j].Line
		if li == 0 || lj == 0 {
			return lj == 0 && li != 0
		}
		return li < lj
	})
	return out, true
}

// environmentNames maps the application's environment ids to names.
func (h *handler) environmentNames(ctx context.Context, teamID, appID string) (map[string]string, error) {
	envs, err := h.store.ListEnvironments(ctx, teamID, appID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(envs))
	for _, e := range envs {
		out[e.ID] = e.Name
	}
	return out, nil
}

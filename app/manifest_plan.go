package app

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/partial"
)

// manifestPlan shows what saving the posted manifest would change: the
// diff against the saved revision and the environments summary.
func (h *handler) manifestPlan(c *fiber.Ctx) error {
	f, err := readManifestForm(c)
	if err != nil {
		return err
	}
	plan, errs, err := h.plan(c, f)
	if err != nil {
		return err
	}
	if isFragment(c) {
		return h.render(c, http.StatusOK, "Plan", partial.PlanResponse(f.source, plan, errs))
	}
	editor := editorFor(h.viewContext(c), f.applicationID, deref(f.expectedRevision), f.source)
	editor.Plan, editor.Errors = plan, errs
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return h.renderEditor(c, status, f, editor)
}

func (h *handler) plan(c *fiber.Ctx, f manifestForm) (*partial.PlanView, []partial.ManifestErrorView, error) {
	ctx, teamID := c.UserContext(), visitorOf(c).current.Team.ID
	m, warnings, err := service.DecodeManifest([]byte(f.source), f.format)
	if errs, ok := manifestErrorViews(err); ok {
		return &partial.PlanView{Invalid: len(errs)}, errs, nil
	} else if err != nil {
		return nil, nil, err
	}
	// The application the plan compares with: the one being edited, or the
	// one the manifest names (none yet when creating).
	var app store.Application
	if f.applicationID != "" {
		app, err = h.store.GetApplication(ctx, teamID, f.applicationID)
	} else {
		app, err = h.store.GetApplicationByName(ctx, teamID, m.Metadata.Name)
	}
	if err != nil && (f.applicationID != "" || !errors.Is(err, store.ErrNotFound)) {
		return nil, nil, err
	}
	var old *manifest.Manifest
	var against int64
	var existing []manifest.ExistingEnvironment
	if app.ID != "" {
		var rev store.ManifestRevision
		if old, rev, err = savedmanifest.CurrentLenient(ctx, h.store, teamID, app.ID); err != nil {
			return nil, nil, err
		}
		against = rev.Revision
		if existing, err = h.existingEnvironments(c, app.ID); err != nil {
			return nil, nil, err
		}
	}
	p := manifest.NewPlan(old, m, existing)
	p.Warnings = warnings
	if app.ID != "" {
		envWarnings, err := service.PlanWarnings(ctx, h.store, teamID, app.ID, m)
		if err != nil {
			return nil, nil, err
		}
		p.Warnings = append(p.Warnings, envWarnings...)
	} else {
		p.Warnings = append(p.Warnings, service.DeclaredEnvironmentWarnings(m)...)
	}
	targets, err := service.PlanHashTargets(ctx, h.store, teamID, app.ID, m)
	if err != nil {
		return nil, nil, err
	}
	// The page lists the hashes in a table of their own, not in the text.
	view := &partial.PlanView{Text: manifest.FormatPlan(p), Against: against, Hashes: planHashViews(manifest.PlanHashes(m, targets))}
	for _, e := range p.Environments {
		view.Environments = append(view.Environments, e.String())
	}
	return view, nil, nil
}

func planHashViews(hashes []manifest.EnvironmentHash) []partial.PlanHashView {
	out := make([]partial.PlanHashView, len(hashes))
	for i, e := range hashes {
		v := partial.PlanHashView{Environment: e.Environment, SpecHash: e.SpecHash, Deployed: e.DeployedSpecHash, Changed: e.Changed, Unknown: e.Unknown}
		for _, s := range e.Services {
			v.Services = append(v.Services, partial.PlanServiceHashView{Name: s.Service, Hash: s.SpecHash, Deployed: s.DeployedSpecHash, Change: s.Change})
		}
		out[i] = v
	}
	return out
}

// existingEnvironments is the application's environments as a plan needs
// them (nil when it has none, so the plan treats them as new).
func (h *handler) existingEnvironments(c *fiber.Ctx, appID string) ([]manifest.ExistingEnvironment, error) {
	envs, err := h.store.ListEnvironments(c.UserContext(), visitorOf(c).current.Team.ID, appID)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, e := range envs {
		names[e.ID] = e.Name
	}
	var out []manifest.ExistingEnvironment
	for _, e := range envs {
		if e.Kind == store.KindEnvironment {
			out = append(out, manifest.ExistingEnvironment{Name: e.Name, Branch: e.Branch, Commit: e.Commit, PromoteFrom: names[e.PromoteFrom], Sync: e.Sync})
		}
	}
	return out, nil
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
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
	m, warnings, err := service.DecodeManifest([]byte(f.source), f.format)
	if errs, ok := manifestErrorViews(err); ok {
		return &partial.PlanView{Invalid: len(errs)}, errs, nil
	} else if err != nil {
		return nil, nil, err
	}
	p, err := service.PlanManifest(c.UserContext(), h.store, visitorOf(c).current.Team.ID, f.applicationID, m, warnings)
	if err != nil {
		return nil, nil, err
	}
	// The page lists the hashes in a table of their own, not in the text.
	view := &partial.PlanView{Hashes: planHashViews(p.Hashes), Against: p.Against}
	p.Hashes = nil
	view.Text = manifest.FormatPlan(p.Plan)
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

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

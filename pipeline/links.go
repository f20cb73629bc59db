package pipeline

import (
	"context"
	"fmt"

	"github.com/slipwayhq/slipway/links"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// CodeImportUnconnected warns about an import that connects to nothing.
const CodeImportUnconnected = "import_unconnected"

// LinkDriver is the part of runtime/swarm links need; *swarm.Driver has it.
type LinkDriver interface {
	ListLinkNetworks(ctx context.Context, teamID string) ([]swarm.LinkNetwork, error)
	EnsureLinkNetwork(ctx context.Context, l swarm.LinkSpec) (swarm.LinkNetwork, error)
	SetLinkAttachments(ctx context.Context, env swarm.EnvRef, want []swarm.LinkAttachment, linkIDs map[string]bool) ([]string, error)
	RemoveLinkNetwork(ctx context.Context, n swarm.LinkNetwork) error
	EnvLinks(ctx context.Context, env swarm.EnvRef) ([]swarm.LinkAttachment, error)
}

// LinksResult is what one reconciliation did.
type LinksResult struct {
	Connected   []string // network names of links created
	Removed     []string // network names of links removed
	Updated     []string // Swarm services whose link networks changed
	Unconnected []links.Unconnected
}

// ReconcileLinks computes the links of the team's environments from their
// running deployments and makes Swarm match: one network per link, joined
// by the exported service (with its <service>.<application> alias) and
// every service of the importing environment; networks of links that went
// away are left by their services and removed. The team's link lock is
// held throughout, so concurrent runs queue.
func (p *Pipeline) ReconcileLinks(ctx context.Context, teamID string) (LinksResult, error) {
	driver, ok := p.Driver.(LinkDriver)
	if !ok {
		return LinksResult{}, &PermanentError{Err: fmt.Errorf("links reconcile: driver %T cannot manage links", p.Driver)}
	}
	var res LinksResult
	err := p.Store.WithTx(ctx, func(tx *store.Store) error {
		res = LinksResult{}
		if err := tx.LockLinks(ctx, teamID); err != nil {
			return err
		}
		ls, err := LoadLinks(ctx, tx, teamID)
		if err != nil {
			return err
		}
		for envID, b := range ls.Rebind {
			if err := tx.ReplaceLinkBindings(ctx, teamID, envID, b); err != nil {
				return err
			}
		}
		res.Unconnected = ls.Plan.Unconnected
		return p.applyLinks(ctx, tx, driver, teamID, ls.Plan, ls.AppOf, &res)
	})
	return res, err
}

// LinkState is what a team's links are planned from, and the plan.
type LinkState struct {
	Dir  links.Directory
	Envs []links.Environment
	// Existing are the links that exist, oldest first.
	Existing []links.Link
	// Rebind holds the bindings of deployments not linked before, by
	// environment id: ReconcileLinks records them.
	Rebind map[string]store.LinkBindings
	// AppOf maps environment ids to application ids.
	AppOf map[string]string
	Plan  links.Result
}

// LoadLinks reads the team's deployed environments, their bindings and
// links, and plans. It writes nothing: bindings that deploying binds
// (Rebind) are computed as they would be recorded.
func LoadLinks(ctx context.Context, st *store.Store, teamID string) (LinkState, error) {
	envs, err := st.ListLinkEnvironments(ctx, teamID)
	if err != nil {
		return LinkState{}, err
	}
	apps, err := st.ListApplications(ctx, teamID)
	if err != nil {
		return LinkState{}, err
	}
	names := map[string]string{}
	for _, a := range apps {
		names[a.ID] = a.Name
	}
	bindings, err := st.ListLinkBindings(ctx, teamID)
	if err != nil {
		return LinkState{}, err
	}
	ls := LinkState{Dir: links.NewDirectory(names), Rebind: map[string]store.LinkBindings{}, AppOf: map[string]string{}}
	for _, e := range envs {
		ls.AppOf[e.ID] = e.ApplicationID
		le := links.Environment{ID: e.ID, Name: e.Name, AppID: e.ApplicationID, AppName: e.ApplicationName, Preview: e.Kind == store.KindPreview}
		if e.DeploymentID != "" && len(e.Rendered) > 0 {
			m, err := manifest.Decode(e.Rendered, "json")
			if err != nil {
				return LinkState{}, fmt.Errorf("links: rendered manifest of deployment %s: %w", e.DeploymentID, err)
			}
			le.Deployed = m
			b := bindings[e.ID]
			if b.DeploymentID != e.DeploymentID {
				// Deploying binds the names this deployment uses.
				b = store.LinkBindings{DeploymentID: e.DeploymentID, Names: ls.Dir.Bind(b.Names, links.Names(m))}
				ls.Rebind[e.ID] = b
			}
			le.Bindings = b.Names
		}
		ls.Envs = append(ls.Envs, le)
	}
	rows, err := st.ListEnvironmentLinks(ctx, teamID)
	if err != nil {
		return LinkState{}, err
	}
	for _, r := range rows {
		ls.Existing = append(ls.Existing, links.Link{ExporterEnvID: r.ExporterEnvironmentID, Service: r.Service, ImporterEnvID: r.ImporterEnvironmentID, Alias: r.Alias})
	}
	ls.Plan = links.Plan(ls.Dir, ls.Envs, ls.Existing)
	return ls, nil
}

// UnconnectedIf returns the imports of m that would not connect were it
// deployed to environment envID (app plan and promotion plans warn about
// them). m must be rendered for that environment.
func (ls LinkState) UnconnectedIf(envID string, m *manifest.Manifest) []links.Unconnected {
	var out []links.Unconnected
	for _, u := range ls.planIf(envID, m).Unconnected {
		if u.ImporterEnvID == envID {
			out = append(out, u)
		}
	}
	return out
}

// ImportsIf returns the links environment envID would import were m
// deployed to it. m must be rendered for that environment.
func (ls LinkState) ImportsIf(envID string, m *manifest.Manifest) []links.Link {
	var out []links.Link
	for _, l := range ls.planIf(envID, m).Links {
		if l.ImporterEnvID == envID {
			out = append(out, l)
		}
	}
	return out
}

// planIf plans the team's links as if m were deployed to envID.
func (ls LinkState) planIf(envID string, m *manifest.Manifest) links.Result {
	envs := make([]links.Environment, len(ls.Envs))
	copy(envs, ls.Envs)
	for i := range envs {
		if envs[i].ID == envID {
			envs[i].Deployed = m
			envs[i].Bindings = ls.Dir.Bind(envs[i].Bindings, links.Names(m))
		}
	}
	return links.Plan(ls.Dir, envs, ls.Existing)
}

// UnconnectedOf returns the imports of envID that connect to nothing now.
func (ls LinkState) UnconnectedOf(envID string) []links.Unconnected {
	var out []links.Unconnected
	for _, u := range ls.Plan.Unconnected {
		if u.ImporterEnvID == envID {
			out = append(out, u)
		}
	}
	return out
}

// applyLinks makes Swarm and the environment_links rows match plan.
func (p *Pipeline) applyLinks(ctx context.Context, tx *store.Store, driver LinkDriver, teamID string, plan links.Result, appOf map[string]string, res *LinksResult) error {
	have, err := driver.ListLinkNetworks(ctx, teamID)
	if err != nil {
		return err
	}
	haveByName := map[string]bool{}
	linkIDs := map[string]bool{}
	touched := map[string]bool{} // environments whose attachments may change
	for _, n := range have {
		haveByName[n.Name] = true
		linkIDs[n.ID] = true
		touched[n.ExporterEnvID], touched[n.ImporterEnvID] = true, true
	}
	var want []swarm.LinkNetwork
	wantByName := map[string]bool{}
	for _, l := range plan.Links {
		spec := swarm.LinkSpec{
			TeamID: teamID, ExporterAppID: appOf[l.ExporterEnvID], ExporterEnvID: l.ExporterEnvID, Service: l.Service,
			ImporterAppID: appOf[l.ImporterEnvID], ImporterEnvID: l.ImporterEnvID, Alias: l.Alias,
		}
		n, err := driver.EnsureLinkNetwork(ctx, spec)
		if err != nil {
			return err
		}
		if !haveByName[n.Name] {
			res.Connected = append(res.Connected, n.Name)
		}
		want = append(want, n)
		wantByName[n.Name] = true
		linkIDs[n.ID] = true
		touched[l.ExporterEnvID], touched[l.ImporterEnvID] = true, true
		if err := tx.SaveEnvironmentLink(ctx, teamID, store.EnvironmentLink{
			ExporterEnvironmentID: l.ExporterEnvID, Service: l.Service, ImporterEnvironmentID: l.ImporterEnvID, Alias: l.Alias, Network: n.Name,
		}); err != nil {
			return err
		}
	}
	for envID := range touched {
		updated, err := driver.SetLinkAttachments(ctx, swarm.EnvRef{ID: envID, ShortID: store.ShortID(envID)}, swarm.LinkAttachments(want, envID), linkIDs)
		if err != nil {
			return err
		}
		res.Updated = append(res.Updated, updated...)
	}
	for _, n := range have {
		if wantByName[n.Name] {
			continue
		}
		if err := driver.RemoveLinkNetwork(ctx, n); err != nil {
			return err
		}
		res.Removed = append(res.Removed, n.Name)
	}
	rows, err := tx.ListEnvironmentLinks(ctx, teamID)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if !wantByName[r.Network] {
			if err := tx.DeleteEnvironmentLink(ctx, teamID, r.ExporterEnvironmentID, r.Service, r.ImporterEnvironmentID); err != nil {
				return err
			}
		}
	}
	p.recordLinkEvents(ctx, tx, teamID, res)
	return nil
}

// recordLinkEvents records the links made and removed.
func (p *Pipeline) recordLinkEvents(ctx context.Context, tx *store.Store, teamID string, res *LinksResult) {
	if len(res.Connected) == 0 && len(res.Removed) == 0 {
		return
	}
	if _, err := tx.RecordEvent(ctx, teamID, store.EventParams{Actor: "worker", Verb: "links.changed", ObjectType: "team", ObjectID: teamID,
		Details: map[string]any{"connected": nonNil(res.Connected), "removed": nonNil(res.Removed)}}); err != nil {
		p.logger().WarnContext(ctx, "record links event", "error", err)
	}
}

// importWarnings warns (import_unconnected) about the imports of the
// rendered manifest that would not connect once it is deployed.
func (r *run) importWarnings(ctx context.Context, rendered *manifest.Manifest) []BoundWarning {
	if !r.p.Links || len(rendered.Spec.Imports) == 0 {
		return nil
	}
	ls, err := LoadLinks(ctx, r.p.Store, r.d.TeamID)
	if err != nil {
		r.p.logger().WarnContext(ctx, "links: cannot check imports", "deployment", r.d.ID, "error", err)
		return nil
	}
	var out []BoundWarning
	for _, u := range ls.UnconnectedIf(r.env.ID, rendered) {
		for i, im := range rendered.Spec.Imports {
			if im.Application == u.Application && im.Service == u.Service {
				out = append(out, BoundWarning{Path: fmt.Sprintf("spec.imports[%d]", i), Code: CodeImportUnconnected, Message: UnconnectedMessage(u)})
			}
		}
	}
	return out
}

// UnconnectedMessage explains why an import connects to nothing, without
// saying whether the environment it names exists.
func UnconnectedMessage(u links.Unconnected) string {
	if u.Reason == links.ReasonLimit {
		return fmt.Sprintf("import of %s.%s (environment %s): that environment already links to %d importing environments; it connects once a slot frees up", u.Service, u.Application, u.Environment, links.MaxImporters)
	}
	return fmt.Sprintf("import of %s.%s (environment %s): no deployed environment of that name exports the service to this environment", u.Service, u.Application, u.Environment)
}

// linksChanged enqueues a links reconciliation for the team after a
// deployment succeeded or an environment went away. Without Links set
// (tests of other steps) nothing is enqueued.
func (p *Pipeline) linksChanged(ctx context.Context, teamID string) error {
	if !p.Links {
		return nil
	}
	return p.Store.WithTx(ctx, func(tx *store.Store) error {
		return p.queue().LinksChanged(ctx, tx, teamID)
	})
}

// envLinks lists the link networks the environment's services join now,
// so a deployment (or drift repair) keeps them.
func (r *run) envLinks(ctx context.Context) ([]swarm.LinkAttachment, error) {
	driver, ok := r.p.Driver.(LinkDriver)
	if !ok {
		return nil, nil
	}
	return driver.EnvLinks(ctx, r.envRef())
}

// jobLinks returns the link networks the deployment's jobs join: of the
// import networks the environment's services join now (joined), those of
// links the deployment keeps importing. A job reaches the links of the
// deployment it runs in that are already connected; an import the
// deployment adds connects only once links_reconcile runs after it
// succeeded, and one it drops is not reached by its jobs.
func (r *run) jobLinks(ctx context.Context, joined []swarm.LinkAttachment) ([]swarm.LinkAttachment, error) {
	driver, ok := r.p.Driver.(LinkDriver)
	// A finished deployment (drift repair) runs no jobs.
	if !ok || r.d.State.Terminal() || len(r.rendered.Spec.Jobs) == 0 || len(r.rendered.Spec.Imports) == 0 || len(joined) == 0 {
		return nil, nil
	}
	ls, err := LoadLinks(ctx, r.p.Store, r.d.TeamID)
	if err != nil {
		return nil, err
	}
	nets, err := driver.ListLinkNetworks(ctx, r.d.TeamID)
	if err != nil {
		return nil, err
	}
	return jobLinkAttachments(ls.ImportsIf(r.env.ID, r.rendered), nets, joined), nil
}

// jobLinkAttachments keeps, of the attachments an environment's services
// join, the import networks (joined by every service) of the links in
// imports. A link network matches a link whatever its alias: renaming the
// exporting application keeps the link under its old name until
// links_reconcile replaces its network.
func jobLinkAttachments(imports []links.Link, nets []swarm.LinkNetwork, joined []swarm.LinkAttachment) []swarm.LinkAttachment {
	want := map[string]bool{}
	for _, l := range imports {
		want[l.Key()] = true
	}
	keep := map[string]bool{}
	for _, n := range nets {
		if want[links.Link{ExporterEnvID: n.ExporterEnvID, Service: n.Service, ImporterEnvID: n.ImporterEnvID}.Key()] {
			keep[n.ID] = true
		}
	}
	var out []swarm.LinkAttachment
	for _, a := range joined {
		if a.Service == "" && keep[a.NetworkID] {
			out = append(out, a)
		}
	}
	return out
}

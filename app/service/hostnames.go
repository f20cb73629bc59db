package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// reserveHostnames makes each target environment own the hostnames its
// routes render to for the saved manifest m, plus those it serves now
// (a deployed route stays reserved until a deployment withdraws it). An
// environment whose routes do not render yet (a variable without a value)
// keeps its reservations: the deployment checks it again. A hostname
// another environment holds aborts the apply with hostname_conflict.
func reserveHostnames(ctx context.Context, tx *store.Store, a Actor, app store.Application, m *manifest.Manifest, envs []store.Environment) error {
	for _, env := range envs {
		rendered, errs := manifest.Render(m, planRenderContext(m, app.Name, env)) // link_warnings.go
		if len(errs) > 0 {
			continue
		}
		hosts := make([]string, 0, len(rendered.Spec.Routes))
		for _, rt := range rendered.Spec.Routes {
			hosts = append(hosts, rt.Hostname)
		}
		served, err := tx.ListEnvironmentRoutes(ctx, a.TeamID, env.ID)
		if err != nil {
			return err
		}
		for _, r := range served {
			hosts = append(hosts, r.Hostname)
		}
		if len(hosts) == 0 {
			// Skip the global reservation lock when there is nothing to
			// reserve and nothing to release.
			held, err := tx.ListHostnames(ctx, a.TeamID, env.ID)
			if err != nil {
				return err
			}
			if len(held) == 0 {
				continue
			}
		}
		err = tx.SetEnvironmentHostnames(ctx, a.TeamID, env.ID, hosts)
		var c *store.ConflictError
		if errors.As(err, &c) && c.Code == "hostname_conflict" {
			return hostnameConflictError(ctx, tx, a, rendered, env, c.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hostnameConflictError names the route whose hostname is taken, and
// the owning environment only when it belongs to the caller's team:
// another team's application names must not leak.
func hostnameConflictError(ctx context.Context, tx *store.Store, a Actor, rendered *manifest.Manifest, env store.Environment, hostname string) error {
	field := "spec.routes"
	for i, rt := range rendered.Spec.Routes {
		if store.NormalizeHostname(rt.Hostname) == hostname {
			field = fmt.Sprintf("spec.routes[%d].hostname", i)
			break
		}
	}
	owner, err := tx.TeamHostnameOwner(ctx, a.TeamID, hostname)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &InputError{Field: field, Code: "hostname_conflict", Message: pipeline.HostnameConflictMessage(hostname, nil, env)}
	case err != nil:
		return err
	}
	return &InputError{Field: field, Code: "hostname_conflict", Message: pipeline.HostnameConflictMessage(hostname, &owner, env)}
}

// HostnameClashes says, for each hostname the saved manifest renders for
// environment envName, that another environment already holds it: what a
// deployment of envName would fail with (hostname_conflict). An
// environment created by hand renders the routes every environment does,
// so a literal hostname clashes with the one that serves it.
func HostnameClashes(ctx context.Context, st *store.Store, a Actor, appID, envName string) ([]string, error) {
	app, err := st.GetApplication(ctx, a.TeamID, appID)
	if err != nil {
		return nil, err
	}
	env, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName)
	if err != nil {
		return nil, err
	}
	m, _, err := savedmanifest.Current(ctx, st, a.TeamID, appID)
	if err != nil || m == nil {
		return nil, err
	}
	rendered, errs := manifest.Render(m, planRenderContext(m, app.Name, env))
	if len(errs) > 0 {
		return nil, nil
	}
	var out []string
	for _, rt := range rendered.Spec.Routes {
		owner, err := st.TeamHostnameOwner(ctx, a.TeamID, rt.Hostname)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		if owner.EnvironmentID != env.ID {
			out = append(out, pipeline.HostnameConflictMessage(store.NormalizeHostname(rt.Hostname), &owner, env))
		}
	}
	return out, nil
}

package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
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
			return hostnameConflictError(ctx, tx, a, rendered, c.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hostnameConflictError names the route whose hostname is taken, and the
// owning application only when it belongs to the caller's team: another
// team's application names must not leak.
func hostnameConflictError(ctx context.Context, tx *store.Store, a Actor, rendered *manifest.Manifest, hostname string) error {
	field := "spec.routes"
	for i, rt := range rendered.Spec.Routes {
		if store.NormalizeHostname(rt.Hostname) == hostname {
			field = fmt.Sprintf("spec.routes[%d].hostname", i)
			break
		}
	}
	msg := fmt.Sprintf("hostname %s belongs to another application", hostname)
	if owner, err := teamHostnameOwner(ctx, tx, a.TeamID, hostname); err != nil {
		return err
	} else if owner != "" {
		msg = fmt.Sprintf("hostname %s belongs to %s", hostname, owner)
	}
	return &InputError{Field: field, Code: "hostname_conflict", Message: msg}
}

// teamHostnameOwner returns "application A (environment E)" when an
// environment of teamID reserves hostname or the wildcard just above it,
// and "" otherwise. It walks the team's reservations: conflicts are rare.
func teamHostnameOwner(ctx context.Context, tx *store.Store, teamID, hostname string) (string, error) {
	wildcard := ""
	if _, parent, ok := strings.Cut(hostname, "."); ok {
		wildcard = "*." + parent
	}
	apps, err := tx.ListApplications(ctx, teamID)
	if err != nil {
		return "", err
	}
	for _, app := range apps {
		envs, err := tx.ListEnvironments(ctx, teamID, app.ID)
		if err != nil {
			return "", err
		}
		for _, env := range envs {
			hs, err := tx.ListHostnames(ctx, teamID, env.ID)
			if err != nil {
				return "", err
			}
			for _, h := range hs {
				if h.Hostname == hostname || h.Hostname == wildcard {
					return fmt.Sprintf("application %s (environment %s)", app.Name, env.Name), nil
				}
			}
		}
	}
	return "", nil
}

package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/links"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// LinkImport is one import of the environment's running deployment and
// whether it connects.
type LinkImport struct {
	Application string `json:"application"`
	Service     string `json:"service"`
	// Environment is the exporting environment it asks for.
	Environment string `json:"environment"`
	Connected   bool   `json:"connected"`
	// Name is what the environment's services reach the service as,
	// <service>.<application>, when connected.
	Name string `json:"name,omitempty"`
	// Reason says why it does not connect: not_exported (no deployed
	// environment of that name exports the service to this environment)
	// or link_limit (that environment already links to 64).
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Network is the link's overlay network, once created.
	Network string     `json:"network,omitempty"`
	Since   *time.Time `json:"since,omitempty"`
}

// LinkImporter is an environment importing one of this environment's
// services.
type LinkImporter struct {
	Service     string     `json:"service"`
	Application string     `json:"application"`
	Environment string     `json:"environment"`
	Network     string     `json:"network,omitempty"`
	Since       *time.Time `json:"since,omitempty"`
}

// EnvironmentLinks is GET /applications/{app}/environments/{env}/links.
type EnvironmentLinks struct {
	Imports   []LinkImport   `json:"imports"`
	Importers []LinkImporter `json:"importers"`
}

// environmentLinks lists the imports of the environment or preview target
// resolves, whether each connects (or why not), and the environments
// importing its services. It follows what environments deployed, never
// saved manifests.
func (h *handler) environmentLinks(target targetOf) fiber.Handler {
	return func(c *fiber.Ctx) error { return h.linksOf(c, target) }
}

func (h *handler) linksOf(c *fiber.Ctx, target targetOf) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	env, err := target(c, a)
	if err != nil {
		return h.fail(c, err)
	}
	ls, err := pipeline.LoadLinks(ctx, h.store, team)
	if err != nil {
		return h.fail(c, err)
	}
	rows, err := h.store.ListLinksOf(ctx, team, env.ID)
	if err != nil {
		return h.fail(c, err)
	}
	existing := map[string]store.EnvironmentLink{}
	for _, r := range rows {
		existing[links.Link{ExporterEnvID: r.ExporterEnvironmentID, Service: r.Service, ImporterEnvID: r.ImporterEnvironmentID}.Key()] = r
	}
	byID := map[string]links.Environment{}
	for _, e := range ls.Envs {
		byID[e.ID] = e
	}
	out := EnvironmentLinks{Imports: []LinkImport{}, Importers: []LinkImporter{}}
	for _, l := range ls.Plan.Links {
		row, made := existing[l.Key()]
		var network string
		var since *time.Time
		if made {
			network, since = row.Network, &row.CreatedAt
		}
		switch {
		case l.ImporterEnvID == env.ID:
			ex := byID[l.ExporterEnvID]
			out.Imports = append(out.Imports, LinkImport{Application: ex.AppName, Service: l.Service, Environment: ex.Name,
				Connected: made, Name: l.Alias, Network: network, Since: since})
		case l.ExporterEnvID == env.ID:
			im := byID[l.ImporterEnvID]
			out.Importers = append(out.Importers, LinkImporter{Service: l.Service, Application: im.AppName, Environment: im.Name, Network: network, Since: since})
		}
	}
	for _, u := range ls.UnconnectedOf(env.ID) {
		out.Imports = append(out.Imports, LinkImport{Application: u.Application, Service: u.Service, Environment: u.Environment,
			Reason: u.Reason, Message: pipeline.UnconnectedMessage(u)})
	}
	return c.JSON(out)
}

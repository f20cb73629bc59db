package app

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/views/page"
)

// nodeList shows the Swarm's nodes to installation admins; to anyone
// else the page does not exist.
func (h *handler) nodeList(c *fiber.Ctx) error {
	if !visitorOf(c).user.InstallationAdmin {
		return fiber.NewError(http.StatusNotFound, "Not found.")
	}
	v := page.NodesView{}
	nr, ok := h.runtime.(api.NodeReader)
	if !ok {
		v.Error = "This server does not read the Swarm."
		return h.render(c, http.StatusOK, "Nodes", page.Nodes(v))
	}
	nodes, err := nr.Nodes(c.UserContext())
	switch {
	case errors.Is(err, api.ErrRuntimeUnavailable):
		v.Error = "Docker cannot be reached: " + err.Error()
	case err != nil:
		return err
	}
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, page.NodeRow{
			Hostname: n.Hostname, Role: n.Role, Leader: n.Leader, Availability: n.Availability, State: n.State,
			Engine: n.EngineVersion, CPUs: fmt.Sprintf("%g", n.CPUs), Memory: fmt.Sprintf("%.1f GiB", float64(n.MemoryBytes)/(1<<30)), Labels: n.LabelList(),
		})
	}
	return h.render(c, http.StatusOK, "Nodes", page.Nodes(v))
}

package api

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Node is one machine of the Swarm Slipway runs on.
type Node struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
	// Role is manager or worker; Leader marks the Swarm's Raft leader.
	Role   string `json:"role"`
	Leader bool   `json:"leader"`
	// Availability is active, pause or drain; State is ready, down,
	// disconnected or unknown.
	Availability  string  `json:"availability"`
	State         string  `json:"state"`
	Address       string  `json:"address"`
	EngineVersion string  `json:"engine_version"`
	CPUs          float64 `json:"cpus"`
	MemoryBytes   int64   `json:"memory_bytes"`
	// Labels are the node's dev.slipway.* labels: ingress (a gateway runs
	// there), builds (workers run there), registry (the embedded
	// registry's node), db (the stack's Postgres).
	Labels map[string]string `json:"labels"`
}

// NodeList is GET /nodes.
type NodeList struct {
	Nodes []Node `json:"nodes"`
}

// NodeReader lists the Swarm's nodes. The RuntimeReader implements it
// when it can reach a manager.
type NodeReader interface {
	Nodes(ctx context.Context) ([]Node, error)
}

// CodeInstallationAdminRequired refuses installation-wide requests from
// anyone but an installation admin.
const CodeInstallationAdminRequired = "installation_admin_required"

// requireInstallationAdmin admits tokens of installation admins only:
// what the installation runs on is not any team's to see.
func (h *handler) requireInstallationAdmin(c *fiber.Ctx) error {
	u, err := h.store.GetUser(c.UserContext(), callerOf(c).token.CreatedBy)
	if err != nil {
		return h.fail(c, err)
	}
	if !u.InstallationAdmin {
		return WriteError(c, http.StatusForbidden, CodeInstallationAdminRequired,
			"only installation admins see the installation's nodes (an operator grants it with slipway admin installation-admin grant)", nil)
	}
	return c.Next()
}

// nodeList lists the Swarm's nodes for an installation admin.
func (h *handler) nodeList(c *fiber.Ctx) error {
	nr, ok := h.runtime.(NodeReader)
	if !ok {
		return WriteError(c, http.StatusServiceUnavailable, "nodes_unavailable", "this server does not read the Swarm", nil)
	}
	nodes, err := nr.Nodes(c.UserContext())
	if errors.Is(err, ErrRuntimeUnavailable) {
		return WriteError(c, http.StatusServiceUnavailable, "docker_unavailable", err.Error(), nil)
	}
	if err != nil {
		return h.fail(c, err)
	}
	if nodes == nil {
		nodes = []Node{}
	}
	return c.JSON(NodeList{Nodes: nodes})
}

// LabelList is the node's labels as "ingress=true", without the
// dev.slipway. prefix, sorted: how the CLI and the dashboard show them.
func (n Node) LabelList() []string {
	out := make([]string, 0, len(n.Labels))
	for k, v := range n.Labels {
		out = append(out, strings.TrimPrefix(k, "dev.slipway.")+"="+v)
	}
	sort.Strings(out)
	return out
}

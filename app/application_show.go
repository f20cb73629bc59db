package app

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// applicationShow is the application's Overview tab.
func (h *handler) applicationShow(c *fiber.Ctx) error {
	ctx, teamID, ref := c.UserContext(), visitorOf(c).current.Team.ID, c.Params("app")
	a, err := teamRead(h, c, teamID, readKey("application", ref), func() (store.Application, error) { return h.store.GetApplication(ctx, teamID, ref) })
	if err != nil {
		return err
	}
	// The header and the environments come from the same two reads.
	p, err := h.environmentPage(c, a, "overview")
	if err != nil {
		return err
	}
	h.addLiveStatus(c, p.envs)
	h.addLogLinks(a.ID, p.envs)
	h.addCertificates(c, a.TeamID, p.envs)
	return h.render(c, http.StatusOK, a.Name, page.ApplicationOverview(p.header, p.envs))
}

// environmentsOf is what the Overview and Environments tabs show: the
// header of tab and the environments with their current deployments.
type environmentsOf struct {
	header page.AppHeader
	envs   []page.EnvironmentView
}

// environmentPage loads what the Overview and Environments tabs show, in
// two queries whatever the number of environments and deployments.
func (h *handler) environmentPage(c *fiber.Ctx, a store.Application, tab string) (environmentsOf, error) {
	ctx := c.UserContext()
	envs, err := teamRead(h, c, a.TeamID, readKey("environments", a.ID), func() ([]store.Environment, error) {
		return h.store.ListEnvironments(ctx, a.TeamID, a.ID)
	})
	if err != nil {
		return environmentsOf{}, err
	}
	current, err := teamRead(h, c, a.TeamID, readKey("current-deployments", a.ID), func() (map[string]store.CurrentDeployments, error) {
		return h.store.CurrentDeploymentsOf(ctx, a.TeamID, a.ID)
	})
	if err != nil {
		return environmentsOf{}, err
	}
	// The deployments shown name their actors from the same read, not
	// from the team's member list.
	deployed, who := map[string]int64{}, people{}
	for id, d := range current {
		if d.Latest != nil {
			deployed[id] = d.Latest.Revision
			if d.LatestActorEmail != "" {
				who[d.Latest.Actor] = d.LatestActorEmail
			}
		}
	}
	return environmentsOf{
		header: headerOf(a, tab, envs, deployed),
		envs:   h.environmentViews(environmentStatuses(envs, current), who, a.ID),
	}, nil
}

// addLiveStatus fills running replica counts from Docker when the server
// has a runtime reader. Docker being unreachable is shown on the page, not
// failed: the database half of the overview still stands.
func (h *handler) addLiveStatus(c *fiber.Ctx, envs []page.EnvironmentView) {
	if h.runtime == nil {
		return
	}
	for i := range envs {
		e := &envs[i]
		if e.Latest == nil {
			continue
		}
		live, err := h.runtime.ServiceStatus(c.UserContext(), e.ID)
		if err != nil {
			h.log.WarnContext(c.UserContext(), "live status unavailable", "environment", e.ID, "err", err)
			e.LiveError = "docker_unavailable"
			continue
		}
		byName := map[string]int{}
		for j, s := range e.Services {
			byName[s.Name] = j
		}
		for _, s := range live {
			j, ok := byName[s.Service]
			if !ok {
				continue
			}
			e.Services[j].Running = fmt.Sprint(s.Running)
			e.Services[j].Replicas = fmt.Sprint(s.Desired)
			e.Services[j].Health = s.Health
			e.Services[j].RunningImage = shortImage(s.Image)
			if s.StartedAt != nil {
				e.Services[j].Started = when(s.StartedAt)
			}
			e.Services[j].Restarts = fmt.Sprint(s.ExitedTasks)
		}
		for j := range e.Services {
			if e.Services[j].Running == "" {
				e.Services[j].Running = "0"
			}
		}
		e.Live = true
	}
}

// addLogLinks links every deployed service to its logs when the server
// can read them.
func (h *handler) addLogLinks(appID string, envs []page.EnvironmentView) {
	if h.logs == nil {
		return
	}
	for i := range envs {
		if envs[i].Latest == nil {
			continue
		}
		for j := range envs[i].Services {
			envs[i].Services[j].LogsURL = serviceLogsURL(appID, envs[i].Name, envs[i].Services[j].Name)
		}
	}
}

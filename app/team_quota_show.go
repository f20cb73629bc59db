package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/views/page"
)

// quotaAbout says what each quota counts.
var quotaAbout = map[quota.Name]string{
	quota.Applications:          "applications",
	quota.Environments:          "environments, previews not counted",
	quota.Previews:              "preview environments",
	quota.Replicas:              "replicas running, across environments and previews",
	quota.CPUMillis:             "CPU reserved: replicas × resources.cpu_millis",
	quota.MemoryBytes:           "memory reserved: replicas × resources.memory_bytes",
	quota.Volumes:               "volumes declared by the applications",
	quota.Secrets:               "stored secrets",
	quota.ConcurrentBuilds:      "deployments building images at once",
	quota.ConcurrentDeployments: "deployments running at once",
}

// teamQuotaShow is the team's quotas and what it uses of each.
func (h *handler) teamQuotaShow(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), visitorOf(c).current.Team.ID
	limits, err := quota.Get(ctx, h.store, team)
	if err != nil {
		return err
	}
	own, err := quota.Overrides(ctx, h.store, team)
	if err != nil {
		return err
	}
	use, err := quota.Measure(ctx, h.store, team)
	if err != nil {
		return err
	}
	var v page.QuotasView
	for _, n := range quota.All {
		limit, limited := limits[n]
		_, mine := own[n]
		v.Rows = append(v.Rows, page.QuotaRow{
			Name: string(n), About: quotaAbout[n], Use: quota.Format(n, use[n]), UseN: use[n],
			Limit: quota.Format(n, limit), LimitN: limit, Unlimited: !limited, Own: mine,
			Full: limited && use[n] >= limit,
		})
	}
	return h.render(c, http.StatusOK, "Quotas", page.TeamQuotas(v))
}

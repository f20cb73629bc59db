package api

import (
	"time"

	"github.com/gofiber/fiber/v2"
)

// Release is a succeeded build deployment and who received it.
type Release struct {
	ID          string            `json:"id"`
	Environment string            `json:"environment"`
	Revision    int64             `json:"revision"`
	Actor       string            `json:"actor"`
	FinishedAt  *time.Time        `json:"finished_at,omitempty"`
	Receivers   []ReleaseReceiver `json:"receivers"`
}

// ReleaseReceiver is a deployment that received a release.
type ReleaseReceiver struct {
	DeploymentID string    `json:"deployment_id"`
	Environment  string    `json:"environment"`
	State        string    `json:"state"`
	Origin       string    `json:"origin"`
	PromotedFrom string    `json:"promoted_from"`
	CreatedAt    time.Time `json:"created_at"`
}

// ReleaseList is GET /applications/{app}/releases.
type ReleaseList struct {
	Releases []Release `json:"releases"`
}

// releaseList lists the application's releases, newest first.
func (h *handler) releaseList(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	rels, err := h.store.ListReleases(c.UserContext(), a.TeamID, a.ID, c.QueryInt("limit"))
	if err != nil {
		return h.fail(c, err)
	}
	out := ReleaseList{Releases: make([]Release, 0, len(rels))}
	for _, r := range rels {
		rel := Release{ID: r.ID, Environment: r.EnvironmentName, Revision: r.Revision, Actor: r.Actor,
			FinishedAt: r.FinishedAt, Receivers: make([]ReleaseReceiver, 0, len(r.Receivers))}
		for _, x := range r.Receivers {
			rel.Receivers = append(rel.Receivers, ReleaseReceiver{DeploymentID: x.DeploymentID, Environment: x.EnvironmentName,
				State: string(x.State), Origin: string(x.Origin), PromotedFrom: x.PromotedFrom, CreatedAt: x.CreatedAt})
		}
		out.Releases = append(out.Releases, rel)
	}
	return c.JSON(out)
}

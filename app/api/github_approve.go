package api

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// registerGitHub mounts POST /applications/{app}/pull-requests/{number}/approve.
func (h *handler) registerGitHub(r fiber.Router) {
	r.Post("/applications/:app/pull-requests/:number/approve", h.requireScope(auth.AppsDeploy), h.pullRequestApprove)
}

// PullRequestApproval is the answer of POST .../pull-requests/{number}/approve.
type PullRequestApproval struct {
	Number     int    `json:"number"`
	Repository string `json:"repository"`
	HeadSHA    string `json:"head_sha"`
	Approval   string `json:"approval"`
	FromFork   bool   `json:"from_fork"`
}

// pullRequestApprove approves the preview of a pull request from a fork or
// from an author without write permission; the preview deploys next (a
// fork's never mounts stored secrets).
func (h *handler) pullRequestApprove(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	n, err := strconv.Atoi(c.Params("number"))
	if err != nil {
		n = 0 // refused with number_invalid below
	}
	pr, err := service.ApprovePullRequestPreview(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, n)
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(fiber.StatusAccepted).JSON(PullRequestApproval{
		Number: pr.Number, Repository: pr.FullName, HeadSHA: pr.HeadSHA, Approval: pr.Approval, FromFork: pr.FromFork,
	})
}

package api

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// registerRepository mounts POST /applications/{app}/repository/reset.
func (h *handler) registerRepository(r fiber.Router) {
	r.Post("/applications/:app/repository/reset", h.requireScope(auth.AppsWrite), h.repositoryReset)
}

// RepositoryStatus is a repository-backed application's sync and read
// state, part of GET /applications/{app}.
type RepositoryStatus struct {
	// LastReadCommit is the commit the saved manifest was last read at.
	LastReadCommit string `json:"last_read_commit,omitempty"`
	// LastCheckedAt is when sync last listed the repository's branches.
	LastCheckedAt *time.Time `json:"last_checked_at,omitempty"`
	// LastError is the last listing's error, "" when it succeeded.
	LastError   string     `json:"last_error,omitempty"`
	NextCheckAt *time.Time `json:"next_check_at,omitempty"`
}

// repositoryStatus returns the application's repository state, nil when
// nothing was ever read or listed.
func (h *handler) repositoryStatus(ctx context.Context, teamID, appID string) (*RepositoryStatus, error) {
	st, err := h.store.GetRepositoryState(ctx, teamID, appID)
	if err != nil || (st.LastReadManifest == nil && st.LastCheckedAt == nil) {
		return nil, err
	}
	return &RepositoryStatus{LastReadCommit: st.LastReadCommit, LastCheckedAt: st.LastCheckedAt, LastError: st.LastError, NextCheckAt: st.NextCheckAt}, nil
}

// RepositoryReset is the answer of POST .../repository/reset.
type RepositoryReset struct {
	Revision int64 `json:"revision"`
}

// repositoryReset makes the manifest last read from the repository the
// saved one again.
func (h *handler) repositoryReset(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	rev, err := service.ResetToRepository(c.UserContext(), h.store, callerOf(c).actor(), a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(RepositoryReset{Revision: rev.Revision})
}

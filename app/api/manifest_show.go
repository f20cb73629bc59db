package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store"
)

// Revision is one saved manifest revision. Manifest (normalized JSON) and
// Source (as submitted) are only in GET /applications/{app}/manifest.
type Revision struct {
	Revision     int64           `json:"revision"`
	Author       string          `json:"author"`
	SourceFormat string          `json:"source_format"`
	CreatedAt    time.Time       `json:"created_at"`
	Manifest     json.RawMessage `json:"manifest,omitempty"`
	Source       string          `json:"source,omitempty"`
}

// RevisionList is GET /applications/{app}/revisions, newest first.
type RevisionList struct {
	Revisions []Revision `json:"revisions"`
}

func newRevision(r store.ManifestRevision) Revision {
	return Revision{Revision: r.Revision, Author: r.Author, SourceFormat: r.SourceFormat, CreatedAt: r.CreatedAt}
}

// manifestShow is the application's current revision, or ?revision=N.
func (h *handler) manifestShow(c *fiber.Ctx) error {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var r store.ManifestRevision
	if n := c.QueryInt("revision", 0); n > 0 {
		r, err = h.store.GetManifestRevision(ctx, team, a.ID, int64(n))
	} else {
		r, err = h.store.GetCurrentManifestRevision(ctx, team, a.ID)
	}
	if errors.Is(err, store.ErrNotFound) {
		return WriteError(c, http.StatusNotFound, "manifest_missing", "the application has no such manifest revision; apply one first", map[string]any{"field": "revision"})
	}
	if err != nil {
		return h.fail(c, err)
	}
	out := newRevision(r)
	out.Manifest, out.Source = r.Manifest, r.Source
	return c.JSON(out)
}

func (h *handler) revisionList(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	rs, err := h.store.ListManifestRevisions(c.UserContext(), callerOf(c).token.TeamID, a.ID)
	if err != nil {
		return h.fail(c, err)
	}
	out := RevisionList{Revisions: make([]Revision, len(rs))}
	for i, r := range rs {
		out.Revisions[i] = newRevision(r)
	}
	return c.JSON(out)
}

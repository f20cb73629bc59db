package app

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// manifestShow is the Manifest tab: the editor on the saved source, the
// revision history and, with ?from=&to=, the diff between two revisions.
func (h *handler) manifestShow(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "manifest")
	if err != nil {
		return err
	}
	_, rev, err := savedmanifest.CurrentLenient(c.UserContext(), h.store, a.TeamID, a.ID)
	if err != nil {
		return err
	}
	editor := editorFor(h.viewContext(c), a.ID, rev.Revision, rev.Source)
	if rev.Revision == 0 {
		// An application created with just a name starts from a manifest
		// naming it, not from a blank page.
		editor.Source, editor.Starter = starterManifest(a.Name, h.publicURL(c)), true
	}
	v, err := h.manifestView(c, a, editor)
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, a.Name+" · Manifest", page.ApplicationManifest(header, v))
}

// manifestView gathers the tab around an editor (fresh, or re-shown with
// errors or a plan).
func (h *handler) manifestView(c *fiber.Ctx, a store.Application, editor partial.EditorView) (page.ManifestView, error) {
	ctx := c.UserContext()
	revs, err := h.store.ListManifestRevisions(ctx, a.TeamID, a.ID)
	if err != nil {
		return page.ManifestView{}, err
	}
	who, err := h.people(ctx, a.TeamID)
	if err != nil {
		return page.ManifestView{}, err
	}
	v := page.ManifestView{Editor: editor}
	byNumber := map[int64]store.ManifestRevision{}
	for _, r := range revs { // newest first
		byNumber[r.Revision] = r
		v.Revisions = append(v.Revisions, page.RevisionRow{Revision: r.Revision, Author: who.name(r.Author), Created: when(&r.CreatedAt)})
	}
	if !editor.CanSave && a.CurrentRevision > 0 {
		cur, err := h.store.GetManifestRevision(ctx, a.TeamID, a.ID, a.CurrentRevision)
		if err != nil {
			return v, err
		}
		v.Source = cur.Source
	}
	from, errFrom := strconv.ParseInt(c.Query("from"), 10, 64)
	to, errTo := strconv.ParseInt(c.Query("to"), 10, 64)
	if errFrom == nil && errTo == nil {
		// The history lists revisions without their documents; load the two.
		if _, ok := byNumber[from]; !ok {
			return v, fiber.NewError(http.StatusNotFound, "no such revision")
		}
		if _, ok := byNumber[to]; !ok {
			return v, fiber.NewError(http.StatusNotFound, "no such revision")
		}
		var ms [2]*manifest.Manifest
		for i, n := range []int64{from, to} {
			r, err := h.store.GetManifestRevision(ctx, a.TeamID, a.ID, n)
			if err != nil {
				return v, err
			}
			if ms[i], err = savedmanifest.DecodeLenient(r); err != nil {
				return v, err
			}
		}
		om, nm := ms[0], ms[1]
		p := manifest.NewPlan(om, nm, nil)
		p.Rollouts = nil // the history shows what changed, not how it would roll out
		v.Diff = &page.RevisionDiff{From: from, To: to, Text: manifest.FormatPlan(p)}
	}
	return v, nil
}

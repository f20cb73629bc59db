package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// ManifestBodyLimit bounds a submitted manifest, tighter than the server's
// general body limit.
const ManifestBodyLimit = 256 << 10

// ApplyResponse is POST /applications/apply.
type ApplyResponse struct {
	Application            Application  `json:"application"`
	Revision               int64        `json:"revision"`
	Created                bool         `json:"created"`
	Unchanged              bool         `json:"unchanged"`
	CreatedEnvironments    []string     `json:"created_environments"`
	UndeclaredEnvironments []string     `json:"undeclared_environments"`
	Warnings               []FieldError `json:"warnings"`
	Deployments            []Deployment `json:"deployments"`
}

// manifestApply saves a manifest (TOML, or JSON when the body says so) as
// the next revision of the application it names, and deploys it with
// ?deploy=true. If-Match carries the revision the author edited.
func (h *handler) manifestApply(c *fiber.Ctx) error {
	body, format, ok, answered := manifestBody(c)
	if !ok {
		return answered
	}
	opts := service.ApplyOptions{Format: format, Deploy: c.QueryBool("deploy"), AllowFileURLs: h.fileURLs}
	if m := strings.Trim(strings.TrimSpace(c.Get(fiber.HeaderIfMatch)), `"`); m != "" {
		rev, err := strconv.ParseInt(m, 10, 64)
		if err != nil || rev < 0 {
			return WriteError(c, http.StatusBadRequest, "if_match_invalid",
				"If-Match must be the revision number you edited, like If-Match: 3", map[string]any{"field": "If-Match"})
		}
		opts.ExpectedRevision = &rev
	}
	res, err := service.ApplyManifest(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, body, opts)
	var ie *service.InputError
	if errors.As(err, &ie) && ie.Code == "generation_conflict" {
		// A conflict, not bad input: the same manifest succeeds after a reload.
		return WriteError(c, http.StatusConflict, ie.Code, ie.Message, map[string]any{"field": "If-Match"})
	}
	if err != nil {
		return h.failManifest(c, err)
	}
	out := ApplyResponse{
		Application: newApplication(res.Application), Revision: res.Revision.Revision,
		Created: res.Created, Unchanged: res.Unchanged,
		CreatedEnvironments:    nonNil(res.CreatedEnvironments),
		UndeclaredEnvironments: nonNil(res.Undeclared),
		Warnings:               newFieldErrors(res.Warnings),
		Deployments:            []Deployment{},
	}
	names, err := h.environmentNames(c.UserContext(), res.Application.TeamID, res.Application.ID)
	if err != nil {
		return h.fail(c, err)
	}
	for _, d := range res.Deployments {
		out.Deployments = append(out.Deployments, newDeployment(d, names[d.EnvironmentID]))
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	return c.Status(status).JSON(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// manifestBody reads a submitted manifest: TOML, or JSON when the body
// says so. A body too large or not JSON when it says so is answered here
// (ok false, answered what to return).
func manifestBody(c *fiber.Ctx) (body []byte, format string, ok bool, answered error) {
	body = c.Body()
	if len(body) > ManifestBodyLimit {
		return nil, "", false, WriteError(c, http.StatusRequestEntityTooLarge, "manifest_too_large",
			fmt.Sprintf("the manifest is %d bytes; the limit is %d (256 KiB)", len(body), ManifestBodyLimit),
			map[string]any{"limit": ManifestBodyLimit, "size": len(body)})
	}
	if !strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEApplicationJSON) {
		return body, "toml", true, nil
	}
	// The spec: a JSON body that does not decode (bad syntax, unknown
	// field, wrong type) is json_malformed, not field errors; only a
	// decoded manifest that fails validation is 422.
	if !json.Valid(body) {
		var v any
		bad := decode(body, &v)
		if bad == nil {
			bad = &badBody{"json_malformed", "the body is not valid JSON", nil}
		}
		return nil, "", false, bad.write(c)
	}
	if _, err := manifest.Decode(body, "json"); err != nil {
		return nil, "", false, WriteError(c, http.StatusBadRequest, "json_malformed", "the body is not a manifest: "+err.Error(), nil)
	}
	return body, "json", true, nil
}

// failManifest answers err: a *service.ManifestError as 422
// manifest_validation_failed listing every field error, anything else as
// fail does.
func (h *handler) failManifest(c *fiber.Ctx, err error) error {
	var me *service.ManifestError
	if errors.As(err, &me) {
		return WriteError(c, http.StatusUnprocessableEntity, "manifest_validation_failed", me.Error(),
			map[string]any{"errors": newFieldErrors(me.Errors)})
	}
	return h.fail(c, err)
}

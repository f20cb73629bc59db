package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// This file answers the Generated secrets card of the Secrets tab through
// the field edits of PUT/DELETE /api/v1/applications/{id}/generated-secrets.

// Sizes the form falls back to when left empty, as app generated-secret set does.
const (
	defaultDeclarationBytes = 32
	defaultDeclarationBits  = 3072
)

// generatedSecretDeclare declares a generated secret, or changes the
// declaration of that name; values already generated stay.
func (h *handler) generatedSecretDeclare(c *fiber.Ctx) error {
	name := strings.TrimSpace(c.FormValue("name"))
	return h.editDeclarations(c, "decl:", "Generated secret "+name+" declared.", func(store.Application) (func(*manifest.Manifest) error, error) {
		g, err := declarationGenerate(c)
		return service.DeclareSecret(manifest.SecretDeclaration{Name: name, Generate: g}), err
	})
}

// generatedSecretUndeclare removes a declaration; refused while a service
// or job mounts it (secret_mounted). Values already generated stay.
func (h *handler) generatedSecretUndeclare(c *fiber.Ctx) error {
	name := c.Params("name")
	return h.editDeclarations(c, "decl:"+name, "Declaration of "+name+" removed; values already generated stay.", func(a store.Application) (func(*manifest.Manifest) error, error) {
		return service.UndeclareSecret(c.UserContext(), h.store, visitorOf(c).actor(), a.ID, name)
	})
}

// declarationGenerate reads the generator the form chose: bytes and
// encoding for random secrets, bits for RSA keys, the other fields being
// ignored since one form offers them all. Any other type is passed on for
// validation to name.
func declarationGenerate(c *fiber.Ctx) (manifest.Generate, error) {
	g := manifest.Generate{Type: c.FormValue("type")}
	size := func(field string, fallback int) (int, error) {
		raw := strings.TrimSpace(c.FormValue(field))
		if raw == "" {
			return fallback, nil
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			return 0, &service.InputError{Field: "generate." + field, Code: "not_an_integer", Message: fmt.Sprintf("type a whole number, got %q", raw)}
		}
		return n, nil
	}
	var err error
	switch g.Type {
	case manifest.GenerateRandom:
		g.Encoding = c.FormValue("encoding")
		g.Bytes, err = size("bytes", defaultDeclarationBytes)
	case manifest.GenerateRSA:
		g.Bits, err = size("bits", defaultDeclarationBits)
	}
	return g, err
}

// editDeclarations saves the edit build returns as a new revision and
// shows the Secrets tab, with a refusal under errKey.
func (h *handler) editDeclarations(c *fiber.Ctx, errKey, notice string, build func(store.Application) (func(*manifest.Manifest) error, error)) error {
	a, header, err := h.loadApplication(c, "secrets")
	if err != nil {
		return err
	}
	edit, buildErr := build(a)
	return h.editManifestTab(c, a, "secrets", edit, buildErr, notice, func(errMsg, notice string, revision int64) error {
		if revision > 0 {
			header.Revision = revision
		}
		if errMsg != "" {
			return h.renderSecrets(c, a, header, formErrorStatus(c), map[string]string{errKey: errMsg}, "")
		}
		return h.renderSecrets(c, a, header, fiber.StatusOK, nil, notice)
	})
}

// secretDeclarations lists the saved manifest's spec.secrets and, for
// each, the services and jobs mounting it by its literal name (a ${{ }}
// name is only known once rendered for an environment).
func (h *handler) secretDeclarations(c *fiber.Ctx, a store.Application) ([]page.DeclarationRow, bool, error) {
	m, _, err := savedmanifest.CurrentLenient(c.UserContext(), h.store, a.TeamID, a.ID)
	if err != nil || m == nil {
		return nil, false, err
	}
	rows := make([]page.DeclarationRow, 0, len(m.Spec.Secrets))
	for _, d := range m.Spec.Secrets {
		row := page.DeclarationRow{Name: d.Name, Type: d.Generate.Type, Size: declarationSize(d.Generate)}
		mounts := func(owner string, list []manifest.SecretMount) {
			for _, s := range list {
				if s.Name == d.Name {
					row.Mounts = append(row.Mounts, owner+" at "+s.Target)
				}
			}
		}
		for _, s := range m.Spec.Services {
			mounts("service "+s.Name, s.Secrets)
		}
		for _, j := range m.Spec.Jobs {
			mounts("job "+j.Name, j.Secrets)
		}
		rows = append(rows, row)
	}
	return rows, true, nil
}

// declarationSize is a generator's size as the manifest states it.
func declarationSize(g manifest.Generate) string {
	switch g.Type {
	case manifest.GenerateRSA:
		return fmt.Sprintf("%d bits", g.Bits)
	case manifest.GenerateRandom:
		enc := g.Encoding
		if enc == "" {
			enc = manifest.DefaultSecretEncoding
		}
		return fmt.Sprintf("%d bytes, %s", g.Bytes, enc)
	}
	return ""
}

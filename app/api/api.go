package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/authcache"
)

// Config is what the API needs.
type Config struct {
	Store *store.Store
	// AuthCache answers the token lookup; nil reads Postgres every time.
	AuthCache *authcache.Cache
	Logger    *slog.Logger
	Now       func() time.Time
	// Jobs queues deployments; Runtime reads Docker for the status
	// endpoint. Either may be nil: the routes then say what is missing.
	Jobs    JobInserter
	Runtime RuntimeReader
	// Secrets is the keyring-backed secret store; nil answers the secret
	// routes with secrets_unavailable.
	Secrets *secrets.Service
	// Previews is the preview machinery; nil answers the preview routes
	// with previews_unavailable.
	Previews *service.Previews
	// AllowFileURLs accepts manifests naming file:// repositories ([git]
	// allow_file_urls).
	AllowFileURLs bool
	// Notifications is the team's notification destinations; nil
	// answers their routes with notifications_unavailable.
	Notifications *notify.Service
	// Logs reads services' output from Docker; nil answers the logs route
	// with docker_unavailable.
	Logs ServiceLogReader
}

type handler struct {
	store     *store.Store
	authCache *authcache.Cache
	log       *slog.Logger
	now       func() time.Time
	jobs      JobInserter
	runtime   RuntimeReader
	secrets   *secrets.Service
	previews  *service.Previews
	fileURLs  bool
	notify    *notify.Service
	logs      ServiceLogReader
}

// Register mounts the API's routes on r (the /api/v1 group).
func Register(r fiber.Router, cfg Config) {
	if cfg.AuthCache == nil {
		cfg.AuthCache = authcache.New(cfg.Store, cfg.Logger)
	}
	h := &handler{store: cfg.Store, authCache: cfg.AuthCache, log: cfg.Logger, now: cfg.Now, jobs: cfg.Jobs, runtime: cfg.Runtime, secrets: cfg.Secrets, previews: cfg.Previews, fileURLs: cfg.AllowFileURLs, notify: cfg.Notifications, logs: cfg.Logs}
	// The API description is public, so it is mounted before authentication.
	r.Get("/openapi.json", openAPIShow)
	r.Use(h.authenticate)
	r.Use(h.idempotency)
	r.Get("/me", h.meShow)
	r.Get("/teams", h.teamList)
	r.Get("/events", h.requireScope(auth.AppsRead), h.eventList)
	r.Get("/tokens", h.requireScope(auth.TokensManage), h.tokenList)
	r.Post("/tokens", h.requireScope(auth.TokensManage), h.tokenCreate)
	r.Delete("/tokens/:token", h.requireScope(auth.TokensManage), h.tokenRevoke)
	r.Get("/applications", h.requireScope(auth.AppsRead), h.applicationList)
	r.Post("/applications", h.requireScope(auth.AppsWrite), h.applicationCreate)
	r.Post("/applications/import", h.requireScope(auth.AppsRead), h.applicationImport)
	r.Get("/applications/:app", h.requireScope(auth.AppsRead), h.applicationShow)
	r.Delete("/applications/:app", h.requireScope(auth.AppsDelete), h.applicationDelete)
	r.Delete("/applications/:app/environments/:env", h.requireScope(auth.AppsDelete), h.environmentDelete)
	h.registerDeploy(r)
	h.registerFieldEdits(r)
	h.registerRoutes(r)
	h.registerSecrets(r)
	h.registerRegistryCredentials(r)
	r.Get("/nodes", h.requireInstallationAdmin, h.nodeList)
	h.registerPromotion(r)
	h.registerEnvironmentBranch(r)
	h.registerEnvironmentCreate(r)
	h.registerRepository(r)
	h.registerPreviews(r)
	h.registerGitHub(r)
	h.registerServiceControls(r)
	h.registerDayTwo(r)
	h.registerNotifications(r)
	h.registerMetrics(r)
	h.registerServiceLogs(r)
	// Unknown API paths answer in JSON rather than falling through to the
	// dashboard's HTML.
	r.Use(func(c *fiber.Ctx) error {
		return WriteError(c, http.StatusNotFound, "not_found", "no such API endpoint: "+c.Method()+" "+c.Path(), nil)
	})
}

// Error is the body of every API error.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// WriteError writes an API error body.
func WriteError(c *fiber.Ctx, status int, code, message string, details map[string]any) error {
	if details == nil {
		details = map[string]any{}
	}
	return c.Status(status).JSON(Error{Code: code, Message: message, Details: details})
}

// caller is the authenticated token and what it may do.
type caller struct {
	token  store.APIToken
	scopes []auth.Scope
}

func (k caller) actor() service.Actor {
	return service.Actor{TeamID: k.token.TeamID, UserID: k.token.CreatedBy, TokenID: k.token.ID, Scopes: k.scopes}
}

const callerKey = "api_caller"

func callerOf(c *fiber.Ctx) caller { return c.Locals(callerKey).(caller) }

// authenticate resolves the bearer token. Effective scopes are the token's
// scopes that its creator's current role still grants, so demoting or
// removing a member shrinks or disables their tokens at once.
func (h *handler) authenticate(c *fiber.Ctx) error {
	ctx := c.UserContext()
	secret, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	if !ok || !auth.HasPrefix(secret, auth.TokenPrefix) {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="slipway"`)
		return WriteError(c, http.StatusUnauthorized, "token_missing", "send an API token as Authorization: Bearer slw_…", nil)
	}
	tok, err := h.authCache.APIToken(ctx, store.HashToken(secret), h.now())
	invalid := func() error {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="slipway", error="invalid_token"`)
		return WriteError(c, http.StatusUnauthorized, "token_invalid", "the API token is unknown or revoked", nil)
	}
	if errors.Is(err, store.ErrNotFound) {
		expired, err := h.store.APITokenExpired(ctx, store.HashToken(secret), h.now())
		if err != nil {
			return h.fail(c, err)
		}
		if expired {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="slipway", error="invalid_token", error_description="expired"`)
			return WriteError(c, http.StatusUnauthorized, "token_expired", "the API token has expired: create a new one on the API tokens page or with POST /api/v1/tokens", nil)
		}
		return invalid()
	}
	if err != nil {
		return h.fail(c, err)
	}
	if tok.CreatedBy == "" || tok.CreatorRole == "" {
		// A token acts for its creator, who is no longer in the team.
		return invalid()
	}
	role := auth.Role(tok.CreatorRole)
	var scopes []auth.Scope
	for _, s := range tok.Scopes {
		if role.Has(auth.Scope(s)) {
			scopes = append(scopes, auth.Scope(s))
		}
	}
	c.Locals(callerKey, caller{token: tok, scopes: scopes})
	return c.Next()
}

func (h *handler) requireScope(s auth.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !permitted(c, s) {
			return denyScope(c, s)
		}
		return c.Next()
	}
}

// permitted reports whether the caller's token holds s.
func permitted(c *fiber.Ctx, s auth.Scope) bool { return slices.Contains(callerOf(c).scopes, s) }

// denyScope answers 403 permission_denied naming the missing scope.
func denyScope(c *fiber.Ctx, s auth.Scope) error {
	return WriteError(c, http.StatusForbidden, "permission_denied",
		fmt.Sprintf("this token lacks the %s permission", s), map[string]any{"permission": string(s)})
}

// fail answers an operation's error: input errors name their field, a
// missing (or other team's) object is 404, anything else is logged once.
func (h *handler) fail(c *fiber.Ctx, err error) error {
	var ie *service.InputError
	var nf *service.NotFoundError
	var pe *service.PermissionError
	switch {
	case errors.As(err, &ie):
		status := http.StatusUnprocessableEntity
		if errors.Is(err, store.ErrConflict) || strings.HasSuffix(ie.Code, "_taken") {
			status = http.StatusConflict
		}
		details := map[string]any{"field": ie.Field}
		for k, v := range ie.Details {
			details[k] = v
		}
		return WriteError(c, status, ie.Code, ie.Message, details)
	case errors.As(err, &pe):
		return WriteError(c, http.StatusForbidden, "permission_denied", pe.Message, map[string]any{"permission": string(pe.Scope)})
	case errors.As(err, &nf): // a named object with its own code, e.g. environment_not_found
		return WriteError(c, http.StatusNotFound, nf.Code, nf.Message, map[string]any{"field": nf.Field})
	case errors.Is(err, store.ErrNotFound):
		return WriteError(c, http.StatusNotFound, "not_found", "no such object", nil)
	}
	h.log.ErrorContext(c.UserContext(), "api request failed", "method", c.Method(), "path", c.Path(), "err", err)
	return WriteError(c, http.StatusInternalServerError, "internal", "internal error; see the server log", nil)
}

// badBody is a request body decode refused, written by its write method.
type badBody struct {
	code, message string
	details       map[string]any
}

func (b *badBody) write(c *fiber.Ctx) error {
	return WriteError(c, http.StatusBadRequest, b.code, b.message, b.details)
}

// decode reads a JSON body strictly: malformed JSON, a wrong type or an
// unknown field is refused naming what was wrong.
func decode(body []byte, v any) *badBody {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			return &badBody{"json_malformed", "the body must be a single JSON object", nil}
		}
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &badBody{"json_malformed", "the body is not valid JSON: " + syn.Error(), map[string]any{"offset": syn.Offset}}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &badBody{"json_malformed", "the body is empty or cut short; send a JSON object", nil}
	case errors.As(err, &typ):
		return &badBody{"json_type", fmt.Sprintf("field %s must be a JSON %s", typ.Field, typ.Type), map[string]any{"field": typ.Field}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &badBody{"field_unknown", fmt.Sprintf("unknown field %q", field), map[string]any{"field": field}}
	}
	return &badBody{"json_malformed", err.Error(), nil}
}

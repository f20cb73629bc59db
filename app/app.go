package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/static"
	"github.com/slipwayhq/slipway/store"
)

// BodyLimit bounds every request body. Manifest uploads get a tighter limit
// in their own handler.
const BodyLimit = 1 << 20

// Config is what the HTTP front end needs.
type Config struct {
	Store  *store.Store
	Logger *slog.Logger
	// Argon2 defaults to auth.DefaultArgon2.
	Argon2 auth.Argon2Params
	// SecureCookies forces the Secure cookie flag (behind a TLS-terminating
	// proxy); cookies are Secure anyway on TLS requests.
	SecureCookies bool
	// LoginLimiter defaults to an in-memory limiter (see NewMemoryLimiter).
	LoginLimiter Limiter
	// Now defaults to time.Now; tests move the clock to expire things.
	Now func() time.Time
	// Jobs inserts River jobs in the transaction that changes what they act
	// on (serve passes an insert-only client). Nil until a handler needs it.
	Jobs JobInserter
	// Runtime reads what runs in Docker for the status endpoint (serve
	// and dev pass an adapter over runtime/swarm); nil answers
	// docker_unavailable.
	Runtime RuntimeReader
	// Webhook is the GitHub intake (app/webhook), mounted at
	// /webhooks/github outside sessions and CSRF: it verifies its own
	// signatures. Nil when no GitHub App is configured.
	Webhook http.Handler
	// Metrics is /metrics (metrics.Registry.Handler: bearer token, 404
	// when off), mounted outside sessions and CSRF. Nil: no /metrics.
	Metrics http.Handler
	// Secrets is the keyring-backed secret store (serve and dev load the
	// key); nil leaves the Secrets tab and API without controls.
	Secrets *secrets.Service
	// Logs reads services' output from Docker for the logs pages; nil
	// shows docker_unavailable there.
	Logs ServiceLogReader
	// Previews is the preview machinery (service.Previews) the API and
	// dashboard share; nil answers previews_unavailable.
	Previews *service.Previews
	// GitHub enables the GitHub pages (github_routes.go); nil leaves them out.
	GitHub *GitHub
	// AllowFileURLs accepts manifests naming file:// repositories: the
	// operator's [git] allow_file_urls (off by default).
	AllowFileURLs bool
	// PublicURL is where people reach the dashboard (config public_url),
	// shown in snippets to copy; "" uses each request's own address.
	PublicURL string
	// Notifications is the team's notification destinations (serve and
	// dev build it with the secret key); nil leaves the Notifications
	// page and API without controls.
	Notifications *notify.Service
}

// RuntimeReader is the read-only view of Docker the API's status uses.
type RuntimeReader = api.RuntimeReader

// JobInserter is the part of a River client handlers use.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// New builds the Fiber application with every route registered.
func New(cfg Config) *fiber.App {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Argon2 == (auth.Argon2Params{}) {
		cfg.Argon2 = auth.DefaultArgon2
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LoginLimiter == nil {
		cfg.LoginLimiter = NewMemoryLimiter(5, time.Minute, cfg.Now)
	}
	h := &handler{store: cfg.Store, log: cfg.Logger, argon: cfg.Argon2, secure: cfg.SecureCookies, limiter: cfg.LoginLimiter, now: cfg.Now, jobs: cfg.Jobs, runtime: cfg.Runtime, secrets: cfg.Secrets, logs: cfg.Logs, previews: cfg.Previews, fileURLs: cfg.AllowFileURLs, public: cfg.PublicURL, notify: cfg.Notifications}
	h.csp = contentSecurityPolicy(githubFormActions(cfg.GitHub))
	// A login for an unknown e-mail verifies against this hash, so it costs
	// as much as a wrong password and timing does not reveal who has an account.
	h.dummyHash, _ = auth.HashPassword(cfg.Argon2, auth.NewSecret(""))

	f := fiber.New(fiber.Config{
		AppName:               "slipway",
		BodyLimit:             BodyLimit,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		IdleTimeout:           120 * time.Second,
		ErrorHandler:          h.handleError,
	})
	// The local preview upload alone may send more than BodyLimit.
	f.Server().HeaderReceived = bodyLimitFor
	f.Use(recover.New(), h.securityHeaders)
	f.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(static.FS), MaxAge: 3600}))
	f.Get("/healthz", h.healthShow)
	f.Get(schemaPath, h.manifestSchema)

	if cfg.Webhook != nil {
		f.Post("/webhooks/github", adaptor.HTTPHandler(cfg.Webhook))
	}
	if cfg.Metrics != nil {
		f.Get("/metrics", adaptor.HTTPHandler(cfg.Metrics))
	}
	api.Register(f.Group("/api/v1"), api.Config{Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, Jobs: cfg.Jobs, Runtime: cfg.Runtime, Secrets: cfg.Secrets, Previews: cfg.Previews, AllowFileURLs: cfg.AllowFileURLs, Notifications: cfg.Notifications})

	// Everything below is the dashboard: sessions, then CSRF on unsafe methods.
	f.Use(h.loadSession, h.checkCSRF)
	f.Get("/", h.homeShow)
	f.Get("/setup", h.setupShow)
	f.Post("/setup", h.setupCreate)
	f.Get("/login", h.loginShow)
	f.Post("/login", h.loginCreate)
	f.Post("/logout", h.logoutCreate)
	f.Get("/invitations/:secret", h.invitationShow)
	f.Post("/invitations/:secret/accept", h.invitationAccept)

	f.Get("/account", h.requireUser, h.accountShow)
	f.Post("/account/password", h.requireUser, h.accountPassword)
	f.Post("/teams", h.requireUser, h.teamCreate)
	f.Post("/teams/:team/switch", h.requireUser, h.teamSwitch)

	f.Get("/applications", h.requireScope(auth.AppsRead), h.applicationList)
	f.Get("/search", h.requireScope(auth.AppsRead), h.searchShow)
	f.Post("/applications", h.requireScope(auth.AppsWrite), h.applicationCreate)
	f.Get("/applications/import", h.requireScope(auth.AppsRead), h.applicationImportShow)
	f.Post("/applications/import", h.requireScope(auth.AppsRead), h.applicationImport)
	f.Post("/applications/:app/delete", h.requireScope(auth.AppsDelete), h.applicationDelete)
	f.Post("/manifest/validate", h.requireScope(auth.AppsRead), h.manifestValidate)
	f.Post("/manifest/plan", h.requireScope(auth.AppsRead), h.manifestPlan)
	f.Post("/manifest", h.requireScope(auth.AppsWrite), h.manifestSave)
	f.Get("/applications/:app", h.requireScope(auth.AppsRead), h.applicationShow)
	f.Get("/applications/:app/manifest", h.requireScope(auth.AppsRead), h.manifestShow)
	f.Get("/applications/:app/deployments", h.requireScope(auth.AppsRead), h.deploymentList)
	f.Get("/applications/:app/deployments/:deployment", h.requireScope(auth.AppsRead), h.deploymentShow)
	f.Post("/applications/:app/deployments/:deployment/cancel", h.requireScope(auth.AppsDeploy), h.deploymentCancel)
	f.Post("/applications/:app/deployments/:deployment/retry", h.requireScope(auth.AppsDeploy), h.deploymentRetry)
	f.Post("/applications/:app/deployments/:deployment/restore", h.requireScope(auth.AppsDeploy), h.deploymentRestore)
	f.Get("/applications/:app/environments", h.requireScope(auth.AppsRead), h.environmentList)
	f.Post("/applications/:app/environments/:environment/deploy", h.requireScope(auth.AppsDeploy), h.environmentDeploy)
	f.Get("/applications/:app/environments/:environment/promote", h.requireScope(auth.AppsRead), h.environmentPromote)
	f.Post("/applications/:app/environments/:environment/promote", h.requireScope(auth.AppsDeploy), h.environmentPromote)
	f.Post("/applications/:app/environments/:environment/promote-from", h.requireScope(auth.AppsWrite), h.environmentPromoteFrom)
	f.Get("/applications/:app/events", h.requireScope(auth.AppsRead), h.eventList)
	f.Get("/applications/:app/previews", h.requireScope(auth.AppsRead), h.previewList)
	f.Post("/applications/:app/previews", h.requireScope(auth.AppsDeploy), h.previewCreate)
	f.Post("/applications/:app/previews/:slug/deploy", h.requireScope(auth.AppsDeploy), h.previewDeploy)
	f.Post("/applications/:app/previews/:slug/delete", h.requireScope(auth.AppsDelete), h.previewDelete)
	f.Get("/applications/:app/links", h.requireScope(auth.AppsRead), h.linkList)
	f.Post("/applications/:app/links/exports", h.requireScope(auth.AppsWrite), h.exportSet)
	f.Post("/applications/:app/links/exports/remove", h.requireScope(auth.AppsWrite), h.exportRemove)
	f.Post("/applications/:app/links/imports", h.requireScope(auth.AppsWrite), h.importSet)
	f.Post("/applications/:app/links/imports/remove", h.requireScope(auth.AppsWrite), h.importRemove)
	f.Post("/applications/:app/environments/:environment/branch", h.requireScope(auth.AppsWrite), h.environmentBranchUpdate)
	f.Post("/applications/:app/environments/:environment/delete", h.requireScope(auth.AppsDelete), h.environmentDelete)
	f.Post("/applications/:app/environments", h.requireScope(auth.AppsWrite), h.environmentCreate)
	f.Post("/applications/:app/environments/:environment/rename", h.requireScope(auth.AppsWrite), h.environmentRename)
	f.Get("/applications/:app/settings", h.requireScope(auth.AppsRead), h.applicationSettings)
	f.Post("/applications/:app/settings/rename", h.requireScope(auth.AppsWrite), h.applicationRename)
	f.Post("/applications/:app/settings/delete", h.requireScope(auth.AppsDelete), h.applicationDeleteConfirmed)
	f.Post("/applications/:app/variables", h.requireScope(auth.AppsWrite), h.variableSet)
	f.Post("/applications/:app/variables/unset", h.requireScope(auth.AppsWrite), h.variableUnset)
	f.Post("/applications/:app/services/:service/environment", h.requireScope(auth.AppsWrite), h.serviceEnvironmentEdit)
	f.Post("/applications/:app/environments/:environment/settings", h.requireScope(auth.AppsWrite), h.environmentSettingUpdate)
	f.Get("/applications/:app/environments/:environment/services/:service/logs", h.requireScope(auth.LogsRead), h.serviceLogShow)
	f.Get("/applications/:app/environments/:environment/services/:service/logs/download", h.requireScope(auth.LogsRead), h.serviceLogDownload)
	f.Get("/applications/:app/environments/:environment/services/:service/logs/stream", h.requireScope(auth.LogsRead), h.serviceLogStream)
	f.Post("/applications/:app/environments/:environment/services/:service/restart", h.requireScope(auth.AppsDeploy), h.serviceRestart)
	f.Post("/applications/:app/environments/:environment/services/:service/scale", h.requireScope(auth.AppsDeploy), h.serviceScale)
	f.Get("/applications/:app/environments/:environment/daytwo", h.requireScope(auth.AppsRead), h.environmentDayTwo)
	f.Post("/applications/:app/environments/:environment/daytwo/jobs/:job/run", h.requireScope(auth.AppsDeploy), h.environmentJobRun)
	f.Post("/applications/:app/environments/:environment/daytwo/backups", h.requireScope(auth.AppsDeploy), h.environmentBackupCreate)
	f.Post("/applications/:app/environments/:environment/daytwo/restores", h.requireScope(auth.AppsDeploy), h.environmentRestoreCreate)
	f.Get("/applications/:app/secrets", h.requireScope(auth.AppsRead), h.secretList)
	f.Post("/applications/:app/secrets", h.requireScope(auth.SecretsWrite), h.secretSet)
	f.Post("/applications/:app/secrets/:name/access", h.requireScope(auth.SecretsWrite), h.secretAccess)
	f.Post("/applications/:app/secrets/:name/delete", h.requireScope(auth.SecretsWrite), h.secretDelete)
	f.Post("/applications/:app/environments/:environment/generated-secrets/:name/regenerate", h.requireScope(auth.SecretsWrite), h.generatedSecretRegenerate)
	f.Post("/applications/:app/generated-secrets", h.requireScope(auth.AppsWrite), h.generatedSecretDeclare)
	f.Post("/applications/:app/generated-secrets/:name/remove", h.requireScope(auth.AppsWrite), h.generatedSecretUndeclare)

	f.Get("/events", h.requireScope(auth.AppsRead), h.teamEventList)
	f.Get("/quotas", h.requireTeam, h.teamQuotaShow)
	f.Get("/members", h.requireTeam, h.memberList)
	f.Post("/members/invitations", h.requireScope(auth.MembersManage), h.invitationCreate)
	f.Post("/members/invitations/:invitation/revoke", h.requireScope(auth.MembersManage), h.invitationRevoke)
	f.Post("/members/:user/role", h.requireScope(auth.MembersManage), h.memberUpdate)
	f.Post("/members/:user/remove", h.requireScope(auth.MembersManage), h.memberRemove)

	f.Get("/registry-credentials", h.requireScope(auth.AppsRead), h.registryCredentialList)
	f.Post("/registry-credentials", h.requireScope(auth.SecretsWrite), h.registryCredentialSet)
	f.Post("/registry-credentials/:host/delete", h.requireScope(auth.SecretsWrite), h.registryCredentialDelete)

	f.Get("/nodes", h.requireUser, h.nodeList)

	f.Get("/tokens", h.requireTeam, h.tokenList)
	f.Post("/tokens", h.requireScope(auth.TokensManage), h.tokenCreate)
	f.Post("/tokens/:token/revoke", h.requireScope(auth.TokensManage), h.tokenRevoke)
	registerGitHub(f, h, cfg.GitHub)
	registerUsage(f, h)
	registerNotifications(f, h)
	return f
}

// handler holds what every dashboard handler needs.
type handler struct {
	store    *store.Store
	log      *slog.Logger
	argon    auth.Argon2Params
	secure   bool
	limiter  Limiter
	now      func() time.Time
	jobs     JobInserter
	runtime  RuntimeReader // nil: pages show the manifest's replica counts only
	secrets  *secrets.Service
	logs     ServiceLogReader
	previews *service.Previews // nil: previews are listed and deleted, not created
	fileURLs bool              // [git] allow_file_urls
	public   string            // Config.PublicURL
	notify   *notify.Service   // nil: destinations are listed nowhere
	csp      string            // the Content-Security-Policy of every response

	dummyHash string
}

// handleError is the one place dashboard errors are logged and shown.
func (h *handler) handleError(c *fiber.Ctx, err error) error {
	status, code, msg := http.StatusInternalServerError, "internal", "Something went wrong on our side. Try again; if it persists, check the server log."
	var fe *fiber.Error
	var ce *codedError
	switch {
	case errors.As(err, &ce):
		status, code, msg = ce.status, ce.code, ce.msg
	case errors.Is(err, store.ErrNotFound):
		status, code, msg = http.StatusNotFound, "not_found", "There is nothing here, or you do not have access to it."
	case errors.As(err, &fe):
		status, code, msg = fe.Code, codeForStatus(fe.Code), fe.Message
		if fe.Code == http.StatusNotFound {
			msg = "There is nothing here, or you do not have access to it."
		}
	default:
		h.log.ErrorContext(c.UserContext(), "request failed", "method", c.Method(), "path", c.Path(), "err", err)
	}
	if isAPI(c) {
		return api.WriteError(c, status, code, msg, nil)
	}
	return h.renderError(c, status, code, msg)
}

// codedError is a refusal with its own code that handleError shows as is.
type codedError struct {
	status    int
	code, msg string
}

func (e *codedError) Error() string { return e.code + ": " + e.msg }

func codeForStatus(status int) string {
	switch status {
	case http.StatusNotFound:
		return "not_found"
	case http.StatusForbidden:
		return "permission_denied"
	case http.StatusRequestEntityTooLarge:
		return "body_too_large"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusTooManyRequests:
		return "rate_limited"
	case http.StatusBadRequest:
		return "bad_request"
	}
	return "error"
}

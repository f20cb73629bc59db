package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/secrets"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/authcache"
	"github.com/slipwayhq/slipway/store/changecache"
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
	// AuthCache answers session and token lookups between changes (serve
	// passes one it runs); nil reads Postgres on every request.
	AuthCache *authcache.Cache
	// TeamReads keeps what the applications list and the Overview read of
	// a team between changes to it: a store/changecache on
	// store.TeamDataChannel that serve runs; nil reads Postgres every time.
	TeamReads *changecache.Cache
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
	if cfg.AuthCache == nil {
		cfg.AuthCache = authcache.New(cfg.Store, cfg.Logger)
	}
	if cfg.TeamReads == nil {
		cfg.TeamReads = changecache.New(cfg.Store, store.TeamDataChannel, cfg.Logger)
	}
	if cfg.LoginLimiter == nil {
		cfg.LoginLimiter = NewMemoryLimiter(5, time.Minute, cfg.Now)
	}
	h := &handler{store: cfg.Store, log: cfg.Logger, argon: cfg.Argon2, secure: cfg.SecureCookies, limiter: cfg.LoginLimiter, now: cfg.Now, authCache: cfg.AuthCache, teamReads: cfg.TeamReads, jobs: cfg.Jobs, runtime: cfg.Runtime, secrets: cfg.Secrets, logs: cfg.Logs, previews: cfg.Previews, fileURLs: cfg.AllowFileURLs, public: cfg.PublicURL, notify: cfg.Notifications,
		manifests: newManifestSummaries(manifestSummaryCacheSize)}
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
	h.routes(f, cfg)
	return f
}

// handler holds what every dashboard handler needs.
type handler struct {
	store   *store.Store
	log     *slog.Logger
	argon   auth.Argon2Params
	secure  bool
	limiter Limiter
	now     func() time.Time
	// authCache answers the session lookup (Config.AuthCache).
	authCache *authcache.Cache
	// teamReads keeps the busiest pages' reads (Config.TeamReads,
	// team_reads.go).
	teamReads *changecache.Cache
	jobs      JobInserter
	runtime   RuntimeReader // nil: pages show the manifest's replica counts only
	secrets   *secrets.Service
	logs      ServiceLogReader
	previews  *service.Previews // nil: previews are listed and deleted, not created
	fileURLs  bool              // [git] allow_file_urls
	public    string            // Config.PublicURL
	notify    *notify.Service   // nil: destinations are listed nowhere
	csp       string            // the Content-Security-Policy of every response
	// manifests remembers what the pages show of deployments' rendered
	// manifests.
	manifests *manifestSummaries

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
	if isFragment(c) && c.Method() != http.MethodGet {
		return h.renderFragmentError(c, status, code, msg)
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

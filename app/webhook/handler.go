package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/metrics"
	"github.com/slipwayhq/slipway/store"
)

// MaxBody is the largest payload accepted; GitHub caps its own at 25 MB,
// but the events Slipway subscribes to are far smaller, and reading more
// before the signature is checked is an amplification risk.
const MaxBody = 1 << 20

// Inserter inserts River jobs in a transaction (*jobs.Client does).
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Config is what the handler needs.
type Config struct {
	Store *store.Store
	Jobs  Inserter
	// Secret returns the webhook secret (from SLIPWAY_GITHUB_WEBHOOK_SECRET_FILE
	// or the App stored by the manifest flow). An error answers 503: the
	// delivery is retried by GitHub, not lost.
	Secret func(ctx context.Context) ([]byte, error)
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Metrics counts deliveries by event and outcome; nil records nothing.
	Metrics *metrics.Registry
}

// StaticSecret is a Config.Secret for a secret known at start.
func StaticSecret(secret []byte) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) { return secret, nil }
}

type handler struct {
	cfg Config
	log *slog.Logger
}

// New returns the intake handler.
func New(cfg Config) http.Handler {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &handler{cfg: cfg, log: log}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Until the signature checks out the event header is the sender's
	// word: the delivery is counted as "unverified".
	label, outcome := "unverified", "rejected"
	defer func() { h.cfg.Metrics.ObserveWebhookDelivery(label, outcome) }()
	ctx := r.Context()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "webhooks are POSTed")
		return
	}
	if r.ContentLength > MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("the body exceeds %d bytes", MaxBody))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "body_unreadable", "the body could not be read")
		return
	}
	if len(body) > MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", fmt.Sprintf("the body exceeds %d bytes", MaxBody))
		return
	}
	secret, err := h.cfg.Secret(ctx)
	if err != nil || len(secret) == 0 {
		h.log.ErrorContext(ctx, "github webhook secret unavailable", "error", err)
		outcome = "failed"
		writeError(w, http.StatusServiceUnavailable, "webhook_secret_unavailable", "the webhook secret is not configured")
		return
	}
	// Nothing of the payload, not even its headers' meaning, is trusted
	// before this check.
	if !VerifySignature(secret, body, r.Header.Get("X-Hub-Signature-256")) {
		writeError(w, http.StatusUnauthorized, "signature_invalid", "X-Hub-Signature-256 does not match the body")
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	label = eventLabel(event)
	if event == "" || delivery == "" || len(delivery) > 100 || len(event) > 100 || hasControl(event, delivery) {
		outcome = "invalid"
		writeError(w, http.StatusBadRequest, "headers_missing", "X-GitHub-Event and X-GitHub-Delivery are required")
		return
	}
	d, job, err := parse(event, delivery, body)
	if err != nil {
		outcome = "invalid"
		writeError(w, http.StatusBadRequest, "payload_invalid", err.Error())
		return
	}
	created := false
	err = h.cfg.Store.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if created, err = tx.RecordGitHubDelivery(ctx, d); err != nil || !created {
			return err
		}
		if job == nil {
			return tx.MarkGitHubDeliveryProcessed(ctx, delivery, h.cfg.Now())
		}
		_, err = h.cfg.Jobs.InsertTx(ctx, tx.Tx(), job, nil)
		return err
	})
	if err != nil {
		h.log.ErrorContext(ctx, "record github delivery", "delivery_id", delivery, "event", event, "error", err)
		outcome = "failed"
		writeError(w, http.StatusInternalServerError, "delivery_not_recorded", "the delivery could not be recorded; GitHub may redeliver it")
		return
	}
	if !created {
		outcome = "duplicate"
		writeJSON(w, http.StatusOK, map[string]string{"status": "duplicate", "delivery_id": delivery})
		return
	}
	outcome = "accepted"
	if job == nil {
		// Recorded, nothing to do (an event Slipway does not act on).
		outcome = "ignored"
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted", "delivery_id": delivery})
}

// knownEvents are the event names counted under their own label; any
// other verified event is counted as "other", so a label set stays small.
var knownEvents = map[string]bool{
	"push": true, "pull_request": true, "installation": true,
	"installation_repositories": true, "ping": true,
}

func eventLabel(event string) string {
	if knownEvents[event] {
		return event
	}
	return "other"
}

// payload is the part of GitHub's events the intake reads.
type payload struct {
	Action       string `json:"action"`
	Ref          string `json:"ref"`
	Installation *struct {
		ID      int64 `json:"id"`
		Account *struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"account"`
	} `json:"installation"`
	Repository *struct {
		ID       int64  `json:"id"`
		FullName string `json:"full_name"`
	} `json:"repository"`
	PullRequest *struct {
		Number int `json:"number"`
		User   struct {
			Login string `json:"login"`
		} `json:"user"`
		Head struct {
			Ref  string `json:"ref"`
			SHA  string `json:"sha"`
			Repo *struct {
				ID int64 `json:"id"`
			} `json:"repo"`
		} `json:"head"`
	} `json:"pull_request"`
	RepositoriesRemoved []struct {
		ID int64 `json:"id"`
	} `json:"repositories_removed"`
}

// parse turns a verified payload into the delivery row and the job to
// insert (nil for events Slipway records but does not act on).
func parse(event, deliveryID string, body []byte) (store.GitHubDelivery, river.JobArgs, error) {
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return store.GitHubDelivery{}, nil, fmt.Errorf("the payload is not JSON: %w", err)
	}
	d := store.GitHubDelivery{DeliveryID: deliveryID, Event: event, Action: p.Action}
	if p.Installation != nil {
		d.InstallationID = p.Installation.ID
	}
	var s jobs.GitHubDeliverySummary
	if p.Repository != nil {
		s.RepositoryID, s.FullName = p.Repository.ID, p.Repository.FullName
	}
	var job river.JobArgs
	switch event {
	case "push":
		if branch, ok := strings.CutPrefix(p.Ref, "refs/heads/"); ok && d.InstallationID != 0 {
			s.Branch = branch
			job = jobs.GitHubPushArgs{DeliveryID: deliveryID}
		}
	case "pull_request":
		switch p.Action {
		case "opened", "reopened", "synchronize", "closed":
			if p.PullRequest == nil || d.InstallationID == 0 {
				return d, nil, errors.New("pull_request without pull_request or installation")
			}
			pr := p.PullRequest
			s.Number, s.HeadBranch, s.HeadSHA, s.AuthorLogin = pr.Number, pr.Head.Ref, pr.Head.SHA, pr.User.Login
			if pr.Head.Repo != nil {
				s.HeadRepositoryID = pr.Head.Repo.ID
			}
			job = jobs.GitHubPullRequestArgs{DeliveryID: deliveryID}
		}
	case "installation", "installation_repositories":
		if d.InstallationID == 0 {
			return d, nil, errors.New(event + " without installation")
		}
		if a := p.Installation.Account; a != nil {
			s.AccountLogin, s.AccountType = a.Login, a.Type
		}
		for _, r := range p.RepositoriesRemoved {
			s.RepositoriesRemoved = append(s.RepositoriesRemoved, r.ID)
		}
		job = jobs.GitHubInstallationArgs{DeliveryID: deliveryID}
	}
	// Postgres refuses NUL in text and jsonb (\u0000), and no branch,
	// login or repository name holds a control character: such a payload
	// is refused whole, before anything is stored.
	if hasControl(d.Action, s.FullName, s.Branch, s.HeadBranch, s.HeadSHA, s.AuthorLogin, s.AccountLogin, s.AccountType) {
		return d, nil, errors.New("the payload holds control characters (such as \\u0000) in a name, branch or action")
	}
	summary, err := json.Marshal(s)
	if err != nil {
		return d, nil, err
	}
	d.Summary = summary
	return d, job, nil
}

// hasControl reports whether any of ss holds a control character.
func hasControl(ss ...string) bool {
	for _, s := range ss {
		if strings.ContainsFunc(s, unicode.IsControl) {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]string{"code": code, "message": message})
}

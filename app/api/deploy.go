package api

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/store"
)

// JobInserter is the part of a River client the deploy handlers use: they
// insert jobs in the transaction that records the deployment.
type JobInserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// RuntimeReader reads what runs in Docker for an environment. It is
// read-only on purpose: the API shows the runtime, only the worker changes it.
type RuntimeReader interface {
	ServiceStatus(ctx context.Context, envID string) ([]ServiceStatus, error)
}

// ErrRuntimeUnavailable is what a RuntimeReader wraps when Docker cannot
// be reached; the status endpoint then answers docker_unavailable in its
// body instead of failing.
var ErrRuntimeUnavailable = errors.New("docker_unavailable")

// registerDeploy mounts the manifest, environment and deployment routes.
func (h *handler) registerDeploy(r fiber.Router) {
	read, write, deploy := h.requireScope(auth.AppsRead), h.requireScope(auth.AppsWrite), h.requireScope(auth.AppsDeploy)
	r.Post("/applications/apply", write, h.manifestApply)
	r.Post("/applications/plan", read, h.manifestPlan)
	r.Get("/applications/:app/manifest", read, h.manifestShow)
	r.Get("/applications/:app/revisions", read, h.revisionList)
	r.Get("/applications/:app/environments", read, h.environmentList)
	r.Post("/applications/:app/environments/:env/deploy", deploy, h.environmentDeploy)
	r.Get("/applications/:app/deployments", read, h.deploymentList)
	r.Get("/applications/:app/status", read, h.applicationStatus)
	r.Get("/deployments/:deployment", read, h.deploymentShow)
	r.Post("/deployments/:deployment/cancel", deploy, h.deploymentCancel)
	r.Post("/deployments/:deployment/restore", deploy, h.deploymentRestore)
}

// enqueue inserts a job through the River client in the store's
// transaction, so the job exists exactly when the deployment row does.
func (h *handler) enqueue(ctx context.Context, tx *store.Store, args river.JobArgs) error {
	if h.jobs == nil {
		return errors.New("no job client configured: deployments cannot be queued")
	}
	_, err := h.jobs.InsertTx(ctx, tx.Tx(), args, nil)
	return err
}

// application resolves the :app parameter, an id or a name, within the
// caller's team; another team's application is not found.
func (h *handler) application(c *fiber.Ctx) (store.Application, error) {
	return h.applicationByRef(c, c.Params("app"))
}

// applicationByRef is the caller's application with id or name ref.
func (h *handler) applicationByRef(c *fiber.Ctx, ref string) (store.Application, error) {
	ctx, team := c.UserContext(), callerOf(c).token.TeamID
	a, err := h.store.GetApplication(ctx, team, ref)
	if errors.Is(err, store.ErrNotFound) {
		return h.store.GetApplicationByName(ctx, team, ref)
	}
	return a, err
}

// FieldError is one manifest problem: where, what and, for TOML, the line
// and column (0 when unknown).
type FieldError struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

func newFieldErrors(errs manifest.Errors) []FieldError {
	out := make([]FieldError, len(errs))
	for i, e := range errs {
		out[i] = FieldError{Path: e.Path, Code: e.Code, Message: e.Message, Line: e.Line, Column: e.Column}
	}
	return out
}

// Step is one step of a deployment's progress.
type Step struct {
	Name       string            `json:"name"`
	State      string            `json:"state"`
	Message    string            `json:"message,omitempty"`
	Output     string            `json:"output,omitempty"`
	Truncated  bool              `json:"truncated,omitempty"`
	Detail     map[string]string `json:"detail,omitempty"`
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
}

// Event is one audit event about a deployment.
type Event struct {
	ID        int64           `json:"id"`
	Actor     string          `json:"actor"`
	Verb      string          `json:"verb"`
	Details   json.RawMessage `json:"details"`
	CreatedAt time.Time       `json:"created_at"`
}

// Deployment is a deployment on the wire. The rendered manifest and the
// variables are left out: they may hold values the API never shows.
type Deployment struct {
	ID            string `json:"id"`
	ApplicationID string `json:"application_id"`
	EnvironmentID string `json:"environment_id"`
	Environment   string `json:"environment,omitempty"`
	State         string `json:"state"`
	Terminal      bool   `json:"terminal"`
	Revision      int64  `json:"revision"`
	// SpecHash is the specification hash of what the deployment runs
	// (manifest.SpecHash); absent until captured.
	SpecHash     string     `json:"spec_hash,omitempty"`
	Origin       string     `json:"origin"`
	RestoredFrom string     `json:"restored_from,omitempty"`
	PromotedFrom string     `json:"promoted_from,omitempty"`
	Actor        string     `json:"actor"`
	ErrorCode    string     `json:"error_code,omitempty"`
	ErrorMessage string     `json:"error_message,omitempty"`
	Steps        []Step     `json:"steps"`
	Events       []Event    `json:"events,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	FinishedAt   *time.Time `json:"finished_at,omitempty"`
}

// newDeployment converts a deployment; envName may be "" when unknown.
func newDeployment(d store.Deployment, envName string) Deployment {
	out := Deployment{
		ID: d.ID, ApplicationID: d.ApplicationID, EnvironmentID: d.EnvironmentID, Environment: envName,
		State: string(d.State), Terminal: d.State.Terminal(), Revision: d.Revision, SpecHash: d.SpecHash, Origin: string(d.Origin),
		RestoredFrom: d.RestoredFrom, PromotedFrom: d.PromotedFrom, Actor: d.Actor,
		ErrorCode: d.ErrorCode, ErrorMessage: d.ErrorMessage, Steps: []Step{},
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, StartedAt: d.StartedAt, FinishedAt: d.FinishedAt,
	}
	// A steps column the worker wrote in an older shape shows no steps
	// rather than failing the whole answer.
	if p, err := pipeline.ParseProgress(d.Steps); err == nil {
		for _, s := range p.Steps {
			out.Steps = append(out.Steps, Step(s))
		}
	}
	return out
}

// DeploymentList is GET /applications/{app}/deployments.
type DeploymentList struct {
	Deployments []Deployment `json:"deployments"`
}

// environmentNames maps the application's environment ids to names.
func (h *handler) environmentNames(ctx context.Context, teamID, appID string) (map[string]string, error) {
	envs, err := h.store.ListEnvironments(ctx, teamID, appID)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(envs))
	for _, e := range envs {
		names[e.ID] = e.Name
	}
	return names, nil
}

// writeDeployment answers one deployment with status, naming its environment.
func (h *handler) writeDeployment(c *fiber.Ctx, status int, d store.Deployment) error {
	name := ""
	if env, err := h.store.GetEnvironment(c.UserContext(), d.TeamID, d.EnvironmentID); err == nil {
		name = env.Name
	}
	return c.Status(status).JSON(newDeployment(d, name))
}

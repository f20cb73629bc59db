package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// GitHub rows: the App's sealed credentials, installations bound to teams,
// repository links, webhook deliveries, used install-state nonces and the
// per-application pull request bookkeeping (migration 0003).
//
// Installation-keyed methods (UpsertGitHubInstallation,
// GitHubInstallationByID, SetGitHubInstallationSuspended,
// DeleteGitHubInstallation, UnlinkGitHubRepositories) span teams: they are
// for webhook jobs, which learn the team from the installation, exactly as
// AuthenticateAPIToken learns it from the token.

// ErrInstallStateUsed is returned when an install state's nonce was used
// already: a state binds at most one installation.
var ErrInstallStateUsed = errors.New("install_state_used")

// GitHubApp is the GitHub App registered for this Slipway installation.
// The secrets are sealed (encrypted) by the caller; the store never sees
// them in clear.
type GitHubApp struct {
	AppID               int64
	Slug                string
	Name                string
	ClientID            string
	HTMLURL             string
	PrivateKeySealed    []byte
	PrivateKeyKeyID     string
	WebhookSecretSealed []byte
	WebhookSecretKeyID  string
	ClientSecretSealed  []byte
	ClientSecretKeyID   string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

const githubAppColumns = `app_id, slug, name, client_id, html_url, private_key_sealed, private_key_key_id,
	webhook_secret_sealed, webhook_secret_key_id, client_secret_sealed, client_secret_key_id, created_at, updated_at`

func scanGitHubApp(row pgx.Row) (GitHubApp, error) {
	var a GitHubApp
	err := row.Scan(&a.AppID, &a.Slug, &a.Name, &a.ClientID, &a.HTMLURL, &a.PrivateKeySealed, &a.PrivateKeyKeyID,
		&a.WebhookSecretSealed, &a.WebhookSecretKeyID, &a.ClientSecretSealed, &a.ClientSecretKeyID, &a.CreatedAt, &a.UpdatedAt)
	return a, err
}

// SaveGitHubApp stores the App's credentials, replacing those of the same
// app id. It is installation-wide, not team-scoped: only an installation
// owner registers the App.
func (s *Store) SaveGitHubApp(ctx context.Context, a GitHubApp) (GitHubApp, error) {
	out, err := scanGitHubApp(s.db.QueryRow(ctx, `
		INSERT INTO github_apps (app_id, slug, name, client_id, html_url, private_key_sealed, private_key_key_id,
			webhook_secret_sealed, webhook_secret_key_id, client_secret_sealed, client_secret_key_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (app_id) DO UPDATE SET slug = EXCLUDED.slug, name = EXCLUDED.name,
			client_id = EXCLUDED.client_id, html_url = EXCLUDED.html_url,
			private_key_sealed = EXCLUDED.private_key_sealed, private_key_key_id = EXCLUDED.private_key_key_id,
			webhook_secret_sealed = EXCLUDED.webhook_secret_sealed, webhook_secret_key_id = EXCLUDED.webhook_secret_key_id,
			client_secret_sealed = EXCLUDED.client_secret_sealed, client_secret_key_id = EXCLUDED.client_secret_key_id,
			updated_at = now()
		RETURNING `+githubAppColumns,
		a.AppID, a.Slug, a.Name, a.ClientID, a.HTMLURL, a.PrivateKeySealed, a.PrivateKeyKeyID,
		a.WebhookSecretSealed, a.WebhookSecretKeyID, a.ClientSecretSealed, a.ClientSecretKeyID))
	return out, wrap("save github app", err)
}

// GetGitHubApp returns the most recently saved App.
func (s *Store) GetGitHubApp(ctx context.Context) (GitHubApp, error) {
	a, err := scanGitHubApp(s.db.QueryRow(ctx, `
		SELECT `+githubAppColumns+` FROM github_apps ORDER BY updated_at DESC, app_id LIMIT 1`))
	return a, wrap("get github app", err)
}

// GitHubInstallation is an installation of the App on a GitHub account.
// TeamID is empty until the setup callback binds it.
type GitHubInstallation struct {
	InstallationID int64
	TeamID         string
	AccountLogin   string
	AccountType    string // "User" or "Organization"
	BoundBy        string
	BoundAt        *time.Time
	SuspendedAt    *time.Time
	DeletedAt      *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Active reports whether the installation is bound, not suspended and not
// uninstalled: only then do its webhooks act on anything.
func (i GitHubInstallation) Active() bool {
	return i.TeamID != "" && i.SuspendedAt == nil && i.DeletedAt == nil
}

const githubInstallationColumns = `installation_id, coalesce(team_id, ''), account_login, account_type,
	coalesce(bound_by, ''), bound_at, suspended_at, deleted_at, created_at, updated_at`

func scanGitHubInstallation(row pgx.Row) (GitHubInstallation, error) {
	var i GitHubInstallation
	err := row.Scan(&i.InstallationID, &i.TeamID, &i.AccountLogin, &i.AccountType, &i.BoundBy, &i.BoundAt,
		&i.SuspendedAt, &i.DeletedAt, &i.CreatedAt, &i.UpdatedAt)
	return i, err
}

// UpsertGitHubInstallation records an installation GitHub told us about
// (installation webhook), keeping any team binding. A reinstalled
// (previously deleted) id is live again but stays unbound.
func (s *Store) UpsertGitHubInstallation(ctx context.Context, installationID int64, accountLogin, accountType string) (GitHubInstallation, error) {
	i, err := scanGitHubInstallation(s.db.QueryRow(ctx, `
		INSERT INTO github_installations (installation_id, account_login, account_type)
		VALUES ($1, $2, $3)
		ON CONFLICT (installation_id) DO UPDATE SET
			account_login = CASE WHEN EXCLUDED.account_login = '' THEN github_installations.account_login ELSE EXCLUDED.account_login END,
			account_type = CASE WHEN EXCLUDED.account_type = '' THEN github_installations.account_type ELSE EXCLUDED.account_type END,
			team_id = CASE WHEN github_installations.deleted_at IS NULL THEN github_installations.team_id END,
			bound_at = CASE WHEN github_installations.deleted_at IS NULL THEN github_installations.bound_at END,
			deleted_at = NULL,
			updated_at = now()
		RETURNING `+githubInstallationColumns, installationID, accountLogin, accountType))
	return i, wrap("upsert github installation", err)
}

// BindGitHubInstallation binds the installation to the team (creating its
// row when the setup callback arrives before the webhook). An installation
// bound to another team is a *ConflictError (installation_bound_elsewhere);
// an uninstalled one is ErrNotFound.
func (s *Store) BindGitHubInstallation(ctx context.Context, teamID string, installationID int64, userID string) (GitHubInstallation, error) {
	const op = "bind github installation"
	i, err := scanGitHubInstallation(s.db.QueryRow(ctx, `
		INSERT INTO github_installations (installation_id, team_id, bound_by, bound_at)
		VALUES ($2, $1, $3, now())
		ON CONFLICT (installation_id) DO UPDATE SET team_id = $1, bound_by = $3, bound_at = now(), updated_at = now()
		WHERE github_installations.deleted_at IS NULL
		  AND (github_installations.team_id IS NULL OR github_installations.team_id = $1)
		RETURNING `+githubInstallationColumns, teamID, installationID, userID))
	if !errors.Is(err, pgx.ErrNoRows) {
		return i, wrap(op, err)
	}
	// The row exists but the update was refused: tell why.
	cur, gerr := s.GitHubInstallationByID(ctx, installationID)
	if gerr != nil {
		return GitHubInstallation{}, fmt.Errorf("%s: %w", op, gerr)
	}
	if cur.DeletedAt != nil {
		return GitHubInstallation{}, fmt.Errorf("%s: installation %d was uninstalled: %w", op, installationID, ErrNotFound)
	}
	return GitHubInstallation{}, fmt.Errorf("%s: %w", op, &ConflictError{
		Constraint: "github_installations_pkey", Field: "installation_id", Code: "installation_bound_elsewhere"})
}

// GetGitHubInstallation returns one of the team's installations.
func (s *Store) GetGitHubInstallation(ctx context.Context, teamID string, installationID int64) (GitHubInstallation, error) {
	i, err := scanGitHubInstallation(s.db.QueryRow(ctx, `
		SELECT `+githubInstallationColumns+` FROM github_installations
		WHERE team_id = $1 AND installation_id = $2`, teamID, installationID))
	return i, wrap("get github installation", err)
}

// ListGitHubInstallations returns the team's installations that are not
// uninstalled.
func (s *Store) ListGitHubInstallations(ctx context.Context, teamID string) ([]GitHubInstallation, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+githubInstallationColumns+` FROM github_installations
		WHERE team_id = $1 AND deleted_at IS NULL
		ORDER BY account_login, installation_id`, teamID)
	if err != nil {
		return nil, wrap("list github installations", err)
	}
	is, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (GitHubInstallation, error) { return scanGitHubInstallation(r) })
	return is, wrap("list github installations", err)
}

// GitHubInstallationByID returns an installation whatever its team; webhook
// jobs use it to find the team an event belongs to.
func (s *Store) GitHubInstallationByID(ctx context.Context, installationID int64) (GitHubInstallation, error) {
	i, err := scanGitHubInstallation(s.db.QueryRow(ctx, `
		SELECT `+githubInstallationColumns+` FROM github_installations WHERE installation_id = $1`, installationID))
	return i, wrap("get github installation by id", err)
}

// SetGitHubInstallationSuspended records a suspend or unsuspend event.
func (s *Store) SetGitHubInstallationSuspended(ctx context.Context, installationID int64, suspended bool) error {
	return s.execOne(ctx, "set github installation suspended", `
		UPDATE github_installations
		SET suspended_at = CASE WHEN $2 THEN coalesce(suspended_at, now()) END, updated_at = now()
		WHERE installation_id = $1`, installationID, suspended)
}

// DeleteGitHubInstallation records an uninstall: the row stays for the
// audit trail, marked deleted, and every repository link through it goes,
// so no application keeps following a repository it can no longer read.
func (s *Store) DeleteGitHubInstallation(ctx context.Context, installationID int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.execOne(ctx, "delete github installation", `
			UPDATE github_installations SET deleted_at = coalesce(deleted_at, now()), updated_at = now()
			WHERE installation_id = $1`, installationID); err != nil {
			return err
		}
		_, err := tx.db.Exec(ctx, `DELETE FROM github_repository_links WHERE installation_id = $1`, installationID)
		return wrap("delete github installation: links", err)
	})
}

// GitHubRepositoryLink connects an application to a repository reachable
// through one of the team's installations.
type GitHubRepositoryLink struct {
	TeamID         string
	ApplicationID  string
	InstallationID int64
	RepositoryID   int64
	FullName       string // owner/name
	CreatedAt      time.Time
}

const githubLinkColumns = `team_id, application_id, installation_id, repository_id, full_name, created_at`

func scanGitHubLink(row pgx.Row) (GitHubRepositoryLink, error) {
	var l GitHubRepositoryLink
	err := row.Scan(&l.TeamID, &l.ApplicationID, &l.InstallationID, &l.RepositoryID, &l.FullName, &l.CreatedAt)
	return l, err
}

// LinkGitHubRepository connects the application to a repository, replacing
// its previous link. The installation must be bound to the team and live
// (ErrNotFound otherwise), so a team cannot reach another team's installation.
func (s *Store) LinkGitHubRepository(ctx context.Context, teamID, applicationID string, installationID, repositoryID int64, fullName string) (GitHubRepositoryLink, error) {
	l, err := scanGitHubLink(s.db.QueryRow(ctx, `
		INSERT INTO github_repository_links (team_id, application_id, installation_id, repository_id, full_name)
		SELECT $1, $2, i.installation_id, $4, $5 FROM github_installations i
		WHERE i.team_id = $1 AND i.installation_id = $3 AND i.deleted_at IS NULL
		ON CONFLICT (team_id, application_id) DO UPDATE SET installation_id = EXCLUDED.installation_id,
			repository_id = EXCLUDED.repository_id, full_name = EXCLUDED.full_name, created_at = now()
		RETURNING `+githubLinkColumns, teamID, applicationID, installationID, repositoryID, fullName))
	return l, wrap("link github repository", err)
}

// GetGitHubRepositoryLink returns the application's repository link.
func (s *Store) GetGitHubRepositoryLink(ctx context.Context, teamID, applicationID string) (GitHubRepositoryLink, error) {
	l, err := scanGitHubLink(s.db.QueryRow(ctx, `
		SELECT `+githubLinkColumns+` FROM github_repository_links
		WHERE team_id = $1 AND application_id = $2`, teamID, applicationID))
	return l, wrap("get github repository link", err)
}

// ListGitHubRepositoryLinks returns the links of the team's (live)
// applications to the repository, ordered by application id.
func (s *Store) ListGitHubRepositoryLinks(ctx context.Context, teamID string, repositoryID int64) ([]GitHubRepositoryLink, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+prefixColumns("l", githubLinkColumns)+` FROM github_repository_links l
		JOIN applications a ON a.team_id = l.team_id AND a.id = l.application_id
		WHERE l.team_id = $1 AND l.repository_id = $2 AND a.deleted_at IS NULL
		ORDER BY l.application_id`, teamID, repositoryID)
	if err != nil {
		return nil, wrap("list github repository links", err)
	}
	ls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (GitHubRepositoryLink, error) { return scanGitHubLink(r) })
	return ls, wrap("list github repository links", err)
}

// UnlinkGitHubRepository disconnects the application from its repository.
func (s *Store) UnlinkGitHubRepository(ctx context.Context, teamID, applicationID string) error {
	return s.execOne(ctx, "unlink github repository", `
		DELETE FROM github_repository_links WHERE team_id = $1 AND application_id = $2`, teamID, applicationID)
}

// UnlinkGitHubRepositories drops the links of repositories removed from an
// installation and returns how many went.
func (s *Store) UnlinkGitHubRepositories(ctx context.Context, installationID int64, repositoryIDs []int64) (int64, error) {
	tag, err := s.db.Exec(ctx, `
		DELETE FROM github_repository_links WHERE installation_id = $1 AND repository_id = ANY($2)`,
		installationID, repositoryIDs)
	return tag.RowsAffected(), wrap("unlink github repositories", err)
}

// GitHubDelivery is one received webhook delivery.
type GitHubDelivery struct {
	DeliveryID     string
	Event          string
	Action         string
	InstallationID int64
	Summary        json.RawMessage // the fields its job reads, a JSON object
	ReceivedAt     time.Time
	ProcessedAt    *time.Time
}

const githubDeliveryColumns = `delivery_id, event, action, coalesce(installation_id, 0), summary, received_at, processed_at`

func scanGitHubDelivery(row pgx.Row) (GitHubDelivery, error) {
	var d GitHubDelivery
	err := row.Scan(&d.DeliveryID, &d.Event, &d.Action, &d.InstallationID, &d.Summary, &d.ReceivedAt, &d.ProcessedAt)
	return d, err
}

// RecordGitHubDelivery records a delivery and reports whether it is new;
// a delivery id seen before (GitHub's redelivery, a replay) records
// nothing and returns false.
func (s *Store) RecordGitHubDelivery(ctx context.Context, d GitHubDelivery) (bool, error) {
	summary := d.Summary
	if len(summary) == 0 {
		summary = json.RawMessage("{}")
	}
	var installationID *int64
	if d.InstallationID != 0 {
		installationID = &d.InstallationID
	}
	tag, err := s.db.Exec(ctx, `
		INSERT INTO github_webhook_deliveries (delivery_id, event, action, installation_id, summary)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (delivery_id) DO NOTHING`, d.DeliveryID, d.Event, d.Action, installationID, summary)
	if err != nil {
		return false, wrap("record github delivery", err)
	}
	return tag.RowsAffected() == 1, nil
}

// GetGitHubDelivery returns a recorded delivery.
func (s *Store) GetGitHubDelivery(ctx context.Context, deliveryID string) (GitHubDelivery, error) {
	d, err := scanGitHubDelivery(s.db.QueryRow(ctx, `
		SELECT `+githubDeliveryColumns+` FROM github_webhook_deliveries WHERE delivery_id = $1`, deliveryID))
	return d, wrap("get github delivery", err)
}

// MarkGitHubDeliveryProcessed records when the delivery's job finished.
func (s *Store) MarkGitHubDeliveryProcessed(ctx context.Context, deliveryID string, at time.Time) error {
	return s.execOne(ctx, "mark github delivery processed", `
		UPDATE github_webhook_deliveries SET processed_at = $2 WHERE delivery_id = $1`, deliveryID, at)
}

// PruneGitHubDeliveries deletes deliveries of every team received before
// cutoff (retention) and returns how many.
func (s *Store) PruneGitHubDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM github_webhook_deliveries WHERE received_at < $1`, cutoff)
	return tag.RowsAffected(), wrap("prune github deliveries", err)
}

// UseGitHubInstallState records the nonce of a verified install state; a
// nonce used before returns ErrInstallStateUsed. Call it in the
// transaction that binds the installation.
func (s *Store) UseGitHubInstallState(ctx context.Context, teamID string, nonce []byte, userID string, expiresAt time.Time) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO github_install_states (team_id, nonce, user_id, expires_at) VALUES ($1, $2, $3, $4)`,
		teamID, nonce, userID, expiresAt)
	var ce *ConflictError
	if errors.As(mapError(err), &ce) {
		return fmt.Errorf("use github install state: %w", ErrInstallStateUsed)
	}
	return wrap("use github install state", err)
}

// PruneGitHubInstallStates deletes nonces of states that expired before
// now: an expired state is refused before its nonce is looked at.
func (s *Store) PruneGitHubInstallStates(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM github_install_states WHERE expires_at < $1`, now)
	return tag.RowsAffected(), wrap("prune github install states", err)
}

// Pull request approval states.
const (
	ApprovalAutomatic = "automatic"
	ApprovalPending   = "pending"
	ApprovalApproved  = "approved"
)

// GitHubPullRequest is one application's view of one pull request.
type GitHubPullRequest struct {
	ID             string
	TeamID         string
	ApplicationID  string
	InstallationID int64
	RepositoryID   int64
	FullName       string
	Number         int
	HeadBranch     string
	HeadSHA        string
	AuthorLogin    string
	FromFork       bool
	Approval       string // ApprovalAutomatic, ApprovalPending or ApprovalApproved
	ApprovedBy     string
	State          string // "open" or "closed"
	// Status is what the comment shows: approval_required, queued,
	// building, deploying, ready, failed or removed.
	Status       string
	DeploymentID string
	CommentID    int64 // 0 until the comment exists
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// GitHubPullRequestParams are the fields an event sets on a pull request.
type GitHubPullRequestParams struct {
	ApplicationID  string
	InstallationID int64
	RepositoryID   int64
	FullName       string
	Number         int
	HeadBranch     string
	HeadSHA        string
	AuthorLogin    string
	FromFork       bool
	// Approval is what the event decided; an approval a member gave is
	// kept only while the head commit is the one approved, so new commits
	// pushed to a fork need a new approval.
	Approval string
	Status   string
}

// GitHubPullRequestUpdate changes a pull request row; nil fields are kept.
type GitHubPullRequestUpdate struct {
	State        *string
	Status       *string
	DeploymentID *string
	CommentID    *int64
}

const githubPullRequestColumns = `id, team_id, application_id, installation_id, repository_id, full_name, number,
	head_branch, head_sha, author_login, from_fork, approval, coalesce(approved_by, ''), state, status,
	deployment_id, comment_id, created_at, updated_at`

func scanGitHubPullRequest(row pgx.Row) (GitHubPullRequest, error) {
	var p GitHubPullRequest
	err := row.Scan(&p.ID, &p.TeamID, &p.ApplicationID, &p.InstallationID, &p.RepositoryID, &p.FullName, &p.Number,
		&p.HeadBranch, &p.HeadSHA, &p.AuthorLogin, &p.FromFork, &p.Approval, &p.ApprovedBy, &p.State, &p.Status,
		&p.DeploymentID, &p.CommentID, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// UpsertGitHubPullRequest records an opened, reopened or synchronized pull
// request for one application; the comment id survives every update.
func (s *Store) UpsertGitHubPullRequest(ctx context.Context, teamID string, p GitHubPullRequestParams) (GitHubPullRequest, error) {
	out, err := scanGitHubPullRequest(s.db.QueryRow(ctx, `
		INSERT INTO github_pull_requests (id, team_id, application_id, installation_id, repository_id, full_name,
			number, head_branch, head_sha, author_login, from_fork, approval, status)
		VALUES ($2, $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (team_id, application_id, repository_id, number) DO UPDATE SET
			installation_id = EXCLUDED.installation_id, full_name = EXCLUDED.full_name,
			head_branch = EXCLUDED.head_branch, head_sha = EXCLUDED.head_sha,
			author_login = EXCLUDED.author_login, from_fork = EXCLUDED.from_fork,
			approval = CASE WHEN github_pull_requests.approval = 'approved' AND github_pull_requests.head_sha = EXCLUDED.head_sha
				THEN 'approved' ELSE EXCLUDED.approval END,
			status = EXCLUDED.status, state = 'open', updated_at = now()
		RETURNING `+githubPullRequestColumns,
		teamID, newID("ghpr"), p.ApplicationID, p.InstallationID, p.RepositoryID, p.FullName, p.Number,
		p.HeadBranch, p.HeadSHA, p.AuthorLogin, p.FromFork, p.Approval, p.Status))
	return out, wrap("upsert github pull request", err)
}

// GetGitHubPullRequest returns one of the team's pull request rows.
func (s *Store) GetGitHubPullRequest(ctx context.Context, teamID, id string) (GitHubPullRequest, error) {
	p, err := scanGitHubPullRequest(s.db.QueryRow(ctx, `
		SELECT `+githubPullRequestColumns+` FROM github_pull_requests WHERE team_id = $1 AND id = $2`, teamID, id))
	return p, wrap("get github pull request", err)
}

// FindGitHubPullRequest returns the application's row for a pull request.
func (s *Store) FindGitHubPullRequest(ctx context.Context, teamID, applicationID string, repositoryID int64, number int) (GitHubPullRequest, error) {
	p, err := scanGitHubPullRequest(s.db.QueryRow(ctx, `
		SELECT `+githubPullRequestColumns+` FROM github_pull_requests
		WHERE team_id = $1 AND application_id = $2 AND repository_id = $3 AND number = $4`,
		teamID, applicationID, repositoryID, number))
	return p, wrap("find github pull request", err)
}

// ListGitHubPullRequestsByDeployment returns the rows whose preview is
// that deployment, for the notifier once the deployment moves on.
func (s *Store) ListGitHubPullRequestsByDeployment(ctx context.Context, teamID, deploymentID string) ([]GitHubPullRequest, error) {
	return s.listGitHubPullRequests(ctx, "list github pull requests by deployment", `
		WHERE team_id = $1 AND deployment_id = $2 ORDER BY id`, teamID, deploymentID)
}

// ListPendingGitHubPullRequests returns the application's open pull
// requests waiting for a member's approval.
func (s *Store) ListPendingGitHubPullRequests(ctx context.Context, teamID, applicationID string) ([]GitHubPullRequest, error) {
	return s.listGitHubPullRequests(ctx, "list pending github pull requests", `
		WHERE team_id = $1 AND application_id = $2 AND approval = 'pending' AND state = 'open' ORDER BY number`,
		teamID, applicationID)
}

func (s *Store) listGitHubPullRequests(ctx context.Context, op, where string, args ...any) ([]GitHubPullRequest, error) {
	rows, err := s.db.Query(ctx, `SELECT `+githubPullRequestColumns+` FROM github_pull_requests `+where, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (GitHubPullRequest, error) { return scanGitHubPullRequest(r) })
	return ps, wrap(op, err)
}

// UpdateGitHubPullRequest changes the row's state, status, deployment or
// comment id.
func (s *Store) UpdateGitHubPullRequest(ctx context.Context, teamID, id string, u GitHubPullRequestUpdate) (GitHubPullRequest, error) {
	p, err := scanGitHubPullRequest(s.db.QueryRow(ctx, `
		UPDATE github_pull_requests SET
			state = coalesce($3, state), status = coalesce($4, status),
			deployment_id = coalesce($5, deployment_id), comment_id = coalesce($6, comment_id),
			updated_at = now()
		WHERE team_id = $1 AND id = $2
		RETURNING `+githubPullRequestColumns, teamID, id, u.State, u.Status, u.DeploymentID, u.CommentID))
	return p, wrap("update github pull request", err)
}

// ApproveGitHubPullRequest records a member's approval of a pending pull
// request; one not pending is ErrNotFound.
func (s *Store) ApproveGitHubPullRequest(ctx context.Context, teamID, id, userID string) (GitHubPullRequest, error) {
	p, err := scanGitHubPullRequest(s.db.QueryRow(ctx, `
		UPDATE github_pull_requests SET approval = 'approved', approved_by = $3, updated_at = now()
		WHERE team_id = $1 AND id = $2 AND approval = 'pending'
		RETURNING `+githubPullRequestColumns, teamID, id, userID))
	return p, wrap("approve github pull request", err)
}

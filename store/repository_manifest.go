package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeploymentFetch is what a repository-backed deployment read at capture:
// the manifest file exactly as fetched and the commit it was fetched at.
type DeploymentFetch struct {
	DeploymentID  string
	EnvironmentID string
	RepositoryURL string
	Branch        string
	Commit        string
	ManifestPath  string
	Manifest      []byte
	CreatedAt     time.Time
}

// RecordDeploymentFetch stores the fetched manifest and the `path` files
// (repository path -> bytes) of a deployment, once: a retry that fetched
// again keeps the first record, which it returns, so every attempt of a
// deployment mounts the same bytes.
func (s *Store) RecordDeploymentFetch(ctx context.Context, teamID string, f DeploymentFetch, files map[string][]byte) (DeploymentFetch, error) {
	const op = "record deployment fetch"
	err := s.WithTx(ctx, func(tx *Store) error {
		tag, err := tx.db.Exec(ctx, `
			INSERT INTO deployment_fetches (deployment_id, team_id, environment_id, repository_url,
				branch, commit, manifest_path, manifest)
			SELECT d.id, d.team_id, d.environment_id, $3, $4, $5, $6, $7
			FROM deployments d WHERE d.team_id = $1 AND d.id = $2
			ON CONFLICT (deployment_id) DO NOTHING`,
			teamID, f.DeploymentID, f.RepositoryURL, f.Branch, f.Commit, f.ManifestPath, f.Manifest)
		if err != nil || tag.RowsAffected() == 0 {
			return wrap(op, err)
		}
		for p, content := range files {
			if _, err := tx.db.Exec(ctx, `
				INSERT INTO deployment_files (deployment_id, team_id, path, content) VALUES ($1, $2, $3, $4)`,
				f.DeploymentID, teamID, p, content); err != nil {
				return wrap(op, err)
			}
		}
		return nil
	})
	if err != nil {
		return DeploymentFetch{}, err
	}
	return s.GetDeploymentFetch(ctx, teamID, f.DeploymentID)
}

// GetDeploymentFetch returns what the deployment fetched, or ErrNotFound
// when it did not read a repository.
func (s *Store) GetDeploymentFetch(ctx context.Context, teamID, deploymentID string) (DeploymentFetch, error) {
	var f DeploymentFetch
	err := s.db.QueryRow(ctx, `
		SELECT deployment_id, environment_id, repository_url, branch, commit, manifest_path, manifest, created_at
		FROM deployment_fetches WHERE team_id = $1 AND deployment_id = $2`, teamID, deploymentID).
		Scan(&f.DeploymentID, &f.EnvironmentID, &f.RepositoryURL, &f.Branch, &f.Commit, &f.ManifestPath, &f.Manifest, &f.CreatedAt)
	return f, wrap("get deployment fetch", err)
}

// DeploymentFiles returns the `path` files recorded with a deployment.
func (s *Store) DeploymentFiles(ctx context.Context, teamID, deploymentID string) (map[string][]byte, error) {
	rows, err := s.db.Query(ctx, `
		SELECT path, content FROM deployment_files WHERE team_id = $1 AND deployment_id = $2`, teamID, deploymentID)
	if err != nil {
		return nil, wrap("deployment files", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var p string
		var content []byte
		if err := rows.Scan(&p, &content); err != nil {
			return nil, wrap("deployment files", err)
		}
		out[p] = content
	}
	return out, wrap("deployment files", rows.Err())
}

// LastFetchedCommit returns the commit the environment's most recent
// repository-reading deployment fetched, in any state, or ErrNotFound when
// none ever did.
func (s *Store) LastFetchedCommit(ctx context.Context, teamID, environmentID string) (string, error) {
	var commit string
	err := s.db.QueryRow(ctx, `
		SELECT commit FROM deployment_fetches WHERE team_id = $1 AND environment_id = $2
		ORDER BY created_at DESC LIMIT 1`, teamID, environmentID).Scan(&commit)
	return commit, wrap("last fetched commit", err)
}

// GitRef is a one-off branch or commit a deployment reads instead
// of its environment's.
type GitRef struct {
	Branch string
	Commit string
}

// SetDeploymentRef records a one-off ref for a requested deployment.
func (s *Store) SetDeploymentRef(ctx context.Context, teamID, deploymentID string, ref GitRef) error {
	return s.execOne(ctx, "set deployment git ref", `
		INSERT INTO deployment_refs (deployment_id, team_id, branch, commit)
		SELECT id, team_id, $3, $4 FROM deployments WHERE team_id = $1 AND id = $2
		ON CONFLICT (deployment_id) DO UPDATE SET branch = excluded.branch, commit = excluded.commit`,
		teamID, deploymentID, ref.Branch, ref.Commit)
}

// GetDeploymentRef returns the deployment's one-off ref, or ErrNotFound.
func (s *Store) GetDeploymentRef(ctx context.Context, teamID, deploymentID string) (GitRef, error) {
	var r GitRef
	err := s.db.QueryRow(ctx, `
		SELECT branch, commit FROM deployment_refs WHERE team_id = $1 AND deployment_id = $2`,
		teamID, deploymentID).Scan(&r.Branch, &r.Commit)
	return r, wrap("get deployment git ref", err)
}

// RepositoryState is an application's repository bookkeeping.
type RepositoryState struct {
	// LastReadManifest is the normalized manifest last read from the
	// repository; nil before the first read.
	LastReadManifest json.RawMessage
	LastReadCommit   string
	LastCheckedAt    *time.Time
	LastError        string
	Failures         int
	NextCheckAt      *time.Time
}

// GetRepositoryState returns the application's repository bookkeeping; the
// zero value when nothing was recorded yet.
func (s *Store) GetRepositoryState(ctx context.Context, teamID, applicationID string) (RepositoryState, error) {
	var st RepositoryState
	err := s.db.QueryRow(ctx, `
		SELECT last_read_manifest, last_read_commit, last_checked_at, last_error, failures, next_check_at
		FROM application_repository_state WHERE team_id = $1 AND application_id = $2`, teamID, applicationID).
		Scan(&st.LastReadManifest, &st.LastReadCommit, &st.LastCheckedAt, &st.LastError, &st.Failures, &st.NextCheckAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return RepositoryState{}, nil
	}
	return st, wrap("get repository state", err)
}

// RecordLastRead remembers the manifest last read from the repository.
func (s *Store) RecordLastRead(ctx context.Context, teamID, applicationID string, m json.RawMessage, commit string) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO application_repository_state (application_id, team_id, last_read_manifest, last_read_commit)
		SELECT id, team_id, $3, $4 FROM applications WHERE team_id = $1 AND id = $2
		ON CONFLICT (application_id) DO UPDATE
		SET last_read_manifest = excluded.last_read_manifest, last_read_commit = excluded.last_read_commit`,
		teamID, applicationID, m, commit)
	return wrap("record last read manifest", err)
}

// RecordSyncCheck stores the outcome of a branch listing for the
// application and when it should be listed again. An empty errMsg resets
// the failure count.
func (s *Store) RecordSyncCheck(ctx context.Context, teamID, applicationID string, at time.Time, errMsg string, failures int, next time.Time) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO application_repository_state (application_id, team_id, last_checked_at, last_error, failures, next_check_at)
		SELECT id, team_id, $3, $4, $5, $6 FROM applications WHERE team_id = $1 AND id = $2
		ON CONFLICT (application_id) DO UPDATE
		SET last_checked_at = excluded.last_checked_at, last_error = excluded.last_error,
		    failures = excluded.failures, next_check_at = excluded.next_check_at`,
		teamID, applicationID, at, errMsg, failures, next)
	return wrap("record sync check", err)
}

// RequestSyncCheck makes the application's branches due for listing now
// (a push hint arrived).
func (s *Store) RequestSyncCheck(ctx context.Context, teamID, applicationID string) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO application_repository_state (application_id, team_id, next_check_at)
		SELECT id, team_id, now() FROM applications WHERE team_id = $1 AND id = $2
		ON CONFLICT (application_id) DO UPDATE SET next_check_at = now()`, teamID, applicationID)
	return wrap("request sync check", err)
}

// SyncTarget is one environment or preview that deploys on push, with
// what sync needs to decide whether its branch head should be deployed.
type SyncTarget struct {
	TeamID        string
	ApplicationID string
	Environment   Environment
	// Revision and Manifest are the application's current saved manifest.
	Revision int64
	Manifest json.RawMessage
	// NextCheckAt is when the application's branches are due; nil before
	// the first check.
	NextCheckAt *time.Time
	Failures    int
	// LastFetched is the commit the environment's last repository-reading
	// deployment fetched; "" before the first deployment.
	LastFetched string
	// Requested is the head sync last requested a deployment for.
	Requested string
	// Live says a deployment of the environment is in progress.
	Live bool
}

// ListSyncTargets returns every environment, across teams (a maintenance
// method), that has sync on and follows an unpinned branch of an
// application with a saved manifest, and every preview of one, since
// previews always follow their branch: all but those being deleted and
// untrusted ones (forks), whose heads need a member's approval.
func (s *Store) ListSyncTargets(ctx context.Context) ([]SyncTarget, error) {
	rows, err := s.db.Query(ctx, `
		SELECT e.id, e.team_id, e.application_id, e.kind, e.name, e.branch, e.commit, e.slot, e.slug, e.variables,
		       e.visibility, e.rollback, coalesce(e.promote_from, ''), e.sync, e.created_at, e.updated_at,
		       a.current_revision, r.manifest, st.next_check_at, coalesce(st.failures, 0),
		       coalesce((SELECT f.commit FROM deployment_fetches f WHERE f.environment_id = e.id
		                 ORDER BY f.created_at DESC LIMIT 1), ''),
		       coalesce(es.requested_commit, ''),
		       EXISTS (SELECT 1 FROM deployments d WHERE d.environment_id = e.id
		               AND d.state IN ('requested', 'capturing', 'preparing', 'running_jobs', 'rolling_out'))
		FROM environments e
		JOIN applications a ON a.team_id = e.team_id AND a.id = e.application_id AND a.deleted_at IS NULL
		JOIN manifest_revisions r ON r.application_id = a.id AND r.revision = a.current_revision
		LEFT JOIN application_repository_state st ON st.application_id = a.id
		LEFT JOIN environment_sync es ON es.environment_id = e.id
		WHERE (e.kind = 'environment' AND e.sync AND e.commit = '')
		   OR (e.kind = 'preview' AND e.deleting_at IS NULL AND NOT e.untrusted)
		ORDER BY e.team_id, e.application_id, e.kind, e.name`)
	if err != nil {
		return nil, wrap("list sync targets", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SyncTarget, error) {
		var t SyncTarget
		e := &t.Environment
		err := row.Scan(&e.ID, &e.TeamID, &e.ApplicationID, &e.Kind, &e.Name, &e.Branch, &e.Commit, &e.Slot, &e.Slug,
			&e.Variables, &e.Visibility, &e.Rollback, &e.PromoteFrom, &e.Sync, &e.CreatedAt, &e.UpdatedAt,
			&t.Revision, &t.Manifest, &t.NextCheckAt, &t.Failures, &t.LastFetched, &t.Requested, &t.Live)
		t.TeamID, t.ApplicationID = t.Environment.TeamID, t.Environment.ApplicationID
		return t, err
	})
	return out, wrap("list sync targets", err)
}

// MarkSyncRequested records that sync requested a deployment of head for
// the environment, so the same head is never requested again.
func (s *Store) MarkSyncRequested(ctx context.Context, teamID, environmentID, head string) error {
	return s.execOne(ctx, "mark sync requested", `
		INSERT INTO environment_sync (environment_id, team_id, requested_commit, requested_at)
		SELECT id, team_id, $3, now() FROM environments WHERE team_id = $1 AND id = $2
		ON CONFLICT (environment_id) DO UPDATE SET requested_commit = excluded.requested_commit, requested_at = now()`,
		teamID, environmentID, head)
}

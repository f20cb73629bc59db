package backupctl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	dockerswarm "github.com/docker/docker/api/types/swarm"

	"github.com/slipwayhq/slipway/archive"
	"github.com/slipwayhq/slipway/backupstore"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// Driver is the part of the Swarm driver backups and restores use.
type Driver interface {
	RunJob(ctx context.Context, job swarm.JobSpec) (swarm.JobResult, error)
	EnsureRunObjects(ctx context.Context, c swarm.RunContext, secrets []dockerswarm.SecretSpec, volumes []string) error
	RemoveRun(ctx context.Context, env swarm.EnvRef, runID string) error
	StopService(ctx context.Context, env swarm.EnvRef, service string) error
	UpdateService(ctx context.Context, want swarm.ServiceSpec) (bool, error)
	WaitConverged(ctx context.Context, want swarm.ServiceSpec, timeout time.Duration) error
}

// Currents computes what an environment runs (pipeline.Pipeline).
type Currents interface {
	CurrentOf(ctx context.Context, teamID, envID string) (pipeline.Current, error)
}

// TargetSource returns the target of an environment's backups.
type TargetSource interface {
	For(ctx context.Context, teamID, envID string) (backupstore.Target, error)
}

// Controller runs backups and restores.
type Controller struct {
	Store *store.Store
	// Notify tells the team's destinations of a failed backup
	// (backup.failed), in the transaction that records it; nil tells
	// nobody.
	Notify   *notify.Emitter
	Currents Currents
	Driver   Driver
	Targets  TargetSource
	// ArchiverImage returns the image holding /slipway (the gateway image
	// serve and dev build from their own binary, or [ingress] image).
	ArchiverImage func(ctx context.Context) (string, error)
	// SocketDir is a directory of this worker's host where run sockets are
	// made; it must be on the node the archiver containers run on.
	SocketDir string
	// Placement pins a run's containers. volume is the Docker volume they
	// mount ("" for runs that mount only a helper volume). Until volumes
	// record their node, it pins them to this worker's node, where the
	// socket is (the caller's choice; nil pins nothing).
	Placement func(ctx context.Context, env swarm.EnvRef, volume string) ([]string, error)
	// Timeout bounds each container of a backup or restore (default 1 h).
	Timeout time.Duration
	// ConvergenceTimeout bounds each service restarted after a restore
	// (default 120 s).
	ConvergenceTimeout time.Duration
	Log                *slog.Logger
	Now                func() time.Time
}

// Codes recorded in the message of a failed backup or restore.
const (
	CodeNotDeployed      = "environment_not_deployed"
	CodeSubjectMissing   = "backup_subject_missing"
	CodeArchiveMissing   = "backup_archive_missing"
	CodeChecksumMismatch = "backup_checksum_mismatch"
	CodeRunFailed        = "backup_run_failed"
	CodeRestoreFailed    = "restore_failed"
	CodeBackupUnusable   = "backup_not_restorable"
	CodeVolumeElsewhere  = "backup_volume_on_other_node"
)

func (c *Controller) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Controller) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (c *Controller) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return time.Hour
}

// Key is where a backup's archive lives on its target.
func Key(b store.Backup) string {
	return fmt.Sprintf("%s/%s/%s/%s.tar", b.TeamID, b.ApplicationID, b.EnvironmentID, b.ID)
}

// failure is a backup or restore failure with its code.
type failure struct {
	code string
	msg  string
}

func (f *failure) Error() string { return f.code + ": " + f.msg }

func failf(code, format string, args ...any) error {
	return &failure{code: code, msg: fmt.Sprintf(format, args...)}
}

// endpoint serves one run's socket: the archive it uploads, or the one it
// downloads.
type endpoint struct {
	path     string
	ln       net.Listener
	srv      *http.Server
	token    []byte
	mu       sync.Mutex
	received bool
	err      error
}

// transfer is the one direction a run's endpoint serves.
type transfer struct {
	upload   func(ctx context.Context, r io.Reader) error
	download func(ctx context.Context, w io.Writer) error
}

func (c *Controller) listen(runID string, t transfer) (*endpoint, error) {
	if err := os.MkdirAll(c.SocketDir, 0o700); err != nil {
		return nil, fmt.Errorf("backup sockets: %w", err)
	}
	var tok [24]byte
	_, _ = rand.Read(tok[:])
	e := &endpoint{path: filepath.Join(c.SocketDir, runID+".sock"), token: []byte(hex.EncodeToString(tok[:]))}
	_ = os.Remove(e.path) // a socket a killed worker left behind
	ln, err := net.Listen("unix", e.path)
	if err != nil {
		return nil, fmt.Errorf("backup socket: %w", err)
	}
	// The archiver runs as root; nobody else needs the socket.
	if err := os.Chmod(e.path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	ep := &archive.Endpoint{Token: string(e.token)}
	if t.upload != nil {
		ep.Upload = func(ctx context.Context, r io.Reader) error { err := t.upload(ctx, r); e.record(err); return err }
	}
	if t.download != nil {
		ep.Download = func(ctx context.Context, w io.Writer) error { err := t.download(ctx, w); e.record(err); return err }
	}
	e.ln, e.srv = ln, &http.Server{Handler: ep, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

func (e *endpoint) close() {
	_ = e.srv.Close()
	_ = os.Remove(e.path)
}

// record notes the outcome of the transfer the endpoint served.
func (e *endpoint) record(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.received, e.err = true, err
}

func (e *endpoint) outcome() (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.received, e.err
}

// runContext is the run context of one backup or restore.
func (c *Controller) runContext(ctx context.Context, cur pipeline.Current, runID, volume string) (swarm.RunContext, error) {
	rc := swarm.RunContext{TeamID: cur.Env.TeamID, AppID: cur.App.ID, EnvID: cur.Env.ID, EnvShortID: store.ShortID(cur.Env.ID), RunID: runID}
	if c.Placement != nil {
		var err error
		if rc.Constraints, err = c.Placement(ctx, rc.Env(), volume); err != nil {
			return rc, err
		}
	}
	// The volume's node is recorded when it is created: the archiver must
	// run there, and it reaches this worker only on this worker's node.
	for _, v := range cur.Desired.Volumes {
		if v.Name != volume || v.Node == "" {
			continue
		}
		want := "node.id==" + v.Node
		if len(rc.Constraints) > 0 && rc.Constraints[0] != want {
			return rc, failf(CodeVolumeElsewhere, "volume %s is on node %s and the archiver reaches this worker only on the worker's own node (%s); run a worker on that node", v.Volume, v.Node, rc.Constraints[0])
		}
		rc.Constraints = []string{want}
	}
	return rc, nil
}

// archiver runs `slipway archive mode` over volume, its endpoint serving t.
func (c *Controller) archiver(ctx context.Context, rc swarm.RunContext, mode, volume string, t transfer) (*endpoint, swarm.JobResult, error) {
	image, err := c.ArchiverImage(ctx)
	if err != nil {
		return nil, swarm.JobResult{}, fmt.Errorf("archiver image: %w", err)
	}
	e, err := c.listen(store.ShortID(rc.RunID)+"-"+mode, t)
	if err != nil {
		return nil, swarm.JobResult{}, err
	}
	job, secret := swarm.ArchiverRun(rc, swarm.ArchiverInput{Image: image, Mode: mode, Volume: volume, SocketPath: e.path, Token: e.token, Timeout: c.timeout()})
	if err := c.Driver.EnsureRunObjects(ctx, rc, []dockerswarm.SecretSpec{secret}, nil); err != nil {
		e.close()
		return nil, swarm.JobResult{}, err
	}
	res, err := c.Driver.RunJob(ctx, job)
	e.close()
	return e, res, err
}

// postgresOf returns the declaration of a Postgres service, with the
// password its password_secret holds.
func postgresOf(cur pipeline.Current, service string) (manifest.Postgres, swarm.ServiceSpec, []byte, error) {
	svc, ok := cur.Desired.Service(service)
	if !ok {
		return manifest.Postgres{}, svc, nil, failf(CodeSubjectMissing, "the environment runs no service %q", service)
	}
	for _, s := range cur.Rendered.Spec.Services {
		if s.Name != service {
			continue
		}
		if s.Postgres == nil {
			return manifest.Postgres{}, svc, nil, failf(CodeSubjectMissing, "service %s is not declared as Postgres ([spec.services.postgres])", service)
		}
		pg := *s.Postgres
		if pg.PasswordSecret == "" {
			return pg, svc, nil, nil
		}
		for _, sec := range cur.Desired.Secrets {
			if sec.Labels["dev.slipway.secret"] == pg.PasswordSecret {
				return pg, svc, sec.Data, nil
			}
		}
		return pg, svc, nil, failf(CodeSubjectMissing, "service %s mounts no secret %q", service, pg.PasswordSecret)
	}
	return manifest.Postgres{}, svc, nil, failf(CodeSubjectMissing, "the environment runs no service %q", service)
}

func runFailed(what string, res swarm.JobResult, err error) error {
	out := string(res.Output)
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return failf(CodeRunFailed, "%s: %v; output: %s", what, err, out)
}

// isFailure reports whether err ends the backup or restore for good
// (recorded on it) rather than being retried.
func isFailure(err error) bool {
	var f *failure
	if errors.As(err, &f) {
		return true
	}
	code := swarm.Code(err)
	return code != "" && code != swarm.CodeDockerUnavailable
}

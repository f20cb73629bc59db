package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/backupstore"
	"github.com/slipwayhq/slipway/store"
)

// registerDayTwo mounts scheduled jobs, backups and restores
// (docs/schedules.md, docs/backups.md).
func (h *handler) registerDayTwo(r fiber.Router) {
	const env = "/applications/:app/environments/:env"
	r.Get(env+"/schedules", h.requireScope(auth.AppsRead), h.scheduleList)
	r.Post(env+"/jobs/:job/runs", h.requireScope(auth.AppsDeploy), h.jobRunCreate)
	r.Get(env+"/backups", h.requireScope(auth.AppsRead), h.backupList)
	r.Post(env+"/backups", h.requireScope(auth.AppsDeploy), h.backupCreate)
	r.Post(env+"/restores", h.requireScope(auth.AppsDeploy), h.restoreCreate)
	r.Put(env+"/backup-target", h.requireScope(auth.SecretsWrite), h.backupTargetSet)
}

// Schedule is one scheduled job or backup with its next run.
type Schedule struct {
	Kind        string     `json:"kind"`
	Name        string     `json:"name"`
	Schedule    string     `json:"schedule"`
	Concurrency string     `json:"concurrency,omitempty"`
	Subject     string     `json:"subject,omitempty"`
	NextRunAt   time.Time  `json:"next_run_at"`
	LastRunAt   *time.Time `json:"last_run_at"`
}

// JobRun is one run of a scheduled job.
type JobRun struct {
	ID           string     `json:"id"`
	Job          string     `json:"job"`
	Origin       string     `json:"origin"`
	State        string     `json:"state"`
	ScheduledFor *time.Time `json:"scheduled_for"`
	StartedAt    *time.Time `json:"started_at"`
	EndedAt      *time.Time `json:"ended_at"`
	ExitCode     *int       `json:"exit_code"`
	Output       string     `json:"output"`
	Message      string     `json:"message"`
}

// Schedules is GET .../schedules.
type Schedules struct {
	Environment string     `json:"environment"`
	Schedules   []Schedule `json:"schedules"`
	Runs        []JobRun   `json:"runs"`
}

// Backup is one backup.
type Backup struct {
	ID          string     `json:"id"`
	Environment string     `json:"environment"`
	Kind        string     `json:"kind"`
	Subject     string     `json:"subject"`
	Name        string     `json:"name"`
	Origin      string     `json:"origin"`
	State       string     `json:"state"`
	Target      string     `json:"target"`
	SizeBytes   int64      `json:"size_bytes"`
	SHA256      string     `json:"sha256"`
	Message     string     `json:"message"`
	CreatedAt   time.Time  `json:"created_at"`
	EndedAt     *time.Time `json:"ended_at"`
}

// Restore is one restore.
type Restore struct {
	ID       string     `json:"id"`
	BackupID string     `json:"backup_id"`
	State    string     `json:"state"`
	Stopped  []string   `json:"stopped"`
	Message  string     `json:"message"`
	Created  time.Time  `json:"created_at"`
	EndedAt  *time.Time `json:"ended_at"`
}

// Backups is GET .../backups.
type Backups struct {
	Environment string    `json:"environment"`
	Target      string    `json:"target"`
	Backups     []Backup  `json:"backups"`
	Restores    []Restore `json:"restores"`
	// Held is the restore keeping the environment stopped, if any.
	Held *Restore `json:"held"`
}

func (h *handler) dayTwo(c *fiber.Ctx) (service.DayTwo, error) {
	a, err := h.application(c)
	if err != nil {
		return service.DayTwo{}, err
	}
	return service.LoadDayTwo(c.UserContext(), h.store, callerOf(c).token.TeamID, a.ID, c.Params("env"))
}

func (h *handler) scheduleList(c *fiber.Ctx) error {
	d, err := h.dayTwo(c)
	if err != nil {
		return h.fail(c, err)
	}
	out := Schedules{Environment: d.Env.Name, Schedules: []Schedule{}, Runs: []JobRun{}}
	for _, s := range d.Schedules {
		sc := Schedule{Kind: s.Kind, Name: s.Name, Schedule: s.Spec, Subject: s.Subject, NextRunAt: s.NextRunAt, LastRunAt: s.LastRunAt}
		if s.Kind == store.ScheduleJob {
			sc.Concurrency = s.Concurrency
		}
		out.Schedules = append(out.Schedules, sc)
	}
	for _, r := range d.Runs {
		out.Runs = append(out.Runs, newJobRun(r))
	}
	return c.JSON(out)
}

func newJobRun(r store.JobRun) JobRun {
	return JobRun{ID: r.ID, Job: r.Job, Origin: r.Origin, State: r.State, ScheduledFor: r.ScheduledFor, StartedAt: r.StartedAt,
		EndedAt: r.EndedAt, ExitCode: r.ExitCode, Output: r.Output, Message: r.Message}
}

func (h *handler) jobRunCreate(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	run, err := service.RunJobNow(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, c.Params("env"), c.Params("job"))
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(fiber.StatusAccepted).JSON(newJobRun(run))
}

func newBackup(b store.Backup) Backup {
	return Backup{ID: b.ID, Environment: b.EnvironmentName, Kind: b.Kind, Subject: b.Subject, Name: b.Name, Origin: b.Origin,
		State: b.State, Target: b.Target, SizeBytes: b.SizeBytes, SHA256: b.SHA256, Message: b.Message, CreatedAt: b.CreatedAt, EndedAt: b.EndedAt}
}

func newRestore(r store.Restore) Restore {
	return Restore{ID: r.ID, BackupID: r.BackupID, State: r.State, Stopped: r.Stopped, Message: r.Message, Created: r.CreatedAt, EndedAt: r.EndedAt}
}

func (h *handler) backupList(c *fiber.Ctx) error {
	d, err := h.dayTwo(c)
	if err != nil {
		return h.fail(c, err)
	}
	out := Backups{Environment: d.Env.Name, Target: d.Target, Backups: []Backup{}, Restores: []Restore{}}
	for _, b := range d.Backups {
		out.Backups = append(out.Backups, newBackup(b))
	}
	for _, r := range d.Restores {
		out.Restores = append(out.Restores, newRestore(r))
	}
	if d.Hold != nil {
		held := newRestore(*d.Hold)
		out.Held = &held
	}
	return c.JSON(out)
}

// BackupRequest is POST .../backups: a volume or a Postgres service.
type BackupRequest struct {
	Volume  string `json:"volume"`
	Service string `json:"service"`
}

func (h *handler) backupCreate(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req BackupRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	b, err := service.CreateBackup(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, c.Params("env"), req.Volume, req.Service)
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(fiber.StatusAccepted).JSON(newBackup(b))
}

// RestoreRequest is POST .../restores: restore this backup of the
// application into the environment of the path.
type RestoreRequest struct {
	Backup string `json:"backup"`
}

func (h *handler) restoreCreate(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req RestoreRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	r, err := service.RestoreBackup(c.UserContext(), h.store, callerOf(c).actor(), h.enqueue, a.ID, req.Backup, c.Params("env"))
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(fiber.StatusAccepted).JSON(newRestore(r))
}

// BackupTargetRequest is PUT .../backup-target: an S3-compatible bucket.
// The secret access key is sealed and never returned.
type BackupTargetRequest struct {
	Endpoint        string `json:"endpoint"`
	Bucket          string `json:"bucket"`
	Prefix          string `json:"prefix"`
	Region          string `json:"region"`
	Insecure        bool   `json:"insecure"`
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
}

func (h *handler) backupTargetSet(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	var req BackupTargetRequest
	if bad := decode(c.Body(), &req); bad != nil {
		return bad.write(c)
	}
	targets := &backupctl.Targets{Store: h.store}
	if h.secrets != nil {
		targets.Keyring = h.secrets.Keyring()
	}
	cfg := backupstore.S3Config(req)
	if err := service.SetBackupTarget(c.UserContext(), h.store, callerOf(c).actor(), targets, a.ID, c.Params("env"), cfg); err != nil {
		return h.fail(c, err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

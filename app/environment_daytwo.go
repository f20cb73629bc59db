package app

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
)

// This file answers an environment's schedules-and-backups page: its
// scheduled jobs with their next run and "run now", the job runs, its
// backups with "back up now" and "restore here", through the same service
// functions as the API (docs/schedules.md, docs/backups.md).

// dayTwoURL is the page of envName's schedules and backups.
func dayTwoURL(appID, envName string) string {
	return "/applications/" + appID + "/environments/" + envName + "/daytwo"
}

// environmentDayTwo shows the page.
func (h *handler) environmentDayTwo(c *fiber.Ctx) error {
	return h.showDayTwo(c, http.StatusOK, "", "")
}

// showDayTwo renders the page of the :environment parameter (a name) with
// notice or errMsg above it.
func (h *handler) showDayTwo(c *fiber.Ctx, status int, notice, errMsg string) error {
	a, header, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	d, err := service.LoadDayTwo(c.UserContext(), h.store, a.TeamID, a.ID, c.Params("environment"))
	var nf *service.NotFoundError
	if errors.As(err, &nf) {
		return fiber.ErrNotFound
	}
	if err != nil {
		return err
	}
	v := dayTwoView(d)
	v.Base, v.Notice, v.Error = dayTwoURL(a.ID, d.Env.Name), notice, errMsg
	m, err := h.deployedManifest(c.UserContext(), d.Env)
	if err != nil {
		return err
	}
	if m != nil {
		for _, vol := range m.Spec.Volumes {
			v.Volumes = append(v.Volumes, vol.Name)
		}
		for _, s := range m.Spec.Services {
			if s.Postgres != nil {
				v.Postgres = append(v.Postgres, s.Name)
			}
		}
	}
	return h.render(c, status, a.Name+" · Schedules and backups of "+d.Env.Name, page.EnvironmentDayTwo(header, v))
}

// dayTwoDone answers a form of the page: a refusal is shown on it with its
// field and code, success redirects back to it with message.
func (h *handler) dayTwoDone(c *fiber.Ctx, err error, message string) error {
	msg, ok := editErrorMessage(err)
	var nf *service.NotFoundError
	if !ok && errors.As(err, &nf) && nf.Code != service.CodeEnvironmentNotFound {
		msg, ok = fmt.Sprintf("%s: %s (%s)", nf.Field, nf.Message, nf.Code), true
	}
	if ok {
		return h.showDayTwo(c, formErrorStatus(c), "", msg)
	}
	if errors.As(err, &nf) {
		return fiber.ErrNotFound
	}
	if err != nil {
		return err
	}
	a := c.Params("app")
	return h.done(c, message, dayTwoURL(a, c.Params("environment")),
		func(notice string) error { return h.showDayTwo(c, http.StatusOK, notice, "") })
}

// environmentJobRun queues a run of a scheduled job now (apps:deploy).
func (h *handler) environmentJobRun(c *fiber.Ctx) error {
	a, _, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	job := c.Params("job")
	run, err := service.RunJobNow(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, c.Params("environment"), job)
	return h.dayTwoDone(c, err, "Run "+run.ID+" of "+job+" queued.")
}

// environmentBackupCreate queues a backup by hand of the subject chosen,
// "volume:<name>" or "postgres:<service>" (apps:deploy).
func (h *handler) environmentBackupCreate(c *fiber.Ctx) error {
	a, _, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	var volume, svc string
	switch kind, name, _ := strings.Cut(c.FormValue("subject"), ":"); kind {
	case "volume":
		volume = name
	case "postgres":
		svc = name
	}
	b, err := service.CreateBackup(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, c.Params("environment"), volume, svc)
	return h.dayTwoDone(c, err, "Backup "+b.ID+" queued.")
}

// environmentRestoreCreate queues the restore of a backup of the
// application into this environment (apps:deploy); it is refused while a
// deployment or another restore of it runs.
func (h *handler) environmentRestoreCreate(c *fiber.Ctx) error {
	a, _, err := h.loadApplication(c, "environments")
	if err != nil {
		return err
	}
	r, err := service.RestoreBackup(c.UserContext(), h.store, visitorOf(c).actor(), h.enqueue, a.ID, strings.TrimSpace(c.FormValue("backup")), c.Params("environment"))
	return h.dayTwoDone(c, err, "Restore "+r.ID+" queued: the services using the data stop while it runs.")
}

// dayTwoView turns what service.LoadDayTwo read into the page's rows.
func dayTwoView(d service.DayTwo) page.DayTwo {
	v := page.DayTwo{Environment: d.Env.Name, Target: d.Target}
	for _, sc := range d.Schedules {
		v.Schedules = append(v.Schedules, page.ScheduleRow{Kind: sc.Kind, Name: sc.Name, Spec: sc.Spec,
			Next: dayTwoTime(&sc.NextRunAt), Last: dayTwoTime(sc.LastRunAt), Job: sc.Kind == store.ScheduleJob})
	}
	for _, r := range d.Runs {
		exit := "–"
		if r.ExitCode != nil {
			exit = strconv.Itoa(*r.ExitCode)
		}
		v.Runs = append(v.Runs, page.JobRunRow{ID: r.ID, Job: r.Job, Origin: r.Origin, State: r.State,
			Started: dayTwoTime(r.StartedAt), Ended: dayTwoTime(r.EndedAt), Exit: exit, Output: r.Output, Message: r.Message})
	}
	for _, b := range d.Backups {
		v.Backups = append(v.Backups, page.BackupRow{ID: b.ID, Kind: b.Kind, Subject: b.Subject, Origin: b.Origin, State: b.State,
			Message: b.Message, SHA256: b.SHA256, Taken: dayTwoTime(&b.CreatedAt), SizeBytes: b.SizeBytes, Restorable: b.State == store.BackupSucceeded})
	}
	for _, r := range d.Restores {
		v.Restores = append(v.Restores, restoreRow(r))
	}
	if d.Hold != nil {
		hold := restoreRow(*d.Hold)
		v.Hold = &hold
	}
	return v
}

func restoreRow(r store.Restore) page.RestoreRow {
	return page.RestoreRow{ID: r.ID, BackupID: r.BackupID, State: r.State, Message: r.Message}
}

// dayTwoTime is t in UTC to the second, "–" for none.
func dayTwoTime(t *time.Time) string {
	if t == nil {
		return "–"
	}
	return t.UTC().Format(time.DateTime) + " UTC"
}

package swarm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/pkg/stdcopy"
)

// MaxJobOutput is how much of a job's output is kept.
const MaxJobOutput = 1 << 20

// JobResult is the outcome of a job run that finished.
type JobResult struct {
	Output    []byte
	Truncated bool
	ExitCode  int
	StartedAt time.Time
	EndedAt   time.Time
}

// RunJob runs a job as a replicated-job service and waits for it. A run
// already existing for the same deployment and job (a worker restarted
// mid-job) is awaited, not started again, and its timeout counts from
// when it was created. It fails with job_failed (non-zero exit or rejected
// task, with Docker's explanation) or job_timeout (the run is then
// removed, which stops it); the result carries the output either way.
func (d *Driver) RunJob(ctx context.Context, job JobSpec) (JobResult, error) {
	spec, err := d.resolveRefs(ctx, job.Spec)
	if err != nil {
		return JobResult{}, err
	}
	envID := spec.Labels[LabelEnv]
	svc, found, err := d.inspect(ctx, spec.Name, envID)
	if err != nil {
		return JobResult{}, err
	}
	if !found {
		resp, err := d.engine.ServiceCreate(ctx, spec, swarm.ServiceCreateOptions{EncodedRegistryAuth: job.RegistryAuth})
		if err != nil {
			return JobResult{}, engineErr("create job "+spec.Name, err)
		}
		d.log.InfoContext(ctx, "job started", "job", job.Job, "service", spec.Name)
		svc, _, err = d.engine.ServiceInspectWithRaw(ctx, resp.ID, swarm.ServiceInspectOptions{})
		if err != nil {
			return JobResult{}, engineErr("inspect job "+spec.Name, err)
		}
	} else {
		d.log.InfoContext(ctx, "job resumed", "job", job.Job, "service", spec.Name)
	}
	res := JobResult{StartedAt: svc.CreatedAt}
	deadline := svc.CreatedAt.Add(job.Timeout)
	for {
		tasks, err := d.engine.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", svc.ID))})
		if err != nil {
			return res, engineErr("list tasks of job "+spec.Name, err)
		}
		if done, jobErr := jobOutcome(job, tasks, &res); done {
			res.EndedAt = time.Now()
			if err := d.jobOutput(ctx, svc.ID, &res); err != nil {
				return res, err
			}
			return res, jobErr
		}
		if time.Now().After(deadline) {
			res.EndedAt = time.Now()
			if err := d.jobOutput(ctx, svc.ID, &res); err != nil {
				return res, err
			}
			if err := d.RemoveService(ctx, EnvRef{ID: envID}, spec.Name); err != nil {
				return res, err
			}
			return res, &Error{Code: CodeJobTimeout, Object: "job " + job.Job, Message: fmt.Sprintf("still running after %s; it was stopped", job.Timeout)}
		}
		if err := sleep(ctx, pollInterval); err != nil {
			return res, err
		}
	}
}

// jobOutcome reads the single task of a job run. The restart policy is
// "none", so the first task that ends decides.
func jobOutcome(job JobSpec, tasks []swarm.Task, res *JobResult) (bool, error) {
	for _, t := range tasks {
		if cs := t.Status.ContainerStatus; cs != nil {
			res.ExitCode = cs.ExitCode
		}
		switch t.Status.State {
		case swarm.TaskStateComplete:
			return true, nil
		case swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateShutdown, swarm.TaskStateOrphaned, swarm.TaskStateRemove:
			return true, &Error{Code: CodeJobFailed, Object: "job " + job.Job, Message: taskError(t)}
		}
	}
	return false, nil
}

// jobOutput collects up to MaxJobOutput bytes of the run's stdout and
// stderr, interleaved as Docker recorded them.
func (d *Driver) jobOutput(ctx context.Context, serviceID string, res *JobResult) error {
	rc, err := d.engine.ServiceLogs(ctx, serviceID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return engineErr("job logs", err)
	}
	defer rc.Close()
	w := &limitWriter{max: MaxJobOutput}
	if _, err := stdcopy.StdCopy(w, w, rc); err != nil && err != io.EOF {
		return engineErr("job logs", err)
	}
	res.Output, res.Truncated = w.buf.Bytes(), w.truncated
	return nil
}

// limitWriter keeps the first max bytes and notes whether more came.
type limitWriter struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	room := w.max - w.buf.Len()
	if len(p) > room {
		w.truncated = true
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.buf.Write(p)
}

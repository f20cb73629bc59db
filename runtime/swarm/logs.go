package swarm

import (
	"context"
	"errors"
	"io"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// CodeServiceNotRunning is ServiceLogs' error when the environment has no
// service of that name in Docker (never deployed, or removed).
const CodeServiceNotRunning = "service_not_running"

// LogOptions selects what ServiceLogs reads.
type LogOptions struct {
	// Follow keeps writing new lines until ctx ends.
	Follow bool
	// Tail is how many of the last lines to start from; 0 reads them all.
	Tail int
	// Timestamps prefixes each line with the time Docker recorded it.
	Timestamps bool
}

// ServiceLogs writes the output (stdout and stderr, interleaved as Docker
// recorded them) of the environment's service named service in the
// manifest to w. Only a service carrying the environment's labels is read,
// and never a job's run, so a name cannot reach another environment's
// containers. With Follow it returns nil once ctx ends.
func (d *Driver) ServiceLogs(ctx context.Context, env EnvRef, service string, opts LogOptions, w io.Writer) error {
	name := ServiceName(env.ShortID, service)
	svc, found, err := d.inspect(ctx, name, env.ID)
	if err != nil {
		return err
	}
	if !found || svc.Spec.Labels[LabelService] != service || svc.Spec.Labels[LabelJob] != "" {
		return &Error{Code: CodeServiceNotRunning, Object: "service " + service, Message: "the environment runs no such service"}
	}
	tail := "all"
	if opts.Tail > 0 {
		tail = strconv.Itoa(opts.Tail)
	}
	rc, err := d.engine.ServiceLogs(ctx, svc.ID, container.LogsOptions{
		ShowStdout: true, ShowStderr: true, Follow: opts.Follow, Tail: tail, Timestamps: opts.Timestamps,
	})
	if err != nil {
		return engineErr("service logs", err)
	}
	defer rc.Close()
	// Services never get a TTY, so the stream is always multiplexed.
	_, err = stdcopy.StdCopy(w, w, rc)
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return engineErr("service logs", err)
}

package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// serviceLogShow is the last lines a service wrote, read from Docker and
// merged across its replicas; the page's script then appends new lines
// from serviceLogStream.
func (h *handler) serviceLogShow(c *fiber.Ctx) error {
	a, header, err := h.loadApplication(c, "overview")
	if err != nil {
		return err
	}
	target, err := h.loadServiceTarget(c, a)
	if err != nil {
		return err
	}
	url := serviceLogsURL(a.ID, target.env.Name, target.service)
	v := partial.ServiceLogsView{
		URL: url, StreamURL: url + "/stream", DownloadURL: url + "/download", Environment: target.env.Name, Service: target.service,
		Tail: api.LogTail(c.Query("tail")),
	}
	if c.Query("restarted") == "1" {
		v.Notice = "Restart requested: Swarm replaces the replicas of " + target.service + " one at a time; the new ones' output appears below."
	}
	var lines []LogLine
	err = h.readLogs(c.UserContext(), target, LogOptions{Tail: v.Tail}, 10*time.Second, func(batch []LogLine) error {
		lines = append(lines, batch...)
		return nil
	})
	if err != nil {
		v.Error = h.logError(c, err)
	}
	v.Lines = logLineViews(lines)
	if n := len(lines); n > 0 {
		v.Since = logTime(lines[n-1].Time)
	}
	return h.render(c, http.StatusOK, a.Name+" · Logs of "+target.service, page.ServiceLogs(header, v))
}

// logLineViews formats lines for the page and the stream.
func logLineViews(lines []LogLine) []partial.LogLineView {
	out := make([]partial.LogLineView, len(lines))
	for i, l := range lines {
		t := l.Time.UTC()
		out[i] = partial.LogLineView{Time: logTime(t), Clock: t.Format("15:04:05.000"), Task: l.Task, Node: l.Node, Stderr: l.Stderr, Text: l.Text}
	}
	return out
}

// logTimeLayout is RFC 3339 in UTC with all nine fractional digits: fixed
// width, so the page's script compares times as strings.
const logTimeLayout = "2006-01-02T15:04:05.000000000Z"

func logTime(t time.Time) string { return t.UTC().Format(logTimeLayout) }

// readLogs reads target's logs within timeout (none when 0).
func (h *handler) readLogs(ctx context.Context, target serviceTarget, opts LogOptions, timeout time.Duration, emit func([]LogLine) error) error {
	if h.logs == nil {
		return api.ErrRuntimeUnavailable
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return h.logs.ServiceLogs(ctx, target.env.ID, target.service, opts, emit)
}

// logError says why logs could not be read; unexpected errors are logged
// here, once.
func (h *handler) logError(c *fiber.Ctx, err error) string {
	switch {
	case errors.Is(err, ErrServiceNotRunning):
		return "Docker runs no such service for this environment right now: deploy it, then look again (service_not_running)."
	case errors.Is(err, api.ErrRuntimeUnavailable):
		return "Docker cannot be reached from this server, so logs cannot be read (docker_unavailable)."
	case errors.Is(err, context.DeadlineExceeded):
		return "Docker took too long to answer; try fewer lines (timeout)."
	}
	h.log.ErrorContext(c.UserContext(), "service logs", "path", c.Path(), "err", err)
	return "The logs could not be read; the server log has the details (internal)."
}

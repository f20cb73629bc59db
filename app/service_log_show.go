package app

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// serviceLogShow is the last lines a service wrote, read from Docker;
// with follow=1 htmx asks for them again every two seconds.
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
		URL: url, DownloadURL: url + "/download", Environment: target.env.Name, Service: target.service,
		Tail: logTail(c.Query("tail")), Follow: c.Query("follow") == "1",
	}
	var buf bytes.Buffer
	err = h.readLogs(c.UserContext(), target, LogOptions{Tail: v.Tail}, &buf, 10*time.Second)
	if err != nil {
		v.Error = h.logError(c, err)
	}
	v.Text = buf.String()
	if isFragment(c) {
		return h.render(c, http.StatusOK, "Logs", partial.ServiceLogs(v))
	}
	return h.render(c, http.StatusOK, a.Name+" · Logs of "+target.service, page.ServiceLogs(header, v))
}

// logTail is the tail query parameter within 1..5000, 500 by default.
func logTail(q string) int {
	n, err := strconv.Atoi(q)
	if err != nil || n <= 0 {
		return 500
	}
	return min(n, 5000)
}

// readLogs reads target's logs into w within timeout.
func (h *handler) readLogs(ctx context.Context, target serviceTarget, opts LogOptions, w *bytes.Buffer, timeout time.Duration) error {
	if h.logs == nil {
		return api.ErrRuntimeUnavailable
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return h.logs.ServiceLogs(ctx, target.env.ID, target.service, opts, w)
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

package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// ServiceLogLine is one line a service wrote: when, which replica (task)
// on which node, stdout or stderr, and the text.
type ServiceLogLine struct {
	Time   time.Time `json:"time"`
	Task   string    `json:"task"`
	Node   string    `json:"node"`
	Stream string    `json:"stream"`
	Text   string    `json:"text"`
}

// ServiceLogList is GET …/services/{service}/logs without follow: the
// last lines, merged across replicas in time order. With follow=true the
// route answers application/x-ndjson instead: one ServiceLogLine a line,
// the tail first, then new lines as they are written (blank lines keep
// the connection alive).
type ServiceLogList struct {
	Lines []ServiceLogLine `json:"lines"`
}

// Bounds of one logs request: a tail is read within logReadTimeout; a
// follow ends after logFollowMax (`slipway env logs --follow` reconnects
// from its last line) and writes a blank line every logFollowPing.
const (
	logReadTimeout = 30 * time.Second
	logFollowMax   = time.Hour
	logFollowPing  = 15 * time.Second
)

var serviceLogsQuery = []QueryParam{
	{"tail", "integer", "The last lines only, 1–5000 (default 500)."},
	{"since", "string", "Only lines written after this RFC 3339 time."},
	{"follow", "boolean", "Keep the response open and stream new lines as NDJSON."},
}

func (h *handler) registerServiceLogs(r fiber.Router) {
	r.Get("/applications/:app/environments/:env/services/:service/logs", h.requireScope(auth.LogsRead), h.serviceLogs)
}

// serviceLogs reads a running service's output from Docker through the
// reader the dashboard's logs pages use.
func (h *handler) serviceLogs(c *fiber.Ctx) error {
	a, err := h.application(c)
	if err != nil {
		return h.fail(c, err)
	}
	opts := LogOptions{Tail: LogTail(c.Query("tail")), Follow: c.QueryBool("follow")}
	if q := c.Query("since"); q != "" {
		t, err := time.Parse(time.RFC3339Nano, q)
		if err != nil {
			return WriteError(c, http.StatusUnprocessableEntity, "since_invalid", "since must be an RFC 3339 time like 2026-12-02T07:00:00Z", map[string]any{"field": "since"})
		}
		opts.Since = t
	}
	svc := c.Params("service")
	env, err := service.RunningService(c.UserContext(), h.store, callerOf(c).actor(), a.ID, h.environmentName(c, a.ID), svc)
	if err != nil {
		return h.fail(c, err)
	}
	if h.logs == nil {
		return h.failLogs(c, ErrRuntimeUnavailable)
	}
	read := func(ctx context.Context, emit func([]LogLine) error) error {
		return h.logs.ServiceLogs(ctx, env.ID, svc, opts, emit)
	}
	if !opts.Follow {
		ctx, cancel := context.WithTimeout(c.UserContext(), logReadTimeout)
		defer cancel()
		out := ServiceLogList{Lines: []ServiceLogLine{}}
		err := read(ctx, func(lines []LogLine) error {
			out.Lines = append(out.Lines, serviceLogLines(lines)...)
			return nil
		})
		if err != nil {
			return h.failLogs(c, err)
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.JSON(out)
	}
	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	// The writer runs after this handler returned: it uses only what is
	// captured here.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), logFollowMax)
	log, path := h.log, c.Path()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		if err := FollowLogs(ctx, w, read, ndjsonLines, "\n", logFollowPing); err != nil {
			log.WarnContext(ctx, "service log stream", "path", path, "err", err)
		}
	})
	return nil
}

// failLogs answers a log read that failed.
func (h *handler) failLogs(c *fiber.Ctx, err error) error {
	switch {
	case errors.Is(err, ErrServiceNotRunning):
		return WriteError(c, http.StatusConflict, "service_not_running", "Docker runs no such service for this environment right now: deploy it, then read again", map[string]any{"field": "service"})
	case errors.Is(err, ErrRuntimeUnavailable):
		return WriteError(c, http.StatusServiceUnavailable, "docker_unavailable", "Docker cannot be reached from this server, so logs cannot be read", nil)
	case errors.Is(err, context.DeadlineExceeded):
		return WriteError(c, http.StatusGatewayTimeout, "timeout", "Docker took too long to answer; ask for fewer lines (tail)", map[string]any{"field": "tail"})
	}
	return h.fail(c, err)
}

func serviceLogLines(lines []LogLine) []ServiceLogLine {
	out := make([]ServiceLogLine, len(lines))
	for i, l := range lines {
		stream := "stdout"
		if l.Stderr {
			stream = "stderr"
		}
		out[i] = ServiceLogLine{Time: l.Time.UTC(), Task: l.Task, Node: l.Node, Stream: stream, Text: l.Text}
	}
	return out
}

// ndjsonLines is a batch as NDJSON, one line each.
func ndjsonLines(lines []LogLine) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, l := range serviceLogLines(lines) {
		_ = enc.Encode(l)
	}
	return b.String()
}

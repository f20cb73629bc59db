package app

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/views/partial"
)

// Log streams end after logStreamMax (the browser reconnects from the
// last line it got) and send a comment every logStreamPing, so a
// connection the visitor left is noticed and closed.
const (
	logStreamMax  = 15 * time.Minute
	logStreamPing = 15 * time.Second
)

// serviceLogStream sends a service's new lines as server-sent events:
// each event "lines" carries the <li> of a batch of lines (merged across
// replicas by time) and, as its id, the time of its last line. ?since=
// (RFC 3339) starts after the lines the page already shows; without it the
// stream starts now. The page's htmx SSE extension appends each event.
func (h *handler) serviceLogStream(c *fiber.Ctx) error {
	target, err := h.serviceTargetOf(c)
	if err != nil {
		return err
	}
	if h.logs == nil {
		// 204 tells EventSource not to reconnect; the page says why.
		return c.SendStatus(http.StatusNoContent)
	}
	since := h.now()
	if q := c.Query("since"); q != "" {
		t, err := time.Parse(time.RFC3339Nano, q)
		if err != nil {
			return fiber.NewError(http.StatusBadRequest, "since must be an RFC 3339 time")
		}
		since = t.Add(time.Nanosecond)
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	// The writer runs after this handler returned, when c is no longer
	// ours: it only uses what is captured here.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.UserContext()), logStreamMax)
	log, path := h.log, c.Path()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		if writeSSE(w, "retry: 3000\n: following "+target.service+"\n\n") != nil {
			return
		}
		err := api.FollowLogs(ctx, w, func(ctx context.Context, emit func([]LogLine) error) error {
			return h.readLogs(ctx, target, LogOptions{Follow: true, Since: since}, 0, emit)
		}, func(b []LogLine) string { return logEvent(ctx, b) }, ": ping\n\n", logStreamPing)
		if err != nil {
			log.WarnContext(ctx, "service log stream", "path", path, "err", err)
		}
	})
	return nil
}

// logEvent is one "lines" event carrying the rendered lines.
func logEvent(ctx context.Context, lines []LogLine) string {
	var html bytes.Buffer
	for _, l := range logLineViews(lines) {
		_ = partial.LogLine(l).Render(ctx, &html)
	}
	var ev strings.Builder
	fmt.Fprintf(&ev, "id: %s\nevent: lines\n", logTime(lines[len(lines)-1].Time))
	for _, part := range strings.Split(html.String(), "\n") {
		ev.WriteString("data: " + part + "\n")
	}
	ev.WriteString("\n")
	return ev.String()
}

// writeSSE writes and flushes; an error means the connection is gone.
func writeSSE(w *bufio.Writer, s string) error {
	if _, err := w.WriteString(s); err != nil {
		return err
	}
	return w.Flush()
}

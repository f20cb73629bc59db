package app

import (
	"bytes"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// maxDownloadLines bounds a log download; Docker keeps the rest.
const maxDownloadLines = 100000

// serviceLogDownload sends a service's logs as a text file, one line each:
// time, replica and node, text.
func (h *handler) serviceLogDownload(c *fiber.Ctx) error {
	target, err := h.serviceTargetOf(c)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	err = h.readLogs(c.UserContext(), target, LogOptions{Tail: maxDownloadLines}, 30*time.Second, func(lines []LogLine) error {
		for _, l := range lines {
			buf.WriteString(logTime(l.Time) + " " + l.Task + "@" + l.Node + " " + l.Text + "\n")
		}
		return nil
	})
	if err != nil {
		return h.renderError(c, http.StatusServiceUnavailable, "logs_unavailable", h.logError(c, err))
	}
	c.Attachment(target.app.Name + "-" + target.env.Name + "-" + target.service + ".log")
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(buf.Bytes())
}

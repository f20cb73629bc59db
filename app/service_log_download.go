package app

import (
	"bytes"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// maxDownloadLines bounds a log download; Docker keeps the rest.
const maxDownloadLines = 100000

// serviceLogDownload sends a service's logs, timestamped, as a text file.
func (h *handler) serviceLogDownload(c *fiber.Ctx) error {
	a, _, err := h.loadApplication(c, "overview")
	if err != nil {
		return err
	}
	target, err := h.loadServiceTarget(c, a)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := h.readLogs(c.UserContext(), target, LogOptions{Tail: maxDownloadLines, Timestamps: true}, &buf, 30*time.Second); err != nil {
		return h.renderError(c, http.StatusServiceUnavailable, "logs_unavailable", h.logError(c, err))
	}
	c.Attachment(a.Name + "-" + target.env.Name + "-" + target.service + ".log")
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(buf.Bytes())
}

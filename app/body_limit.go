package app

import (
	"io"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
)

// limitBody reads the request body, which the server streams, into memory
// up to the route's limit: service.MaxSnapshotBytes for local preview
// uploads, BodyLimit for everything else. A longer body is answered 413
// and never read further, so no route buffers more than its limit; the
// connection then closes, since the rest of the body is still unread.
func limitBody(c *fiber.Ctx) error {
	req := c.Request()
	if !req.IsBodyStream() {
		return c.Next()
	}
	limit := BodyLimit
	if api.TakesSnapshotUpload(c.Method(), c.Path()) {
		limit = service.MaxSnapshotBytes
	}
	refuse := func(status int, message string) error {
		c.Context().SetConnectionClose()
		return c.Status(status).SendString(message)
	}
	if req.Header.ContentLength() > limit {
		return refuse(http.StatusRequestEntityTooLarge, "request body too large")
	}
	body, err := io.ReadAll(io.LimitReader(req.BodyStream(), int64(limit)+1))
	if err != nil {
		return refuse(http.StatusBadRequest, "request body could not be read")
	}
	if len(body) > limit {
		return refuse(http.StatusRequestEntityTooLarge, "request body too large")
	}
	req.SetBody(body)
	return c.Next()
}

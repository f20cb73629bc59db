package app

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/store/changecache"
)

// teamRead answers one of the busiest pages' reads of the team's data from
// h.teamReads (kept between changes to that team's data while serve
// listens for them: store/changecache, migration 0028) or from fetch. key
// names the read and its arguments. Requests that may change data (any
// method but GET, HEAD and OPTIONS) always fetch: what they show after
// their change must include it. What it returns may be shared with other
// requests: read it, never change it.
func teamRead[T any](h *handler, c *fiber.Ctx, teamID string, key string, fetch func() (T, error)) (T, error) {
	if !safeMethod(c.Method()) {
		return fetch()
	}
	return changecache.Get(h.teamReads, teamID, key, h.now(), nil, fetch)
}

// safeMethod reports whether a request with this method changes nothing.
func safeMethod(method string) bool {
	switch method {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return true
	}
	return false
}

// readKey is a teamRead key: the read's name and its arguments in Go
// syntax, so that no two argument lists spell the same key.
func readKey(name string, args ...any) string {
	return fmt.Sprintf("%s%#v", name, args)
}

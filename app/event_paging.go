package app

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"
)

// eventPageSize is how many entries one page of an events list (the
// team's audit log, an application's Events tab) shows.
const eventPageSize = 50

// eventCursor reads ?before=, the keyset cursor of an older page of
// events; 0 means the newest page.
func eventCursor(c *fiber.Ctx) int64 {
	before, err := strconv.ParseInt(c.Query("before"), 10, 64)
	if err != nil || before < 0 {
		return 0
	}
	return before
}

// olderEventsURL is the address of the page before cursor next at path,
// keeping the filters that are set; "" when there is no older page.
func olderEventsURL(path string, next int64, filters map[string]string) string {
	if next == 0 {
		return ""
	}
	q := url.Values{"before": {strconv.FormatInt(next, 10)}}
	for k, v := range filters {
		if v != "" {
			q.Set(k, v)
		}
	}
	return path + "?" + q.Encode()
}

package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

// Events reads one page of the team's audit log, newest first; q holds
// GET /events' filters (limit, before, application, actor, kind).
func (c *Client) Events(ctx context.Context, q url.Values) (api.AuditEventList, error) {
	path := "/events"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out api.AuditEventList
	return out, c.Do(ctx, http.MethodGet, path, nil, &out)
}

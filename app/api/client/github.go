package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/slipwayhq/slipway/app/api"
)

// ApprovePullRequest approves the preview of an application's pull request
// from a fork or from an author without write permission.
func (c *Client) ApprovePullRequest(ctx context.Context, app string, number int) (api.PullRequestApproval, error) {
	var out api.PullRequestApproval
	return out, c.Do(ctx, http.MethodPost, "/applications/"+url.PathEscape(app)+"/pull-requests/"+strconv.Itoa(number)+"/approve", nil, &out)
}

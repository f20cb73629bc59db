package client

import (
	"bytes"
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

func previewsPath(app string) string {
	return "/applications/" + url.PathEscape(app) + "/previews"
}

func previewPath(app, slug string) string {
	return previewsPath(app) + "/" + url.PathEscape(slug)
}

// Previews lists an application's previews with their branch states.
func (c *Client) Previews(ctx context.Context, app string) ([]api.Preview, error) {
	var l api.PreviewList
	return l.Previews, c.Do(ctx, http.MethodGet, previewsPath(app), nil, &l)
}

// Preview shows one preview by slug, with its branch state and URLs.
func (c *Client) Preview(ctx context.Context, app, slug string) (api.Preview, error) {
	var out api.Preview
	return out, c.Do(ctx, http.MethodGet, previewPath(app, slug), nil, &out)
}

// CreatePreview creates (or returns) the preview of a branch and slot.
func (c *Client) CreatePreview(ctx context.Context, app string, req api.PreviewCreateRequest) (api.PreviewCreated, error) {
	var out api.PreviewCreated
	return out, c.Do(ctx, http.MethodPost, previewsPath(app), req, &out)
}

// DeployPreview redeploys a preview at its branch head.
func (c *Client) DeployPreview(ctx context.Context, app, slug string) (api.Deployment, error) {
	var out api.Deployment
	return out, c.Do(ctx, http.MethodPost, previewPath(app, slug)+"/deploy", nil, &out)
}

// DeletePreview starts deleting a preview with its volumes.
func (c *Client) DeletePreview(ctx context.Context, app, slug string) (api.Preview, error) {
	var out api.Preview
	return out, c.Do(ctx, http.MethodDelete, previewPath(app, slug), nil, &out)
}

// PrunePreviews lists (Confirm false) or deletes the previews whose branch
// is gone.
func (c *Client) PrunePreviews(ctx context.Context, app string, req api.PreviewPruneRequest) (api.PreviewPruneResponse, error) {
	var out api.PreviewPruneResponse
	return out, c.Do(ctx, http.MethodPost, previewsPath(app)+"/prune", req, &out)
}

// DeployLocalPreview uploads a local worktree snapshot (a git bundle from
// gitsnapshot.Create) and deploys it as the preview of its branch and slot.
func (c *Client) DeployLocalPreview(ctx context.Context, app, slot string, bundle []byte) (api.PreviewLocalDeployed, error) {
	var out api.PreviewLocalDeployed
	path := previewsPath(app) + "/local"
	if slot != "" {
		path += "?" + url.Values{"slot": {slot}}.Encode()
	}
	h := http.Header{"Content-Type": {api.SnapshotContentType}}
	return out, c.send(ctx, http.MethodPost, path, h, bytes.NewReader(bundle), &out)
}

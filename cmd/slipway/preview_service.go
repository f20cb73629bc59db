package main

import (
	"context"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/store"
)

// newPreviewService builds the preview machinery the API, the dashboard
// and the GitHub flow share. heads lists branch heads for preview branch
// states: reads of one repository that arrive while a listing runs share
// it.
func newPreviewService(st *store.Store, cfg config.Config, heads *build.Lister) *service.Previews {
	auth := build.Auth{AllowFileURLs: cfg.Git.AllowFileURLs, Outbound: outboundPolicy(cfg)}
	return &service.Previews{
		Store:  st,
		Limits: service.PreviewLimits{MaxPerApplication: cfg.Previews.MaxPerApplication, MaxTotal: cfg.Previews.MaxTotal},
		ListHeads: func(ctx context.Context, url string) (map[string]string, error) {
			return heads.Heads(ctx, url, auth, 0)
		},
	}
}

// previewBounds are the pipeline's share of the [previews] settings.
func previewBounds(cfg config.Config) pipeline.PreviewBounds {
	p := cfg.Previews
	return pipeline.PreviewBounds{DefaultCPUMillis: p.DefaultCPUMillis, DefaultMemoryBytes: p.DefaultMemoryBytes, MaxReplicas: p.MaxReplicas}
}

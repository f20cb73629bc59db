package main

import (
	"log/slog"
	"time"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/runtime/image"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/store"
)

// pipelineSettings are the worker's deployment settings.
type pipelineSettings struct {
	ConvergenceTimeout time.Duration
	PrepareTimeout     time.Duration
	// PullImages lets missing images be pulled (off where no registry is
	// reachable, as in tests).
	PullImages bool
	// Installation labels the images this installation builds.
	Installation string
	// Ingress joins the gateway to routed environments' overlays
	// (ingress.enabled).
	Ingress bool
	// Outbound checks the registries images are pulled from and the git
	// remotes sources are built from (outboundPolicy).
	Outbound *outbound.Policy
}

// newPipeline connects the deployment pipeline to Docker. The client
// negotiates the API version, so engines from 20.10 (API 1.41) on work.
func newPipeline(st *store.Store, logger *slog.Logger, s pipelineSettings) (*pipeline.Pipeline, error) {
	engine, err := swarm.NewEngine()
	if err != nil {
		return nil, err
	}
	if s.Installation == "" {
		s.Installation = "default"
	}
	return &pipeline.Pipeline{
		Store:              st,
		Driver:             swarm.NewDriver(engine, logger),
		Images:             image.NewResolver(engine, s.PullImages).WithOutbound(s.Outbound),
		Builds:             &build.Builder{Engine: engine, Installation: s.Installation, Pull: s.PullImages, Logger: logger},
		Outbound:           s.Outbound,
		Log:                logger,
		Routes:             gatewayRoutes(st, engine, logger, s.Ingress),
		ConvergenceTimeout: s.ConvergenceTimeout,
		PrepareTimeout:     s.PrepareTimeout,
		Links:              true,
		// Follow-ups go through the River client working the deploy job.
		Queue: jobs.Queue{},
	}, nil
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/backupctl"
	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/scheduler"
	"github.com/slipwayhq/slipway/store"
)

// backupDirectory is the embedded default target: <data_dir>/backups on
// the manager.
func backupDirectory(cfg config.Config) string {
	return filepath.Join(cfg.DataDir, "backups")
}

// newScheduler runs scheduled jobs through the worker's pipeline.
func newScheduler(st *store.Store, p *pipeline.Pipeline, q scheduler.Queue, logger *slog.Logger) (*scheduler.Scheduler, error) {
	d, ok := p.Driver.(*swarm.Driver)
	if !ok {
		return nil, fmt.Errorf("scheduler: the pipeline's driver is %T, not the Swarm driver", p.Driver)
	}
	return &scheduler.Scheduler{Store: st, Currents: p, Driver: d, Queue: q, Log: logger}, nil
}

// newBackups runs backups and restores. The archiver runs in the image
// serve keeps the gateway in ([ingress] image, or one built from this very
// binary), on this worker's node: the socket it talks to is here.
func newBackups(st *store.Store, p *pipeline.Pipeline, kr *keyring.Keyring, cfg config.Config, logger *slog.Logger) (*backupctl.Controller, error) {
	d, ok := p.Driver.(*swarm.Driver)
	if !ok {
		return nil, fmt.Errorf("backups: the pipeline's driver is %T, not the Swarm driver", p.Driver)
	}
	cli, err := swarm.NewEngine()
	if err != nil {
		return nil, err
	}
	return &backupctl.Controller{
		Store: st, Currents: p, Driver: d, Log: logger,
		Targets:       &backupctl.Targets{Store: st, Keyring: kr, Directory: backupDirectory(cfg)},
		ArchiverImage: archiverImage(cli, cfg, logger),
		SocketDir:     filepath.Join(cfg.DataDir, "backup-sockets"),
		Placement:     localNode(cli),
	}, nil
}

// archiverImage resolves the archiver's image once.
func archiverImage(cli client.APIClient, cfg config.Config, logger *slog.Logger) func(context.Context) (string, error) {
	var mu sync.Mutex
	var built string
	return func(ctx context.Context) (string, error) {
		if cfg.Ingress.Image != "" {
			return cfg.Ingress.Image, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if built != "" {
			return built, nil
		}
		tag, err := gatewayctl.New(cli, logger, "").BuildDevImage(ctx, "")
		if err != nil {
			return "", err
		}
		built = tag
		return built, nil
	}
}

// localNode pins archiver containers to this worker's Swarm node, where
// their socket is. Volumes are node-local: once volumes record the node
// they were created on, a volume on another node needs the archiver to
// reach the worker over TCP instead (not yet: docs/backups.md).
func localNode(cli client.APIClient) func(ctx context.Context, env swarm.EnvRef, volume string) ([]string, error) {
	return func(ctx context.Context, _ swarm.EnvRef, _ string) ([]string, error) {
		info, err := cli.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("docker info: %w", err)
		}
		if info.Swarm.NodeID == "" {
			return nil, nil
		}
		return []string{"node.id==" + info.Swarm.NodeID}, nil
	}
}

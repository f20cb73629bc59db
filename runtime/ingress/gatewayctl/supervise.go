package gatewayctl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	cerrdefs "github.com/containerd/errdefs"
)

// DefaultSuperviseInterval is how often a Supervisor checks the container
// when its Interval is zero.
const DefaultSuperviseInterval = 15 * time.Second

// Supervisor keeps the gateway container running and matching Config: a
// removed container is created again, a stopped one started, and one made
// from another image or configuration replaced (Manager.EnsureGateway). A
// container it had to create is joined again to the ingress overlays that
// Networks lists. It is not safe for concurrent use: call Ensure once,
// then Keep in one goroutine.
type Supervisor struct {
	Manager *Manager
	// Config is the container to keep. An empty Image is built with
	// BuildImage.
	Config Config
	// BuildImage returns the gateway image when Config.Image is empty (the
	// image BuildDevImage makes of the running binary). It is called again
	// when that image disappears.
	BuildImage func(ctx context.Context) (string, error)
	// Networks lists the overlays the gateway must be on: those of the
	// environments with deployed routes.
	Networks func(ctx context.Context) ([]string, error)
	// Interval is the time between checks (DefaultSuperviseInterval when
	// zero).
	Interval time.Duration

	image string
	// joined is the container whose overlays are complete; another ID
	// means a new container that must join them.
	joined string
	// addresses are the gateway's addresses on the overlays it joined.
	addresses map[string]string
	lastErr   string
}

// Ensure is one check: it makes the container exist, match Config and
// run, and joins a container it has not seen before to every overlay of
// Networks it is not on yet. It returns the container's ID.
func (s *Supervisor) Ensure(ctx context.Context) (string, error) {
	cfg := s.Config
	if cfg.Image == "" {
		if s.image == "" {
			if s.BuildImage == nil {
				return "", errors.New("gateway image is empty and nothing builds one (gateway_image_missing)")
			}
			img, err := s.BuildImage(ctx)
			if err != nil {
				return "", fmt.Errorf("build gateway image: %w", err)
			}
			s.image = img
		}
		cfg.Image = s.image
	}
	id, err := s.Manager.EnsureGateway(ctx, cfg)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			// The built image was removed: build it again next time.
			s.image = ""
		}
		return "", err
	}
	if id == s.joined {
		return id, s.noteAddresses(ctx)
	}
	if s.joined != "" {
		s.Manager.log.Info("gateway container was re-created", "container", s.Manager.name, "id", id)
	}
	if err := s.join(ctx); err != nil {
		return id, err
	}
	s.joined = id
	return id, s.noteAddresses(ctx)
}

// join connects the container to every overlay of Networks it is not on.
func (s *Supervisor) join(ctx context.Context) error {
	if s.Networks == nil {
		return nil
	}
	names, err := s.Networks(ctx)
	if err != nil {
		return fmt.Errorf("list routed ingress networks: %w", err)
	}
	on, err := s.Manager.Addresses(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if on[n] != "" {
			continue
		}
		ip, err := s.Manager.ConnectNetwork(ctx, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.Manager.log.Info("gateway joined ingress network", "container", s.Manager.name, "network", n, "address", ip)
	}
	return errors.Join(errs...)
}

// noteAddresses records the gateway's addresses and warns about each one
// that changed on a network it was already on: a new or restarted
// container gets new ones, and routed services trust the address they
// were deployed with until the worker's next drift scan rolls them onto
// the new one (jobs.ReconcileWorker: SLIPWAY_INGRESS_PROXIES is part of
// their spec).
func (s *Supervisor) noteAddresses(ctx context.Context) error {
	on, err := s.Manager.Addresses(ctx)
	if err != nil {
		return err
	}
	// Its own bridge network is not one services trust it on.
	cfg := s.Config
	cfg.Name = s.Manager.name
	bridge := cfg.withDefaults().Network
	// The last address known on each network stays until another one is
	// seen: a check while the container is stopped (no address) must not
	// hide the change once it runs again.
	next := make(map[string]string, len(s.addresses)+len(on))
	maps.Copy(next, s.addresses)
	for n, ip := range on {
		if ip == "" {
			continue
		}
		if old := s.addresses[n]; n != bridge && old != "" && old != ip {
			s.Manager.log.Warn("the gateway's address on a network changed: services routed there trust the old one (SLIPWAY_INGRESS_PROXIES) until the next drift repair rolls them onto the new one (within reconciliation.scan_interval_seconds)",
				"container", s.Manager.name, "network", n, "old", old, "new", ip)
		}
		next[n] = ip
	}
	s.addresses = next
	return nil
}

// Start runs Ensure now, then Keep in a goroutine until ctx ends, and
// returns the first Ensure's result: a failure there is retried too.
func (s *Supervisor) Start(ctx context.Context) (string, error) {
	id, err := s.Ensure(ctx)
	if err != nil {
		s.lastErr = err.Error()
	}
	go s.Keep(ctx)
	return id, err
}

// Keep calls Ensure every Interval until ctx ends. A failure is logged
// once until it changes or the container recovers.
func (s *Supervisor) Keep(ctx context.Context) {
	t := time.NewTicker(s.interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, err := s.Ensure(ctx)
		s.report(ctx, err)
	}
}

// report logs err if it differs from the last one, and a recovery.
func (s *Supervisor) report(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	switch {
	case err == nil && s.lastErr != "":
		s.Manager.log.Info("gateway container is running again", "container", s.Manager.name)
		s.lastErr = ""
	case err != nil && err.Error() != s.lastErr:
		s.Manager.log.Warn("cannot keep the gateway container running; retrying", "container", s.Manager.name, "every", s.interval(), "err", err)
		s.lastErr = err.Error()
	}
}

func (s *Supervisor) interval() time.Duration {
	if s.Interval <= 0 {
		return DefaultSuperviseInterval
	}
	return s.Interval
}

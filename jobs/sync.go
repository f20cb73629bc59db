package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/pipeline"
	"github.com/slipwayhq/slipway/runtime/build"
	"github.com/slipwayhq/slipway/store"
)

// SyncInterval is how often sync_poll looks for applications whose
// branches are due; each application is listed at its own interval.
const SyncInterval = 30 * time.Second

// Sync defaults and the listing-failure backoff from the spec.
const (
	DefaultSyncInterval = 300 * time.Second
	syncBackoffMin      = time.Minute
	syncBackoffMax      = time.Hour
	// VerbBranchSynced is the event recorded when sync requests a deployment.
	VerbBranchSynced = "branch_synced"
)

// SyncPollArgs asks for a pass over every environment that deploys on push.
type SyncPollArgs struct{}

// Kind is the River job kind.
func (SyncPollArgs) Kind() string { return "sync_poll" }

// InsertOpts: passes requested within one interval collapse into one.
func (SyncPollArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: SyncInterval}}
}

// SyncPeriodicJob is the periodic job the River client registers beside
// SyncWorker.
func SyncPeriodicJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(SyncInterval),
		func() (river.JobArgs, *river.InsertOpts) { return SyncPollArgs{}, nil },
		&river.PeriodicJobOpts{ID: SyncPollArgs{}.Kind(), RunOnStart: true})
}

// SyncWorker deploys branch heads that moved: for every environment with
// sync on that follows an unpinned branch, and every preview (of a
// pushed, trusted branch), a head past the commit its last deployment
// fetched gets exactly one deployment.
type SyncWorker struct {
	river.WorkerDefaults[SyncPollArgs]
	Store *store.Store
	// Lister shares branch listings: one remote listing per repository per
	// interval, however many applications read it.
	Lister *build.Lister
	// Enqueue inserts the deploy job in tx's transaction; nil uses the
	// River client working the current job.
	Enqueue func(ctx context.Context, tx *store.Store, args river.JobArgs) error
	Log     *slog.Logger
	Now     func() time.Time
	// Credentials reads private repositories; nil lists anonymously.
	Credentials pipeline.RepositoryCredentials
	// AllowFileURLs lets applications read file:// repositories (the
	// operator's [git] allow_file_urls).
	AllowFileURLs bool
	// Outbound decides where repositories may be listed from (package
	// outbound); nil is the strict policy.
	Outbound *outbound.Policy
	// Previews redeploys previews whose branch moved; nil leaves previews
	// alone (environments still sync).
	Previews PreviewSyncer
}

// repositoryAuth is the application's credentials for url.
func (w *SyncWorker) repositoryAuth(ctx context.Context, a *syncApp, url string) (build.Auth, error) {
	auth := build.Auth{}
	if w.Credentials != nil {
		var err error
		if auth, err = w.Credentials.RepositoryAuth(ctx, a.teamID, a.appID, url); err != nil {
			return build.Auth{}, err
		}
	}
	auth.AllowFileURLs = w.AllowFileURLs
	auth.Outbound = w.Outbound
	return auth, nil
}

func (w *SyncWorker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Work runs one pass.
func (w *SyncWorker) Work(ctx context.Context, _ *river.Job[SyncPollArgs]) error {
	return w.Poll(ctx)
}

// syncApp is one application's environments due for a listing.
type syncApp struct {
	teamID, appID string
	conn          *manifest.ManifestSource
	interval      time.Duration
	failures      int
	targets       []store.SyncTarget
}

// Poll lists the branches of every due application, one listing per
// repository URL, and requests the deployments the heads call for.
func (w *SyncWorker) Poll(ctx context.Context) error {
	if w.Lister == nil {
		w.Lister = &build.Lister{}
	}
	if w.Enqueue == nil {
		w.Enqueue = InsertFromWorker
	}
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
	targets, err := w.Store.ListSyncTargets(ctx)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	now := w.now()
	byURL := map[string][]*syncApp{}
	var order []string
	apps := map[string]*syncApp{}
	for _, t := range targets {
		a, seen := apps[t.ApplicationID]
		if !seen {
			a = w.dueApp(t, now)
			apps[t.ApplicationID] = a
			if a != nil {
				url := a.conn.Repository.URL
				if _, ok := byURL[url]; !ok {
					order = append(order, url)
				}
				byURL[url] = append(byURL[url], a)
			}
		}
		if a != nil {
			a.targets = append(a.targets, t)
		}
	}
	for _, url := range order {
		group := byURL[url]
		maxAge := group[0].interval
		for _, a := range group {
			maxAge = min(maxAge, a.interval)
		}
		// A listing younger than the shortest interval among the readers is
		// reused: one remote listing per repository per interval.
		for _, a := range group {
			// Each reader lists with its own credentials (one team's token
			// never lists for another); the Lister shares listings made
			// with the same ones.
			auth, err := w.repositoryAuth(ctx, a, url)
			if err != nil {
				return err
			}
			heads, listErr := w.Lister.Heads(ctx, url, auth, maxAge)
			if err := w.syncApp(ctx, a, heads, listErr, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// dueApp returns the application of t when its branches should be listed
// now; nil when it is not repository-backed, has no sync, or is not due.
func (w *SyncWorker) dueApp(t store.SyncTarget, now time.Time) *syncApp {
	m, err := manifest.Decode(t.Manifest, "json")
	if err != nil || m.Spec.Manifest == nil || m.Spec.Manifest.Repository == nil || m.Spec.Manifest.Sync == nil {
		return nil
	}
	conn := m.Spec.Manifest
	interval := DefaultSyncInterval
	if s := conn.Sync.IntervalSeconds; s >= manifest.MinSyncIntervalSeconds && s <= manifest.MaxSyncIntervalSeconds {
		interval = time.Duration(s) * time.Second
	}
	// Webhook sync is due before its first check and when a push hint
	// (RequestSyncCheck) made it due; syncApp never schedules it on a timer.
	if t.NextCheckAt != nil && now.Before(*t.NextCheckAt) {
		return nil
	}
	return &syncApp{teamID: t.TeamID, appID: t.ApplicationID, conn: conn, interval: interval, failures: t.Failures}
}

// syncApp records the check's outcome and requests deployments.
func (w *SyncWorker) syncApp(ctx context.Context, a *syncApp, heads map[string]string, listErr error, now time.Time) error {
	if listErr != nil {
		failures := a.failures + 1
		backoff := syncBackoffMin << min(failures-1, 6)
		backoff = min(backoff, syncBackoffMax)
		w.Log.WarnContext(ctx, "sync: listing branches failed", "application", a.appID, "error", listErr, "retry_in", backoff)
		return w.Store.RecordSyncCheck(ctx, a.teamID, a.appID, now, listErr.Error(), failures, now.Add(backoff))
	}
	next := now.Add(a.interval)
	if a.conn.Sync.Mode == manifest.SyncWebhook {
		// Only a push hint makes it due again; the far future stands for never.
		next = now.Add(100 * 365 * 24 * time.Hour)
	}
	if err := w.Store.RecordSyncCheck(ctx, a.teamID, a.appID, now, "", 0, next); err != nil {
		return err
	}
	for _, t := range a.targets {
		if err := w.syncEnvironment(ctx, a, t, heads); err != nil {
			return err
		}
	}
	return nil
}

// syncEnvironment applies the spec's rules to one environment or preview.
func (w *SyncWorker) syncEnvironment(ctx context.Context, a *syncApp, t store.SyncTarget, heads map[string]string) error {
	branch := t.Environment.Branch
	if branch == "" {
		branch = a.conn.Repository.Branch
	}
	head, ok := heads[branch]
	switch {
	case !ok: // the branch is gone: nothing to deploy
		return nil
	case t.LastFetched == "": // nothing follows before its first deployment
		return nil
	case head == t.LastFetched: // deployed (or tried) already
		return nil
	case head == t.Requested: // each head once; a failed head waits for the branch to move
		return nil
	case t.Live: // coalesce: the next pass after it finishes requests once
		return nil
	}
	actor := "sync:" + a.conn.Sync.Mode
	return w.Store.WithTx(ctx, func(tx *store.Store) error {
		d, ok, err := w.requestSyncDeployment(ctx, tx, t, branch, head, actor) // sync_preview.go
		if err != nil || !ok {
			return err
		}
		if _, err := tx.RecordEvent(ctx, t.TeamID, store.EventParams{
			Actor: actor, Verb: VerbBranchSynced, ObjectType: "environment", ObjectID: t.Environment.ID,
			Details: map[string]any{"branch": branch, "commit": head, "deployment_id": d.ID, "application_id": t.ApplicationID,
				"preview": t.Environment.Kind == store.KindPreview},
		}); err != nil {
			return err
		}
		return NotifyGitHubTx(ctx, tx, w.Enqueue, d)
	})
}

// BranchPushed implements BranchPushHook: a push hint makes the
// application's branches due for listing on the next pass. The hint never
// names what to deploy; the listing decides.
func (w *SyncWorker) BranchPushed(ctx context.Context, teamID, appID, _ string) error {
	return w.Store.RequestSyncCheck(ctx, teamID, appID)
}

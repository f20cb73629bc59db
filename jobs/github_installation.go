package jobs

import (
	"context"
	"errors"
	"strconv"

	"github.com/riverqueue/river"

	"github.com/slipwayhq/slipway/store"
)

// GitHubInstallationArgs handles an installation or
// installation_repositories delivery.
type GitHubInstallationArgs struct {
	DeliveryID string `json:"delivery_id"`
}

// Kind is the job's stable name.
func (GitHubInstallationArgs) Kind() string { return "github_installation" }

// GitHubInstallationWorker keeps installations in step with GitHub:
// created records it (the setup callback binds it to a team), deleted and
// suspend disconnect it (its events then act on nothing and its repository
// links go), unsuspend reconnects it, and removed repositories lose their
// links.
type GitHubInstallationWorker struct {
	river.WorkerDefaults[GitHubInstallationArgs]
	deps GitHubDeps
}

// Work applies the event.
func (w *GitHubInstallationWorker) Work(ctx context.Context, job *river.Job[GitHubInstallationArgs]) error {
	st := w.deps.Store
	d, s, err := githubLoadDelivery(ctx, st, job.Args.DeliveryID)
	if err != nil {
		return err
	}
	id := d.InstallationID
	before, err := st.GitHubInstallationByID(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	verb := ""
	switch {
	case d.Event == "installation" && (d.Action == "created" || d.Action == "new_permissions_accepted"):
		_, err = st.UpsertGitHubInstallation(ctx, id, s.AccountLogin, s.AccountType)
	case d.Event == "installation" && d.Action == "deleted":
		verb = "github.installation_deleted"
		err = githubIgnoreMissing(st.DeleteGitHubInstallation(ctx, id))
	case d.Event == "installation" && d.Action == "suspend":
		verb = "github.installation_suspended"
		err = githubIgnoreMissing(st.SetGitHubInstallationSuspended(ctx, id, true))
	case d.Event == "installation" && d.Action == "unsuspend":
		verb = "github.installation_unsuspended"
		err = githubIgnoreMissing(st.SetGitHubInstallationSuspended(ctx, id, false))
	case d.Event == "installation_repositories" && d.Action == "removed":
		verb = "github.repositories_removed"
		_, err = st.UnlinkGitHubRepositories(ctx, id, s.RepositoriesRemoved)
	}
	if err != nil {
		return err
	}
	if verb != "" && before.TeamID != "" {
		if _, err := st.RecordEvent(ctx, before.TeamID, store.EventParams{
			Actor: "github", Verb: verb, ObjectType: "github_installation", ObjectID: strconv.FormatInt(id, 10),
			Details: map[string]any{"account": before.AccountLogin, "delivery_id": d.DeliveryID},
		}); err != nil {
			return err
		}
	}
	w.deps.finishDelivery(ctx, d.DeliveryID)
	return nil
}

// ignoreMissing: an event about an installation never recorded needs no
// bookkeeping.
func githubIgnoreMissing(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

package service

import (
	"context"
	"errors"

	"github.com/slipwayhq/slipway/store"
)

// ResetToRepository makes the manifest last read from the application's
// repository the saved manifest again (a new revision), discarding edits
// made since. It deploys nothing.
func ResetToRepository(ctx context.Context, st *store.Store, a Actor, appID string) (store.ManifestRevision, error) {
	state, err := st.GetRepositoryState(ctx, a.TeamID, appID)
	if err != nil {
		return store.ManifestRevision{}, err
	}
	if state.LastReadManifest == nil {
		if _, err := st.GetApplication(ctx, a.TeamID, appID); err != nil {
			return store.ManifestRevision{}, err
		}
		return store.ManifestRevision{}, &InputError{Field: "application", Code: "repository_never_read",
			Message: "no manifest was read from the repository yet: deploy the application first"}
	}
	var rev store.ManifestRevision
	err = st.WithTx(ctx, func(tx *store.Store) error {
		rev, err = tx.CreateManifestRevision(ctx, a.TeamID, appID, store.RevisionParams{
			Manifest: state.LastReadManifest, Source: string(state.LastReadManifest), SourceFormat: "json", Author: a.String(),
		})
		if err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, a.TeamID, store.EventParams{
			Actor: a.String(), Verb: "manifest.repository_reset", ObjectType: "application", ObjectID: appID,
			Details: map[string]any{"revision": rev.Revision, "commit": state.LastReadCommit},
		})
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return store.ManifestRevision{}, err
	}
	return rev, err
}

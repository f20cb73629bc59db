package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// RenamedApplication is what RenameApplication did.
type RenamedApplication struct {
	Application store.Application
	OldName     string
	// Revision is the saved revision naming the application anew; 0 when
	// the application has no manifest yet.
	Revision int64
}

// RenameApplication renames an application, keeping its id and with it
// its environments, deployments, secrets, volumes and running Swarm
// objects (all keyed by ids, never by the application's name). The saved
// manifest's metadata.name follows in a new revision, so the next apply of
// the renamed manifest targets this application; nothing is deployed.
// An application whose manifest is read from a repository is refused with
// repository_managed: its name must match the fetched manifests'.
func RenameApplication(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, name string, expectedRevision *int64) (RenamedApplication, error) {
	name = strings.TrimSpace(name)
	if err := CheckApplicationName(name); err != nil {
		return RenamedApplication{}, err
	}
	var out RenamedApplication
	err := st.WithTx(ctx, func(tx *store.Store) error {
		app, err := tx.GetApplication(ctx, a.TeamID, appID)
		if err != nil {
			return err
		}
		out.OldName = app.Name
		if app.Name == name {
			out.Application, out.Revision = app, app.CurrentRevision
			return nil
		}
		saved, current, err := savedmanifest.Current(ctx, tx, a.TeamID, app.ID)
		if err != nil {
			return err
		}
		if saved != nil && saved.Spec.Manifest != nil {
			return &InputError{Field: "name", Code: "repository_managed",
				Message: "the manifest is read from a repository and must keep its name: disconnect it (remove spec.manifest), rename, then rename it in the repository"}
		}
		if out.Application, err = tx.RenameApplication(ctx, a.TeamID, app.ID, name); err != nil {
			return conflictInput(err, fmt.Sprintf("an application named %q already exists in this team", name))
		}
		if err := record(ctx, tx, a, "application.rename", "application", app.ID, map[string]any{"from": app.Name, "to": name}); err != nil {
			return err
		}
		if current.Revision == 0 {
			return nil
		}
		res, err := editManifest(ctx, tx, a, enqueue, app.ID, expectedRevision, func(m *manifest.Manifest) error {
			m.Metadata.Name = name
			return nil
		}, false, true)
		if err != nil {
			return err
		}
		out.Revision = res.Revision.Revision
		out.Application.CurrentRevision = out.Revision
		return nil
	})
	return out, err
}

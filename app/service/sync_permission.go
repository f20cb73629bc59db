package service

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/manifest"
)

// PermissionError is a save the caller's scopes allow only in part: the
// route's own scope (apps:write) was granted, but what this manifest would
// do needs another.
type PermissionError struct {
	Scope   auth.Scope
	Message string
}

func (e *PermissionError) Error() string { return e.Message }

// repositorySyncs reports whether m's connection deploys pushes.
func repositorySyncs(m *manifest.Manifest) bool {
	return m != nil && m.Spec.Manifest != nil && m.Spec.Manifest.Sync != nil && m.Spec.Manifest.Sync.Mode != ""
}

// syncNeedsDeploy names why saving next (over previous, nil for a first
// save) deploys on its own, "" when it does not: turning the connection's
// sync on, or declaring environments with sync = true while the repository
// syncs, deploys what moved at the next listing.
func syncNeedsDeploy(previous, next *manifest.Manifest) string {
	if !repositorySyncs(next) {
		return ""
	}
	if !repositorySyncs(previous) {
		return "turning the repository's sync on (spec.manifest.sync)"
	}
	var synced []string
	for name, block := range next.Spec.Environments {
		if block.Sync != nil && *block.Sync {
			synced = append(synced, name)
		}
	}
	if len(synced) == 0 {
		return ""
	}
	sort.Strings(synced)
	return fmt.Sprintf("declaring sync = true for %s while the repository syncs", strings.Join(synced, ", "))
}

// checkSyncPermission refuses a save that deploys on its own (see
// syncNeedsDeploy) to a caller without apps:deploy. Actors of the API and
// the dashboard always carry their scopes; the control plane's own actors
// (a repository fetch, the tests' service calls) carry none and are not
// checked.
func checkSyncPermission(a Actor, previous, next *manifest.Manifest) error {
	if a.Scopes == nil || slices.Contains(a.Scopes, auth.AppsDeploy) {
		return nil
	}
	if why := syncNeedsDeploy(previous, next); why != "" {
		return &PermissionError{Scope: auth.AppsDeploy,
			Message: fmt.Sprintf("%s deploys what moved at the next listing: it needs the %s permission as well as %s", why, auth.AppsDeploy, auth.AppsWrite)}
	}
	return nil
}

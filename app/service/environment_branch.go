package service

import (
	"context"
	"strings"

	"github.com/slipwayhq/slipway/savedmanifest"
	"github.com/slipwayhq/slipway/store"
)

// SetEnvironmentBranch makes an environment of a repository-backed
// application read its manifest (and `self` builds) from branch, pinned to
// commit when one is given; an empty commit follows the branch head. It
// deploys nothing: the next deployment reads the new ref. An environment
// whose manifest block sets its source follows the block
// (environment_declared); an application without a manifest repository
// has no branch to follow (manifest_repository_required).
func SetEnvironmentBranch(ctx context.Context, st *store.Store, a Actor, appID, envName, branch, commit string) (store.Environment, error) {
	if msg := checkBranchName(branch); msg != "" {
		return store.Environment{}, &InputError{Field: "branch", Code: "branch_invalid", Message: msg}
	}
	commit = strings.ToLower(commit)
	if commit != "" && (len(commit) != 40 || strings.Trim(commit, "0123456789abcdef") != "") {
		return store.Environment{}, &InputError{Field: "commit", Code: "commit_invalid",
			Message: "commit must be a full 40-character hexadecimal hash"}
	}
	var out store.Environment
	err := st.WithTx(ctx, func(tx *store.Store) error {
		env, err := EnvironmentByName(ctx, tx, a.TeamID, appID, envName) // previews follow their own branch
		if err != nil {
			return err
		}
		if err := refuseSourceDeclared(ctx, tx, a, appID, env); err != nil {
			return err
		}
		saved, _, err := savedmanifest.Current(ctx, tx, a.TeamID, appID)
		if err != nil {
			return err
		}
		if saved == nil || saved.Spec.Manifest == nil {
			return &InputError{Field: "branch", Code: "manifest_repository_required",
				Message: "a branch needs a manifest repository: connect one (spec.manifest) first; without one an environment deploys the saved manifest"}
		}
		out, err = tx.UpdateEnvironment(ctx, a.TeamID, env.ID, store.EnvironmentUpdate{Branch: &branch, Commit: &commit})
		if err != nil {
			return err
		}
		_, err = tx.RecordEvent(ctx, a.TeamID, store.EventParams{
			Actor: a.String(), Verb: "environment.branch_set", ObjectType: "environment", ObjectID: env.ID,
			Details: map[string]any{"branch": branch, "commit": commit, "application_id": appID},
		})
		return err
	})
	return out, err
}

// checkBranchName applies git's rules for branch names that matter here.
func checkBranchName(b string) string {
	switch {
	case b == "":
		return "a branch name is required"
	case strings.HasPrefix(b, "-"), strings.HasPrefix(b, "/"), strings.HasSuffix(b, "/"),
		strings.HasSuffix(b, ".lock"), strings.Contains(b, ".."), strings.Contains(b, "//"), strings.Contains(b, "@{"):
		return "branch " + b + " is not a valid git branch name"
	case strings.ContainsAny(b, " ~^:?*[\\\x7f") || strings.IndexFunc(b, func(r rune) bool { return r < 0x20 }) >= 0:
		return "branch " + b + " is not a valid git branch name"
	}
	return ""
}

// RequestDeploymentAt requests a deployment like RequestDeployment that
// reads a one-off branch or commit instead of the environment's (for
// repository-backed applications); the environment keeps its own ref.
func RequestDeploymentAt(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName string, ref store.GitRef) (store.Deployment, error) {
	if (ref.Branch == "") == (ref.Commit == "") {
		return store.Deployment{}, &InputError{Field: "branch", Code: "ref_conflict", Message: "give exactly one of --branch and --commit"}
	}
	if ref.Branch != "" {
		if msg := checkBranchName(ref.Branch); msg != "" {
			return store.Deployment{}, &InputError{Field: "branch", Code: "branch_invalid", Message: msg}
		}
	}
	ref.Commit = strings.ToLower(ref.Commit)
	if ref.Commit != "" && (len(ref.Commit) != 40 || strings.Trim(ref.Commit, "0123456789abcdef") != "") {
		return store.Deployment{}, &InputError{Field: "commit", Code: "commit_invalid", Message: "commit must be a full 40-character hexadecimal hash"}
	}
	var d store.Deployment
	// The outer transaction holds the deploy job until the ref is recorded:
	// the worker never captures without it.
	err := st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if d, err = RequestDeployment(ctx, tx, a, enqueue, appID, envName); err != nil {
			return err
		}
		return tx.SetDeploymentRef(ctx, a.TeamID, d.ID, ref)
	})
	return d, err
}

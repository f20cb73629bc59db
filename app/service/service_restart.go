package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slipwayhq/slipway/jobs"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// CodeServiceNotFound: a service command named a service the environment
// does not run.
const CodeServiceNotFound = "service_not_found"

// RestartService asks a worker to restart every task of a service the
// environment runs (a forced rolling update: same spec, new containers,
// one at a time as the service's rollout settings say) and records it as
// a service.restart event, in one transaction.
func RestartService(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName, service string) error {
	return st.WithTx(ctx, func(tx *store.Store) error {
		env, err := EnvironmentByName(ctx, tx, a.TeamID, appID, envName)
		if err != nil {
			return err
		}
		if err := requireRunningService(ctx, tx, env, service); err != nil {
			return err
		}
		if err := enqueue(ctx, tx, jobs.ServiceRestartArgs{TeamID: a.TeamID, EnvironmentID: env.ID, Service: service}); err != nil {
			return fmt.Errorf("queue restart: %w", err)
		}
		return record(ctx, tx, a, "service.restart", "environment", env.ID, map[string]any{"service": service, "application_id": appID})
	})
}

// ScaleResult is what ScaleService changed.
type ScaleResult struct {
	ApplyResult
	// Variable names the environment variable set when the manifest's
	// replicas is a reference like "${{ vars.web_replicas }}"; "" when
	// spec.services[].replicas itself was changed.
	Variable   string
	Deployment store.Deployment
}

// ScaleService sets how many replicas a service runs and deploys the
// environment. When the service's replicas is one variable reference
// ("${{ vars.web_replicas }}"), only the environment's value of that
// variable changes, so other environments keep theirs; otherwise the
// manifest's replicas changes, for every environment, and the others take
// it at their next deployment. Either is a field edit: a new revision.
func ScaleService(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, appID, envName, service string, replicas int64) (ScaleResult, error) {
	var res ScaleResult
	if replicas < 1 || replicas > manifest.MaxReplicas {
		return res, &InputError{Field: "replicas", Code: "replicas_invalid", Message: fmt.Sprintf("replicas must be 1–%d", manifest.MaxReplicas)}
	}
	env, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName)
	if err != nil {
		return res, err
	}
	rev, err := st.GetCurrentManifestRevision(ctx, a.TeamID, appID)
	if errors.Is(err, store.ErrNotFound) {
		return res, &InputError{Field: "application", Code: "manifest_missing", Message: "the application has no saved manifest yet: apply one first"}
	}
	if err != nil {
		return res, err
	}
	saved, err := manifest.Decode(rev.Manifest, "json")
	if err != nil {
		return res, fmt.Errorf("decode saved revision %d: %w", rev.Revision, err)
	}
	s, err := findService(saved, service)
	if err != nil {
		return res, &NotFoundError{Field: "service", Code: CodeServiceNotFound, Message: fmt.Sprintf("the manifest has no service %q", service)}
	}
	edit := EditService(service, ServiceEdit{Replicas: &replicas})
	if name, ok := replicasVariable(s.Replicas); ok {
		res.Variable = name
		value := manifest.IntValue(replicas)
		if edit, err = EditVariable(ctx, st, a, appID, VariableEdit{Name: name, Environment: env.Name, Value: &value}); err != nil {
			return res, err
		}
	}
	expected := rev.Revision
	if res.ApplyResult, err = EditManifest(ctx, st, a, enqueue, appID, &expected, edit, false); err != nil {
		return res, err
	}
	if err := record(ctx, st, a, "service.scale", "environment", env.ID, map[string]any{
		"service": service, "replicas": replicas, "variable": res.Variable, "application_id": appID}); err != nil {
		return res, err
	}
	if env.PromoteFrom != "" {
		return res, nil // it takes the change with its next promotion
	}
	res.Deployment, err = RequestDeployment(ctx, st, a, enqueue, appID, env.Name)
	return res, err
}

// replicasVariable is the variable a replicas setting is exactly one
// reference to, as in "${{ vars.web_replicas }}".
func replicasVariable(r *manifest.Int) (string, bool) {
	if !r.IsRef() {
		return "", false
	}
	ref := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(r.Ref), "${{"), "}}"))
	name, ok := strings.CutPrefix(ref, "vars.")
	if !ok || name == "" || strings.ContainsAny(name, " .}") {
		return "", false
	}
	return name, true
}

// RunningService is the environment envName of the application, which
// must run service (its latest successful deployment declares it):
// service_not_found otherwise. The logs route reads through it.
func RunningService(ctx context.Context, st *store.Store, a Actor, appID, envName, service string) (store.Environment, error) {
	env, err := EnvironmentByName(ctx, st, a.TeamID, appID, envName)
	if err != nil {
		return store.Environment{}, err
	}
	return env, requireRunningService(ctx, st, env, service)
}

// requireRunningService checks that the environment runs the service: its
// running deployment's (else its latest deployment's) rendered manifest
// declares it.
func requireRunningService(ctx context.Context, st *store.Store, env store.Environment, service string) error {
	d, err := st.LatestSucceededDeployment(ctx, env.TeamID, env.ID)
	if errors.Is(err, store.ErrNotFound) {
		return &NotFoundError{Field: "service", Code: CodeServiceNotFound, Message: fmt.Sprintf("environment %s has never been deployed, so it runs no service %q", env.Name, service)}
	}
	if err != nil {
		return err
	}
	var m manifest.Manifest
	if err := json.Unmarshal(d.RenderedManifest, &m); err != nil {
		return fmt.Errorf("read deployment %s: %w", d.ID, err)
	}
	if !slices.ContainsFunc(m.Spec.Services, func(s manifest.Service) bool { return s.Name == service }) {
		return &NotFoundError{Field: "service", Code: CodeServiceNotFound, Message: fmt.Sprintf("environment %s runs no service %q", env.Name, service)}
	}
	return nil
}

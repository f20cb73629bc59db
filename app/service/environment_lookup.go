package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slipwayhq/slipway/store"
)

// CodeEnvironmentNotFound: an environment command named no environment of
// the application. A preview's slug is not an environment name: previews
// are reached through the previews endpoints only.
const CodeEnvironmentNotFound = "environment_not_found"

// NotFoundError is a missing object an operation names, with the field
// and code to report. It matches store.ErrNotFound, so callers that only
// know "not found" still answer 404.
type NotFoundError struct {
	Field   string
	Code    string
	Message string
}

func (e *NotFoundError) Error() string { return e.Field + ": " + e.Message }

// Unwrap makes errors.Is(err, store.ErrNotFound) hold.
func (e *NotFoundError) Unwrap() error { return store.ErrNotFound }

// EnvironmentNotFound is the error of an environment command naming no
// environment of the application (field env).
func EnvironmentNotFound(name string) error {
	return &NotFoundError{Field: "env", Code: CodeEnvironmentNotFound,
		Message: fmt.Sprintf("the application has no environment %q (previews are managed with the preview commands)", name)}
}

// EnvironmentByName is how environment commands resolve the environment
// they act on, within the team: the application's environment called
// name, never a preview, which "never appears among the application's
// environments, and environment commands never act on it". Both a
// missing name and a preview's slug are EnvironmentNotFound. The
// environment's id is accepted in place of its name, as the API's {env}
// is documented: ids and names never collide (names cannot contain "_").
func EnvironmentByName(ctx context.Context, st *store.Store, teamID, appID, name string) (store.Environment, error) {
	env, err := st.GetEnvironmentByName(ctx, teamID, appID, name)
	if errors.Is(err, store.ErrNotFound) && strings.HasPrefix(name, "env_") {
		env, err = st.GetEnvironment(ctx, teamID, name)
		if err == nil && env.ApplicationID != appID {
			err = store.ErrNotFound
		}
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && env.Kind != store.KindEnvironment) {
		return store.Environment{}, EnvironmentNotFound(name)
	}
	return env, err
}

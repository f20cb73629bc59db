package service

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/store"
)

// InputError is bad input in one field; Code is snake_case.
type InputError struct {
	Field   string
	Code    string
	Message string
	// Details are more facts for the API's answer (a quota's limit and use).
	Details map[string]any
}

func (e *InputError) Error() string { return e.Field + ": " + e.Message }

// Actor is who performs an operation: a member through the dashboard, or
// an API token (which acts for the member who created it).
type Actor struct {
	TeamID  string
	UserID  string
	TokenID string
	Scopes  []auth.Scope
}

// String is the events.actor form.
func (a Actor) String() string {
	if a.TokenID != "" {
		return "token:" + a.TokenID
	}
	return "user:" + a.UserID
}

// conflictInput turns a store conflict into an InputError on its field.
func conflictInput(err error, message string) error {
	var c *store.ConflictError
	if errors.As(err, &c) {
		return &InputError{Field: c.Field, Code: c.Code, Message: message}
	}
	return err
}

var appName = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// CheckApplicationName applies the rule the schema enforces, with a message.
func CheckApplicationName(name string) error {
	if !appName.MatchString(name) {
		return &InputError{Field: "name", Code: "name_invalid",
			Message: "name must be 1–63 lowercase letters, digits or dashes, start with a letter and not end with a dash"}
	}
	return nil
}

// CreateApplication creates an application named name in the actor's team.
func CreateApplication(ctx context.Context, st *store.Store, a Actor, name string) (store.Application, error) {
	name = strings.TrimSpace(name)
	if err := CheckApplicationName(name); err != nil {
		return store.Application{}, err
	}
	var app store.Application
	err := st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if app, err = tx.CreateApplication(ctx, a.TeamID, name); err != nil {
			return conflictInput(err, fmt.Sprintf("an application named %q already exists in this team", name))
		}
		if err := quota.CheckCounts(ctx, tx, a.TeamID, quota.Add{Quota: quota.Applications, N: 1, Field: "name"}); err != nil {
			return quotaInput(err)
		}
		return record(ctx, tx, a, "application.create", "application", app.ID, map[string]any{"name": name})
	})
	return app, err
}

// DeleteApplication marks the application deleted and queues the teardown
// of every environment in the same transaction (named volumes are retained).
// It refuses (deployment_in_progress, naming the deployment) while any
// environment has a deployment requested or running: a teardown racing a
// rollout could leave services behind, and nothing is cancelled on the
// caller's behalf.
func DeleteApplication(ctx context.Context, st *store.Store, a Actor, enqueue Enqueue, id string) error {
	return st.WithTx(ctx, func(tx *store.Store) error {
		app, err := tx.GetApplication(ctx, a.TeamID, id)
		if err != nil {
			return err
		}
		envs, err := tx.ListEnvironments(ctx, a.TeamID, id)
		if err != nil {
			return err
		}
		for _, env := range envs {
			d, err := tx.LiveDeployment(ctx, a.TeamID, env.ID)
			if err == nil {
				return &InputError{Field: "application", Code: "deployment_in_progress",
					Message: fmt.Sprintf("deployment %s of %s is %s: wait for it to finish or cancel it, then delete the application", d.ID, env.Name, d.State)}
			}
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		for _, env := range envs {
			if err := enqueueTeardown(ctx, tx, enqueue, env); err != nil {
				return err
			}
		}
		if err := tx.DeleteApplication(ctx, a.TeamID, id); err != nil {
			return err
		}
		return record(ctx, tx, a, "application.delete", "application", id, map[string]any{"name": app.Name})
	})
}

// TokenRequest is what a new API token should be.
type TokenRequest struct {
	Name   string
	Scopes []string
	// ExpiresIn is zero for a token that does not expire.
	ExpiresIn time.Duration
}

// CreateToken creates an API token whose scopes are a subset of the actor's,
// and returns it with its secret (shown once).
func CreateToken(ctx context.Context, st *store.Store, a Actor, r TokenRequest, now time.Time) (store.APIToken, string, error) {
	name, err := CheckText("name", "name_invalid", "name", r.Name, 100)
	if err != nil {
		return store.APIToken{}, "", err
	}
	if len(r.Scopes) == 0 {
		return store.APIToken{}, "", &InputError{Field: "scopes", Code: "scopes_empty", Message: "choose at least one scope"}
	}
	scopes, err := auth.ParseScopes(r.Scopes)
	if err != nil {
		return store.APIToken{}, "", &InputError{Field: "scopes", Code: "scope_unknown", Message: err.Error()}
	}
	if missing := auth.Subset(scopes, a.Scopes); missing != "" {
		return store.APIToken{}, "", &InputError{Field: "scopes", Code: "scope_not_held",
			Message: fmt.Sprintf("you cannot grant %s: a token carries only scopes you hold", missing)}
	}
	if r.ExpiresIn < 0 {
		return store.APIToken{}, "", &InputError{Field: "expires_in", Code: "expires_in_invalid", Message: "expiry must be in the future"}
	}
	secret := auth.NewSecret(auth.TokenPrefix)
	p := store.APITokenParams{Name: name, TokenHash: store.HashToken(secret), Scopes: auth.Strings(scopes), CreatedBy: a.UserID}
	if r.ExpiresIn > 0 {
		exp := now.Add(r.ExpiresIn)
		p.ExpiresAt = &exp
	}
	var tok store.APIToken
	err = st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if tok, err = tx.CreateAPIToken(ctx, a.TeamID, p); err != nil {
			return err
		}
		return record(ctx, tx, a, "token.create", "api_token", tok.ID, map[string]any{"name": name, "scopes": p.Scopes})
	})
	if err != nil {
		return store.APIToken{}, "", err
	}
	return tok, secret, nil
}

// RevokeToken revokes one of the team's tokens.
func RevokeToken(ctx context.Context, st *store.Store, a Actor, id string, now time.Time) error {
	return st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.RevokeAPIToken(ctx, a.TeamID, id, now); err != nil {
			return err
		}
		return record(ctx, tx, a, "token.revoke", "api_token", id, nil)
	})
}

func record(ctx context.Context, st *store.Store, a Actor, verb, objectType, objectID string, details any) error {
	_, err := st.RecordEvent(ctx, a.TeamID, store.EventParams{Actor: a.String(), Verb: verb, ObjectType: objectType, ObjectID: objectID, Details: details})
	return err
}

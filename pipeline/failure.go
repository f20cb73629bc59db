package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/slipwayhq/slipway/runtime/swarm"
	"github.com/slipwayhq/slipway/secrets"
)

// Deployment error codes the pipeline records, beside the runtime's own
// (rollout_failed, convergence_timeout, job_failed, job_timeout,
// name_conflict) and the manifest's validation codes.
const (
	CodeManifestInvalid     = "manifest_validation_failed"
	CodeVariableMissing     = "variable_value_missing"
	CodeSecretMissing       = "secret_missing"
	CodeRollbackUnavailable = "rollback_unavailable"
)

func codeOf(err error, def string) string {
	if c := swarm.Code(err); c != "" {
		return c
	}
	return def
}

// asFailure turns a runtime error with a code into a deployment failure;
// Docker being unreachable stays an error River retries.
func asFailure(err error) error {
	code := swarm.Code(err)
	if code == "" || code == swarm.CodeDockerUnavailable {
		return err
	}
	return &Failure{Code: code, Message: detail(err)}
}

// Failure is a step error that ends the deployment as failed, with a
// snake_case code and a message for people. Anything else a step returns is
// retried by River.
type Failure struct {
	Code    string
	Message string
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// detail is err's text without its code, for a Failure that records the
// code apart: each error names its code once.
func detail(err error) string {
	var d interface{ Detail() string }
	if errors.As(err, &d) {
		return d.Detail()
	}
	return err.Error()
}

func fail(code, format string, args ...any) error {
	return &Failure{Code: code, Message: fmt.Sprintf(format, args...)}
}

// codedError is any error that carries a snake_case code for people, such
// as the secrets package's refusals.
type codedError interface {
	error
	ErrorCode() string
}

// asCoded turns a coded error into a Failure; other errors stay retryable.
func asCoded(err error) error {
	var c codedError
	if errors.As(err, &c) && c.ErrorCode() != "" {
		return &Failure{Code: c.ErrorCode(), Message: detail(err)}
	}
	var se *secrets.Error
	if errors.As(err, &se) {
		return &Failure{Code: se.Code, Message: se.Message}
	}
	return err
}

// WaitError asks for the work to be tried again after After, without it
// counting as a failed attempt (jobs turns it into River's snooze).
type WaitError struct {
	After  time.Duration
	Reason string
}

func (e *WaitError) Error() string { return fmt.Sprintf("wait %s: %s", e.After, e.Reason) }

// PermanentError is an error no retry can fix: the work is dropped (jobs
// turns it into River's cancel).
type PermanentError struct {
	Err error
}

func (e *PermanentError) Error() string { return e.Err.Error() }

func (e *PermanentError) Unwrap() error { return e.Err }

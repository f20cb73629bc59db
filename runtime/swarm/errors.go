package swarm

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/docker/docker/client"
)

// Error codes the pipeline acts on.
const (
	CodeDockerUnavailable  = "docker_unavailable"
	CodeNameConflict       = "name_conflict"
	CodeRolloutFailed      = "rollout_failed"
	CodeConvergenceTimeout = "convergence_timeout"
	CodeJobFailed          = "job_failed"
	CodeJobTimeout         = "job_timeout"
	CodeInvalidInput       = "invalid_input"
	CodeVolumeInUse        = "volume_not_removed"
	CodeSecretMissing      = "secret_missing"
)

// Error is a failure with a stable snake_case code. Object names the Docker
// object (or manifest field) it concerns.
type Error struct {
	Code    string
	Object  string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail() }

// Detail is the error without its code, for a record that keeps the code
// apart (a deployment's error_code and error_message).
func (e *Error) Detail() string {
	var parts []string
	for _, p := range []string{e.Object, e.Message} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return strings.Join(parts, ": ")
}

func (e *Error) Unwrap() error { return e.Err }

// Code returns the code of the first *Error in err's chain, or "".
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// IsDockerUnavailable reports whether err means the daemon could not be
// reached; the pipeline retries those with backoff.
func IsDockerUnavailable(err error) bool { return Code(err) == CodeDockerUnavailable }

// engineErr wraps an Engine error with the operation, turning connection
// failures into docker_unavailable.
func engineErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var netErr *net.OpError
	if client.IsErrConnectionFailed(err) || errors.As(err, &netErr) {
		return &Error{Code: CodeDockerUnavailable, Object: op, Message: "the Docker daemon cannot be reached", Err: err}
	}
	return fmt.Errorf("%s: %w", op, err)
}

package pipeline

import (
	"encoding/json"
	"time"
)

// Step states.
const (
	StepRunning   = "running"
	StepSucceeded = "succeeded"
	StepFailed    = "failed"
	StepSkipped   = "skipped"
)

// Step is one entry of a deployment's progress record: capture, prepare,
// plan, job:<name>, rollout:<service>, routes, cleanup. The record is what
// makes the pipeline resumable: a step that succeeded is never done again
// by a retry or by the worker that takes over after a crash.
type Step struct {
	Name       string            `json:"name"`
	State      string            `json:"state"`
	Message    string            `json:"message,omitempty"`
	Output     string            `json:"output,omitempty"`
	Truncated  bool              `json:"truncated,omitempty"`
	Detail     map[string]string `json:"detail,omitempty"`
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
}

// Progress is a deployment's steps, in the order they started.
type Progress struct {
	Steps []Step
}

// ParseProgress reads a deployment's steps column.
func ParseProgress(raw json.RawMessage) (Progress, error) {
	var p Progress
	if len(raw) == 0 {
		return p, nil
	}
	err := json.Unmarshal(raw, &p.Steps)
	return p, err
}

// JSON encodes the steps for the store.
func (p *Progress) JSON() json.RawMessage {
	if p.Steps == nil {
		return json.RawMessage("[]")
	}
	b, _ := json.Marshal(p.Steps)
	return b
}

// Find returns the step with the name, or nil.
func (p *Progress) Find(name string) *Step {
	for i := range p.Steps {
		if p.Steps[i].Name == name {
			return &p.Steps[i]
		}
	}
	return nil
}

// Done reports whether the named step succeeded (or was skipped).
func (p *Progress) Done(name string) bool {
	s := p.Find(name)
	return s != nil && (s.State == StepSucceeded || s.State == StepSkipped)
}

// Start marks the named step running, keeping its first start time when it
// is resumed.
func (p *Progress) Start(name string, now time.Time) *Step {
	if s := p.Find(name); s != nil {
		s.State = StepRunning
		s.FinishedAt = nil
		return s
	}
	p.Steps = append(p.Steps, Step{Name: name, State: StepRunning, StartedAt: now})
	return &p.Steps[len(p.Steps)-1]
}

// Finish records the named step's outcome.
func (p *Progress) Finish(name, state, message string, now time.Time) *Step {
	s := p.Find(name)
	if s == nil {
		s = p.Start(name, now)
	}
	s.State = state
	s.Message = message
	s.FinishedAt = &now
	return s
}

package jobs

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/slipwayhq/slipway/pipeline"
)

// The pipeline knows no River: its waits become snoozes, its permanent
// errors cancellations, wrapped or not; anything else is retried.
func TestRiverError(t *testing.T) {
	t.Parallel()
	wait := &pipeline.WaitError{After: 3 * time.Second, Reason: "busy"}
	var snooze *rivertype.JobSnoozeError
	if err := riverError(fmt.Errorf("advance: %w", wait)); !errors.As(err, &snooze) || snooze.Duration != 3*time.Second {
		t.Errorf("a wait became %v, want a 3s snooze", err)
	}
	var cancel *rivertype.JobCancelError
	if err := riverError(&pipeline.PermanentError{Err: errors.New("gone")}); !errors.As(err, &cancel) {
		t.Errorf("a permanent error became %v, want a cancel", err)
	}
	plain := errors.New("docker unavailable")
	if err := riverError(plain); err != plain {
		t.Errorf("a plain error became %v, want it unchanged", err)
	}
	if err := riverError(nil); err != nil {
		t.Errorf("nil became %v", err)
	}
}

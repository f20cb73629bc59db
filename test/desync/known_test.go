package desync

import (
	"fmt"
	"os"
	"testing"
)

// knownFailing lists the cases the gateway on main failed before #18's
// fixes, by subtest name, with the finding of #18 each one proves. They
// run and fail like any other case, with "KNOWN FAILING" and the finding
// in the message; a listed case that passes says so, so the list can
// shrink to nothing.
var knownFailing = map[string]string{}

// envKnownFailing=skip skips the listed cases at their first failure
// instead, for running this suite against a gateway without the fixes.
const envKnownFailing = "SLIPWAY_DESYNC_KNOWN_FAILING"

// checker reports a case's failures, marking those of a listed case.
type checker struct {
	*testing.T
	known string
}

func check(t *testing.T) *checker {
	c := &checker{T: t, known: knownFailing[t.Name()]}
	if c.known != "" {
		t.Cleanup(func() {
			if !t.Failed() && !t.Skipped() {
				t.Logf("listed in knownFailing (%s) but passed: take it off the list", c.known)
			}
		})
	}
	return c
}

func (c *checker) mark(msg string) string {
	if os.Getenv(envKnownFailing) == "skip" {
		c.T.Skipf("KNOWN FAILING (#18, %s), skipped by %s=skip: %s", c.known, envKnownFailing, msg)
	}
	return fmt.Sprintf("KNOWN FAILING before #18's fix (%s): %s", c.known, msg)
}

func (c *checker) Errorf(format string, args ...any) {
	c.Helper()
	msg := fmt.Sprintf(format, args...)
	if c.known != "" {
		msg = c.mark(msg)
	}
	c.T.Error(msg)
}

func (c *checker) Fatalf(format string, args ...any) {
	c.Helper()
	msg := fmt.Sprintf(format, args...)
	if c.known != "" {
		msg = c.mark(msg)
	}
	c.T.Fatal(msg)
}

func (c *checker) Fatal(args ...any) { c.Helper(); c.Fatalf("%s", fmt.Sprint(args...)) }
func (c *checker) Error(args ...any) { c.Helper(); c.Errorf("%s", fmt.Sprint(args...)) }

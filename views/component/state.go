package component

import "strings"

// stateLabel is a state as people read it ("running_jobs" → "running jobs").
func stateLabel(state string) string { return strings.ReplaceAll(state, "_", " ") }

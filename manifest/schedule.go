package manifest

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a parsed schedule: a five-field cron expression evaluated in
// UTC, or one of the descriptors @hourly, @daily, @weekly and @monthly.
type Schedule struct {
	spec  string
	sched cron.Schedule
}

// cronParser reads minute, hour, day of month, month and day of week;
// descriptors are checked before it sees them (ParseSchedule).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// descriptors are the shorthands accepted, with their cron meaning.
var descriptors = map[string]string{
	"@hourly":  "0 * * * *",
	"@daily":   "0 0 * * *",
	"@weekly":  "0 0 * * 0",
	"@monthly": "0 0 1 * *",
}

// ParseSchedule parses s. Time zones (CRON_TZ=, TZ=) are refused: every
// schedule is in UTC, so it means the same on every node.
func ParseSchedule(s string) (Schedule, error) {
	spec := strings.TrimSpace(s)
	if spec == "" {
		return Schedule{}, fmt.Errorf("schedule is empty")
	}
	expr := spec
	if strings.HasPrefix(spec, "@") {
		e, ok := descriptors[spec]
		if !ok {
			return Schedule{}, fmt.Errorf("%q is not a schedule: use five cron fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly", spec)
		}
		expr = e
	}
	if strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=") {
		return Schedule{}, fmt.Errorf("schedules are in UTC; remove the time zone from %q", spec)
	}
	if n := len(strings.Fields(expr)); n != 5 {
		return Schedule{}, fmt.Errorf("%q has %d fields; a schedule has five (minute hour day-of-month month day-of-week)", spec, n)
	}
	sched, err := cronParser.Parse(expr)
	if err != nil {
		return Schedule{}, fmt.Errorf("%q is not a cron expression: %v", spec, err)
	}
	return Schedule{spec: spec, sched: sched}, nil
}

// Next returns the first time after t the schedule fires, in UTC.
func (s Schedule) Next(t time.Time) time.Time { return s.sched.Next(t.UTC()).UTC() }

// String is the schedule as written.
func (s Schedule) String() string { return s.spec }

package swarm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/pkg/stdcopy"
)

// CodeServiceNotRunning is ServiceLogs' error when the environment has no
// service of that name in Docker (never deployed, or removed).
const CodeServiceNotRunning = "service_not_running"

// LogOptions selects what ServiceLogs reads.
type LogOptions struct {
	// Follow keeps reading new lines until ctx ends.
	Follow bool
	// Tail is how many of the last lines to start from; 0 reads them all.
	// Docker applies it to each task; ServiceLogs keeps the last Tail of
	// the merged lines.
	Tail int
	// Since reads only lines written after it (zero: no bound), so a
	// reconnecting reader neither misses nor repeats lines.
	Since time.Time
	// Batch is how long a follower gathers lines before it sorts them by
	// time and hands them over (default 200 ms): replicas' lines arrive
	// out of order by a little.
	Batch time.Duration
}

// LogLine is one line a task of a service wrote.
type LogLine struct {
	Time time.Time // when Docker recorded it
	// Task names the replica as Docker's CLI does, "<service>.<slot>"
	// (a global service's task: "<service>@<node>").
	Task   string
	TaskID string
	Node   string // the hostname of the node the task runs on (its id when unknown)
	Stderr bool
	Text   string
}

// ServiceLogs hands the output (stdout and stderr) of the environment's
// service named service in the manifest to emit, each line labelled with
// its task and merged across replicas by time: the tail at once, then,
// with Follow, each batch of new lines until ctx ends (then it returns
// nil). Only a service carrying the environment's labels is read, and
// never a job's run, so a name cannot reach another environment's
// containers. An error from emit ends the read and is returned.
func (d *Driver) ServiceLogs(ctx context.Context, env EnvRef, service string, opts LogOptions, emit func([]LogLine) error) error {
	name := ServiceName(env.ShortID, service)
	svc, found, err := d.inspect(ctx, name, env.ID)
	if err != nil {
		return err
	}
	if !found || svc.Spec.Labels[LabelService] != service || svc.Spec.Labels[LabelJob] != "" {
		return &Error{Code: CodeServiceNotRunning, Object: "service " + service, Message: "the environment runs no such service"}
	}
	tasks := &taskNames{driver: d, serviceID: svc.ID, service: service}
	if err := tasks.refresh(ctx); err != nil {
		return err
	}
	lo := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: opts.Follow, Timestamps: true, Details: true, Tail: "all"}
	if opts.Tail > 0 {
		lo.Tail = strconv.Itoa(opts.Tail)
	}
	if !opts.Since.IsZero() {
		lo.Since = fmt.Sprintf("%d.%09d", opts.Since.Unix(), opts.Since.Nanosecond())
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc, err := d.engine.ServiceLogs(rctx, svc.ID, lo)
	if err != nil {
		return engineErr("service logs", err)
	}
	defer rc.Close()

	lines := make(chan LogLine, 256)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		send := func(l LogLine) {
			select {
			case lines <- l:
			case <-rctx.Done():
			}
		}
		out, errOut := &lineWriter{emit: send}, &lineWriter{emit: send, stderr: true}
		// Services never get a TTY, so the stream is always multiplexed.
		_, err := stdcopy.StdCopy(out, errOut, rc)
		out.flush()
		errOut.flush()
		readErr <- err
	}()

	if !opts.Follow {
		var all []LogLine
		for l := range lines {
			all = append(all, tasks.label(ctx, l))
		}
		if err := streamEnd(ctx, <-readErr); err != nil {
			return err
		}
		sortLines(all)
		if opts.Tail > 0 && len(all) > opts.Tail {
			all = all[len(all)-opts.Tail:]
		}
		if len(all) == 0 {
			return nil
		}
		return emit(all)
	}
	return followLines(ctx, lines, readErr, opts.Batch, func(batch []LogLine) error {
		for i := range batch {
			batch[i] = tasks.label(ctx, batch[i])
		}
		sortLines(batch)
		return emit(batch)
	})
}

// followLines gathers lines for up to batch (the first line starts the
// clock) and hands each gathering over in one call, until the stream or
// ctx ends.
func followLines(ctx context.Context, lines <-chan LogLine, readErr <-chan error, batch time.Duration, emit func([]LogLine) error) error {
	if batch <= 0 {
		batch = 200 * time.Millisecond
	}
	var pending []LogLine
	var tick <-chan time.Time
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				if len(pending) > 0 {
					if err := emit(pending); err != nil {
						return err
					}
				}
				return streamEnd(ctx, <-readErr)
			}
			if len(pending) == 0 {
				tick = time.After(batch)
			}
			pending = append(pending, l)
		case <-tick:
			if err := emit(pending); err != nil {
				return err
			}
			pending, tick = nil, nil
		case <-ctx.Done():
			return nil
		}
	}
}

// streamEnd maps the end of Docker's log stream: the caller going away or
// the stream ending is no error.
func streamEnd(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return engineErr("service logs", err)
}

// sortLines orders lines by time, keeping each task's own order for equal
// times.
func sortLines(lines []LogLine) {
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Time.Before(lines[j].Time) })
}

// taskNames labels lines with their task's slot and node, reading the
// service's tasks again (at most once a second) when a line names a task
// started after the last read.
type taskNames struct {
	driver    *Driver
	serviceID string
	service   string

	mu      sync.Mutex
	tasks   map[string]swarm.Task
	nodes   map[string]string
	fetched time.Time
	// asked holds the task ids a refresh was made for: a new task (a
	// restart's) triggers one at its first line, however recent the last.
	asked map[string]bool
}

func (n *taskNames) refresh(ctx context.Context) error {
	tasks, err := n.driver.engine.TaskList(ctx, swarm.TaskListOptions{Filters: filters.NewArgs(filters.Arg("service", n.serviceID))})
	if err != nil {
		return engineErr("list tasks", err)
	}
	nodes, err := n.driver.engine.NodeList(ctx, swarm.NodeListOptions{})
	if err != nil {
		return engineErr("list nodes", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.tasks = make(map[string]swarm.Task, len(tasks))
	for _, t := range tasks {
		n.tasks[t.ID] = t
	}
	n.nodes = make(map[string]string, len(nodes))
	for _, nd := range nodes {
		n.nodes[nd.ID] = nd.Description.Hostname
	}
	n.fetched = time.Now()
	return nil
}

// label fills l's Task and Node from its TaskID and node id (which the
// reader left in Node).
func (n *taskNames) label(ctx context.Context, l LogLine) LogLine {
	n.mu.Lock()
	t, ok := n.tasks[l.TaskID]
	stale := !ok && (!n.asked[l.TaskID] || time.Since(n.fetched) > time.Second)
	if stale {
		if n.asked == nil {
			n.asked = map[string]bool{}
		}
		n.asked[l.TaskID] = true
	}
	n.mu.Unlock()
	if stale && n.refresh(ctx) == nil {
		n.mu.Lock()
		t, ok = n.tasks[l.TaskID]
		n.mu.Unlock()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if host := n.nodes[l.Node]; host != "" {
		l.Node = host
	}
	switch {
	case ok && t.Slot > 0:
		l.Task = n.service + "." + strconv.Itoa(t.Slot)
	default:
		l.Task = n.service + "@" + l.Node
	}
	return l
}

// lineWriter splits one demultiplexed stream into lines and parses each:
// "<RFC 3339 time> <details> <text>", details being Docker's
// comma-separated, URL-encoded key=value pairs naming the task and node.
type lineWriter struct {
	emit   func(LogLine)
	stderr bool
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

// flush hands over a last line that had no newline.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = nil
	}
}

func (w *lineWriter) line(s string) {
	l := parseLogLine(strings.TrimSuffix(s, "\r"))
	l.Stderr = w.stderr
	w.emit(l)
}

// parseLogLine reads one line of a service log read with timestamps and
// details. A line that does not parse is kept whole as text.
func parseLogLine(s string) LogLine {
	ts, rest, ok := strings.Cut(s, " ")
	t, err := time.Parse(time.RFC3339Nano, ts)
	if !ok || err != nil {
		return LogLine{Text: s}
	}
	l := LogLine{Time: t}
	details, text, _ := strings.Cut(rest, " ")
	if !strings.Contains(details, "=") {
		l.Text = rest
		return l
	}
	l.Text = text
	for _, kv := range strings.Split(details, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if u, err := url.QueryUnescape(v); err == nil {
			v = u
		}
		switch k {
		case "com.docker.swarm.task.id":
			l.TaskID = v
		case "com.docker.swarm.node.id":
			l.Node = v
		}
	}
	return l
}

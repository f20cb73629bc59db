package proxyrig

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Process is a proxy running as a child process, killed if this process
// dies first.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	out  *logBuffer
}

func start(bin string, args, env []string, out *logBuffer) (*Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), out: out}
	go func() { cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process id (nginx: the master's; its workers are children).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output is what the process wrote to stdout and stderr so far (the last
// 1 MiB).
func (p *Process) Output() string { return p.out.String() }

// Stop ends the process with SIGTERM, and SIGKILL after 5 s.
func (p *Process) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// waitListening waits until addr accepts connections, or the process
// exits, or ctx ends.
func (p *Process) waitListening(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before listening on %s: %s", addr, p.Output())
		case <-ctx.Done():
			return fmt.Errorf("not listening on %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// logBuffer keeps the last part of a process's output.
type logBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	lines chan<- []byte // each complete line, when set
	part  []byte
}

const logKeep = 1 << 20

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len()+len(p) > logKeep {
		rest := l.b.Bytes()[min(l.b.Len(), len(p)):]
		l.b = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	l.b.Write(p)
	if l.lines != nil {
		l.part = append(l.part, p...)
		for {
			i := bytes.IndexByte(l.part, '\n')
			if i < 0 {
				break
			}
			select {
			case l.lines <- append([]byte(nil), l.part[:i]...):
			default: // nobody is waiting for lines any more
			}
			l.part = l.part[i+1:]
		}
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// LookPath finds a program (nginx, wrk) in PATH or in the sbin
// directories, which a user's PATH often lacks.
func LookPath(name string) (string, error) {
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago.
func FreePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

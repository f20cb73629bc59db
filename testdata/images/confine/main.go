// Command confine reports once what a tenant container can see and reach,
// then sleeps. Tests deploy it as a tenant service and read its log, one
// line per finding:
//
//	status NoNewPrivs 1            from /proc/self/status
//	file /var/run/docker.sock absent
//	reach NAME ADDR reached ANSWER | closed (reason)
//	pids N error               processes it started before one was refused
//	done NONCE
//
// CONFINE_TCP lists NAME=KIND:HOST:PORT targets (comma-separated). A
// connection alone proves little (a network may accept any connection on
// the way), so each target is spoken to in its protocol and ANSWER is what
// came back: http (GET /version, or the path after the port), pg (a
// Postgres SSLRequest, answered S or N).
// CONFINE_FORKS bounds the processes it tries to start; CONFINE_NONCE
// marks this run's "done" line.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	status()
	for _, f := range []string{"/var/run/docker.sock", "/run/docker.sock"} {
		if _, err := os.Lstat(f); err == nil {
			fmt.Println("file", f, "present")
		} else {
			fmt.Println("file", f, "absent")
		}
	}
	for _, t := range strings.Split(os.Getenv("CONFINE_TCP"), ",") {
		name, target, ok := strings.Cut(strings.TrimSpace(t), "=")
		if !ok {
			continue
		}
		kind, addr, _ := strings.Cut(target, ":")
		answer, err := reach(kind, addr)
		if err != nil {
			fmt.Printf("reach %s %s closed (%v)\n", name, addr, err)
			continue
		}
		fmt.Printf("reach %s %s reached %q\n", name, addr, answer)
	}
	forks, _ := strconv.Atoi(os.Getenv("CONFINE_FORKS"))
	pids(forks)
	fmt.Println("done", os.Getenv("CONFINE_NONCE"))
	for {
		time.Sleep(time.Hour)
	}
}

// reach speaks kind to addr and returns the start of the answer.
func reach(kind, addr string) (string, error) {
	hostPort, path, _ := strings.Cut(addr, "/")
	c, err := net.DialTimeout("tcp", hostPort, 3*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	switch kind {
	case "pg":
		if _, err := c.Write([]byte{0, 0, 0, 8, 4, 210, 22, 47}); err != nil {
			return "", err
		}
	default:
		if path == "" {
			path = "version"
		}
		if _, err := fmt.Fprintf(c, "GET /%s HTTP/1.0\r\nHost: %s\r\n\r\n", path, hostPort); err != nil {
			return "", err
		}
	}
	buf := make([]byte, 512)
	n, err := io.ReadAtLeast(c, buf, 1)
	if n == 0 {
		return "", fmt.Errorf("connected, no answer: %v", err)
	}
	return string(buf[:n]), nil
}

func status() {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fmt.Println("status unreadable", err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch k {
		case "NoNewPrivs", "Seccomp", "CapEff", "CapBnd":
			fmt.Println("status", k, strings.TrimSpace(v))
		}
	}
}

// pids forks single-threaded children that only wait for a signal, until
// the kernel refuses one or n run, reports how many, and stops them.
func pids(n int) {
	var started []int
	var err error
	for len(started) < n {
		pid, _, errno := syscall.RawSyscall(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0)
		if errno != 0 {
			err = errno
			break
		}
		if pid == 0 {
			// The child: no Go runtime work, one thread, until killed.
			for {
				syscall.RawSyscall(syscall.SYS_PAUSE, 0, 0, 0)
			}
		}
		started = append(started, int(pid))
	}
	fmt.Printf("pids %d %v\n", len(started), err)
	for _, pid := range started {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	}
}

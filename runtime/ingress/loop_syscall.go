//go:build linux

package ingress

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loops' reads, writes and non-blocking waits never block (every
// descriptor is non-blocking), so they are made as raw system calls,
// without telling the Go scheduler. A call the scheduler is told about
// lends the thread's P away if it lasts more than a few microseconds:
// sysmon takes it, wakes another thread to run it, which finds nothing
// and sleeps again — a futex and nanosleep storm that cost the gateway
// several microseconds of CPU per request. Only the blocking wait, when
// the loop has nothing to do, goes through the scheduler (waitEvents).

// rawRead is read(2) on a non-blocking descriptor.
func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawWrite is write(2) on a non-blocking descriptor.
func rawWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// waitEvents returns the ready events: at once when some are (a raw,
// non-blocking epoll_pwait, the common case under load), otherwise after
// waiting up to timeout milliseconds in a call the scheduler knows blocks.
func waitEvents(epfd int, events []unix.EpollEvent, timeout int) (int, error) {
	n, _, errno := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno == 0 && (n > 0 || timeout == 0) {
		return int(n), nil
	}
	return unix.EpollWait(epfd, events, timeout)
}

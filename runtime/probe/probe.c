//go:build ignore

// The constraint above keeps the go tool from treating this as cgo source.

/*
 * slipway probe: the HTTP health check mounted into every HTTP-checked
 * service at /run/slipway/probe, so that images need nothing of their own
 * (FROM scratch and distroless included).
 *
 *   probe http --port P [--path /health] [--timeout SECONDS]
 *
 * Sends one plain HTTP/1.0 GET to 127.0.0.1:P, follows no redirect, and
 * exits 0 when the status is 2xx or 3xx within the timeout; otherwise it
 * prints one line saying why on stderr and exits 1 (the exit code Docker
 * reads as "unhealthy"; 2 is reserved by Docker).
 *
 * C and musl because Swarm configs are limited to 1,024,000 bytes: even a Go
 * binary using only syscall is larger than that.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

static int fail(const char *fmt, const char *arg) {
	fputs("probe: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 1;
}

static long long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* wait_for polls fd for events until the deadline; 0 when ready. */
static int wait_for(int fd, short events, long long deadline) {
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return -1;
		struct pollfd p = {.fd = fd, .events = events};
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

static int usage(void) {
	fputs("usage: probe http --port P [--path /health] [--timeout SECONDS]\n", stderr);
	return 1;
}

int main(int argc, char **argv) {
	if (argc < 2 || strcmp(argv[1], "http") != 0)
		return usage();
	long port = 0, timeout = 3;
	const char *path = "/health";
	for (int i = 2; i < argc; i++) {
		if (i + 1 >= argc)
			return usage();
		char *end;
		if (strcmp(argv[i], "--port") == 0) {
			port = strtol(argv[++i], &end, 10);
			if (*end || port < 1 || port > 65535)
				return fail("invalid --port %s", argv[i]);
		} else if (strcmp(argv[i], "--path") == 0) {
			path = argv[++i];
			if (path[0] != '/' || strpbrk(path, " \r\n"))
				return fail("invalid --path %s", path);
		} else if (strcmp(argv[i], "--timeout") == 0) {
			timeout = strtol(argv[++i], &end, 10);
			if (*end || timeout < 1 || timeout > 3600)
				return fail("invalid --timeout %s", argv[i]);
		} else {
			return usage();
		}
	}
	if (port == 0)
		return usage();
	if (strlen(path) > 3000)
		return fail("--path is too long%s", "");

	long long deadline = now_ms() + timeout * 1000;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket: %s", strerror(errno));
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		if (errno != EINPROGRESS)
			return fail("connect: %s", strerror(errno));
		if (wait_for(fd, POLLOUT, deadline) < 0)
			return fail("connect: timed out%s", "");
		int soerr = 0;
		socklen_t len = sizeof soerr;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		if (soerr)
			return fail("connect: %s", strerror(soerr));
	}

	char req[4096];
	int n = snprintf(req, sizeof req,
	                 "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%ld\r\nUser-Agent: slipway-probe\r\n"
	                 "Connection: close\r\n\r\n",
	                 path, port);
	for (int off = 0; off < n;) {
		if (wait_for(fd, POLLOUT, deadline) < 0)
			return fail("send: timed out%s", "");
		ssize_t w = send(fd, req + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return fail("send: %s", strerror(errno));
		if (w > 0)
			off += w;
	}

	/* Only the status line matters: "HTTP/1.x NNN ...". */
	char buf[64];
	size_t got = 0;
	while (got < 12) {
		if (wait_for(fd, POLLIN, deadline) < 0)
			return fail("response: timed out%s", "");
		ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return fail("response: %s", strerror(errno));
		}
		got += r;
	}
	buf[got] = 0;
	close(fd);
	if (got < 12 || strncmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ' ||
	    buf[9] < '0' || buf[9] > '9' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' || buf[11] > '9')
		return fail("response: not an HTTP/1 status line%s", "");
	int status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	if (status >= 200 && status < 400)
		return 0;
	char code[4] = {buf[9], buf[10], buf[11], 0};
	return fail("status %s", code);
}

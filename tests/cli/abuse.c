/*
 * Misbehaving control-socket clients, for tests/cli/run.sh. Each mode exits 0 when the daemon
 * behaved as it must, non-zero otherwise (with a message); every mode is bounded by an alarm.
 *
 *	cli-abuse longline SOCKET BYTES		one request of BYTES: answered "too long", the
 *						session still works afterwards
 *	cli-abuse garbage SOCKET BYTES [hello]	random bytes (after a hello): the daemon answers or
 *						hangs up, never crashes
 *	cli-abuse noread SOCKET SECONDS COUNT	terminal monitor, COUNT large requests, then no
 *						reading for SECONDS (or until SIGUSR1); then
 *						every reply must arrive whole and the lost
 *						monitor lines must have been reported
 *	cli-abuse many SOCKET N			N sessions at once, each must be answered
 *	cli-abuse killmid SOCKET		a large request, one frame read, then gone
 *	cli-abuse monitor SOCKET SECONDS TEXT	terminal monitor until a line containing TEXT
 *	cli-abuse silent SOCKET			connect and say nothing: the daemon must hang up
 *	cli-abuse exec SOCKET LINE		run LINE, print the reply and the status name
 *	cli-abuse hold SOCKET N SECONDS		N sessions one after the other, held for SECONDS
 *						(or until SIGUSR1): prints how many the daemon
 *						took and how many it refused, with why
 *	cli-abuse idle SOCKET SECONDS		a session that says nothing after hello: the
 *						daemon must close it within SECONDS
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/ctl_proto.h"

static const char *sock_path;

static void fail(const char *fmt, const char *arg)
{
	fprintf(stderr, "cli-abuse: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(1);
}

static void on_alarm(int signo)
{
	(void)signo;
	static const char msg[] = "cli-abuse: timed out waiting for the daemon\n";

	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(3);
}

static int connect_hello(struct ctl_reader *r)
{
	uint8_t hello[8] = {0, 0, 0, CTL_PROTO_VERSION, 0, 0, 0, 0};
	struct ctl_frame f;
	int fd = ctl_connect(sock_path);

	if (fd < 0)
		fail("connect: %s", strerror(errno));
	ctl_reader_init(r);
	if (ctl_send(fd, CTL_HELLO, 0, hello, sizeof(hello)) < 0)
		fail("send hello: %s", strerror(errno));
	do {
		if (ctl_recv(fd, r, &f) <= 0)
			fail("hello: %s", "connection closed");
	} while (f.type != CTL_END);
	if (f.status != CMD_OK)
		fail("hello refused: status %s", cmd_status_name(f.status));
	return fd;
}

/* Sends a request and reads to its END; returns the status, or -1 when the daemon hung up. */
static int transact(
	int fd, struct ctl_reader *r, uint16_t type, const char *line, size_t len, bool print)
{
	struct ctl_frame f;

	if (ctl_send(fd, type, 0, line, len) < 0)
		return -1;
	for (;;) {
		if (ctl_recv(fd, r, &f) <= 0)
			return -1;
		if (f.type == CTL_OUTPUT && print)
			fwrite(f.payload, 1, f.len, stdout);
		if (f.type == CTL_END)
			return f.status;
	}
}

static int mode_longline(size_t bytes)
{
	struct ctl_reader r;
	int fd = connect_hello(&r), rc;
	char *line = malloc(bytes);

	if (line == NULL)
		fail("%s", "out of memory");
	memset(line, 'x', bytes);
	/* ctl_send refuses oversized frames, so the header is written by hand */
	uint8_t hdr[8] = {(uint8_t)(bytes >> 24), (uint8_t)(bytes >> 16), (uint8_t)(bytes >> 8),
		(uint8_t)bytes, 0, CTL_EXECUTE, 0, 0};
	if (write(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		fail("write: %s", strerror(errno));
	for (size_t off = 0; off < bytes;) {
		ssize_t n = write(fd, line + off, bytes - off);

		if (n <= 0)
			fail("write: %s", strerror(errno));
		off += (size_t)n;
	}
	free(line);
	struct ctl_frame f;

	do {
		if (ctl_recv(fd, &r, &f) <= 0)
			fail("%s", "daemon hung up on a long line");
	} while (f.type != CTL_END);
	if (f.status != CMD_ERR_TOO_LONG)
		fail("long line: status %s, expected too-long", cmd_status_name(f.status));
	rc = transact(fd, &r, CTL_EXECUTE, "show version", 12, false);
	if (rc != CMD_OK)
		fail("after the long line: status %s", cmd_status_name(rc));
	/* a line just over the engine's limit, inside one frame */
	line = malloc(CMD_LINE_MAX + 10);
	memset(line, 'y', CMD_LINE_MAX + 10);
	rc = transact(fd, &r, CTL_EXECUTE, line, CMD_LINE_MAX + 10, false);
	free(line);
	if (rc != CMD_ERR_TOO_LONG)
		fail("%s", "a line over CMD_LINE_MAX was not refused");
	rc = transact(fd, &r, CTL_EXECUTE, "show\0version", 12, false);
	if (rc != CMD_ERR_INVALID)
		fail("%s", "a NUL byte in a line was not refused");
	ctl_reader_free(&r);
	close(fd);
	printf("longline: too-long answered, session still usable\n");
	return 0;
}

static int mode_garbage(size_t bytes, bool after_hello)
{
	struct ctl_reader r;
	int fd;
	char *junk = malloc(bytes);
	FILE *rnd = fopen("/dev/urandom", "r");
	char sink[4096];

	if (junk == NULL || rnd == NULL || fread(junk, 1, bytes, rnd) != bytes)
		fail("%s", "cannot read /dev/urandom");
	fclose(rnd);
	if (after_hello) {
		fd = connect_hello(&r);
		ctl_reader_free(&r);
	} else {
		fd = ctl_connect(sock_path);
		if (fd < 0)
			fail("connect: %s", strerror(errno));
	}
	for (size_t off = 0; off < bytes;) {
		ssize_t n = send(fd, junk + off, bytes - off, MSG_NOSIGNAL);

		if (n <= 0)
			break; /* the daemon hung up: fine */
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	while (read(fd, sink, sizeof(sink)) > 0)
		; /* whatever the daemon answers, until it closes */
	close(fd);
	free(junk);
	printf("garbage: %zu bytes sent%s\n", bytes, after_hello ? " after hello" : "");
	return 0;
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int signo)
{
	(void)signo;
	got_usr1 = 1;
}

/* Stalls until SIGUSR1 (or SECONDS), then reads everything: every reply must be complete and the
   monitor lines lost meanwhile must have been reported. */
static int mode_noread(unsigned seconds, unsigned count)
{
	struct ctl_reader r;
	struct ctl_frame f;
	int fd = connect_hello(&r);
	unsigned ends = 0, notices = 0, ok = 0;
	unsigned long long bytes = 0;

	if (transact(fd, &r, CTL_EXECUTE, "terminal monitor", 16, false) != CMD_OK)
		fail("%s", "terminal monitor failed");
	for (unsigned i = 0; i < count; i++)
		if (ctl_send(fd, CTL_EXECUTE, 0, "show running-config", 19) < 0)
			fail("send: %s", strerror(errno));
	signal(SIGUSR1, on_usr1);
	printf("noread: %u requests sent, not reading\n", count);
	fflush(stdout);
	alarm(0);
	sleep(seconds);
	alarm(120);
	while (ends < count) {
		if (ctl_recv(fd, &r, &f) <= 0)
			fail("%s", "connection closed before every reply");
		if (f.type == CTL_OUTPUT)
			bytes += f.len;
		if (f.type == CTL_MONITOR &&
			memmem(f.payload, f.len, "monitor messages dropped", 24) != NULL) {
			notices++;
			printf("noread: told \"%.*s\"\n", (int)f.len, (const char *)f.payload);
		}
		if (f.type == CTL_END) {
			ends++;
			if (f.status == CMD_OK)
				ok++;
		}
	}
	printf("noread: %u of %u replies complete (%llu bytes), %u drop notices\n", ok, count,
		bytes, notices);
	close(fd);
	return ok == count && notices > 0 ? 0 : 1;
}

static int mode_many(unsigned n)
{
	struct ctl_reader *r = calloc(n, sizeof(*r));
	int *fds = calloc(n, sizeof(*fds));
	unsigned ok = 0;

	if (r == NULL || fds == NULL)
		fail("%s", "out of memory");
	for (unsigned i = 0; i < n; i++)
		fds[i] = connect_hello(&r[i]);
	/* all requests first, then all replies: the daemon serves them side by side */
	for (unsigned i = 0; i < n; i++)
		if (ctl_send(fds[i], CTL_EXECUTE, 0, "show users", 10) < 0)
			fail("send: %s", strerror(errno));
	for (unsigned i = 0; i < n; i++) {
		struct ctl_frame f;

		do {
			if (ctl_recv(fds[i], &r[i], &f) <= 0)
				fail("%s", "a session was dropped");
		} while (f.type != CTL_END);
		if (f.status == CMD_OK)
			ok++;
	}
	for (unsigned i = 0; i < n; i++) {
		ctl_reader_free(&r[i]);
		close(fds[i]);
	}
	free(r);
	free(fds);
	printf("many: %u of %u sessions answered\n", ok, n);
	return ok == n ? 0 : 1;
}

static int mode_killmid(void)
{
	struct ctl_reader r;
	struct ctl_frame f;
	int fd = connect_hello(&r);

	if (ctl_send(fd, CTL_EXECUTE, 0, "show running-config", 19) < 0)
		fail("send: %s", strerror(errno));
	if (ctl_recv(fd, &r, &f) <= 0)
		fail("%s", "no reply");
	_exit(0); /* gone mid-reply, without closing politely */
}

static int mode_monitor(unsigned seconds, const char *text)
{
	struct ctl_reader r;
	struct ctl_frame f;
	int fd = connect_hello(&r);

	if (transact(fd, &r, CTL_EXECUTE, "terminal monitor", 16, false) != CMD_OK)
		fail("%s", "terminal monitor failed");
	printf("monitor: ready\n");
	fflush(stdout);
	alarm(seconds);
	for (;;) {
		if (ctl_recv(fd, &r, &f) <= 0)
			fail("%s", "connection closed");
		if (f.type != CTL_MONITOR)
			continue;
		printf("monitor: %.*s\n", (int)f.len, (const char *)f.payload);
		if (memmem(f.payload, f.len, text, strlen(text)) != NULL)
			break;
	}
	ctl_reader_free(&r);
	close(fd);
	return 0;
}

static int mode_silent(void)
{
	char buf[256];
	int fd = ctl_connect(sock_path);

	if (fd < 0)
		fail("connect: %s", strerror(errno));
	while (read(fd, buf, sizeof(buf)) > 0)
		; /* until the daemon gives up on us */
	close(fd);
	printf("silent: the daemon closed a session that never said hello\n");
	return 0;
}

static int mode_exec(const char *line)
{
	struct ctl_reader r;
	int fd = connect_hello(&r);
	int rc = transact(fd, &r, CTL_EXECUTE, line, strlen(line), true);

	printf("status: %s\n", rc < 0 ? "hangup" : cmd_status_name(rc));
	ctl_reader_free(&r);
	close(fd);
	return rc == CMD_OK ? 0 : 1;
}

/* A session: the daemon's answer to hello. 1 taken, 0 refused (why printed once), -1 error. */
static int try_hello(int *fdp, char *why, size_t len)
{
	uint8_t hello[8] = {0, 0, 0, CTL_PROTO_VERSION, 0, 0, 0, 0};
	struct ctl_reader r;
	struct ctl_frame f;
	int fd = ctl_connect(sock_path), rc = -1;

	*fdp = fd;
	if (fd < 0)
		return -1;
	ctl_reader_init(&r);
	if (ctl_send(fd, CTL_HELLO, 0, hello, sizeof(hello)) == 0) {
		while (ctl_recv(fd, &r, &f) > 0) {
			if (f.type == CTL_OUTPUT && !f.oversized)
				snprintf(why, len, "%.*s", (int)f.len, (const char *)f.payload);
			if (f.type == CTL_END) {
				rc = f.status == CMD_OK ? 1 : 0;
				break;
			}
		}
	}
	ctl_reader_free(&r);
	return rc;
}

static int mode_hold(unsigned n, unsigned seconds)
{
	unsigned taken = 0, refused = 0, errors = 0;
	char why[256] = "";

	signal(SIGUSR1, on_usr1);
	alarm(seconds + 30);
	for (unsigned i = 0; i < n; i++) {
		int fd, rc = try_hello(&fd, why, sizeof(why));

		taken += rc == 1;
		refused += rc == 0;
		errors += rc < 0;
		if (rc != 1 && fd >= 0)
			close(fd);
	}
	why[strcspn(why, "\n")] = '\0';
	printf("hold: %u taken, %u refused, %u errors%s%s\n", taken, refused, errors,
		refused ? "; last refusal: " : "", refused ? why : "");
	fflush(stdout);
	for (unsigned i = 0; i < seconds * 10 && !got_usr1; i++)
		usleep(100000);
	return 0;
}

static int mode_idle(unsigned seconds)
{
	struct ctl_reader r;
	struct timespec t0, t1;
	char sink[4096];
	int fd = connect_hello(&r);
	ssize_t n;

	alarm(seconds + 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = read(fd, sink, sizeof(sink))) > 0 || (n < 0 && errno == EINTR))
		;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("idle: closed by the daemon after %.1f s\n",
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	ctl_reader_free(&r);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cli-abuse MODE SOCKET [ARGS]\n");
		return 2;
	}
	sock_path = argv[2];
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(60);
	if (strcmp(argv[1], "longline") == 0 && argc == 4)
		return mode_longline(strtoul(argv[3], NULL, 10));
	if (strcmp(argv[1], "garbage") == 0 && argc >= 4)
		return mode_garbage(strtoul(argv[3], NULL, 10), argc == 5);
	if (strcmp(argv[1], "noread") == 0 && argc == 5)
		return mode_noread((unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (strcmp(argv[1], "many") == 0 && argc == 4)
		return mode_many((unsigned)atoi(argv[3]));
	if (strcmp(argv[1], "killmid") == 0)
		return mode_killmid();
	if (strcmp(argv[1], "monitor") == 0 && argc == 5)
		return mode_monitor((unsigned)atoi(argv[3]), argv[4]);
	if (strcmp(argv[1], "hold") == 0 && argc == 5)
		return mode_hold((unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (strcmp(argv[1], "idle") == 0 && argc == 4)
		return mode_idle((unsigned)atoi(argv[3]));
	if (strcmp(argv[1], "silent") == 0)
		return mode_silent();
	if (strcmp(argv[1], "exec") == 0 && argc == 4)
		return mode_exec(argv[3]);
	fprintf(stderr, "cli-abuse: bad arguments\n");
	return 2;
}

/*
 * ip-flood: non-PGM traffic for the forwarding benchmark (bench-fwd.sh): what crosses a router
 * beside PGM, to price the daemon's interception for traffic it must leave alone.
 *
 *   ip-flood udp -d ADDR [-p PORT] [-z BYTES] [-r PPS] [-T S] [-i IF] [--ttl N]
 *                        UDP datagrams (unicast or a group) with sendmmsg, paced or as fast
 *                        as possible
 *   ip-flood tcp-sink -p PORT [-T S] [-R FILE]
 *                        accepts one TCP connection and reads until it ends (or S seconds);
 *                        FILE is created once it listens
 *   ip-flood tcp-send -d ADDR [-p PORT] [-z BYTES] [-T S]
 *                        one TCP connection, writes of BYTES for S seconds
 *
 * Prints one key=value line at the end (packets or bytes moved, seconds, CPU seconds).
 * Exit: 0 done, 1 I/O failure, 64 usage, 70 setup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/tool.h"

#define IPF_MAX_BATCH 64
#define IPF_MAX_BYTES 65536
#define EXIT_USAGE    64
#define EXIT_SETUP    70

struct ipf_options {
	const char *mode;
	struct in_addr dst;
	bool have_dst;
	uint16_t port;
	uint32_t bytes;
	double rate;
	double seconds;
	unsigned ifindex;
	int ttl;
	const char *ready_file;
};

static void sleep_until(double t)
{
	double d = t - now_seconds();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: ip-flood udp -d ADDR [-p PORT] [-z BYTES] [-r PPS] [-T S] [-i IF] "
		     "[--ttl N]\n"
		     "       ip-flood tcp-sink -p PORT [-T S] [-R READY_FILE]\n"
		     "       ip-flood tcp-send -d ADDR [-p PORT] [-z BYTES] [-T S]\n"
		     "  -z BYTES  UDP payload per datagram (default 32) or TCP write size (default "
		     "65536)\n"
		     "  -p PORT   default 9 (UDP), 5001 (TCP)\n");
}

static int parse_options(int argc, char **argv, struct ipf_options *o)
{
	static const struct option longopts[] = {
		{"dst", required_argument, NULL, 'd'},
		{"port", required_argument, NULL, 'p'},
		{"size", required_argument, NULL, 'z'},
		{"rate", required_argument, NULL, 'r'},
		{"seconds", required_argument, NULL, 'T'},
		{"interface", required_argument, NULL, 'i'},
		{"ttl", required_argument, NULL, 't'},
		{"ready", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool tcp;
	int c;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	o->mode = argv[1];
	if (strcmp(o->mode, "udp") != 0 && strcmp(o->mode, "tcp-sink") != 0 &&
		strcmp(o->mode, "tcp-send") != 0) {
		fprintf(stderr, "ip-flood: unknown mode %s\n", o->mode);
		usage(stderr);
		return EXIT_USAGE;
	}
	tcp = o->mode[0] == 't';
	o->port = tcp ? 5001 : 9;
	o->bytes = tcp ? IPF_MAX_BYTES : 32;
	o->ttl = 16;
	optind = 2;
	while ((c = getopt_long(argc, argv, "d:p:z:r:T:i:R:h", longopts, NULL)) != -1) {
		char *end = NULL;
		unsigned long v;
		bool ok = true;

		errno = 0;
		switch (c) {
		case 'd':
			ok = inet_pton(AF_INET, optarg, &o->dst) == 1;
			o->have_dst = ok;
			break;
		case 'p':
			v = strtoul(optarg, &end, 10);
			ok = errno == 0 && *end == '\0' && v >= 1 && v <= 65535;
			o->port = (uint16_t)v;
			break;
		case 'z':
			v = strtoul(optarg, &end, 10);
			ok = errno == 0 && *end == '\0' && v >= 1 &&
			     v <= (tcp ? IPF_MAX_BYTES : 1472);
			o->bytes = (uint32_t)v;
			break;
		case 'r':
			o->rate = strtod(optarg, &end);
			ok = errno == 0 && *end == '\0' && o->rate >= 0 && o->rate <= 1e8;
			break;
		case 'T':
			o->seconds = strtod(optarg, &end);
			ok = errno == 0 && *end == '\0' && o->seconds >= 0 && o->seconds <= 86400;
			break;
		case 'i':
			o->ifindex = if_nametoindex(optarg);
			ok = o->ifindex != 0;
			break;
		case 't':
			v = strtoul(optarg, &end, 10);
			ok = errno == 0 && *end == '\0' && v >= 1 && v <= 255;
			o->ttl = (int)v;
			break;
		case 'R':
			o->ready_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
		if (!ok) {
			fprintf(stderr, "ip-flood: bad value for -%c: %s\n", c, optarg);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || (strcmp(o->mode, "tcp-sink") != 0 && !o->have_dst)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

static int run_udp(const struct ipf_options *o)
{
	static char payload[1472];
	struct mmsghdr msgs[IPF_MAX_BATCH];
	struct iovec iov = {.iov_base = payload, .iov_len = 0};
	struct sockaddr_in dst = {.sin_family = AF_INET};
	uint64_t sent = 0, errors = 0;
	double start, cpu_start, next_time;
	int fd, rc = 0, last_errno = 0;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		fprintf(stderr, "ip-flood: socket: %s\n", strerror(errno));
		return EXIT_SETUP;
	}
	if (IN_MULTICAST(ntohl(o->dst.s_addr))) {
		struct ip_mreqn mr = {.imr_ifindex = (int)o->ifindex};

		if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &o->ttl, sizeof(o->ttl)) < 0 ||
			(o->ifindex != 0 &&
				setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof(mr)) < 0)) {
			fprintf(stderr, "ip-flood: multicast options: %s\n", strerror(errno));
			close(fd);
			return EXIT_SETUP;
		}
	} else if (setsockopt(fd, IPPROTO_IP, IP_TTL, &o->ttl, sizeof(o->ttl)) < 0) {
		fprintf(stderr, "ip-flood: IP_TTL: %s\n", strerror(errno));
		close(fd);
		return EXIT_SETUP;
	}
	dst.sin_addr = o->dst;
	dst.sin_port = htons(o->port);
	iov.iov_len = o->bytes;
	memset(payload, 0x5a, sizeof(payload));
	memset(msgs, 0, sizeof(msgs));
	for (unsigned i = 0; i < IPF_MAX_BATCH; i++) {
		msgs[i].msg_hdr.msg_name = &dst;
		msgs[i].msg_hdr.msg_namelen = sizeof(dst);
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	start = now_seconds();
	cpu_start = cpu_seconds();
	next_time = start;
	while (!stop_requested) {
		unsigned want = IPF_MAX_BATCH;
		int n;

		if (o->rate > 0) {
			/* Pace in bursts of about a millisecond's worth, at least one datagram. */
			unsigned per_ms = (unsigned)(o->rate / 1000.0);

			if (per_ms < 1)
				per_ms = 1;
			if (want > per_ms)
				want = per_ms;
			sleep_until(next_time);
			next_time += want / o->rate;
		}
		if (o->seconds > 0 && now_seconds() - start >= o->seconds)
			break;
		n = sendmmsg(fd, msgs, want, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			errors++;
			last_errno = errno;
			if (errno != ENOBUFS && errno != EAGAIN && errno != EPERM) {
				fprintf(stderr, "ip-flood: sendmmsg: %s\n", strerror(errno));
				rc = 1;
				break;
			}
			continue;
		}
		sent += (uint64_t)n;
	}
	printf("result=%s sent=%" PRIu64 " bytes=%" PRIu64 " ip_len=%u send_errors=%" PRIu64
	       " last_errno=%d seconds=%.6f cpu_seconds=%.6f\n",
		rc == 0 ? "ok" : "fail", sent, sent * (o->bytes + 28u), o->bytes + 28u, errors,
		last_errno, now_seconds() - start, cpu_seconds() - cpu_start);
	close(fd);
	return rc;
}

static int run_tcp_sink(const struct ipf_options *o)
{
	static char buf[IPF_MAX_BYTES];
	struct sockaddr_in addr = {.sin_family = AF_INET};
	uint64_t received = 0;
	double start = 0, cpu_start = 0;
	int lfd, fd, one = 1, rc = 0;

	addr.sin_port = htons(o->port);
	addr.sin_addr.s_addr = htonl(INADDR_ANY);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(lfd, 1) < 0) {
		fprintf(stderr, "ip-flood: listen on %u: %s\n", o->port, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		return EXIT_SETUP;
	}
	if (o->ready_file != NULL) {
		FILE *f = fopen(o->ready_file, "w");

		if (f == NULL || fclose(f) != 0) {
			fprintf(stderr, "ip-flood: %s: %s\n", o->ready_file, strerror(errno));
			close(lfd);
			return EXIT_SETUP;
		}
	}
	{
		/* Bounded: no connection within the time (or 60 s) ends the sink. */
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		int wait_ms = (int)((o->seconds > 0 ? o->seconds : 60) * 1000);

		if (poll(&p, 1, wait_ms) <= 0) {
			fprintf(stderr, "ip-flood: no connection\n");
			close(lfd);
			return 1;
		}
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0) {
		fprintf(stderr, "ip-flood: accept: %s\n", strerror(errno));
		return 1;
	}
	start = now_seconds();
	cpu_start = cpu_seconds();
	while (!stop_requested) {
		ssize_t n;

		if (o->seconds > 0 && now_seconds() - start >= o->seconds + 5)
			break;
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "ip-flood: read: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		received += (uint64_t)n;
	}
	printf("result=%s received=%" PRIu64 " seconds=%.6f cpu_seconds=%.6f\n",
		rc == 0 ? "ok" : "fail", received, now_seconds() - start,
		cpu_seconds() - cpu_start);
	close(fd);
	return rc;
}

static int run_tcp_send(const struct ipf_options *o)
{
	static char buf[IPF_MAX_BYTES];
	struct sockaddr_in addr = {.sin_family = AF_INET};
	uint64_t sent = 0;
	double start, cpu_start;
	int fd, rc = 0;

	addr.sin_port = htons(o->port);
	addr.sin_addr = o->dst;
	memset(buf, 0x5a, sizeof(buf));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		fprintf(stderr, "ip-flood: connect: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return EXIT_SETUP;
	}
	start = now_seconds();
	cpu_start = cpu_seconds();
	while (!stop_requested && (o->seconds == 0 || now_seconds() - start < o->seconds)) {
		ssize_t n = write(fd, buf, o->bytes);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "ip-flood: write: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		sent += (uint64_t)n;
	}
	shutdown(fd, SHUT_WR);
	printf("result=%s sent_bytes=%" PRIu64 " seconds=%.6f cpu_seconds=%.6f\n",
		rc == 0 ? "ok" : "fail", sent, now_seconds() - start, cpu_seconds() - cpu_start);
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	struct ipf_options o;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = parse_options(argc, argv, &o);
	if (rc != 0)
		return rc;
	stop_on_signals();
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(o.mode, "udp") == 0)
		return run_udp(&o);
	if (strcmp(o.mode, "tcp-sink") == 0)
		return run_tcp_sink(&o);
	return run_tcp_send(&o);
}

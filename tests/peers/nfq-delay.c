/*
 * nfq-delay: holds every packet of one netfilter queue for a fixed time, then accepts it, in
 * arrival order. The lab has no netem qdisc; this puts a long path between two hosts, for
 * example between a PGM source and its receivers (iptables ... -j NFQUEUE --queue-num N
 * --queue-bypass on the source's OUTPUT chain).
 *
 *   nfq-delay --queue N --delay-ms D [--timeout S (60)] [--ready FILE]
 *
 * Packets that do not fit into the holding ring (65536) are accepted at once and counted. On
 * SIGINT/SIGTERM or at the time limit every held packet is accepted, "nfq-delay: held N packets,
 * passed M at once" goes to standard error and the exit status is 0 (70 when the queue cannot be
 * bound).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataplane/nfq.h"
#include "tests/lib/tool.h"

#define RING_SIZE 65536u

struct held {
	uint32_t id;
	uint64_t due_ns;
};

struct delay {
	struct held ring[RING_SIZE];
	uint32_t head, count; /* oldest entry, entries held */
	uint64_t delay_ns;
	uint64_t held, passed_at_once;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_packet(void *ctx, struct nfqueue *q, const struct nfqueue_packet *pkt)
{
	struct delay *d = ctx;

	if (d->count == RING_SIZE) {
		d->passed_at_once++;
		nfqueue_verdict(q, pkt->id, NFQUEUE_ACCEPT);
		return;
	}
	d->ring[(d->head + d->count) % RING_SIZE] =
		(struct held){.id = pkt->id, .due_ns = now_ns() + d->delay_ns};
	d->count++;
	d->held++;
}

/* Accepts every held packet that is due at `now` (all of them when `all`). */
static void release(struct delay *d, struct nfqueue *q, uint64_t now, bool all)
{
	while (d->count > 0 && (all || d->ring[d->head].due_ns <= now)) {
		nfqueue_verdict(q, d->ring[d->head].id, NFQUEUE_ACCEPT);
		d->head = (d->head + 1) % RING_SIZE;
		d->count--;
	}
	nfqueue_flush(q);
}

static void usage(void)
{
	fprintf(stderr, "usage: nfq-delay --queue N --delay-ms D [--timeout S] [--ready FILE]\n");
	exit(64);
}

static bool parse_ulong(const char *text, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(text, &end, 10);
	return errno == 0 && end != text && *end == '\0' && *out <= max;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"queue", required_argument, NULL, 'q'},
		{"delay-ms", required_argument, NULL, 'd'},
		{"timeout", required_argument, NULL, 't'},
		{"ready", required_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	static struct delay d;
	struct nfqueue_config cfg;
	struct nfqueue *q;
	unsigned long queue_num = 0, delay_ms = 0, timeout_s = 60;
	const char *ready = NULL;
	bool have_queue = false, have_delay = false;
	uint64_t end_ns;
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			if (!parse_ulong(optarg, 65535, &queue_num))
				usage();
			have_queue = true;
			break;
		case 'd':
			if (!parse_ulong(optarg, 60000, &delay_ms))
				usage();
			have_delay = true;
			break;
		case 't':
			if (!parse_ulong(optarg, 86400, &timeout_s))
				usage();
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			usage();
		}
	}
	if (!have_queue || !have_delay || optind < argc)
		usage();
	d.delay_ns = (uint64_t)delay_ms * 1000000u;

	stop_on_signals();

	nfqueue_config_default(&cfg);
	cfg.queue_num = (uint16_t)queue_num;
	cfg.max_queue_len = RING_SIZE;
	q = nfqueue_open(&cfg, on_packet, &d, err, sizeof(err));
	if (q == NULL) {
		fprintf(stderr, "nfq-delay: %s\n", err);
		return 70;
	}
	touch_ready(ready);
	end_ns = now_ns() + (uint64_t)timeout_s * 1000000000u;
	while (!stop_requested) {
		uint64_t now = now_ns();
		int wait_ms = 100;
		struct pollfd pfd = {.fd = nfqueue_fd(q), .events = POLLIN};

		if (now >= end_ns)
			break;
		if (d.count > 0) {
			uint64_t due = d.ring[d.head].due_ns;

			wait_ms = due <= now ? 0 : (int)((due - now + 999999) / 1000000);
			if (wait_ms > 100)
				wait_ms = 100;
		}
		if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR)
			break;
		if ((pfd.revents & POLLIN) && nfqueue_process(q, 16) < 0) {
			fprintf(stderr, "nfq-delay: receive: %s\n", strerror(errno));
			break;
		}
		release(&d, q, now_ns(), false);
	}
	release(&d, q, now_ns(), true);
	nfqueue_close(q);
	fprintf(stderr, "nfq-delay: held %llu packets, passed %llu at once\n",
		(unsigned long long)d.held, (unsigned long long)d.passed_at_once);
	return 0;
}

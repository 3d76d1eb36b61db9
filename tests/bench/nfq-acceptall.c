/*
 * nfq-acceptall: the queue-path benchmark's baseline. A minimal NFQUEUE consumer with the
 * daemon's queue settings (dataplane/nfq.c: whole-packet copies, fail-open, GSO, 8 MiB receive
 * buffer, recvmmsg, batch verdicts) that accepts every packet and does nothing else.
 *
 *   nfq-acceptall [-q QUEUE] [-b RCVBUF] [-l MAXLEN] [-m BATCH] [-t SECONDS] [-n PACKETS]
 *                 [-r READY_FILE]
 *
 * Runs until SIGINT/SIGTERM, the time limit or the packet count, then prints one line of
 * counters ("key=value" pairs) to stdout. READY_FILE is created once the queue is bound.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/nfq.h"
#include "tests/lib/tool.h"

static void accept_packet(void *ctx, struct nfqueue *q, const struct nfqueue_packet *pkt)
{
	(void)ctx;
	(void)nfqueue_verdict(q, pkt->id, NFQUEUE_ACCEPT);
}

static void usage(void)
{
	fprintf(stderr, "usage: nfq-acceptall [-q QUEUE] [-b RCVBUF] [-l MAXLEN] [-m BATCH] "
			"[-t SECONDS] [-n PACKETS] [-r READY_FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct nfqueue_config cfg;
	struct nfqueue_stats st;
	struct nfqueue_kernel_stats ks;
	struct nfqueue *q;
	double seconds = 0, start, first = 0, last = 0;
	unsigned long long max_packets = 0;
	const char *ready = NULL;
	char err[256];
	int c;

	nfqueue_config_default(&cfg);
	while ((c = getopt(argc, argv, "q:b:l:m:t:n:r:")) != -1) {
		switch (c) {
		case 'q':
			cfg.queue_num = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			cfg.rcvbuf_bytes = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'l':
			cfg.max_queue_len = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			cfg.batch = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = strtod(optarg, NULL);
			break;
		case 'n':
			max_packets = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			usage();
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	q = nfqueue_open(&cfg, accept_packet, NULL, err, sizeof(err));
	if (q == NULL) {
		fprintf(stderr, "nfq-acceptall: %s\n", err);
		return 1;
	}
	touch_ready(ready);
	start = now_seconds();
	while (!stop_requested) {
		struct pollfd pfd = {.fd = nfqueue_fd(q), .events = POLLIN};
		int timeout = 200;

		if (seconds > 0) {
			double left = start + seconds - now_seconds();

			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR) {
			perror("nfq-acceptall: poll");
			break;
		}
		if (pfd.revents & POLLIN) {
			int n = nfqueue_process(q, 64);

			if (n < 0) {
				fprintf(stderr, "nfq-acceptall: receive: %s\n", strerror(errno));
				break;
			}
			if (n > 0) {
				last = now_seconds();
				if (first == 0)
					first = last;
			}
		}
		nfqueue_get_stats(q, &st);
		if (max_packets && st.packets >= max_packets)
			break;
	}
	nfqueue_get_stats(q, &st);
	nfqueue_get_kernel_stats(q, &ks);
	printf("packets=%" PRIu64 " bytes=%" PRIu64 " rounds=%" PRIu64 " accepted=%" PRIu64
	       " batches=%" PRIu64 " batched=%" PRIu64 " verdict_messages=%" PRIu64
	       " id_gaps=%" PRIu64 " enobufs=%" PRIu64 " send_errors=%" PRIu64
	       " netlink_errors=%" PRIu64 " rcvbuf=%u active_seconds=%.3f"
	       " kernel_queue_dropped=%u kernel_user_dropped=%u kernel_id_sequence=%u"
	       " socket_drops=%u\n",
		st.packets, st.bytes, st.rounds, st.accepted, st.batches, st.batched,
		st.verdict_messages, st.id_gaps, st.enobufs, st.send_errors, st.netlink_errors,
		st.rcvbuf_bytes, last > first ? last - first : 0.0, ks.queue_dropped,
		ks.user_dropped, ks.id_sequence, ks.socket_drops);
	nfqueue_close(q);
	return 0;
}

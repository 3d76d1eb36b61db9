/*
 * zmq-sub: a ZeroMQ SUB socket over epgm:// or pgm://, for the lab. Subscribes to everything,
 * checks every message (peer_common.h) and exits 0 only when all COUNT messages arrived exactly
 * once, in order, intact. Prints "event=ready" and a key=value summary.
 *
 * Start it before the publisher: a ZeroMQ PGM receiver starts at the first message it sees.
 */
#include <unistd.h>

#define PEER_NAME "zmq-sub"

#include "peer_common.h"
#include "peer_zmq.h"

struct sub_options {
	struct peer_zmq_options zmq;
	uint64_t count;
	uint64_t run_id;
	uint64_t linger_ms;
	uint64_t progress_ms;
	uint64_t timeout_s;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PEER_NAME " -e ENDPOINT -c COUNT [options]\n"
		"  -e, --endpoint STR     epgm://198.18.2.11;239.192.0.2:5555 or pgm://...\n"
		"  -c, --count N          messages expected (default 1000)\n"
		"  -I, --run-id N         accept only this run id (default 1)\n"
		"      --zmq-rate KBPS    ZMQ_RATE (default 10000)\n"
		"      --recovery-ivl MS  ZMQ_RECOVERY_IVL (default 10000)\n"
		"      --hops N           ZMQ_MULTICAST_HOPS (default 16)\n"
		"      --linger MS        after the last message, keep reading this long (default "
		"200)\n"
		"      --progress MS      print an event=progress line this often (default off)\n"
		"  -T, --timeout S        hard limit on the whole run (default 60)\n"
		"Exit: 0 complete and in order, 1 delivery check failed, 2 timeout,\n"
		"      64 usage, 70 setup failure.\n");
}

static int parse_options(int argc, char **argv, struct sub_options *o)
{
	const struct peer_option table[] = {
		PEER_ZMQ_OPTIONS(&o->zmq),
		PEER_RUN_OPTIONS(o),
		PEER_RECEIVER_OPTIONS(o),
	};

	*o = (struct sub_options){
		.zmq = {.rate_kbps = 10000, .recovery_ivl_ms = 10000, .hops = 16},
		.count = 1000,
		.run_id = 1,
		.linger_ms = 200,
		.timeout_s = 60,
	};
	return peer_parse_options(
		argc, argv, PEER_NAME, table, sizeof(table) / sizeof(table[0]), usage);
}

int main(int argc, char **argv)
{
	struct sub_options o;
	struct peer_delivery d;
	void *ctx, *sock;
	uint8_t *buf;
	uint64_t start_us, deadline_us, next_progress_us;
	bool timed_out = false;
	const char *result;
	int rc;

	if (parse_options(argc, argv, &o) != 0)
		return PEER_EXIT_USAGE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	peer_install_signals();
	buf = malloc(PEER_MAX_SIZE + 1);
	ctx = zmq_ctx_new();
	if (buf == NULL || ctx == NULL || !peer_delivery_init(&d, (uint32_t)o.run_id, o.count))
		return PEER_EXIT_SETUP;
	sock = peer_zmq_open(ctx, ZMQ_SUB, &o.zmq, 0);
	if (sock == NULL) {
		zmq_ctx_term(ctx);
		return PEER_EXIT_SETUP;
	}
	start_us = peer_now_us();
	deadline_us = start_us + o.timeout_s * 1000000u;
	next_progress_us = o.progress_ms ? start_us + o.progress_ms * 1000u : UINT64_MAX;
	printf("event=ready peer=" PEER_NAME " endpoint=%s count=%" PRIu64 "\n", o.zmq.endpoint,
		o.count);

	while (!peer_stop_requested) {
		uint64_t now = peer_now_us(), wake;
		zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
		int n;

		if (now >= deadline_us) {
			timed_out = true;
			break;
		}
		if (now >= next_progress_us) {
			peer_delivery_progress(&d, PEER_NAME, start_us, now);
			next_progress_us += o.progress_ms * 1000u;
		}
		if (peer_delivery_complete(&d) && now >= d.complete_us + o.linger_ms * 1000u)
			break;
		n = zmq_recv(sock, buf, PEER_MAX_SIZE + 1, ZMQ_DONTWAIT);
		if (n >= 0) {
			/* zmq_recv truncates: a longer message shows as PEER_MAX_SIZE + 1. */
			peer_delivery_account(&d, buf, (size_t)n, peer_now_us());
			continue;
		}
		if (zmq_errno() != EAGAIN && zmq_errno() != EINTR) {
			fprintf(stderr, PEER_NAME ": zmq_recv: %s\n", zmq_strerror(zmq_errno()));
			break;
		}
		wake = deadline_us < next_progress_us ? deadline_us : next_progress_us;
		if (peer_delivery_complete(&d) && d.complete_us + o.linger_ms * 1000u < wake)
			wake = d.complete_us + o.linger_ms * 1000u;
		/* Bounded so that a signal is noticed within 100 ms. */
		wake = wake > now ? (wake - now) / 1000u : 0;
		zmq_poll(&item, 1, (long)(wake < 100 ? wake : 100));
	}
	if (timed_out && !peer_delivery_complete(&d))
		result = "timeout";
	else
		result = peer_delivery_ok(&d) ? "ok" : "fail";
	peer_delivery_print(&d, PEER_NAME, result, start_us, peer_now_us(), false, 0);
	if (timed_out && !peer_delivery_complete(&d))
		rc = PEER_EXIT_TIMEOUT;
	else
		rc = peer_delivery_ok(&d) ? PEER_EXIT_OK : PEER_EXIT_FAIL;
	zmq_close(sock);
	zmq_ctx_term(ctx);
	peer_delivery_free(&d);
	free(buf);
	return rc;
}

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
	const char *delivery_log; /* "SEQ DELIVERED_US" per new message */
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
		"      --delivery-log FILE  write \"SEQ MICROSECONDS\" for every message delivered\n"
		"                         the first time, on the monotonic clock (ZeroMQ does not\n"
		"                         say which came from repairs: latencies tell, with\n"
		"                         zmq-pub --send-log)\n");
	fputs(PEER_RECEIVER_EXIT_HELP, out);
}

static int parse_options(int argc, char **argv, struct sub_options *o)
{
	const struct peer_option table[] = {
		PEER_ZMQ_OPTIONS(&o->zmq),
		PEER_RUN_OPTIONS(o),
		PEER_RECEIVER_OPTIONS(o),
		PEER_OPT_STRING("delivery-log", 0, &o->delivery_log),
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
	struct peer_receiver_clock clock;
	bool timed_out = false;
	FILE *delivery_log = NULL;
	int rc;

	if (parse_options(argc, argv, &o) != 0)
		return PEER_EXIT_USAGE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	peer_install_signals();
	buf = malloc(PEER_MAX_SIZE + 1);
	ctx = zmq_ctx_new();
	if (buf == NULL || ctx == NULL || !peer_delivery_init(&d, (uint32_t)o.run_id, o.count))
		return PEER_EXIT_SETUP;
	if (o.delivery_log != NULL && (delivery_log = fopen(o.delivery_log, "w")) == NULL) {
		fprintf(stderr, PEER_NAME ": %s: %s\n", o.delivery_log, strerror(errno));
		return PEER_EXIT_SETUP;
	}
	sock = peer_zmq_open(ctx, ZMQ_SUB, &o.zmq, 0);
	if (sock == NULL) {
		zmq_ctx_term(ctx);
		return PEER_EXIT_SETUP;
	}
	peer_receiver_clock_start(&clock, o.timeout_s, o.progress_ms, o.linger_ms);
	printf("event=ready peer=" PEER_NAME " endpoint=%s count=%" PRIu64 "\n", o.zmq.endpoint,
		o.count);

	while (!stop_requested) {
		uint64_t now = now_microseconds(), wake;
		zmq_pollitem_t item = {.socket = sock, .events = ZMQ_POLLIN};
		int n;

		if (!peer_receiver_tick(&clock, &d, PEER_NAME, now, &timed_out))
			break;
		n = zmq_recv(sock, buf, PEER_MAX_SIZE + 1, ZMQ_DONTWAIT);
		if (n >= 0) {
			uint64_t at = now_microseconds();

			/* zmq_recv truncates: a longer message shows as PEER_MAX_SIZE + 1. */
			if (peer_delivery_account(&d, buf, (size_t)n, at) <= PEER_MSG_NEW_LATE &&
				delivery_log != NULL)
				fprintf(delivery_log, "%" PRIu64 " %" PRIu64 "\n",
					(uint64_t)peer_get32(buf + 8) << 32 | peer_get32(buf + 12), at);
			continue;
		}
		if (zmq_errno() != EAGAIN && zmq_errno() != EINTR) {
			fprintf(stderr, PEER_NAME ": zmq_recv: %s\n", zmq_strerror(zmq_errno()));
			break;
		}
		wake = peer_receiver_wake_us(&clock, &d);
		/* Bounded so that a signal is noticed within 100 ms. */
		wake = wake > now ? (wake - now) / 1000u : 0;
		zmq_poll(&item, 1, (long)(wake < 100 ? wake : 100));
	}
	rc = peer_receiver_finish(&d, PEER_NAME, &clock, timed_out, false, 0);
	zmq_close(sock);
	zmq_ctx_term(ctx);
	peer_delivery_free(&d);
	free(buf);
	if (delivery_log != NULL)
		fclose(delivery_log);
	return rc;
}

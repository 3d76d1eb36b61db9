/*
 * zmq-pub: a ZeroMQ PUB socket over epgm:// (PGM in UDP) or pgm:// (PGM over IP), for the lab.
 * Sends COUNT self-checking messages (peer_common.h) at a paced rate, lingers so ZeroMQ's I/O
 * thread keeps answering NAKs, and exits. Prints "event=ready" and a key=value summary.
 *
 * ZeroMQ facts this program is built around: ZMQ_MULTICAST_HOPS defaults to 1, so nothing would
 * cross a router; ZMQ_RATE (kbit/s) defaults to 100 and is the OpenPGM rate limit, so it is set
 * with headroom above the paced rate; ZMQ_SNDHWM 0 so a PUB socket never drops silently.
 */
#include <unistd.h>

#define PEER_NAME "zmq-pub"

#include "peer_common.h"
#include "peer_zmq.h"

struct pub_options {
	struct peer_zmq_options zmq; /* rate_kbps 0: derived from --rate */
	uint64_t count;
	uint64_t size;
	double rate;
	uint64_t run_id;
	uint64_t start_delay_ms;
	uint64_t linger_ms;
	uint64_t linger_rate; /* messages of another run id per second while lingering */
	uint64_t timeout_s;
	const char *send_log; /* "SEQ SENT_US" per message */
};

static void usage(FILE *out)
{
	fprintf(out, "usage: " PEER_NAME " -e ENDPOINT [options]\n"
		     "  -e, --endpoint STR     epgm://198.18.1.10;239.192.0.2:5555 or pgm://...\n"
		     "  -c, --count N          messages to send (default 1000)\n"
		     "  -z, --size N           message size in bytes, >= 24 (default 200)\n"
		     "  -r, --rate N           messages per second (default 500)\n"
		     "  -I, --run-id N         run id written into every message (default 1)\n"
		     "      --zmq-rate KBPS    ZMQ_RATE (default 4 x paced rate, at least 10000)\n"
		     "      --recovery-ivl MS  ZMQ_RECOVERY_IVL (default 10000)\n"
		     "      --hops N           ZMQ_MULTICAST_HOPS (default 16)\n"
		     "      --start-delay MS   wait after connect before the first message "
		     "(default 1000)\n"
		     "      --linger MS        keep answering NAKs after the last message (default "
		     "3000)\n"
		     "      --linger-rate N    while lingering, send N messages a second of another\n"
		     "                         run id (receivers ignore them as foreign): an idle\n"
		     "                         publisher answers NAKs late (tests/soak/README)\n"
		     "  -T, --timeout S        hard limit on the whole run (default 60)\n"
		     "      --send-log FILE    write \"SEQ MICROSECONDS\" for every message sent, on\n"
		     "                         the monotonic clock: with zmq-sub --delivery-log it gives\n"
		     "                         each message's latency\n"
		     "Exit: 0 all sent, 1 send failure, 2 timeout, 64 usage, 70 setup failure.\n");
}

static int parse_options(int argc, char **argv, struct pub_options *o)
{
	const struct peer_option table[] = {
		PEER_ZMQ_OPTIONS(&o->zmq),
		PEER_RUN_OPTIONS(o),
		PEER_SENDER_OPTIONS(o),
		PEER_OPT_STRING("send-log", 0, &o->send_log),
		PEER_OPT_U64("linger-rate", 0, &o->linger_rate, 0, 1000),
	};

	*o = (struct pub_options){
		.zmq = {.recovery_ivl_ms = 10000, .hops = 16},
		.count = 1000,
		.size = 200,
		.rate = 500,
		.run_id = 1,
		.start_delay_ms = 1000,
		.linger_ms = 3000,
		.timeout_s = 60,
	};
	if (peer_parse_options(
		    argc, argv, PEER_NAME, table, sizeof(table) / sizeof(table[0]), usage) != 0)
		return -1;
	if (o->zmq.rate_kbps == 0) {
		double kbps = o->rate * (double)(o->size + 64) * 8 * 4 / 1000;
		o->zmq.rate_kbps = kbps > 10000 ? (uint64_t)kbps : 10000;
	}
	return 0;
}

/* Sleeps until the monotonic time `until` (microseconds) or a stop request. */
static void sleep_until(uint64_t until)
{
	uint64_t now;

	while (!stop_requested && (now = now_microseconds()) < until) {
		uint64_t left = until - now;
		struct timespec ts = {.tv_sec = (time_t)(left / 1000000u),
			.tv_nsec = (long)(left % 1000000u) * 1000};
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	struct pub_options o;
	void *ctx, *sock;
	uint8_t *msg;
	uint64_t start_us, deadline_us, next_us, interval_us, sent = 0, bytes = 0, errors = 0;
	uint64_t last_sent_us = 0, linger_end, lingered = 0;
	bool timed_out = false;
	const char *result;
	FILE *send_log = NULL;

	if (parse_options(argc, argv, &o) != 0)
		return PEER_EXIT_USAGE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	peer_install_signals();
	msg = malloc(o.size);
	ctx = zmq_ctx_new();
	if (msg == NULL || ctx == NULL)
		return PEER_EXIT_SETUP;
	if (o.send_log != NULL && (send_log = fopen(o.send_log, "w")) == NULL) {
		fprintf(stderr, PEER_NAME ": %s: %s\n", o.send_log, strerror(errno));
		return PEER_EXIT_SETUP;
	}
	sock = peer_zmq_open(ctx, ZMQ_PUB, &o.zmq, 2000);
	if (sock == NULL) {
		zmq_ctx_term(ctx);
		return PEER_EXIT_SETUP;
	}
	start_us = now_microseconds();
	deadline_us = start_us + o.timeout_s * 1000000u;
	printf("event=ready peer=" PEER_NAME " endpoint=%s count=%" PRIu64 " size=%" PRIu64
	       " rate=%.1f zmq_rate_kbps=%" PRIu64 "\n",
		o.zmq.endpoint, o.count, o.size, o.rate, o.zmq.rate_kbps);

	interval_us = (uint64_t)(1e6 / o.rate);
	next_us = start_us + o.start_delay_ms * 1000u;
	while (!stop_requested && sent < o.count) {
		sleep_until(next_us < deadline_us ? next_us : deadline_us);
		if (now_microseconds() >= deadline_us) {
			timed_out = true;
			break;
		}
		if (stop_requested)
			break;
		peer_payload_build(msg, o.size, (uint32_t)o.run_id, sent);
		if (zmq_send(sock, msg, o.size, 0) != (int)o.size) {
			fprintf(stderr, PEER_NAME ": zmq_send: %s\n", zmq_strerror(zmq_errno()));
			if (++errors > 100)
				break;
			continue;
		}
		if (send_log != NULL)
			fprintf(send_log, "%" PRIu64 " %" PRIu64 "\n", sent, now_microseconds());
		sent++;
		bytes += o.size;
		next_us += interval_us;
		if (next_us + 100000 < now_microseconds())
			next_us = now_microseconds();
	}
	last_sent_us = now_microseconds();
	/* ZeroMQ's I/O thread answers NAKs while this thread waits; with --linger-rate it keeps
	 * sending, messages of another run id (~run_id), so that the I/O thread stays awake. */
	linger_end = last_sent_us + o.linger_ms * 1000u;
	if (!timed_out && o.linger_rate > 0 && !stop_requested) {
		uint64_t step = 1000000u / o.linger_rate, k = 0;

		for (uint64_t t = last_sent_us + step;
			t < linger_end && t < deadline_us && !stop_requested; t += step) {
			sleep_until(t);
			peer_payload_build(msg, o.size, ~(uint32_t)o.run_id, k++);
			if (zmq_send(sock, msg, o.size, 0) == (int)o.size)
				lingered++;
		}
	}
	if (!timed_out)
		sleep_until(linger_end < deadline_us ? linger_end : deadline_us);

	if (timed_out)
		result = "timeout";
	else
		result = sent == o.count ? "ok" : "fail";
	printf("result=%s peer=" PEER_NAME " messages=%" PRIu64 " expected=%" PRIu64
	       " bytes=%" PRIu64 " errors=%" PRIu64 " lingered=%" PRIu64 " send_ms=%" PRIu64
	       " run_ms=%" PRIu64 "\n",
		result, sent, o.count, bytes, errors, lingered, (last_sent_us - start_us) / 1000u,
		(now_microseconds() - start_us) / 1000u);
	zmq_close(sock);
	zmq_ctx_term(ctx);
	free(msg);
	if (send_log != NULL)
		fclose(send_log);
	if (timed_out)
		return PEER_EXIT_TIMEOUT;
	return sent == o.count ? PEER_EXIT_OK : PEER_EXIT_FAIL;
}

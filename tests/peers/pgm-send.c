/*
 * pgm-send: an OpenPGM source for the lab. Sends COUNT self-checking messages (peer_common.h) at a
 * paced rate over PGM/IP or PGM/UDP, answers NAKs with RDATA while sending and for a linger time
 * afterwards, then exits. Prints "event=ready" once connected and a key=value summary at the end.
 *
 * OpenPGM facts this program is built around (each one bit us):
 *  - every socket option, PGM_NOBLOCK included, must be set before pgm_connect;
 *  - a source sends repairs only from inside pgm_recv, one per call, so the loop keeps calling it
 *    and polls on the library's descriptors (the repair notification fd among them);
 *  - a NAK read by pgm_recv queues its repair and signals nothing: in non-blocking mode the
 *    repair leaves at the start of the next pgm_recv call (the next message's, at the paced
 *    rate), where the library's blocking mode calls again at once (--repair-at-once);
 *  - the library's rate limiter bursts a second's worth of traffic at low rates, so this program
 *    paces the messages itself and gives the library limit headroom for repairs.
 */
#define PEER_NAME "pgm-send"

#include "peer_common.h"
#include "peer_pgm.h"

struct send_options {
	struct peer_pgm_options pgm;
	uint64_t sport;
	uint64_t count;
	uint64_t size;
	uint64_t large_every; /* every Nth message is large_size bytes (fragmented), 0: never */
	uint64_t large_size;
	double rate;	/* messages per second */
	uint64_t burst; /* messages sent back to back per tick */
	uint64_t run_id;
	uint64_t txw_sqns;
	uint64_t max_rte; /* library rate limit, bytes per second; 0: derived from --rate */
	uint64_t spm_ambient_ms;
	uint64_t start_delay_ms;
	uint64_t linger_ms;
	uint64_t timeout_s;
	uint64_t sndbuf;
	const char *send_log; /* "SEQ SENT_US" per original message */
	bool repair_at_once;  /* the pgm_recv after a wakeup is followed by another at once */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PEER_NAME " -n NETWORK [options]\n"
		"  -n, --network STR     OpenPGM network string, interface address first:\n"
		"                        \"198.18.1.10;239.192.0.1\"\n"
		"  -s, --port N          data-destination port (default 7500)\n"
		"      --sport N         data-source port, part of the TSI (default random)\n"
		"  -u, --udp PORT[:PORT] UDP encapsulation, unicast[:multicast] port\n"
		"  -c, --count N         messages to send (default 1000)\n"
		"  -z, --size N          message size in bytes, >= 24 (default 200)\n"
		"      --large-every N   every Nth message (1st, N+1th, ...) is --large-size "
		"bytes\n"
		"      --large-size N    size of those messages (default 4000: OpenPGM fragments\n"
		"                        them into several TPDUs with OPT_FRAGMENT)\n"
		"  -r, --rate N          messages per second, paced here (default 1000)\n"
		"  -b, --burst N         messages sent back to back per tick (default 1)\n"
		"  -I, --run-id N        run id written into every message (default 1)\n"
		"      --txw-sqns N      transmit window in sequence numbers (default 10000)\n"
		"      --max-rte N       library rate limit in bytes/s (default 4 x paced rate,\n"
		"                        at least 2000000)\n"
		"      --spm-ambient MS  ambient SPM interval (default 1000)\n"
		"      --start-delay MS  wait after connect before the first message, so SPMs\n"
		"                        define the receivers' windows (default 500)\n"
		"      --linger MS       keep answering NAKs after the last message (default "
		"3000)\n"
		"  -T, --timeout S       hard limit on the whole run (default 60)\n"
		"      --hops N          multicast TTL (default 16)\n"
		"      --sndbuf N        socket send buffer in bytes (default library's)\n"
		"  -A, --router-alert    set IP Router Alert (default off, as OpenPGM)\n"
		"      --fec K           on-demand parity (FEC), transmission group of K\n"
		"                        packets (a power of 2, 2..128; receivers need the same)\n"
		"      --loop            enable multicast loopback\n"
		"      --tpdu N          largest TPDU, PGM_MTU (default 1500)\n"
		"      --send-log FILE   write \"SEQ MICROSECONDS\" for every message sent (the\n"
		"                        monotonic clock, when pgm_send returned)\n"
		"      --repair-at-once  call pgm_recv once more right after each wakeup's call, so\n"
		"                        a NAK's repair leaves at once (as in OpenPGM's blocking\n"
		"                        mode) instead of with the next message or timer\n"
		"Exit: 0 all sent and lingered, 2 timeout, 64 usage, 70 setup failure.\n");
}

static int parse_options(int argc, char **argv, struct send_options *o)
{
	const struct peer_option table[] = {
		PEER_PGM_OPTIONS(&o->pgm),
		PEER_RUN_OPTIONS(o),
		PEER_SENDER_OPTIONS(o),
		PEER_OPT_U64("sport", 0, &o->sport, 1, 65535),
		PEER_OPT_U64("large-every", 0, &o->large_every, 1, 100000000),
		PEER_OPT_U64("large-size", 0, &o->large_size, PEER_HEADER_LEN, PEER_MAX_SIZE),
		PEER_OPT_U64("burst", 'b', &o->burst, 1, 10000),
		PEER_OPT_U64("txw-sqns", 0, &o->txw_sqns, 16, 1000000),
		PEER_OPT_U64("max-rte", 0, &o->max_rte, 1000, 1000000000),
		PEER_OPT_U64("spm-ambient", 0, &o->spm_ambient_ms, 10, 600000),
		PEER_OPT_U64("sndbuf", 0, &o->sndbuf, 4096, 1u << 30),
		PEER_OPT_STRING("send-log", 0, &o->send_log),
		PEER_OPT_FLAG("repair-at-once", 0, &o->repair_at_once),
	};

	*o = (struct send_options){
		.pgm = PEER_PGM_DEFAULTS,
		.count = 1000,
		.size = 200,
		.large_size = 4000,
		.rate = 1000,
		.burst = 1,
		.run_id = 1,
		.txw_sqns = 10000,
		.spm_ambient_ms = 1000,
		.start_delay_ms = 500,
		.linger_ms = 3000,
		.timeout_s = 60,
	};
	if (peer_parse_options(
		    argc, argv, PEER_NAME, table, sizeof(table) / sizeof(table[0]), usage) != 0)
		return -1;
	if (o->max_rte == 0) {
		/*
		 * Room for the paced ODATA, the repairs and the SPMs, never below 2 MB/s. Above
		 * about 1.5 MB/s OpenPGM meters per millisecond, and an APDU (all its fragments)
		 * must fit into one millisecond's allowance or pgm_send reports RATE_LIMITED
		 * forever.
		 */
		uint64_t largest =
			o->large_every && o->large_size > o->size ? o->large_size : o->size;
		double paced = o->rate * (double)(o->size + 64) * 4;
		double apdu = (double)(largest + (largest / 1400 + 1) * 64) * 1000 * 1.25;
		o->max_rte = 2000000;
		if (paced > (double)o->max_rte)
			o->max_rte = (uint64_t)paced;
		if (apdu > (double)o->max_rte)
			o->max_rte = (uint64_t)apdu;
	}
	return 0;
}

/* The source's own options: send only, the transmit window, its rate limit and SPM timers. */
static bool configure_source(pgm_sock_t *sock, const void *arg)
{
	const struct send_options *o = arg;
	const int heartbeat_spm[] = {pgm_msecs(100), pgm_msecs(100), pgm_msecs(100), pgm_msecs(100),
		pgm_msecs(1300), pgm_secs(7), pgm_secs(16), pgm_secs(25), pgm_secs(30)};
	bool ok = true;

	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_SEND_ONLY, 1, "PGM_SEND_ONLY");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_TXW_SQNS, (int)o->txw_sqns, "PGM_TXW_SQNS");
	ok &= peer_pgm_set_int(
		sock, IPPROTO_PGM, PGM_TXW_MAX_RTE, (int)o->max_rte, "PGM_TXW_MAX_RTE");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_AMBIENT_SPM,
		(int)pgm_msecs(o->spm_ambient_ms), "PGM_AMBIENT_SPM");
	if (!pgm_setsockopt(
		    sock, IPPROTO_PGM, PGM_HEARTBEAT_SPM, heartbeat_spm, sizeof(heartbeat_spm))) {
		fprintf(stderr, PEER_NAME ": setting PGM_HEARTBEAT_SPM failed\n");
		ok = false;
	}
	if (o->sndbuf)
		ok &= peer_pgm_set_int(sock, SOL_SOCKET, SO_SNDBUF, (int)o->sndbuf, "SO_SNDBUF");
	return ok;
}

/*
 * Sending around a libpgm 5.3.128 bug. Its vectorised checksum-and-copy (used by pgm_send and
 * pgm_sendv) aligns the source to 16 bytes and then stores to the destination with aligned SSE
 * stores: it crashes with SIGSEGV unless source and destination are congruent modulo 16. The
 * destination is the payload inside a library packet buffer (malloc'd, so 16-aligned, followed by
 * struct pgm_sk_buff_t and the PGM headers), so each piece of a message is staged at the matching
 * offset: one piece for a message that fits one TPDU, one piece per fragment (pgm_sendv with one
 * vector element of exactly PGM_MSS bytes per fragment) for a larger one.
 */
struct send_stage {
	size_t tsdu_max;     /* PGM_MSSS: largest unfragmented payload */
	size_t fragment_max; /* PGM_MSS: payload of one fragment */
	uint8_t *area;	     /* PGM_MAX_FRAGMENTS slots, 16-aligned */
	size_t slot_size;
};

#define STAGE_ALIGN(header_len) ((sizeof(struct pgm_sk_buff_t) + (header_len)) % 16)
#define HEADER_LEN_DATA		(sizeof(struct pgm_header) + sizeof(struct pgm_data))
#define HEADER_LEN_FRAGMENT                                                                        \
	(HEADER_LEN_DATA + sizeof(struct pgm_opt_length) + sizeof(struct pgm_opt_header) +         \
		sizeof(struct pgm_opt_fragment))

static bool stage_init(struct send_stage *stage, pgm_sock_t *sock)
{
	int value;
	socklen_t len = sizeof(value);

	if (!pgm_getsockopt(sock, IPPROTO_PGM, PGM_MSSS, &value, &len) || value <= 0)
		return false;
	stage->tsdu_max = (size_t)value;
	len = sizeof(value);
	if (!pgm_getsockopt(sock, IPPROTO_PGM, PGM_MSS, &value, &len) || value <= 0)
		return false;
	stage->fragment_max = (size_t)value;
	stage->slot_size = (stage->tsdu_max + 32 + 15) & ~(size_t)15;
	stage->area = aligned_alloc(16, stage->slot_size * PGM_MAX_FRAGMENTS);
	return stage->area != NULL;
}

/* The largest message the staging can send. */
static size_t stage_max_message(const struct send_stage *stage)
{
	return stage->fragment_max * PGM_MAX_FRAGMENTS;
}

static int send_message(
	pgm_sock_t *sock, const struct send_stage *stage, const uint8_t *msg, size_t size)
{
	struct pgm_iovec iov[PGM_MAX_FRAGMENTS];
	unsigned count = 0;
	uint8_t *piece;

	if (size <= stage->tsdu_max) {
		piece = stage->area + STAGE_ALIGN(HEADER_LEN_DATA);
		memcpy(piece, msg, size);
		return pgm_send(sock, piece, size, NULL);
	}
	for (size_t off = 0; off < size; off += stage->fragment_max, count++) {
		size_t len = size - off < stage->fragment_max ? size - off : stage->fragment_max;
		piece = stage->area + count * stage->slot_size + STAGE_ALIGN(HEADER_LEN_FRAGMENT);
		memcpy(piece, msg + off, len);
		iov[count].iov_base = piece;
		iov[count].iov_len = len;
	}
	return pgm_sendv(sock, iov, count, true, NULL);
}

struct send_stats {
	uint64_t sent;
	uint64_t bytes;
	uint64_t rate_limited;
	uint64_t would_block;
	uint64_t recv_errors;
};

int main(int argc, char **argv)
{
	struct send_options o;
	struct send_stats st = {0};
	struct send_stage stage = {0};
	pgm_error_t *err = NULL;
	pgm_sock_t *sock;
	uint8_t *msg;
	uint8_t scratch[4096];
	uint64_t start_us, deadline_us, next_send_us, interval_us, last_sent_us = 0;
	FILE *send_log = NULL;
	uint64_t send_block_until = 0;
	bool want_pollout = false, timed_out = false, woke = false;
	const char *result;
	int rc;

	if (parse_options(argc, argv, &o) != 0)
		return PEER_EXIT_USAGE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	peer_install_signals();
	msg = malloc(o.size > o.large_size ? o.size : o.large_size);
	if (msg == NULL)
		return PEER_EXIT_SETUP;
	if (o.send_log != NULL && (send_log = fopen(o.send_log, "w")) == NULL) {
		fprintf(stderr, PEER_NAME ": %s: %s\n", o.send_log, strerror(errno));
		return PEER_EXIT_SETUP;
	}
	if (!pgm_init(&err)) {
		peer_pgm_report("starting OpenPGM", err);
		return PEER_EXIT_SETUP;
	}
	sock = peer_pgm_open(&o.pgm, (uint16_t)o.sport, configure_source, &o);
	if (sock == NULL) {
		pgm_shutdown();
		return PEER_EXIT_SETUP;
	}
	if (!stage_init(&stage, sock) ||
		(o.large_every && o.large_size > stage_max_message(&stage))) {
		fprintf(stderr, PEER_NAME ": cannot send messages of %" PRIu64 " bytes (max %zu)\n",
			o.large_size, stage_max_message(&stage));
		pgm_close(sock, false);
		pgm_shutdown();
		return PEER_EXIT_SETUP;
	}
	start_us = now_microseconds();
	deadline_us = start_us + o.timeout_s * 1000000u;
	interval_us = (uint64_t)(1e6 * (double)o.burst / o.rate);
	next_send_us = start_us + o.start_delay_ms * 1000u;
	printf("event=ready peer=" PEER_NAME " network=%s port=%" PRIu64 " udp=%" PRIu64 ":%" PRIu64
	       " count=%" PRIu64 " size=%" PRIu64 " rate=%.1f max_rte=%" PRIu64 "\n",
		o.pgm.network, o.pgm.dport, o.pgm.udp.ucast, o.pgm.udp.mcast, o.count, o.size,
		o.rate, o.max_rte);

	while (!stop_requested) {
		uint64_t now = now_microseconds(), wake, lib_wait;
		bool writable;
		size_t got;
		int status;

		if (now >= deadline_us) {
			timed_out = true;
			break;
		}
		/* Original data: due messages, a burst at a time, never faster than paced. */
		if (st.sent < o.count && now >= next_send_us && now >= send_block_until &&
			!want_pollout) {
			for (uint64_t b = 0; b < o.burst && st.sent < o.count; b++) {
				size_t size = o.large_every && st.sent % o.large_every == 0
						      ? o.large_size
						      : o.size;
				peer_payload_build(msg, size, (uint32_t)o.run_id, st.sent);
				status = send_message(sock, &stage, msg, size);
				if (status == PGM_IO_STATUS_NORMAL) {
					if (send_log != NULL)
						fprintf(send_log, "%" PRIu64 " %" PRIu64 "\n",
							st.sent, now_microseconds());
					st.sent++;
					st.bytes += size;
					continue;
				}
				if (status == PGM_IO_STATUS_RATE_LIMITED) {
					st.rate_limited++;
					lib_wait = peer_pgm_wait_us(sock, status);
					send_block_until =
						now + (lib_wait == UINT64_MAX ? 1000 : lib_wait);
				} else if (status == PGM_IO_STATUS_WOULD_BLOCK) {
					st.would_block++;
					want_pollout = true;
				} else {
					fprintf(stderr, PEER_NAME ": pgm_send failed, status %d\n",
						status);
					st.recv_errors++;
					send_block_until = now + 10000;
				}
				break;
			}
			next_send_us += interval_us;
			/* After a stall, resume the pace instead of catching up in one burst. */
			if (next_send_us + 100000 < now)
				next_send_us = now;
			if (st.sent == o.count)
				last_sent_us = now_microseconds();
		}
		if (st.sent == o.count && now >= last_sent_us + o.linger_ms * 1000u)
			break;

		/* Repairs, NCFs and SPM heartbeats happen only in here, one repair per call. */
		status = pgm_recv(sock, scratch, sizeof(scratch), 0, &got, &err);
		if (err != NULL) {
			fprintf(stderr, PEER_NAME ": pgm_recv: %s\n",
				err->message ? err->message : "error");
			pgm_error_free(err);
			err = NULL;
			st.recv_errors++;
		}
		if (status == PGM_IO_STATUS_NORMAL)
			continue;
		if (status == PGM_IO_STATUS_ERROR || status == PGM_IO_STATUS_EOF)
			break;
		/* The call after a wakeup sends the repair of a NAK that the wakeup's call read. */
		if (o.repair_at_once && woke) {
			woke = false;
			continue;
		}

		/* Sleep until the library, the pacer, the linger or the deadline needs us. */
		now = now_microseconds();
		lib_wait = peer_pgm_wait_us(sock, status);
		wake = deadline_us;
		if (lib_wait != UINT64_MAX && now + lib_wait < wake)
			wake = now + lib_wait;
		if (st.sent < o.count) {
			uint64_t send_at =
				next_send_us > send_block_until ? next_send_us : send_block_until;
			if (!want_pollout && send_at < wake)
				wake = send_at;
		} else if (last_sent_us + o.linger_ms * 1000u < wake) {
			wake = last_sent_us + o.linger_ms * 1000u;
		}
		if (!peer_pgm_poll(sock, want_pollout ? POLLIN | POLLOUT : POLLIN,
			    wake > now ? wake - now : 0, &writable))
			break;
		if (writable)
			want_pollout = false;
		woke = true;
	}

	if (timed_out)
		result = "timeout";
	else if (st.sent == o.count)
		result = "ok";
	else
		result = "fail";
	printf("result=%s peer=" PEER_NAME " messages=%" PRIu64 " expected=%" PRIu64
	       " bytes=%" PRIu64 " rate_limited=%" PRIu64 " would_block=%" PRIu64 " errors=%" PRIu64
	       " send_ms=%" PRIu64 " run_ms=%" PRIu64 "\n",
		result, st.sent, o.count, st.bytes, st.rate_limited, st.would_block, st.recv_errors,
		last_sent_us ? (last_sent_us - start_us) / 1000u : 0,
		(now_microseconds() - start_us) / 1000u);
	pgm_close(sock, true);
	pgm_shutdown();
	free(stage.area);
	free(msg);
	if (send_log != NULL)
		fclose(send_log);
	if (timed_out)
		rc = PEER_EXIT_TIMEOUT;
	else
		rc = st.sent == o.count ? PEER_EXIT_OK : PEER_EXIT_FAIL;
	return rc;
}

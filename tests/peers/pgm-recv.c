/*
 * pgm-recv: an OpenPGM receiver for the lab. Joins a group over PGM/IP or PGM/UDP, checks every
 * message (peer_common.h) and exits 0 only when all COUNT messages arrived exactly once, in
 * order, intact. Prints "event=ready" once connected and a key=value summary at the end.
 *
 * OpenPGM facts this program is built around:
 *  - every option, PGM_NOBLOCK included, is set before pgm_connect;
 *  - a receiver blocked inside pgm_recv never runs its NAK timers, so this one is non-blocking
 *    and polls on the library's descriptors with the library's PGM_TIME_REMAIN as timeout;
 *  - unrecoverable loss surfaces as PGM_IO_STATUS_RESET; it is counted, the session goes on and
 *    the missing sequence numbers show in the summary.
 */
#define PEER_NAME "pgm-recv"
#define MSGV_LEN  64

#include "peer_common.h"
#include "peer_pgm.h"

struct recv_options {
	struct peer_pgm_options pgm;
	uint64_t count;
	uint64_t run_id;
	uint64_t rxw_sqns;
	uint64_t nak_bo_ivl_ms;
	uint64_t nak_rpt_ivl_ms;
	uint64_t nak_rdata_ivl_ms;
	uint64_t nak_data_retries;
	uint64_t nak_ncf_retries;
	uint64_t peer_expiry_ms;
	uint64_t spmr_expiry_ms;
	uint64_t rcvbuf;
	uint64_t linger_ms;
	uint64_t progress_ms;
	uint64_t timeout_s;
	const char *repair_log; /* "SEQ DELIVERED_US" per message delivered from a repair */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PEER_NAME " -n NETWORK -c COUNT [options]\n"
		"  -n, --network STR        OpenPGM network string, interface address first:\n"
		"                           \"198.18.2.11;239.192.0.1\"\n"
		"  -s, --port N             data-destination port (default 7500)\n"
		"  -u, --udp PORT[:PORT]    UDP encapsulation, unicast[:multicast] port\n"
		"  -c, --count N            messages expected (default 1000)\n"
		"  -I, --run-id N           accept only this run id (default 1)\n"
		"      --rxw-sqns N         receive window in sequence numbers (default 10000)\n"
		"      --nak-bo-ivl MS      NAK back-off interval (default 50)\n"
		"      --nak-rpt-ivl MS     NAK repeat interval (default 200)\n"
		"      --nak-rdata-ivl MS   wait for RDATA after NCF (default 400)\n"
		"      --nak-data-retries N (default 50)\n"
		"      --nak-ncf-retries N  (default 50)\n"
		"      --peer-expiry MS     (default 300000)\n"
		"      --spmr-expiry MS     (default 250)\n"
		"      --rcvbuf N           socket receive buffer in bytes (default 8388608)\n"
		"      --linger MS          after the last message, keep reading this long to\n"
		"                           catch late duplicates (default 200)\n"
		"      --progress MS        print an event=progress line this often (default off)\n"
		"  -T, --timeout S          hard limit on the whole run (default 60)\n"
		"      --hops N             multicast TTL of NAKs/SPMRs (default 16)\n"
		"  -A, --router-alert       set IP Router Alert (default off, as OpenPGM)\n"
		"      --fec K              on-demand parity (FEC) with the source's group size K\n"
		"      --loop               enable multicast loopback\n"
		"      --tpdu N             largest TPDU, PGM_MTU (default 1500)\n"
		"      --repair-log FILE    write \"SEQ MICROSECONDS\" for every message "
		"delivered\n"
		"                           from a repair (RDATA), on the monotonic clock: with\n"
		"                           pgm-send --send-log it gives each repair's latency\n");
	fputs(PEER_RECEIVER_EXIT_HELP, out);
}

static int parse_options(int argc, char **argv, struct recv_options *o)
{
	const struct peer_option table[] = {
		PEER_PGM_OPTIONS(&o->pgm),
		PEER_RUN_OPTIONS(o),
		PEER_RECEIVER_OPTIONS(o),
		PEER_OPT_U64("rxw-sqns", 0, &o->rxw_sqns, 16, 1000000),
		PEER_OPT_U64("nak-bo-ivl", 0, &o->nak_bo_ivl_ms, 2, 60000),
		PEER_OPT_U64("nak-rpt-ivl", 0, &o->nak_rpt_ivl_ms, 2, 60000),
		PEER_OPT_U64("nak-rdata-ivl", 0, &o->nak_rdata_ivl_ms, 2, 60000),
		PEER_OPT_U64("nak-data-retries", 0, &o->nak_data_retries, 0, 1000),
		PEER_OPT_U64("nak-ncf-retries", 0, &o->nak_ncf_retries, 0, 1000),
		PEER_OPT_U64("peer-expiry", 0, &o->peer_expiry_ms, 100, 3600000),
		PEER_OPT_U64("spmr-expiry", 0, &o->spmr_expiry_ms, 1, 60000),
		PEER_OPT_U64("rcvbuf", 0, &o->rcvbuf, 4096, 1u << 30),
		PEER_OPT_STRING("repair-log", 0, &o->repair_log),
	};

	*o = (struct recv_options){
		.pgm = PEER_PGM_DEFAULTS,
		.count = 1000,
		.run_id = 1,
		.rxw_sqns = 10000,
		.nak_bo_ivl_ms = 50,
		.nak_rpt_ivl_ms = 200,
		.nak_rdata_ivl_ms = 400,
		.nak_data_retries = 50,
		.nak_ncf_retries = 50,
		.peer_expiry_ms = 300000,
		.spmr_expiry_ms = 250,
		.rcvbuf = 8u << 20,
		.linger_ms = 200,
		.timeout_s = 60,
	};
	return peer_parse_options(
		argc, argv, PEER_NAME, table, sizeof(table) / sizeof(table[0]), usage);
}

/* The receiver's own options: receive only, the receive window, the NAK timers and retries. */
static bool configure_receiver(pgm_sock_t *sock, const void *arg)
{
	const struct recv_options *o = arg;
	bool ok = true;

	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_RECV_ONLY, 1, "PGM_RECV_ONLY");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_PASSIVE, 0, "PGM_PASSIVE");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_RXW_SQNS, (int)o->rxw_sqns, "PGM_RXW_SQNS");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_PEER_EXPIRY,
		(int)pgm_msecs(o->peer_expiry_ms), "PGM_PEER_EXPIRY");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_SPMR_EXPIRY,
		(int)pgm_msecs(o->spmr_expiry_ms), "PGM_SPMR_EXPIRY");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_NAK_BO_IVL, (int)pgm_msecs(o->nak_bo_ivl_ms),
		"PGM_NAK_BO_IVL");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_NAK_RPT_IVL,
		(int)pgm_msecs(o->nak_rpt_ivl_ms), "PGM_NAK_RPT_IVL");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_NAK_RDATA_IVL,
		(int)pgm_msecs(o->nak_rdata_ivl_ms), "PGM_NAK_RDATA_IVL");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_NAK_DATA_RETRIES, (int)o->nak_data_retries,
		"PGM_NAK_DATA_RETRIES");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_NAK_NCF_RETRIES, (int)o->nak_ncf_retries,
		"PGM_NAK_NCF_RETRIES");
	ok &= peer_pgm_set_int(sock, SOL_SOCKET, SO_RCVBUF, (int)o->rcvbuf, "SO_RCVBUF");
	return ok;
}

/*
 * Accounts the messages of one pgm_recvmsgv call. A message is one APDU, possibly several
 * fragments (skbs); it is copied together when fragmented. The first skb's PGM header tells
 * whether the message came from a repair; repaired messages go to repair_log (may be NULL) with
 * their sequence number and the delivery time.
 */
static void account_msgv(struct peer_delivery *d, const struct pgm_msgv_t *msgv, size_t bytes,
	uint8_t *apdu, FILE *repair_log)
{
	uint64_t now = now_microseconds();

	while (bytes > 0) {
		const struct pgm_sk_buff_t *first = msgv->msgv_skb[0];
		size_t len = 0;
		bool from_repair;

		for (uint32_t i = 0; i < msgv->msgv_len; i++) {
			const struct pgm_sk_buff_t *skb = msgv->msgv_skb[i];
			if (len + skb->len <= PEER_MAX_SIZE)
				memcpy(apdu + len, skb->data, skb->len);
			len += skb->len;
		}
		from_repair = first->pgm_header != NULL &&
			      (first->pgm_header->pgm_type & 0x0f) == PGM_RDATA;
		if (len > PEER_MAX_SIZE)
			d->corrupt++;
		else if (peer_delivery_account(d, apdu, len, now) <= PEER_MSG_NEW_LATE &&
			 from_repair) {
			d->recovered++;
			if (repair_log != NULL)
				fprintf(repair_log, "%" PRIu64 " %" PRIu64 "\n",
					(uint64_t)peer_get32(apdu + 8) << 32 |
						peer_get32(apdu + 12),
					now);
		}
		bytes = bytes > len ? bytes - len : 0;
		msgv++;
	}
}

int main(int argc, char **argv)
{
	struct recv_options o;
	struct peer_delivery d;
	struct pgm_msgv_t msgv[MSGV_LEN];
	FILE *repair_log = NULL;
	pgm_error_t *err = NULL;
	pgm_sock_t *sock;
	uint8_t *apdu;
	struct peer_receiver_clock clock;
	uint64_t resets = 0;
	bool timed_out = false;
	int rc;

	if (parse_options(argc, argv, &o) != 0)
		return PEER_EXIT_USAGE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	peer_install_signals();
	apdu = malloc(PEER_MAX_SIZE);
	if (apdu == NULL || !peer_delivery_init(&d, (uint32_t)o.run_id, o.count))
		return PEER_EXIT_SETUP;
	if (o.repair_log != NULL && (repair_log = fopen(o.repair_log, "w")) == NULL) {
		fprintf(stderr, PEER_NAME ": %s: %s\n", o.repair_log, strerror(errno));
		return PEER_EXIT_SETUP;
	}
	if (!pgm_init(&err)) {
		peer_pgm_report("starting OpenPGM", err);
		return PEER_EXIT_SETUP;
	}
	sock = peer_pgm_open(&o.pgm, DEFAULT_DATA_SOURCE_PORT, configure_receiver, &o);
	if (sock == NULL) {
		pgm_shutdown();
		return PEER_EXIT_SETUP;
	}
	peer_receiver_clock_start(&clock, o.timeout_s, o.progress_ms, o.linger_ms);
	printf("event=ready peer=" PEER_NAME " network=%s port=%" PRIu64 " udp=%" PRIu64 ":%" PRIu64
	       " count=%" PRIu64 "\n",
		o.pgm.network, o.pgm.dport, o.pgm.udp.ucast, o.pgm.udp.mcast, o.count);

	while (!stop_requested) {
		uint64_t now = now_microseconds(), wake, lib_wait;
		size_t bytes = 0;
		int status;

		if (!peer_receiver_tick(&clock, &d, PEER_NAME, now, &timed_out))
			break;

		status = pgm_recvmsgv(sock, msgv, MSGV_LEN, 0, &bytes, &err);
		if (err != NULL) {
			if (status != PGM_IO_STATUS_RESET)
				fprintf(stderr, PEER_NAME ": %s\n",
					err->message ? err->message : "receive error");
			pgm_error_free(err);
			err = NULL;
		}
		switch (status) {
		case PGM_IO_STATUS_NORMAL:
			account_msgv(&d, msgv, bytes, apdu, repair_log);
			continue;
		case PGM_IO_STATUS_RESET:
			/* Unrecoverable loss: keep going, the summary shows what is missing. */
			resets++;
			continue;
		case PGM_IO_STATUS_TIMER_PENDING:
		case PGM_IO_STATUS_RATE_LIMITED:
		case PGM_IO_STATUS_WOULD_BLOCK:
			break;
		default:
			fprintf(stderr, PEER_NAME ": pgm_recvmsgv failed, status %d\n", status);
			goto out;
		}

		now = now_microseconds();
		lib_wait = peer_pgm_wait_us(sock, status);
		wake = peer_receiver_wake_us(&clock, &d);
		if (lib_wait != UINT64_MAX && now + lib_wait < wake)
			wake = now + lib_wait;
		if (!peer_pgm_poll(sock, POLLIN, wake > now ? wake - now : 0, NULL))
			break;
	}
out:
	rc = peer_receiver_finish(&d, PEER_NAME, &clock, timed_out, true, resets);
	pgm_close(sock, true);
	pgm_shutdown();
	peer_delivery_free(&d);
	free(apdu);
	if (repair_log != NULL)
		fclose(repair_log);
	return rc;
}

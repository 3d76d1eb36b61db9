/*
 * NFQUEUE consumer: the verdict ordering rules (batches never settle a packet that still waits
 * for its own verdict; verdicts reach the kernel in packet order) and the procfs parsers.
 */
#include <arpa/inet.h>
#include <check.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/nfq.h"
#include "tests/unit/check_run.h"

/* ---- a model of the kernel's queue, fed with what the batcher emits ---- */

#define MODEL_MAX 4096

struct model {
	bool queued[MODEL_MAX]; /* still in the kernel's queue */
	int verdict[MODEL_MAX]; /* what the kernel applied, -1 none */
	int wanted[MODEL_MAX];	/* what the consumer decided */
	uint32_t applied_order[MODEL_MAX];
	unsigned napplied;
	unsigned batches, singles;
	bool error;
};

static void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < MODEL_MAX; i++)
		m->verdict[i] = m->wanted[i] = -1;
}

static void model_apply(struct model *m, uint32_t id, int v)
{
	if (!m->queued[id] || m->verdict[id] >= 0)
		m->error = true;
	m->queued[id] = false;
	m->verdict[id] = v;
	m->applied_order[m->napplied++] = id;
}

/* The kernel: a batch settles every queued id up to `id`; a single verdict one id. */
static void model_emit(void *ctx, bool batch, uint32_t id, enum nfqueue_verdict v, uint32_t count)
{
	struct model *m = ctx;
	uint32_t settled = 0;

	if (batch) {
		m->batches++;
		for (uint32_t i = 1; i <= id && i < MODEL_MAX; i++)
			if (m->queued[i]) {
				model_apply(m, i, (int)v);
				settled++;
			}
		if (settled != count)
			m->error = true;
	} else {
		m->singles++;
		if (id >= MODEL_MAX || !m->queued[id])
			m->error = true;
		else
			model_apply(m, id, (int)v);
	}
}

START_TEST(test_in_order_same_verdict_is_one_batch)
{
	struct nfqueue_batcher b;
	struct model m;

	model_init(&m);
	nfqueue_batcher_init(&b);
	for (uint32_t id = 1; id <= 5; id++) {
		m.queued[id] = true;
		ck_assert_uint_eq(nfqueue_batcher_deliver(&b, id), 0);
		ck_assert_int_eq(
			nfqueue_batcher_verdict(&b, id, NFQUEUE_ACCEPT, true, model_emit, &m), 0);
	}
	ck_assert_uint_eq(m.batches + m.singles, 0); /* nothing until the end of the round */
	nfqueue_batcher_flush(&b, model_emit, &m);
	ck_assert_uint_eq(m.batches, 1);
	ck_assert_uint_eq(m.singles, 0);
	ck_assert_uint_eq(m.napplied, 5);
	ck_assert(!m.error);
	nfqueue_batcher_flush(&b, model_emit, &m); /* a second flush sends nothing */
	ck_assert_uint_eq(m.batches, 1);
}
END_TEST

START_TEST(test_verdict_change_closes_batch)
{
	struct nfqueue_batcher b;
	struct model m;
	const enum nfqueue_verdict seq[] = {
		NFQUEUE_ACCEPT, NFQUEUE_ACCEPT, NFQUEUE_DROP, NFQUEUE_DROP, NFQUEUE_ACCEPT};

	model_init(&m);
	nfqueue_batcher_init(&b);
	for (uint32_t id = 1; id <= 5; id++) {
		m.queued[id] = true;
		nfqueue_batcher_deliver(&b, id);
		ck_assert_int_eq(
			nfqueue_batcher_verdict(&b, id, seq[id - 1], true, model_emit, &m), 0);
	}
	nfqueue_batcher_flush(&b, model_emit, &m);
	ck_assert_uint_eq(m.batches, 3);
	ck_assert_uint_eq(m.singles, 0);
	for (uint32_t id = 1; id <= 5; id++)
		ck_assert_int_eq(m.verdict[id], (int)seq[id - 1]);
	ck_assert(!m.error);
}
END_TEST

START_TEST(test_deferred_packet_is_never_covered_by_a_batch)
{
	struct nfqueue_batcher b;
	struct model m;

	model_init(&m);
	nfqueue_batcher_init(&b);
	/* 1 accepted, 2 deferred, 3 and 4 accepted, then 2 dropped late */
	for (uint32_t id = 1; id <= 4; id++) {
		m.queued[id] = true;
		nfqueue_batcher_deliver(&b, id);
		if (id != 2)
			ck_assert_int_eq(nfqueue_batcher_verdict(
						 &b, id, NFQUEUE_ACCEPT, true, model_emit, &m),
				0);
	}
	ck_assert(m.queued[2]);
	ck_assert_int_eq(m.verdict[2], -1);
	ck_assert_int_eq(nfqueue_batcher_verdict(&b, 2, NFQUEUE_DROP, true, model_emit, &m), 0);
	nfqueue_batcher_flush(&b, model_emit, &m);
	ck_assert_int_eq(m.verdict[1], NFQUEUE_ACCEPT);
	ck_assert_int_eq(m.verdict[2], NFQUEUE_DROP);
	ck_assert_int_eq(m.verdict[3], NFQUEUE_ACCEPT);
	ck_assert_int_eq(m.verdict[4], NFQUEUE_ACCEPT);
	ck_assert(!m.error);
	/* 1 went out as a batch before 3's single verdict: packet order kept where possible */
	ck_assert_uint_eq(m.applied_order[0], 1);
	ck_assert_uint_eq(m.applied_order[1], 3);
}
END_TEST

START_TEST(test_payload_verdict_flushes_batch_first)
{
	struct nfqueue_batcher b;
	struct model m;

	model_init(&m);
	nfqueue_batcher_init(&b);
	m.queued[1] = m.queued[2] = true;
	nfqueue_batcher_deliver(&b, 1);
	nfqueue_batcher_verdict(&b, 1, NFQUEUE_ACCEPT, true, model_emit, &m);
	nfqueue_batcher_deliver(&b, 2);
	ck_assert_int_eq(nfqueue_batcher_verdict(&b, 2, NFQUEUE_ACCEPT, false, model_emit, &m), 0);
	/* the batch for 1 went out; 2's own message is the caller's to send */
	ck_assert_uint_eq(m.batches, 1);
	ck_assert_uint_eq(m.singles, 0);
	ck_assert_int_eq(m.verdict[1], NFQUEUE_ACCEPT);
	ck_assert(m.queued[2]);
	ck_assert_uint_eq(b.outstanding, 0);
}
END_TEST

START_TEST(test_invalid_verdicts_refused)
{
	struct nfqueue_batcher b;
	struct model m;

	model_init(&m);
	nfqueue_batcher_init(&b);
	ck_assert_int_eq(nfqueue_batcher_verdict(&b, 1, NFQUEUE_ACCEPT, true, model_emit, &m), -1);
	m.queued[7] = true;
	nfqueue_batcher_deliver(&b, 7);
	ck_assert_int_eq(nfqueue_batcher_verdict(&b, 8, NFQUEUE_ACCEPT, true, model_emit, &m), -1);
	ck_assert_int_eq(nfqueue_batcher_verdict(&b, 7, NFQUEUE_ACCEPT, true, model_emit, &m), 0);
	ck_assert_int_eq(nfqueue_batcher_verdict(&b, 7, NFQUEUE_ACCEPT, true, model_emit, &m), -1);
	ck_assert_uint_eq(m.batches + m.singles, 0);
}
END_TEST

START_TEST(test_id_gaps_counted_across_wraparound)
{
	struct nfqueue_batcher b;

	nfqueue_batcher_init(&b);
	ck_assert_uint_eq(nfqueue_batcher_deliver(&b, 10), 0);
	ck_assert_uint_eq(nfqueue_batcher_deliver(&b, 11), 0);
	ck_assert_uint_eq(nfqueue_batcher_deliver(&b, 15), 3);
	nfqueue_batcher_init(&b);
	ck_assert_uint_eq(nfqueue_batcher_deliver(&b, 0xfffffffeu), 0);
	ck_assert_uint_eq(nfqueue_batcher_deliver(&b, 1), 2); /* 0xffffffff and 0 skipped */
}
END_TEST

/* Packet `id` is queued, delivered and given verdict v (plain). */
static void queue_and_decide(
	struct nfqueue_batcher *b, struct model *m, uint32_t id, enum nfqueue_verdict v)
{
	m->queued[id] = true;
	nfqueue_batcher_deliver(b, id);
	nfqueue_batcher_verdict(b, id, v, true, model_emit, m);
}

START_TEST(test_holdable_is_an_open_batch_of_drops_below_the_limit)
{
	struct nfqueue_batcher b;
	struct model m;

	model_init(&m);
	nfqueue_batcher_init(&b);
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 64), 0); /* nothing open */
	for (uint32_t id = 1; id <= 3; id++)
		queue_and_decide(&b, &m, id, NFQUEUE_DROP);
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 64), 3);
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 4), 3);
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 3), 0); /* the limit reached */
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 0), 0); /* holding off */
	queue_and_decide(&b, &m, 4, NFQUEUE_ACCEPT);
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 64), 0); /* an accept never waits */
	ck_assert_uint_eq(m.batches, 1);			/* the drops went out first */
	ck_assert(!m.error);
}
END_TEST

/* Drops held at the end of a round settle with the next round's verdicts, in packet order. */
START_TEST(test_held_drops_settle_with_the_next_round)
{
	struct nfqueue_batcher b;
	struct model m;

	model_init(&m);
	nfqueue_batcher_init(&b);
	for (uint32_t id = 1; id <= 2; id++)
		queue_and_decide(&b, &m, id, NFQUEUE_DROP);
	/* the end of round 1: held, nothing sent */
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 64), 2);
	ck_assert_uint_eq(m.batches + m.singles, 0);
	ck_assert(m.queued[1] && m.queued[2]);
	/* round 2: one more drop joins, an accept closes the batch */
	queue_and_decide(&b, &m, 3, NFQUEUE_DROP);
	queue_and_decide(&b, &m, 4, NFQUEUE_ACCEPT);
	ck_assert_uint_eq(nfqueue_batcher_holdable(&b, 64), 0);
	nfqueue_batcher_flush(&b, model_emit, &m);
	ck_assert_uint_eq(m.batches, 2); /* drops 1-3 in one message, then the accept */
	ck_assert_uint_eq(m.singles, 0);
	for (uint32_t id = 1; id <= 4; id++)
		ck_assert_int_eq(m.verdict[id], id == 4 ? NFQUEUE_ACCEPT : NFQUEUE_DROP);
	ck_assert_uint_eq(m.applied_order[3], 4);
	ck_assert(!m.error);
}
END_TEST

/* Random interleavings of deliveries, in-order and deferred verdicts, plain and rewritten: the
 * kernel model must apply exactly the verdict the consumer chose to every packet, once. Every
 * other trial holds drops at the ends of rounds (held drops), as nfq.c does. */
START_TEST(test_random_interleavings_settle_every_packet_correctly)
{
	unsigned seed = 12345;

	for (int round = 0; round < 200; round++) {
		struct nfqueue_batcher b;
		static struct model m;
		uint32_t deferred[64];
		unsigned ndeferred = 0, next_id = 1, total = 50 + (unsigned)(rand_r(&seed) % 200);
		uint32_t hold = round % 2 ? 8 : 0;

		model_init(&m);
		nfqueue_batcher_init(&b);
		while (next_id <= total || ndeferred > 0) {
			unsigned r = (unsigned)rand_r(&seed) % 100;

			if (next_id <= total && (r < 70 || ndeferred == 0)) {
				uint32_t id = next_id++;

				/* sometimes the kernel skips ids (not delivered) */
				if (rand_r(&seed) % 10 == 0 && next_id <= total)
					id = next_id++;
				m.queued[id] = true;
				nfqueue_batcher_deliver(&b, id);
				if (ndeferred < 64 && rand_r(&seed) % 5 == 0) {
					deferred[ndeferred++] = id;
					continue;
				}
				int v = rand_r(&seed) % 2;
				bool plain = rand_r(&seed) % 8 != 0;

				m.wanted[id] = plain ? v : NFQUEUE_ACCEPT;
				ck_assert_int_eq(
					nfqueue_batcher_verdict(&b, id, (enum nfqueue_verdict)v,
						plain, model_emit, &m),
					0);
				if (!plain)
					model_emit(&m, false, id, NFQUEUE_ACCEPT,
						1); /* the caller's */
			} else if (ndeferred > 0) {
				unsigned k = (unsigned)rand_r(&seed) % ndeferred;
				uint32_t id = deferred[k];
				int v = rand_r(&seed) % 2;

				deferred[k] = deferred[--ndeferred];
				m.wanted[id] = v;
				ck_assert_int_eq(
					nfqueue_batcher_verdict(&b, id, (enum nfqueue_verdict)v,
						true, model_emit, &m),
					0);
			}
			/* the end of a receive round */
			if (rand_r(&seed) % 7 == 0 && nfqueue_batcher_holdable(&b, hold) == 0)
				nfqueue_batcher_flush(&b, model_emit, &m);
			ck_assert_uint_lt(nfqueue_batcher_holdable(&b, hold), hold ? hold : 1);
		}
		nfqueue_batcher_flush(&b, model_emit, &m);
		ck_assert(!m.error);
		ck_assert_uint_eq(b.outstanding, 0);
		for (uint32_t id = 1; id <= total; id++) {
			ck_assert(!m.queued[id]);
			ck_assert_int_eq(m.verdict[id], m.wanted[id]);
		}
	}
}
END_TEST

/* ---- procfs parsers ---- */

/* A packet message whose last attribute ends in the alignment padding past its length: libmnl
 * walks attributes to the aligned end, so the payload would reach past the message (and, for
 * the last message of a read, past what was received): malformed. */
START_TEST(test_parse_packet_payload_within_message)
{
	_Alignas(8) uint8_t buf[256] = {0};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nfqnl_msg_packet_hdr ph = {.packet_id = htonl(9), .hw_protocol = htons(0x0800)};
	struct nfqueue_packet pkt;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET;
	g->version = NFNETLINK_V0;
	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put(nlh, NFQA_PAYLOAD, 7, "\x45\0\0\7abc");
	ck_assert_int_eq(nfqueue_parse_packet(nlh, &pkt), 0);
	ck_assert_uint_eq(pkt.id, 9);
	ck_assert_uint_eq(pkt.len, 7);
	nlh->nlmsg_len -= 3; /* the payload's last 2 bytes are past it now */
	ck_assert_int_eq(nfqueue_parse_packet(nlh, &pkt), -1);
}
END_TEST

START_TEST(test_parse_proc_queue)
{
	const char *text = "    0  12345     0 2 65531     0     0        7  1\n"
			   "   11   7777     3 2 65531     4     5     1000  1\n";
	struct nfqueue_kernel_stats ks;

	memset(&ks, 0, sizeof(ks));
	ck_assert(nfqueue_parse_proc_queue(text, 11, &ks));
	ck_assert(ks.valid);
	ck_assert_uint_eq(ks.peer_portid, 7777);
	ck_assert_uint_eq(ks.queue_total, 3);
	ck_assert_uint_eq(ks.copy_mode, 2);
	ck_assert_uint_eq(ks.copy_range, 65531);
	ck_assert_uint_eq(ks.queue_dropped, 4);
	ck_assert_uint_eq(ks.user_dropped, 5);
	ck_assert_uint_eq(ks.id_sequence, 1000);
	memset(&ks, 0, sizeof(ks));
	ck_assert(!nfqueue_parse_proc_queue(text, 3, &ks));
	ck_assert(!ks.valid);
	ck_assert(!nfqueue_parse_proc_queue("", 0, &ks));
	ck_assert(!nfqueue_parse_proc_queue("garbage\n1 2\n", 1, &ks));
}
END_TEST

START_TEST(test_parse_proc_netlink)
{
	const char *text = "sk               Eth Pid        Groups   Rmem     Wmem     Dump  Locks "
			   "   Drops    Inode\n"
			   "ffff8a8b00000000 0   4242       00000000 0        0        0     2     "
			   "   9        100\n"
			   "ffff8a8b00000001 12  4242       00000000 0        0        0     2     "
			   "   17       101\n";
	uint32_t drops = 0;

	ck_assert(nfqueue_parse_proc_netlink(text, 4242, &drops));
	ck_assert_uint_eq(drops, 17); /* the NETLINK_NETFILTER socket, not the route one */
	ck_assert(!nfqueue_parse_proc_netlink(text, 1, &drops));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nfq");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_in_order_same_verdict_is_one_batch);
	tcase_add_test(tc, test_verdict_change_closes_batch);
	tcase_add_test(tc, test_deferred_packet_is_never_covered_by_a_batch);
	tcase_add_test(tc, test_payload_verdict_flushes_batch_first);
	tcase_add_test(tc, test_invalid_verdicts_refused);
	tcase_add_test(tc, test_id_gaps_counted_across_wraparound);
	tcase_add_test(tc, test_holdable_is_an_open_batch_of_drops_below_the_limit);
	tcase_add_test(tc, test_held_drops_settle_with_the_next_round);
	tcase_add_test(tc, test_random_interleavings_settle_every_packet_correctly);
	tcase_add_test(tc, test_parse_proc_queue);
	tcase_add_test(tc, test_parse_proc_netlink);
	tcase_add_test(tc, test_parse_packet_payload_within_message);
	suite_add_tcase(s, tc);
	return check_run(s);
}

/*
 * The pure parts of the test DLR (tests/peers/dlr_core.h): the repair cache and its window,
 * the POLL decision of 14.5 and the reply delay, the split of a NAK into repairs and SQNs to
 * NAK upstream, the off-tree/upstream answer of 9.5.2.3, and the memory of its own NAKs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/peers/dlr_core.h"
#include "tests/unit/check_run.h"

/* A fake TPDU whose bytes name its SQN, so a wrong slot shows. */
static size_t fake_tpdu(uint8_t *buf, uint32_t sqn)
{
	size_t len = 20 + sqn % 7;

	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(sqn * 31u + i);
	return len;
}

static void expect_held(const struct dlr_cache *c, uint32_t sqn)
{
	const struct dlr_cache_entry *e = dlr_cache_get(c, sqn);
	uint8_t want[32];
	size_t len = fake_tpdu(want, sqn);

	ck_assert_msg(e != NULL, "sqn %u missing", sqn);
	ck_assert_uint_eq(e->sqn, sqn);
	ck_assert_uint_eq(e->len, len);
	ck_assert_msg(memcmp(e->tpdu, want, len) == 0, "sqn %u: wrong bytes", sqn);
}

static enum dlr_cache_result put(struct dlr_cache *c, uint32_t sqn)
{
	uint8_t buf[32];

	return dlr_cache_put(c, sqn, buf, fake_tpdu(buf, sqn));
}

START_TEST(test_cache_empty)
{
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 8));
	ck_assert_ptr_null(dlr_cache_get(&c, 0));
	ck_assert_ptr_null(dlr_cache_get(&c, 12345));
	ck_assert_uint_eq(dlr_cache_held(&c), 0);
	dlr_cache_free(&c);
	ck_assert(!dlr_cache_init(&c, 0));
	dlr_cache_free(&c);
}
END_TEST

START_TEST(test_cache_sequential)
{
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 16));
	for (uint32_t s = 1; s <= 16; s++)
		ck_assert_int_eq(put(&c, s), DLR_CACHE_STORED);
	for (uint32_t s = 1; s <= 16; s++)
		expect_held(&c, s);
	ck_assert_ptr_null(dlr_cache_get(&c, 0));
	ck_assert_ptr_null(dlr_cache_get(&c, 17));
	ck_assert_uint_eq(dlr_cache_held(&c), 16);
	ck_assert_uint_eq(c.stored, 16);
	ck_assert_uint_eq(c.evicted, 0);
	dlr_cache_free(&c);
}
END_TEST

/* The window is the last N SQNs: older ones go, and cannot come back. */
START_TEST(test_cache_window_slides)
{
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 8));
	for (uint32_t s = 1; s <= 20; s++)
		ck_assert_int_eq(put(&c, s), DLR_CACHE_STORED);
	for (uint32_t s = 1; s <= 12; s++)
		ck_assert_ptr_null(dlr_cache_get(&c, s));
	for (uint32_t s = 13; s <= 20; s++)
		expect_held(&c, s);
	ck_assert_uint_eq(c.evicted, 12);
	ck_assert_uint_eq(dlr_cache_held(&c), 8);
	ck_assert_int_eq(put(&c, 12), DLR_CACHE_TOO_OLD);
	ck_assert_int_eq(put(&c, 5), DLR_CACHE_TOO_OLD);
	ck_assert_uint_eq(c.too_old, 2);
	ck_assert_int_eq(put(&c, 13), DLR_CACHE_DUPLICATE);
	ck_assert_uint_eq(c.duplicates, 1);
	expect_held(&c, 13);
	dlr_cache_free(&c);
}
END_TEST

/* A late packet inside the window is kept; one just outside is refused. */
START_TEST(test_cache_out_of_order)
{
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 8));
	ck_assert_int_eq(put(&c, 10), DLR_CACHE_STORED);
	ck_assert_int_eq(put(&c, 5), DLR_CACHE_STORED);
	ck_assert_int_eq(put(&c, 3), DLR_CACHE_STORED);
	ck_assert_int_eq(put(&c, 2), DLR_CACHE_TOO_OLD);
	expect_held(&c, 10);
	expect_held(&c, 5);
	expect_held(&c, 3);
	ck_assert_ptr_null(dlr_cache_get(&c, 4));
	ck_assert_uint_eq(c.lead, 10);
	dlr_cache_free(&c);
}
END_TEST

/* A jump of the lead beyond the window empties it logically, before any slot is reused. */
START_TEST(test_cache_jump)
{
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 8));
	for (uint32_t s = 1; s <= 8; s++)
		put(&c, s);
	ck_assert_int_eq(put(&c, 100), DLR_CACHE_STORED);
	for (uint32_t s = 1; s <= 8; s++)
		ck_assert_ptr_null(dlr_cache_get(&c, s));
	ck_assert_uint_eq(dlr_cache_held(&c), 1);
	ck_assert_int_eq(put(&c, 95), DLR_CACHE_STORED);
	expect_held(&c, 95);
	expect_held(&c, 100);
	ck_assert_int_eq(put(&c, 92), DLR_CACHE_TOO_OLD);
	dlr_cache_free(&c);
}
END_TEST

/* SQNs wrap at 2^32 (serial arithmetic). */
START_TEST(test_cache_wraps)
{
	struct dlr_cache c;
	uint32_t s;

	ck_assert(dlr_cache_init(&c, 16));
	for (s = 0xfffffff8u; s != 8; s++)
		ck_assert_int_eq(put(&c, s), DLR_CACHE_STORED);
	ck_assert_uint_eq(c.lead, 7);
	for (s = 0xfffffff8u; s != 8; s++)
		expect_held(&c, s);
	ck_assert_ptr_null(dlr_cache_get(&c, 0xfffffff7u));
	ck_assert_ptr_null(dlr_cache_get(&c, 8));
	ck_assert_int_eq(put(&c, 0xfffffff7u), DLR_CACHE_TOO_OLD);
	ck_assert_uint_eq(dlr_cache_held(&c), 16);
	dlr_cache_free(&c);
}
END_TEST

START_TEST(test_cache_duplicate_keeps_first)
{
	struct dlr_cache c;
	uint8_t other[24];

	ck_assert(dlr_cache_init(&c, 4));
	ck_assert_int_eq(put(&c, 3), DLR_CACHE_STORED);
	memset(other, 0xee, sizeof(other));
	ck_assert_int_eq(dlr_cache_put(&c, 3, other, sizeof(other)), DLR_CACHE_DUPLICATE);
	expect_held(&c, 3);
	ck_assert_int_eq(dlr_cache_put(&c, 4, other, 0), DLR_CACHE_BAD_LENGTH);
	ck_assert_int_eq(dlr_cache_put(&c, 4, other, 70000), DLR_CACHE_BAD_LENGTH);
	ck_assert_ptr_null(dlr_cache_get(&c, 4));
	dlr_cache_free(&c);
}
END_TEST

START_TEST(test_cache_capacity_one)
{
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 1));
	ck_assert_int_eq(put(&c, 7), DLR_CACHE_STORED);
	ck_assert_int_eq(put(&c, 6), DLR_CACHE_TOO_OLD);
	ck_assert_int_eq(put(&c, 8), DLR_CACHE_STORED);
	ck_assert_ptr_null(dlr_cache_get(&c, 7));
	expect_held(&c, 8);
	dlr_cache_free(&c);
}
END_TEST

/*
 * Random arrivals around a moving lead (reordering, duplicates, jumps) against the invariants:
 * a hit holds exactly the SQN asked for; every SQN stored and still inside the window is a hit
 * (no wrap here, so each SQN of the window has a slot of its own); held counts exactly them.
 */
START_TEST(test_cache_random_against_model)
{
	enum { CAP = 64, SPACE = 20000 };
	static bool stored[SPACE];
	struct dlr_cache c;
	uint32_t lead = 0;

	memset(stored, 0, sizeof(stored));
	srandom(7);
	ck_assert(dlr_cache_init(&c, CAP));
	for (int round = 0; round < 20000; round++) {
		uint32_t sqn;
		long r = random() % 100;

		if (r < 70)
			sqn = lead + (uint32_t)(random() % 3);
		else if (r < 95)
			sqn = lead > 80 ? lead - (uint32_t)(random() % 80) : lead;
		else
			sqn = lead + (uint32_t)(random() % 200);
		if (sqn >= SPACE - 1)
			break;
		if (put(&c, sqn) == DLR_CACHE_STORED)
			stored[sqn] = true;
		if (sqn > lead)
			lead = sqn;
		if (round % 97 == 0) {
			uint32_t expect_count = 0;

			for (uint32_t s = lead >= CAP ? lead - CAP + 1 : 0; s <= lead; s++) {
				if (stored[s]) {
					expect_held(&c, s);
					expect_count++;
				} else {
					ck_assert_ptr_null(dlr_cache_get(&c, s));
				}
			}
			ck_assert_uint_eq(dlr_cache_held(&c), expect_count);
			if (lead >= CAP)
				ck_assert_ptr_null(dlr_cache_get(&c, lead - CAP));
		}
	}
	ck_assert_uint_eq(c.lead, lead);
	dlr_cache_free(&c);
}
END_TEST

/* ---- POLL ---- */

static struct pgm_nla nla(const char *text)
{
	struct pgm_nla n;

	ck_assert(pgm_nla_parse(&n, text));
	return n;
}

static const struct dlr_poll_policy all_on = {
	.node_id = 0x5, .answer_dlr = true, .answer_general = true, .has_data = true};

START_TEST(test_poll_types)
{
	struct dlr_poll_memory m = {0};
	struct dlr_poll_policy p = all_on;
	struct pgm_nla path = nla("198.18.0.1");

	ck_assert_int_eq(
		dlr_poll_decide(&p, &m, 1, 0, PGM_POLL_DLR, &path, 0, 0), DLR_POLL_REPLY_REDIRECT);
	ck_assert_int_eq(
		dlr_poll_decide(&p, &m, 2, 0, PGM_POLL_GENERAL, &path, 0, 0), DLR_POLL_REPLY_PLAIN);
	ck_assert_int_eq(dlr_poll_decide(&p, &m, 3, 0, 2, &path, 0, 0), DLR_POLL_UNKNOWN_TYPE);
	ck_assert_int_eq(dlr_poll_decide(&p, &m, 4, 0, 0xffff, &path, 0, 0), DLR_POLL_UNKNOWN_TYPE);
	p.has_data = false;
	ck_assert_int_eq(
		dlr_poll_decide(&p, &m, 5, 0, PGM_POLL_DLR, &path, 0, 0), DLR_POLL_NO_SERVICE);
	ck_assert_int_eq(
		dlr_poll_decide(&p, &m, 6, 0, PGM_POLL_GENERAL, &path, 0, 0), DLR_POLL_REPLY_PLAIN);
	p.answer_dlr = false;
	p.has_data = true;
	ck_assert_int_eq(
		dlr_poll_decide(&p, &m, 7, 0, PGM_POLL_DLR, &path, 0, 0), DLR_POLL_NOT_OFFERED);
	p.answer_general = false;
	ck_assert_int_eq(
		dlr_poll_decide(&p, &m, 8, 0, PGM_POLL_GENERAL, &path, 0, 0), DLR_POLL_NOT_OFFERED);
}
END_TEST

/* 14.5: only the bits of POLL_MASK are compared; an all-zero mask always matches. */
START_TEST(test_poll_mask)
{
	struct dlr_poll_memory m = {0};
	struct pgm_nla path = nla("198.18.0.1");

	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 1, 0, PGM_POLL_DLR, &path, 0xdeadbeef, 0),
		DLR_POLL_REPLY_REDIRECT);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 2, 0, PGM_POLL_DLR, &path, 0x1, 0x1),
		DLR_POLL_REPLY_REDIRECT);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 3, 0, PGM_POLL_DLR, &path, 0x0, 0x1),
		DLR_POLL_MASK_MISMATCH);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 4, 0, PGM_POLL_DLR, &path, 0xfffffff5, 0xf),
		DLR_POLL_REPLY_REDIRECT);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 5, 0, PGM_POLL_DLR, &path, 0x4, 0x5),
		DLR_POLL_MASK_MISMATCH);
	/* a mismatch is decided before the sub-type: no reply to anything */
	ck_assert_int_eq(
		dlr_poll_decide(&all_on, &m, 6, 0, 9, &path, 0x0, 0x1), DLR_POLL_MASK_MISMATCH);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 7, 0, PGM_POLL_GENERAL, &path, 0x0, 0x1),
		DLR_POLL_MASK_MISMATCH);
}
END_TEST

/* With B bits in the mask, about 1 in 2^B random POLL_RANDs match (14.4). */
START_TEST(test_poll_mask_probability)
{
	struct dlr_poll_memory m = {0};
	struct pgm_nla path = nla("198.18.0.1");
	unsigned replies = 0;

	srandom(3);
	for (uint32_t i = 0; i < 8000; i++) {
		uint32_t rand32 = (uint32_t)random() ^ (uint32_t)random() << 16;

		if (dlr_poll_decide(&all_on, &m, i, 0, PGM_POLL_DLR, &path, rand32, 0x00030000) ==
			DLR_POLL_REPLY_REDIRECT)
			replies++;
	}
	/* expected 2000 (P = 1/4); 6 standard deviations is about 230 */
	ck_assert_msg(replies > 1770 && replies < 2230, "%u replies of 8000", replies);
}
END_TEST

/* 14.3.1/14.5: a round above 0 needs round 0 of the same POLL_SQN from the same POLL_PATH. */
START_TEST(test_poll_rounds)
{
	struct dlr_poll_memory m = {0};
	struct pgm_nla a = nla("198.18.0.1"), b = nla("198.18.0.9");

	ck_assert_int_eq(
		dlr_poll_decide(&all_on, &m, 7, 1, PGM_POLL_DLR, &a, 0, 0), DLR_POLL_ROUND_UNSEEN);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 7, 0, PGM_POLL_DLR, &a, 0, 0),
		DLR_POLL_REPLY_REDIRECT);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 7, 1, PGM_POLL_DLR, &a, 0, 0),
		DLR_POLL_REPLY_REDIRECT);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 7, 2, PGM_POLL_DLR, &a, 0, 0),
		DLR_POLL_REPLY_REDIRECT);
	ck_assert_int_eq(
		dlr_poll_decide(&all_on, &m, 8, 1, PGM_POLL_DLR, &a, 0, 0), DLR_POLL_ROUND_UNSEEN);
	ck_assert_int_eq(
		dlr_poll_decide(&all_on, &m, 7, 1, PGM_POLL_DLR, &b, 0, 0), DLR_POLL_ROUND_UNSEEN);
	/* a new round 0 replaces the old one */
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 9, 0, PGM_POLL_GENERAL, &a, 0, 0),
		DLR_POLL_REPLY_PLAIN);
	ck_assert_int_eq(
		dlr_poll_decide(&all_on, &m, 7, 1, PGM_POLL_DLR, &a, 0, 0), DLR_POLL_ROUND_UNSEEN);
}
END_TEST

/* A child that missed the mask of round 0 was still present at round 0: a later round with a
 * wider probability may pick it. */
START_TEST(test_poll_round0_mismatch_counts_as_seen)
{
	struct dlr_poll_memory m = {0};
	struct pgm_nla a = nla("198.18.0.1");

	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 4, 0, PGM_POLL_DLR, &a, 0x0, 0x7),
		DLR_POLL_MASK_MISMATCH);
	ck_assert_int_eq(dlr_poll_decide(&all_on, &m, 4, 1, PGM_POLL_DLR, &a, 0x0, 0x0),
		DLR_POLL_REPLY_REDIRECT);
}
END_TEST

START_TEST(test_poll_delay_bounds)
{
	ck_assert_uint_eq(dlr_poll_delay_us(0, 0), 0);
	ck_assert_uint_eq(dlr_poll_delay_us(0, UINT32_MAX), 0);
	ck_assert_uint_eq(dlr_poll_delay_us(100000, 0), 0);
	ck_assert_uint_eq(dlr_poll_delay_us(100000, UINT32_MAX), 100000);
	ck_assert_uint_eq(dlr_poll_delay_us(UINT32_MAX, UINT32_MAX), UINT32_MAX);
	ck_assert_uint_eq(dlr_poll_delay_us(1, 0x7fffffffu), 0);
	ck_assert_uint_eq(dlr_poll_delay_us(1, 0x80000000u), 1);
	ck_assert_uint_eq(dlr_poll_delay_us(UINT32_MAX, 0), 0);
}
END_TEST

/* Uniform over [0, POLL_BO_IVL]: never above it, mean in the middle, both halves used. */
START_TEST(test_poll_delay_uniform)
{
	const uint32_t bo_ivl = 250000;
	uint64_t sum = 0;
	unsigned low = 0, high = 0;

	srandom(11);
	for (unsigned i = 0; i < 100000; i++) {
		uint32_t r = (uint32_t)random() ^ (uint32_t)random() << 16;
		uint32_t d = dlr_poll_delay_us(bo_ivl, r);

		ck_assert_uint_le(d, bo_ivl);
		sum += d;
		low += d < bo_ivl / 10;
		high += d > bo_ivl - bo_ivl / 10;
	}
	ck_assert_msg(sum / 100000 > 122000 && sum / 100000 < 128000, "mean %llu",
		(unsigned long long)(sum / 100000));
	ck_assert_uint_gt(low, 9000);
	ck_assert_uint_gt(high, 9000);
}
END_TEST

/* ---- NAK split ---- */

/* A NAK as the codec parses it: header SQN first, then the list. */
static void make_nak(uint8_t *buf, size_t cap, struct pgm_packet *pkt, const uint32_t *sqns,
	unsigned count, bool parity)
{
	struct pgm_header_params hdr = {.sport = 7500, .dport = 1234, .gsi = {1, 2, 3, 4, 5, 6}};
	struct pgm_build_options o;
	struct pgm_nla src = nla("198.18.1.2"), grp = nla("239.192.0.1");
	size_t len;

	memset(&o, 0, sizeof(o));
	o.nak_list = count > 1 ? sqns + 1 : NULL;
	o.nak_list_count = count - 1;
	o.extra_header_flags = parity ? PGM_OPT_PARITY : 0;
	len = pgm_build_nak(buf, cap, PGM_NAK, &hdr, sqns[0], &src, &grp, &o);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(pgm_parse(buf, len, 0, pkt), PGM_ERR_OK);
}

START_TEST(test_nak_split)
{
	static const uint32_t sqns[] = {3, 4, 9, 10, 20};
	uint8_t buf[512];
	struct pgm_packet nak;
	struct dlr_nak_split sp;
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 64));
	for (uint32_t s = 1; s <= 10; s++)
		if (s != 9)
			put(&c, s);
	make_nak(buf, sizeof(buf), &nak, sqns, 5, false);
	dlr_nak_split(&c, &nak, UINT64_MAX, &sp);
	ck_assert_uint_eq(sp.repair_count, 3);
	ck_assert_uint_eq(sp.repair[0], 3);
	ck_assert_uint_eq(sp.repair[1], 4);
	ck_assert_uint_eq(sp.repair[2], 10);
	ck_assert_uint_eq(sp.missing_count, 2);
	ck_assert_uint_eq(sp.missing[0], 9);
	ck_assert_uint_eq(sp.missing[1], 20);

	/* --fail-after leaves a budget of 1: the rest is NAKed upstream, in order */
	dlr_nak_split(&c, &nak, 1, &sp);
	ck_assert_uint_eq(sp.repair_count, 1);
	ck_assert_uint_eq(sp.repair[0], 3);
	ck_assert_uint_eq(sp.missing_count, 4);
	ck_assert_uint_eq(sp.missing[0], 4);
	ck_assert_uint_eq(sp.missing[1], 9);
	ck_assert_uint_eq(sp.missing[2], 10);
	ck_assert_uint_eq(sp.missing[3], 20);

	dlr_nak_split(&c, &nak, 0, &sp);
	ck_assert_uint_eq(sp.repair_count, 0);
	ck_assert_uint_eq(sp.missing_count, 5);

	/* unknown session */
	dlr_nak_split(NULL, &nak, UINT64_MAX, &sp);
	ck_assert_uint_eq(sp.repair_count, 0);
	ck_assert_uint_eq(sp.missing_count, 5);
	ck_assert_uint_eq(sp.missing[4], 20);
	dlr_cache_free(&c);
}
END_TEST

/* A parity NAK asks for parity packets the DLR cannot make, even for SQNs it holds. */
START_TEST(test_nak_split_parity)
{
	static const uint32_t sqns[] = {2, 3};
	uint8_t buf[512];
	struct pgm_packet nak;
	struct dlr_nak_split sp;
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 8));
	put(&c, 2);
	put(&c, 3);
	make_nak(buf, sizeof(buf), &nak, sqns, 2, true);
	dlr_nak_split(&c, &nak, UINT64_MAX, &sp);
	ck_assert_uint_eq(sp.repair_count, 0);
	ck_assert_uint_eq(sp.missing_count, 2);
	dlr_cache_free(&c);
}
END_TEST

/* The largest NAK: the header SQN and 62 more. */
START_TEST(test_nak_split_full_list)
{
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	uint8_t buf[512];
	struct pgm_packet nak;
	struct dlr_nak_split sp;
	struct dlr_cache c;

	ck_assert(dlr_cache_init(&c, 256));
	for (unsigned i = 0; i < 1 + PGM_MAX_NAK_LIST; i++) {
		sqns[i] = 100 + 2 * i;
		put(&c, sqns[i]);
	}
	make_nak(buf, sizeof(buf), &nak, sqns, 1 + PGM_MAX_NAK_LIST, false);
	dlr_nak_split(&c, &nak, UINT64_MAX, &sp);
	ck_assert_uint_eq(sp.repair_count, 1 + PGM_MAX_NAK_LIST);
	ck_assert_uint_eq(sp.missing_count, 0);
	for (unsigned i = 0; i < sp.repair_count; i++)
		ck_assert_uint_eq(sp.repair[i], sqns[i]);
	dlr_cache_free(&c);
}
END_TEST

/* ---- off-tree or upstream (9.5.2.3) ---- */

START_TEST(test_nak_answer)
{
	struct pgm_nla parent = nla("198.18.40.3"), other = nla("198.18.40.4"), none;

	memset(&none, 0, sizeof(none));
	ck_assert_int_eq(dlr_nak_answer(&parent, &parent, DLR_ROLE_BOTH), DLR_ANSWER_OFF_TREE);
	ck_assert_int_eq(dlr_nak_answer(&other, &parent, DLR_ROLE_BOTH), DLR_ANSWER_UPSTREAM);
	/* the parent decides, whatever the role */
	ck_assert_int_eq(dlr_nak_answer(&parent, &parent, DLR_ROLE_UPSTREAM), DLR_ANSWER_OFF_TREE);
	ck_assert_int_eq(dlr_nak_answer(&other, &parent, DLR_ROLE_OFF_TREE), DLR_ANSWER_UPSTREAM);
	/* no SPM yet */
	ck_assert_int_eq(dlr_nak_answer(&other, &none, DLR_ROLE_BOTH), DLR_ANSWER_UPSTREAM);
	ck_assert_int_eq(dlr_nak_answer(&other, NULL, DLR_ROLE_UPSTREAM), DLR_ANSWER_UPSTREAM);
	ck_assert_int_eq(dlr_nak_answer(&other, &none, DLR_ROLE_OFF_TREE), DLR_ANSWER_OFF_TREE);
	ck_assert_int_eq(dlr_nak_answer(&other, NULL, DLR_ROLE_OFF_TREE), DLR_ANSWER_OFF_TREE);
}
END_TEST

/* ---- its own NAKs ---- */

START_TEST(test_own_naks)
{
	static struct dlr_own_naks m;

	memset(&m, 0, sizeof(m));
	ck_assert(!dlr_own_naks_has(&m, 5, 100));
	dlr_own_naks_add(&m, 5, 1000);
	ck_assert(dlr_own_naks_has(&m, 5, 100));
	ck_assert(dlr_own_naks_has(&m, 5, 999));
	ck_assert(!dlr_own_naks_has(&m, 5, 1000));
	ck_assert(!dlr_own_naks_has(&m, 6, 100));
	/* a repeat extends the hold without taking a second entry */
	dlr_own_naks_add(&m, 5, 3000);
	ck_assert(dlr_own_naks_has(&m, 5, 2000));
	ck_assert_uint_eq(m.next, 1);
	/* bounded: the oldest entries go first */
	for (uint32_t s = 100; s < 100 + DLR_OWN_NAKS; s++)
		dlr_own_naks_add(&m, s, 5000);
	ck_assert(!dlr_own_naks_has(&m, 5, 2000));
	ck_assert(dlr_own_naks_has(&m, 100, 2000));
	ck_assert(dlr_own_naks_has(&m, 100 + DLR_OWN_NAKS - 1, 2000));
}
END_TEST

START_TEST(test_sqn_after)
{
	ck_assert(dlr_sqn_after(2, 1));
	ck_assert(!dlr_sqn_after(1, 2));
	ck_assert(!dlr_sqn_after(7, 7));
	ck_assert(dlr_sqn_after(0, 0xffffffffu));
	ck_assert(dlr_sqn_after(0x7fffffffu, 0));
	ck_assert(!dlr_sqn_after(0x80000001u, 0));
}
END_TEST

static Suite *dlr_suite(void)
{
	Suite *s = suite_create("dlr");
	TCase *cache = tcase_create("cache");
	TCase *poll = tcase_create("poll");
	TCase *nak = tcase_create("nak");

	tcase_add_test(cache, test_cache_empty);
	tcase_add_test(cache, test_cache_sequential);
	tcase_add_test(cache, test_cache_window_slides);
	tcase_add_test(cache, test_cache_out_of_order);
	tcase_add_test(cache, test_cache_jump);
	tcase_add_test(cache, test_cache_wraps);
	tcase_add_test(cache, test_cache_duplicate_keeps_first);
	tcase_add_test(cache, test_cache_capacity_one);
	tcase_add_test(cache, test_cache_random_against_model);
	tcase_add_test(cache, test_sqn_after);
	suite_add_tcase(s, cache);
	tcase_add_test(poll, test_poll_types);
	tcase_add_test(poll, test_poll_mask);
	tcase_add_test(poll, test_poll_mask_probability);
	tcase_add_test(poll, test_poll_rounds);
	tcase_add_test(poll, test_poll_round0_mismatch_counts_as_seen);
	tcase_add_test(poll, test_poll_delay_bounds);
	tcase_add_test(poll, test_poll_delay_uniform);
	suite_add_tcase(s, poll);
	tcase_add_test(nak, test_nak_split);
	tcase_add_test(nak, test_nak_split_parity);
	tcase_add_test(nak, test_nak_split_full_list);
	tcase_add_test(nak, test_nak_answer);
	tcase_add_test(nak, test_own_naks);
	suite_add_tcase(s, nak);
	return s;
}

int main(void)
{
	return check_run(dlr_suite());
}

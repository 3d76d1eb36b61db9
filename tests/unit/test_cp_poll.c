/*
 * RFC 3208 14.5: the network element as a PGM child of its upstream neighbour's polls
 * (RAND_NODE_ID and POLL_MASK, the round rule, GENERAL versus other sub-types, one POLR at a
 * random time within POLL_BO_IVL to POLL_PATH, cancelled by a new POLL_SQN), and 14.1: POLLs
 * are never forwarded.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

#define BO_IVL	    100000u /* µs */
#define PARENT_PATH "198.18.0.100"

static void setup(void)
{
	t0 = cp_test_start(&env, NULL, 42);
}

static void poll_pkt(struct cp_test_pkt *p, uint32_t sqn, uint16_t round, uint16_t s_type,
	uint32_t rand, uint32_t mask)
{
	cp_test_simple(p, PGM_POLL, sqn);
	p->ip.router_alert = true;
	p->pkt.poll_round = round;
	p->pkt.poll_s_type = s_type;
	p->pkt.path = cp_test_nla(PARENT_PATH);
	p->pkt.poll_bo_ivl = BO_IVL;
	p->pkt.poll_rand = rand;
	p->pkt.poll_mask = mask;
}

static enum cp_verdict poll_at(cp_time_t t, uint32_t sqn, uint16_t round, uint16_t s_type,
	uint32_t rand, uint32_t mask, int in)
{
	struct cp_test_pkt p;

	env.now = t;
	poll_pkt(&p, sqn, round, s_type, rand, mask);
	return cp_test_send(&env, &p, in, 0);
}

static struct cp_session_view session(void)
{
	return cp_test_session_view(&env);
}

START_TEST(test_14_5_general_poll_gets_one_polr_within_bo_ivl)
{
	struct cp_session_view v;
	const struct cp_action *a;
	cp_time_t due;

	ck_assert_int_eq(poll_at(t0, 7, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_SCHEDULED), 1);
	v = session();
	ck_assert(v.polr_pending);
	due = v.polr_due;
	ck_assert_uint_ge(due, t0);
	ck_assert_uint_le(due, t0 + BO_IVL);
	ck_assert_uint_le(cp_next_deadline(env.cp), due);
	/* the timer edge: not a microsecond early */
	if (due > t0) {
		cp_test_timers(&env, due - 1);
		ck_assert_str_eq(ACTIONS(), "");
	}
	cp_test_timers(&env, due);
	ck_assert_str_eq(ACTIONS(), "POLR up 7 rpt");
	a = &env.actions[0];
	ck_assert(pgm_nla_equal(&a->ip_dst, &v.upstream));
	ck_assert_uint_eq(a->ip_src.afi, 0); /* our own address */
	ck_assert(!a->router_alert);
	ck_assert_uint_eq(a->poll_round, 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_SENT), 1);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_UP, PGM_POLR), 1);
	ck_assert(!session().polr_pending);
	/* once only */
	cp_test_clear(&env);
	cp_test_timers(&env, due + CP_SEC(5));
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

START_TEST(test_14_1_poll_never_forwarded_copies)
{
	struct cp_test_pkt p;

	poll_pkt(&p, 7, 0, 0, 0, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	/* one POLL, however many copies: one POLR */
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_SCHEDULED), 1);
	cp_test_timers(&env, t0 + BO_IVL);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_POLR), 1);
}
END_TEST

START_TEST(test_14_5_mask_match)
{
	uint32_t id = cp_node_id(env.cp);

	/* mismatch in a masked bit: discarded */
	ck_assert_int_eq(poll_at(t0, 7, 0, 0, id ^ 0x10u, 0x10u, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLL_NO_MATCH), 1);
	ck_assert(!session().polr_pending);
	/* differences outside the mask do not matter */
	ck_assert_int_eq(poll_at(t0, 8, 0, 0, id ^ 0xf0u, 0x0fu, CP_TEST_UP), CP_DROP);
	ck_assert(session().polr_pending);
	/* all-zero mask: deterministic */
	ck_assert_int_eq(poll_at(t0, 9, 0, 0, ~id, 0, CP_TEST_UP), CP_DROP);
	ck_assert(session().polr_pending);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLL_NO_MATCH), 1);
}
END_TEST

START_TEST(test_14_5_round_rule)
{
	/* round 1 of a POLL_SQN whose round 0 we never saw */
	ck_assert_int_eq(poll_at(t0, 9, 1, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLL_ROUND_UNSEEN), 1);
	ck_assert(!session().polr_pending);
	/* round 0 (not matching us), then round 1 (matching): answered, with its round */
	ck_assert_int_eq(poll_at(t0, 10, 0, 0, ~cp_node_id(env.cp), 1, CP_TEST_UP), CP_DROP);
	ck_assert(!session().polr_pending);
	ck_assert_int_eq(poll_at(t0 + 10, 10, 1, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert(session().polr_pending);
	cp_test_timers(&env, t0 + 10 + BO_IVL);
	ck_assert_str_eq(ACTIONS(), "POLR up 10 rpt");
	ck_assert_uint_eq(env.actions[0].poll_round, 1);
}
END_TEST

START_TEST(test_14_5_dlr_and_unknown_subtypes_not_answered)
{
	ck_assert_int_eq(poll_at(t0, 7, 0, 1, 0, 0, CP_TEST_UP), CP_DROP); /* PGM_POLL_DLR */
	ck_assert_int_eq(poll_at(t0, 8, 0, 5, 0, 0, CP_TEST_UP), CP_DROP); /* unknown */
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLL_NO_REPLY), 2);
	cp_test_timers(&env, t0 + CP_SEC(1));
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

START_TEST(test_14_5_new_sqn_cancels)
{
	ck_assert_int_eq(poll_at(t0, 7, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert(session().polr_pending);
	/* an abort: a new POLL_SQN we do not even match */
	ck_assert_int_eq(poll_at(t0 + 1, 8, 0, 0, ~cp_node_id(env.cp), ~0u, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_CANCELLED), 1);
	ck_assert(!session().polr_pending);
	cp_test_timers(&env, t0 + CP_SEC(1));
	ck_assert_str_eq(ACTIONS(), "");
	/* the same SQN again changes nothing */
	ck_assert_int_eq(poll_at(t0, 9, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(poll_at(t0, 9, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_CANCELLED), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_SCHEDULED), 2);
}
END_TEST

START_TEST(test_14_5_only_from_the_parent)
{
	struct cp_test_pkt p;

	ck_assert_int_eq(poll_at(t0, 7, 0, 0, 0, 0, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_POLL_NOT_UPSTREAM), 1);
	poll_pkt(&p, 7, 0, 0, 0, 0);
	p.pkt.gsi[0] ^= 0xff; /* unknown TSI */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_POLL_NOT_UPSTREAM), 1);
	ck_assert(!session().polr_pending);
}
END_TEST

START_TEST(test_14_5_reply_can_be_disabled)
{
	struct cp_config cfg;

	cp_config_default(&cfg);
	cfg.poll_reply = false;
	t0 = cp_test_restart(&env, &cfg, 42);
	ck_assert_int_eq(poll_at(t0, 7, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert(!session().polr_pending);
}
END_TEST

START_TEST(test_14_5_random_backoff_is_seeded_and_spread)
{
	cp_time_t first, lo = UINT64_MAX, hi = 0;

	ck_assert_int_eq(poll_at(t0, 7, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	first = session().polr_due;
	/* the same seed gives the same node id and the same back-off */
	t0 = cp_test_restart(&env, NULL, 42);
	ck_assert_int_eq(poll_at(t0, 7, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(session().polr_due, first);
	/* over many polls the delays stay in [0, POLL_BO_IVL] and spread over it */
	for (uint32_t i = 0; i < 200; i++) {
		cp_time_t d;

		ck_assert_int_eq(poll_at(t0, 100 + i, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
		d = session().polr_due - t0;
		ck_assert_uint_le(d, BO_IVL);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ck_assert_uint_lt(lo, BO_IVL / 4);
	ck_assert_uint_gt(hi, 3 * BO_IVL / 4);
	/* another seed, another node id */
	{
		uint32_t id = cp_node_id(env.cp);

		cp_set_random_seed(env.cp, 43);
		ck_assert_uint_ne(cp_node_id(env.cp), id);
	}
}
END_TEST

START_TEST(test_14_5_session_expiry_cancels)
{
	ck_assert_int_eq(poll_at(t0, 7, 0, 0, 0, 0, CP_TEST_UP), CP_DROP);
	ck_assert(session().polr_pending);
	/* the session goes with its upstream interface before the POLR is due: nothing is
	 * sent, nothing is left scheduled */
	cp_if_remove(env.cp, CP_TEST_UP);
	ck_assert_int_eq(cp_test_session(&env, NULL), 0);
	ck_assert_uint_eq(cp_next_deadline(env.cp), UINT64_MAX);
	cp_test_timers(&env, t0 + CP_SEC(1));
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: POLL child role (14.5)");
	TCase *tc = tcase_create("poll");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_14_5_general_poll_gets_one_polr_within_bo_ivl);
	tcase_add_test(tc, test_14_1_poll_never_forwarded_copies);
	tcase_add_test(tc, test_14_5_mask_match);
	tcase_add_test(tc, test_14_5_round_rule);
	tcase_add_test(tc, test_14_5_dlr_and_unknown_subtypes_not_answered);
	tcase_add_test(tc, test_14_5_new_sqn_cancels);
	tcase_add_test(tc, test_14_5_only_from_the_parent);
	tcase_add_test(tc, test_14_5_reply_can_be_disabled);
	tcase_add_test(tc, test_14_5_random_backoff_is_seeded_and_spread);
	tcase_add_test(tc, test_14_5_session_expiry_cancels);
	suite_add_tcase(s, tc);
	return check_run(s);
}

/*
 * RFC 3208 9.3.3 (NAK lists at network elements) and 9.5.3.2 (NNAKs).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

static void setup(void)
{
	t0 = cp_test_start(&env, NULL, 0);
}

static enum cp_verdict list_at(
	cp_time_t t, unsigned type, uint32_t sqn, const uint32_t *list, unsigned nlist, int in)
{
	return cp_test_nak_at(&env, t, type, sqn, list, nlist, in);
}

static enum cp_verdict one_at(cp_time_t t, unsigned type, uint32_t sqn, int in)
{
	return list_at(t, type, sqn, NULL, 0, in);
}

START_TEST(test_9_3_3_list_one_ncf_one_forward)
{
	static const uint32_t list[] = {11, 12};
	struct cp_repair_view r;

	ck_assert_int_eq(list_at(t0, PGM_NAK, 10, list, 2, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 10,11,12; NCF d1 10,11,12");
	ck_assert(env.actions[1].from_packet);
	ck_assert(env.actions[0].from_packet);
	for (uint32_t sqn = 10; sqn <= 12; sqn++) {
		ck_assert(cp_test_repair(&env, sqn, &r));
		ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
		ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1));
	}
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_RECEIVED), 3);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_UNIQUE), 3);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NCF_SENT), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_FORWARDED), 1);
	/* each SQN is confirmed on its own */
	ck_assert_int_eq(one_at(t0 + CP_MS(10), PGM_NCF, 11, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_repair(&env, 11, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert(cp_test_repair(&env, 10, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	/* and repeated (as a list of the unconfirmed ones) */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 10,12 rpt");
}
END_TEST

START_TEST(test_9_3_3_list_forwarded_when_any_sqn_not_eliminating)
{
	static const uint32_t list[] = {11, 12};
	struct cp_repair_view r;

	ck_assert_int_eq(one_at(t0, PGM_NAK, 10, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(one_at(t0, PGM_NAK, 11, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(list_at(t0 + CP_MS(100), PGM_NAK, 10, list, 2, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 10,11,12; NCF d2 10,11,12");
	/* the pending ones keep their timers, the new one starts */
	ck_assert(cp_test_repair(&env, 10, &r));
	ck_assert_uint_eq(r.rpt_end, t0 + CP_MS(2000));
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1) | cp_test_mask(CP_TEST_D2));
	ck_assert(cp_test_repair(&env, 12, &r));
	ck_assert_uint_eq(r.rpt_end, t0 + CP_MS(2100));
	ck_assert(cp_test_logged(&env, "sqn 10: NAK on d2 in PENDING -> PENDING (duplicate, list "
				       "forwarded for other SQNs)"));
	ck_assert(cp_test_logged(&env, "sqn 12: NAK on d2 in NONE -> PENDING (forwarded)"));
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_ELIMINATED), 0);
}
END_TEST

START_TEST(test_9_3_3_list_eliminated_when_all_eliminating)
{
	static const uint32_t list[] = {11};

	/* 10 pending (counted as eliminating), 11 outstanding within NAK_ELIM_IVL */
	ck_assert_int_eq(one_at(t0, PGM_NAK, 10, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(one_at(t0, PGM_NCF, 11, CP_TEST_UP), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(list_at(t0 + CP_MS(100), PGM_NAK, 10, list, 1, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 10,11");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_NAK_ELIMINATED), 2);
	/* once 11 stops eliminating, the list goes up again */
	cp_test_clear(&env);
	ck_assert_int_eq(list_at(t0 + CP_MS(1000), PGM_NAK, 10, list, 1, CP_TEST_D3), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 10,11; NCF d3 10,11");
}
END_TEST

START_TEST(test_9_3_3_list_ncf_rate_limit)
{
	static const uint32_t l1[] = {11}, l2[] = {11, 12};

	ck_assert_int_eq(list_at(t0, PGM_NAK, 10, l1, 1, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	/* the identical list again on the same interface: withheld */
	ck_assert_int_eq(list_at(t0 + CP_MS(1), PGM_NAK, 10, l1, 1, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NCF_RATE_LIMITED), 1);
	/* a list with an SQN not yet confirmed there: sent */
	ck_assert_int_eq(list_at(t0 + CP_MS(2), PGM_NAK, 10, l2, 2, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 10,11,12; NCF d1 10,11,12");
}
END_TEST

/* At the limit the list is confirmed and forwarded whole; the SQNs beyond it have no state. */
START_TEST(test_9_3_3_limit_leaves_sqns_stateless)
{
	static const uint32_t list[] = {11, 12};
	struct cp_config cfg;

	cp_config_default(&cfg);
	cfg.max_repair_states = 2;
	cfg.repair_if_share = cfg.repair_session_share = 100;
	cp_set_config(env.cp, &cfg);
	ck_assert_int_eq(list_at(t0, PGM_NAK, 10, list, 2, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 10,11,12; NCF d1 10,11,12");
	ck_assert_uint_eq(cp_test_repair_count(&env), 2);
	ck_assert(!cp_test_repair(&env, 12, NULL));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_REPAIR_LIMIT), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_STATELESS), 1);
	/* SQNs with state need no room, and eliminate */
	cp_test_clear(&env);
	ck_assert_int_eq(list_at(t0 + CP_MS(100), PGM_NAK, 10, list, 1, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 10,11");
}
END_TEST

START_TEST(test_9_3_3_same_sqn_twice_in_a_list)
{
	static const uint32_t list[] = {10, 10};

	ck_assert_int_eq(list_at(t0, PGM_NAK, 10, list, 2, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 1);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NAK), 1);
}
END_TEST

START_TEST(test_9_5_3_2_nnak_forwarded_without_state)
{
	struct cp_repair_view r;

	ck_assert_int_eq(one_at(t0, PGM_NNAK, 20, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 20");
	ck_assert(env.actions[0].from_packet);
	ck_assert(cp_test_repair(&env, 20, &r));
	ck_assert(r.nnak_created);
	ck_assert(!r.eliminating);
	ck_assert_uint_eq(r.if_mask, 0);
	ck_assert_uint_eq(r.elim_end, t0 + CP_MS(1000));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NNAK_RECEIVED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NNAK_FORWARDED), 1);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_UP, PGM_NNAK), 1);
	ck_assert(cp_test_logged(&env, "sqn 20: NNAK in NONE -> OUTSTANDING (NNAK state, "
				       "forwarded)"));
	/* never retried; lives NAK_ELIM_IVL only */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(1000) - 1);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert(cp_test_repair(&env, 20, NULL));
	cp_test_timers(&env, t0 + CP_MS(1000));
	ck_assert(!cp_test_repair(&env, 20, NULL));
	ck_assert(cp_test_logged(&env, "timer in OUTSTANDING (NNAK) -> deleted"));
}
END_TEST

START_TEST(test_9_5_3_2_nnak_not_forwarded_with_state)
{
	ck_assert_int_eq(one_at(t0, PGM_NAK, 20, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(one_at(t0 + CP_MS(10), PGM_NNAK, 20, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_NNAK_ELIMINATED), 1);
	/* an NNAK never adds its interface */
	{
		struct cp_repair_view r;

		ck_assert(cp_test_repair(&env, 20, &r));
		ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1));
	}
	/* a list NNAK goes up when any SQN has no state */
	{
		static const uint32_t list[] = {21};

		ck_assert_int_eq(
			list_at(t0 + CP_MS(20), PGM_NNAK, 20, list, 1, CP_TEST_D2), CP_DROP);
		ck_assert_str_eq(ACTIONS(), "NNAK up 20,21");
	}
}
END_TEST

START_TEST(test_9_5_3_2_nnak_state_never_eliminates_a_nak)
{
	struct cp_repair_view r;

	ck_assert_int_eq(one_at(t0, PGM_NNAK, 20, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(one_at(t0 + CP_MS(10), PGM_NAK, 20, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 20; NCF d1 20");
	ck_assert(cp_test_logged(&env, "NAK on d1 in OUTSTANDING -> PENDING (forwarded, state was "
				       "NNAK-created)"));
	ck_assert(cp_test_repair(&env, 20, &r));
	ck_assert(!r.nnak_created);
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1));
	ck_assert_uint_eq(r.rpt_end, t0 + CP_MS(10) + CP_MS(2000));
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_UNIQUE), 1);
	/* it now lives as a normal state past the NNAK's NAK_ELIM_IVL */
	cp_test_timers(&env, t0 + CP_MS(1500));
	ck_assert(cp_test_repair(&env, 20, NULL));
}
END_TEST

START_TEST(test_9_5_3_2_ncf_turns_nnak_state_into_anticipation)
{
	struct cp_repair_view r;

	ck_assert_int_eq(one_at(t0, PGM_NNAK, 20, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(one_at(t0 + CP_MS(5), PGM_NCF, 20, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_repair(&env, 20, &r));
	ck_assert(!r.nnak_created);
	ck_assert(r.anticipated);
	ck_assert(r.eliminating);
}
END_TEST

START_TEST(test_9_5_3_2_nnak_refusals)
{
	struct cp_test_pkt p;
	struct cp_config cfg;

	/* no session */
	cp_test_nak(&p, PGM_NNAK, 20, NULL, 0);
	p.pkt.dport = 999;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NNAK_NO_SESSION), 1);
	/* multicast */
	cp_test_nak(&p, PGM_NNAK, 20, NULL, 0);
	p.ip.dst = cp_test_nla(CP_TEST_GROUP);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_MULTICAST), 1);
	/* from the upstream interface */
	ck_assert_int_eq(one_at(t0, PGM_NNAK, 20, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_UPSTREAM_INTERFACE), 1);
	ck_assert_str_eq(ACTIONS(), "");
	/* parity: forwarded without state */
	cp_test_nak(&p, PGM_NNAK, 20, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 20");
	ck_assert(env.actions[0].parity);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	/* over the limit: still forwarded, no state */
	cp_config_default(&cfg);
	cfg.max_repair_states = 1;
	cfg.repair_if_share = cfg.repair_session_share = 100;
	cp_set_config(env.cp, &cfg);
	ck_assert_int_eq(one_at(t0, PGM_NAK, 30, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(one_at(t0, PGM_NNAK, 31, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 31");
	ck_assert_uint_eq(cp_test_repair_count(&env), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_REPAIR_LIMIT), 1);
	/* without an elimination interval there is nothing to keep */
	cfg.max_repair_states = 0;
	cfg.if_defaults.nak_elim_ivl_ms = 0;
	cp_set_config(env.cp, &cfg);
	cp_test_clear(&env);
	ck_assert_int_eq(one_at(t0, PGM_NNAK, 32, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 32");
	ck_assert_uint_eq(cp_test_repair_count(&env), 1);
}
END_TEST

START_TEST(test_11_6_parity_nak_stateless)
{
	struct cp_test_pkt p;

	/* without OPT_PARITY_PRM the counts cannot be read: no state, NCF and forward as is */
	cp_test_nak(&p, PGM_NAK, 0x43, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 67; NCF d1 67");
	ck_assert(env.actions[1].parity);
	ck_assert_uint_eq(env.actions[1].pkt_cnt, 0); /* the NAK's own count stays */
	ck_assert(env.actions[0].parity);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_PARITY_PASSTHROUGH), 1);
}
END_TEST

START_TEST(test_11_6_parity_nak_with_group_size)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, 2, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_PARITY_PRM, 0);
	p.pkt.opt.parity_tgs = 8;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 0x43, NULL, 0); /* TG 0x40, 3 + 1 packets */
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 67; NCF d1 67");
	ck_assert(env.actions[1].parity);
	ck_assert_uint_eq(env.actions[1].pkt_cnt, 3);
	ck_assert(env.actions[0].parity);
	ck_assert_uint_eq(cp_test_repair_count(&env), 1); /* per group: test_cp_parity */
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_PARITY_NAK_UNIQUE), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: NAK lists and NNAKs (9.3.3, 9.5.3.2)");
	TCase *tc = tcase_create("lists");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_9_3_3_list_one_ncf_one_forward);
	tcase_add_test(tc, test_9_3_3_list_forwarded_when_any_sqn_not_eliminating);
	tcase_add_test(tc, test_9_3_3_list_eliminated_when_all_eliminating);
	tcase_add_test(tc, test_9_3_3_list_ncf_rate_limit);
	tcase_add_test(tc, test_9_3_3_limit_leaves_sqns_stateless);
	tcase_add_test(tc, test_9_3_3_same_sqn_twice_in_a_list);
	tcase_add_test(tc, test_9_5_3_2_nnak_forwarded_without_state);
	tcase_add_test(tc, test_9_5_3_2_nnak_not_forwarded_with_state);
	tcase_add_test(tc, test_9_5_3_2_nnak_state_never_eliminates_a_nak);
	tcase_add_test(tc, test_9_5_3_2_ncf_turns_nnak_state_into_anticipation);
	tcase_add_test(tc, test_9_5_3_2_nnak_refusals);
	tcase_add_test(tc, test_11_6_parity_nak_stateless);
	tcase_add_test(tc, test_11_6_parity_nak_with_group_size);
	suite_add_tcase(s, tc);
	return check_run(s);
}

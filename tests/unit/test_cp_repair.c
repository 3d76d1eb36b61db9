/*
 * RFC 3208 7.3 and 7.5 (NCF reception: confirmation and anticipation) and 7.8 (constrained
 * RDATA forwarding).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"
#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

static void setup(void)
{
	t0 = cp_test_start(&env, NULL, 0);
}

static enum cp_verdict nak_at(cp_time_t t, uint32_t sqn, int in)
{
	return cp_test_nak_at(&env, t, PGM_NAK, sqn, NULL, 0, in);
}

static enum cp_verdict ncf_at(cp_time_t t, uint32_t sqn, int in)
{
	return cp_test_nak_at(&env, t, PGM_NCF, sqn, NULL, 0, in);
}

static enum cp_verdict rdata_at(cp_time_t t, uint32_t sqn, int in, int out)
{
	return cp_test_data_at(&env, t, PGM_RDATA, sqn, in, out);
}

/* ---- NCF reception ---- */

START_TEST(test_7_5_unsolicited_ncf_anticipates)
{
	struct cp_repair_view r;

	ck_assert_int_eq(ncf_at(t0, 30, CP_TEST_UP), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert(cp_test_repair(&env, 30, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert(r.anticipated);
	ck_assert(r.eliminating);
	ck_assert_uint_eq(r.if_mask, 0);
	ck_assert_uint_eq(r.elim_end, t0 + CP_MS(1000));
	ck_assert_uint_eq(r.rdata_end, t0 + CP_MS(10000));
	ck_assert(cp_test_logged(&env, "sqn 30: NCF in NONE -> OUTSTANDING (anticipated)"));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_ANTICIPATED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_RECEIVED), 1);
	ck_assert_uint_eq(cp_test_if_in(&env, CP_TEST_UP, PGM_NCF), 1);
	/* it eliminates downstream NAKs for NAK_ELIM_IVL, confirming them */
	ck_assert_int_eq(nak_at(t0 + CP_MS(999), 30, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 30");
	ck_assert(cp_test_repair(&env, 30, &r));
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1));
	/* then the first duplicate goes upstream */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_MS(1000), 30, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 30; NCF d2 30");
}
END_TEST

START_TEST(test_7_5_unsolicited_ncf_restarts_timers)
{
	struct cp_repair_view r;

	ck_assert_int_eq(ncf_at(t0, 30, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(3000), 30, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_repair(&env, 30, &r));
	ck_assert_uint_eq(r.elim_end, t0 + CP_MS(4000));
	ck_assert_uint_eq(r.rdata_end, t0 + CP_MS(13000));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_ANTICIPATED), 2);
	ck_assert_uint_eq(cp_test_repair_count(&env), 1);
	cp_test_timers(&env, t0 + CP_MS(13000) - 1);
	ck_assert(cp_test_repair(&env, 30, NULL));
	cp_test_timers(&env, t0 + CP_MS(13000));
	ck_assert(!cp_test_repair(&env, 30, NULL));
}
END_TEST

START_TEST(test_7_5_ncf_off_upstream_discarded)
{
	struct cp_repair_view r;

	ck_assert_int_eq(ncf_at(t0, 30, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NCF_DISCARDED), 1);
	/* nor does it confirm a pending NAK */
	ck_assert_int_eq(nak_at(t0, 31, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(10), 31, CP_TEST_D2), CP_DROP);
	ck_assert(cp_test_repair(&env, 31, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NCF_CONFIRMED), 0);
}
END_TEST

START_TEST(test_7_3_ncf_of_unknown_session_passes)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NCF, 30, NULL, 0);
	p.pkt.sport = 999;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_NO_SESSION), 1);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

START_TEST(test_9_3_3_ncf_list_is_one_ncf_per_sqn)
{
	static const uint32_t list[] = {41, 42};
	struct cp_test_pkt p;
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 41, CP_TEST_D1), CP_DROP);
	cp_test_nak(&p, PGM_NCF, 40, list, 2);
	env.now = t0 + CP_MS(20);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_RECEIVED), 3);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_CONFIRMED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_ANTICIPATED), 2);
	for (uint32_t sqn = 40; sqn <= 42; sqn++) {
		ck_assert(cp_test_repair(&env, sqn, &r));
		ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
		ck_assert_uint_eq(r.rdata_end, t0 + CP_MS(20) + CP_MS(10000));
		ck_assert(r.anticipated == (sqn != 41));
	}
}
END_TEST

START_TEST(test_ncf_special_forms)
{
	struct cp_test_pkt p;

	/* unicast: an off-tree DLR's, not asked for */
	cp_test_nak(&p, PGM_NCF, 30, NULL, 0);
	p.ip.dst = cp_test_nla("198.18.0.1");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_OFFTREE_DLR), 1);
	/* OPT_NBR_UNREACH: failure containment is not supported, consumed */
	cp_test_nak(&p, PGM_NCF, 31, NULL, 0);
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert(cp_test_logged(&env, "OPT_NBR_UNREACH"));
	/* parity: no transmission-group state yet, consumed */
	cp_test_nak(&p, PGM_NCF, 32, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_PARITY_PASSTHROUGH), 1);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	/* a forwarded copy of an NCF by an interface without assist is not ours */
	cp_test_nak(&p, PGM_NCF, 33, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_NA), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

/* ---- RDATA ---- */

START_TEST(test_7_8_rdata_only_where_requested)
{
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(10), 50, CP_TEST_UP), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(20), 50, CP_TEST_UP, CP_TEST_D3), CP_DROP);
	ck_assert(cp_test_logged(&env, "sqn 50: RDATA in OUTSTANDING -> FORWARDING"));
	ck_assert_int_eq(rdata_at(t0 + CP_MS(20), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert(cp_test_repair(&env, 50, NULL));
	ck_assert_int_eq(rdata_at(t0 + CP_MS(20), 50, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT);
	/* every listed interface had its copy: consumed */
	ck_assert(!cp_test_repair(&env, 50, NULL));
	ck_assert(cp_test_logged(&env, "deleted (every interface repaired)"));
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D3, CP_C_RDATA_NO_INTERFACE), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_RDATA_FORWARDED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_RDATA_FORWARDED), 1);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_D1, PGM_RDATA), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_RDATA_FORWARDED), 2);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_RDATA_NO_INTERFACE), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);
	ck_assert_uint_eq(cp_test_if_in(&env, CP_TEST_UP, PGM_RDATA), 3);
	/* a second RDATA of the same SQN finds nothing */
	ck_assert_int_eq(rdata_at(t0 + CP_MS(30), 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_RDATA_NO_STATE), 1);
}
END_TEST

START_TEST(test_7_8_rdata_before_ncf_also_counts)
{
	/* 7.3: RDATA at any time during NAK forwarding ends it */
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(5), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, 50, NULL));
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

START_TEST(test_7_8_rdata_without_state_dropped)
{
	ck_assert_int_eq(rdata_at(t0, 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_RDATA_NO_STATE), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_RDATA_NO_STATE), 1);
}
END_TEST

START_TEST(test_7_8_anticipated_state_has_no_interfaces)
{
	ck_assert_int_eq(ncf_at(t0, 50, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(5), 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_RDATA_NO_STATE), 1);
	/* answered: later NAKs are new requests */
	ck_assert(!cp_test_repair(&env, 50, NULL));
	ck_assert(cp_test_logged(&env, "RDATA in OUTSTANDING -> deleted (no interfaces)"));
	ck_assert_int_eq(rdata_at(t0 + CP_MS(5), 50, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(nak_at(t0 + CP_MS(6), 50, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NAK), 1);
}
END_TEST

START_TEST(test_7_8_rdata_must_come_from_upstream)
{
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(5), 50, CP_TEST_D2, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_RDATA_NOT_UPSTREAM), 1);
	ck_assert(cp_test_repair(&env, 50, NULL));
	/* and never back out of the interface it came in by */
	ck_assert_int_eq(rdata_at(t0 + CP_MS(5), 50, CP_TEST_UP, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_RDATA_NO_INTERFACE), 1);
}
END_TEST

START_TEST(test_7_8_linger_for_missing_copies)
{
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_FORWARDING);
	ck_assert_uint_eq(r.repaired_mask, cp_test_mask(CP_TEST_D1));
	ck_assert_uint_eq(r.rdata_end, t0 + CP_MS(10) + CP_MS(1000));
	ck_assert(!r.eliminating);
	/* the same interface again is a duplicate */
	ck_assert_int_eq(rdata_at(t0 + CP_MS(11), 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_RDATA_DUPLICATE), 1);
	/* d2's copy never comes: the state goes after the linger, not a microsecond before */
	cp_test_timers(&env, t0 + CP_MS(1010) - 1);
	ck_assert(cp_test_repair(&env, 50, NULL));
	cp_test_timers(&env, t0 + CP_MS(1010));
	ck_assert(!cp_test_repair(&env, 50, NULL));
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_REPAIR_LINGER_EXPIRED), 1);
	ck_assert(cp_test_logged(&env, "timer in FORWARDING -> deleted (linger expired"));
}
END_TEST

START_TEST(test_7_8_late_copy_within_linger)
{
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(500), 50, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, 50, NULL));
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);
}
END_TEST

START_TEST(test_7_8_interfaces_partly_gone)
{
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D3), CP_DROP);
	cp_if_remove(env.cp, CP_TEST_D2);
	ck_assert_int_eq(cp_if_set_assist(env.cp, CP_TEST_D3, false), 0);
	/* the RDATA still goes to the interface that is left, and that completes the state */
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, 50, NULL));
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);
}
END_TEST

START_TEST(test_7_8_all_interfaces_gone)
{
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	cp_if_remove(env.cp, CP_TEST_D1);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10), 50, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_RDATA_NO_STATE), 1);
	ck_assert(!cp_test_repair(&env, 50, NULL));
}
END_TEST

START_TEST(test_7_8_nak_after_repair_is_new)
{
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	cp_test_clear(&env);
	/* a receiver on d1 lost the repair: a new request, forwarded; d2 still waits */
	ck_assert_int_eq(nak_at(t0 + CP_MS(100), 50, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 50; NCF d1 50");
	ck_assert(cp_test_logged(&env, "NAK on d1 in FORWARDING -> PENDING (forwarded, new request "
				       "after repair)"));
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1) | cp_test_mask(CP_TEST_D2));
	ck_assert_uint_eq(r.repaired_mask, 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_UNIQUE), 2);
}
END_TEST

START_TEST(test_7_8_ncf_after_repair_waits_again)
{
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(100), 50, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D2));
	ck_assert(!r.anticipated);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(110), 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(110), 50, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, 50, NULL));
	/* if everyone had theirs, it is plain anticipation */
	ck_assert_int_eq(nak_at(t0 + CP_MS(200), 51, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(210), 51, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, 51, NULL));
	ck_assert_int_eq(nak_at(t0 + CP_MS(200), 52, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0 + CP_MS(200), 52, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(210), 52, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	cp_if_remove(env.cp, CP_TEST_D2);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(300), 52, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_repair(&env, 52, &r));
	ck_assert(r.anticipated);
	ck_assert_uint_eq(r.if_mask, 0);
}
END_TEST

START_TEST(test_7_8_rdata_special_forms)
{
	struct cp_test_pkt p;

	/* a TSI we never saw SPMs of: its receivers did not NAK through us, it passes */
	cp_test_data(&p, PGM_RDATA, 50);
	p.pkt.sport = 999;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_RDATA_NO_SESSION), 1);
	/* leaving by an interface without assist: not constrained */
	ck_assert_int_eq(rdata_at(t0, 50, CP_TEST_UP, CP_TEST_NA), CP_ACCEPT);
	ck_assert_int_eq(rdata_at(t0, 50, CP_TEST_UP, CP_TEST_XX), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_NA, CP_C_COPY_NOT_ASSISTED), 1);
	/* seen once: multicast passes, unicast (an off-tree DLR) is dropped */
	ck_assert_int_eq(rdata_at(t0, 50, CP_TEST_UP, 0), CP_ACCEPT);
	cp_test_data(&p, PGM_RDATA, 50);
	p.ip.dst = cp_test_nla("198.18.0.1");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_OFFTREE_DLR), 1);
	/* parity RDATA cannot be constrained without transmission-group state */
	cp_test_data(&p, PGM_RDATA, 64);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_PARITY_PASSTHROUGH), 1);
}
END_TEST

START_TEST(test_7_8_rdata_after_rdata_ivl_finds_nothing)
{
	ck_assert_int_eq(nak_at(t0, 50, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(ncf_at(t0, 50, CP_TEST_UP), CP_DROP);
	/* no timer run in between: the deadline alone decides */
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10000) - 1, 51, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(10000), 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_RDATA_NO_STATE), 2);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_REPAIR_EXPIRED), 1);
}
END_TEST

/* ---- NAKs that crossed the repair (the crossing window, nak.c) ---- */

#define SRC_A "198.18.1.50" /* cp_test_nak's receiver */
#define SRC_C "198.18.1.52"

/* The test defaults (NAK_ELIM_IVL 1000 ms) with a crossing window of `cross_ms`. */
static void setup_crossing(uint32_t cross_ms, uint32_t elim_ms)
{
	struct cp_config cfg;

	cp_config_default(&cfg);
	cfg.if_defaults.nak_elim_ivl_ms = elim_ms;
	cfg.if_defaults.nak_cross_ivl_ms = cross_ms;
	t0 = cp_test_restart(&env, &cfg, 0);
}

static enum cp_verdict nak_from(cp_time_t t, uint32_t sqn, int in, const char *src)
{
	struct cp_test_pkt p;

	env.now = t;
	cp_test_nak(&p, PGM_NAK, sqn, NULL, 0);
	p.ip.src = cp_test_nla(src);
	return cp_test_send(&env, &p, in, 0);
}

/* An address of 198.18.1.60-250 whose filter bits (cp_nak_src_bits, under this run's random
 * key) are not all among those of the sources given: a source the filter takes for new. */
static const char *source_new_to(const char *a, const char *b)
{
	static char text[2][32];
	static unsigned next;
	struct pgm_nla na = cp_test_nla(a), nb = cp_test_nla(b);
	uint32_t known = cp_nak_src_bits(env.cp, &na) | cp_nak_src_bits(env.cp, &nb);
	char *t = text[next++ % 2];

	for (unsigned host = 60; host <= 250; host++) {
		struct pgm_nla n;

		snprintf(t, sizeof(text[0]), "198.18.1.%u", host);
		n = cp_test_nla(t);
		if ((cp_nak_src_bits(env.cp, &n) & ~known) != 0)
			return t;
	}
	ck_abort_msg("no source new to the filter");
	return NULL;
}

/* A NAK from A on d1, the source's NCF, the RDATA at t0 + 3 ms to d1. The caller clears. */
static void repaired_on_d1(uint32_t sqn)
{
	ck_assert_int_eq(nak_from(t0, sqn, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(2), sqn, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(3), sqn, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
}

/*
 * A receiver's NAK sent before the NCF or the RDATA reached it, arriving after the RDATA went
 * by: without the window it found no state and went upstream, and the source repaired again
 * (bench-storm, K = 128; e2e fragment-repair, where the second RDATA crashed libpgm receivers).
 * From a source new to the SQN, on the interface that had the copy, within the window: confirmed
 * (7.2), not forwarded.
 */
START_TEST(test_7_8_crossing_nak_eliminated)
{
	const char *b;
	struct cp_repair_view r;

	setup_crossing(100, 1000);
	b = source_new_to(SRC_A, SRC_A);
	repaired_on_d1(50);
	ck_assert(cp_test_logged(&env, "sqn 50: RDATA in FORWARDING -> REPAIRED (every interface "
				       "repaired, crossing window)"));
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_FORWARDING);
	ck_assert(!r.eliminating);
	ck_assert_uint_eq(r.rdata_end, t0 + CP_MS(103));
	cp_test_clear(&env);
	/* B's NAK crossed the repair (past ncf-interval: its NCF goes) */
	ck_assert_int_eq(nak_from(t0 + CP_MS(60), 50, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 50");
	ck_assert(cp_test_logged(&env, "sqn 50: NAK on d1 in REPAIRED -> REPAIRED (eliminated: "
				       "crossed the repair on its way)"));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_CROSSED_REPAIR), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_CROSSED_REPAIR), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_ELIMINATED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_FORWARDED), 1);
	/* a second copy of the repair finds the state: nothing more goes down (7.8) */
	ck_assert_int_eq(rdata_at(t0 + CP_MS(61), 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_RDATA_DUPLICATE), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);
	/* the window ends 100 ms after the RDATA: the state goes, counted once */
	cp_test_timers(&env, t0 + CP_MS(103) - 1);
	ck_assert(cp_test_repair(&env, 50, NULL));
	cp_test_timers(&env, t0 + CP_MS(103));
	ck_assert(!cp_test_repair(&env, 50, NULL));
	ck_assert(cp_test_logged(
		&env, "sqn 50: timer in REPAIRED -> deleted (crossing window over)"));
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);
	ck_assert_str_eq(ACTIONS(), "NCF d1 50");
	ck_assert(cp_check(env.cp, NULL, 0));
}
END_TEST

/* The same source NAKing again after the repair went by asks anew: a downstream router asking
 * for its other branch (e2e tree-loss), a receiver whose repair was lost below us. */
START_TEST(test_7_8_crossing_same_source_again_is_new)
{
	const char *b;
	struct cp_repair_view r;

	setup_crossing(100, 1000);
	b = source_new_to(SRC_A, SRC_A);
	repaired_on_d1(50);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(60), 50, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 50; NCF d1 50");
	ck_assert(cp_test_logged(&env, "sqn 50: NAK on d1 in REPAIRED -> PENDING (forwarded, new "
				       "request after repair)"));
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1));
	ck_assert_uint_eq(r.repaired_mask, 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_CROSSED_REPAIR), 0);
	/* a crossing NAK's source is known from then on: its next NAK is a new request too */
	repaired_on_d1(51);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(60), 51, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 51");
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(70), 51, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 51; NCF d1 51");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_CROSSED_REPAIR), 1);
	ck_assert(cp_check(env.cp, NULL, 0));
}
END_TEST

/*
 * An OpenPGM receiver (NAK_SRC names the router, the SPM's path) sends a NAK list and at once a
 * single NAK for its first SQN; held up behind the repair, the single one crossed it (e2e
 * fragment-repair: the source repaired twice, libpgm crashed). A receiver asks again for a lost
 * repair only after its NAK_RDATA_IVL; a router names the source.
 */
START_TEST(test_7_8_crossing_openpgm_follow_up)
{
	uint32_t list[1] = {51};
	struct cp_test_pkt p;

	setup_crossing(100, 1000);
	env.now = t0;
	cp_test_nak(&p, PGM_NAK, 50, list, 1);
	p.pkt.nak_src = cp_test_nla("198.18.1.1"); /* d1's address */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(2), 50, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(3), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	cp_test_clear(&env);
	env.now = t0 + CP_MS(60);
	cp_test_nak(&p, PGM_NAK, 50, NULL, 0);
	p.pkt.nak_src = cp_test_nla("198.18.1.1");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 50");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_CROSSED_REPAIR), 1);
	/* the same NAK naming the source (as a router sends it) is a new request */
	repaired_on_d1(52);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(60), 52, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 52; NCF d1 52");
}
END_TEST

/* An interface that had no copy asks for a repair that has not gone there (7.8). */
START_TEST(test_7_8_crossing_other_interface_is_new)
{
	setup_crossing(100, 1000);
	repaired_on_d1(50);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(10), 50, CP_TEST_D2, SRC_C), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 50; NCF d2 50");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_CROSSED_REPAIR), 0);
	/* the repair then goes to d2 only */
	ck_assert_int_eq(ncf_at(t0 + CP_MS(12), 50, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(13), 50, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(13), 50, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT);
}
END_TEST

/* After the window, or with none (0, and never longer than NAK_ELIM_IVL): a new request. */
START_TEST(test_7_8_crossing_window_bounds)
{
	const char *b;
	setup_crossing(100, 1000);
	b = source_new_to(SRC_A, SRC_A);
	repaired_on_d1(50);
	cp_test_timers(&env, t0 + CP_MS(103));
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(103), 50, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 50; NCF d1 50");
	ck_assert(cp_test_logged(&env, "sqn 50: NAK on d1 in NONE -> PENDING (forwarded)"));
	/* the state's own deadline ends it on the packet path too, timers late or not */
	repaired_on_d1(51);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(103), 51, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 51; NCF d1 51");

	/* 0: exactly RFC 3208 7.8, the state goes with the last copy */
	setup_crossing(0, 1000);
	b = source_new_to(SRC_A, SRC_A);
	repaired_on_d1(50);
	ck_assert(!cp_test_repair(&env, 50, NULL));
	ck_assert(cp_test_logged(&env, "sqn 50: RDATA in FORWARDING -> deleted (every interface "
				       "repaired)"));
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(4), 50, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 50; NCF d1 50");

	/* at most NAK_ELIM_IVL; none when elimination is off */
	setup_crossing(100, 40);
	b = source_new_to(SRC_A, SRC_A);
	repaired_on_d1(50);
	cp_test_timers(&env, t0 + CP_MS(43) - 1);
	ck_assert(cp_test_repair(&env, 50, NULL));
	cp_test_timers(&env, t0 + CP_MS(43));
	ck_assert(!cp_test_repair(&env, 50, NULL));
	setup_crossing(100, 0);
	b = source_new_to(SRC_A, SRC_A);
	repaired_on_d1(50);
	ck_assert(!cp_test_repair(&env, 50, NULL));
}
END_TEST

/*
 * The rule is per interface: while the repair still waits for a copy on another interface
 * (FORWARDING), a NAK on an interface that had its copy, from a source new to the SQN, within
 * the window counted from the copy, crossed the repair as well. It used to go upstream as a new
 * request, and the source repaired again.
 */
START_TEST(test_7_8_crossing_while_forwarding)
{
	struct cp_repair_view r;
	const char *b, *d;

	/* A NAKs on both interfaces, B and D are new to the filter whatever the key */
	setup_crossing(100, 1000);
	b = source_new_to(SRC_A, SRC_A);
	ck_assert_int_eq(nak_from(t0, 50, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_int_eq(nak_from(t0 + CP_MS(1), 50, CP_TEST_D2, SRC_A), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(2), 50, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(3), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_FORWARDING);
	ck_assert_uint_eq(r.repaired_mask, cp_test_mask(CP_TEST_D1));
	cp_test_clear(&env);
	/* B (new to the filter) on d1 crossed the copy d1 had: confirmed, not forwarded, d2 still
	 * waits */
	ck_assert_int_eq(nak_from(t0 + CP_MS(60), 50, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 50");
	ck_assert(cp_test_logged(&env, "sqn 50: NAK on d1 in FORWARDING -> FORWARDING "
				       "(eliminated: crossed the repair on its way)"));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_CROSSED_REPAIR), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_FORWARDED), 1);
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_FORWARDING);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1) | cp_test_mask(CP_TEST_D2));
	ck_assert_uint_eq(r.repaired_mask, cp_test_mask(CP_TEST_D1));
	/* d2's copy completes the repair, held for the window from then */
	ck_assert_int_eq(rdata_at(t0 + CP_MS(61), 50, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT);
	ck_assert(cp_test_logged(&env, "sqn 50: RDATA in FORWARDING -> REPAIRED (every interface "
				       "repaired, crossing window)"));
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);

	/* the same source again, another interface without its copy, or past the window (100 ms
	 * from the copy at 3 ms): new requests, as before */
	ck_assert_int_eq(nak_from(t0 + CP_MS(200), 51, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_int_eq(nak_from(t0 + CP_MS(200), 51, CP_TEST_D2, SRC_A), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(202), 51, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(203), 51, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(210), 51, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 51; NCF d1 51");
	ck_assert(cp_test_logged(&env, "sqn 51: NAK on d1 in FORWARDING -> PENDING (forwarded, "
				       "new request after repair)"));

	ck_assert_int_eq(nak_from(t0 + CP_MS(300), 52, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_int_eq(nak_from(t0 + CP_MS(300), 52, CP_TEST_D2, SRC_A), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(302), 52, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(303), 52, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(403) - 1, 52, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 52");
	cp_test_clear(&env);
	d = source_new_to(SRC_A, b);
	ck_assert_int_eq(nak_from(t0 + CP_MS(403), 52, CP_TEST_D1, d), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 52; NCF d1 52");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_CROSSED_REPAIR), 2);

	/* without a window: RFC 3208 7.8, every NAK after the first copy is a new request */
	setup_crossing(0, 1000);
	ck_assert_int_eq(nak_from(t0, 50, CP_TEST_D1, SRC_A), CP_DROP);
	ck_assert_int_eq(nak_from(t0 + CP_MS(1), 50, CP_TEST_D2, SRC_A), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(2), 50, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(rdata_at(t0 + CP_MS(3), 50, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	cp_test_clear(&env);
	ck_assert_int_eq(
		nak_from(t0 + CP_MS(10), 50, CP_TEST_D1, source_new_to(SRC_A, SRC_A)), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 50; NCF d1 50");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_CROSSED_REPAIR), 0);
	ck_assert(cp_check(env.cp, NULL, 0));
}
END_TEST

/* The NAK sources are per state: a source that NAKed another SQN is new to this one, and an
 * NCF for a repaired SQN makes it wait again like any repaired state (7.8). */
START_TEST(test_7_8_crossing_sources_per_sqn)
{
	const char *b;
	struct cp_repair_view r;

	setup_crossing(100, 1000);
	b = source_new_to(SRC_A, SRC_A);
	ck_assert_int_eq(nak_from(t0, 60, CP_TEST_D1, b), CP_DROP);
	repaired_on_d1(50);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(t0 + CP_MS(60), 50, CP_TEST_D1, b), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 50");
	cp_test_clear(&env);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(61), 50, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_logged(&env, "sqn 50: NCF in REPAIRED -> OUTSTANDING (timers "
				       "restarted, anticipated)"));
	ck_assert(cp_test_repair(&env, 50, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert(r.eliminating);
	ck_assert(cp_check(env.cp, NULL, 0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: NCF and RDATA (7.3, 7.5, 7.8)");
	TCase *tc = tcase_create("repair");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_7_5_unsolicited_ncf_anticipates);
	tcase_add_test(tc, test_7_5_unsolicited_ncf_restarts_timers);
	tcase_add_test(tc, test_7_5_ncf_off_upstream_discarded);
	tcase_add_test(tc, test_7_3_ncf_of_unknown_session_passes);
	tcase_add_test(tc, test_9_3_3_ncf_list_is_one_ncf_per_sqn);
	tcase_add_test(tc, test_ncf_special_forms);
	tcase_add_test(tc, test_7_8_rdata_only_where_requested);
	tcase_add_test(tc, test_7_8_rdata_before_ncf_also_counts);
	tcase_add_test(tc, test_7_8_rdata_without_state_dropped);
	tcase_add_test(tc, test_7_8_anticipated_state_has_no_interfaces);
	tcase_add_test(tc, test_7_8_rdata_must_come_from_upstream);
	tcase_add_test(tc, test_7_8_linger_for_missing_copies);
	tcase_add_test(tc, test_7_8_late_copy_within_linger);
	tcase_add_test(tc, test_7_8_interfaces_partly_gone);
	tcase_add_test(tc, test_7_8_all_interfaces_gone);
	tcase_add_test(tc, test_7_8_nak_after_repair_is_new);
	tcase_add_test(tc, test_7_8_ncf_after_repair_waits_again);
	tcase_add_test(tc, test_7_8_rdata_special_forms);
	tcase_add_test(tc, test_7_8_rdata_after_rdata_ivl_finds_nothing);
	suite_add_tcase(s, tc);
	tc = tcase_create("crossing");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_7_8_crossing_nak_eliminated);
	tcase_add_test(tc, test_7_8_crossing_same_source_again_is_new);
	tcase_add_test(tc, test_7_8_crossing_openpgm_follow_up);
	tcase_add_test(tc, test_7_8_crossing_other_interface_is_new);
	tcase_add_test(tc, test_7_8_crossing_window_bounds);
	tcase_add_test(tc, test_7_8_crossing_sources_per_sqn);
	tcase_add_test(tc, test_7_8_crossing_while_forwarding);
	suite_add_tcase(s, tc);
	return check_run(s);
}

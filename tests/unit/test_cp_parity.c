/*
 * RFC 3208 11.6: parity repair state per (TSI, TG_SQN) with per-interface known packet counts;
 * parity NCFs; forwarding parity NAKs with the largest known count; parity NCFs that confirm only
 * when they cover it and otherwise anticipate; parity RDATA decrementing counts; the
 * variable-group-size offset (OPT_CURR_TGSIZE); parity NNAKs; parity only to DLRs that advertise
 * it (9.5.3.1).
 *
 * The session's group size is 8: SQN 0x40 | c is a NAK for c + 1 parity packets of group 0x40.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

#define TG 0x40u

static void spm_tgs(uint32_t sqn, uint32_t tgs, uint32_t curr)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, sqn, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_PARITY_PRM, 0);
	p.pkt.opt.parity_tgs = tgs;
	if (curr != 0) {
		cp_test_add_option(&p, PGM_OPT_CURR_TGSIZE, 0);
		p.pkt.opt.curr_tgsize = curr;
	}
	for (int i = CP_TEST_D1; i <= CP_TEST_D3; i++)
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, i), CP_ACCEPT_REWRITTEN);
}

static void setup(void)
{
	cp_test_env_init(&env, NULL);
	t0 = env.now;
	spm_tgs(1, 8, 0);
	cp_test_clear(&env);
}

static enum cp_verdict pnak_at(cp_time_t t, unsigned type, uint32_t sqn, int in)
{
	struct cp_test_pkt p;

	env.now = t;
	cp_test_nak(&p, type, sqn, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	if (type == PGM_NCF)
		p.ip.router_alert = true;
	return cp_test_send(&env, &p, in, 0);
}

static enum cp_verdict prdata(uint32_t sqn, int out)
{
	struct cp_test_pkt p;

	cp_test_data(&p, PGM_RDATA, sqn);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	return cp_test_send(&env, &p, CP_TEST_UP, out);
}

static struct cp_repair_view tg_state(void)
{
	struct cp_repair_view r;

	ck_assert(cp_test_repair(&env, TG, &r));
	ck_assert(r.parity);
	return r;
}

START_TEST(test_11_6_nak_creates_group_state_and_parity_ncf)
{
	struct cp_repair_view r;

	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 2, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 66; NCF d1 66");
	ck_assert(env.actions[1].parity);
	ck_assert_uint_eq(env.actions[1].pkt_cnt, 2);
	ck_assert_uint_eq(env.actions[1].tgs, 8);
	ck_assert(env.actions[0].parity);
	ck_assert(env.actions[0].from_packet);
	ck_assert(!env.actions[0].pkt_cnt_rewrite); /* its own count is the largest */
	r = tg_state();
	ck_assert_uint_eq(r.pkt_cnt, 3);
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1));
	/* a selective NAK for the group's first SQN is state of its own */
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, 0x3f, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 2);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_PARITY_NAK_UNIQUE), 2);
}
END_TEST

START_TEST(test_11_6_elimination_and_largest_count)
{
	/* d1 wants 3, d2 wants 2 (covered while pending: eliminated), d3 wants 5 (forwarded
	 * with 5) */
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 2, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 1, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 65");
	ck_assert_uint_eq(env.actions[0].pkt_cnt, 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_PARITY_NAK_ELIMINATED), 1);
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 4, CP_TEST_D3), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 68; NCF d3 68");
	ck_assert_uint_eq(tg_state().pkt_cnt, 5);
	/* d1 asks for fewer now: the NCF carries what d1 is known to want (3) */
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 0, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 64");
	ck_assert_uint_eq(env.actions[0].pkt_cnt, 2);
	/* d2 raises its count above the largest: forwarded with the new largest, rewritten */
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 6, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 70; NCF d2 70");
	ck_assert_uint_eq(tg_state().pkt_cnt, 7);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_PARITY_NAK_FORWARDED), 3);
}
END_TEST

START_TEST(test_11_6_forwarded_with_largest_after_elim)
{
	struct cp_test_pkt p;

	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 5, CP_TEST_D1), CP_DROP);
	/* confirmed for 6: NAK_ELIM_IVL runs 1 s */
	cp_test_nak(&p, PGM_NCF, TG | 5, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	env.now = t0 + 10;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_int_eq(tg_state().phase, CP_PHASE_OUTSTANDING);
	cp_test_clear(&env);
	/* within ELIM, a smaller request from d2 is eliminated */
	ck_assert_int_eq(pnak_at(t0 + CP_MS(500), PGM_NAK, TG | 1, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 65");
	/* after ELIM, forwarded with the largest known count (6): NAK_PKT_CNT rewritten */
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0 + 10 + CP_SEC(1), PGM_NAK, TG | 1, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 69; NCF d2 65");
	ck_assert(env.actions[0].from_packet);
	ck_assert(env.actions[0].pkt_cnt_rewrite);
	ck_assert_uint_eq(env.actions[0].pkt_cnt, 5);
	ck_assert_uint_eq(env.actions[0].tgs, 8);
	/* its repeats carry the largest count too */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + 10 + CP_SEC(1) + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 69 rpt");
	ck_assert(env.actions[0].parity);
}
END_TEST

START_TEST(test_11_6_parity_ncf_covers_or_anticipates)
{
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 3, CP_TEST_D1), CP_DROP);
	/* an NCF for 2 does not cover the 4 we asked for: still pending */
	ck_assert_int_eq(pnak_at(t0 + 10, PGM_NCF, TG | 1, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(tg_state().phase, CP_PHASE_PENDING);
	/* one for 4 does */
	ck_assert_int_eq(pnak_at(t0 + 20, PGM_NCF, TG | 3, CP_TEST_UP), CP_DROP);
	ck_assert_int_eq(tg_state().phase, CP_PHASE_OUTSTANDING);
	/* partial anticipation: an NCF for 6 raises the largest count */
	ck_assert_int_eq(pnak_at(t0 + 30, PGM_NCF, TG | 5, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(tg_state().pkt_cnt, 6);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_PARITY_NCF), 2);
	/* off the upstream interface: discarded */
	ck_assert_int_eq(pnak_at(t0 + 30, PGM_NCF, TG | 7, CP_TEST_D2), CP_DROP);
	ck_assert_uint_eq(tg_state().pkt_cnt, 6);
}
END_TEST

START_TEST(test_11_6_unsolicited_parity_ncf_anticipates)
{
	struct cp_repair_view r;

	ck_assert_int_eq(pnak_at(t0, PGM_NCF, TG | 2, CP_TEST_UP), CP_DROP);
	r = tg_state();
	ck_assert(r.anticipated);
	ck_assert_uint_eq(r.pkt_cnt, 3);
	ck_assert_uint_eq(r.if_mask, 0);
	/* NAKs within the count are eliminated, larger ones forwarded */
	ck_assert_int_eq(pnak_at(t0 + 10, PGM_NAK, TG | 2, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 66");
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0 + 20, PGM_NAK, TG | 3, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 67; NCF d2 67");
}
END_TEST

START_TEST(test_11_6_rdata_decrements_counts)
{
	/* d1 is owed 2, d2 1 */
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 1, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 0, CP_TEST_D2), CP_DROP);
	env.now = t0 + 100;
	/* the first parity packet (RDATA SQN 0x40): to d1 and d2, not to d3 nor back up */
	ck_assert_int_eq(prdata(TG | 0, CP_TEST_D1), CP_ACCEPT);
	ck_assert_int_eq(prdata(TG | 0, CP_TEST_D2), CP_ACCEPT);
	ck_assert_int_eq(prdata(TG | 0, CP_TEST_D3), CP_DROP);
	ck_assert_uint_eq(tg_state().pkt_cnt, 1);
	ck_assert_uint_eq(tg_state().if_mask, cp_test_mask(CP_TEST_D1)); /* d2 is done */
	/* the second (0x41): to d1 only, then the state is done */
	ck_assert_int_eq(prdata(TG | 1, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(prdata(TG | 1, CP_TEST_D1), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, TG, NULL));
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_PARITY_RDATA_FORWARDED), 3);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_COMPLETED), 1);
	/* and then there is none */
	ck_assert_int_eq(prdata(TG | 2, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_PARITY_RDATA_DROPPED), 3);
}
END_TEST

START_TEST(test_11_6_same_parity_packet_again)
{
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 1, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(prdata(TG | 0, CP_TEST_D1), CP_ACCEPT);
	/* the same parity RDATA arriving again on d1 is a new packet: d1's second */
	ck_assert_int_eq(prdata(TG | 0, CP_TEST_D1), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, TG, NULL));
}
END_TEST

START_TEST(test_11_6_variable_group_size_offset)
{
	/* the source sends groups of 6 out of 8: an interface is done at count 2 */
	spm_tgs(2, 8, 6);
	{
		struct cp_session_view v;

		ck_assert(cp_test_session(&env, &v));
		ck_assert_uint_eq(v.curr_tgsize, 6);
	}
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 2, CP_TEST_D1), CP_DROP); /* 3 */
	ck_assert_int_eq(prdata(TG | 0, CP_TEST_D1), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, TG, NULL));
	/* OPT_CURR_TGSIZE in parity RDATA counts too: back to full groups */
	{
		struct cp_test_pkt p;

		ck_assert_int_eq(pnak_at(t0, PGM_NAK, 0x80 | 1, CP_TEST_D1), CP_DROP); /* 2 */
		cp_test_data(&p, PGM_RDATA, 0x80);
		p.pkt.opt_flags |= PGM_OPT_PARITY;
		cp_test_add_option(&p, PGM_OPT_CURR_TGSIZE, 0);
		p.pkt.opt.curr_tgsize = 8;
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
		ck_assert(cp_test_repair(&env, 0x80, NULL)); /* one more owed */
	}
}
END_TEST

START_TEST(test_11_6_parity_nnak)
{
	/* no state: forwarded */
	ck_assert_int_eq(pnak_at(t0, PGM_NNAK, TG | 2, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 66");
	cp_test_clear(&env);
	/* state for 4: an NNAK for 3 is eliminated, one for 4 is not */
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, 0x80 | 3, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0, PGM_NNAK, 0x80 | 2, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_int_eq(pnak_at(t0, PGM_NNAK, 0x80 | 3, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 131");
}
END_TEST

START_TEST(test_11_6_parity_list)
{
	uint32_t list[] = {0x48 | 1};
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, TG | 2, list, 1);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	/* one state per group; the list is built again with each group's largest count */
	ck_assert_str_eq(ACTIONS(), "NAK up 66,73 rpt; NCF d1 66,73");
	ck_assert(env.actions[0].parity);
	ck_assert_uint_eq(cp_test_repair_count(&env), 2);
}
END_TEST

START_TEST(test_11_6_rdata_expiry)
{
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 1, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(pnak_at(t0 + 10, PGM_NCF, TG | 1, CP_TEST_UP), CP_DROP);
	/* NAK_RDATA_IVL (10 s) without parity RDATA: gone, edge included */
	cp_test_timers(&env, t0 + 10 + CP_SEC(10) - 1);
	ck_assert(cp_test_repair(&env, TG, NULL));
	cp_test_timers(&env, t0 + 10 + CP_SEC(10));
	ck_assert(!cp_test_repair(&env, TG, NULL));
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_REPAIR_EXPIRED), 1);
}
END_TEST

/* 9.5.3.1: parity NAKs only to DLRs that put OPT_PARITY in their POLR. */
static void learn_upstream_dlr(bool parity)
{
	struct cp_test_pkt p;

	cp_test_simple(&p, PGM_POLR, 1);
	p.ip.src = cp_test_nla(CP_TEST_SOURCE);
	p.ip.dst = cp_test_nla(CP_TEST_GROUP);
	cp_test_add_option(&p, PGM_OPT_REDIRECT, 0);
	p.pkt.opt.redirect = cp_test_nla("198.18.0.77");
	if (parity)
		p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
}

/*
 * An interface losing its slot (assist off, removal, rename) clears its bit in every state's
 * masks and its parity counts; a group's count pool id is no mask: the groups whose ids have
 * that bit set keep their own counts, and all of them are freed once.
 */
START_TEST(test_11_6_slot_dropped_keeps_group_counts)
{
	struct cp_stats st;
	uint32_t g;

	/* groups 0x40, 0x48, 0x50, 0x58 (count ids 0-3) want 1-4 packets on d2 */
	for (g = 0; g < 4; g++)
		ck_assert_int_eq(pnak_at(t0, PGM_NAK, (TG + 8 * g) | g, CP_TEST_D2), CP_DROP);
	/* d1 (slot 1) loses its slot: ids 2 and 3 have bit 1 set */
	ck_assert_int_eq(cp_if_set_assist(env.cp, CP_TEST_D1, false), 0);
	for (g = 0; g < 4; g++) {
		struct cp_repair_view r;

		ck_assert(cp_test_repair(&env, TG + 8 * g, &r));
		ck_assert_uint_eq(r.pkt_cnt, g + 1);
	}
	/* group 0x50 raising its count leaves group 0x40's alone */
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, (TG + 16) | 6, CP_TEST_D3), CP_DROP);
	ck_assert_uint_eq(tg_state().pkt_cnt, 1);
	ck_assert_uint_eq(cp_clear_repair_states(env.cp, NULL), 4);
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.repair_states, 0);
	/* the pool hands out four distinct ids again */
	for (g = 0; g < 4; g++)
		ck_assert_int_eq(pnak_at(t0 + 1, PGM_NAK, (TG + 8 * g) | g, CP_TEST_D2), CP_DROP);
	for (g = 0; g < 4; g++) {
		struct cp_repair_view r;

		ck_assert(cp_test_repair(&env, TG + 8 * g, &r));
		ck_assert_uint_eq(r.pkt_cnt, g + 1);
	}
}
END_TEST

START_TEST(test_9_5_3_1_parity_only_to_parity_dlrs)
{
	struct pgm_nla dlr = cp_test_nla("198.18.0.77"), up = cp_test_nla(CP_TEST_UPSTREAM);

	learn_upstream_dlr(false);
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, TG | 1, CP_TEST_D1), CP_DROP);
	ck_assert(pgm_nla_equal(&env.actions[0].ip_dst, &up));
	cp_test_clear(&env);
	/* selective NAKs still go to it */
	{
		struct cp_test_pkt p;

		cp_test_nak(&p, PGM_NAK, 0x3f, NULL, 0);
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	}
	ck_assert(pgm_nla_equal(&env.actions[0].ip_dst, &dlr));
	/* a parity-capable one gets parity NAKs */
	cp_clear_dlrs(env.cp, NULL);
	learn_upstream_dlr(true);
	cp_test_clear(&env);
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, 0x80 | 1, CP_TEST_D1), CP_DROP);
	ck_assert(pgm_nla_equal(&env.actions[0].ip_dst, &dlr));
}
END_TEST

START_TEST(test_9_5_3_2_offtree_parity_rdata)
{
	struct cp_config cfg;
	struct cp_test_pkt p;

	cp_config_default(&cfg);
	cfg.dlr_discovery = true;
	cp_test_env_free(&env);
	cp_test_env_init(&env, &cfg);
	t0 = env.now;
	spm_tgs(1, 8, 0);
	/* a parity NAK sent upstream triggers the DLR poll; the off-tree DLR on d2 answers
	 * with parity */
	ck_assert_int_eq(pnak_at(t0, PGM_NAK, 0x38, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_POLL), 3);
	cp_test_simple(&p, PGM_POLR, 1);
	p.ip.src = cp_test_nla("198.18.2.77");
	p.ip.dst = cp_test_nla("198.18.2.1");
	cp_test_add_option(&p, PGM_OPT_REDIRECT, 0);
	p.pkt.opt.redirect = cp_test_nla("198.18.2.77");
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, 0), CP_DROP);
	cp_test_clear(&env);
	/* d1 and d3 want 1 parity packet; both NAKs go to the DLR */
	ck_assert_int_eq(pnak_at(t0 + 10, PGM_NAK, TG | 0, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(pnak_at(t0 + 10, PGM_NAK, TG | 0, CP_TEST_D3), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK d2 64; NCF d1 64; NCF d3 64");
	cp_test_clear(&env);
	/* its unicast parity RDATA is re-sourced onto d1 and d3, and the state is done */
	cp_test_data(&p, PGM_RDATA, TG | 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	p.ip.src = cp_test_nla("198.18.2.77");
	p.ip.dst = cp_test_nla("198.18.2.1");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "RDATA d1 64; RDATA d3 64");
	ck_assert(env.actions[0].parity);
	ck_assert(!cp_test_repair(&env, TG, NULL));
	/* again: nothing owed */
	cp_test_clear(&env);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: parity repair state (11.6)");
	TCase *tc = tcase_create("parity");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_11_6_nak_creates_group_state_and_parity_ncf);
	tcase_add_test(tc, test_11_6_elimination_and_largest_count);
	tcase_add_test(tc, test_11_6_forwarded_with_largest_after_elim);
	tcase_add_test(tc, test_11_6_parity_ncf_covers_or_anticipates);
	tcase_add_test(tc, test_11_6_unsolicited_parity_ncf_anticipates);
	tcase_add_test(tc, test_11_6_rdata_decrements_counts);
	tcase_add_test(tc, test_11_6_same_parity_packet_again);
	tcase_add_test(tc, test_11_6_variable_group_size_offset);
	tcase_add_test(tc, test_11_6_parity_nnak);
	tcase_add_test(tc, test_11_6_parity_list);
	tcase_add_test(tc, test_11_6_rdata_expiry);
	tcase_add_test(tc, test_11_6_slot_dropped_keeps_group_counts);
	tcase_add_test(tc, test_9_5_3_1_parity_only_to_parity_dlrs);
	tcase_add_test(tc, test_9_5_3_2_offtree_parity_rdata);
	suite_add_tcase(s, tc);
	return check_run(s);
}

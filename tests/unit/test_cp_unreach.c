/*
 * RFC 3208 15.3: failure containment (DUP_NAK_MAX, unicast NCFs with OPT_NBR_UNREACH and
 * OPT_PATH_NLA, NCFs and SPMs with OPT_NBR_UNREACH from upstream suspending NAK forwarding until a
 * regular SPM, the special SPM) and 15.2: NAK_BO_IVL advertised in NCFs and forwarded SPMs, and
 * its optional tuning (x2 on a first duplicate, /2 after NAK_PROBE_NUM clean repair states).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

static void spm(uint32_t sqn)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, sqn, 10 * sqn, 10 * sqn + 100);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
}

static void start(const struct cp_config *cfg)
{
	cp_test_env_init(&env, cfg);
	t0 = env.now;
	spm(1);
	cp_test_clear(&env);
}

static void setup(void)
{
	start(NULL);
}

static void restart(const struct cp_config *cfg)
{
	cp_test_env_free(&env);
	start(cfg);
}

static enum cp_verdict nak_at(cp_time_t t, uint32_t sqn, int in)
{
	return cp_test_nak_at(&env, t, PGM_NAK, sqn, NULL, 0, in);
}

static bool suspended(void)
{
	struct cp_session_view v;

	ck_assert(cp_test_session(&env, &v));
	return v.naks_suspended;
}

static enum cp_verdict unreach_ncf(const char *path)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NCF, 17, NULL, 0);
	p.ip.src = cp_test_nla("198.18.0.100");
	p.ip.dst = cp_test_nla("198.18.0.1");
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	if (path != NULL) {
		cp_test_add_option(&p, PGM_OPT_PATH_NLA, 0);
		p.pkt.opt.path_nla = cp_test_nla(path);
	}
	return cp_test_send(&env, &p, CP_TEST_UP, 0);
}

/* ---- 15.3.1 detection, unicast NCFs ---- */

START_TEST(test_15_3_1_dup_nak_max_then_unicast_ncfs)
{
	struct cp_config cfg;
	const struct cp_action *a;
	struct cp_session_view v;

	cp_config_default(&cfg);
	cfg.if_defaults.dup_nak_max = 3;
	cfg.if_defaults.ncf_ivl_ms = 0;
	restart(&cfg);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* first */
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* duplicate 1 */
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* duplicate 2 */
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_ASSUMED), 0);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* duplicate 3 = DUP_NAK_MAX */
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_UNREACH_ASSUMED), 1);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.unreach_mask, cp_test_mask(CP_TEST_D1));
	/* from now on NAKs on d1 get unicast NCFs with OPT_NBR_UNREACH and OPT_PATH_NLA */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + 10, 18, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 18; NCF d1 18");
	a = &env.actions[1];
	ck_assert(a->nbr_unreach);
	ck_assert_uint_eq(a->ip_src.afi, 0); /* from us */
	{
		struct pgm_nla naker = cp_test_nla("198.18.1.50"), path = cp_test_nla("198.18.1.1");

		ck_assert(pgm_nla_equal(&a->ip_dst, &naker));
		ck_assert(pgm_nla_equal(&a->path, &path));
	}
	/* (the NAK that reached DUP_NAK_MAX was the first to get one) */
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_NCF_SENT), 2);
	/* d2 still gets multicast NCFs */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + 10, 19, CP_TEST_D2), CP_DROP);
	ck_assert(!env.actions[0].nbr_unreach);
	/* until a regular SPM */
	spm(2);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + 20, 20, CP_TEST_D1), CP_DROP);
	ck_assert(!env.actions[0].nbr_unreach);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.unreach_mask, 0);
}
END_TEST

/* A NAK on a failed subtree's interface without an address of the session's family: no unicast
 * NCF can name the path (OPT_PATH_NLA) or leave from us, so the NAK gets the multicast one (it
 * was an NCF with OPT_NBR_UNREACH and no path, which cannot be encoded: fuzz_cp found it; its
 * input is the seed tests/fuzz/corpus/fuzz_cp/unreach-ncf-no-address). */
START_TEST(test_15_3_1_no_address_multicast_ncf)
{
	struct cp_config cfg;
	struct pgm_nla none = {0};
	const struct cp_action *a;
	uint64_t sent;

	cp_config_default(&cfg);
	cfg.if_defaults.dup_nak_max = 1;
	cfg.if_defaults.ncf_ivl_ms = 0;
	restart(&cfg);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* duplicate 1 = DUP_NAK_MAX */
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_UNREACH_ASSUMED), 1);
	cp_if_set_addr(env.cp, CP_TEST_D1, &none);
	cp_test_clear(&env);
	sent = cp_test_total_ev(&env, CP_C_UNREACH_NCF_SENT);
	ck_assert_int_eq(nak_at(t0 + 10, 18, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 18; NCF d1 18");
	a = &env.actions[1];
	ck_assert(!a->nbr_unreach);
	ck_assert(pgm_nla_equal(&a->ip_dst, &a->nak_grp)); /* to the group */
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_NCF_SENT), sent);
}
END_TEST

/* An interface leaving takes its failure mark with it: the interface that gets its slot next
 * is not taken for a failed subtree (its NAKs get multicast NCFs). */
START_TEST(test_15_3_1_mark_leaves_with_the_interface)
{
	struct cp_config cfg;
	struct cp_session_view v;
	char why[256];

	cp_config_default(&cfg);
	cfg.if_defaults.dup_nak_max = 1;
	cfg.if_defaults.ncf_ivl_ms = 0;
	restart(&cfg);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* DUP_NAK_MAX */
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.unreach_mask, cp_test_mask(CP_TEST_D1));
	/* d1 leaves; the interface without assist until now gets its slot */
	ck_assert_int_eq(cp_if_set_assist(env.cp, CP_TEST_D1, false), 0);
	ck_assert_msg(cp_check(env.cp, why, sizeof(why)), "%s", why);
	ck_assert_int_eq(cp_if_set_assist(env.cp, CP_TEST_NA, true), 0);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + 10, 18, CP_TEST_NA), CP_DROP);
	ck_assert(!env.actions[0].nbr_unreach);
}
END_TEST

START_TEST(test_15_3_1_off_by_default)
{
	struct cp_config cfg;

	cp_config_default(&cfg);
	cfg.if_defaults.ncf_ivl_ms = 0;
	restart(&cfg);
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_ASSUMED), 0);
}
END_TEST

/* ---- 15.3.2 from upstream ---- */

START_TEST(test_15_3_2_ncf_from_upstream_suspends_and_sends_special_spm)
{
	const struct cp_action *a;

	ck_assert_int_eq(unreach_ncf(CP_TEST_UPSTREAM), CP_DROP);
	ck_assert(suspended());
	/* the special SPM on every interface of the TSI */
	ck_assert_str_eq(ACTIONS(), "SPM d1 1 rpt; SPM d2 1 rpt");
	a = &env.actions[0];
	ck_assert(a->nbr_unreach);
	/* the last regular SPM's window, not TRAIL 0 / LEAD 0x80000000 (OpenPGM takes it) */
	ck_assert_uint_eq(a->trail, 10);
	ck_assert_uint_eq(a->lead, 110);
	ck_assert(a->router_alert);
	{
		struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE), grp = cp_test_nla(CP_TEST_GROUP),
			       path = cp_test_nla("198.18.1.1");

		ck_assert(pgm_nla_equal(&a->ip_src, &src));
		ck_assert(pgm_nla_equal(&a->ip_dst, &grp));
		ck_assert(pgm_nla_equal(&a->path, &path));
	}
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_UNREACH_SPM_SENT), 1);
	/* a second one sends no more SPMs */
	cp_test_clear(&env);
	ck_assert_int_eq(unreach_ncf(CP_TEST_UPSTREAM), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	/* NAKs are confirmed but not forwarded, nor repeated */
	ck_assert_int_eq(nak_at(t0, 30, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 30");
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_SUSPENDED), 1);
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "");
	/* a regular SPM ends it */
	spm(2);
	ck_assert(!suspended());
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_MS(300), 31, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 31; NCF d1 31");
}
END_TEST

START_TEST(test_15_3_2_ncf_naming_another_neighbour_ignored)
{
	ck_assert_int_eq(unreach_ncf("198.18.0.99"), CP_DROP);
	ck_assert(!suspended());
	ck_assert_int_eq(unreach_ncf(NULL), CP_DROP);
	ck_assert(!suspended());
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_UNREACH_IGNORED), 2);
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

START_TEST(test_15_3_2_spm_from_parent_forwarded_and_suspends)
{
	struct cp_test_pkt p;
	struct cp_session_view v;

	/* the parent's special SPM: the last regular SQN, no window */
	cp_test_spm(&p, 1, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_ACCEPT);
	ck_assert(suspended());
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(env.res.rewrite.spm_path);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_UNREACH_RECEIVED), 1);
	/* the window we know is kept */
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.spm_sqn, 1);
	ck_assert_int_eq(nak_at(t0, 30, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NAK), 0);
	spm(2);
	ck_assert(!suspended());
}
END_TEST

START_TEST(test_15_3_2_spm_not_from_parent_ignored)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, 1, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	p.pkt.path = cp_test_nla("198.18.0.99");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert(!suspended());
	cp_test_spm(&p, 1, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, CP_TEST_D2), CP_DROP);
	ck_assert(!suspended());
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_IGNORED), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_NOT_UPSTREAM), 1);
}
END_TEST

/* ---- 15.2 NAK_BO_IVL ---- */

START_TEST(test_15_2_1_configured_value_in_ncfs_and_spms)
{
	struct cp_config cfg;
	struct cp_test_pkt p;

	cp_config_default(&cfg);
	cfg.if_defaults.nak_bo_ivl_us = 150000;
	restart(&cfg);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert(env.actions[1].nak_bo_ivl);
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_us, 150000);
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_sqn, 0);
	/* a forwarded SPM carrying the parent's value gets ours */
	cp_test_spm(&p, 5, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NAK_BO_IVL, 0);
	p.pkt.opt.nak_bo_ivl = 999;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(env.res.rewrite.nak_bo_ivl);
	ck_assert_uint_eq(env.res.rewrite.nak_bo_ivl_us, 150000);
}
END_TEST

START_TEST(test_15_2_1_tuning_doubles_and_halves)
{
	struct cp_config cfg;
	struct cp_test_pkt p;

	cp_config_default(&cfg);
	cfg.if_defaults.nak_bo_ivl_us = 100000;
	cfg.if_defaults.nak_probe_num = 2;
	cfg.if_defaults.nak_bo_ivl_min_us = 25000;
	cfg.if_defaults.nak_bo_ivl_max_us = 400000;
	cfg.if_defaults.ncf_ivl_ms = 0;
	restart(&cfg);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* new: probe 1 */
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_us, 100000);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP); /* first duplicate: x2 */
	ck_assert_uint_eq(env.actions[0].nak_bo_ivl_us, 200000);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_BO_IVL_RAISED), 1);
	/* a second duplicate of the same state does not raise it again */
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_BO_IVL_RAISED), 1);
	/* d2 keeps its own value */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 40, CP_TEST_D2), CP_DROP);
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_us, 100000);
	/* the SPM copy on d1 carries the tuned value */
	cp_test_spm(&p, 5, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NAK_BO_IVL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(env.res.rewrite.nak_bo_ivl_us, 200000);
	/* two new states without duplicates: /2 */
	ck_assert_int_eq(nak_at(t0, 18, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 19, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_BO_IVL_LOWERED), 1);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 20, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_us, 100000);
	/* bounded: never above the maximum, nor below the minimum */
	for (uint32_t sqn = 100; sqn < 110; sqn++) {
		ck_assert_int_eq(nak_at(t0, sqn, CP_TEST_D1), CP_DROP);
		ck_assert_int_eq(nak_at(t0, sqn, CP_TEST_D1), CP_DROP);
	}
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 200, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_us, 400000);
	for (uint32_t sqn = 300; sqn < 340; sqn++)
		ck_assert_int_eq(nak_at(t0, sqn, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 400, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_us, 25000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: implosion prevention (15)");
	TCase *tc = tcase_create("unreach");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_15_3_1_dup_nak_max_then_unicast_ncfs);
	tcase_add_test(tc, test_15_3_1_no_address_multicast_ncf);
	tcase_add_test(tc, test_15_3_1_mark_leaves_with_the_interface);
	tcase_add_test(tc, test_15_3_1_off_by_default);
	tcase_add_test(tc, test_15_3_2_ncf_from_upstream_suspends_and_sends_special_spm);
	tcase_add_test(tc, test_15_3_2_ncf_naming_another_neighbour_ignored);
	tcase_add_test(tc, test_15_3_2_spm_from_parent_forwarded_and_suspends);
	tcase_add_test(tc, test_15_3_2_spm_not_from_parent_ignored);
	tcase_add_test(tc, test_15_2_1_configured_value_in_ncfs_and_spms);
	tcase_add_test(tc, test_15_2_1_tuning_doubles_and_halves);
	suite_add_tcase(s, tc);
	return check_run(s);
}

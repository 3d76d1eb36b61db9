/*
 * RFC 3208 7.1 (source path state from SPMs), 15.2.1 (NAK_BO_IVL in forwarded SPMs), session
 * expiry and the session limit.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_util.h"
#include "tests/unit/check_run.h"

static struct cp_test_env env;

static void setup(void)
{
	cp_test_env_init(&env, NULL);
}

static void teardown(void)
{
	cp_test_env_free(&env);
}

static void setup_with(const struct cp_config *cfg)
{
	cp_test_env_free(&env);
	cp_test_env_init(&env, cfg);
}

static enum cp_verdict spm(uint32_t sqn, int in, int out)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, sqn, 0, 0x80000000u);
	return cp_test_send(&env, &p, in, out);
}

START_TEST(test_7_1_spm_creates_source_path_state)
{
	struct cp_test_pkt p;
	struct cp_session_view v;
	struct pgm_nla d1 = cp_test_nla("198.18.1.1");

	cp_test_spm(&p, 10, 5, 20);
	p.ip.ttl = 17;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(env.res.rewrite.spm_path);
	ck_assert(pgm_nla_equal(&env.res.rewrite.path, &d1));
	ck_assert(!env.res.rewrite.nak_bo_ivl);
	ck_assert_uint_eq(env.res.rewrite.opt_invalid_mask, 0);

	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.tsi.sport, CP_TEST_SPORT);
	ck_assert_uint_eq(v.data_dport, CP_TEST_DPORT);
	ck_assert(pgm_nla_equal(&v.source, &p.ip.src));
	ck_assert(pgm_nla_equal(&v.group, &p.ip.dst));
	ck_assert(pgm_nla_equal(&v.upstream, &p.pkt.path));
	ck_assert_int_eq(v.upstream_ifindex, CP_TEST_UP);
	ck_assert_uint_eq(v.spm_sqn, 10);
	ck_assert_uint_eq(v.trail, 5);
	ck_assert_uint_eq(v.lead, 20);
	ck_assert_uint_eq(v.last_ttl, 17);
	ck_assert(!v.udp);
	ck_assert_uint_eq(v.created, env.now);
	ck_assert_uint_eq(v.last_spm, env.now);
	ck_assert_uint_eq(v.expires, env.now + CP_SEC(300));
	ck_assert_uint_eq(v.repair_states, 0);

	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SESSIONS_CREATED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPM_FORWARDED), 1);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_D1, PGM_SPM), 1);
	ck_assert_uint_eq(cp_test_if_in(&env, CP_TEST_UP, PGM_SPM), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_SPM_FORWARDED), 1);
	ck_assert(cp_test_logged(&env, "tsi 0a0b0c0d0e0f.1234: created by SPM 10, upstream "
				       "198.18.0.100 on up"));
	ck_assert_uint_eq(env.nactions, 0);
}
END_TEST

START_TEST(test_7_1_every_copy_gets_its_egress_path)
{
	static const int outs[] = {CP_TEST_D1, CP_TEST_D2, CP_TEST_D3};
	static const char *const addrs[] = {"198.18.1.1", "198.18.2.1", "198.18.3.1"};
	struct cp_session_view v;

	for (int i = 0; i < 3; i++) {
		struct pgm_nla want = cp_test_nla(addrs[i]);

		ck_assert_int_eq(spm(10, CP_TEST_UP, outs[i]), CP_ACCEPT_REWRITTEN);
		ck_assert(env.res.rewrite.spm_path);
		ck_assert(pgm_nla_equal(&env.res.rewrite.path, &want));
	}
	/* the state was updated once */
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SESSIONS_CREATED), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_UPSTREAM_CHANGED), 0);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.spm_sqn, 10);
	/* a second copy for an egress and SQN that already had one is a duplicate */
	ck_assert_int_eq(spm(10, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_DUPLICATE_COPY), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_FORWARDED), 1);
	/* the next SPM goes everywhere again */
	ck_assert_int_eq(spm(11, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(spm(11, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_FORWARDED), 2);
}
END_TEST

START_TEST(test_7_1_out_of_sequence_spm_dropped)
{
	struct cp_session_view v;

	ck_assert_int_eq(spm(100, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(spm(99, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(spm(50, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_BAD_SQN), 2);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_SPM_BAD_SQN), 2);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.spm_sqn, 100);
	ck_assert_int_eq(spm(101, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.spm_sqn, 101);
}
END_TEST

START_TEST(test_7_1_spm_sqn_wraps_around)
{
	struct cp_session_view v;

	ck_assert_int_eq(spm(0xfffffffeu, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(spm(0xffffffffu, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(spm(0, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(spm(1, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(spm(0xffffffffu, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.spm_sqn, 1);
	/* exactly half the space ahead is not "within half": out of sequence */
	ck_assert_int_eq(spm(1 + 0x80000000u, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	/* one less is in sequence, but a jump no lost SPMs explain: taken after a silence */
	ck_assert_int_eq(spm(0x80000000u, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_SQN_JUMP), 1);
	env.now += CP_SEC(CP_SPM_SILENCE_S);
	ck_assert_int_eq(spm(0x80000000u, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.spm_sqn, 0x80000000u);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_BAD_SQN), 2);
}
END_TEST

START_TEST(test_7_1_path_change_moves_upstream)
{
	struct cp_test_pkt p;
	struct cp_session_view v;

	ck_assert_int_eq(spm(1, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	/* the same SQN by another interface is not in sequence */
	ck_assert_int_eq(spm(1, CP_TEST_D2, CP_TEST_D1), CP_DROP);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_int_eq(v.upstream_ifindex, CP_TEST_UP);

	/* an in-sequence SPM by another interface, where the route now comes in, moves the
	   upstream */
	env.rpf_ifindex = CP_TEST_D2;
	cp_test_spm(&p, 2, 0, 0x80000000u);
	p.pkt.path = cp_test_nla("198.18.2.200");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_int_eq(v.upstream_ifindex, CP_TEST_D2);
	ck_assert(pgm_nla_equal(&v.upstream, &p.pkt.path));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_UPSTREAM_CHANGED), 1);
	ck_assert(cp_test_logged(&env, "SPM 2 moves upstream 198.18.0.100 on up -> "
				       "198.18.2.200 on d2"));
	/* a new neighbour on the same interface is a change too */
	cp_test_spm(&p, 3, 0, 0x80000000u);
	p.pkt.path = cp_test_nla("198.18.2.201");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_UPSTREAM_CHANGED), 2);
	/* an unchanged one is not */
	cp_test_spm(&p, 4, 0, 0x80000000u);
	p.pkt.path = cp_test_nla("198.18.2.201");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_UPSTREAM_CHANGED), 2);
}
END_TEST

START_TEST(test_15_2_1_nak_bo_ivl_overwritten)
{
	struct cp_if_config cfg;
	struct cp_test_pkt p;

	cp_if_config_default(&cfg);
	cfg.nak_bo_ivl_us = 250000;
	cp_if_set_config(env.cp, CP_TEST_D1, &cfg);

	cp_test_spm(&p, 1, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NAK_BO_IVL, 0);
	p.pkt.opt.nak_bo_ivl = 50000;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(env.res.rewrite.nak_bo_ivl);
	ck_assert_uint_eq(env.res.rewrite.nak_bo_ivl_us, 250000);
	ck_assert_uint_eq(env.res.rewrite.nak_bo_ivl_sqn, 0);
	ck_assert(!env.res.rewrite.nak_bo_ivl_remove);
	/* d2 has no NAK_BO_IVL of its own: the parent's value must not pass, the option goes */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	ck_assert(!env.res.rewrite.nak_bo_ivl);
	ck_assert(env.res.rewrite.nak_bo_ivl_remove);
	/* an SPM without the option gets none added, and nothing removed */
	cp_test_spm(&p, 2, 0, 0x80000000u);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(!env.res.rewrite.nak_bo_ivl);
	ck_assert(!env.res.rewrite.nak_bo_ivl_remove);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	ck_assert(!env.res.rewrite.nak_bo_ivl_remove);
	/* back to the defaults: removed (15.2.1 is a MUST, configured or not) */
	cp_if_set_config(env.cp, CP_TEST_D1, NULL);
	cp_test_spm(&p, 3, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NAK_BO_IVL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(!env.res.rewrite.nak_bo_ivl);
	ck_assert(env.res.rewrite.nak_bo_ivl_remove);
}
END_TEST

START_TEST(test_7_1_copy_without_assist_passes_unchanged)
{
	struct cp_session_view v;

	/* the first copy the core sees leaves by an interface without assist */
	ck_assert_int_eq(spm(7, CP_TEST_UP, CP_TEST_NA), CP_ACCEPT);
	ck_assert(!env.res.rewrite.spm_path);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.spm_sqn, 7);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_NA, CP_C_COPY_NOT_ASSISTED), 1);
	/* the other copies of the same SPM are still forwarded with their paths */
	ck_assert_int_eq(spm(7, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	/* an interface the core does not know */
	ck_assert_int_eq(spm(7, CP_TEST_UP, CP_TEST_XX), CP_ACCEPT);
	/* even an old SPM is not ours to judge there */
	ck_assert_int_eq(spm(3, CP_TEST_UP, CP_TEST_NA), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_BAD_SQN), 0);
}
END_TEST

START_TEST(test_7_1_egress_without_address)
{
	struct pgm_nla none;
	struct pgm_nla v6 = cp_test_nla("2001:db8::1");

	memset(&none, 0, sizeof(none));
	cp_if_set_addr(env.cp, CP_TEST_D1, &none);
	ck_assert_int_eq(spm(1, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert(!env.res.rewrite.spm_path);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPM_NO_ADDRESS), 1);
	/* an address of another family than the group's cannot be the path either */
	cp_if_set_addr(env.cp, CP_TEST_D1, &v6);
	ck_assert_int_eq(spm(2, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPM_NO_ADDRESS), 2);
	cp_if_set_addr(env.cp, CP_TEST_D1, NULL);
	ck_assert_int_eq(spm(3, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPM_NO_ADDRESS), 3);
}
END_TEST

START_TEST(test_7_1_udp_encapsulation_and_parity_recorded)
{
	struct cp_test_pkt p;
	struct cp_session_view v;

	cp_test_spm(&p, 1, 0, 0x80000000u);
	p.ip.udp = true;
	p.ip.udp_sport = 3056;
	p.ip.udp_dport = 3056;
	cp_test_add_option(&p, PGM_OPT_PARITY_PRM, 0);
	p.pkt.opt.parity_tgs = 16;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(cp_test_session(&env, &v));
	ck_assert(v.udp);
	ck_assert_uint_eq(v.parity_tgs, 16);
	/* a later SPM over IP clears it */
	ck_assert_int_eq(spm(2, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(cp_test_session(&env, &v));
	ck_assert(!v.udp);
	ck_assert_uint_eq(v.parity_tgs, 16);
}
END_TEST

START_TEST(test_7_1_spm_seen_once)
{
	struct cp_session_view v;

	ck_assert_int_eq(spm(1, CP_TEST_UP, 0), CP_ACCEPT);
	ck_assert(!env.res.rewrite.spm_path);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_int_eq(spm(1, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_DUPLICATE_COPY), 1);
	ck_assert_int_eq(spm(2, CP_TEST_UP, 0), CP_ACCEPT);
}
END_TEST

START_TEST(test_7_1_nbr_unreach_spm_is_forwarded)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, 1, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(env.res.rewrite.spm_path); /* forwarded in the normal way (test_cp_unreach) */
}
END_TEST

START_TEST(test_session_limit)
{
	struct cp_config cfg;
	struct cp_test_pkt p;
	struct cp_stats st;

	cp_config_default(&cfg);
	cfg.max_sessions = 2;
	setup_with(&cfg);
	for (unsigned i = 0; i < 5; i++) {
		cp_test_spm(&p, 1, 0, 0x80000000u);
		p.pkt.sport = (uint16_t)(100 + i);
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1),
			i < 2 ? CP_ACCEPT_REWRITTEN : CP_ACCEPT);
	}
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.sessions, 2);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SESSION_LIMIT), 3);
	/* the known ones keep working */
	cp_test_spm(&p, 2, 0, 0x80000000u);
	p.pkt.sport = 101;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
}
END_TEST

START_TEST(test_session_expiry)
{
	struct cp_config cfg;
	struct cp_test_pkt p;
	cp_time_t t0;

	/* repair states that outlive the session's last SPM */
	cp_config_default(&cfg);
	cfg.if_defaults.nak_rdata_ivl_ms = 1000 * 1000;
	setup_with(&cfg);
	t0 = env.now;
	ck_assert_int_eq(spm(1, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	env.now = t0 + CP_SEC(1);
	cp_test_nak(&p, PGM_NAK, 5, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	cp_test_nak(&p, PGM_NCF, 5, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 1);
	/* refreshed at t0 + 200 s; the first deadline (t0 + 300 s) re-arms */
	env.now = t0 + CP_SEC(200);
	ck_assert_int_eq(spm(2, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	cp_test_timers(&env, t0 + CP_SEC(300));
	ck_assert(cp_test_session(&env, NULL));
	/* one microsecond before expiry it lives, at expiry it goes with its repair state */
	cp_test_timers(&env, t0 + CP_SEC(500) - 1);
	ck_assert(cp_test_session(&env, NULL));
	ck_assert_uint_eq(cp_test_repair_count(&env), 1);
	ck_assert_uint_le(cp_next_deadline(env.cp), t0 + CP_SEC(500));
	cp_test_timers(&env, t0 + CP_SEC(500));
	ck_assert(!cp_test_session(&env, NULL));
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_SESSIONS_EXPIRED), 1);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_next_deadline(env.cp), UINT64_MAX);
	ck_assert(cp_test_logged(&env, "tsi 0a0b0c0d0e0f.1234: deleted (sessions-expired), 1 "
				       "repair states with it"));
	/* a NAK for it now finds nothing */
	cp_test_nak(&p, PGM_NAK, 5, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_NO_SESSION), 1);
	/* the next SPM of the TSI starts a new session: the deleted one is not found again */
	ck_assert_int_eq(spm(3, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(cp_test_session(&env, NULL));
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SESSIONS_CREATED), 2);
}
END_TEST

START_TEST(test_session_lifetime_zero_and_change)
{
	struct cp_config cfg;
	struct cp_session_view v;
	cp_time_t t0 = env.now;

	cp_config_default(&cfg);
	cfg.session_lifetime_s = 0;
	cp_set_config(env.cp, &cfg);
	ck_assert_int_eq(spm(1, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(cp_test_session(&env, &v));
	ck_assert_uint_eq(v.expires, 0);
	cp_test_timers(&env, t0 + CP_SEC(100000));
	ck_assert(cp_test_session(&env, NULL));
	/* a lifetime set later applies to existing sessions */
	cfg.session_lifetime_s = 10;
	cp_set_config(env.cp, &cfg);
	ck_assert_ptr_eq(cp_get_config(env.cp), cp_get_config(env.cp));
	ck_assert_uint_eq(cp_get_config(env.cp)->session_lifetime_s, 10);
	cp_test_timers(&env, t0 + CP_SEC(100000) + 1);
	ck_assert(!cp_test_session(&env, NULL));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: SPM (7.1)");
	TCase *tc = tcase_create("spm");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_7_1_spm_creates_source_path_state);
	tcase_add_test(tc, test_7_1_every_copy_gets_its_egress_path);
	tcase_add_test(tc, test_7_1_out_of_sequence_spm_dropped);
	tcase_add_test(tc, test_7_1_spm_sqn_wraps_around);
	tcase_add_test(tc, test_7_1_path_change_moves_upstream);
	tcase_add_test(tc, test_15_2_1_nak_bo_ivl_overwritten);
	tcase_add_test(tc, test_7_1_copy_without_assist_passes_unchanged);
	tcase_add_test(tc, test_7_1_egress_without_address);
	tcase_add_test(tc, test_7_1_udp_encapsulation_and_parity_recorded);
	tcase_add_test(tc, test_7_1_spm_seen_once);
	tcase_add_test(tc, test_7_1_nbr_unreach_spm_is_forwarded);
	tcase_add_test(tc, test_session_limit);
	tcase_add_test(tc, test_session_expiry);
	tcase_add_test(tc, test_session_lifetime_zero_and_change);
	suite_add_tcase(s, tc);
	return check_run(s);
}

/*
 * Session identity and trust per message type (RFC 3208 7.1, 10, 15.3): a session's source,
 * group and upstream interface are pinned; SPMs from elsewhere, too far ahead or naming an
 * unusable path are refused; NCFs with OPT_NBR_UNREACH only from the upstream neighbour;
 * anticipated state only inside the window and for the session's NAK_SRC/NAK_GRP; redirecting
 * POLRs only from upstream and naming usable DLRs. Each refusal has its counter.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

#define ATTACKER "198.18.2.66"

static void setup(void)
{
	t0 = cp_test_start(&env, NULL, 0);
}

/* An SPM of the test session (its TSI) at now, from `src` to `grp` with path `path`. */
static enum cp_verdict spm_from(
	uint32_t sqn, const char *src, const char *grp, const char *path, int in, int out)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, sqn, 0, 0x80000000u);
	p.ip.src = cp_test_nla(src);
	p.ip.dst = cp_test_nla(grp);
	p.pkt.path = cp_test_nla(path);
	return cp_test_send(&env, &p, in, out);
}

static enum cp_verdict spm(uint32_t sqn, int in)
{
	return spm_from(sqn, CP_TEST_SOURCE, CP_TEST_GROUP, CP_TEST_UPSTREAM, in, CP_TEST_D1);
}

/* The real source's session is where it was: source, group, upstream and SQN. */
static void assert_pinned(uint32_t sqn)
{
	struct cp_session_view v = cp_test_session_view(&env);
	struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE), grp = cp_test_nla(CP_TEST_GROUP);
	struct pgm_nla up = cp_test_nla(CP_TEST_UPSTREAM);

	ck_assert(pgm_nla_equal(&v.source, &src));
	ck_assert(pgm_nla_equal(&v.group, &grp));
	ck_assert(pgm_nla_equal(&v.upstream, &up));
	ck_assert_int_eq(v.upstream_ifindex, CP_TEST_UP);
	ck_assert_uint_eq(v.spm_sqn, sqn);
}

/* The real source's next SPM is forwarded and a receiver's NAK is confirmed and goes upstream. */
static void assert_source_still_served(uint32_t next_sqn, uint32_t nak_sqn)
{
	char want[64];

	ck_assert_int_eq(spm(next_sqn, CP_TEST_UP), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_BAD_SQN), 0);
	assert_pinned(next_sqn);
	cp_test_clear(&env);
	ck_assert_int_eq(cp_test_nak_at(&env, env.now, PGM_NAK, nak_sqn, NULL, 0, CP_TEST_D1),
		CP_DROP);
	snprintf(want, sizeof(want), "NAK up %u; NCF d1 %u", nak_sqn, nak_sqn);
	ck_assert_str_eq(ACTIONS(), want);
	{
		struct pgm_nla up = cp_test_nla(CP_TEST_UPSTREAM);

		ck_assert(pgm_nla_equal(&env.actions[0].ip_dst, &up));
	}
}

/* ---- 7.1, 16: SPMs ---- */

/* The hijack: the victim's TSI in an SPM to another group from another interface. */
START_TEST(test_7_1_hijack_from_other_group_refused)
{
	env.rpf_ifindex = CP_TEST_D2; /* the attacker's multicast is routed from its interface */
	ck_assert_int_eq(spm_from(1000, ATTACKER, "239.192.0.99", ATTACKER, CP_TEST_D2, CP_TEST_D1),
		CP_DROP);
	ck_assert_int_eq(spm_from(1001, ATTACKER, "239.192.0.99", ATTACKER, CP_TEST_D2, 0),
		CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_FOREIGN), 2);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_UPSTREAM_CHANGED), 0);
	assert_pinned(1);
	env.rpf_ifindex = CP_TEST_UP;
	assert_source_still_served(2, 5);
}
END_TEST

/* Another source address on the session's own group and interface is not the session either. */
START_TEST(test_7_1_other_source_refused)
{
	ck_assert_int_eq(spm_from(1000, "198.18.0.66", CP_TEST_GROUP, "198.18.0.66", CP_TEST_UP,
				 CP_TEST_D1),
		CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_FOREIGN), 1);
	assert_pinned(1);
	assert_source_still_served(2, 6);
}
END_TEST

/* The source's own address and group spoofed from another interface: not the route's. */
START_TEST(test_7_1_spoofed_source_off_rpf_refused)
{
	env.rpf_ifindex = CP_TEST_UP;
	ck_assert_int_eq(spm_from(1000, CP_TEST_SOURCE, CP_TEST_GROUP, ATTACKER, CP_TEST_D2,
				 CP_TEST_D1),
		CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_NOT_RPF), 1);
	assert_pinned(1);
	/* without route information the same: the session is not silent */
	env.rpf_ifindex = 0;
	env.now += CP_SEC(1);
	ck_assert_int_eq(spm_from(1001, CP_TEST_SOURCE, CP_TEST_GROUP, ATTACKER, CP_TEST_D2,
				 CP_TEST_D1),
		CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_NOT_RPF), 2);
	assert_pinned(1);
	assert_source_still_served(2, 7);
}
END_TEST

/* A route change: the route's incoming interface moved, and the session follows it. */
START_TEST(test_7_1_route_change_followed)
{
	struct cp_session_view v;

	env.rpf_ifindex = CP_TEST_D2;
	ck_assert_int_eq(spm_from(2, CP_TEST_SOURCE, CP_TEST_GROUP, "198.18.2.200", CP_TEST_D2,
				 CP_TEST_D1),
		CP_ACCEPT_REWRITTEN);
	v = cp_test_session_view(&env);
	ck_assert_int_eq(v.upstream_ifindex, CP_TEST_D2);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_UPSTREAM_CHANGED), 1);
	/* the old path is now the wrong one */
	ck_assert_int_eq(spm(3, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_NOT_RPF), 1);
	ck_assert_int_eq(cp_test_session_view(&env).upstream_ifindex, CP_TEST_D2);
	/* a new neighbour on the upstream interface is a path change from the right place */
	ck_assert_int_eq(spm_from(3, CP_TEST_SOURCE, CP_TEST_GROUP, "198.18.2.201", CP_TEST_D2,
				 CP_TEST_D1),
		CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_UPSTREAM_CHANGED), 2);
}
END_TEST

/* Without route information the interface moves once the session's SPMs fell silent. */
START_TEST(test_7_1_move_after_silence_without_route)
{
	env.now = t0 + CP_SEC(CP_SPM_SILENCE_S) - 1;
	ck_assert_int_eq(spm_from(2, CP_TEST_SOURCE, CP_TEST_GROUP, "198.18.2.200", CP_TEST_D2,
				 CP_TEST_D1),
		CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_SPM_NOT_RPF), 1);
	env.now = t0 + CP_SEC(CP_SPM_SILENCE_S);
	ck_assert_int_eq(spm_from(3, CP_TEST_SOURCE, CP_TEST_GROUP, "198.18.2.200", CP_TEST_D2,
				 CP_TEST_D1),
		CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(cp_test_session_view(&env).upstream_ifindex, CP_TEST_D2);
}
END_TEST

START_TEST(test_7_1_spm_sqn_jump_bounded)
{
	ck_assert_int_eq(spm(1 + CP_SPM_SQN_JUMP_MAX + 1, CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_SQN_JUMP), 1);
	assert_pinned(1);
	/* the source's next SPMs are still in sequence */
	ck_assert_int_eq(spm(2, CP_TEST_UP), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_BAD_SQN), 0);
	/* up to the bound is a gap of lost SPMs */
	ck_assert_int_eq(spm(2 + CP_SPM_SQN_JUMP_MAX, CP_TEST_UP), CP_ACCEPT_REWRITTEN);
	assert_pinned(2 + CP_SPM_SQN_JUMP_MAX);
	/* a source restarted with the same TSI and another SQN gets it after a silence */
	env.now += CP_SEC(CP_SPM_SILENCE_S);
	ck_assert_int_eq(spm(0x70000000u, CP_TEST_UP), CP_ACCEPT_REWRITTEN);
	assert_pinned(0x70000000u);
}
END_TEST

/* NAKs go where the SPM says: never somewhere that cannot be a PGM neighbour. */
START_TEST(test_7_1_bad_path_nla_refused)
{
	static const char *const bad[] = {"239.192.0.1", "224.0.0.1", "127.0.0.1", "127.1.2.3",
		"0.0.0.0", "255.255.255.255", "198.18.0.1", "198.18.1.1", "::1", "::", "ff02::1"};
	struct cp_test_pkt p;
	uint32_t sqn = 2;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(spm_from(sqn++, CP_TEST_SOURCE, CP_TEST_GROUP, bad[i], CP_TEST_UP,
				      CP_TEST_D1) == CP_DROP,
			"path %s accepted", bad[i]);
		assert_pinned(1);
	}
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_BAD_PATH),
		sizeof(bad) / sizeof(bad[0]));
	/* nor does it create a session */
	cp_test_spm(&p, 1, 0, 0x80000000u);
	p.pkt.sport = 4321;
	p.pkt.path = cp_test_nla("127.0.0.1");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SESSIONS_CREATED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPM_BAD_PATH),
		sizeof(bad) / sizeof(bad[0]) + 1);
	assert_source_still_served(sqn, 8);
}
END_TEST

/* ---- 15.3: OPT_NBR_UNREACH only from the upstream neighbour on the upstream interface ---- */

static enum cp_verdict unreach_ncf(const char *src, int in)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NCF, 17, NULL, 0);
	p.ip.src = cp_test_nla(src);
	p.ip.dst = cp_test_nla("198.18.0.1");
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	cp_test_add_option(&p, PGM_OPT_PATH_NLA, 0);
	p.pkt.opt.path_nla = cp_test_nla(CP_TEST_UPSTREAM);
	return cp_test_send(&env, &p, in, 0);
}

START_TEST(test_15_3_nbr_unreach_from_downstream_ignored)
{
	/* a receiver naming our upstream neighbour, from below */
	ck_assert_int_eq(unreach_ncf("198.18.1.50", CP_TEST_D1), CP_DROP);
	/* the neighbour's address, spoofed from below */
	ck_assert_int_eq(unreach_ncf(CP_TEST_UPSTREAM, CP_TEST_D1), CP_DROP);
	/* another host on the upstream link */
	ck_assert_int_eq(unreach_ncf("198.18.0.66", CP_TEST_UP), CP_DROP);
	ck_assert(!cp_test_session_view(&env).naks_suspended);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_RECEIVED), 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_UNREACH_NOT_UPSTREAM), 3);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_UNREACH_NOT_UPSTREAM), 2);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_SPM), 0);
	/* NAKs are still forwarded */
	ck_assert_int_eq(cp_test_nak_at(&env, env.now, PGM_NAK, 9, NULL, 0, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 9; NCF d1 9");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_SUSPENDED), 0);
	/* the neighbour itself is heard */
	ck_assert_int_eq(unreach_ncf(CP_TEST_UPSTREAM, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_session_view(&env).naks_suspended);
}
END_TEST

/* A special SPM from another source or interface does not suspend NAKs either. */
START_TEST(test_15_3_nbr_unreach_spm_not_from_parent_ignored)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, 1, 0, 0x80000000u);
	p.ip.src = cp_test_nla("198.18.0.66");
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_UNREACH_NOT_UPSTREAM), 1);
	cp_test_spm(&p, 1, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_UNREACH_NOT_UPSTREAM), 1);
	ck_assert(!cp_test_session_view(&env).naks_suspended);
}
END_TEST

/* ---- 7.5, 10: anticipated state only in the window and for the session's addresses ---- */

static enum cp_verdict ncf(uint32_t sqn, const char *nak_src, const char *nak_grp)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NCF, sqn, NULL, 0);
	p.pkt.nak_src = cp_test_nla(nak_src);
	p.pkt.nak_grp = cp_test_nla(nak_grp);
	return cp_test_send(&env, &p, CP_TEST_UP, 0);
}

START_TEST(test_7_5_ncf_outside_window_creates_no_state)
{
	struct cp_test_pkt p;
	struct cp_repair_view r;

	cp_test_spm(&p, 2, 1000, 2000);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(ncf(999, CP_TEST_SOURCE, CP_TEST_GROUP), CP_DROP);
	ck_assert_int_eq(ncf(2000 + (1u << 24) + 1, CP_TEST_SOURCE, CP_TEST_GROUP), CP_DROP);
	ck_assert_int_eq(ncf(0x90000000u, CP_TEST_SOURCE, CP_TEST_GROUP), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_OUT_OF_WINDOW), 3);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NCF_ANTICIPATED), 0);
	/* a list: only the SQNs inside make state */
	{
		static const uint32_t list[] = {1500, 5, 2001};

		cp_test_nak(&p, PGM_NCF, 1000, list, 3);
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	}
	ck_assert_uint_eq(cp_test_repair_count(&env), 3);
	ck_assert(cp_test_repair(&env, 1000, &r) && r.anticipated);
	ck_assert(cp_test_repair(&env, 2001, &r)); /* SPMs lag the data: lenient at the lead */
	ck_assert(!cp_test_repair(&env, 5, &r));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_OUT_OF_WINDOW), 4);
	/* state a NAK made is still confirmed, wherever the window went since */
	ck_assert_int_eq(cp_test_nak_at(&env, env.now, PGM_NAK, 1200, NULL, 0, CP_TEST_D1),
		CP_DROP);
	cp_test_spm(&p, 3, 1300, 2300);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(ncf(1200, CP_TEST_SOURCE, CP_TEST_GROUP), CP_DROP);
	ck_assert(cp_test_repair(&env, 1200, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NCF_CONFIRMED), 1);
}
END_TEST

START_TEST(test_7_5_ncf_for_other_addresses_creates_no_state)
{
	struct cp_repair_view r;

	ck_assert_int_eq(ncf(10, CP_TEST_SOURCE, "239.192.0.99"), CP_DROP);
	ck_assert_int_eq(ncf(11, "198.18.0.66", CP_TEST_GROUP), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_ADDRESS_MISMATCH), 2);
	/* the source's, and the upstream router's (NCFs made from OpenPGM receivers' NAKs) */
	ck_assert_int_eq(ncf(12, CP_TEST_SOURCE, CP_TEST_GROUP), CP_DROP);
	ck_assert_int_eq(ncf(13, CP_TEST_UPSTREAM, CP_TEST_GROUP), CP_DROP);
	ck_assert(cp_test_repair(&env, 12, &r) && r.anticipated);
	ck_assert(cp_test_repair(&env, 13, &r) && r.anticipated);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_ADDRESS_MISMATCH), 2);
}
END_TEST

/* ---- 9.5.3: redirecting POLRs only from upstream, naming a usable DLR ---- */

static enum cp_verdict polr(const char *src, const char *dlr, int in)
{
	struct cp_test_pkt p;

	cp_test_simple(&p, PGM_POLR, 1);
	p.ip.src = cp_test_nla(src);
	p.ip.dst = cp_test_nla(CP_TEST_GROUP);
	p.ip.router_alert = true;
	cp_test_add_option(&p, PGM_OPT_REDIRECT, 0);
	p.pkt.opt.redirect = cp_test_nla(dlr);
	return cp_test_send(&env, &p, in, 0);
}

START_TEST(test_9_5_redirecting_polr_only_from_upstream)
{
	ck_assert_int_eq(polr(CP_TEST_SOURCE, "198.18.1.77", CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(polr("198.18.0.66", "198.18.0.77", CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_session_view(&env).dlr_upstream.afi, 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_UPSTREAM_LEARNED), 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_NOT_UPSTREAM), 2);
	ck_assert_int_eq(polr(CP_TEST_SOURCE, "198.18.0.77", CP_TEST_UP), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_UPSTREAM_LEARNED), 1);
}
END_TEST

START_TEST(test_9_5_dlr_address_must_take_naks)
{
	static const char *const bad[] = {"239.192.0.1", "127.0.0.1", "0.0.0.0",
		"255.255.255.255", "198.18.1.1", "::1", "ff02::1"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(polr(CP_TEST_SOURCE, bad[i], CP_TEST_UP), CP_DROP);
		ck_assert_msg(cp_test_session_view(&env).dlr_upstream.afi == 0, "DLR %s learned",
			bad[i]);
	}
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_DLR_BAD_ADDRESS),
		sizeof(bad) / sizeof(bad[0]));
	/* NAKs still go to the SPM's neighbour */
	ck_assert_int_eq(cp_test_nak_at(&env, env.now, PGM_NAK, 9, NULL, 0, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 9; NCF d1 9");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: session identity and trust (7.1, 10, 15.3)");
	TCase *tc = tcase_create("trust");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_7_1_hijack_from_other_group_refused);
	tcase_add_test(tc, test_7_1_other_source_refused);
	tcase_add_test(tc, test_7_1_spoofed_source_off_rpf_refused);
	tcase_add_test(tc, test_7_1_route_change_followed);
	tcase_add_test(tc, test_7_1_move_after_silence_without_route);
	tcase_add_test(tc, test_7_1_spm_sqn_jump_bounded);
	tcase_add_test(tc, test_7_1_bad_path_nla_refused);
	tcase_add_test(tc, test_15_3_nbr_unreach_from_downstream_ignored);
	tcase_add_test(tc, test_15_3_nbr_unreach_spm_not_from_parent_ignored);
	tcase_add_test(tc, test_7_5_ncf_outside_window_creates_no_state);
	tcase_add_test(tc, test_7_5_ncf_for_other_addresses_creates_no_state);
	tcase_add_test(tc, test_9_5_redirecting_polr_only_from_upstream);
	tcase_add_test(tc, test_9_5_dlr_address_must_take_naks);
	suite_add_tcase(s, tc);
	return check_run(s);
}

/*
 * The control plane over IPv6 (RFC 3208 8: NLAs of AFI 2): a session is keyed by its TSI and
 * its datagrams' family, so an IPv4 and an IPv6 session with the same GSI and port are two
 * sessions with their own repair states; the interface's IPv6 address names the router in
 * SPM_PATH, global before link-local.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"
#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

#define SOURCE6	  "2001:db8::10"
#define GROUP6	  "ff3e::8000:1"
#define UPSTREAM6 "2001:db8::100"
#define ROUTER6	  "2001:db8:1::1" /* the router on d1 */
#define NAKER6	  "2001:db8:1::50"

static void setup(void)
{
	struct pgm_nla up6 = cp_test_nla("2001:db8::1"), up_ll = cp_test_nla("fe80::1");
	struct pgm_nla d1 = cp_test_nla(ROUTER6), d1_ll = cp_test_nla("fe80::2");

	t0 = cp_test_start(&env, NULL, 0); /* the IPv4 session of the test TSI */
	cp_if_set_addr6(env.cp, CP_TEST_UP, &up6, &up_ll);
	cp_if_set_addr6(env.cp, CP_TEST_D1, &d1, &d1_ll);
}

/* The test packets, as IPv6 datagrams of the same TSI. */
static void as_ipv6(struct cp_test_pkt *p, const char *src, const char *dst)
{
	p->ip.version = 6;
	p->ip.src = cp_test_nla(src);
	p->ip.dst = cp_test_nla(dst);
}

static enum cp_verdict spm6(uint32_t sqn)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, sqn, 0, 0x80000000u);
	as_ipv6(&p, SOURCE6, GROUP6);
	p.pkt.path = cp_test_nla(UPSTREAM6);
	return cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1);
}

static enum cp_verdict nak6(uint32_t sqn)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, sqn, NULL, 0);
	as_ipv6(&p, NAKER6, ROUTER6);
	p.pkt.nak_src = cp_test_nla(SOURCE6);
	p.pkt.nak_grp = cp_test_nla(GROUP6);
	return cp_test_send(&env, &p, CP_TEST_D1, 0);
}

struct sessions {
	unsigned n, ip, ip6;
	struct pgm_nla source4, source6;
};

static void count_session(void *ctx, const struct cp_session_view *v)
{
	struct sessions *s = ctx;

	s->n++;
	s->ip += v->afi == PGM_AFI_IP;
	s->ip6 += v->afi == PGM_AFI_IP6;
	if (v->afi == PGM_AFI_IP6)
		s->source6 = v->source;
	else
		s->source4 = v->source;
}

static void count_repair(void *ctx, const struct cp_repair_view *v)
{
	(void)v;
	(*(unsigned *)ctx)++;
}

START_TEST(test_8_ipv4_and_ipv6_sessions_of_one_tsi_are_two)
{
	struct pgm_nla source4 = cp_test_nla(CP_TEST_SOURCE), source6 = cp_test_nla(SOURCE6);
	struct pgm_nla router6 = cp_test_nla(ROUTER6), group6 = cp_test_nla(GROUP6);
	struct pgm_nla upstream6 = cp_test_nla(UPSTREAM6);
	struct pgm_tsi tsi = cp_test_session_view(&env).tsi;
	struct sessions seen = {0};
	struct cp_session_key *keys;
	unsigned r4 = 0, r6 = 0;
	struct cp_stats st;
	size_t n;

	env.now = t0 + CP_MS(10);
	ck_assert_int_eq(spm6(1), CP_ACCEPT_REWRITTEN);
	/* SPM_PATH of the copy on d1: the router's global IPv6 address there */
	ck_assert(env.res.rewrite.spm_path);
	ck_assert(pgm_nla_equal(&env.res.rewrite.path, &router6));
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.sessions, 2);
	cp_foreach_session(env.cp, NULL, count_session, &seen);
	ck_assert_uint_eq(seen.n, 2);
	ck_assert_uint_eq(seen.ip, 1);
	ck_assert_uint_eq(seen.ip6, 1);
	ck_assert(pgm_nla_equal(&seen.source6, &source6));
	/* the IPv4 session is untouched: its source is still the IPv4 one */
	ck_assert(pgm_nla_equal(&seen.source4, &source4));
	keys = cp_session_keys(env.cp, NULL, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert(pgm_tsi_equal(&keys[0].tsi, &keys[1].tsi));
	ck_assert_uint_ne(keys[0].afi, keys[1].afi);
	free(keys);

	/* 7.2, 7.3: an IPv6 NAK makes a repair state of the IPv6 session only, an NCF from the
	   IPv6 source and a NAK to the IPv6 upstream neighbour */
	cp_test_clear(&env);
	ck_assert_int_eq(nak6(17), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d1 17");
	ck_assert(pgm_nla_equal(&env.actions[1].ip_src, &source6));
	ck_assert(pgm_nla_equal(&env.actions[1].ip_dst, &group6));
	ck_assert(pgm_nla_equal(&env.actions[0].ip_dst, &upstream6));
	cp_foreach_repair(env.cp, &tsi, PGM_AFI_IP, count_repair, &r4);
	cp_foreach_repair(env.cp, &tsi, PGM_AFI_IP6, count_repair, &r6);
	ck_assert_uint_eq(r4, 0);
	ck_assert_uint_eq(r6, 1);
}
END_TEST

/* A NAK of IPv4 addresses does not find the IPv6 session, and the other way round. */
START_TEST(test_8_nak_finds_its_family_only)
{
	struct cp_test_pkt p;

	/* no IPv6 session yet: the IPv6 NAK finds none (the IPv4 one has the same TSI) */
	ck_assert_int_eq(nak6(5), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NCF), 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_NO_SESSION), 1);
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 6, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 6; NCF d1 6");
}
END_TEST

/* Which IPv6 address names the router: global, link-local to a link-local peer or without
   a global one. */
START_TEST(test_if_ipv6_address_choice)
{
	struct pgm_nla g = cp_test_nla("2001:db8:2::1"), ll = cp_test_nla("fe80::3");
	struct pgm_nla peer_ll = cp_test_nla("fe80::99"), peer_g = cp_test_nla("2001:db8::99");
	struct cp_iface ifp;

	memset(&ifp, 0, sizeof(ifp));
	ifp.addr = cp_test_nla("198.18.0.1");
	ck_assert_uint_eq(cp_if_addr_for(&ifp, PGM_AFI_IP6, NULL)->afi, 0);
	ifp.ll6 = ll;
	ck_assert(pgm_nla_equal(cp_if_addr_for(&ifp, PGM_AFI_IP6, NULL), &ll));
	ifp.addr6 = g;
	ck_assert(pgm_nla_equal(cp_if_addr_for(&ifp, PGM_AFI_IP6, NULL), &g));
	ck_assert(pgm_nla_equal(cp_if_addr_for(&ifp, PGM_AFI_IP6, &peer_g), &g));
	ck_assert(pgm_nla_equal(cp_if_addr_for(&ifp, PGM_AFI_IP6, &peer_ll), &ll));
	ck_assert(pgm_nla_equal(cp_if_addr_for(&ifp, PGM_AFI_IP, &peer_ll), &ifp.addr));
	/* every one of them is the router's */
	cp_if_set_addr6(env.cp, CP_TEST_D2, &g, &ll);
	ck_assert(cp_is_local_address(env.cp, &g));
	ck_assert(cp_is_local_address(env.cp, &ll));
	ck_assert(!cp_nak_dest_usable(env.cp, &ll));
	cp_if_set_addr6(env.cp, CP_TEST_D2, NULL, NULL);
	ck_assert(!cp_is_local_address(env.cp, &ll));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: IPv6 (8, NLA AFI 2)");
	TCase *tc = tcase_create("ipv6");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_8_ipv4_and_ipv6_sessions_of_one_tsi_are_two);
	tcase_add_test(tc, test_8_nak_finds_its_family_only);
	tcase_add_test(tc, test_if_ipv6_address_choice);
	suite_add_tcase(s, tc);
	return check_run(s);
}

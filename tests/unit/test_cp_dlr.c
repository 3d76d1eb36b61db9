/*
 * RFC 3208 9.5.3: DLR discovery (redirecting POLRs from upstream DLRs, POLLs of sub-type DLR
 * for off-tree ones), redirected NAKs (upstream DLRs preferred, never to an off-tree DLR for an
 * SQN NAKed on its interface), falling back upstream (no NCF within NAK_RPT_IVL, a NAK from the
 * DLR), and the off-tree DLR's unicast NCF, NNAK and re-sourced RDATA.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

#define UP_DLR	"198.18.0.77" /* a receiver-DLR on the upstream link */
#define OFF_DLR "198.18.2.77" /* a receiver-DLR on d2 */
#define OFF_IF	CP_TEST_D2

static void start(const struct cp_config *cfg)
{
	struct cp_test_pkt p;

	t0 = cp_test_start(&env, cfg, 7);
	/* the TSI goes out on d2 and d3 too */
	cp_test_spm(&p, 1, 0, 0x80000000u);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D3), CP_ACCEPT_REWRITTEN);
	cp_test_clear(&env);
}

static void setup(void)
{
	start(NULL);
}

static void restart_with(bool discovery, bool redirect)
{
	struct cp_config cfg;

	cp_config_default(&cfg);
	cfg.dlr_discovery = discovery;
	cfg.dlr_redirect = redirect;
	cp_test_env_free(&env);
	start(&cfg);
}

static enum cp_verdict nak_from(cp_time_t t, unsigned type, uint32_t sqn, int in, const char *src)
{
	struct cp_test_pkt p;
	static const char *const our[] = {[CP_TEST_D1] = "198.18.1.1",
		[CP_TEST_D2] = "198.18.2.1",
		[CP_TEST_D3] = "198.18.3.1"};

	env.now = t;
	cp_test_nak(&p, type, sqn, NULL, 0);
	p.ip.src = cp_test_nla(src);
	p.ip.dst = cp_test_nla(our[in]);
	return cp_test_send(&env, &p, in, 0);
}

static enum cp_verdict nak_at(cp_time_t t, uint32_t sqn, int in)
{
	static const char *const rcv[] = {[CP_TEST_D1] = "198.18.1.50",
		[CP_TEST_D2] = "198.18.2.50",
		[CP_TEST_D3] = "198.18.3.50"};

	return nak_from(t, PGM_NAK, sqn, in, rcv[in]);
}

static struct cp_session_view session(void)
{
	return cp_test_session_view(&env);
}

/* A redirecting POLR: multicast with the source's address (upstream DLR) or unicast to us. */
static enum cp_verdict polr_at(
	cp_time_t t, uint32_t sqn, const char *dlr, int in, const char *dst, bool parity)
{
	struct cp_test_pkt p;

	env.now = t;
	cp_test_simple(&p, PGM_POLR, sqn);
	p.ip.src = cp_test_nla(in == CP_TEST_UP ? CP_TEST_SOURCE : dlr);
	p.ip.dst = cp_test_nla(dst);
	p.ip.router_alert = in == CP_TEST_UP;
	if (dlr != NULL) {
		cp_test_add_option(&p, PGM_OPT_REDIRECT, 0);
		p.pkt.opt.redirect = cp_test_nla(dlr);
	}
	if (parity)
		p.pkt.opt_flags |= PGM_OPT_PARITY;
	return cp_test_send(&env, &p, in, 0);
}

static void learn_upstream(bool parity)
{
	ck_assert_int_eq(polr_at(t0, 1, UP_DLR, CP_TEST_UP, CP_TEST_GROUP, parity), CP_DROP);
	ck_assert_uint_ge(cp_test_total_ev(&env, CP_C_DLR_UPSTREAM_LEARNED), 1);
	ck_assert_uint_ne(session().dlr_upstream.afi, 0);
	cp_test_clear(&env);
}

/* discovery on, one NAK to trigger the poll, the off-tree DLR's answer */
static void learn_offtree(bool parity)
{
	restart_with(true, true);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(polr_at(t0 + 1000, 1, OFF_DLR, OFF_IF, "198.18.2.1", parity), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_OFFTREE_LEARNED), 1);
	cp_test_clear(&env);
}

static void assert_dst(size_t i, const char *addr)
{
	struct pgm_nla want = cp_test_nla(addr);

	ck_assert_uint_gt(env.nactions, i);
	ck_assert_msg(pgm_nla_equal(&env.actions[i].ip_dst, &want), "action %zu does not go to %s",
		i, addr);
}

/* ---- upstream DLRs (9.5.2.1, 9.5.3.2) ---- */

START_TEST(test_9_5_3_2_upstream_dlr_learned_and_used)
{
	struct cp_session_view v;
	struct cp_repair_view r;

	learn_upstream(false);
	v = session();
	{
		struct pgm_nla dlr = cp_test_nla(UP_DLR);

		ck_assert(pgm_nla_equal(&v.dlr_upstream, &dlr));
	}
	ck_assert_uint_eq(v.dlr_upstream_learned, t0);
	ck_assert(!v.dlr_upstream_parity);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d1 17");
	assert_dst(0, UP_DLR);
	ck_assert(env.actions[0].from_packet);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_REDIRECTED), 1);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.dlr, 1);
	/* its repeats go there too */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
	assert_dst(0, UP_DLR);
	/* its multicast NCF down the tree confirms as any NCF from upstream */
	{
		struct cp_test_pkt p;

		cp_test_nak(&p, PGM_NCF, 17, NULL, 0);
		env.now = t0 + CP_MS(250);
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	}
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
}
END_TEST

START_TEST(test_9_5_3_2_redirecting_polr_is_not_an_ncf)
{
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	learn_upstream(false);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	/* the NAK already sent upstream keeps going upstream */
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
	assert_dst(0, CP_TEST_UPSTREAM);
}
END_TEST

START_TEST(test_9_5_3_unusable_polrs)
{
	/* not from the upstream interface */
	ck_assert_int_eq(polr_at(t0, 1, UP_DLR, CP_TEST_D1, CP_TEST_GROUP, false), CP_DROP);
	/* no OPT_REDIRECT */
	ck_assert_int_eq(polr_at(t0, 1, NULL, CP_TEST_UP, CP_TEST_GROUP, false), CP_DROP);
	/* naming one of our own addresses */
	ck_assert_int_eq(polr_at(t0, 1, "198.18.0.1", CP_TEST_UP, CP_TEST_GROUP, false), CP_DROP);
	/* unicast to us without a poll of ours */
	ck_assert_int_eq(polr_at(t0, 1, OFF_DLR, OFF_IF, "198.18.2.1", false), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_UNUSED), 2);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_NOT_UPSTREAM), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_BAD_ADDRESS), 1);
	ck_assert_uint_eq(session().dlr_upstream.afi, 0);
	ck_assert_uint_eq(session().dlr_offtree.afi, 0);
	/* unicast through us to someone else: routed */
	ck_assert_int_eq(polr_at(t0, 1, OFF_DLR, OFF_IF, CP_TEST_UPSTREAM, false), CP_ACCEPT);
	/* unknown TSI */
	{
		struct cp_test_pkt p;

		cp_test_simple(&p, PGM_POLR, 1);
		p.pkt.gsi[0] ^= 0xff;
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
		ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_POLR_UNUSED), 3);
	}
	/* redirection off: nothing learned, NAKs go upstream */
	restart_with(false, false);
	ck_assert_int_eq(polr_at(t0, 1, UP_DLR, CP_TEST_UP, CP_TEST_GROUP, false), CP_DROP);
	ck_assert_uint_eq(session().dlr_upstream.afi, 0);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	assert_dst(0, CP_TEST_UPSTREAM);
}
END_TEST

START_TEST(test_9_5_3_2_unconfirmed_dlr_dropped_at_nak_rpt_ivl)
{
	struct cp_session_view v;
	struct cp_repair_view r;

	learn_upstream(false);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 18, CP_TEST_D1), CP_DROP);
	/* the edge: 1 µs before NAK_RPT_IVL (2 s) it is still the DLR's */
	cp_test_timers(&env, t0 + CP_SEC(2) - 1);
	cp_test_clear(&env);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.dlr, 1);
	cp_test_timers(&env, t0 + CP_SEC(2));
	/* both NAKs of the TSI go upstream at once, as one list */
	ck_assert_str_eq(ACTIONS(), "NAK up 17,18 rpt");
	assert_dst(0, CP_TEST_UPSTREAM);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_DLR_TIMEOUT), 1);
	v = session();
	ck_assert_uint_eq(v.dlr_upstream.afi, 0);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert_int_eq(r.dlr, 0);
	ck_assert_uint_eq(r.rpt_end, t0 + CP_SEC(4)); /* a fresh NAK_RPT_IVL upstream */
	/* and unconfirmed upstream too: given up as usual */
	cp_test_timers(&env, t0 + CP_SEC(4));
	ck_assert(!cp_test_repair(&env, 17, NULL));
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_RETRY_EXPIRED), 2);
	/* never back to a DLR for those SQNs, even a new one */
	learn_upstream(false);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(5), 19, CP_TEST_D1), CP_DROP);
	assert_dst(0, UP_DLR);
}
END_TEST

/* ---- off-tree DLRs (9.5.2.2, 9.5.3) ---- */

START_TEST(test_9_5_3_1_discovery_poll)
{
	const struct cp_action *a;

	restart_with(true, true);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(
		ACTIONS(), "NAK up 5; NCF d1 5; POLL d1 1 rpt; POLL d2 1 rpt; POLL d3 1 rpt");
	a = &env.actions[2];
	ck_assert_uint_eq(a->poll_s_type, 1); /* PGM_POLL_DLR */
	ck_assert_uint_eq(a->poll_round, 0);
	ck_assert_uint_eq(a->poll_mask, 0);
	ck_assert_uint_eq(a->poll_bo_ivl_us, 100000);
	ck_assert(a->router_alert);
	{
		struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE), path = cp_test_nla("198.18.1.1");

		ck_assert(pgm_nla_equal(&a->ip_src, &src));
		ck_assert(pgm_nla_equal(&a->path, &path));
	}
	assert_dst(2, CP_TEST_GROUP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_DLR_POLL_SENT), 1);
	/* once per dlr_poll_ivl per TSI */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(10) - 1, 6, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_POLL), 0);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(10), 7, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_POLL), 3);
	ck_assert_uint_eq(env.actions[4].sqn, 2);
	/* an answer to the old poll is too late */
	ck_assert_int_eq(polr_at(env.now, 1, OFF_DLR, OFF_IF, "198.18.2.1", false), CP_DROP);
	ck_assert_uint_eq(session().dlr_offtree.afi, 0);
	/* an answer after twice POLL_BO_IVL is too late */
	ck_assert_int_eq(polr_at(env.now + CP_MS(200) + 1, 2, OFF_DLR, OFF_IF, "198.18.2.1", false),
		CP_DROP);
	ck_assert_uint_eq(session().dlr_offtree.afi, 0);
	/* at 2 x POLL_BO_IVL it is still in time */
	ck_assert_int_eq(
		polr_at(t0 + CP_SEC(10) + CP_MS(200), 2, OFF_DLR, OFF_IF, "198.18.2.1", false),
		CP_DROP);
	ck_assert_uint_eq(session().dlr_offtree_ifindex, OFF_IF);
	/* known now: no more polls */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(30), 8, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_POLL), 0);
}
END_TEST

START_TEST(test_9_5_3_2_offtree_redirect_and_own_interface)
{
	struct cp_repair_view r;

	learn_offtree(false);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 20, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK d2 20; NCF d1 20");
	assert_dst(0, OFF_DLR);
	ck_assert(cp_test_repair(&env, 20, &r));
	ck_assert_int_eq(r.dlr, 2);
	/* lost on the DLR's own link too: upstream */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 21, OFF_IF), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 21; NCF d2 21");
	assert_dst(0, CP_TEST_UPSTREAM);
	ck_assert_uint_eq(cp_test_if_ev(&env, OFF_IF, CP_C_DLR_OWN_INTERFACE), 1);
	/* upstream DLRs are preferred */
	learn_upstream(false);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 22, CP_TEST_D1), CP_DROP);
	assert_dst(0, UP_DLR);
}
END_TEST

START_TEST(test_9_5_3_2_nak_from_the_dlr_goes_upstream)
{
	struct cp_repair_view r;

	learn_offtree(false);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 20, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	/* the DLR confirms, then lacks the data itself and NAKs it */
	ck_assert_int_eq(nak_from(t0 + CP_SEC(1) + 10, PGM_NAK, 20, OFF_IF, OFF_DLR), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 20; NCF d2 20");
	assert_dst(0, CP_TEST_UPSTREAM);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_NAK_FALLBACK), 1);
	ck_assert(cp_test_repair(&env, 20, &r));
	ck_assert_int_eq(r.dlr, 0);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1) | cp_test_mask(OFF_IF));
	/* the DLR is kept for other SQNs */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1) + 20, 23, CP_TEST_D3), CP_DROP);
	assert_dst(0, OFF_DLR);
	/* repeats of 20 go upstream, of 23 to the DLR */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_SEC(1) + CP_MS(300));
	/* (5, NAKed before the DLR was known, is still pending upstream) */
	ck_assert_str_eq(ACTIONS(), "NAK up 5,20 rpt; NAK d2 23 rpt");
	assert_dst(0, CP_TEST_UPSTREAM);
	assert_dst(1, OFF_DLR);
}
END_TEST

START_TEST(test_9_5_3_2_offtree_ncf_nnak_rdata)
{
	struct cp_test_pkt p;
	struct cp_repair_view r;
	const struct cp_action *a;

	learn_offtree(false);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 20, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 20, CP_TEST_D3), CP_DROP);
	cp_test_clear(&env);
	/* its unicast NCF confirms */
	env.now = t0 + CP_SEC(1) + 100;
	cp_test_nak(&p, PGM_NCF, 20, NULL, 0);
	p.ip.src = cp_test_nla(OFF_DLR);
	p.ip.dst = cp_test_nla("198.18.2.1");
	p.ip.router_alert = false;
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert(cp_test_repair(&env, 20, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert_uint_eq(cp_test_if_ev(&env, OFF_IF, CP_C_DLR_NCF), 1);
	/* an NCF unicast by someone else confirms nothing */
	p.ip.src = cp_test_nla("198.18.2.99");
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, OFF_IF, CP_C_OFFTREE_DLR), 1);
	/* its NNAK goes upstream although state exists; another's is eliminated */
	ck_assert_int_eq(nak_from(env.now, PGM_NNAK, 20, OFF_IF, OFF_DLR), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 20");
	assert_dst(0, CP_TEST_UPSTREAM);
	ck_assert_uint_eq(cp_test_if_ev(&env, OFF_IF, CP_C_DLR_NNAK), 1);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_from(env.now, PGM_NNAK, 20, CP_TEST_D1, "198.18.1.50"), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	/* its RDATA, unicast to us, is re-sourced onto d1 and d3 */
	cp_test_data(&p, PGM_RDATA, 20);
	p.ip.src = cp_test_nla(OFF_DLR);
	p.ip.dst = cp_test_nla("198.18.2.1");
	p.ip.router_alert = false;
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "RDATA d1 20; RDATA d3 20");
	a = &env.actions[0];
	{
		struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE);

		ck_assert(pgm_nla_equal(&a->ip_src, &src));
	}
	assert_dst(0, CP_TEST_GROUP);
	ck_assert(a->router_alert);
	ck_assert(a->from_packet);
	ck_assert(!cp_test_repair(&env, 20, NULL));
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_RDATA), 2);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D3, CP_C_RDATA_FORWARDED), 1);
	/* again: no state left */
	cp_test_clear(&env);
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, OFF_IF, CP_C_RDATA_NO_STATE), 1);
	/* RDATA unicast to us by a stranger */
	p.ip.src = cp_test_nla("198.18.2.99");
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, OFF_IF, CP_C_OFFTREE_DLR), 2);
}
END_TEST

START_TEST(test_9_5_3_clear_dlrs)
{
	struct pgm_nla other = cp_test_nla("198.18.9.9"), up = cp_test_nla(UP_DLR);

	learn_offtree(false);
	learn_upstream(false);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 20, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_clear_dlrs(env.cp, &other), 0);
	ck_assert_uint_eq(cp_clear_dlrs(env.cp, &up), 1);
	ck_assert_uint_eq(session().dlr_upstream.afi, 0);
	ck_assert_uint_ne(session().dlr_offtree.afi, 0);
	/* the NAK sent to it is repeated upstream */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_SEC(1) + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 5,20 rpt");
	assert_dst(0, CP_TEST_UPSTREAM);
	ck_assert_uint_eq(cp_clear_dlrs(env.cp, NULL), 1);
	ck_assert_uint_eq(session().dlr_offtree.afi, 0);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_DLR_CLEARED), 2);
}
END_TEST

START_TEST(test_9_5_3_list_split_by_destination)
{
	uint32_t list[] = {31, 32};
	struct cp_test_pkt p;

	learn_offtree(false);
	/* 31 was lost on the DLR's link as well, and confirmed from upstream */
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 31, OFF_IF), CP_DROP);
	env.now = t0 + CP_SEC(1) + 10;
	cp_test_nak(&p, PGM_NCF, 31, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	env.now = t0 + CP_SEC(1) + CP_MS(1500); /* 31 no longer eliminating */
	cp_test_timers(&env, env.now);
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 30, list, 2);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	/* one NCF with the list; the NAK split: 31 upstream, 30 and 32 to the DLR, built */
	ck_assert_str_eq(ACTIONS(), "NAK up 31 rpt; NAK d2 30,32 rpt; NCF d1 30,31,32");
}
END_TEST

START_TEST(test_9_5_3_session_deleted_with_dlrs)
{
	learn_offtree(false);
	learn_upstream(false);
	ck_assert_int_eq(nak_at(t0 + CP_SEC(1), 20, CP_TEST_D1), CP_DROP);
	/* the session expires with its learned DLRs (no leak under ASan) */
	cp_test_timers(&env, t0 + CP_SEC(400));
	ck_assert_int_eq(cp_test_session(&env, NULL), 0);
}
END_TEST

/* PGM over UDP: what the router originates keeps the session's encapsulation. */
START_TEST(test_9_5_3_udp_encapsulation)
{
	struct cp_config cfg;
	struct cp_test_pkt p;
	const struct cp_action *a;

	cp_config_default(&cfg);
	cfg.dlr_discovery = true;
	cp_test_env_free(&env);
	cp_test_env_init(&env, &cfg);
	t0 = env.now;
	cp_test_spm(&p, 1, 0, 0x80000000u);
	p.ip.udp = true;
	p.ip.udp_sport = 3055;
	p.ip.udp_dport = 3056;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	cp_test_clear(&env);
	/* the DLR poll goes in the session's encapsulation */
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_POLL), 2);
	a = &env.actions[2];
	ck_assert_int_eq(a->type, CP_ACT_POLL);
	ck_assert(a->udp);
	ck_assert_uint_eq(a->udp_sport, 3055);
	ck_assert_uint_eq(a->udp_dport, 3056);
	/* the off-tree DLR answers; its RDATA is re-sourced as UDP to the group port */
	ck_assert_int_eq(polr_at(t0 + 1000, 1, OFF_DLR, OFF_IF, "198.18.2.1", false), CP_DROP);
	ck_assert_int_eq(nak_at(t0 + 2000, 20, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	cp_test_data(&p, PGM_RDATA, 20);
	p.ip.src = cp_test_nla(OFF_DLR);
	p.ip.dst = cp_test_nla("198.18.2.1");
	p.ip.udp = true;
	p.ip.udp_sport = 3055;
	p.ip.udp_dport = 3055;
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "RDATA d1 20");
	ck_assert(env.actions[0].udp);
	ck_assert_uint_eq(env.actions[0].udp_dport, 3056);
	/* a POLR as a child: no NAK came over UDP, so the session's encapsulation */
	{
		struct cp_test_pkt q;

		cp_test_simple(&q, PGM_POLL, 9);
		q.pkt.path = cp_test_nla(CP_TEST_UPSTREAM);
		q.pkt.poll_bo_ivl = 0;
		ck_assert_int_eq(cp_test_send(&env, &q, CP_TEST_UP, 0), CP_DROP);
		cp_test_clear(&env);
		cp_test_timers(&env, env.now + 1);
		ck_assert_str_eq(ACTIONS(), "POLR up 9 rpt");
		ck_assert(env.actions[0].udp);
		ck_assert_uint_eq(env.actions[0].udp_dport, 3056);
	}
}
END_TEST

/* The off-tree DLR lacks a parity repair: the group goes upstream; its parity NNAK always does. */
START_TEST(test_9_5_3_2_parity_fallback_and_nnak)
{
	struct cp_test_pkt p;

	restart_with(true, true);
	cp_test_spm(&p, 2, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_PARITY_PRM, 0);
	p.pkt.opt.parity_tgs = 8;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(polr_at(t0 + 1000, 1, OFF_DLR, OFF_IF, "198.18.2.1", true), CP_DROP);
	cp_test_clear(&env);
	/* a parity NAK for 2 packets of group 64 from d1 goes to the DLR */
	env.now = t0 + 2000;
	cp_test_nak(&p, PGM_NAK, 64 | 1, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK d2 65; NCF d1 65");
	/* its NNAK for them is forwarded although the group has state */
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NNAK, 64 | 1, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	p.ip.src = cp_test_nla(OFF_DLR);
	p.ip.dst = cp_test_nla("198.18.2.1");
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NNAK up 65");
	ck_assert_uint_eq(cp_test_if_ev(&env, OFF_IF, CP_C_DLR_NNAK), 1);
	/* then it NAKs the group itself: upstream */
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 64 | 1, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	p.ip.src = cp_test_nla(OFF_DLR);
	p.ip.dst = cp_test_nla("198.18.2.1");
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 65; NCF d2 65");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_NAK_FALLBACK), 1);
	/* and a parity NCF unicast from it confirms nothing (the group is no longer its) */
	cp_test_nak(&p, PGM_NCF, 64 | 1, NULL, 0);
	p.pkt.opt_flags |= PGM_OPT_PARITY;
	p.ip.src = cp_test_nla(OFF_DLR);
	p.ip.dst = cp_test_nla("198.18.2.1");
	ck_assert_int_eq(cp_test_send(&env, &p, OFF_IF, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_DLR_NCF), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: DLRs (9.5.3)");
	TCase *tc = tcase_create("dlr");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_9_5_3_2_upstream_dlr_learned_and_used);
	tcase_add_test(tc, test_9_5_3_2_redirecting_polr_is_not_an_ncf);
	tcase_add_test(tc, test_9_5_3_unusable_polrs);
	tcase_add_test(tc, test_9_5_3_2_unconfirmed_dlr_dropped_at_nak_rpt_ivl);
	tcase_add_test(tc, test_9_5_3_1_discovery_poll);
	tcase_add_test(tc, test_9_5_3_2_offtree_redirect_and_own_interface);
	tcase_add_test(tc, test_9_5_3_2_nak_from_the_dlr_goes_upstream);
	tcase_add_test(tc, test_9_5_3_2_offtree_ncf_nnak_rdata);
	tcase_add_test(tc, test_9_5_3_clear_dlrs);
	tcase_add_test(tc, test_9_5_3_list_split_by_destination);
	tcase_add_test(tc, test_9_5_3_session_deleted_with_dlrs);
	tcase_add_test(tc, test_9_5_3_udp_encapsulation);
	tcase_add_test(tc, test_9_5_3_2_parity_fallback_and_nnak);
	suite_add_tcase(s, tc);
	return check_run(s);
}

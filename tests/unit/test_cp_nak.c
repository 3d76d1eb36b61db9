/*
 * RFC 3208 7.2 (NAK confirmation, NCF rate limit), 7.3 (constrained NAK forwarding, repeats,
 * NAK_RPT_IVL and NAK_RDATA_IVL), 7.4 (elimination), 7.7 (addressing), 8.3 (NCF form).
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

static void restart(const struct cp_config *cfg)
{
	t0 = cp_test_restart(&env, cfg, 0);
}

static enum cp_verdict nak_at(cp_time_t t, uint32_t sqn, int in)
{
	return cp_test_nak_at(&env, t, PGM_NAK, sqn, NULL, 0, in);
}

static enum cp_verdict ncf_at(cp_time_t t, uint32_t sqn, int in)
{
	return cp_test_nak_at(&env, t, PGM_NCF, sqn, NULL, 0, in);
}

START_TEST(test_7_2_nak_confirmed_and_forwarded)
{
	struct pgm_nla source = cp_test_nla(CP_TEST_SOURCE), group = cp_test_nla(CP_TEST_GROUP);
	struct pgm_nla upstream = cp_test_nla(CP_TEST_UPSTREAM);
	const struct cp_action *ncf, *nak;
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d1 17");
	/* 7.2, 8.3: multicast to the group on the arrival interface, data source as IP source */
	ncf = &env.actions[1];
	ck_assert(ncf->from_packet);
	ck_assert(ncf->router_alert);
	ck_assert(pgm_nla_equal(&ncf->ip_src, &source));
	ck_assert(pgm_nla_equal(&ncf->ip_dst, &group));
	ck_assert(pgm_nla_equal(&ncf->nak_src, &source));
	ck_assert(pgm_nla_equal(&ncf->nak_grp, &group));
	ck_assert_uint_eq(ncf->tsi.sport, CP_TEST_SPORT);
	ck_assert_uint_eq(ncf->data_dport, CP_TEST_DPORT);
	ck_assert(!ncf->udp);
	ck_assert(!ncf->nak_bo_ivl);
	/* 7.3, 7.7: unicast to the upstream neighbour on the upstream interface, from us */
	nak = &env.actions[0];
	ck_assert(nak->from_packet);
	ck_assert_int_eq(nak->ifindex, CP_TEST_UP);
	ck_assert_uint_eq(nak->ip_src.afi, 0);
	ck_assert(pgm_nla_equal(&nak->ip_dst, &upstream));
	ck_assert(!nak->router_alert);
	ck_assert_uint_eq(nak->opt_invalid_mask, 0);

	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert(r.eliminating);
	ck_assert(!r.anticipated);
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1));
	ck_assert_uint_eq(r.rpt_next, t0 + CP_MS(200));
	ck_assert_uint_eq(r.rpt_end, t0 + CP_MS(2000));
	ck_assert_uint_eq(r.rdata_end, 0);
	ck_assert_uint_eq(r.created, t0);

	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_RECEIVED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_UNIQUE), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NCF_SENT), 1);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_D1, PGM_NCF), 1);
	ck_assert_uint_eq(cp_test_if_in(&env, CP_TEST_D1, PGM_NAK), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_FORWARDED), 1);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_UP, PGM_NAK), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_FORWARDED), 1);
	ck_assert(cp_test_logged(&env, "tsi 0a0b0c0d0e0f.1234 sqn 17: NAK on d1 in NONE -> PENDING "
				       "(forwarded)"));
}
END_TEST

START_TEST(test_7_2_duplicate_confirmed_adds_interface)
{
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_MS(5), 17, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 17");
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1) | cp_test_mask(CP_TEST_D2));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_NAK_ELIMINATED), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_UNIQUE), 1);
	ck_assert(cp_test_logged(&env, "sqn 17: NAK on d2 in PENDING -> PENDING (eliminated)"));
	/* the interface is listed once however often it NAKs */
	ck_assert_int_eq(nak_at(t0 + CP_MS(500), 17, CP_TEST_D2), CP_DROP);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D1) | cp_test_mask(CP_TEST_D2));
}
END_TEST

START_TEST(test_7_2_nak_on_upstream_interface_dropped)
{
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_UP), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_UPSTREAM_INTERFACE), 1);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

START_TEST(test_7_7_nak_addresses_must_match_session)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.pkt.nak_src = cp_test_nla("198.18.0.11");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.pkt.nak_grp = cp_test_nla("239.192.0.2");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_ADDRESS_MISMATCH), 2);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_ADDRESS_MISMATCH), 2);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

/*
 * OpenPGM receivers put the SPM's path NLA in NAK_SRC: behind us, our address on the arrival
 * interface. Accepted from that interface only; the NCF still has the source as IP source and
 * the NAK goes upstream with the source's address, which OpenPGM sources require.
 */
START_TEST(test_7_7_nak_naming_the_router_openpgm)
{
	struct pgm_nla source = cp_test_nla(CP_TEST_SOURCE);
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.pkt.nak_src = cp_test_nla("198.18.1.1"); /* d1's address */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d1 17");
	ck_assert(pgm_nla_equal(&env.actions[1].ip_src, &source));
	ck_assert(env.actions[0].nak_src_rewrite);
	ck_assert(pgm_nla_equal(&env.actions[0].nak_src, &source));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_SRC_PATH), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_ADDRESS_MISMATCH), 0);
	/* d2's address arriving on d1 is no address this receiver could have learned */
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 18, NULL, 0);
	p.pkt.nak_src = cp_test_nla("198.18.2.1");
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_ADDRESS_MISMATCH), 1);
	/* an RFC NAK names the source: forwarded without a rewrite */
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 19, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 19; NCF d1 19");
	ck_assert(!env.actions[0].nak_src_rewrite);
}
END_TEST

/* OpenPGM sends NAK lists in NAK-timer order: every entry still counts as a NAK. */
START_TEST(test_9_3_unordered_list_counted)
{
	static const uint32_t list[] = {12, 30};
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, 20, list, 2);
	p.pkt.opt.nak_list_unordered = true;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 3);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_LIST_UNORDERED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_RECEIVED), 3);
}
END_TEST

START_TEST(test_7_7_nak_without_session_dropped)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.pkt.dport = 999; /* the data-source port of an unknown TSI */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_NO_SESSION), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_RECEIVED), 1);
}
END_TEST

/* A NAK for a TSI of no SPM here (a restarted router), from a receiver that NAKs our address
 * as OpenPGM's do (NAK_SRC = the SPM path it last saw). */
static enum cp_verdict unknown_nak(int in, const char *nak_src, bool udp)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.pkt.dport = 999; /* the data-source port of a TSI without state */
	if (nak_src != NULL)
		p.pkt.nak_src = cp_test_nla(nak_src);
	if (udp) {
		p.ip.udp = true;
		p.ip.udp_sport = 5556;
		p.ip.udp_dport = 5555;
	}
	return cp_test_send(&env, &p, in, 0);
}

/* The route mirror: routes from src to every group come in by up, leave by the others. */
static void route_from(const char *src)
{
	env.route_srcs[env.nroute_srcs++] = cp_test_nla(src);
	env.route_iif = CP_TEST_UP;
	env.rpf_ifindex = CP_TEST_UP;
}

START_TEST(test_13_6_nak_without_session_solicits_spm)
{
	struct pgm_nla source = cp_test_nla(CP_TEST_SOURCE);
	const struct cp_action *a;
	uint8_t tpdu[64];
	struct pgm_packet spmr;
	size_t len;

	route_from(CP_TEST_SOURCE);
	/* the NAK itself waits for the session (no NCF, not forwarded), its SPM is asked for */
	ck_assert_int_eq(unknown_nak(CP_TEST_D1, "198.18.1.1", false), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "SPMR up 0");
	a = &env.actions[0];
	ck_assert_int_eq(a->type, CP_ACT_SPMR);
	ck_assert(pgm_nla_equal(&a->ip_dst, &source));
	ck_assert_uint_eq(a->ip_src.afi, 0); /* from our address */
	ck_assert(!a->udp);
	ck_assert(!a->router_alert);
	/* 13.6: SPMR_TSI and SPMR_DPORT are the NAK's */
	len = cp_action_tpdu(a, tpdu, sizeof(tpdu));
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(pgm_parse(tpdu, len, 0, &spmr), PGM_ERR_OK);
	ck_assert_uint_eq(spmr.type, PGM_SPMR);
	ck_assert_uint_eq(spmr.dport, 999);
	ck_assert_uint_eq(spmr.sport, CP_TEST_DPORT);
	ck_assert_mem_eq(spmr.gsi, "\x0a\x0b\x0c\x0d\x0e\x0f", 6);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_NO_SESSION), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPMR_SENT), 1);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_UP, PGM_SPMR), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NCF_SENT), 0);

	/* over UDP (ZeroMQ epgm): the NAK's ports */
	cp_test_clear(&env);
	ck_assert_int_eq(unknown_nak(CP_TEST_D2, NULL, true), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "SPMR up 0");
	ck_assert(env.actions[0].udp);
	ck_assert_uint_eq(env.actions[0].udp_sport, 5556);
	ck_assert_uint_eq(env.actions[0].udp_dport, 5555);
}
END_TEST

/* Only to a source whose route sends the group out by the NAK's interface: a host on a link
 * cannot aim SPMRs at addresses of its choosing, nor from the source's side. */
START_TEST(test_13_6_spmr_only_along_a_route)
{
	/* no route at all */
	ck_assert_int_eq(unknown_nak(CP_TEST_D1, NULL, false), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPMR_NO_ROUTE), 1);
	route_from(CP_TEST_SOURCE);
	/* NAK_SRC names a host no route comes from */
	ck_assert_int_eq(unknown_nak(CP_TEST_D1, "192.0.2.7", false), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPMR_NO_ROUTE), 2);
	/* from the route's incoming interface */
	ck_assert_int_eq(unknown_nak(CP_TEST_UP, NULL, false), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SPMR_NO_ROUTE), 1);
	/* from an interface without router assist */
	ck_assert_int_eq(unknown_nak(CP_TEST_NA, NULL, false), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPMR_SENT), 0);
	/* NAK_SRC naming the route's source itself */
	ck_assert_int_eq(unknown_nak(CP_TEST_D1, CP_TEST_SOURCE, false), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "SPMR up 0");
}
END_TEST

/* Several sources send the group out there: each is asked (bounded), the rate per interface. */
START_TEST(test_13_6_spmr_rate_limited_per_interface)
{
	route_from(CP_TEST_SOURCE);
	for (int i = 0; i < 12; i++)
		unknown_nak(CP_TEST_D1, NULL, false);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_SPMR), 10);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPMR_SENT), 10);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPMR_RATE_LIMITED), 2);
	/* another interface has its own */
	cp_test_clear(&env);
	unknown_nak(CP_TEST_D2, NULL, false);
	ck_assert_str_eq(ACTIONS(), "SPMR up 0");
	/* a tenth of a second later, one more on d1 */
	cp_test_clear(&env);
	env.now += CP_MS(100);
	unknown_nak(CP_TEST_D1, NULL, false);
	unknown_nak(CP_TEST_D1, NULL, false);
	ck_assert_str_eq(ACTIONS(), "SPMR up 0");
	/* two sources: both asked */
	cp_test_clear(&env);
	env.now += CP_SEC(1);
	route_from("198.18.0.11");
	unknown_nak(CP_TEST_D1, "198.18.1.1", false);
	ck_assert_str_eq(ACTIONS(), "SPMR up 0; SPMR up 0");
	ck_assert_str_eq(pgm_nla_format(&env.actions[1].ip_dst, buf, sizeof(buf)), "198.18.0.11");
}
END_TEST

/* A flood of NAKs for TSIs nobody routes costs a counter each, not a walk of the routes each. */
START_TEST(test_13_6_unrouted_nak_flood_walks_routes_at_rate)
{
	for (int i = 0; i < 1000; i++)
		unknown_nak(CP_TEST_D1, NULL, false);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(env.route_walks, 10);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPMR_NO_ROUTE), 10);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SPMR_RATE_LIMITED), 990);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_NO_SESSION), 1000);
}
END_TEST

/* The SPM it asked for makes the session: the receivers' next NAK is assisted. */
START_TEST(test_13_6_solicited_spm_restores_assist)
{
	struct cp_test_pkt p;

	route_from(CP_TEST_SOURCE);
	unknown_nak(CP_TEST_D1, NULL, false);
	ck_assert_str_eq(ACTIONS(), "SPMR up 0");
	cp_test_clear(&env);
	cp_test_spm(&p, 5, 0, 100);
	p.pkt.sport = 999;
	cp_test_send(&env, &p, CP_TEST_UP, 0);
	cp_test_clear(&env);
	ck_assert_int_eq(unknown_nak(CP_TEST_D1, "198.18.1.1", false), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d1 17");
}
END_TEST

START_TEST(test_7_3_repeated_at_rate_until_rpt_ivl)
{
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	/* one microsecond early: nothing */
	cp_test_timers(&env, t0 + CP_MS(200) - 1);
	ck_assert_str_eq(ACTIONS(), "");
	for (unsigned k = 1; k <= 9; k++) {
		cp_test_timers(&env, t0 + CP_MS(200) * k);
		ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
		ck_assert_int_eq(env.actions[0].ifindex, CP_TEST_UP);
		cp_test_clear(&env);
	}
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_RETRANSMITTED), 9);
	cp_test_timers(&env, t0 + CP_MS(2000) - 1);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert(cp_test_repair(&env, 17, NULL));
	/* exactly at NAK_RPT_IVL: given up, no tenth repeat */
	cp_test_timers(&env, t0 + CP_MS(2000));
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert(!cp_test_repair(&env, 17, NULL));
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_NAK_RETRY_EXPIRED), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_RETRY_EXPIRED), 1);
	ck_assert(cp_test_logged(&env, "sqn 17: timer in PENDING -> deleted (NAK_RPT_IVL expired"));
	/* only the session's expiry is left */
	ck_assert_uint_gt(cp_next_deadline(env.cp), t0 + CP_MS(2000));
	ck_assert_uint_le(cp_next_deadline(env.cp), t0 + CP_SEC(300));
}
END_TEST

START_TEST(test_7_3_repeat_fields_built_from_state)
{
	struct pgm_nla source = cp_test_nla(CP_TEST_SOURCE), group = cp_test_nla(CP_TEST_GROUP);
	struct pgm_nla upstream = cp_test_nla(CP_TEST_UPSTREAM);
	const struct cp_action *a;

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_uint_eq(env.nactions, 1);
	a = &env.actions[0];
	ck_assert_int_eq(a->type, CP_ACT_NAK);
	ck_assert(!a->from_packet);
	ck_assert(pgm_nla_equal(&a->ip_dst, &upstream));
	ck_assert_uint_eq(a->ip_src.afi, 0);
	ck_assert(pgm_nla_equal(&a->nak_src, &source));
	ck_assert(pgm_nla_equal(&a->nak_grp, &group));
	ck_assert_uint_eq(a->tsi.sport, CP_TEST_SPORT);
	ck_assert_uint_eq(a->data_dport, CP_TEST_DPORT);
	ck_assert_uint_eq(a->list_count, 0);
	ck_assert(!a->udp);
}
END_TEST

START_TEST(test_7_3_ncf_stops_repeats)
{
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(ncf_at(t0 + CP_MS(100), 17, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_logged(&env, "sqn 17: NCF in PENDING -> OUTSTANDING (confirmed)"));
	cp_test_clear(&env);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert_uint_eq(r.rpt_next, 0);
	ck_assert_uint_eq(r.rpt_end, 0);
	ck_assert_uint_eq(r.rdata_end, t0 + CP_MS(100) + CP_MS(10000));
	ck_assert_uint_eq(r.elim_end, t0 + CP_MS(100) + CP_MS(1000));
	cp_test_timers(&env, t0 + CP_MS(2500));
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_CONFIRMED), 1);
}
END_TEST

START_TEST(test_7_3_ncf_after_rpt_ivl_expired_anticipates)
{
	struct cp_repair_view r;

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_timers(&env, t0 + CP_MS(2000));
	ck_assert(!cp_test_repair(&env, 17, NULL));
	ck_assert_int_eq(ncf_at(t0 + CP_MS(2100), 17, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert(r.anticipated);
	ck_assert_uint_eq(r.if_mask, 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_ANTICIPATED), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NCF_CONFIRMED), 0);
}
END_TEST

START_TEST(test_7_3_expiry_without_timer_run)
{
	/* the state is over at NAK_RPT_IVL even if cp_timers has not run yet */
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_MS(2000), 17, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d2 17");
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_NAK_RETRY_EXPIRED), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_UNIQUE), 2);
}
END_TEST

START_TEST(test_7_3_repeats_grouped_into_nak_lists)
{
	uint32_t other_sport = 4321;
	struct cp_test_pkt p;

	/* a second session */
	cp_test_spm(&p, 1, 0, 0x80000000u);
	p.pkt.sport = (uint16_t)other_sport;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	/* 100 SQNs of the test session, NAKed in descending order, and 2 of the other */
	for (uint32_t i = 0; i < 100; i++)
		ck_assert_int_eq(nak_at(t0, 1000 - i, CP_TEST_D1), CP_DROP);
	for (uint32_t i = 0; i < 2; i++) {
		cp_test_nak(&p, PGM_NAK, 7 + i, NULL, 0);
		p.pkt.dport = (uint16_t)other_sport;
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D2, 0), CP_DROP);
	}
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_uint_eq(env.nactions, 3);
	for (size_t a = 0; a < env.nactions; a++) {
		const struct cp_action *act = &env.actions[a];

		ck_assert(!act->from_packet);
		if (act->tsi.sport == other_sport) {
			ck_assert_uint_eq(act->sqn, 7);
			ck_assert_uint_eq(act->list_count, 1);
			ck_assert_uint_eq(act->list[0], 8);
			continue;
		}
		/* header SQN plus up to 62, ascending */
		if (act->list_count == 62) {
			ck_assert_uint_eq(act->sqn, 901);
			ck_assert_uint_eq(act->list[61], 963);
		} else {
			ck_assert_uint_eq(act->list_count, 36);
			ck_assert_uint_eq(act->sqn, 964);
			ck_assert_uint_eq(act->list[35], 1000);
		}
		for (unsigned j = 0; j < act->list_count; j++)
			ck_assert_uint_eq(act->list[j], act->sqn + 1 + j);
	}
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_NAK_RETRANSMITTED), 102);
	ck_assert_uint_eq(cp_test_if_out(&env, CP_TEST_UP, PGM_NAK), 102 + 3);
}
END_TEST

START_TEST(test_7_3_repeat_list_never_wraps)
{
	static const uint32_t sqns[] = {0xfffffffeu, 0xffffffffu, 0, 1};
	struct cp_test_pkt p;

	/* a window across the wrap */
	cp_test_spm(&p, 2, 0xfffffff0u, 5);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(nak_at(t0, sqns[i], CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 4294967294,4294967295 rpt; NAK up 0,1 rpt");
}
END_TEST

START_TEST(test_7_4_elimination_cycle)
{
	struct cp_repair_view r;
	cp_time_t confirmed = t0 + CP_MS(50);

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	/* pending: duplicates discarded */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_MS(10), 17, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 17");
	/* confirmed: outstanding, eliminating for NAK_ELIM_IVL */
	ck_assert_int_eq(ncf_at(confirmed, 17, CP_TEST_UP), CP_DROP);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(confirmed + CP_MS(1000) - 1, 17, CP_TEST_D3), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d3 17");
	ck_assert(cp_test_logged(&env, "NAK on d3 in OUTSTANDING -> OUTSTANDING (eliminated)"));
	/* exactly when NAK_ELIM_IVL ends, the next duplicate is forwarded */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(confirmed + CP_MS(1000), 17, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d2 17");
	ck_assert(cp_test_logged(&env, "NAK on d2 in OUTSTANDING -> PENDING (forwarded, "
				       "elimination over)"));
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_PENDING);
	ck_assert_uint_eq(r.rpt_end, confirmed + CP_MS(1000) + CP_MS(2000));
	ck_assert_uint_eq(r.if_mask,
		cp_test_mask(CP_TEST_D1) | cp_test_mask(CP_TEST_D2) | cp_test_mask(CP_TEST_D3));
	/* pending again: discarded */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(confirmed + CP_MS(1100), 17, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 17");
	/* the next confirmation restarts both NAK_ELIM_IVL and NAK_RDATA_IVL */
	ck_assert_int_eq(ncf_at(confirmed + CP_MS(1200), 17, CP_TEST_UP), CP_DROP);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	ck_assert_uint_eq(r.elim_end, confirmed + CP_MS(1200) + CP_MS(1000));
	ck_assert_uint_eq(r.rdata_end, confirmed + CP_MS(1200) + CP_MS(10000));
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(confirmed + CP_MS(1300), 17, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 17");
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_FORWARDED), 2);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_ELIMINATED), 4);
}
END_TEST

START_TEST(test_7_4_elimination_timer_edges)
{
	struct cp_repair_view r;
	cp_time_t confirmed = t0 + CP_MS(50);

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(ncf_at(confirmed, 17, CP_TEST_UP), CP_DROP);
	cp_test_timers(&env, confirmed + CP_MS(1000) - 1);
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert(r.eliminating);
	ck_assert_uint_eq(r.elim_end, confirmed + CP_MS(1000));
	cp_test_timers(&env, confirmed + CP_MS(1000));
	ck_assert(cp_test_repair(&env, 17, &r));
	ck_assert(!r.eliminating);
	ck_assert_uint_eq(r.elim_end, 0);
	ck_assert(cp_test_logged(&env, "sqn 17: NAK_ELIM_IVL timer in OUTSTANDING -> OUTSTANDING "
				       "(elimination over)"));
	/* NAK_RDATA_IVL: one microsecond before, the state lives; at expiry it goes */
	cp_test_timers(&env, confirmed + CP_MS(10000) - 1);
	ck_assert(cp_test_repair(&env, 17, NULL));
	cp_test_timers(&env, confirmed + CP_MS(10000));
	ck_assert(!cp_test_repair(&env, 17, NULL));
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_REPAIR_EXPIRED), 1);
	ck_assert(cp_test_logged(&env, "timer in OUTSTANDING -> deleted (NAK_RDATA_IVL expired"));
}
END_TEST

START_TEST(test_7_2_ncf_rate_limited_per_interface)
{
	/* eight receivers on d1 NAK the same SQN within their back-off */
	for (unsigned i = 0; i < 8; i++)
		ck_assert_int_eq(nak_at(t0 + CP_MS(5) * i, 17, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NCF), 1);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NAK), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NCF_RATE_LIMITED), 7);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NCF_SENT), 1);
	/* the first NAK on another interface gets its NCF at once */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_MS(40), 17, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 17");
	/* one microsecond before the interval ends: still withheld */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0 + CP_MS(50) - 1, 17, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	/* after it, confirmed again */
	ck_assert_int_eq(nak_at(t0 + CP_MS(50), 17, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d1 17");
	/* a steady storm gets a bounded stream: one NCF per interval */
	cp_test_clear(&env);
	for (unsigned i = 0; i < 100; i++)
		nak_at(t0 + CP_MS(100) + CP_MS(1) * i, 17, CP_TEST_D1);
	ck_assert_uint_le(cp_test_count_actions(&env, CP_ACT_NCF), 3);
	ck_assert_uint_ge(cp_test_count_actions(&env, CP_ACT_NCF), 2);
}
END_TEST

START_TEST(test_7_2_ncf_rate_limit_off)
{
	struct cp_if_config cfg;

	cp_if_config_default(&cfg);
	cfg.ncf_ivl_ms = 0;
	cp_if_set_config(env.cp, CP_TEST_D1, &cfg);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NCF), 5);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NCF_RATE_LIMITED), 0);
}
END_TEST

/* 1.2.5: what the router sends as if from the source carries Router Alert so the next PGM router
   takes it; an interface whose equipment drops IP options sends it without (router-alert). */
START_TEST(test_1_2_5_router_alert_per_interface)
{
	struct cp_if_config cfg;

	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d1 17");
	ck_assert(env.actions[1].router_alert);
	cp_if_config_default(&cfg);
	cfg.router_alert = false;
	cp_if_set_config(env.cp, CP_TEST_D2, &cfg);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 18, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 18; NCF d2 18");
	ck_assert(!env.actions[1].router_alert);
	/* the other interfaces keep it */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 19, CP_TEST_D1), CP_DROP);
	ck_assert(env.actions[1].router_alert);
}
END_TEST

START_TEST(test_7_3_udp_encapsulation_kept)
{
	struct cp_test_pkt p;

	/* UDP-encapsulated session (OpenPGM: 3056 for group traffic, 3055 for NAKs) */
	cp_test_spm(&p, 2, 0, 0x80000000u);
	p.ip.udp = true;
	p.ip.udp_sport = 40000;
	p.ip.udp_dport = 3056;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.ip.udp = true;
	p.ip.udp_sport = 41000;
	p.ip.udp_dport = 3055;
	p.ip.router_alert = true;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 17; NCF d1 17");
	ck_assert(env.actions[1].udp);
	ck_assert_uint_eq(env.actions[1].udp_sport, 40000);
	ck_assert_uint_eq(env.actions[1].udp_dport, 3056);
	ck_assert(env.actions[0].udp);
	ck_assert_uint_eq(env.actions[0].udp_sport, 41000);
	ck_assert_uint_eq(env.actions[0].udp_dport, 3055);
	ck_assert(env.actions[0].router_alert);
	/* repeats keep the NAK's ports */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
	ck_assert(env.actions[0].udp);
	ck_assert_uint_eq(env.actions[0].udp_dport, 3055);
}
END_TEST

START_TEST(test_7_3_udp_session_repeat_ports)
{
	struct cp_test_pkt p;

	/* the NAK came over IP, the session is encapsulated: repeats use the session's port */
	cp_test_spm(&p, 2, 0, 0x80000000u);
	p.ip.udp = true;
	p.ip.udp_sport = 3056;
	p.ip.udp_dport = 3056;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
	ck_assert(env.actions[0].udp);
	ck_assert_uint_eq(env.actions[0].udp_dport, 3056);
	/* and an encapsulated NAK to a session over IP gets an encapsulated NCF back */
	cp_test_spm(&p, 3, 0, 0x80000000u);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	cp_test_clear(&env);
	cp_test_nak(&p, PGM_NAK, 18, NULL, 0);
	p.ip.udp = true;
	p.ip.udp_sport = 41000;
	p.ip.udp_dport = 3055;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert(env.actions[1].udp);
	ck_assert_uint_eq(env.actions[1].udp_sport, 3055);
	ck_assert_uint_eq(env.actions[1].udp_dport, 41000);
}
END_TEST

START_TEST(test_7_2_nak_on_interface_without_assist)
{
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_NA), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_XX), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_NA, CP_C_NAK_NOT_ASSISTED), 1);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_NAK_NOT_ASSISTED), 1);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

START_TEST(test_7_3_nak_transit_passes)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.ip.dst = cp_test_nla("198.18.0.10"); /* to the source, through us */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, CP_TEST_UP), CP_ACCEPT);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_TRANSIT), 1);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

START_TEST(test_7_3_nak_window)
{
	struct cp_config cfg;
	struct cp_test_pkt p;

	cp_test_spm(&p, 2, 100, 200);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	cp_test_clear(&env);
	/* behind the trailing edge: the source cannot repair it */
	ck_assert_int_eq(nak_at(t0, 99, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_OUT_OF_WINDOW), 1);
	ck_assert_int_eq(nak_at(t0, 100, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 200, CP_TEST_D1), CP_DROP);
	/* beyond the leading edge: SPMs lag the data, so up to 2^24 ahead is fine */
	ck_assert_int_eq(nak_at(t0, 200 + (1u << 24), CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 3);
	ck_assert_int_eq(nak_at(t0, 201 + (1u << 24), CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 3);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_OUT_OF_WINDOW), 2);
	/* a NAK list with one SQN outside is refused whole */
	{
		uint32_t list[] = {150, 50};

		cp_test_nak(&p, PGM_NAK, 120, list, 2);
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
		ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_OUT_OF_WINDOW), 3);
	}
	/* the check can be turned off */
	cp_config_default(&cfg);
	cfg.nak_window_check = false;
	cp_set_config(env.cp, &cfg);
	ck_assert_int_eq(nak_at(t0, 99, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 4);
	/* no window information (TRAIL 0, LEAD 0x80000000) means no check */
	cfg.nak_window_check = true;
	cp_set_config(env.cp, &cfg);
	cp_test_spm(&p, 3, 0, 0x80000000u);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(nak_at(t0, 0xf0000000u, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 5);
	/* nor does a window wider than half the space */
	cp_test_spm(&p, 4, 10, 0x90000000u);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 6);
}
END_TEST

START_TEST(test_timers_follow_upstream_interface_config)
{
	struct cp_if_config up, down;

	cp_if_config_default(&up);
	up.nak_rpt_ivl_ms = 500;
	up.nak_rpt_rate = 10;
	cp_if_set_config(env.cp, CP_TEST_UP, &up);
	/* the arrival interface's timers do not matter, its NCF interval does */
	cp_if_config_default(&down);
	down.nak_rpt_ivl_ms = 60000;
	down.nak_rpt_rate = 1;
	down.ncf_ivl_ms = 0;
	cp_if_set_config(env.cp, CP_TEST_D1, &down);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_count_actions(&env, CP_ACT_NCF), 2);
	cp_test_clear(&env);
	for (unsigned k = 1; k <= 4; k++) {
		cp_test_timers(&env, t0 + CP_MS(100) * k);
		ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
		cp_test_clear(&env);
	}
	cp_test_timers(&env, t0 + CP_MS(500));
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert(!cp_test_repair(&env, 17, NULL));
}
END_TEST

START_TEST(test_7_3_no_repeats_at_rate_zero)
{
	struct cp_config cfg;

	cp_config_default(&cfg);
	cfg.if_defaults.nak_rpt_rate = 0;
	restart(&cfg);
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(1999));
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert(cp_test_repair(&env, 17, NULL));
	cp_test_timers(&env, t0 + CP_MS(2000));
	ck_assert(!cp_test_repair(&env, 17, NULL));
}
END_TEST

START_TEST(test_7_3_late_timer_run_keeps_rate)
{
	ck_assert_int_eq(nak_at(t0, 17, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	/* the loop was busy for 650 ms: one repeat now, the next a period later */
	cp_test_timers(&env, t0 + CP_MS(650));
	ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(850) - 1);
	ck_assert_str_eq(ACTIONS(), "");
	cp_test_timers(&env, t0 + CP_MS(850));
	ck_assert_str_eq(ACTIONS(), "NAK up 17 rpt");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: NAK (7.2, 7.3, 7.4, 7.7)");
	TCase *tc = tcase_create("nak");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_7_2_nak_confirmed_and_forwarded);
	tcase_add_test(tc, test_1_2_5_router_alert_per_interface);
	tcase_add_test(tc, test_7_2_duplicate_confirmed_adds_interface);
	tcase_add_test(tc, test_7_2_nak_on_upstream_interface_dropped);
	tcase_add_test(tc, test_7_7_nak_addresses_must_match_session);
	tcase_add_test(tc, test_7_7_nak_without_session_dropped);
	tcase_add_test(tc, test_13_6_nak_without_session_solicits_spm);
	tcase_add_test(tc, test_13_6_spmr_only_along_a_route);
	tcase_add_test(tc, test_13_6_spmr_rate_limited_per_interface);
	tcase_add_test(tc, test_13_6_unrouted_nak_flood_walks_routes_at_rate);
	tcase_add_test(tc, test_13_6_solicited_spm_restores_assist);
	tcase_add_test(tc, test_7_7_nak_naming_the_router_openpgm);
	tcase_add_test(tc, test_9_3_unordered_list_counted);
	tcase_add_test(tc, test_7_3_repeated_at_rate_until_rpt_ivl);
	tcase_add_test(tc, test_7_3_repeat_fields_built_from_state);
	tcase_add_test(tc, test_7_3_ncf_stops_repeats);
	tcase_add_test(tc, test_7_3_ncf_after_rpt_ivl_expired_anticipates);
	tcase_add_test(tc, test_7_3_expiry_without_timer_run);
	tcase_add_test(tc, test_7_3_repeats_grouped_into_nak_lists);
	tcase_add_test(tc, test_7_3_repeat_list_never_wraps);
	tcase_add_test(tc, test_7_4_elimination_cycle);
	tcase_add_test(tc, test_7_4_elimination_timer_edges);
	tcase_add_test(tc, test_7_2_ncf_rate_limited_per_interface);
	tcase_add_test(tc, test_7_2_ncf_rate_limit_off);
	tcase_add_test(tc, test_7_3_udp_encapsulation_kept);
	tcase_add_test(tc, test_7_3_udp_session_repeat_ports);
	tcase_add_test(tc, test_7_2_nak_on_interface_without_assist);
	tcase_add_test(tc, test_7_3_nak_transit_passes);
	tcase_add_test(tc, test_7_3_nak_window);
	tcase_add_test(tc, test_timers_follow_upstream_interface_config);
	tcase_add_test(tc, test_7_3_no_repeats_at_rate_zero);
	tcase_add_test(tc, test_7_3_late_timer_run_keeps_rate);
	suite_add_tcase(s, tc);
	return check_run(s);
}

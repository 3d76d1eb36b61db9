/*
 * The control plane on real bytes: datagrams built with the wire codec, parsed, handed to the
 * core; verdict rewrites applied and actions built the way the data plane does, then parsed
 * again to check what would go on the wire.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_util.h"
#include "tests/unit/check_run.h"

#define BUF 2048

static struct cp_test_env env;
static struct pgm_udp_ports ports;
static const uint8_t gsi[PGM_GSI_LEN] = {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};

struct datagram {
	uint8_t buf[BUF];
	size_t len;
	struct pgm_ip ip;
	struct pgm_packet pkt;
};

static void setup(void)
{
	cp_test_env_init(&env, NULL);
	pgm_udp_ports_default(&ports);
}

static void teardown(void)
{
	cp_test_env_free(&env);
}

static struct pgm_header_params downstream(void)
{
	struct pgm_header_params h = {.sport = CP_TEST_SPORT, .dport = CP_TEST_DPORT};

	memcpy(h.gsi, gsi, PGM_GSI_LEN);
	return h;
}

static struct pgm_header_params upstream(void)
{
	struct pgm_header_params h = {.sport = CP_TEST_DPORT, .dport = CP_TEST_SPORT};

	memcpy(h.gsi, gsi, PGM_GSI_LEN);
	return h;
}

static void parse(struct datagram *d)
{
	enum pgm_err err = pgm_parse_datagram(d->buf, d->len, &ports, 0, &d->ip, &d->pkt);

	ck_assert_msg(err == PGM_ERR_OK, "parse: %s", pgm_err_name(err));
}

/* Wraps a TPDU in IP (and UDP when udp_port is set) and parses the result. */
static void wrap(struct datagram *d, const uint8_t *tpdu, size_t len, const char *src,
	const char *dst, bool router_alert, uint16_t udp_port)
{
	struct pgm_ip_params ip = {
		.src = cp_test_nla(src),
		.dst = cp_test_nla(dst),
		.ttl = 16,
		.router_alert = router_alert,
		.udp = udp_port != 0,
		.udp_sport = udp_port,
		.udp_dport = udp_port,
	};

	d->len = pgm_build_ip(d->buf, sizeof(d->buf), &ip, tpdu, len);
	ck_assert_uint_gt(d->len, 0);
	parse(d);
}

static enum cp_verdict feed(struct datagram *d, int in, int out)
{
	struct cp_packet p = {&d->ip, &d->pkt, in, out, env.now, false};

	cp_packet(env.cp, &p, &env.res);
	return env.res.verdict;
}

/* What the data plane does with an accepted copy: apply the rewrite, then parse it again. */
static void apply_rewrite(const struct datagram *in, struct datagram *copy)
{
	uint8_t *tpdu;
	struct pgm_packet orig;

	*copy = *in;
	tpdu = copy->buf + copy->ip.pgm_offset;
	/* the parsed struct points into the original buffer; rewrites go to the copy */
	orig = in->pkt;
	if (env.res.rewrite.spm_path)
		ck_assert(pgm_rewrite_spm_path(tpdu, &orig, &env.res.rewrite.path));
	if (env.res.rewrite.nak_bo_ivl)
		ck_assert(pgm_rewrite_nak_bo_ivl(tpdu, &orig, env.res.rewrite.nak_bo_ivl_us,
			env.res.rewrite.nak_bo_ivl_sqn));
	for (unsigned i = 0; i < PGM_MAX_OPTIONS; i++) {
		if (env.res.rewrite.opt_invalid_mask & (1u << i))
			ck_assert(pgm_rewrite_opt_invalid(tpdu, &orig, i));
	}
	if (copy->ip.udp)
		pgm_ip_fix_udp_checksum(copy->buf, &copy->ip);
	parse(copy);
}

/* What the data plane does with an action: build the datagram, then parse it. */
static void build_action(
	const struct cp_action *a, const struct datagram *from, struct datagram *out)
{
	uint8_t tpdu[BUF];
	size_t len;
	struct pgm_build_options o;
	struct cp_if_view ifv;
	struct pgm_ip_params ip;

	memset(&o, 0, sizeof(o));
	if (a->type == CP_ACT_NCF) {
		ck_assert(a->from_packet);
		o.nak_bo_ivl = a->nak_bo_ivl;
		o.nak_bo_ivl_us = a->nak_bo_ivl_us;
		o.nak_bo_ivl_sqn = a->nak_bo_ivl_sqn;
		len = pgm_build_ncf_from_nak(tpdu, sizeof(tpdu), &from->pkt, a->pkt_cnt, &o);
	} else if (a->from_packet) {
		memcpy(tpdu, from->pkt.tpdu, from->pkt.tpdu_len);
		len = from->pkt.tpdu_len;
		if (a->nak_src_rewrite)
			ck_assert(pgm_rewrite_nak_src(tpdu, &from->pkt, &a->nak_src));
		for (unsigned i = 0; i < PGM_MAX_OPTIONS; i++) {
			if (a->opt_invalid_mask & (1u << i))
				ck_assert(pgm_rewrite_opt_invalid(tpdu, &from->pkt, i));
		}
	} else {
		o.nak_list = a->list;
		o.nak_list_count = a->list_count;
		len = pgm_build_nak_for_tsi(tpdu, sizeof(tpdu),
			a->type == CP_ACT_NNAK ? PGM_NNAK : PGM_NAK, &a->tsi, a->data_dport, a->sqn,
			&a->nak_src, &a->nak_grp, &o);
	}
	ck_assert_uint_gt(len, 0);
	memset(&ip, 0, sizeof(ip));
	ck_assert(cp_get_if(env.cp, a->ifindex, &ifv));
	ip.src = a->ip_src.afi != 0 ? a->ip_src : ifv.addr;
	ip.dst = a->ip_dst;
	ip.ttl = 255;
	ip.router_alert = a->router_alert;
	ip.udp = a->udp;
	ip.udp_sport = a->udp_sport;
	ip.udp_dport = a->udp_dport;
	out->len = pgm_build_ip(out->buf, sizeof(out->buf), &ip, tpdu, len);
	ck_assert_uint_gt(out->len, 0);
	parse(out);
}

static void send_spm(uint32_t sqn, uint16_t udp_port)
{
	struct pgm_header_params h = downstream();
	struct pgm_nla path = cp_test_nla(CP_TEST_UPSTREAM);
	struct datagram d;
	uint8_t tpdu[BUF];
	size_t len = pgm_build_spm(tpdu, sizeof(tpdu), &h, sqn, 0, 0x80000000u, &path, NULL);

	wrap(&d, tpdu, len, CP_TEST_SOURCE, CP_TEST_GROUP, true, udp_port);
	ck_assert_int_eq(feed(&d, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
}

START_TEST(test_wire_spm_copies_rewritten)
{
	struct pgm_header_params h = downstream();
	struct pgm_nla path = cp_test_nla(CP_TEST_UPSTREAM);
	struct pgm_build_options o;
	struct cp_if_config cfg;
	struct datagram d, c1, c2;
	uint8_t tpdu[BUF];
	size_t len;
	struct cp_session_view v;

	cp_if_config_default(&cfg);
	cfg.nak_bo_ivl_us = 300000;
	cp_if_set_config(env.cp, CP_TEST_D1, &cfg);
	memset(&o, 0, sizeof(o));
	o.nak_bo_ivl = true;
	o.nak_bo_ivl_us = 50000;
	o.nak_bo_ivl_sqn = 7;
	len = pgm_build_spm(tpdu, sizeof(tpdu), &h, 5, 1, 100, &path, &o);
	wrap(&d, tpdu, len, CP_TEST_SOURCE, CP_TEST_GROUP, true, 0);

	ck_assert_int_eq(feed(&d, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	apply_rewrite(&d, &c1);
	ck_assert_int_eq(feed(&d, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	apply_rewrite(&d, &c2);

	path = cp_test_nla("198.18.1.1");
	ck_assert(pgm_nla_equal(&c1.pkt.path, &path));
	ck_assert_uint_eq(c1.pkt.opt.nak_bo_ivl, 300000);
	ck_assert_uint_eq(c1.pkt.opt.nak_bo_ivl_sqn, 0);
	path = cp_test_nla("198.18.2.1");
	ck_assert(pgm_nla_equal(&c2.pkt.path, &path));
	ck_assert_uint_eq(c2.pkt.opt.nak_bo_ivl, 50000);
	/* nothing else changed */
	ck_assert_uint_eq(c1.pkt.sqn, 5);
	ck_assert_uint_eq(c1.pkt.trail, 1);
	ck_assert_uint_eq(c1.pkt.lead, 100);
	ck_assert_uint_eq(c1.len, d.len);
	ck_assert(cp_test_session(&env, &v));
	ck_assert(pgm_nla_equal(&v.source, &d.ip.src));
	ck_assert(pgm_nla_equal(&v.upstream, &d.pkt.path));
}
END_TEST

START_TEST(test_wire_nak_gives_ncf_and_forwards_intact)
{
	struct pgm_header_params h = upstream();
	struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE), grp = cp_test_nla(CP_TEST_GROUP);
	struct pgm_nla up_addr = cp_test_nla("198.18.0.1");
	static const uint32_t list[] = {18, 19};
	struct pgm_build_options o;
	struct datagram d, ncf, nak;
	struct pgm_tsi tsi;
	uint8_t tpdu[BUF];
	size_t len;

	send_spm(1, 0);
	cp_test_clear(&env);
	memset(&o, 0, sizeof(o));
	o.nak_list = list;
	o.nak_list_count = 2;
	len = pgm_build_nak(tpdu, sizeof(tpdu), PGM_NAK, &h, 17, &src, &grp, &o);
	wrap(&d, tpdu, len, "198.18.1.50", "198.18.1.1", false, 0);
	ck_assert_int_eq(feed(&d, CP_TEST_D1, 0), CP_DROP);
	ck_assert_uint_eq(env.nactions, 2);

	build_action(&env.actions[1], &d, &ncf);
	ck_assert_uint_eq(ncf.pkt.type, PGM_NCF);
	ck_assert(ncf.ip.router_alert);
	ck_assert(pgm_nla_equal(&ncf.ip.src, &src));
	ck_assert(pgm_nla_equal(&ncf.ip.dst, &grp));
	pgm_packet_tsi(&ncf.pkt, &tsi);
	ck_assert_uint_eq(tsi.sport, CP_TEST_SPORT);
	ck_assert_uint_eq(ncf.pkt.sport, CP_TEST_SPORT); /* downstream form again */
	ck_assert_uint_eq(ncf.pkt.dport, CP_TEST_DPORT);
	ck_assert_uint_eq(ncf.pkt.sqn, 17);
	ck_assert_uint_eq(ncf.pkt.opt.nak_list_count, 2);
	ck_assert_uint_eq(pgm_opt_nak_list_sqn(&ncf.pkt.opt, 1), 19);

	build_action(&env.actions[0], &d, &nak);
	ck_assert_uint_eq(nak.pkt.type, PGM_NAK);
	ck_assert(pgm_nla_equal(&nak.ip.src, &up_addr));
	ck_assert_uint_eq(nak.pkt.tpdu_len, d.pkt.tpdu_len);
	ck_assert_mem_eq(nak.pkt.tpdu, d.pkt.tpdu, d.pkt.tpdu_len);

	/* the NCF we would send, heard back on the upstream side, confirms */
	ck_assert_int_eq(feed(&ncf, CP_TEST_UP, 0), CP_DROP);
	{
		struct cp_repair_view r;

		ck_assert(cp_test_repair(&env, 18, &r));
		ck_assert_int_eq(r.phase, CP_PHASE_OUTSTANDING);
	}
}
END_TEST

START_TEST(test_wire_repeats_parse)
{
	struct pgm_header_params h = upstream();
	struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE), grp = cp_test_nla(CP_TEST_GROUP);
	struct datagram d, rpt;
	uint8_t tpdu[BUF];
	size_t len;
	struct pgm_tsi tsi;

	send_spm(1, 0);
	for (uint32_t sqn = 100; sqn < 170; sqn++) {
		len = pgm_build_nak(tpdu, sizeof(tpdu), PGM_NAK, &h, sqn, &src, &grp, NULL);
		wrap(&d, tpdu, len, "198.18.1.50", "198.18.1.1", false, 0);
		ck_assert_int_eq(feed(&d, CP_TEST_D1, 0), CP_DROP);
	}
	cp_test_clear(&env);
	cp_test_timers(&env, env.now + CP_MS(200));
	ck_assert_uint_eq(env.nactions, 2);
	for (size_t i = 0; i < env.nactions; i++) {
		build_action(&env.actions[i], NULL, &rpt);
		ck_assert_uint_eq(rpt.pkt.type, PGM_NAK);
		pgm_packet_tsi(&rpt.pkt, &tsi);
		ck_assert_uint_eq(tsi.sport, CP_TEST_SPORT);
		ck_assert_mem_eq(tsi.gsi, gsi, PGM_GSI_LEN);
		ck_assert_uint_eq(pgm_packet_data_dport(&rpt.pkt), CP_TEST_DPORT);
		ck_assert(pgm_nla_equal(&rpt.pkt.nak_src, &src));
		ck_assert_uint_eq(rpt.pkt.sqn, i == 0 ? 100 : 163);
		ck_assert_uint_eq(rpt.pkt.opt.nak_list_count, i == 0 ? 62 : 6);
	}
}
END_TEST

START_TEST(test_wire_opx_invalidate)
{
	struct pgm_header_params h = downstream();
	struct pgm_nla path = cp_test_nla(CP_TEST_UPSTREAM);
	static const uint8_t unknown[] = {
		0x2a, 4, PGM_OPX_INVALIDATE, 0, 0x2b, 4, PGM_OPX_RESERVED, 0};
	struct pgm_build_options o;
	struct datagram d, c;
	uint8_t tpdu[BUF];
	size_t len;

	memset(&o, 0, sizeof(o));
	o.raw = unknown;
	o.raw_len = sizeof(unknown);
	len = pgm_build_spm(tpdu, sizeof(tpdu), &h, 1, 0, 0x80000000u, &path, &o);
	wrap(&d, tpdu, len, CP_TEST_SOURCE, CP_TEST_GROUP, true, 0);
	ck_assert_uint_eq(d.pkt.opt.opx_invalidate, 1);
	ck_assert_int_eq(feed(&d, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(env.res.rewrite.opt_invalid_mask, 1u << 1);
	apply_rewrite(&d, &c);
	ck_assert_uint_eq(c.pkt.opt.type[1], PGM_OPT_INVALID);
	ck_assert_uint_eq(c.pkt.opt.type[2], 0x2b);
	ck_assert_uint_eq(c.pkt.opt.opx_invalidate, 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_OPX_RESERVED), 1);
}
END_TEST

START_TEST(test_wire_udp_encapsulation)
{
	struct pgm_header_params h = upstream();
	struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE), grp = cp_test_nla(CP_TEST_GROUP);
	struct datagram d, out;
	uint8_t tpdu[BUF];
	size_t len;
	struct cp_session_view v;

	send_spm(1, PGM_DEFAULT_UDP_MCAST_PORT);
	ck_assert(cp_test_session(&env, &v));
	ck_assert(v.udp);
	cp_test_clear(&env);
	len = pgm_build_nak(tpdu, sizeof(tpdu), PGM_NAK, &h, 9, &src, &grp, NULL);
	wrap(&d, tpdu, len, "198.18.1.50", "198.18.1.1", false, PGM_DEFAULT_UDP_UCAST_PORT);
	ck_assert(d.ip.udp);
	ck_assert_int_eq(feed(&d, CP_TEST_D1, 0), CP_DROP);
	ck_assert_uint_eq(env.nactions, 2);
	build_action(&env.actions[1], &d, &out);
	ck_assert(out.ip.udp);
	ck_assert_uint_eq(out.ip.udp_dport, PGM_DEFAULT_UDP_MCAST_PORT);
	build_action(&env.actions[0], &d, &out);
	ck_assert(out.ip.udp);
	ck_assert_uint_eq(out.ip.udp_dport, PGM_DEFAULT_UDP_UCAST_PORT);
}
END_TEST

START_TEST(test_wire_rdata_constrained)
{
	struct pgm_header_params hu = upstream(), hd = downstream();
	struct pgm_nla src = cp_test_nla(CP_TEST_SOURCE), grp = cp_test_nla(CP_TEST_GROUP);
	struct datagram d, r;
	uint8_t tpdu[BUF];
	size_t len;
	static const char payload[] = "repair";

	send_spm(1, 0);
	len = pgm_build_nak(tpdu, sizeof(tpdu), PGM_NAK, &hu, 30, &src, &grp, NULL);
	wrap(&d, tpdu, len, "198.18.2.50", "198.18.2.1", false, 0);
	ck_assert_int_eq(feed(&d, CP_TEST_D2, 0), CP_DROP);
	len = pgm_build_data(
		tpdu, sizeof(tpdu), PGM_RDATA, &hd, 30, 1, payload, sizeof(payload), NULL);
	wrap(&r, tpdu, len, CP_TEST_SOURCE, CP_TEST_GROUP, true, 0);
	ck_assert_int_eq(feed(&r, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(feed(&r, CP_TEST_UP, CP_TEST_D2), CP_ACCEPT);
	ck_assert(!cp_test_repair(&env, 30, NULL));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: on the wire");
	TCase *tc = tcase_create("wire");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_wire_spm_copies_rewritten);
	tcase_add_test(tc, test_wire_nak_gives_ncf_and_forwards_intact);
	tcase_add_test(tc, test_wire_repeats_parse);
	tcase_add_test(tc, test_wire_opx_invalidate);
	tcase_add_test(tc, test_wire_udp_encapsulation);
	tcase_add_test(tc, test_wire_rdata_constrained);
	suite_add_tcase(s, tc);
	return check_run(s);
}

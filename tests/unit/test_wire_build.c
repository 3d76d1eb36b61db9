/*
 * Builders, re-serialization, in-place rewrites, the IP/UDP wrapper and the one-line format:
 * build -> parse -> rebuild round trips that must be byte-identical, NCFs made from NAKs,
 * incremental checksums checked against full recomputation.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_test.h"
#include "tests/unit/check_run.h"

#define BUF	  2048
#define MAX_CASES 128

static struct wire_test_case *cases;
static size_t n_cases;

static void setup(void)
{
	cases = calloc(MAX_CASES, sizeof(*cases));
	ck_assert_ptr_nonnull(cases);
	n_cases = wire_test_catalog(cases, MAX_CASES);
	ck_assert_uint_le(n_cases, MAX_CASES);
}

static void teardown(void)
{
	free(cases);
}

static void parse_ok(const uint8_t *b, size_t n, struct pgm_packet *p)
{
	enum pgm_err err = pgm_parse(b, n, 0, p);

	ck_assert_msg(err == PGM_ERR_OK, "parse: %s", pgm_err_name(err));
}

/* Parse, rebuild through the builders with the same fields, compare bytes; the same through
 * pgm_packet_serialize; and the re-parsed copy has the same fields. */
START_TEST(test_catalog_round_trip)
{
	const struct wire_test_case *c = &cases[_i];
	uint8_t out[BUF];
	struct pgm_packet p, q;
	size_t n;

	ck_assert_msg(pgm_parse(c->tpdu, c->len, 0, &p) == PGM_ERR_OK, "%s", c->name);
	n = wire_test_rebuild(&p, out, sizeof(out));
	ck_assert_msg(n == c->len, "%s: rebuilt %zu bytes, not %zu", c->name, n, c->len);
	if (p.checksum == 0)
		out[6] = out[7] = 0; /* the builders always checksum; this one was sent without */
	ck_assert_msg(memcmp(out, c->tpdu, n) == 0, "%s: rebuild differs", c->name);

	memset(out, 0xa5, sizeof(out));
	n = pgm_packet_serialize(out, sizeof(out), &p);
	ck_assert_msg(
		n == c->len && memcmp(out, c->tpdu, n) == 0, "%s: serialize differs", c->name);

	parse_ok(out, n, &q);
	ck_assert_uint_eq(q.type, p.type);
	ck_assert_uint_eq(q.sqn, p.sqn);
	ck_assert_uint_eq(q.opt.count, p.opt.count);
	ck_assert_uint_eq(q.opt.present, p.opt.present);
	ck_assert_mem_eq(q.opt.offset, p.opt.offset, p.opt.count * sizeof(p.opt.offset[0]));
	ck_assert_mem_eq(q.opt.type, p.opt.type, p.opt.count);
	ck_assert_mem_eq(q.opt.flags, p.opt.flags, p.opt.count);
	ck_assert_mem_eq(q.opt.specific, p.opt.specific, p.opt.count);
}
END_TEST

/* Builders refuse any capacity below the packet and never write past it. */
START_TEST(test_catalog_small_capacity)
{
	const struct wire_test_case *c = &cases[_i];
	static uint8_t out[BUF + 16];
	struct pgm_packet p;
	size_t cap;

	parse_ok(c->tpdu, c->len, &p);
	for (cap = 0; cap < c->len; cap++) {
		memset(out, 0x5a, sizeof(out));
		ck_assert_uint_eq(wire_test_rebuild(&p, out, cap), 0);
		ck_assert_uint_eq(pgm_packet_serialize(out, cap, &p), 0);
		ck_assert_uint_eq(out[cap], 0x5a);
	}
}
END_TEST

START_TEST(test_builder_fields)
{
	struct pgm_header_params down = wire_test_downstream(), up = wire_test_upstream();
	struct pgm_nla s4 = wire_test_nla("198.18.0.1"), g6 = wire_test_nla("ff3e::8000:1");
	struct pgm_nla p6 = wire_test_nla("2001:db8:1::1");
	uint8_t b[BUF];
	struct pgm_packet p;

	parse_ok(b, pgm_build_spm(b, sizeof(b), &down, 11, 22, 33, &p6, NULL), &p);
	ck_assert_uint_eq(p.type, PGM_SPM);
	ck_assert_uint_eq(p.sport, WIRE_TEST_SPORT);
	ck_assert_uint_eq(p.dport, WIRE_TEST_DPORT);
	ck_assert_mem_eq(p.gsi, wire_test_gsi, PGM_GSI_LEN);
	ck_assert_uint_eq(p.sqn, 11);
	ck_assert_uint_eq(p.trail, 22);
	ck_assert_uint_eq(p.lead, 33);
	ck_assert(pgm_nla_equal(&p.path, &p6));
	ck_assert_uint_eq(p.tpdu_len, 48);

	parse_ok(b, pgm_build_poll(b, sizeof(b), &down, 5, 6, 1, &p6, 7, 8, 9, NULL), &p);
	ck_assert_uint_eq(p.sqn, 5);
	ck_assert_uint_eq(p.poll_round, 6);
	ck_assert_uint_eq(p.poll_s_type, 1);
	ck_assert(pgm_nla_equal(&p.path, &p6));
	ck_assert_uint_eq(p.poll_bo_ivl, 7);
	ck_assert_uint_eq(p.poll_rand, 8);
	ck_assert_uint_eq(p.poll_mask, 9);
	ck_assert_uint_eq(p.tpdu_len, 56);

	parse_ok(b, pgm_build_nak(b, sizeof(b), PGM_NNAK, &up, 99, &s4, &g6, NULL), &p);
	ck_assert_uint_eq(p.type, PGM_NNAK);
	ck_assert_uint_eq(p.sport, WIRE_TEST_DPORT);
	ck_assert(pgm_nla_equal(&p.nak_src, &s4));
	ck_assert(pgm_nla_equal(&p.nak_grp, &g6));
	ck_assert_uint_eq(p.tpdu_len, 16 + 4 + 8 + 20);

	parse_ok(b, pgm_build_polr(b, sizeof(b), &up, 1, 2, NULL), &p);
	ck_assert_uint_eq(p.polr_round, 2);
	parse_ok(b, pgm_build_spmr(b, sizeof(b), &up, NULL), &p);
	ck_assert_uint_eq(p.tpdu_len, 16);
	parse_ok(b, pgm_build_data(b, sizeof(b), PGM_ODATA, &down, 1, 0, NULL, 0, NULL), &p);
	ck_assert_uint_eq(p.tsdu_len, 0); /* an empty TSDU is legal */
}
END_TEST

START_TEST(test_builder_invalid_params)
{
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla good = wire_test_nla("198.18.0.1"), bad = {.afi = 3};
	uint32_t list[63] = {0};
	static const uint8_t ragged[5] = {0x20, 4, 0, 0, 0};
	struct pgm_build_options o;
	uint8_t b[BUF];

	ck_assert_uint_eq(pgm_build_spm(b, sizeof(b), &h, 1, 2, 3, &bad, NULL), 0);
	ck_assert_uint_eq(pgm_build_nak(b, sizeof(b), PGM_SPM, &h, 1, &good, &good, NULL), 0);
	ck_assert_uint_eq(pgm_build_nak(b, sizeof(b), PGM_NAK, &h, 1, &good, &bad, NULL), 0);
	ck_assert_uint_eq(pgm_build_data(b, sizeof(b), PGM_NAK, &h, 1, 2, "x", 1, NULL), 0);
	ck_assert_uint_eq(pgm_build_data(b, sizeof(b), PGM_ODATA, &h, 1, 2, NULL, 1, NULL), 0);
	memset(&o, 0, sizeof(o));
	o.nak_list = list;
	o.nak_list_count = 63;
	ck_assert_uint_eq(pgm_build_nak(b, sizeof(b), PGM_NAK, &h, 1, &good, &good, &o), 0);
	memset(&o, 0, sizeof(o));
	o.raw = ragged;
	o.raw_len = sizeof(ragged);
	ck_assert_uint_eq(pgm_build_spm(b, sizeof(b), &h, 1, 2, 3, &good, &o), 0);
	memset(&o, 0, sizeof(o));
	o.redirect = &bad;
	ck_assert_uint_eq(pgm_build_polr(b, sizeof(b), &h, 1, 2, &o), 0);
	memset(&o, 0, sizeof(o));
	o.cr = true; /* without a receiver NLA */
	ck_assert_uint_eq(pgm_build_nak(b, sizeof(b), PGM_NAK, &h, 1, &good, &good, &o), 0);
}
END_TEST

/* The plain NAK's NCF: the bytes of the general builder, and a refusal for any other NAK. */
START_TEST(test_ncf_from_plain_nak)
{
	static const char *const addrs[][2] = {{"198.18.0.1", "239.192.0.9"},
		{"2001:db8::1", "239.192.0.9"}, {"198.18.0.1", "ff3e::8000:1"}};
	struct pgm_header_params up = wire_test_upstream();
	uint8_t nak[BUF], plain[BUF], general[BUF];
	struct pgm_packet n;
	size_t len;

	for (unsigned i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct pgm_nla s = wire_test_nla(addrs[i][0]), g = wire_test_nla(addrs[i][1]);

		parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 4000000000u + i, &s, &g,
				      NULL),
			&n);
		len = pgm_build_ncf_from_plain_nak(plain, sizeof(plain), &n);
		ck_assert_uint_gt(len, 0);
		ck_assert_uint_eq(len, pgm_build_ncf_from_nak(general, sizeof(general), &n, 0, NULL));
		ck_assert_mem_eq(plain, general, len);
		ck_assert(pgm_csum_verifies(plain, len));
		/* the buffer must hold it */
		ck_assert_uint_eq(pgm_build_ncf_from_plain_nak(plain, len - 1, &n), 0);
	}
	{
		struct pgm_nla s = wire_test_nla("198.18.0.1"), g = wire_test_nla("239.192.0.9");
		uint32_t list[1] = {7};
		struct pgm_build_options with_list = {.nak_list = list, .nak_list_count = 1};
		struct pgm_build_options parity = {.extra_header_flags = PGM_OPT_PARITY};

		/* options, parity, a nonzero reserved half, another type: the general path's */
		parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 5, &s, &g, &with_list), &n);
		ck_assert_uint_eq(pgm_build_ncf_from_plain_nak(plain, sizeof(plain), &n), 0);
		parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 5, &s, &g, &parity), &n);
		ck_assert_uint_eq(pgm_build_ncf_from_plain_nak(plain, sizeof(plain), &n), 0);
		len = pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 5, &s, &g, NULL);
		nak[PGM_HEADER_LEN + 4 + 3] = 1;
		pgm_checksum_set(nak, len);
		parse_ok(nak, len, &n);
		ck_assert_uint_eq(pgm_build_ncf_from_plain_nak(plain, sizeof(plain), &n), 0);
		parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NNAK, &up, 5, &s, &g, NULL), &n);
		ck_assert_uint_eq(pgm_build_ncf_from_plain_nak(plain, sizeof(plain), &n), 0);
	}
}
END_TEST

/* NCF from a NAK (7.2, 8.3, 9.3.3, 11.6). */
START_TEST(test_ncf_from_nak)
{
	struct pgm_header_params up = wire_test_upstream();
	struct pgm_nla s = wire_test_nla("2001:db8::1"), g = wire_test_nla("239.192.0.9");
	struct pgm_nla rcvr = wire_test_nla("198.18.2.7"), me = wire_test_nla("198.18.1.1");
	uint32_t list[3] = {201, 202, 230};
	struct pgm_build_options nak_opts = {
		.nak_list = list, .nak_list_count = 3, .cr = true, .cr_rcvr = &rcvr};
	struct pgm_build_options ncf_opts = {
		.nak_bo_ivl = true, .nak_bo_ivl_us = 30000, .nbr_unreach = true, .path_nla = &me};
	uint8_t nak[BUF], ncf[BUF];
	struct pgm_packet n, c;
	struct pgm_tsi nak_tsi, ncf_tsi;
	unsigned i;

	parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 200, &s, &g, &nak_opts), &n);
	parse_ok(ncf, pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 0, NULL), &c);
	ck_assert_uint_eq(c.type, PGM_NCF);
	/* ports back in downstream form */
	ck_assert_uint_eq(c.sport, n.dport);
	ck_assert_uint_eq(c.dport, n.sport);
	ck_assert_uint_eq(c.sport, WIRE_TEST_SPORT);
	pgm_packet_tsi(&n, &nak_tsi);
	pgm_packet_tsi(&c, &ncf_tsi);
	ck_assert(pgm_tsi_equal(&nak_tsi, &ncf_tsi));
	ck_assert_uint_eq(pgm_packet_data_dport(&c), pgm_packet_data_dport(&n));
	ck_assert_uint_eq(c.sqn, 200);
	ck_assert(pgm_nla_equal(&c.nak_src, &s));
	ck_assert(pgm_nla_equal(&c.nak_grp, &g));
	ck_assert_uint_eq(c.opt.nak_list_count, 3);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(pgm_opt_nak_list_sqn(&c.opt, i), list[i]);
	ck_assert(!pgm_opt_has(&c.opt, PGM_OPT_CR)); /* receiver options are not copied */
	ck_assert(!pgm_packet_is_parity(&c));

	/* with the NE's own options */
	parse_ok(ncf, pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 0, &ncf_opts), &c);
	ck_assert_uint_eq(c.opt.nak_bo_ivl, 30000);
	ck_assert(pgm_opt_has(&c.opt, PGM_OPT_NBR_UNREACH));
	ck_assert(pgm_nla_equal(&c.opt.path_nla, &me));
	ck_assert_uint_eq(c.opt.nak_list_count, 3);
	ck_assert_int_eq(pgm_parse(ncf, c.tpdu_len, PGM_PARSE_STRICT_OPTIONS, &c), PGM_ERR_OK);

	/* parity: flag kept, PKT_CNT raised to the given count */
	{
		struct pgm_build_options po = {.extra_header_flags = PGM_OPT_PARITY};

		parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 0x1002, &s, &g, &po),
			&n);
		parse_ok(ncf, pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 2, NULL), &c);
		ck_assert(pgm_packet_is_parity(&c));
		ck_assert_uint_eq(c.sqn, 0x1002);
		parse_ok(ncf, pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 13, NULL), &c);
		ck_assert_uint_eq(c.sqn, 0x100d);
		parse_ok(ncf, pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 127, NULL), &c);
		ck_assert_uint_eq(c.sqn, 0x107f);
		/* below the NAK's own count (where detectable: 3 > 2), or beyond any group */
		parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 0x1003, &s, &g, &po),
			&n);
		ck_assert_uint_eq(pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 2, NULL), 0);
		ck_assert_uint_eq(pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 128, NULL), 0);
		/* with the group size the count is raised, never lowered */
		parse_ok(ncf, pgm_build_ncf_from_nak_tgs(ncf, sizeof(ncf), &n, 16, 1, NULL), &c);
		ck_assert_uint_eq(c.sqn, 0x1003);
		parse_ok(ncf, pgm_build_ncf_from_nak_tgs(ncf, sizeof(ncf), &n, 16, 9, NULL), &c);
		ck_assert_uint_eq(c.sqn, 0x1009);
		ck_assert_uint_eq(
			pgm_build_ncf_from_nak_tgs(ncf, sizeof(ncf), &n, 16, 16, NULL), 0);
		ck_assert_uint_eq(pgm_build_ncf_from_nak_tgs(ncf, sizeof(ncf), &n, 12, 1, NULL), 0);
	}
	/* only NAKs get NCFs (an NNAK never does, 3.10) */
	parse_ok(nak, pgm_build_nak(nak, sizeof(nak), PGM_NNAK, &up, 5, &s, &g, NULL), &n);
	ck_assert_uint_eq(pgm_build_ncf_from_nak(ncf, sizeof(ncf), &n, 0, NULL), 0);
}
END_TEST

START_TEST(test_nak_ncf_for_tsi)
{
	struct pgm_tsi tsi = {.sport = 4321}, got;
	struct pgm_nla s = wire_test_nla("198.18.0.1"), g = wire_test_nla("239.192.0.1");
	uint8_t b[BUF];
	struct pgm_packet p;

	memcpy(tsi.gsi, wire_test_gsi, PGM_GSI_LEN);
	parse_ok(b, pgm_build_nak_for_tsi(b, sizeof(b), PGM_NAK, &tsi, 7500, 9, &s, &g, NULL), &p);
	ck_assert_uint_eq(p.type, PGM_NAK);
	ck_assert_uint_eq(p.sport, 7500);
	ck_assert_uint_eq(p.dport, 4321);
	pgm_packet_tsi(&p, &got);
	ck_assert(pgm_tsi_equal(&got, &tsi));
	ck_assert_uint_eq(pgm_packet_data_dport(&p), 7500);

	parse_ok(b, pgm_build_nak_for_tsi(b, sizeof(b), PGM_NNAK, &tsi, 7500, 9, &s, &g, NULL), &p);
	ck_assert_uint_eq(p.type, PGM_NNAK);
	ck_assert_uint_eq(
		pgm_build_nak_for_tsi(b, sizeof(b), PGM_NCF, &tsi, 7500, 9, &s, &g, NULL), 0);

	parse_ok(b, pgm_build_ncf_for_tsi(b, sizeof(b), &tsi, 7500, 9, &s, &g, NULL), &p);
	ck_assert_uint_eq(p.type, PGM_NCF);
	ck_assert_uint_eq(p.sport, 4321);
	ck_assert_uint_eq(p.dport, 7500);
	pgm_packet_tsi(&p, &got);
	ck_assert(pgm_tsi_equal(&got, &tsi));
}
END_TEST

/* ---- rewrites ---- */

START_TEST(test_rewrite_spm_path)
{
	static const char *paths[2][2] = {
		{"198.18.0.1", "198.18.77.1"}, {"2001:db8::1", "2001:db8:77::1"}};
	struct pgm_header_params h = wire_test_downstream();
	uint8_t b[BUF];
	struct pgm_packet p, q;
	unsigned f;

	for (f = 0; f < 2; f++) {
		struct pgm_nla old = wire_test_nla(paths[f][0]), new = wire_test_nla(paths[f][1]);
		struct pgm_nla other = wire_test_nla(paths[1 - f][1]);
		size_t n = pgm_build_spm(b, sizeof(b), &h, 1, 2, 3, &old, NULL);

		parse_ok(b, n, &p);
		ck_assert(!pgm_rewrite_spm_path(b, &p, &other)); /* family differs */
		ck_assert(pgm_rewrite_spm_path(b, &p, &new));
		parse_ok(b, n, &q); /* the incrementally updated checksum verifies */
		ck_assert(pgm_nla_equal(&q.path, &new));
		ck_assert_uint_eq(q.checksum, pgm_checksum(b, n));
		/* a packet sent without a checksum stays without */
		b[6] = b[7] = 0;
		parse_ok(b, n, &p);
		ck_assert(pgm_rewrite_spm_path(b, &p, &old));
		ck_assert_uint_eq(wire_test_get16(b + 6), 0);
		parse_ok(b, n, &q);
		ck_assert(pgm_nla_equal(&q.path, &old));
	}
	{
		struct pgm_nla s = wire_test_nla("198.18.0.1");
		size_t n = pgm_build_nak(b, sizeof(b), PGM_NCF, &h, 1, &s, &s, NULL);

		parse_ok(b, n, &p);
		ck_assert(!pgm_rewrite_spm_path(b, &p, &s));
	}
}
END_TEST

/* NAK_BO_IVL after an odd-length option: an odd offset, and the TPDU's last byte changes. */
START_TEST(test_rewrite_nak_bo_ivl)
{
	static const uint8_t odd[5] = {0x21, 5, 0, 0, 0x99};
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1");
	struct pgm_build_options o = {.raw = odd, .raw_len = sizeof(odd)};
	uint8_t b[BUF];
	struct pgm_packet p, q;
	size_t n, i;

	/* raw options go last: put NAK_BO_IVL after them by hand */
	n = pgm_build_spm(b, sizeof(b), &h, 1, 2, 3, &s, &o);
	ck_assert_uint_eq(n, 36 + 4 + 5);
	b[40] &= (uint8_t)~PGM_OPT_END;
	memcpy(b + n,
		(uint8_t[]){
			PGM_OPT_NAK_BO_IVL | PGM_OPT_END, 12, 0, 0, 0, 0, 0x27, 0x10, 0, 0, 0, 1},
		12);
	n += 12;
	wire_test_put16(b + 38, 4 + 5 + 12);
	pgm_checksum_set(b, n);
	parse_ok(b, n, &p);
	ck_assert_uint_eq(n & 1, 1);
	ck_assert_uint_eq(p.opt.offset[2] & 1, 1);
	ck_assert_uint_eq(p.opt.nak_bo_ivl, 10000);

	for (i = 0; i < 200; i++) {
		uint32_t ivl = (uint32_t)random(), sqn = (uint32_t)random();

		ck_assert(pgm_rewrite_nak_bo_ivl(b, &p, ivl, sqn));
		parse_ok(b, n, &q);
		ck_assert_uint_eq(q.opt.nak_bo_ivl, ivl);
		ck_assert_uint_eq(q.opt.nak_bo_ivl_sqn, sqn);
	}
	/* absent: false, nothing changed */
	n = pgm_build_spm(b, sizeof(b), &h, 1, 2, 3, &s, NULL);
	parse_ok(b, n, &p);
	ck_assert(!pgm_rewrite_nak_bo_ivl(b, &p, 1, 2));
	ck_assert_uint_eq(pgm_checksum(b, n), wire_test_get16(b + 6));
}
END_TEST

/* 15.2.1: OPT_NAK_BO_IVL removed from an SPM in its datagram, over IPv4 and IPv6, over IP and
 * UDP, alone, first and last among other options: the result parses, every length and checksum
 * right, the other options intact. */
START_TEST(test_remove_nak_bo_ivl)
{
	struct pgm_udp_ports up;

	pgm_udp_ports_default(&up);
	for (unsigned f = 0; f < 12; f++) {
		bool v6 = f & 1, udp = f & 2;
		unsigned others = f / 4; /* 0: alone; 1: NAK_BO_RNG after it; 2: and JOIN too */
		struct pgm_ip_params ipp = {.ttl = 9, .udp = udp, .udp_sport = 3056, .udp_dport = 3056};
		struct pgm_header_params h = wire_test_downstream();
		struct pgm_nla s = wire_test_nla(v6 ? "2001:db8::1" : "198.18.0.1");
		struct pgm_build_options o = {.nak_bo_ivl = true, .nak_bo_ivl_us = 600000,
			.nak_bo_rng = others >= 1, .nak_bo_max_us = 9, .nak_bo_min_us = 1,
			.join = others >= 2, .join_min_sqn = 77};
		uint8_t t[128], d[BUF];
		size_t tn = pgm_build_spm(t, sizeof(t), &h, 1, 2, 3, &s, &o), n, m;
		struct pgm_packet pkt;
		struct pgm_ip ip;

		ck_assert_uint_gt(tn, 0);
		ipp.src = s;
		ipp.dst = wire_test_nla(v6 ? "ff3e::1" : "239.192.0.1");
		n = pgm_build_ip(d, sizeof(d), &ipp, t, tn);
		ck_assert_int_eq(pgm_parse_datagram(d, n, &up, 0, &ip, &pkt), PGM_ERR_OK);
		ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_NAK_BO_IVL));
		m = pgm_remove_nak_bo_ivl(d, n, &ip, &pkt);
		ck_assert_uint_eq(m, n - 12 - (others == 0 ? 4 : 0));
		ck_assert_int_eq(pgm_parse_datagram(d, m, &up, 0, &ip, &pkt), PGM_ERR_OK);
		ck_assert(!pgm_opt_has(&pkt.opt, PGM_OPT_NAK_BO_IVL));
		ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_NAK_BO_RNG) == (others >= 1));
		ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_JOIN) == (others >= 2));
		ck_assert_uint_eq(pkt.opt_offset != 0, others != 0);
		ck_assert_uint_eq(pkt.sqn, 1);
		ck_assert(pgm_nla_equal(&pkt.path, &s));
		if (!v6)
			ck_assert_uint_eq(pgm_ip_header_checksum(d, ip.ip_header_len), 0);
		if (udp)
			ck_assert(pgm_ip_udp_checksum_ok(d, &ip));
		/* gone: nothing more to remove */
		ck_assert_uint_eq(pgm_remove_nak_bo_ivl(d, m, &ip, &pkt), 0);
	}
}
END_TEST

START_TEST(test_rewrite_parity_pkt_cnt)
{
	struct pgm_header_params up = wire_test_upstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1"), g = wire_test_nla("239.192.0.1");
	struct pgm_build_options po = {.extra_header_flags = PGM_OPT_PARITY};
	uint8_t b[BUF];
	struct pgm_packet p, q;
	size_t n = pgm_build_nak(b, sizeof(b), PGM_NAK, &up, 0x1103, &s, &g, &po);

	parse_ok(b, n, &p);
	ck_assert(pgm_rewrite_parity_pkt_cnt(b, &p, 16, 9));
	parse_ok(b, n, &q);
	ck_assert_uint_eq(q.sqn, 0x1109);
	ck_assert(!pgm_rewrite_parity_pkt_cnt(b, &q, 16, 16)); /* count beyond the group */
	ck_assert(!pgm_rewrite_parity_pkt_cnt(b, &q, 12, 1));  /* not a power of 2 */
	ck_assert(!pgm_rewrite_parity_pkt_cnt(b, &q, 256, 1));
	ck_assert(pgm_rewrite_parity_pkt_cnt(b, &q, 128, 127));
	parse_ok(b, n, &p);
	ck_assert_uint_eq(p.sqn, 0x117f);
	/* a selective NAK has no PKT_CNT */
	n = pgm_build_nak(b, sizeof(b), PGM_NAK, &up, 0x1103, &s, &g, NULL);
	parse_ok(b, n, &p);
	ck_assert(!pgm_rewrite_parity_pkt_cnt(b, &p, 16, 9));
}
END_TEST

START_TEST(test_rewrite_nak_src)
{
	struct pgm_header_params h = wire_test_upstream();
	struct pgm_nla s = wire_test_nla("198.18.1.1"), g = wire_test_nla("239.192.0.1");
	struct pgm_nla src = wire_test_nla("198.18.0.10"), v6 = wire_test_nla("2001:db8::1");
	uint8_t b[BUF];
	struct pgm_packet p, q;
	size_t n = pgm_build_nak(b, sizeof(b), PGM_NAK, &h, 17, &s, &g, NULL);

	parse_ok(b, n, &p);
	ck_assert(!pgm_rewrite_nak_src(b, &p, &v6)); /* another family would move the group */
	ck_assert(pgm_rewrite_nak_src(b, &p, &src));
	parse_ok(b, n, &q); /* the checksum was updated */
	ck_assert(pgm_nla_equal(&q.nak_src, &src));
	ck_assert(pgm_nla_equal(&q.nak_grp, &g));
	ck_assert_uint_eq(q.sqn, 17);
	n = pgm_build_data(b, sizeof(b), PGM_RDATA, &h, 1, 0, "x", 1, NULL);
	parse_ok(b, n, &p);
	ck_assert(!pgm_rewrite_nak_src(b, &p, &src));
}
END_TEST

START_TEST(test_rewrite_opt_invalid)
{
	/* clang-format off */
	static const uint8_t raw[] = {
		0x21, 5, PGM_OPX_INVALIDATE, 0, 0xee,	/* odd length */
		0x22, 4, PGM_OPX_INVALIDATE, 0,		/* at an odd offset */
		0x23, 4, PGM_OPX_IGNORE, 0,
	};
	/* clang-format on */
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1");
	struct pgm_build_options o = {.join = true, .raw = raw, .raw_len = sizeof(raw)};
	uint8_t b[BUF];
	struct pgm_packet p, q;
	size_t n = pgm_build_spm(b, sizeof(b), &h, 1, 2, 3, &s, &o);
	unsigned i;

	parse_ok(b, n, &p);
	ck_assert_uint_eq(p.opt.opx_invalidate, 2);
	ck_assert(!pgm_rewrite_opt_invalid(b, &p, 0)); /* OPT_LENGTH */
	ck_assert(!pgm_rewrite_opt_invalid(b, &p, 1)); /* OPT_JOIN is known */
	ck_assert(!pgm_rewrite_opt_invalid(b, &p, 5)); /* no such option */
	for (i = 2; i <= 4; i++)
		ck_assert(pgm_rewrite_opt_invalid(b, &p, i));
	parse_ok(b, n, &q);
	ck_assert_uint_eq(q.opt.unknown, 0);
	ck_assert_uint_eq(q.opt.opx_invalidate, 0);
	for (i = 2; i <= 4; i++)
		ck_assert_uint_eq(q.opt.type[i], PGM_OPT_INVALID);
	ck_assert_uint_eq(b[q.opt.offset[4]], PGM_OPT_INVALID | PGM_OPT_END); /* E kept */
	ck_assert_uint_eq(b[q.opt.offset[4] + 2], PGM_OPX_IGNORE); /* the rest untouched */
	ck_assert(!pgm_rewrite_opt_invalid(b, &q, 2));		   /* already invalid */
}
END_TEST

/* Every applicable rewrite on every catalog packet keeps the checksum right. */
START_TEST(test_catalog_rewrites)
{
	const struct wire_test_case *c = &cases[_i];
	uint8_t b[BUF];
	struct pgm_packet p, q;
	unsigned k;

	memcpy(b, c->tpdu, c->len);
	parse_ok(b, c->len, &p);
	if (p.type == PGM_SPM) {
		struct pgm_nla path = p.path;

		path.addr[3] ^= 0x5a;
		ck_assert(pgm_rewrite_spm_path(b, &p, &path));
	}
	if (pgm_opt_has(&p.opt, PGM_OPT_NAK_BO_IVL))
		ck_assert(pgm_rewrite_nak_bo_ivl(b, &p, 0xfedcba98, 0x01234567));
	if (pgm_packet_is_parity(&p) &&
		(p.type == PGM_NAK || p.type == PGM_NNAK || p.type == PGM_NCF))
		ck_assert(pgm_rewrite_parity_pkt_cnt(b, &p, 16, 15));
	for (k = 1; k < p.opt.count; k++)
		if (pgm_opt_bit(p.opt.type[k]) < 0)
			ck_assert(pgm_rewrite_opt_invalid(b, &p, k));
	ck_assert_int_eq(pgm_parse(b, c->len, 0, &q), PGM_ERR_OK);
	if (p.checksum != 0)
		ck_assert_uint_eq(q.checksum, pgm_checksum(b, c->len));
	else
		ck_assert_uint_eq(q.checksum, 0);
	ck_assert_uint_eq(q.opt.unknown, 0);
}
END_TEST

/* ---- IP and UDP ---- */

static const struct pgm_udp_ports ports = {.enabled = true,
	.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT,
	.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT};

START_TEST(test_build_ip_catalog)
{
	const struct wire_test_case *c = &cases[_i];
	uint8_t d[BUF + 64];
	struct pgm_packet p;
	struct pgm_ip ip;
	size_t n = pgm_build_ip(d, sizeof(d), &c->ip, c->tpdu, c->len);

	ck_assert_msg(n > 0, "%s", c->name);
	ck_assert_int_eq(pgm_parse_datagram(d, n, &ports, 0, &ip, &p), PGM_ERR_OK);
	ck_assert_uint_eq(ip.version, c->ip.src.afi == PGM_AFI_IP ? 4 : 6);
	ck_assert(pgm_nla_equal(&ip.src, &c->ip.src));
	ck_assert(pgm_nla_equal(&ip.dst, &c->ip.dst));
	ck_assert_uint_eq(ip.ttl, c->ip.ttl);
	ck_assert_int_eq(ip.router_alert, c->ip.router_alert);
	ck_assert_int_eq(ip.udp, c->ip.udp);
	ck_assert_uint_eq(ip.pgm_len, c->len);
	ck_assert_mem_eq(d + ip.pgm_offset, c->tpdu, c->len);
	if (ip.version == 4)
		ck_assert_uint_eq(wire_test_reference_sum(d, ip.ip_header_len), 0xffff);
	if (c->ip.udp) {
		ck_assert_uint_eq(ip.udp_sport, c->ip.udp_sport);
		ck_assert_uint_eq(ip.udp_dport, c->ip.udp_dport);
		ck_assert(pgm_ip_udp_checksum_ok(d, &ip));
		ck_assert_uint_ne(ip.udp_checksum, 0);
		/* not PGM without encapsulation ports */
		ck_assert_int_eq(pgm_parse_ip(d, n, NULL, &ip), PGM_ERR_NOT_PGM);
	}
}
END_TEST

START_TEST(test_build_ip_cases)
{
	struct pgm_ip_params p = {.ttl = 255, .tos = 0xb8, .id = 0x1234, .router_alert = true};
	uint8_t t[64], d[BUF];
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1");
	size_t tn = pgm_build_spm(t, sizeof(t), &h, 1, 2, 3, &s, NULL), n;
	struct pgm_ip ip;

	p.src = s;
	p.dst = wire_test_nla("239.192.0.1");
	n = pgm_build_ip(d, sizeof(d), &p, t, tn);
	ck_assert_uint_eq(n, 24 + tn);
	ck_assert_uint_eq(d[0], 0x46);
	ck_assert_mem_eq(d + 20, ((uint8_t[]){0x94, 0x04, 0x00, 0x00}), 4);
	ck_assert_int_eq(pgm_parse_ip(d, n, NULL, &ip), PGM_ERR_OK);
	ck_assert(ip.router_alert);
	ck_assert_uint_eq(ip.tos, 0xb8);
	ck_assert_uint_eq(ip.ip_header_len, 24);
	ck_assert_uint_eq(wire_test_get16(d + 4), 0x1234);
	ck_assert(pgm_ip_dst_is_multicast(&ip));
	/* too small, mixed families */
	ck_assert_uint_eq(pgm_build_ip(d, n - 1, &p, t, tn), 0);
	p.dst = wire_test_nla("ff3e::1");
	ck_assert_uint_eq(pgm_build_ip(d, sizeof(d), &p, t, tn), 0);
	/* IPv6 with RA: a hop-by-hop header of 8 bytes before the TPDU (RFC 2711) */
	p.src = wire_test_nla("2001:db8::1");
	n = pgm_build_ip(d, sizeof(d), &p, t, tn);
	ck_assert_uint_eq(n, 48 + tn);
	ck_assert_uint_eq(wire_test_get16(d + 4), 8 + tn); /* payload length: the header too */
	ck_assert_uint_eq(d[6], 0);			  /* next: hop-by-hop options */
	ck_assert_mem_eq(d + 40,
		((uint8_t[]){113, 0, 5, 2, PGM_IPV6_ROUTER_ALERT_VALUE >> 8,
			PGM_IPV6_ROUTER_ALERT_VALUE & 0xff, 1, 0}),
		8);
	ck_assert_int_eq(pgm_parse_ip(d, n, NULL, &ip), PGM_ERR_OK);
	ck_assert(ip.router_alert);
	ck_assert_uint_eq(ip.pgm_offset, 48);
	ck_assert_mem_eq(d + 48, t, tn);
	ck_assert_uint_eq(pgm_build_ip(d, n - 1, &p, t, tn), 0);
	/* and over UDP: the UDP header after it, its checksum over the pseudo-header */
	p.udp = true;
	p.udp_sport = p.udp_dport = 3056;
	n = pgm_build_ip(d, sizeof(d), &p, t, tn);
	ck_assert_uint_eq(n, 56 + tn);
	ck_assert_uint_eq(d[40], 17);
	ck_assert_int_eq(pgm_parse_ip(d, n, &ports, &ip), PGM_ERR_OK);
	ck_assert(ip.router_alert && ip.udp);
	ck_assert(pgm_ip_udp_checksum_ok(d, &ip));
	ck_assert_uint_ne(ip.udp_checksum, 0);
	p.udp = false;
	p.router_alert = false;
	n = pgm_build_ip(d, sizeof(d), &p, t, tn);
	ck_assert_uint_eq(n, 40 + tn);
	ck_assert_int_eq(pgm_parse_ip(d, n, NULL, &ip), PGM_ERR_OK);
	ck_assert_uint_eq(ip.tos, 0xb8);
	ck_assert_uint_eq(ip.ttl, 255);
	ck_assert(pgm_ip_dst_is_multicast(&ip));
	/* the TPDU may already sit where it belongs */
	memcpy(d + 40 + 8, t, tn);
	p.udp = true;
	p.udp_sport = p.udp_dport = 3056;
	n = pgm_build_ip(d, sizeof(d), &p, d + 48, tn);
	ck_assert_uint_eq(n, 48 + tn);
	ck_assert_mem_eq(d + 48, t, tn);
	ck_assert_int_eq(pgm_parse_ip(d, n, &ports, &ip), PGM_ERR_OK);
	ck_assert(pgm_ip_udp_checksum_ok(d, &ip));
}
END_TEST

START_TEST(test_fix_udp_checksum)
{
	unsigned f;

	for (f = 0; f < 2; f++) {
		struct pgm_ip_params p = {
			.ttl = 1, .udp = true, .udp_sport = 3056, .udp_dport = 3056};
		struct pgm_header_params h = wire_test_downstream();
		struct pgm_nla s = wire_test_nla(f == 0 ? "198.18.0.1" : "2001:db8::1");
		uint8_t t[64], d[BUF];
		size_t tn = pgm_build_spm(t, sizeof(t), &h, 1, 2, 3, &s, NULL), n;
		struct pgm_packet pkt;
		struct pgm_ip ip;
		struct pgm_nla path = wire_test_nla(f == 0 ? "198.18.9.9" : "2001:db8:9::9");

		p.src = s;
		p.dst = wire_test_nla(f == 0 ? "239.192.0.1" : "ff3e::1");
		n = pgm_build_ip(d, sizeof(d), &p, t, tn);
		ck_assert_int_eq(pgm_parse_datagram(d, n, &ports, 0, &ip, &pkt), PGM_ERR_OK);
		/* With a PGM checksum, a rewrite keeps the TPDU's one's-complement sum, and so
		 * the UDP checksum, intact. */
		ck_assert(pgm_rewrite_spm_path(d + ip.pgm_offset, &pkt, &path));
		ck_assert_int_eq(pgm_parse_datagram(d, n, &ports, 0, &ip, &pkt), PGM_ERR_OK);
		/* Without one, the UDP checksum breaks and must be fixed. */
		d[ip.pgm_offset + 6] = d[ip.pgm_offset + 7] = 0;
		pgm_ip_fix_udp_checksum(d, &ip);
		ck_assert_int_eq(pgm_parse_datagram(d, n, &ports, 0, &ip, &pkt), PGM_ERR_OK);
		path.addr[0] ^= 1;
		ck_assert(pgm_rewrite_spm_path(d + ip.pgm_offset, &pkt, &path));
		ck_assert_int_eq(
			pgm_parse_datagram(d, n, &ports, 0, &ip, &pkt), PGM_ERR_UDP_CHECKSUM);
		ck_assert_int_eq(
			pgm_parse_datagram(d, n, &ports, PGM_PARSE_NO_UDP_CHECKSUM, &ip, &pkt),
			PGM_ERR_OK);
		pgm_ip_fix_udp_checksum(d, &ip);
		ck_assert_int_eq(pgm_parse_datagram(d, n, &ports, 0, &ip, &pkt), PGM_ERR_OK);
		ck_assert(pgm_nla_equal(&pkt.path, &path));
		if (f == 0) {
			/* IPv4 sent without a UDP checksum: stays without, and is accepted */
			d[ip.pgm_offset - 2] = d[ip.pgm_offset - 1] = 0;
			ck_assert_int_eq(
				pgm_parse_datagram(d, n, &ports, 0, &ip, &pkt), PGM_ERR_OK);
			pgm_ip_fix_udp_checksum(d, &ip);
			ck_assert_uint_eq(wire_test_get16(d + ip.pgm_offset - 2), 0);
		}
	}
}
END_TEST

/* ---- format ---- */

START_TEST(test_format)
{
	struct pgm_header_params up = wire_test_upstream(), down = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1"), g = wire_test_nla("239.192.0.1");
	uint32_t list[2] = {18, 19};
	struct pgm_build_options o = {.nak_list = list, .nak_list_count = 2};
	uint8_t b[BUF];
	char line[256];
	struct pgm_packet p;
	size_t n;

	parse_ok(b, pgm_build_nak(b, sizeof(b), PGM_NAK, &up, 17, &s, &g, &o), &p);
	n = pgm_packet_format(&p, line, sizeof(line));
	ck_assert_str_eq(line, "NAK 0a0b0c0d0e0f.41000 sqn 17 list 18,19 src 198.18.0.1 grp "
			       "239.192.0.1");
	ck_assert_uint_eq(n, strlen(line));

	parse_ok(b, pgm_build_spm(b, sizeof(b), &down, 7, 100, 200, &s, NULL), &p);
	pgm_packet_format(&p, line, sizeof(line));
	ck_assert_str_eq(line, "SPM 0a0b0c0d0e0f.41000 sqn 7 trail 100 lead 200 path 198.18.0.1");

	{
		struct pgm_build_options f = {.fragment = true,
			.frag_first_sqn = 1,
			.frag_offset = 2,
			.frag_apdu_len = 3,
			.extra_header_flags = PGM_OPT_PARITY};

		parse_ok(b, pgm_build_data(b, sizeof(b), PGM_RDATA, &down, 5, 4, "ab", 2, &f), &p);
		pgm_packet_format(&p, line, sizeof(line));
		ck_assert_str_eq(line, "RDATA 0a0b0c0d0e0f.41000 sqn 5 trail 4 len 2 parity opts "
				       "OPT_FRAGMENT frag 1+2/3");
	}
	/* truncation: always terminated, never longer than the buffer */
	for (n = 1; n < 40; n++) {
		size_t used = pgm_packet_format(&p, line, n);

		ck_assert_uint_lt(used, n);
		ck_assert_uint_eq(strlen(line), used);
	}
	ck_assert_uint_eq(pgm_packet_format(&p, line, 0), 0);
}
END_TEST

/* Every catalog packet formats to something starting with its type name. */
START_TEST(test_format_catalog)
{
	const struct wire_test_case *c = &cases[_i];
	struct pgm_packet p;
	char line[1024];

	parse_ok(c->tpdu, c->len, &p);
	ck_assert_uint_gt(pgm_packet_format(&p, line, sizeof(line)), 0);
	ck_assert_msg(strncmp(line, pgm_type_name(p.type), strlen(pgm_type_name(p.type))) == 0,
		"%s: %s", c->name, line);
}
END_TEST

static Suite *build_suite(void)
{
	Suite *s = suite_create("wire_build");
	TCase *catalog = tcase_create("catalog"), *builders = tcase_create("builders");
	int n;

	/* With room for none, the catalog only counts its cases: the loop bounds. */
	n = (int)wire_test_catalog(NULL, 0);

	tcase_add_checked_fixture(catalog, setup, teardown);
	tcase_add_loop_test(catalog, test_catalog_round_trip, 0, n);
	tcase_add_loop_test(catalog, test_catalog_small_capacity, 0, n);
	tcase_add_loop_test(catalog, test_catalog_rewrites, 0, n);
	tcase_add_loop_test(catalog, test_build_ip_catalog, 0, n);
	tcase_add_loop_test(catalog, test_format_catalog, 0, n);
	tcase_add_test(builders, test_builder_fields);
	tcase_add_test(builders, test_builder_invalid_params);
	tcase_add_test(builders, test_ncf_from_nak);
	tcase_add_test(builders, test_ncf_from_plain_nak);
	tcase_add_test(builders, test_nak_ncf_for_tsi);
	tcase_add_test(builders, test_rewrite_spm_path);
	tcase_add_test(builders, test_rewrite_nak_bo_ivl);
	tcase_add_test(builders, test_remove_nak_bo_ivl);
	tcase_add_test(builders, test_rewrite_parity_pkt_cnt);
	tcase_add_test(builders, test_rewrite_nak_src);
	tcase_add_test(builders, test_rewrite_opt_invalid);
	tcase_add_test(builders, test_build_ip_cases);
	tcase_add_test(builders, test_fix_udp_checksum);
	tcase_add_test(builders, test_format);
	suite_add_tcase(s, catalog);
	suite_add_tcase(s, builders);
	return s;
}

int main(void)
{
	return check_run(build_suite());
}

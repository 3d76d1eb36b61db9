/*
 * Parsing: hand-written pass vectors for every packet type in both address families (bytes
 * written out here, independent of the builders), and one or more failing inputs for every
 * named error, each asserting the exact error.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_test.h"
#include "tests/unit/check_run.h"

#define BUF 2048

/* ---- hand-written pass vectors (laid out 8 bytes a line, as on the wire) ---- */

// clang-format off

/* Copies a vector and computes its checksum (left 0 in the literals). */
static size_t vec(uint8_t *b, const uint8_t *v, size_t n)
{
	memcpy(b, v, n);
	pgm_checksum_set(b, n);
	return n;
}

static void assert_nla(const struct pgm_nla *nla, const char *text)
{
	struct pgm_nla expected = wire_test_nla(text);

	ck_assert_msg(pgm_nla_equal(nla, &expected), "NLA is not %s", text);
}

START_TEST(test_vector_spm_v4)
{
	static const uint8_t v[] = {
		0xa0, 0x28, 0x1d, 0x4c, 0x00, 0x00, 0, 0, /* 41000 -> 7500, SPM, no options */
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00, /* GSI, TSDU length 0 */
		0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x64, /* SQN 7, TRAIL 100 */
		0x00, 0x00, 0x00, 0xc8, 0x00, 0x01, 0x00, 0x00, /* LEAD 200, AFI 1 */
		198, 18, 0, 1,
	};
	uint8_t b[BUF];
	struct pgm_packet p;
	struct pgm_tsi tsi;

	ck_assert_int_eq(pgm_parse(b, vec(b, v, sizeof(v)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_SPM);
	ck_assert_uint_eq(p.sport, 41000);
	ck_assert_uint_eq(p.dport, 7500);
	ck_assert_mem_eq(p.gsi, wire_test_gsi, 6);
	ck_assert_uint_eq(p.sqn, 7);
	ck_assert_uint_eq(p.trail, 100);
	ck_assert_uint_eq(p.lead, 200);
	assert_nla(&p.path, "198.18.0.1");
	ck_assert_uint_eq(p.path_offset, 32);
	ck_assert_uint_eq(p.opt_offset, 0);
	ck_assert_uint_eq(p.opt.count, 0);
	ck_assert_uint_eq(p.tpdu_len, sizeof(v));
	pgm_packet_tsi(&p, &tsi);
	ck_assert_uint_eq(tsi.sport, 41000);
	ck_assert_uint_eq(pgm_packet_data_dport(&p), 7500);
}
END_TEST

START_TEST(test_vector_spm_v6_options)
{
	static const uint8_t v[] = {
		0xa0, 0x28, 0x1d, 0x4c, 0x00, 0x03, 0, 0, /* present + network */
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x64,
		0x00, 0x00, 0x00, 0xc8, 0x00, 0x02, 0x00, 0x00, /* AFI 2 */
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
		0x00, 0x04, 0x00, 0x10,				    /* OPT_LENGTH, total 16 */
		0x08, 0x08, 0x00, 0x02, 0x00, 0x00, 0x00, 0x10,	    /* PARITY_PRM P, TGS 16 */
		0x8e, 0x04, 0x00, 0x00,				    /* OPT_FIN | END */
		0x00, 0x00, 0x00, 0x00 /* (not part of the packet) */
	};
	uint8_t b[BUF];
	struct pgm_packet p;

	ck_assert_int_eq(pgm_parse(b, vec(b, v, sizeof(v) - 4), 0, &p), PGM_ERR_OK);
	assert_nla(&p.path, "2001:db8::1");
	ck_assert_uint_eq(p.path_offset, 32);
	ck_assert_uint_eq(p.opt_offset, 48);
	ck_assert_uint_eq(p.opt.total_len, 16);
	ck_assert_uint_eq(p.opt.count, 3);
	ck_assert(pgm_opt_has(&p.opt, PGM_OPT_PARITY_PRM));
	ck_assert(pgm_opt_has(&p.opt, PGM_OPT_FIN));
	ck_assert(!pgm_opt_has(&p.opt, PGM_OPT_RST));
	ck_assert_uint_eq(p.opt.parity_tgs, 16);
	ck_assert_uint_eq(p.opt.parity_prm_flags, 0x02);
	ck_assert_uint_eq(p.opt.offset[1], 52);
	ck_assert_uint_eq(p.opt.type[2], PGM_OPT_FIN);
}
END_TEST

START_TEST(test_vector_odata_fragment)
{
	static const uint8_t v[] = {
		0xa0, 0x28, 0x1d, 0x4c, 0x04, 0x01, 0, 0, /* ODATA, options present */
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x03, /* TSDU 3 */
		0x00, 0x00, 0x01, 0xf5, 0x00, 0x00, 0x01, 0x90, /* SQN 501, TRAIL 400 */
		0x00, 0x04, 0x00, 0x14,				/* OPT_LENGTH 20 */
		0x81, 0x10, 0x00, 0x00, 0x00, 0x00, 0x01, 0xf4, /* FRAGMENT|END, first 500 */
		0x00, 0x00, 0x05, 0x78, 0x00, 0x00, 0x0f, 0xa0, /* offset 1400, APDU 4000 */
		'a', 'b', 'c',
	};
	uint8_t b[BUF];
	struct pgm_packet p;

	ck_assert_int_eq(pgm_parse(b, vec(b, v, sizeof(v)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_ODATA);
	ck_assert_uint_eq(p.sqn, 501);
	ck_assert_uint_eq(p.trail, 400);
	ck_assert_uint_eq(p.tsdu_len, 3);
	ck_assert_ptr_eq(p.tsdu, b + 44);
	ck_assert_uint_eq(p.opt.frag_first_sqn, 500);
	ck_assert_uint_eq(p.opt.frag_offset, 1400);
	ck_assert_uint_eq(p.opt.frag_apdu_len, 4000);
}
END_TEST

START_TEST(test_vector_rdata_no_options)
{
	static const uint8_t v[] = {
		0xa0, 0x28, 0x1d, 0x4c, 0x05, 0x00, 0, 0,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x01,
		0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 'z',
	};
	uint8_t b[BUF];
	struct pgm_packet p;

	ck_assert_int_eq(pgm_parse(b, vec(b, v, sizeof(v)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_RDATA);
	ck_assert_uint_eq(p.sqn, 0xffffffffu);
	ck_assert_uint_eq(p.tsdu[0], 'z');
}
END_TEST

START_TEST(test_vector_nak_v6_list)
{
	static const uint8_t v[] = {
		0x1d, 0x4c, 0xa0, 0x28, 0x08, 0x03, 0, 0, /* upstream ports, NAK */
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
		0x00, 0x00, 0x03, 0xe8, 0x00, 0x02, 0x00, 0x00, /* SQN 1000, src AFI 2 */
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
		0x00, 0x02, 0x00, 0x00, /* grp AFI 2 */
		0xff, 0x3e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0x01,
		0x00, 0x04, 0x00, 0x10,				    /* OPT_LENGTH 16 */
		0x82, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe9,	    /* NAK_LIST|END 1001 */
		0x00, 0x00, 0x03, 0xf0,				    /* 1008 */
	};
	uint8_t b[BUF];
	struct pgm_packet p;
	struct pgm_tsi tsi;

	ck_assert_int_eq(pgm_parse(b, vec(b, v, sizeof(v)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_NAK);
	ck_assert_uint_eq(p.sqn, 1000);
	assert_nla(&p.nak_src, "2001:db8::1");
	assert_nla(&p.nak_grp, "ff3e::8000:1");
	ck_assert_uint_eq(p.opt.nak_list_count, 2);
	ck_assert_uint_eq(pgm_opt_nak_list_sqn(&p.opt, 0), 1001);
	ck_assert_uint_eq(pgm_opt_nak_list_sqn(&p.opt, 1), 1008);
	ck_assert_uint_eq(pgm_opt_nak_list_sqn(&p.opt, 2), 0);
	pgm_packet_tsi(&p, &tsi);
	ck_assert_uint_eq(tsi.sport, 41000); /* 8.3: DPORT of a NAK is the data-source port */
	ck_assert_uint_eq(pgm_packet_data_dport(&p), 7500);
}
END_TEST

START_TEST(test_vector_ncf_nnak_mixed_families)
{
	static const uint8_t v[] = {
		0xa0, 0x28, 0x1d, 0x4c, 0x0a, 0x80, 0, 0, /* NCF, parity, no options */
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
		0x00, 0x00, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, /* TG 0x100 cnt 3, src AFI 1 */
		198, 18, 0, 1, 0x00, 0x02, 0x00, 0x00,
		0xff, 0x3e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0x01,
	};
	uint8_t b[BUF];
	struct pgm_packet p;

	ck_assert_int_eq(pgm_parse(b, vec(b, v, sizeof(v)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_NCF);
	ck_assert(pgm_packet_is_parity(&p));
	assert_nla(&p.nak_src, "198.18.0.1");
	assert_nla(&p.nak_grp, "ff3e::8000:1");
	b[4] = PGM_NNAK;
	pgm_checksum_set(b, sizeof(v));
	ck_assert_int_eq(pgm_parse(b, sizeof(v), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_NNAK);
}
END_TEST

START_TEST(test_vector_poll_polr_spmr_ack)
{
	static const uint8_t poll[] = {
		0xa0, 0x28, 0x1d, 0x4c, 0x01, 0x00, 0, 0,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x4d, 0x00, 0x01, 0x00, 0x01, /* SQN 77, round 1, DLR */
		0x00, 0x01, 0x00, 0x00, 198, 18, 1, 1,		/* path */
		0x00, 0x03, 0xd0, 0x90, 0x12, 0x34, 0x56, 0x78, /* BO_IVL 250000, RAND */
		0x00, 0x00, 0x00, 0x0f,				/* MASK */
	};
	static const uint8_t polr[] = {
		0x1d, 0x4c, 0xa0, 0x28, 0x02, 0x00, 0, 0,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x4d, 0x00, 0x02, 0x00, 0x00,
	};
	static const uint8_t spmr[] = {
		0x1d, 0x4c, 0xa0, 0x28, 0x0c, 0x00, 0, 0,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
	};
	static const uint8_t ack[] = {
		0x1d, 0x4c, 0xa0, 0x28, 0x0d, 0x00, 0, 0,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
		0x00, 0x00, 0x01, 0xf7, 0x80, 0x00, 0x00, 0x01,
	};
	uint8_t b[BUF];
	struct pgm_packet p;
	struct pgm_tsi tsi;

	ck_assert_int_eq(pgm_parse(b, vec(b, poll, sizeof(poll)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_POLL);
	ck_assert_uint_eq(p.sqn, 77);
	ck_assert_uint_eq(p.poll_round, 1);
	ck_assert_uint_eq(p.poll_s_type, 1);
	assert_nla(&p.path, "198.18.1.1");
	ck_assert_uint_eq(p.path_offset, 28);
	ck_assert_uint_eq(p.poll_bo_ivl, 250000);
	ck_assert_uint_eq(p.poll_rand, 0x12345678);
	ck_assert_uint_eq(p.poll_mask, 0xf);

	ck_assert_int_eq(pgm_parse(b, vec(b, polr, sizeof(polr)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_POLR);
	ck_assert_uint_eq(p.sqn, 77);
	ck_assert_uint_eq(p.polr_round, 2);
	pgm_packet_tsi(&p, &tsi);
	ck_assert_uint_eq(tsi.sport, 41000);

	ck_assert_int_eq(pgm_parse(b, vec(b, spmr, sizeof(spmr)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_SPMR);
	pgm_packet_tsi(&p, &tsi);
	ck_assert_uint_eq(tsi.sport, 41000);

	ck_assert_int_eq(pgm_parse(b, vec(b, ack, sizeof(ack)), 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.type, PGM_ACK);
	ck_assert_uint_eq(p.sqn, 503);
	ck_assert_uint_eq(p.ack_bitmap, 0x80000001u);
}
END_TEST

// clang-format on

/* A checksum of 0 means "none" on everything but data; PGM_PARSE_NO_CHECKSUM skips it. */
START_TEST(test_checksum_rules)
{
	uint8_t b[BUF];
	struct pgm_header_params hdr = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1");
	struct pgm_packet p;
	size_t n = pgm_build_spm(b, sizeof(b), &hdr, 1, 2, 3, &s, NULL);

	b[6] = b[7] = 0;
	ck_assert_int_eq(pgm_parse(b, n, 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.checksum, 0);
	b[6] = 0x12;
	ck_assert_int_eq(pgm_parse(b, n, 0, &p), PGM_ERR_BAD_CHECKSUM);
	ck_assert_int_eq(pgm_parse(b, n, PGM_PARSE_NO_CHECKSUM, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.checksum, 0x1200);
}
END_TEST

/* ---- one case per error ---- */

enum api { TPDU, IP, DATAGRAM };

struct err_case {
	const char *name;
	enum pgm_err err;
	enum api api;
	unsigned flags;
	size_t (*make)(uint8_t *b);
};

static const struct pgm_udp_ports default_ports = {.enabled = true,
	.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT,
	.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT};

/* Base packets. */
static size_t spm4(uint8_t *b, const struct pgm_build_options *o)
{
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1");

	return pgm_build_spm(b, BUF, &h, 1, 2, 3, &s, o);
}

static size_t spm6(uint8_t *b)
{
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("2001:db8::1");

	return pgm_build_spm(b, BUF, &h, 1, 2, 3, &s, NULL);
}

static size_t nak(uint8_t *b, unsigned type, const char *src, const char *grp,
	const struct pgm_build_options *o)
{
	struct pgm_header_params h = wire_test_upstream();
	struct pgm_nla s = wire_test_nla(src), g = wire_test_nla(grp);

	return pgm_build_nak(b, BUF, type, &h, 1000, &s, &g, o);
}

static size_t odata(uint8_t *b, const struct pgm_build_options *o)
{
	struct pgm_header_params h = wire_test_downstream();

	return pgm_build_data(b, BUF, PGM_ODATA, &h, 10, 5, "data", 4, o);
}

static size_t poll4(uint8_t *b)
{
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.1.1");

	return pgm_build_poll(b, BUF, &h, 1, 0, 0, &s, 1000, 2, 3, NULL);
}

/* A packet with raw options appended; fix() recomputes the checksum after patching. */
static size_t with_raw(uint8_t *b, unsigned type, const uint8_t *raw, size_t len)
{
	struct pgm_build_options o = {.raw = raw, .raw_len = len};

	if (type == PGM_SPM)
		return spm4(b, &o);
	if (type == PGM_ODATA)
		return odata(b, &o);
	return nak(b, type, "198.18.0.1", "239.192.0.1", &o);
}

static size_t fix(uint8_t *b, size_t n)
{
	pgm_checksum_set(b, n);
	return n;
}

/* IPv4 and IPv6 wrappers around a NAK. */
static size_t dgram4(uint8_t *b, bool udp, uint16_t dport)
{
	uint8_t t[256];
	size_t n = nak(t, PGM_NAK, "198.18.0.1", "239.192.0.1", NULL);
	struct pgm_ip_params p = {.ttl = 1, .udp = udp, .udp_sport = 40000, .udp_dport = dport};

	p.src = wire_test_nla("198.18.2.7");
	p.dst = wire_test_nla("198.18.1.1");
	return pgm_build_ip(b, BUF, &p, t, n);
}

static size_t dgram6(uint8_t *b, bool udp, uint16_t dport)
{
	uint8_t t[256];
	size_t n = nak(t, PGM_NAK, "2001:db8::1", "ff3e::8000:1", NULL);
	struct pgm_ip_params p = {.ttl = 1, .udp = udp, .udp_sport = 40000, .udp_dport = dport};

	p.src = wire_test_nla("2001:db8:2::7");
	p.dst = wire_test_nla("2001:db8:1::1");
	return pgm_build_ip(b, BUF, &p, t, n);
}

/* -- IP layer -- */
static size_t mk_ip_empty(uint8_t *b)
{
	(void)b;
	return 0;
}
static size_t mk_ip4_short(uint8_t *b)
{
	dgram4(b, false, 0);
	return 19;
}
static size_t mk_ip6_short(uint8_t *b)
{
	dgram6(b, false, 0);
	return 39;
}
static size_t mk_ip_version(uint8_t *b)
{
	size_t n = dgram4(b, false, 0);

	b[0] = 0x55;
	return n;
}
static size_t mk_ihl_small(uint8_t *b)
{
	size_t n = dgram4(b, false, 0);

	b[0] = 0x44;
	return n;
}
static size_t mk_ihl_beyond(uint8_t *b)
{
	dgram4(b, false, 0);
	b[0] = 0x4f; /* 60 bytes */
	return 40;
}
static size_t mk_total_beyond(uint8_t *b)
{
	size_t n = dgram4(b, false, 0);

	wire_test_put16(b + 2, (uint16_t)(n + 1));
	return n;
}
static size_t mk_total_below_ihl(uint8_t *b)
{
	size_t n = dgram4(b, false, 0);

	wire_test_put16(b + 2, 16);
	return n;
}
static size_t mk_ip6_jumbo(uint8_t *b)
{
	size_t n = dgram6(b, false, 0);

	wire_test_put16(b + 4, 0);
	return n;
}
static size_t mk_ip6_payload_beyond(uint8_t *b)
{
	size_t n = dgram6(b, false, 0);

	return n - 1;
}
static size_t mk_ip4_opt_len1(uint8_t *b)
{
	static const uint8_t o[] = {0x07, 0x01, 0x00, 0x00};

	return wire_test_ip4_insert_options(b, dgram4(b, false, 0), o, sizeof(o));
}
static size_t mk_ip4_opt_overrun(uint8_t *b)
{
	static const uint8_t o[] = {0x01, 0x07, 0x09, 0x00}; /* NOP, then 9 bytes in 3 */

	return wire_test_ip4_insert_options(b, dgram4(b, false, 0), o, sizeof(o));
}
static size_t mk_ip4_ra_len3(uint8_t *b)
{
	static const uint8_t o[] = {0x94, 0x03, 0x00, 0x00};

	return wire_test_ip4_insert_options(b, dgram4(b, false, 0), o, sizeof(o));
}
static size_t mk_ip4_opt_truncated_type(uint8_t *b)
{
	static const uint8_t o[] = {0x01, 0x01, 0x01, 0x83}; /* 3 NOPs, LSRR without length */

	return wire_test_ip4_insert_options(b, dgram4(b, false, 0), o, sizeof(o));
}
static size_t mk_ip4_mf(uint8_t *b)
{
	size_t n = dgram4(b, false, 0);

	b[6] = 0x20;
	wire_test_ip4_fix_checksum(b);
	return n;
}
static size_t mk_ip4_offset(uint8_t *b)
{
	size_t n = dgram4(b, false, 0);

	wire_test_put16(b + 6, 0x0001);
	wire_test_ip4_fix_checksum(b);
	return n;
}
static size_t mk_ip6_fragment(uint8_t *b)
{
	static const uint8_t frag[8] = {0, 0, 0x00, 0x01, 0, 0, 0, 1}; /* M set */

	return wire_test_ip6_insert_ext(b, dgram6(b, false, 0), 44, frag, sizeof(frag));
}
static size_t mk_ip6_hbh_not_first(uint8_t *b)
{
	static const uint8_t hbh[8] = {0, 0, 1, 4, 0, 0, 0, 0};
	size_t n = dgram6(b, false, 0);

	n = wire_test_ip6_insert_ext(b, n, 0, hbh, sizeof(hbh));
	return wire_test_ip6_insert_ext(b, n, 60, hbh, sizeof(hbh)); /* DSTOPTS, then HBH */
}
static size_t mk_ip6_ext_overrun(uint8_t *b)
{
	static const uint8_t dst[8] = {0, 200, 1, 4, 0, 0, 0, 0}; /* 1608 bytes claimed */

	return wire_test_ip6_insert_ext(b, dgram6(b, false, 0), 60, dst, sizeof(dst));
}
static size_t mk_ip6_ah(uint8_t *b)
{
	static const uint8_t ah[16] = {0, 2};

	return wire_test_ip6_insert_ext(b, dgram6(b, false, 0), 51, ah, sizeof(ah));
}
static size_t mk_ip6_bad_tlv(uint8_t *b)
{
	static const uint8_t hbh[8] = {0, 0, 1, 5, 0, 0, 0, 0}; /* PadN of 5 in 4 bytes */

	return wire_test_ip6_insert_ext(b, dgram6(b, false, 0), 0, hbh, sizeof(hbh));
}
static size_t mk_ip6_ra_len3(uint8_t *b)
{
	static const uint8_t hbh[8] = {0, 0, 5, 3, 0, 0, 0, 0};

	return wire_test_ip6_insert_ext(b, dgram6(b, false, 0), 0, hbh, sizeof(hbh));
}
static size_t mk_ip4_tcp(uint8_t *b)
{
	size_t n = dgram4(b, false, 0);

	b[9] = 6;
	wire_test_ip4_fix_checksum(b);
	return n;
}
static size_t mk_udp_other_port(uint8_t *b)
{
	return dgram4(b, true, 5000);
}
static size_t mk_ip6_no_next(uint8_t *b)
{
	size_t n = dgram6(b, false, 0);

	b[6] = 59;
	return n;
}
static size_t mk_ip6_tcp(uint8_t *b)
{
	size_t n = dgram6(b, false, 0);

	b[6] = 6;
	return n;
}
static size_t mk_udp_len_small(uint8_t *b)
{
	size_t n = dgram4(b, true, 3055);

	wire_test_put16(b + 24, 7);
	return n;
}
static size_t mk_udp_len_beyond(uint8_t *b)
{
	size_t n = dgram4(b, true, 3055);

	wire_test_put16(b + 24, (uint16_t)(n - 20 + 1));
	return n;
}
static size_t mk_udp_truncated(uint8_t *b)
{
	dgram4(b, true, 3055);
	wire_test_put16(b + 2, 27);
	wire_test_ip4_fix_checksum(b);
	return 27;
}
static size_t mk_udp_bad_checksum(uint8_t *b)
{
	size_t n = dgram4(b, true, 3056);

	b[26] ^= 0x01;
	return n;
}
static size_t mk_udp6_zero_checksum(uint8_t *b)
{
	size_t n = dgram6(b, true, 3055);

	b[46] = b[47] = 0;
	return n;
}

/* -- PGM header and bodies -- */
static size_t mk_short_header(uint8_t *b)
{
	spm4(b, NULL);
	return 15;
}
static size_t mk_bad_version(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	b[4] |= 0x40;
	return fix(b, n);
}
static size_t mk_bad_reserved(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	b[4] |= 0x20;
	return fix(b, n);
}
static size_t mk_type3(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	b[4] = 0x03;
	return fix(b, n);
}
static size_t mk_type_b(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	b[4] = 0x0b;
	return fix(b, n);
}
static size_t mk_type_f(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	b[4] = 0x0f;
	return fix(b, n);
}
static size_t mk_bad_checksum(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	b[20] ^= 0x80;
	return n;
}
static size_t mk_zero_checksum_odata(uint8_t *b)
{
	size_t n = odata(b, NULL);

	b[6] = b[7] = 0;
	return n;
}
static size_t mk_zero_checksum_rdata(uint8_t *b)
{
	size_t n = odata(b, NULL);

	b[4] = PGM_RDATA;
	b[6] = b[7] = 0;
	return n;
}
static size_t mk_tsdu_on_spm(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	wire_test_put16(b + 14, 1);
	return fix(b, n);
}
static size_t mk_tsdu_trailing_spm(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	b[n] = 0;
	return fix(b, n + 1);
}
static size_t mk_tsdu_trailing_opts(uint8_t *b)
{
	static const uint8_t fin[4] = {PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_SPM, fin, sizeof(fin));

	b[n] = 0;
	return fix(b, n + 1);
}
static size_t mk_tsdu_data_long(uint8_t *b)
{
	size_t n = odata(b, NULL);

	wire_test_put16(b + 14, 5);
	return fix(b, n);
}
static size_t mk_tsdu_data_short(uint8_t *b)
{
	size_t n = odata(b, NULL);

	wire_test_put16(b + 14, 3);
	return fix(b, n);
}
static size_t mk_tsdu_data_opts(uint8_t *b)
{
	struct pgm_build_options o = {.syn = true};
	size_t n = odata(b, &o);

	wire_test_put16(b + 14, 6);
	return fix(b, n);
}
static size_t mk_tpdu_over_64k(uint8_t *b)
{
	(void)b;
	return 70000; /* the caller's buffer is large enough; see run_case */
}
static size_t mk_spm_short(uint8_t *b)
{
	spm4(b, NULL);
	return fix(b, 27);
}
static size_t mk_spm_short_afi(uint8_t *b)
{
	spm4(b, NULL);
	return fix(b, 30);
}
static size_t mk_poll_short(uint8_t *b)
{
	poll4(b);
	return fix(b, 23);
}
static size_t mk_poll_short_tail(uint8_t *b)
{
	poll4(b);
	return fix(b, 32 + 8);
}
static size_t mk_polr_short(uint8_t *b)
{
	struct pgm_header_params h = wire_test_upstream();

	pgm_build_polr(b, BUF, &h, 1, 0, NULL);
	return fix(b, 23);
}
static size_t mk_data_short(uint8_t *b)
{
	odata(b, NULL);
	wire_test_put16(b + 14, 0);
	return fix(b, 23);
}
static size_t mk_nak_short(uint8_t *b)
{
	nak(b, PGM_NAK, "198.18.0.1", "239.192.0.1", NULL);
	return fix(b, 19);
}
static size_t mk_nak_short_grp(uint8_t *b)
{
	nak(b, PGM_NAK, "198.18.0.1", "239.192.0.1", NULL);
	return fix(b, 30);
}
static size_t mk_ack_short(uint8_t *b)
{
	struct pgm_header_params h = wire_test_upstream();

	pgm_build_ack(b, BUF, &h, 1, 2, NULL);
	return fix(b, 20);
}
static size_t mk_spm_afi3(uint8_t *b)
{
	size_t n = spm4(b, NULL);

	wire_test_put16(b + 28, 3);
	return fix(b, n);
}
static size_t mk_nak_src_afi0(uint8_t *b)
{
	size_t n = nak(b, PGM_NAK, "198.18.0.1", "239.192.0.1", NULL);

	wire_test_put16(b + 20, 0);
	return fix(b, n);
}
static size_t mk_ncf_grp_afi7(uint8_t *b)
{
	size_t n = nak(b, PGM_NCF, "198.18.0.1", "239.192.0.1", NULL);

	wire_test_put16(b + 28, 7);
	return fix(b, n);
}
static size_t mk_poll_afi(uint8_t *b)
{
	size_t n = poll4(b);

	wire_test_put16(b + 24, 0x0100);
	return fix(b, n);
}
static size_t mk_spm_v6_truncated(uint8_t *b)
{
	spm6(b);
	return fix(b, 40);
}
static size_t mk_nak_grp_v6_truncated(uint8_t *b)
{
	nak(b, PGM_NAK, "198.18.0.1", "ff3e::1", NULL); /* group address at 32..47 */
	return fix(b, 40);
}

/* -- options -- */
static size_t mk_opt_missing(uint8_t *b)
{
	size_t n = nak(b, PGM_NAK, "198.18.0.1", "239.192.0.1", NULL);

	b[5] = PGM_OPT_PRESENT;
	return fix(b, n);
}
static size_t mk_opt_first_not_length(uint8_t *b)
{
	static const uint8_t fin[4] = {PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_SPM, fin, sizeof(fin));

	b[32 + 4] = PGM_OPT_JOIN; /* OPT_LENGTH's type byte */
	return fix(b, n);
}
static size_t mk_opt_length_len8(uint8_t *b)
{
	static const uint8_t fin[4] = {PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_SPM, fin, sizeof(fin));

	b[36 + 1] = 8;
	return fix(b, n);
}
static size_t mk_opt_length_end_bit(uint8_t *b)
{
	static const uint8_t fin[4] = {PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_SPM, fin, sizeof(fin));

	b[36] = PGM_OPT_END;
	return fix(b, n);
}
static size_t mk_opt_total_small(uint8_t *b)
{
	static const uint8_t fin[4] = {PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_SPM, fin, sizeof(fin));

	wire_test_put16(b + 38, 3);
	return fix(b, n);
}
static size_t mk_opt_total_beyond(uint8_t *b)
{
	static const uint8_t fin[4] = {PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_SPM, fin, sizeof(fin));

	wire_test_put16(b + 38, 9);
	return fix(b, n);
}
static size_t mk_opt_len3(uint8_t *b)
{
	static const uint8_t two[8] = {PGM_OPT_SYN, 4, 0, 0, PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_ODATA, two, sizeof(two));

	b[28 + 1] = 3;
	return fix(b, n);
}
static size_t mk_opt_len_past_end(uint8_t *b)
{
	static const uint8_t two[8] = {PGM_OPT_SYN, 4, 0, 0, PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_ODATA, two, sizeof(two));

	b[32 + 1] = 8; /* FIN claims 8 bytes; 4 remain */
	return fix(b, n);
}
static size_t mk_opt_header_cut(uint8_t *b)
{
	/* OPT_LENGTH total 11: FIN without END fits, then 3 bytes cannot hold a header. */
	static const uint8_t opts[] = {PGM_OPT_LENGTH, 4, 0, 11, PGM_OPT_FIN, 4, 0, 0, 0x80, 0, 0};
	size_t n = spm4(b, NULL);

	memcpy(b + n, opts, sizeof(opts));
	b[5] = PGM_OPT_PRESENT;
	return fix(b, n + sizeof(opts));
}
static size_t too_many(uint8_t *b, unsigned count)
{
	uint8_t raw[128];
	unsigned i;

	for (i = 0; i < count; i++) {
		raw[4 * i] = (uint8_t)(0x30 + i); /* unknown types, OPX 00 */
		raw[4 * i + 1] = 4;
		raw[4 * i + 2] = 0;
		raw[4 * i + 3] = 0;
	}
	return with_raw(b, PGM_SPM, raw, 4 * count);
}
static size_t mk_opt_17(uint8_t *b)
{
	return too_many(b, 16); /* with OPT_LENGTH: 17 */
}
static size_t mk_opt_no_end(uint8_t *b)
{
	static const uint8_t fin[4] = {PGM_OPT_FIN, 4, 0, 0};
	size_t n = with_raw(b, PGM_SPM, fin, sizeof(fin));

	b[40] &= (uint8_t)~PGM_OPT_END;
	return fix(b, n);
}
static size_t mk_opt_only_length(uint8_t *b)
{
	static const uint8_t opts[] = {PGM_OPT_LENGTH, 4, 0, 4};
	size_t n = spm4(b, NULL);

	memcpy(b + n, opts, sizeof(opts));
	b[5] = PGM_OPT_PRESENT;
	return fix(b, n + sizeof(opts));
}
static size_t mk_opt_trailing(uint8_t *b)
{
	static const uint8_t two[8] = {PGM_OPT_SYN | PGM_OPT_END, 4, 0, 0, PGM_OPT_FIN, 4, 0, 0};

	return with_raw(b, PGM_ODATA, two, sizeof(two));
}
static size_t opt_size(uint8_t *b, unsigned type, unsigned len)
{
	uint8_t raw[64] = {0};

	raw[0] = (uint8_t)type;
	raw[1] = (uint8_t)len;
	if (type == PGM_OPT_REDIRECT || type == PGM_OPT_PGMCC_DATA)
		wire_test_put16(raw + (type == PGM_OPT_REDIRECT ? 4 : 8), PGM_AFI_IP);
	if (type == PGM_OPT_CR)
		wire_test_put16(raw + 16, PGM_AFI_IP);
	if (type == PGM_OPT_PARITY_PRM)
		wire_test_put32(raw + 4, 8);
	return with_raw(b,
		type == PGM_OPT_PGMCC_DATA || type == PGM_OPT_FRAGMENT ? PGM_ODATA : PGM_SPM, raw,
		len);
}
static size_t mk_fragment_12(uint8_t *b)
{
	return opt_size(b, PGM_OPT_FRAGMENT, 12); /* the RFC text's length */
}
static size_t mk_join_12(uint8_t *b)
{
	return opt_size(b, PGM_OPT_JOIN, 12);
}
static size_t mk_bo_ivl_8(uint8_t *b)
{
	return opt_size(b, PGM_OPT_NAK_BO_IVL, 8);
}
static size_t mk_redirect_8(uint8_t *b)
{
	return opt_size(b, PGM_OPT_REDIRECT, 8); /* "4 + NLA" reading of the RFC text */
}
static size_t mk_redirect_16(uint8_t *b)
{
	return opt_size(b, PGM_OPT_REDIRECT, 16);
}
static size_t mk_path_nla_12(uint8_t *b)
{
	return opt_size(b, PGM_OPT_PATH_NLA, 12);
}
static size_t mk_cr_28(uint8_t *b)
{
	return opt_size(b, PGM_OPT_CR, 28);
}
static size_t mk_pgmcc_20(uint8_t *b)
{
	return opt_size(b, PGM_OPT_PGMCC_DATA, 20);
}
static size_t mk_syn_8(uint8_t *b)
{
	return opt_size(b, PGM_OPT_SYN, 8);
}
static size_t mk_prm_12(uint8_t *b)
{
	return opt_size(b, PGM_OPT_PARITY_PRM, 12);
}
static size_t mk_duplicate_join(uint8_t *b)
{
	static const uint8_t two[16] = {
		PGM_OPT_JOIN, 8, 0, 0, 0, 0, 0, 1, PGM_OPT_JOIN, 8, 0, 0, 0, 0, 0, 2};

	return with_raw(b, PGM_SPM, two, sizeof(two));
}
static size_t mk_duplicate_length(uint8_t *b)
{
	static const uint8_t len2[4] = {PGM_OPT_LENGTH, 4, 0, 8};

	return with_raw(b, PGM_SPM, len2, sizeof(len2));
}
static size_t mk_opx_discard(uint8_t *b)
{
	static const uint8_t unk[8] = {0x25, 8, PGM_OPX_DISCARD, 0, 1, 2, 3, 4};

	return with_raw(b, PGM_NAK, unk, sizeof(unk));
}
static size_t mk_nak_list_empty(uint8_t *b)
{
	static const uint8_t list[4] = {PGM_OPT_NAK_LIST, 4, 0, 0};

	return with_raw(b, PGM_NAK, list, sizeof(list));
}
static size_t mk_nak_list_ragged(uint8_t *b)
{
	static const uint8_t list[10] = {PGM_OPT_NAK_LIST, 10, 0, 0, 0, 0, 3, 0xe9, 0, 0};

	return with_raw(b, PGM_NAK, list, sizeof(list));
}
static size_t nak_list(uint8_t *b, const uint32_t *sqns, unsigned count)
{
	struct pgm_build_options o = {.nak_list = sqns, .nak_list_count = count};

	return nak(b, PGM_NAK, "198.18.0.1", "239.192.0.1", &o); /* header SQN 1000 */
}
static size_t mk_nak_list_equal_header(uint8_t *b)
{
	static const uint32_t l[] = {1000};

	return nak_list(b, l, 1);
}
static size_t mk_nak_list_decreasing(uint8_t *b)
{
	static const uint32_t l[] = {1002, 1001};

	return nak_list(b, l, 2);
}
static size_t mk_nak_list_duplicate(uint8_t *b)
{
	static const uint32_t l[] = {1001, 1001};

	return nak_list(b, l, 2);
}
static size_t mk_nak_list_before_header(uint8_t *b)
{
	static const uint32_t l[] = {999};

	return nak_list(b, l, 1);
}
static size_t mk_nak_list_around(uint8_t *b)
{
	/* Each step is forward, but the last entry is more than half the space past 1000. */
	static const uint32_t l[] = {0x70000000, 0xe0000000, 0x50000000};

	return nak_list(b, l, 3);
}
static size_t prm(uint8_t *b, uint32_t tgs)
{
	struct pgm_build_options o = {.parity_prm = true, .parity_tgs = tgs};

	return spm4(b, &o);
}
static size_t mk_tgs_0(uint8_t *b)
{
	return prm(b, 0);
}
static size_t mk_tgs_1(uint8_t *b)
{
	return prm(b, 1);
}
static size_t mk_tgs_24(uint8_t *b)
{
	return prm(b, 24);
}
static size_t mk_tgs_256(uint8_t *b)
{
	return prm(b, 256);
}
static size_t mk_parity_grp_0(uint8_t *b)
{
	struct pgm_build_options o = {
		.parity_grp = true, .parity_grp_value = 0, .extra_header_flags = PGM_OPT_PARITY};

	return odata(b, &o);
}
static size_t mk_var_pktlen_alone(uint8_t *b)
{
	struct pgm_build_options o = {.extra_header_flags = PGM_OPT_VAR_PKTLEN};

	return odata(b, &o);
}
static size_t mk_redirect_afi(uint8_t *b)
{
	size_t n = opt_size(b, PGM_OPT_REDIRECT, 12);

	wire_test_put16(b + 32 + 4 + 4 + 4, 9); /* SPM v4 options at 36; REDIRECT at 40 */
	return fix(b, n);
}
static size_t mk_cr_afi(uint8_t *b)
{
	size_t n = opt_size(b, PGM_OPT_CR, 24);

	wire_test_put16(b + 40 + 16, 3);
	return fix(b, n);
}
static size_t mk_pgmcc_afi(uint8_t *b)
{
	size_t n = opt_size(b, PGM_OPT_PGMCC_DATA, 16);

	wire_test_put16(b + 28 + 8, 0);
	return fix(b, n);
}
static size_t mk_fragment_on_spm(uint8_t *b)
{
	struct pgm_build_options o = {.fragment = true};

	return spm4(b, &o);
}
static size_t mk_nak_list_on_spm(uint8_t *b)
{
	static const uint32_t l[] = {5};
	struct pgm_build_options o = {.nak_list = l, .nak_list_count = 1};

	return spm4(b, &o);
}
static size_t mk_cr_on_ncf(uint8_t *b)
{
	struct pgm_nla r = wire_test_nla("198.18.2.7");
	struct pgm_build_options o = {.cr = true, .cr_rcvr = &r};

	return nak(b, PGM_NCF, "198.18.0.1", "239.192.0.1", &o);
}

static const struct err_case err_cases[] = {
	{"ip empty", PGM_ERR_IP_SHORT, IP, 0, mk_ip_empty},
	{"ipv4 19 bytes", PGM_ERR_IP_SHORT, IP, 0, mk_ip4_short},
	{"ipv6 39 bytes", PGM_ERR_IP_SHORT, IP, 0, mk_ip6_short},
	{"ip version 5", PGM_ERR_IP_VERSION, IP, 0, mk_ip_version},
	{"ihl 16", PGM_ERR_IP_HEADER_LENGTH, IP, 0, mk_ihl_small},
	{"ihl beyond packet", PGM_ERR_IP_HEADER_LENGTH, IP, 0, mk_ihl_beyond},
	{"total length beyond", PGM_ERR_IP_TOTAL_LENGTH, IP, 0, mk_total_beyond},
	{"total length below ihl", PGM_ERR_IP_TOTAL_LENGTH, IP, 0, mk_total_below_ihl},
	{"ipv6 jumbogram", PGM_ERR_IP_TOTAL_LENGTH, IP, 0, mk_ip6_jumbo},
	{"ipv6 payload beyond", PGM_ERR_IP_TOTAL_LENGTH, IP, 0, mk_ip6_payload_beyond},
	{"ipv4 option length 1", PGM_ERR_IP_OPTIONS, IP, 0, mk_ip4_opt_len1},
	{"ipv4 option overrun", PGM_ERR_IP_OPTIONS, IP, 0, mk_ip4_opt_overrun},
	{"ipv4 router alert length 3", PGM_ERR_IP_OPTIONS, IP, 0, mk_ip4_ra_len3},
	{"ipv4 option type without length", PGM_ERR_IP_OPTIONS, IP, 0, mk_ip4_opt_truncated_type},
	{"ipv4 more fragments", PGM_ERR_IP_FRAGMENT, IP, 0, mk_ip4_mf},
	{"ipv4 fragment offset", PGM_ERR_IP_FRAGMENT, IP, 0, mk_ip4_offset},
	{"ipv6 fragment", PGM_ERR_IP_FRAGMENT, IP, 0, mk_ip6_fragment},
	{"ipv6 hop-by-hop not first", PGM_ERR_IP6_EXT_HEADER, IP, 0, mk_ip6_hbh_not_first},
	{"ipv6 extension overrun", PGM_ERR_IP6_EXT_HEADER, IP, 0, mk_ip6_ext_overrun},
	{"ipv6 AH", PGM_ERR_IP6_EXT_HEADER, IP, 0, mk_ip6_ah},
	{"ipv6 bad option TLV", PGM_ERR_IP6_EXT_HEADER, IP, 0, mk_ip6_bad_tlv},
	{"ipv6 router alert length 3", PGM_ERR_IP6_EXT_HEADER, IP, 0, mk_ip6_ra_len3},
	{"ipv4 TCP", PGM_ERR_NOT_PGM, IP, 0, mk_ip4_tcp},
	{"UDP on another port", PGM_ERR_NOT_PGM, IP, 0, mk_udp_other_port},
	{"ipv6 no next header", PGM_ERR_NOT_PGM, IP, 0, mk_ip6_no_next},
	{"ipv6 TCP", PGM_ERR_NOT_PGM, IP, 0, mk_ip6_tcp},
	{"UDP length 7", PGM_ERR_UDP_LENGTH, IP, 0, mk_udp_len_small},
	{"UDP length beyond", PGM_ERR_UDP_LENGTH, IP, 0, mk_udp_len_beyond},
	{"UDP header truncated", PGM_ERR_UDP_LENGTH, IP, 0, mk_udp_truncated},
	{"UDP checksum", PGM_ERR_UDP_CHECKSUM, DATAGRAM, 0, mk_udp_bad_checksum},
	{"UDP over IPv6 without checksum", PGM_ERR_UDP_CHECKSUM, DATAGRAM, 0,
		mk_udp6_zero_checksum},
	{"15 bytes", PGM_ERR_SHORT_HEADER, TPDU, 0, mk_short_header},
	{"version 1", PGM_ERR_BAD_VERSION, TPDU, 0, mk_bad_version},
	{"reserved type bit", PGM_ERR_BAD_RESERVED, TPDU, 0, mk_bad_reserved},
	{"type 3", PGM_ERR_UNKNOWN_TYPE, TPDU, 0, mk_type3},
	{"type 0xb", PGM_ERR_UNKNOWN_TYPE, TPDU, 0, mk_type_b},
	{"type 0xf", PGM_ERR_UNKNOWN_TYPE, TPDU, 0, mk_type_f},
	{"flipped bit", PGM_ERR_BAD_CHECKSUM, TPDU, 0, mk_bad_checksum},
	{"ODATA checksum 0", PGM_ERR_ZERO_CHECKSUM, TPDU, 0, mk_zero_checksum_odata},
	{"RDATA checksum 0", PGM_ERR_ZERO_CHECKSUM, TPDU, PGM_PARSE_NO_CHECKSUM,
		mk_zero_checksum_rdata},
	{"SPM with a TSDU length", PGM_ERR_TSDU_LENGTH, TPDU, 0, mk_tsdu_on_spm},
	{"SPM trailing byte", PGM_ERR_TSDU_LENGTH, TPDU, 0, mk_tsdu_trailing_spm},
	{"SPM trailing byte after options", PGM_ERR_TSDU_LENGTH, TPDU, 0, mk_tsdu_trailing_opts},
	{"ODATA TSDU length too long", PGM_ERR_TSDU_LENGTH, TPDU, 0, mk_tsdu_data_long},
	{"ODATA TSDU length too short", PGM_ERR_TSDU_LENGTH, TPDU, 0, mk_tsdu_data_short},
	{"ODATA TSDU length with options", PGM_ERR_TSDU_LENGTH, TPDU, 0, mk_tsdu_data_opts},
	{"TPDU over 64 KiB", PGM_ERR_TSDU_LENGTH, TPDU, PGM_PARSE_NO_CHECKSUM, mk_tpdu_over_64k},
	{"SPM 27 bytes", PGM_ERR_SPM_LENGTH, TPDU, 0, mk_spm_short},
	{"SPM cut in the AFI word", PGM_ERR_SPM_LENGTH, TPDU, 0, mk_spm_short_afi},
	{"POLL 23 bytes", PGM_ERR_POLL_LENGTH, TPDU, 0, mk_poll_short},
	{"POLL without BO_IVL/RAND/MASK", PGM_ERR_POLL_LENGTH, TPDU, 0, mk_poll_short_tail},
	{"POLR 23 bytes", PGM_ERR_POLR_LENGTH, TPDU, 0, mk_polr_short},
	{"ODATA 23 bytes", PGM_ERR_DATA_LENGTH, TPDU, 0, mk_data_short},
	{"NAK 19 bytes", PGM_ERR_NAK_LENGTH, TPDU, 0, mk_nak_short},
	{"NAK cut before the group AFI", PGM_ERR_NAK_LENGTH, TPDU, 0, mk_nak_short_grp},
	{"ACK 20 bytes", PGM_ERR_ACK_LENGTH, TPDU, 0, mk_ack_short},
	{"SPM AFI 3", PGM_ERR_UNKNOWN_AFI, TPDU, 0, mk_spm_afi3},
	{"NAK source AFI 0", PGM_ERR_UNKNOWN_AFI, TPDU, 0, mk_nak_src_afi0},
	{"NCF group AFI 7", PGM_ERR_UNKNOWN_AFI, TPDU, 0, mk_ncf_grp_afi7},
	{"POLL AFI 256", PGM_ERR_UNKNOWN_AFI, TPDU, 0, mk_poll_afi},
	{"OPT_REDIRECT AFI 9", PGM_ERR_UNKNOWN_AFI, TPDU, 0, mk_redirect_afi},
	{"OPT_CR AFI 3", PGM_ERR_UNKNOWN_AFI, TPDU, 0, mk_cr_afi},
	{"OPT_PGMCC_DATA AFI 0", PGM_ERR_UNKNOWN_AFI, TPDU, 0, mk_pgmcc_afi},
	{"SPM IPv6 path cut", PGM_ERR_TRUNCATED_NLA, TPDU, 0, mk_spm_v6_truncated},
	{"NAK IPv6 group cut", PGM_ERR_TRUNCATED_NLA, TPDU, 0, mk_nak_grp_v6_truncated},
	{"options flag without options", PGM_ERR_OPT_NO_LENGTH, TPDU, 0, mk_opt_missing},
	{"first option not OPT_LENGTH", PGM_ERR_OPT_NO_LENGTH, TPDU, 0, mk_opt_first_not_length},
	{"OPT_LENGTH of 8", PGM_ERR_OPT_NO_LENGTH, TPDU, 0, mk_opt_length_len8},
	{"OPT_LENGTH with E", PGM_ERR_OPT_NO_LENGTH, TPDU, 0, mk_opt_length_end_bit},
	{"options total 3", PGM_ERR_OPT_TOTAL_LENGTH, TPDU, 0, mk_opt_total_small},
	{"options total beyond", PGM_ERR_OPT_TOTAL_LENGTH, TPDU, 0, mk_opt_total_beyond},
	{"option length 3", PGM_ERR_OPT_LENGTH, TPDU, 0, mk_opt_len3},
	{"option past the end", PGM_ERR_OPT_LENGTH, TPDU, 0, mk_opt_len_past_end},
	{"option header cut", PGM_ERR_OPT_LENGTH, TPDU, 0, mk_opt_header_cut},
	{"17 options", PGM_ERR_OPT_TOO_MANY, TPDU, 0, mk_opt_17},
	{"last option without E", PGM_ERR_OPT_NO_END, TPDU, 0, mk_opt_no_end},
	{"OPT_LENGTH alone", PGM_ERR_OPT_NO_END, TPDU, 0, mk_opt_only_length},
	{"option after E", PGM_ERR_OPT_TRAILING, TPDU, 0, mk_opt_trailing},
	{"OPT_FRAGMENT 12", PGM_ERR_OPT_SIZE, TPDU, 0, mk_fragment_12},
	{"OPT_JOIN 12", PGM_ERR_OPT_SIZE, TPDU, 0, mk_join_12},
	{"OPT_NAK_BO_IVL 8", PGM_ERR_OPT_SIZE, TPDU, 0, mk_bo_ivl_8},
	{"OPT_REDIRECT 8", PGM_ERR_OPT_SIZE, TPDU, 0, mk_redirect_8},
	{"OPT_REDIRECT 16 for IPv4", PGM_ERR_OPT_SIZE, TPDU, 0, mk_redirect_16},
	{"OPT_PATH_NLA 12", PGM_ERR_OPT_SIZE, TPDU, 0, mk_path_nla_12},
	{"OPT_CR 28 for IPv4", PGM_ERR_OPT_SIZE, TPDU, 0, mk_cr_28},
	{"OPT_PGMCC_DATA 20", PGM_ERR_OPT_SIZE, TPDU, 0, mk_pgmcc_20},
	{"OPT_SYN 8", PGM_ERR_OPT_SIZE, TPDU, 0, mk_syn_8},
	{"OPT_PARITY_PRM 12", PGM_ERR_OPT_SIZE, TPDU, 0, mk_prm_12},
	{"OPT_JOIN twice", PGM_ERR_OPT_DUPLICATE, TPDU, 0, mk_duplicate_join},
	{"OPT_LENGTH twice", PGM_ERR_OPT_DUPLICATE, TPDU, 0, mk_duplicate_length},
	{"unknown option OPX 10", PGM_ERR_OPT_DISCARD, TPDU, 0, mk_opx_discard},
	{"OPX 10 at an endpoint", PGM_ERR_OK, TPDU, PGM_PARSE_IGNORE_OPX, mk_opx_discard},
	{"NAK list empty", PGM_ERR_NAK_LIST_LENGTH, TPDU, 0, mk_nak_list_empty},
	{"NAK list ragged", PGM_ERR_NAK_LIST_LENGTH, TPDU, 0, mk_nak_list_ragged},
	{"NAK list repeats header SQN (strict)", PGM_ERR_NAK_LIST_ORDER, TPDU, PGM_PARSE_STRICT_NAK_LIST,
		mk_nak_list_equal_header},
	{"NAK list repeats header SQN (lenient)", PGM_ERR_OK, TPDU, 0, mk_nak_list_equal_header},
	{"NAK list decreasing (strict)", PGM_ERR_NAK_LIST_ORDER, TPDU, PGM_PARSE_STRICT_NAK_LIST,
		mk_nak_list_decreasing},
	{"NAK list decreasing (lenient)", PGM_ERR_OK, TPDU, 0, mk_nak_list_decreasing},
	{"NAK list duplicate (strict)", PGM_ERR_NAK_LIST_ORDER, TPDU, PGM_PARSE_STRICT_NAK_LIST,
		mk_nak_list_duplicate},
	{"NAK list duplicate (lenient)", PGM_ERR_OK, TPDU, 0, mk_nak_list_duplicate},
	{"NAK list before header SQN (strict)", PGM_ERR_NAK_LIST_ORDER, TPDU, PGM_PARSE_STRICT_NAK_LIST,
		mk_nak_list_before_header},
	{"NAK list before header SQN (lenient)", PGM_ERR_OK, TPDU, 0, mk_nak_list_before_header},
	{"NAK list around the space (strict)", PGM_ERR_NAK_LIST_ORDER, TPDU, PGM_PARSE_STRICT_NAK_LIST,
		mk_nak_list_around},
	{"NAK list around the space (lenient)", PGM_ERR_OK, TPDU, 0, mk_nak_list_around},
	{"TGS 0", PGM_ERR_PARITY_TGS, TPDU, 0, mk_tgs_0},
	{"TGS 1", PGM_ERR_PARITY_TGS, TPDU, 0, mk_tgs_1},
	{"TGS 24", PGM_ERR_PARITY_TGS, TPDU, 0, mk_tgs_24},
	{"TGS 256", PGM_ERR_PARITY_TGS, TPDU, 0, mk_tgs_256},
	{"parity group 0", PGM_ERR_PARITY_GRP, TPDU, 0, mk_parity_grp_0},
	{"VAR_PKTLEN without PARITY", PGM_ERR_PARITY_FLAGS, TPDU, 0, mk_var_pktlen_alone},
	{"OPT_FRAGMENT on an SPM (strict)", PGM_ERR_OPT_WRONG_TYPE, TPDU, PGM_PARSE_STRICT_OPTIONS,
		mk_fragment_on_spm},
	{"OPT_NAK_LIST on an SPM (strict)", PGM_ERR_OPT_WRONG_TYPE, TPDU, PGM_PARSE_STRICT_OPTIONS,
		mk_nak_list_on_spm},
	{"OPT_CR on an NCF (strict)", PGM_ERR_OPT_WRONG_TYPE, TPDU, PGM_PARSE_STRICT_OPTIONS,
		mk_cr_on_ncf},
	{"OPT_FRAGMENT on an SPM (lenient)", PGM_ERR_OK, TPDU, 0, mk_fragment_on_spm},
	{"OPT_CR on an NCF (lenient)", PGM_ERR_OK, TPDU, 0, mk_cr_on_ncf},
};

#define N_ERR_CASES (sizeof(err_cases) / sizeof(err_cases[0]))

static enum pgm_err run_case(const struct err_case *c)
{
	static uint8_t b[70000 + 64];
	struct pgm_packet pkt;
	struct pgm_ip ip;
	size_t n;

	memset(b, 0, sizeof(b));
	n = c->make(b);
	switch (c->api) {
	case TPDU:
		return pgm_parse(b, n, c->flags, &pkt);
	case IP:
		return pgm_parse_ip(b, n, &default_ports, &ip);
	default:
		return pgm_parse_datagram(b, n, &default_ports, c->flags, &ip, &pkt);
	}
}

START_TEST(test_error_case)
{
	const struct err_case *c = &err_cases[_i];
	enum pgm_err got = run_case(c);

	ck_assert_msg(got == c->err, "%s: got %s, expected %s", c->name, pgm_err_name(got),
		pgm_err_name(c->err));
}
END_TEST

/* Every named error has at least one case above. */
START_TEST(test_every_error_covered)
{
	unsigned e;
	size_t i;

	for (e = PGM_ERR_IP_SHORT; e < PGM_ERR_COUNT; e++) {
		bool found = false;

		for (i = 0; i < N_ERR_CASES; i++)
			found |= err_cases[i].err == e;
		ck_assert_msg(found, "no test case for %s", pgm_err_name(e));
	}
}
END_TEST

/* Boundaries that must pass: 16 options, 62 list entries, list wrapping through 0. */
START_TEST(test_boundaries_pass)
{
	uint8_t b[BUF];
	struct pgm_packet p;
	uint32_t l[PGM_MAX_NAK_LIST];
	struct pgm_build_options o = {.nak_list = l, .nak_list_count = PGM_MAX_NAK_LIST};
	struct pgm_header_params h = wire_test_upstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1"), g = wire_test_nla("239.192.0.1");
	unsigned i;
	size_t n;

	n = too_many(b, 15);
	ck_assert_int_eq(pgm_parse(b, n, 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.opt.count, 16);
	ck_assert_uint_eq(p.opt.unknown, 15);

	for (i = 0; i < PGM_MAX_NAK_LIST; i++)
		l[i] = 0xffffffe0u + i; /* header SQN 0xffffffd0: wraps through 0 */
	n = pgm_build_nak(b, sizeof(b), PGM_NAK, &h, 0xffffffd0u, &s, &g, &o);
	ck_assert_int_eq(pgm_parse(b, n, 0, &p), PGM_ERR_OK);
	ck_assert_uint_eq(p.opt.nak_list_count, 62);
	ck_assert_uint_eq(pgm_opt_nak_list_sqn(&p.opt, 61), 0xffffffe0u + 61);
	/* 63 entries do not fit the option length byte: the builder refuses. */
	o.nak_list_count = PGM_MAX_NAK_LIST + 1;
	ck_assert_uint_eq(pgm_build_nak(b, sizeof(b), PGM_NAK, &h, 1, &s, &g, &o), 0);
}
END_TEST

/* An error leaves the common header readable for logs and counters. */
START_TEST(test_header_kept_on_error)
{
	uint8_t b[BUF];
	struct pgm_packet p;
	size_t n = mk_nak_list_decreasing(b);

	ck_assert_int_eq(pgm_parse(b, n, PGM_PARSE_STRICT_NAK_LIST, &p), PGM_ERR_NAK_LIST_ORDER);
	ck_assert_uint_eq(p.type, PGM_NAK);
	ck_assert_uint_eq(p.dport, WIRE_TEST_SPORT);
	ck_assert_mem_eq(p.gsi, wire_test_gsi, 6);
}
END_TEST

/* Names and descriptions exist for every error. */
START_TEST(test_error_names)
{
	unsigned e;

	for (e = 0; e < PGM_ERR_COUNT; e++) {
		ck_assert_ptr_nonnull(pgm_err_name(e));
		ck_assert_str_ne(pgm_err_name(e), "unknown-error");
		ck_assert_uint_gt(strlen(pgm_err_description(e)), 0);
	}
	ck_assert_str_eq(pgm_err_name(PGM_ERR_OPT_WRONG_TYPE), "opt-wrong-type");
	ck_assert_str_eq(pgm_err_name(PGM_ERR_ACK_LENGTH), "ack-length");
}
END_TEST

static Suite *parse_suite(void)
{
	Suite *s = suite_create("wire_parse");
	TCase *vectors = tcase_create("vectors"), *errors = tcase_create("errors");

	tcase_add_test(vectors, test_vector_spm_v4);
	tcase_add_test(vectors, test_vector_spm_v6_options);
	tcase_add_test(vectors, test_vector_odata_fragment);
	tcase_add_test(vectors, test_vector_rdata_no_options);
	tcase_add_test(vectors, test_vector_nak_v6_list);
	tcase_add_test(vectors, test_vector_ncf_nnak_mixed_families);
	tcase_add_test(vectors, test_vector_poll_polr_spmr_ack);
	tcase_add_test(vectors, test_checksum_rules);
	tcase_add_test(vectors, test_boundaries_pass);
	tcase_add_test(vectors, test_header_kept_on_error);
	tcase_add_test(vectors, test_error_names);
	tcase_add_loop_test(errors, test_error_case, 0, (int)N_ERR_CASES);
	tcase_add_test(errors, test_every_error_covered);
	suite_add_tcase(s, vectors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	return check_run(parse_suite());
}

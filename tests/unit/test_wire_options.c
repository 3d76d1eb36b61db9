/*
 * Options (RFC 3208 sections 9, 11.8, 12.7, 15.4, the pgmcc draft): every option's value in
 * both address families where it carries an NLA, exact lengths, OPX bookkeeping, header flags.
 */
#include <check.h>
#include <string.h>

#include "wire_test.h"
#include "tests/unit/check_run.h"

#define BUF 2048

static struct pgm_packet pkt;
static uint8_t buf[BUF];

static void parse_ok(size_t n, unsigned flags)
{
	enum pgm_err err;

	ck_assert_uint_gt(n, 0);
	err = pgm_parse(buf, n, flags, &pkt);
	ck_assert_msg(err == PGM_ERR_OK, "parse: %s", pgm_err_name(err));
}

static size_t spm(const struct pgm_build_options *o)
{
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1");

	return pgm_build_spm(buf, BUF, &h, 1, 2, 3, &s, o);
}

static size_t ncf(const struct pgm_build_options *o, const char *family_src)
{
	struct pgm_header_params h = wire_test_downstream();
	struct pgm_nla s = wire_test_nla(family_src), g = wire_test_nla("239.192.0.1");

	return pgm_build_nak(buf, BUF, PGM_NCF, &h, 50, &s, &g, o);
}

static size_t data(unsigned type, const struct pgm_build_options *o)
{
	struct pgm_header_params h = wire_test_downstream();

	return pgm_build_data(buf, BUF, type, &h, 50, 40, "xyz", 3, o);
}

START_TEST(test_fragment)
{
	struct pgm_build_options o = {.fragment = true,
		.frag_first_sqn = 0xfffffffe,
		.frag_offset = 65000,
		.frag_apdu_len = 70000};

	parse_ok(data(PGM_RDATA, &o), 0);
	ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_FRAGMENT));
	ck_assert_uint_eq(pkt.opt.frag_first_sqn, 0xfffffffe);
	ck_assert_uint_eq(pkt.opt.frag_offset, 65000);
	ck_assert_uint_eq(pkt.opt.frag_apdu_len, 70000);
	/* 16 bytes (the RFC's diagram), after OPT_LENGTH; not network-significant. */
	ck_assert_uint_eq(buf[pkt.opt.offset[1] + 1], 16);
	ck_assert_uint_eq(pkt.opt_flags, PGM_OPT_PRESENT);
	ck_assert_uint_eq(pkt.tsdu_len, 3);
	ck_assert_mem_eq(pkt.tsdu, "xyz", 3);
}
END_TEST

START_TEST(test_nak_list)
{
	uint32_t l[3] = {51, 60, 0x80000000u + 49}; /* the last one: just inside half */
	struct pgm_build_options o = {.nak_list = l, .nak_list_count = 3};

	parse_ok(ncf(&o, "198.18.0.1"), 0);
	ck_assert_uint_eq(pkt.opt.nak_list_count, 3);
	ck_assert_uint_eq(pgm_opt_nak_list_sqn(&pkt.opt, 2), 0x80000000u + 49);
	ck_assert_ptr_eq(pkt.opt.nak_list, buf + pkt.opt.offset[1] + 4);
	ck_assert_uint_eq(pkt.opt_flags, PGM_OPT_PRESENT | PGM_OPT_NETWORK);
	ck_assert(!pkt.opt.nak_list_unordered);
	/* 50 + 2^31 is exactly half the space away: not after 50. */
	l[2] = 0x80000000u + 50;
	ck_assert_int_eq(pgm_parse(buf, ncf(&o, "198.18.0.1"), PGM_PARSE_STRICT_NAK_LIST, &pkt),
		PGM_ERR_NAK_LIST_ORDER);
	/* without the strict flag the list is accepted and flagged (OpenPGM sends such lists) */
	parse_ok(ncf(&o, "198.18.0.1"), 0);
	ck_assert(pkt.opt.nak_list_unordered);
	ck_assert_uint_eq(pkt.opt.nak_list_count, 3);
}
END_TEST

START_TEST(test_join_fin_syn_rst)
{
	struct pgm_build_options o = {.join = true,
		.join_min_sqn = 12345,
		.fin = true,
		.rst = true,
		.rst_flags = 0x40 | 0x3f};

	parse_ok(spm(&o), 0);
	ck_assert_uint_eq(pkt.opt.join_min_sqn, 12345);
	ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_FIN));
	ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_RST));
	ck_assert_uint_eq(pkt.opt.rst_flags, 0x7f);
	ck_assert_uint_eq(pkt.opt_flags, PGM_OPT_PRESENT); /* none network-significant */
	memset(&o, 0, sizeof(o));
	o.syn = true;
	parse_ok(data(PGM_ODATA, &o), 0);
	ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_SYN));
	ck_assert_uint_eq(pkt.opt.count, 2);
}
END_TEST

START_TEST(test_nak_bo_ivl_rng)
{
	struct pgm_build_options o = {.nak_bo_ivl = true,
		.nak_bo_ivl_us = 50000,
		.nak_bo_ivl_sqn = 9,
		.nak_bo_rng = true,
		.nak_bo_max_us = 500000,
		.nak_bo_min_us = 1000};

	parse_ok(spm(&o), 0);
	ck_assert_uint_eq(pkt.opt.nak_bo_ivl, 50000);
	ck_assert_uint_eq(pkt.opt.nak_bo_ivl_sqn, 9);
	ck_assert_uint_eq(pkt.opt.nak_bo_max, 500000);
	ck_assert_uint_eq(pkt.opt.nak_bo_min, 1000);
	ck_assert_uint_eq(pkt.opt_flags, PGM_OPT_PRESENT | PGM_OPT_NETWORK);
}
END_TEST

START_TEST(test_redirect_both_families)
{
	static const char *addrs[] = {"198.18.5.5", "2001:db8:5::5"};
	unsigned f;

	for (f = 0; f < 2; f++) {
		struct pgm_nla dlr = wire_test_nla(addrs[f]);
		struct pgm_header_params h = wire_test_upstream();
		struct pgm_build_options o = {.redirect = &dlr};

		parse_ok(pgm_build_polr(buf, BUF, &h, 3, 1, &o), 0);
		ck_assert(pgm_nla_equal(&pkt.opt.redirect, &dlr));
		/* AFI word included: 12 or 24 bytes. */
		ck_assert_uint_eq(buf[pkt.opt.offset[1] + 1], f == 0 ? 12 : 24);
	}
}
END_TEST

START_TEST(test_parity_options)
{
	static const uint32_t good_tgs[] = {2, 4, 8, 16, 32, 64, 128};
	unsigned i;

	for (i = 0; i < sizeof(good_tgs) / sizeof(good_tgs[0]); i++) {
		struct pgm_build_options o = {.parity_prm = true,
			.parity_prm_flags = 0x01,
			.parity_tgs = good_tgs[i],
			.curr_tgsize = true,
			.curr_tgsize_value = good_tgs[i] - 1};

		parse_ok(spm(&o), 0);
		ck_assert_uint_eq(pkt.opt.parity_tgs, good_tgs[i]);
		ck_assert_uint_eq(pkt.opt.parity_prm_flags, 0x01);
		ck_assert_uint_eq(pkt.opt.curr_tgsize, good_tgs[i] - 1);
	}
	{
		struct pgm_build_options o = {.parity_grp = true,
			.parity_grp_value = 7,
			.curr_tgsize = true,
			.curr_tgsize_value = 3,
			.extra_header_flags = PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN};

		parse_ok(data(PGM_ODATA, &o), 0);
		ck_assert_uint_eq(pkt.opt.parity_grp, 7);
		ck_assert(pgm_packet_is_parity(&pkt));
		/* 11.8.3: OPT_CURR_TGSIZE is not network-significant on ODATA. */
		ck_assert_uint_eq(
			pkt.opt_flags, PGM_OPT_PRESENT | PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN);
		parse_ok(data(PGM_RDATA, &o), 0);
		ck_assert_uint_eq(pkt.opt_flags,
			PGM_OPT_PRESENT | PGM_OPT_NETWORK | PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN);
	}
}
END_TEST

START_TEST(test_nbr_unreach_path_nla_both_families)
{
	static const char *addrs[] = {"198.18.1.1", "2001:db8:1::1"};
	unsigned f;

	for (f = 0; f < 2; f++) {
		struct pgm_nla path = wire_test_nla(addrs[f]);
		struct pgm_build_options o = {.nbr_unreach = true, .path_nla = &path};

		parse_ok(ncf(&o, "198.18.0.1"), 0);
		ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_NBR_UNREACH));
		ck_assert(pgm_nla_equal(&pkt.opt.path_nla, &path));
		/* 15.4.4: no AFI on the wire, 8 or 20 bytes. */
		ck_assert_uint_eq(buf[pkt.opt.offset[2] + 1], f == 0 ? 8 : 20);
	}
}
END_TEST

START_TEST(test_cr_crqst_both_families)
{
	static const char *addrs[] = {"198.18.2.7", "2001:db8:2::7"};
	unsigned f;

	for (f = 0; f < 2; f++) {
		struct pgm_nla rcvr = wire_test_nla(addrs[f]);
		struct pgm_header_params h = wire_test_upstream();
		struct pgm_nla s = wire_test_nla("198.18.0.1"), g = wire_test_nla("239.192.0.1");
		struct pgm_build_options o = {.cr = true,
			.cr_flags = 0x05,
			.cr_lead = 77,
			.cr_ne_wl = 0xffff,
			.cr_ne_wp = 1,
			.cr_rx_wp = 0x8000,
			.cr_rcvr = &rcvr};

		parse_ok(pgm_build_nak(buf, BUF, PGM_NAK, &h, 70, &s, &g, &o), 0);
		ck_assert_uint_eq(pkt.opt.cr_flags, 0x05);
		ck_assert_uint_eq(pkt.opt.cr_lead, 77);
		ck_assert_uint_eq(pkt.opt.cr_ne_wl, 0xffff);
		ck_assert_uint_eq(pkt.opt.cr_ne_wp, 1);
		ck_assert_uint_eq(pkt.opt.cr_rx_wp, 0x8000);
		ck_assert(pgm_nla_equal(&pkt.opt.cr_rcvr, &rcvr));
		ck_assert_uint_eq(buf[pkt.opt.offset[1] + 1], f == 0 ? 24 : 36);
	}
	{
		struct pgm_build_options o = {.crqst = true, .crqst_flags = 0x02};

		parse_ok(spm(&o), 0);
		ck_assert_uint_eq(pkt.opt.crqst_flags, 0x02);
	}
}
END_TEST

START_TEST(test_pgmcc_both_families)
{
	static const char *addrs[] = {"198.18.2.7", "2001:db8:2::7"};
	unsigned f;

	for (f = 0; f < 2; f++) {
		struct pgm_nla acker = wire_test_nla(addrs[f]);
		size_t alen = pgm_nla_len(&acker);
		uint8_t raw[32] = {PGM_OPT_PGMCC_FEEDBACK, (uint8_t)(12 + alen), 0, 0};
		struct pgm_header_params h = wire_test_upstream();
		struct pgm_build_options o = {.raw = raw, .raw_len = 12 + alen};

		wire_test_put32(raw + 4, 0xabcdef01);
		wire_test_put16(raw + 8, acker.afi);
		wire_test_put16(raw + 10, 0x4321);
		memcpy(raw + 12, acker.addr, alen);
		parse_ok(pgm_build_ack(buf, BUF, &h, 9, 1, &o), 0);
		ck_assert_uint_eq(pkt.opt.pgmcc_tstamp, 0xabcdef01);
		ck_assert_uint_eq(pkt.opt.pgmcc_loss_rate, 0x4321);
		ck_assert(pgm_nla_equal(&pkt.opt.pgmcc_nla, &acker));
		ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_PGMCC_FEEDBACK));

		raw[0] = PGM_OPT_PGMCC_DATA;
		parse_ok(data(PGM_ODATA, &o), 0);
		ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_PGMCC_DATA));
		ck_assert_uint_eq(pkt.opt.pgmcc_loss_rate, 0); /* DATA has none */
		ck_assert(pgm_nla_equal(&pkt.opt.pgmcc_nla, &acker));
	}
}
END_TEST

/* Unknown options: counted by OPX; OPX 01 marks rewrite candidates; several OPT_INVALID. */
START_TEST(test_unknown_and_invalid)
{
	static const uint8_t raw[] = {
		0x21, 4, PGM_OPX_IGNORE, 0,		     /* unknown, ignore */
		0x22, 6, PGM_OPX_INVALIDATE | 0x04, 0, 1, 2, /* unknown, invalidate, F bit (RFC) */
		0x23, 5, PGM_OPX_RESERVED, 0x80, 9,	     /* unknown, reserved OPX, U bit */
		0x24, 4, PGM_OPX_INVALIDATE | 0x08, 0, /* unknown, invalidate, F bit (OpenPGM) */
		PGM_OPT_INVALID, 4, 0, 0,	       /* already invalidated */
		PGM_OPT_INVALID, 7, 0, 0, 1, 2, 3,     /* and another */
	};
	struct pgm_build_options o = {.raw = raw, .raw_len = sizeof(raw)};

	parse_ok(spm(&o), 0);
	ck_assert_uint_eq(pkt.opt.count, 7);
	ck_assert_uint_eq(pkt.opt.unknown, 4);
	ck_assert_uint_eq(pkt.opt.opx_invalidate, 2);
	ck_assert_uint_eq(pkt.opt.opx_reserved, 1);
	ck_assert(pgm_opt_has(&pkt.opt, PGM_OPT_INVALID));
	ck_assert_uint_eq(pkt.opt.type[2], 0x22);
	ck_assert_uint_eq(pkt.opt.flags[2] & PGM_OPX_MASK, PGM_OPX_INVALIDATE);
	ck_assert_uint_eq(pkt.opt.flags[4], PGM_OPX_INVALIDATE | 0x08);
	ck_assert_uint_eq(pkt.opt.specific[3], 0x80);
	/* odd option lengths move later options to odd offsets */
	ck_assert_uint_eq(pkt.opt.offset[4] & 1, 1);
	/* OPX 10 anywhere discards, also after valid options; endpoints ignore it */
	{
		uint8_t raw2[sizeof(raw) + 4];

		memcpy(raw2, raw, sizeof(raw));
		memcpy(raw2 + sizeof(raw), (uint8_t[]){0x25, 4, PGM_OPX_DISCARD, 0}, 4);
		o.raw = raw2;
		o.raw_len = sizeof(raw2);
		ck_assert_int_eq(pgm_parse(buf, spm(&o), 0, &pkt), PGM_ERR_OPT_DISCARD);
		ck_assert_uint_eq(pkt.opt.unknown, 5); /* still fully parsed */
		parse_ok(spm(&o), PGM_PARSE_IGNORE_OPX);
		ck_assert_uint_eq(pkt.opt.unknown, 5);
	}
}
END_TEST

/* Every option type has a name; unknown types get a hex one. */
START_TEST(test_option_names_and_bits)
{
	unsigned t;
	int bits_seen = 0;

	for (t = 0; t < 128; t++) {
		int bit = pgm_opt_bit(t);

		ck_assert_ptr_nonnull(pgm_opt_name(t));
		if (bit >= 0) {
			ck_assert_int_lt(bit, 32);
			bits_seen++;
		}
	}
	ck_assert_int_eq(bits_seen, 20); /* 19 types of table 4.8 and OPT_INVALID */
	ck_assert_str_eq(pgm_opt_name(0x45), "OPT_0x45");
	ck_assert_str_eq(pgm_opt_name(PGM_OPT_PATH_NLA | PGM_OPT_END), "OPT_PATH_NLA");
}
END_TEST

/* 16 options in all is the limit (9): OPT_LENGTH + 15 known ones parse. */
START_TEST(test_sixteen_known_options)
{
	uint32_t l[1] = {51};
	struct pgm_nla n4 = wire_test_nla("198.18.9.9");
	struct pgm_build_options o = {.nak_list = l,
		.nak_list_count = 1,
		.nak_bo_ivl = true,
		.nak_bo_rng = true,
		.redirect = &n4,
		.parity_prm = true,
		.parity_tgs = 4,
		.curr_tgsize = true,
		.parity_grp = true,
		.parity_grp_value = 1,
		.nbr_unreach = true,
		.path_nla = &n4,
		.fragment = true,
		.join = true,
		.syn = true,
		.fin = true,
		.rst = true,
		.crqst = true};

	parse_ok(ncf(&o, "198.18.0.1"), 0);
	ck_assert_uint_eq(pkt.opt.count, 16);
	ck_assert_uint_eq(pkt.opt.unknown, 0);
	/* and the strict mode names the first misplaced one */
	ck_assert_int_eq(pgm_parse(buf, ncf(&o, "198.18.0.1"), PGM_PARSE_STRICT_OPTIONS, &pkt),
		PGM_ERR_OPT_WRONG_TYPE);
	/* one more (OPT_CR) is one too many */
	o.cr = true;
	o.cr_rcvr = &n4;
	ck_assert_int_eq(pgm_parse(buf, ncf(&o, "198.18.0.1"), 0, &pkt), PGM_ERR_OPT_TOO_MANY);
}
END_TEST

/* Strict mode accepts every option on the types RFC 3208 lets it ride. */
START_TEST(test_strict_accepts_allowed)
{
	struct pgm_nla n4 = wire_test_nla("198.18.9.9");
	uint32_t l[1] = {51};

	{
		struct pgm_build_options o = {.join = true,
			.nak_bo_ivl = true,
			.nak_bo_rng = true,
			.parity_prm = true,
			.parity_tgs = 8,
			.curr_tgsize = true,
			.nbr_unreach = true,
			.fin = true,
			.rst = true,
			.crqst = true};

		parse_ok(spm(&o), PGM_PARSE_STRICT_OPTIONS);
	}
	{
		struct pgm_build_options o = {.fragment = true,
			.join = true,
			.parity_grp = true,
			.parity_grp_value = 3,
			.curr_tgsize = true,
			.syn = true,
			.fin = true};

		parse_ok(data(PGM_RDATA, &o), PGM_PARSE_STRICT_OPTIONS);
	}
	{
		struct pgm_build_options o = {.nak_list = l,
			.nak_list_count = 1,
			.nak_bo_ivl = true,
			.redirect = &n4,
			.nbr_unreach = true,
			.path_nla = &n4};

		parse_ok(ncf(&o, "198.18.0.1"), PGM_PARSE_STRICT_OPTIONS);
	}
}
END_TEST

static Suite *options_suite(void)
{
	Suite *s = suite_create("wire_options");
	TCase *tc = tcase_create("options");

	tcase_add_test(tc, test_fragment);
	tcase_add_test(tc, test_nak_list);
	tcase_add_test(tc, test_join_fin_syn_rst);
	tcase_add_test(tc, test_nak_bo_ivl_rng);
	tcase_add_test(tc, test_redirect_both_families);
	tcase_add_test(tc, test_parity_options);
	tcase_add_test(tc, test_nbr_unreach_path_nla_both_families);
	tcase_add_test(tc, test_cr_crqst_both_families);
	tcase_add_test(tc, test_pgmcc_both_families);
	tcase_add_test(tc, test_unknown_and_invalid);
	tcase_add_test(tc, test_option_names_and_bits);
	tcase_add_test(tc, test_sixteen_known_options);
	tcase_add_test(tc, test_strict_accepts_allowed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(options_suite());
}

/*
 * Checksums of the wire codec: the Internet checksum against a plain reference implementation,
 * PGM's zero rules (8), and the RFC 1624 incremental update.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "wire_test.h"
#include "tests/unit/check_run.h"

/* RFC 1071 section 3 example: words 0001 f203 f4f5 f6f7 sum to 0xddf2. */
START_TEST(test_rfc1071_example)
{
	static const uint8_t bytes[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	uint32_t sum = pgm_csum_partial(bytes, sizeof(bytes), 0);

	sum = (sum & 0xffff) + (sum >> 16);
	ck_assert_uint_eq(sum, 0xddf2);
	ck_assert_uint_eq(pgm_csum_fold(pgm_csum_partial(bytes, sizeof(bytes), 0)), 0x220d);
}
END_TEST

/* Every length 0..600 at every alignment 0..15 agrees with the reference sum. */
START_TEST(test_partial_matches_reference)
{
	static uint8_t buf[640];
	size_t len, align;

	srandom(1);
	for (len = 0; len < sizeof(buf); len++)
		buf[len] = (uint8_t)random();
	for (align = 0; align < 16; align++)
		for (len = 0; len + align <= 600; len++) {
			uint32_t sum = pgm_csum_partial(buf + align, len, 0);

			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			if (sum != wire_test_reference_sum(buf + align, len))
				ck_abort_msg("len %zu align %zu: %04x != %04x", len, align, sum,
					wire_test_reference_sum(buf + align, len));
		}
}
END_TEST

/* All-ones data stresses the carries: 65535 bytes of 0xff. */
START_TEST(test_partial_carries)
{
	static uint8_t buf[65535];
	uint32_t sum;

	memset(buf, 0xff, sizeof(buf));
	sum = pgm_csum_partial(buf, sizeof(buf), 0xffffffffu);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	/* 65535 bytes of 0xff (the odd byte pads to ff00) plus 0xffffffff, reference-summed. */
	{
		uint64_t ref = wire_test_reference_sum(buf, sizeof(buf));

		ref += 0xffffffffu;
		while (ref >> 16)
			ref = (ref & 0xffff) + (ref >> 16);
		ck_assert_uint_eq(sum, ref);
	}
}
END_TEST

/* Sums of even-length pieces chain into the sum of the whole. */
START_TEST(test_partial_chains)
{
	uint8_t buf[300];
	uint32_t whole, chained;
	size_t i, cut;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	whole = pgm_csum_fold(pgm_csum_partial(buf, sizeof(buf), 0));
	for (cut = 0; cut <= sizeof(buf); cut += 2) {
		chained = pgm_csum_partial(buf, cut, 0);
		chained = pgm_csum_partial(buf + cut, sizeof(buf) - cut, chained);
		ck_assert_uint_eq(pgm_csum_fold(chained), whole);
	}
}
END_TEST

/* 8: a computed 0 goes out as 0xffff, and 0xffff verifies. */
START_TEST(test_zero_sent_as_ffff)
{
	struct pgm_header_params hdr = wire_test_downstream();
	struct pgm_nla path = wire_test_nla("198.18.0.1");
	struct pgm_packet pkt;
	uint8_t t[64];
	size_t n = pgm_build_spm(t, sizeof(t), &hdr, 1, 2, 3, &path, NULL);
	uint16_t sum;

	ck_assert_uint_gt(n, 0);
	/* Make the sum of everything but the checksum field 0xffff by adjusting SPM_LEAD's low
	 * word: its complement is then 0, sent as 0xffff. */
	t[6] = t[7] = 0;
	sum = wire_test_reference_sum(t, n);
	{
		uint32_t word = wire_test_get16(t + 26);

		word += (uint16_t)(0xffff - sum);
		word = (word & 0xffff) + (word >> 16);
		wire_test_put16(t + 26, (uint16_t)word);
	}
	ck_assert_uint_eq(wire_test_reference_sum(t, n), 0xffff);
	ck_assert_uint_eq(pgm_checksum(t, n), 0xffff);
	pgm_checksum_set(t, n);
	ck_assert_uint_eq(wire_test_get16(t + 6), 0xffff);
	ck_assert_int_eq(pgm_parse(t, n, 0, &pkt), PGM_ERR_OK);
	ck_assert_uint_eq(pgm_csum_fold(0xffff), 0xffff);
	ck_assert_uint_eq(pgm_csum_fold(0), 0xffff);
}
END_TEST

/* pgm_checksum ignores whatever is in the field; pgm_checksum_set makes the packet verify. */
START_TEST(test_checksum_ignores_field)
{
	struct wire_test_case *cases = calloc(128, sizeof(*cases));
	size_t n = wire_test_catalog(cases, 128), i;
	struct pgm_packet pkt;

	ck_assert_uint_le(n, 128);
	for (i = 0; i < n; i++) {
		uint8_t *t = cases[i].tpdu;
		uint16_t expected = pgm_checksum(t, cases[i].len);

		wire_test_put16(t + 6, 0x1234);
		ck_assert_uint_eq(pgm_checksum(t, cases[i].len), expected);
		pgm_checksum_set(t, cases[i].len);
		ck_assert_uint_eq(wire_test_get16(t + 6), expected);
		ck_assert_msg(
			pgm_parse(t, cases[i].len, 0, &pkt) == PGM_ERR_OK, "%s", cases[i].name);
		ck_assert(pgm_csum_verifies(t, cases[i].len));
		/* and one flipped bit anywhere is caught */
		t[cases[i].len - 1] ^= 0x01;
		ck_assert(!pgm_csum_verifies(t, cases[i].len));
		ck_assert_int_eq(pgm_parse(t, cases[i].len, 0, &pkt), PGM_ERR_BAD_CHECKSUM);
	}
	free(cases);
}
END_TEST

/* RFC 1624: updating word by word equals recomputing, including to and from 0xffff. */
START_TEST(test_incremental_update)
{
	uint8_t buf[64], old[8];
	unsigned round;

	srandom(7);
	for (round = 0; round < 20000; round++) {
		size_t i, at = 2 * (size_t)(random() % 28), words = 1 + (size_t)(random() % 4);
		uint16_t before, after;

		for (i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)random();
		if (round % 4 == 0) /* force sums near the all-ones edge */
			memset(buf, round % 8 == 0 ? 0xff : 0x00, sizeof(buf));
		buf[6] = buf[7] = 0;
		pgm_checksum_set(buf, sizeof(buf));
		before = wire_test_get16(buf + 6);
		if (at < 8)
			at = 8; /* leave the checksum field alone */
		memcpy(old, buf + at, 2 * words);
		for (i = 0; i < 2 * words; i++)
			buf[at + i] = (uint8_t)random();
		after = pgm_csum_update(before, old, buf + at, words);
		ck_assert_uint_eq(after, pgm_checksum(buf, sizeof(buf)));
	}
}
END_TEST

static Suite *csum_suite(void)
{
	Suite *s = suite_create("wire_csum");
	TCase *tc = tcase_create("csum");

	tcase_add_test(tc, test_rfc1071_example);
	tcase_add_test(tc, test_partial_matches_reference);
	tcase_add_test(tc, test_partial_carries);
	tcase_add_test(tc, test_partial_chains);
	tcase_add_test(tc, test_zero_sent_as_ffff);
	tcase_add_test(tc, test_checksum_ignores_field);
	tcase_add_test(tc, test_incremental_update);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(csum_suite());
}

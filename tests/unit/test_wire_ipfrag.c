/*
 * IPv4 fragmentation of the router's own copies (dataplane/wire/ipfrag.h): the fragments are
 * those the kernel makes (lengths, 8-byte offsets, MF, the id, the options copied or turned
 * into NOPs, valid header checksums) and reassemble, in any order, to the original.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/wire/ipfrag.h"
#include "dataplane/wire/pgm_wire.h"
#include "tests/unit/check_run.h"

#define RR_OPT 7    /* Record Route: not copied into later fragments */
#define RA_OPT 0x94 /* Router Alert: copied */

/* An IPv4 datagram of len bytes, protocol 113, header of ihl bytes (20, or 32 with Router
   Alert and a Record Route option), payload bytes i * 7 + 3, total length and checksum set. */
static void make_datagram(uint8_t *d, size_t len, size_t ihl, uint16_t frag)
{
	memset(d, 0, ihl);
	d[0] = (uint8_t)(0x40 | ihl / 4);
	d[2] = (uint8_t)(len >> 8);
	d[3] = (uint8_t)len;
	d[4] = 0xbe;
	d[5] = 0xef;
	d[6] = (uint8_t)(frag >> 8);
	d[7] = (uint8_t)frag;
	d[8] = 17;
	d[9] = 113;
	memcpy(d + 12, "\xc6\x12\x00\x01\xef\xc0\x00\x01", 8);
	if (ihl == 32) {
		static const uint8_t opts[12] = {RA_OPT, 4, 0, 0, RR_OPT, 7, 4, 0, 0, 0, 0, 0};

		memcpy(d + 20, opts, sizeof(opts));
	}
	for (size_t i = ihl; i < len; i++)
		d[i] = (uint8_t)(i * 7 + 3);
	{
		uint16_t c = pgm_ip_header_checksum(d, ihl);

		d[10] = (uint8_t)(c >> 8);
		d[11] = (uint8_t)c;
	}
}

/*
 * Splits d for mtu, checks every fragment and reassembles them in the order perm gives (NULL:
 * as made) into out, by offset, as a receiver would; returns the number of fragments.
 */
static unsigned split_and_reassemble(
	const uint8_t *d, size_t len, size_t mtu, const unsigned *perm, uint8_t *out)
{
	static uint8_t frags[128][1500];
	size_t lens[128], ihl = (size_t)(d[0] & 0xf) * 4, covered = 0;
	unsigned count, orig_off = (unsigned)((d[6] << 8 | d[7]) & 0x1fff);
	bool orig_mf = (d[6] & 0x20) != 0;

	ck_assert_int_eq(ipfrag_plan(d, len, mtu, &count), IPFRAG_SPLIT);
	ck_assert_uint_ge(count, 2);
	ck_assert_uint_le(count, 128);
	for (unsigned i = 0; i < count; i++) {
		uint8_t *f = frags[i];
		unsigned word, off;
		uint8_t h[60];

		lens[i] = ipfrag_build(d, len, mtu, i, 0x1234, f);
		ck_assert_uint_le(lens[i], mtu);
		ck_assert_uint_eq((size_t)(f[2] << 8 | f[3]), lens[i]);
		ck_assert_uint_eq(f[0], d[0]); /* every header as long as the original's */
		ck_assert_uint_eq(f[4] << 8 | f[5], 0x1234);
		ck_assert_mem_eq(f + 8, d + 8, 2);   /* TTL, protocol */
		ck_assert_mem_eq(f + 12, d + 12, 8); /* addresses */
		memcpy(h, f, ihl);
		h[10] = h[11] = 0;
		ck_assert_uint_eq(pgm_ip_header_checksum(h, ihl), (unsigned)(f[10] << 8 | f[11]));
		word = (unsigned)(f[6] << 8 | f[7]);
		ck_assert_uint_eq(word & 0x4000, 0); /* DF clear */
		off = (word & 0x1fff) - orig_off;
		ck_assert_uint_eq(off * 8, covered); /* contiguous, 8-byte aligned */
		if (i + 1 < count) {
			ck_assert_uint_eq((lens[i] - ihl) % 8, 0);
			ck_assert_uint_ne(word & 0x2000, 0);
		} else {
			ck_assert_uint_eq((word & 0x2000) != 0, orig_mf);
		}
		covered += lens[i] - ihl;
		if (ihl == 32) {
			ck_assert_mem_eq(f + 20, d + 20, 4); /* Router Alert in every fragment */
			if (i == 0)
				ck_assert_mem_eq(f + 24, d + 24, 8);
			else
				ck_assert_mem_eq(f + 24, "\x01\x01\x01\x01\x01\x01\x01\x00", 8);
		}
	}
	ck_assert_uint_eq(covered, len - ihl);
	memset(out, 0xaa, len);
	for (unsigned k = 0; k < count; k++) {
		unsigned i = perm != NULL ? perm[k] : k;
		size_t off = (size_t)(((frags[i][6] << 8 | frags[i][7]) & 0x1fff) - orig_off) * 8;

		if (off == 0)
			memcpy(out, frags[i], ihl);
		memcpy(out + ihl + off, frags[i] + ihl, lens[i] - ihl);
	}
	return count;
}

/* A 9000-byte TPDU's datagram over a 1500-byte link: the kernel's 1480-byte steps. */
START_TEST(test_9000_over_1500)
{
	static uint8_t d[9000], out[9000];
	unsigned n;

	make_datagram(d, sizeof(d), 20, 0);
	n = split_and_reassemble(d, sizeof(d), 1500, NULL, out);
	ck_assert_uint_eq(n, 7); /* 6 of 1480 bytes, then 100 */
	ck_assert_mem_eq(out + 20, d + 20, sizeof(d) - 20);
	ck_assert_mem_eq(out + 12, d + 12, 8);
}
END_TEST

/* With options: steps of (1500 - 32) rounded down to 8; out of order reassembles the same. */
START_TEST(test_options_and_any_order)
{
	static uint8_t d[5000], out[5000];
	static const unsigned perm[4] = {3, 1, 0, 2};

	make_datagram(d, sizeof(d), 32, 0);
	ck_assert_uint_eq(split_and_reassemble(d, sizeof(d), 1500, perm, out), 4);
	ck_assert_mem_eq(out + 32, d + 32, sizeof(d) - 32);
}
END_TEST

/* Every length and MTU in a range, and a datagram that is itself a fragment (offset, MF). */
START_TEST(test_lengths_and_mtus)
{
	static uint8_t d[4200], out[4200];

	for (size_t mtu = IPFRAG_MIN_MTU; mtu <= 1500; mtu += 37)
		for (size_t len = mtu + 1; len <= sizeof(d); len += 211) {
			make_datagram(d, len, len % 2 ? 32 : 20, 0);
			if (len <= mtu || mtu < (size_t)(d[0] & 0xf) * 4 + 8)
				continue;
			split_and_reassemble(d, len, mtu, NULL, out);
			ck_assert_mem_eq(out + 32, d + 32, len - 32);
		}
	make_datagram(d, 3000, 20, 0x2000 | 100); /* MF, offset 800 bytes */
	split_and_reassemble(d, 3000, 1500, NULL, out);
	ck_assert_mem_eq(out + 20, d + 20, 3000 - 20);
}
END_TEST

START_TEST(test_refusals)
{
	static uint8_t d[3000];
	unsigned count;

	make_datagram(d, sizeof(d), 20, 0);
	ck_assert_int_eq(ipfrag_plan(d, sizeof(d), 3000, &count), IPFRAG_FITS);
	ck_assert_uint_eq(count, 1);
	ck_assert_int_eq(ipfrag_plan(d, sizeof(d), 27, &count), IPFRAG_MTU_SMALL);
	ck_assert_int_eq(ipfrag_plan(d, sizeof(d), 28, &count), IPFRAG_SPLIT);
	ck_assert_uint_eq(count, 2980 / 8 + 1);
	make_datagram(d, sizeof(d), 20, 0x4000); /* DF */
	ck_assert_int_eq(ipfrag_plan(d, sizeof(d), 1500, &count), IPFRAG_DF);
	ck_assert_int_eq(ipfrag_plan(d, sizeof(d) - 1, 1500, &count), IPFRAG_MALFORMED);
	d[0] = 0x60;
	ck_assert_int_eq(ipfrag_plan(d, sizeof(d), 1500, &count), IPFRAG_MALFORMED);
	d[0] = 0x44; /* header shorter than 20 */
	ck_assert_int_eq(ipfrag_plan(d, sizeof(d), 1500, &count), IPFRAG_MALFORMED);
	ck_assert_int_eq(ipfrag_plan(NULL, 0, 1500, &count), IPFRAG_MALFORMED);
}
END_TEST

/* A malformed option length: the rest of the later fragments' options become NOPs. */
START_TEST(test_bad_option_length)
{
	static uint8_t d[2000], f[1500];

	make_datagram(d, sizeof(d), 32, 0);
	d[25] = 40; /* Record Route longer than the header */
	ck_assert_uint_gt(ipfrag_build(d, sizeof(d), 1500, 1, 7, f), 32);
	ck_assert_mem_eq(f + 20, d + 20, 4);
	ck_assert_mem_eq(f + 24, "\x01\x01\x01\x01\x01\x01\x01\x01", 8);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wire_ipfrag");
	TCase *tc = tcase_create("ipfrag");

	tcase_add_test(tc, test_9000_over_1500);
	tcase_add_test(tc, test_options_and_any_order);
	tcase_add_test(tc, test_lengths_and_mtus);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_bad_option_length);
	suite_add_tcase(s, tc);
	return check_run(s);
}

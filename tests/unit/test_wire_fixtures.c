/*
 * Real OpenPGM traffic (the pcap files of tests/fixtures, see its README): every PGM packet
 * parses and re-serializes byte for byte, and the captures hold the packet types and options
 * they are meant to exercise. The UDP captures were taken where the sender's UDP checksums are
 * left to offload (tshark reports them bad too), so UDP checksums are not verified; PGM
 * checksums are.
 */
#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "tests/lib/pgm_pcap_check.h"
#include "wire_test.h"
#include "tests/unit/check_run.h"

#define FIXTURES "tests/fixtures/*.pcap"

static glob_t fixtures;
static bool globbed;

static void find_fixtures(void)
{
	globbed = glob(FIXTURES, 0, NULL, &fixtures) == 0;
	if (!globbed)
		fixtures.gl_pathc = 0;
}

START_TEST(test_fixture_round_trip)
{
	ck_assert_msg(fixtures.gl_pathc > 0, "no %s (run from the repository root)", FIXTURES);
	wire_test_assert_pcap_round_trip(fixtures.gl_pathv[_i], PGM_PARSE_NO_UDP_CHECKSUM, 100);
}
END_TEST

struct census {
	unsigned long types[PGM_TYPE_COUNT];
	unsigned long spm_fin, odata_fragment, rdata_fragment, nak_list, ncf_list;
};

static void count_packet(const uint8_t *datagram, size_t len, unsigned long index, void *arg)
{
	struct census *c = arg;
	struct pgm_udp_ports ports;
	struct pgm_packet p;
	struct pgm_ip ip;

	(void)index;
	pgm_udp_ports_default(&ports);
	if (pgm_parse_datagram(datagram, len, &ports, PGM_PARSE_NO_UDP_CHECKSUM, &ip, &p) !=
		PGM_ERR_OK)
		return;
	c->types[p.type]++;
	c->spm_fin += p.type == PGM_SPM && pgm_opt_has(&p.opt, PGM_OPT_FIN);
	c->odata_fragment += p.type == PGM_ODATA && pgm_opt_has(&p.opt, PGM_OPT_FRAGMENT);
	c->rdata_fragment += p.type == PGM_RDATA && pgm_opt_has(&p.opt, PGM_OPT_FRAGMENT);
	c->nak_list += p.type == PGM_NAK && p.opt.nak_list_count > 0;
	c->ncf_list += p.type == PGM_NCF && p.opt.nak_list_count > 0;
}

/* What the README promises each capture holds, so the round trip above covers it. */
START_TEST(test_fixture_contents)
{
	struct census c;
	struct pgm_pcap_walk walk;
	char err[512];

	memset(&c, 0, sizeof(c));
	ck_assert_msg(pgm_pcap_for_each_datagram(fixtures.gl_pathv[_i], count_packet, &c, &walk,
			      err, sizeof(err)) == 0,
		"%s", err);
	printf("%s: SPM %lu (FIN %lu), ODATA %lu (fragments %lu), RDATA %lu (fragments %lu), "
	       "NAK %lu (lists %lu), NCF %lu (lists %lu), SPMR %lu\n",
		fixtures.gl_pathv[_i], c.types[PGM_SPM], c.spm_fin, c.types[PGM_ODATA],
		c.odata_fragment, c.types[PGM_RDATA], c.rdata_fragment, c.types[PGM_NAK],
		c.nak_list, c.types[PGM_NCF], c.ncf_list, c.types[PGM_SPMR]);
	ck_assert_uint_gt(c.spm_fin, 0);
	ck_assert_uint_gt(c.odata_fragment, 0);
	ck_assert_uint_gt(c.types[PGM_RDATA], 0);
	ck_assert_uint_gt(c.nak_list, 0);
	ck_assert_uint_gt(c.ncf_list, 0);
	ck_assert_uint_gt(c.types[PGM_NAK] - c.nak_list, 0);
	ck_assert_uint_gt(c.types[PGM_SPMR], 0);
}
END_TEST

/*
 * The captures hold OpenPGM's own NCFs for the NAKs before them: pgm_build_ncf_from_nak, fed
 * the NAK, must produce the NCF the source sent, byte for byte, except byte 2 of OPT_NAK_LIST
 * and so the checksum: OpenPGM never initializes that byte (its NAKs carry 0x01 or 0xcf there,
 * its NCFs 0x01), where the builder writes OPX 00.
 */
struct ncf_match {
	uint8_t naks[64][256]; /* recent NAK TPDUs, a ring */
	size_t nak_len[64];
	unsigned next;
	unsigned long ncfs, matched;
};

static void match_ncf(const uint8_t *datagram, size_t len, unsigned long index, void *arg)
{
	struct ncf_match *m = arg;
	struct pgm_udp_ports ports;
	struct pgm_packet p, nak;
	struct pgm_ip ip;
	uint8_t built[512];
	unsigned i;

	(void)index;
	pgm_udp_ports_default(&ports);
	if (pgm_parse_datagram(datagram, len, &ports, PGM_PARSE_NO_UDP_CHECKSUM, &ip, &p) !=
		PGM_ERR_OK)
		return;
	if (p.type == PGM_NAK && p.tpdu_len <= sizeof(m->naks[0])) {
		memcpy(m->naks[m->next], p.tpdu, p.tpdu_len);
		m->nak_len[m->next] = p.tpdu_len;
		m->next = (m->next + 1) % 64;
		return;
	}
	if (p.type != PGM_NCF)
		return;
	m->ncfs++;
	for (i = 0; i < 64; i++) {
		size_t n;

		if (m->nak_len[i] == 0 ||
			pgm_parse(m->naks[i], m->nak_len[i], 0, &nak) != PGM_ERR_OK ||
			nak.sqn != p.sqn || nak.opt.nak_list_count != p.opt.nak_list_count)
			continue;
		n = pgm_build_ncf_from_nak(built, sizeof(built), &nak, 0, NULL);
		if (n != p.tpdu_len)
			continue;
		if (p.opt.nak_list_count > 0) {
			size_t list_byte2 = p.opt.offset[1] + 2;

			ck_assert_uint_eq(p.opt.type[1], PGM_OPT_NAK_LIST);
			ck_assert_uint_eq(built[list_byte2], 0);
			built[list_byte2] = p.tpdu[list_byte2];
			pgm_checksum_set(built, n);
		}
		if (memcmp(built, p.tpdu, n) == 0) {
			m->matched++;
			return;
		}
	}
}

START_TEST(test_fixture_ncfs_match_builder)
{
	static struct ncf_match m;
	struct pgm_pcap_walk walk;
	char err[512];

	memset(&m, 0, sizeof(m));
	ck_assert_msg(pgm_pcap_for_each_datagram(
			      fixtures.gl_pathv[_i], match_ncf, &m, &walk, err, sizeof(err)) == 0,
		"%s", err);
	printf("%s: %lu of %lu NCFs equal pgm_build_ncf_from_nak of their NAK\n",
		fixtures.gl_pathv[_i], m.matched, m.ncfs);
	ck_assert_uint_gt(m.ncfs, 0);
	ck_assert_uint_eq(m.matched, m.ncfs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wire_fixtures");
	TCase *tc = tcase_create("fixtures");
	int n, rc;

	find_fixtures();
	n = fixtures.gl_pathc > 0 ? (int)fixtures.gl_pathc : 1; /* 1: fail, naming the glob */
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_fixture_round_trip, 0, n);
	if (fixtures.gl_pathc > 0) {
		tcase_add_loop_test(tc, test_fixture_contents, 0, n);
		tcase_add_loop_test(tc, test_fixture_ncfs_match_builder, 0, n);
	}
	suite_add_tcase(s, tc);
	rc = check_run(s);
	if (globbed)
		globfree(&fixtures);
	return rc;
}

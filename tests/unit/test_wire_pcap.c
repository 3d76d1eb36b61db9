/*
 * Capture replay (dataplane/pgm_pcap_check.c): the catalog written with every supported link
 * type parses and re-serializes byte for byte; non-PGM, non-IP, truncated and damaged records
 * are counted; a packet whose reserved bits are set is reported as a mismatch.
 */
#include <check.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/pgm_pcap_check.h"
#include "wire_test.h"
#include "tests/unit/check_run.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif

#define MAX_CASES 128
#define FRAME_MAX (WIRE_TEST_MAX_TPDU + 128)

static const struct pgm_udp_ports ports = {.enabled = true,
	.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT,
	.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT};

struct capture {
	char path[256];
	pcap_t *dead;
	pcap_dumper_t *dumper;
	int dlt;
};

static void capture_open(struct capture *c, int dlt)
{
	const char *tmpdir = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(c->path, sizeof(c->path), "%s/pgm-wire-XXXXXX.pcap", tmpdir ? tmpdir : "/tmp");
	fd = mkstemps(c->path, 5);
	ck_assert_int_ge(fd, 0);
	c->dlt = dlt;
	c->dead = pcap_open_dead(dlt, 65535);
	ck_assert_ptr_nonnull(c->dead);
	f = fdopen(fd, "wb");
	ck_assert_ptr_nonnull(f);
	c->dumper = pcap_dump_fopen(c->dead, f);
	ck_assert_ptr_nonnull(c->dumper);
}

static void capture_close(struct capture *c)
{
	pcap_dump_close(c->dumper);
	pcap_close(c->dead);
}

/* Writes a datagram framed for the capture's link type; wire_len > len marks truncation. */
static void capture_write(
	struct capture *c, const uint8_t *dgram, size_t len, size_t wire_len, bool vlan)
{
	uint8_t frame[FRAME_MAX];
	size_t hdr = 0, i;
	uint16_t proto = (dgram[0] >> 4) == 6 ? 0x86dd : 0x0800;
	struct pcap_pkthdr h = {.ts = {.tv_sec = 1700000000}};

	memset(frame, 0, sizeof(frame));
	switch (c->dlt) {
	case DLT_EN10MB:
		for (i = 0; i < 6; i++) {
			frame[i] = (uint8_t)(0x01 + i);
			frame[6 + i] = (uint8_t)(0x10 + i);
		}
		hdr = 12;
		if (vlan) {
			wire_test_put16(frame + hdr, 0x8100);
			wire_test_put16(frame + hdr + 2, 42);
			hdr += 4;
		}
		wire_test_put16(frame + hdr, proto);
		hdr += 2;
		break;
	case DLT_LINUX_SLL:
		wire_test_put16(frame, 0);     /* to us */
		wire_test_put16(frame + 2, 1); /* ARPHRD_ETHER */
		wire_test_put16(frame + 4, 6);
		wire_test_put16(frame + 14, proto);
		hdr = 16;
		break;
	case DLT_LINUX_SLL2:
		wire_test_put16(frame, proto);
		wire_test_put32(frame + 4, 3); /* ifindex */
		wire_test_put16(frame + 8, 1);
		frame[11] = 6;
		hdr = 20;
		break;
	default: /* DLT_RAW, DLT_IPV4 */
		break;
	}
	memcpy(frame + hdr, dgram, len);
	h.caplen = (bpf_u_int32)(hdr + len);
	h.len = (bpf_u_int32)(hdr + wire_len);
	/* Ethernet pads short frames to 60 bytes: the IP total length stays smaller. */
	if (c->dlt == DLT_EN10MB && h.caplen < 60 && wire_len == len)
		h.caplen = h.len = 60;
	pcap_dump((u_char *)c->dumper, &h, frame);
}

static size_t catalog(struct wire_test_case **cases)
{
	size_t n;

	*cases = calloc(MAX_CASES, sizeof(**cases));
	ck_assert_ptr_nonnull(*cases);
	n = wire_test_catalog(*cases, MAX_CASES);
	ck_assert_uint_le(n, MAX_CASES);
	return n;
}

static const struct wire_test_case *find(
	const struct wire_test_case *cases, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	ck_abort_msg("no catalog case %s", name);
	return NULL;
}

static const int link_types[] = {
	DLT_EN10MB, DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW, DLT_IPV4};

/* _i: index into link_types; the second DLT_EN10MB run uses 802.1Q tags. */
START_TEST(test_catalog_each_link_type)
{
	struct wire_test_case *cases;
	size_t n = catalog(&cases), i, written = 0;
	static uint8_t dgram[FRAME_MAX];
	struct capture cap;
	struct pgm_pcap_check r;
	char err[256];

	capture_open(&cap, link_types[_i]);
	for (i = 0; i < n; i++) {
		size_t len = pgm_build_ip(
			dgram, sizeof(dgram), &cases[i].ip, cases[i].tpdu, cases[i].len);

		ck_assert_uint_gt(len, 0);
		if (link_types[_i] == DLT_IPV4 && (dgram[0] >> 4) != 4)
			continue; /* DLT_IPV4 carries IPv4 only */
		capture_write(&cap, dgram, len, len, _i == 1);
		written++;
	}
	capture_close(&cap);

	ck_assert_int_eq(pgm_pcap_check_file(cap.path, &ports, 0, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.walk.records, written);
	ck_assert_uint_eq(r.pgm, written);
	ck_assert_uint_eq(r.parsed, written);
	ck_assert_uint_eq(r.identical, written);
	ck_assert_uint_eq(r.mismatches, 0);
	/* and the helper a fixture test uses */
	wire_test_assert_pcap_round_trip(cap.path, 0, written);
	unlink(cap.path);
	free(cases);
}
END_TEST

/* Everything that is not a clean PGM packet is counted where it belongs. */
START_TEST(test_counts_and_mismatch)
{
	struct wire_test_case *cases;
	size_t n = catalog(&cases), len;
	static uint8_t dgram[FRAME_MAX];
	struct capture cap;
	struct pgm_pcap_check r;
	char err[256];
	uint8_t arp[28] = {0};
	struct pgm_ip ip;
	struct pgm_packet p;

	const struct wire_test_case *nak = find(cases, n, "nak-v4"),
				    *spm = find(cases, n, "spm-v4");

	capture_open(&cap, DLT_EN10MB);
	/* 1: a clean NAK */
	len = pgm_build_ip(dgram, sizeof(dgram), &nak->ip, nak->tpdu, nak->len);
	capture_write(&cap, dgram, len, len, false);
	/* 2: the same, truncated by the capture */
	capture_write(&cap, dgram, len - 4, len, false);
	/* 3: UDP to another port */
	{
		struct pgm_ip_params other = nak->ip;

		other.udp = true;
		other.udp_sport = other.udp_dport = 5000;
		len = pgm_build_ip(dgram, sizeof(dgram), &other, nak->tpdu, nak->len);
		capture_write(&cap, dgram, len, len, false);
	}
	/* 4: ARP (not IP): framed as IPv4 with a bogus version nibble */
	arp[0] = 0x00;
	capture_write(&cap, arp, sizeof(arp), sizeof(arp), false);
	/* 5: a damaged PGM checksum */
	len = pgm_build_ip(dgram, sizeof(dgram), &spm->ip, spm->tpdu, spm->len);
	dgram[len - 1] ^= 0x40;
	capture_write(&cap, dgram, len, len, false);
	/* 6: a reserved NLA word that is not zero: valid, but it cannot round-trip */
	len = pgm_build_ip(dgram, sizeof(dgram), &nak->ip, nak->tpdu, nak->len);
	ck_assert_int_eq(pgm_parse_ip(dgram, len, &ports, &ip), PGM_ERR_OK);
	dgram[ip.pgm_offset + 23] = 0x01; /* NAK source NLA reserved word */
	pgm_checksum_set(dgram + ip.pgm_offset, ip.pgm_len);
	ck_assert_int_eq(pgm_parse_datagram(dgram, len, &ports, 0, &ip, &p), PGM_ERR_OK);
	capture_write(&cap, dgram, len, len, false);
	capture_close(&cap);

	ck_assert_int_eq(pgm_pcap_check_file(cap.path, &ports, 0, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.walk.records, 6);
	ck_assert_uint_eq(r.walk.truncated, 1);
	ck_assert_uint_eq(r.walk.not_ip, 1);
	ck_assert_uint_eq(r.not_pgm, 1);
	ck_assert_uint_eq(r.pgm, 3);
	ck_assert_uint_eq(r.parsed, 2);
	ck_assert_uint_eq(r.errors[PGM_ERR_BAD_CHECKSUM], 1);
	ck_assert_uint_eq(r.first_error_record, 5);
	ck_assert_int_eq(r.first_error, PGM_ERR_BAD_CHECKSUM);
	ck_assert_uint_eq(r.identical, 1);
	ck_assert_uint_eq(r.mismatches, 1);
	ck_assert_uint_eq(r.first_mismatch_record, 6);
	/* the checksum differs first: its low byte, as the reserved byte is a low byte too */
	ck_assert_uint_eq(r.first_mismatch_offset, 7);
	ck_assert_str_eq(r.first_mismatch_summary,
		"NAK 0a0b0c0d0e0f.41000 sqn 1000 src 198.18.0.1 grp 239.192.0.1");
	unlink(cap.path);
	free(cases);
}
END_TEST

START_TEST(test_file_errors)
{
	struct pgm_pcap_check r;
	struct capture cap;
	char err[256];

	/* a file that is gone */
	capture_open(&cap, DLT_RAW);
	capture_close(&cap);
	unlink(cap.path);
	ck_assert_int_eq(pgm_pcap_check_file(cap.path, &ports, 0, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, cap.path));
	/* a link type without IP */
	capture_open(&cap, DLT_NULL);
	capture_close(&cap);
	ck_assert_int_eq(pgm_pcap_check_file(cap.path, &ports, 0, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unsupported link type"));
	unlink(cap.path);
}
END_TEST

static Suite *pcap_suite(void)
{
	Suite *s = suite_create("wire_pcap");
	TCase *tc = tcase_create("pcap");

	tcase_add_loop_test(tc, test_catalog_each_link_type, 0,
		(int)(sizeof(link_types) / sizeof(link_types[0])));
	tcase_add_test(tc, test_counts_and_mismatch);
	tcase_add_test(tc, test_file_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(pcap_suite());
}

/*
 * The IP layer around PGM: IPv4 options and Router Alert, IPv6 extension headers, PGM over UDP
 * on the encapsulation ports, link-layer padding.
 */
#include <check.h>
#include <string.h>

#include "wire_test.h"
#include "tests/unit/check_run.h"

#define BUF 2048

static const struct pgm_udp_ports ports = {.enabled = true,
	.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT,
	.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT};

static uint8_t tpdu[256];
static size_t tpdu_len;

static void make_tpdu(void)
{
	struct pgm_header_params h = wire_test_upstream();
	struct pgm_nla s = wire_test_nla("198.18.0.1"), g = wire_test_nla("239.192.0.1");

	tpdu_len = pgm_build_nak(tpdu, sizeof(tpdu), PGM_NAK, &h, 42, &s, &g, NULL);
}

static size_t v4(uint8_t *b, bool ra, bool udp, uint16_t sport, uint16_t dport)
{
	struct pgm_ip_params p = {
		.ttl = 9, .router_alert = ra, .udp = udp, .udp_sport = sport, .udp_dport = dport};

	make_tpdu();
	p.src = wire_test_nla("198.18.2.7");
	p.dst = wire_test_nla("198.18.1.1");
	return pgm_build_ip(b, BUF, &p, tpdu, tpdu_len);
}

static size_t v6(uint8_t *b, bool udp)
{
	struct pgm_ip_params p = {.ttl = 9, .udp = udp, .udp_sport = 3056, .udp_dport = 3056};

	make_tpdu();
	p.src = wire_test_nla("2001:db8:2::7");
	p.dst = wire_test_nla("ff3e::8000:1");
	return pgm_build_ip(b, BUF, &p, tpdu, tpdu_len);
}

/* Inserts IPv4 options, with a valid header checksum. */
static size_t ip4_options(uint8_t *b, size_t n, const uint8_t *opts, size_t olen)
{
	n = wire_test_ip4_insert_options(b, n, opts, olen);
	wire_test_ip4_fix_checksum(b);
	return n;
}

/* The datagram parses, and its TPDU is the one we built. */
static void assert_pgm(const uint8_t *b, size_t n, struct pgm_ip *ip)
{
	struct pgm_packet p;
	enum pgm_err err = pgm_parse_datagram(b, n, &ports, 0, ip, &p);

	ck_assert_msg(err == PGM_ERR_OK, "%s", pgm_err_name(err));
	ck_assert_uint_eq(ip->pgm_len, tpdu_len);
	ck_assert_mem_eq(b + ip->pgm_offset, tpdu, tpdu_len);
	ck_assert_uint_eq(p.sqn, 42);
}

START_TEST(test_ipv4_plain_and_router_alert)
{
	uint8_t b[BUF];
	struct pgm_ip ip;
	size_t n = v4(b, false, false, 0, 0);

	assert_pgm(b, n, &ip);
	ck_assert_uint_eq(ip.version, 4);
	ck_assert(!ip.router_alert);
	ck_assert(!ip.udp);
	ck_assert_uint_eq(ip.ttl, 9);
	ck_assert_uint_eq(ip.ip_header_len, 20);
	ck_assert_uint_eq(ip.pgm_offset, 20);
	ck_assert(!pgm_ip_dst_is_multicast(&ip));

	n = v4(b, true, false, 0, 0);
	assert_pgm(b, n, &ip);
	ck_assert(ip.router_alert);
	ck_assert_uint_eq(ip.pgm_offset, 24);
}
END_TEST

/* RA among other options: NOPs, a timestamp option, EOL padding. */
START_TEST(test_ipv4_options_walk)
{
	static const uint8_t with_ra[] = {0x01, 0x01, 0x44, 0x08, 0x05, 0x00, 0, 0, 0, 0, 0x94,
		0x04, 0x00, 0x00, 0x00, 0x00}; /* NOP NOP timestamp(8) RA EOL pad */
	static const uint8_t without_ra[] = {0x44, 0x04, 0x05, 0x00, 0x00, 0x94, 0x04, 0x00};
	uint8_t b[BUF];
	struct pgm_ip ip;
	size_t n;

	n = ip4_options(b, v4(b, false, false, 0, 0), with_ra, sizeof(with_ra));
	assert_pgm(b, n, &ip);
	ck_assert(ip.router_alert);
	ck_assert_uint_eq(ip.ip_header_len, 36);
	/* after EOL the rest is padding, even if it looks like RA */
	n = ip4_options(b, v4(b, false, false, 0, 0), without_ra, sizeof(without_ra));
	assert_pgm(b, n, &ip);
	ck_assert(!ip.router_alert);
}
END_TEST

/* Ethernet pads short frames: the buffer may exceed the IP total length. DF is no fragment. */
START_TEST(test_ipv4_padding_and_df)
{
	uint8_t b[BUF];
	struct pgm_ip ip;
	size_t n = v4(b, false, false, 0, 0);

	memset(b + n, 0xee, 10);
	b[6] = 0x40; /* DF */
	wire_test_ip4_fix_checksum(b);
	assert_pgm(b, n + 10, &ip);
}
END_TEST

START_TEST(test_udp_ports)
{
	struct pgm_udp_ports custom = {.enabled = true, .ucast_port = 7000, .mcast_port = 7001};
	struct pgm_udp_ports off = ports;
	uint8_t b[BUF];
	struct pgm_ip ip;
	struct pgm_packet p;
	size_t n;

	off.enabled = false;
	/* either port may be the encapsulation port */
	n = v4(b, false, true, 40000, 3055);
	assert_pgm(b, n, &ip);
	ck_assert(ip.udp);
	ck_assert_uint_eq(ip.udp_dport, 3055);
	ck_assert_uint_eq(ip.pgm_offset, 28);
	n = v4(b, false, true, 3056, 40000);
	assert_pgm(b, n, &ip);
	ck_assert_uint_eq(ip.udp_sport, 3056);
	ck_assert_int_eq(pgm_parse_ip(b, n, &off, &ip), PGM_ERR_NOT_PGM);
	ck_assert_int_eq(pgm_parse_ip(b, n, NULL, &ip), PGM_ERR_NOT_PGM);
	ck_assert_int_eq(pgm_parse_ip(b, n, &custom, &ip), PGM_ERR_NOT_PGM);
	n = v4(b, false, true, 7001, 7001);
	ck_assert_int_eq(pgm_parse_datagram(b, n, &custom, 0, &ip, &p), PGM_ERR_OK);
	ck_assert_int_eq(pgm_parse_ip(b, n, &ports, &ip), PGM_ERR_NOT_PGM);
	/* protocol 113 needs no ports at all */
	n = v4(b, false, false, 0, 0);
	ck_assert_int_eq(pgm_parse_datagram(b, n, NULL, 0, &ip, &p), PGM_ERR_OK);
}
END_TEST

/* A UDP length below the IP payload: the extra bytes are dropped, as Linux does. */
START_TEST(test_udp_shorter_than_payload)
{
	uint8_t b[BUF];
	struct pgm_ip ip;
	size_t n = v4(b, false, true, 40000, 3055);

	memset(b + n, 0, 4);
	wire_test_put16(b + 2, (uint16_t)(n + 4));
	wire_test_ip4_fix_checksum(b);
	assert_pgm(b, n + 4, &ip);
}
END_TEST

START_TEST(test_udp_checksum_verification)
{
	uint8_t b[BUF];
	struct pgm_ip ip;
	struct pgm_packet p;
	size_t n = v4(b, false, true, 40000, 3055);

	b[26] ^= 0xff;
	ck_assert_int_eq(pgm_parse_datagram(b, n, &ports, 0, &ip, &p), PGM_ERR_UDP_CHECKSUM);
	ck_assert_uint_eq(p.type, 0); /* nothing parsed */
	ck_assert_int_eq(
		pgm_parse_datagram(b, n, &ports, PGM_PARSE_NO_UDP_CHECKSUM, &ip, &p), PGM_ERR_OK);
	ck_assert_int_eq(pgm_parse_ip(b, n, &ports, &ip), PGM_ERR_OK); /* not checked here */
	ck_assert(!pgm_ip_udp_checksum_ok(b, &ip));
	b[26] = b[27] = 0; /* IPv4: none */
	ck_assert_int_eq(pgm_parse_datagram(b, n, &ports, 0, &ip, &p), PGM_ERR_OK);
}
END_TEST

START_TEST(test_ipv6_plain_udp)
{
	uint8_t b[BUF];
	struct pgm_ip ip;
	size_t n = v6(b, false);

	assert_pgm(b, n, &ip);
	ck_assert_uint_eq(ip.version, 6);
	ck_assert_uint_eq(ip.ip_header_len, 40);
	ck_assert_uint_eq(ip.ttl, 9);
	ck_assert(pgm_ip_dst_is_multicast(&ip));
	ck_assert(!ip.router_alert);
	n = v6(b, true);
	assert_pgm(b, n, &ip);
	ck_assert(ip.udp);
	ck_assert_uint_eq(ip.pgm_offset, 48);
}
END_TEST

/* Hop-by-hop with RA, routing, atomic fragment, destination options: all walked. */
START_TEST(test_ipv6_extension_chain)
{
	static const uint8_t hbh_ra[8] = {0, 0, 5, 2, 0, 0, 1, 0}; /* RA 0, PadN 0 */
	static const uint8_t routing[24] = {0, 2, 0, 0};	   /* type 0, 0 left */
	static const uint8_t atomic[8] = {0, 0, 0, 0, 0, 0, 0, 9};
	static const uint8_t dst_ra[8] = {0, 0, 5, 2, 0, 0, 0, 0}; /* RA outside HBH */
	uint8_t b[BUF];
	struct pgm_ip ip;
	size_t n = v6(b, false);

	n = wire_test_ip6_insert_ext(b, n, 60, dst_ra, sizeof(dst_ra));
	assert_pgm(b, n, &ip);
	ck_assert(!ip.router_alert); /* RA counts only in hop-by-hop (RFC 2711) */
	n = wire_test_ip6_insert_ext(b, n, 44, atomic, sizeof(atomic));
	n = wire_test_ip6_insert_ext(b, n, 43, routing, sizeof(routing));
	n = wire_test_ip6_insert_ext(b, n, 0, hbh_ra, sizeof(hbh_ra));
	assert_pgm(b, n, &ip);
	ck_assert(ip.router_alert);
	ck_assert_uint_eq(ip.ip_header_len, 40 + 8 + 24 + 8 + 8);
	ck_assert_uint_eq(ip.pgm_offset, ip.ip_header_len);

	/* the same chain in front of UDP */
	n = v6(b, true);
	n = wire_test_ip6_insert_ext(b, n, 0, hbh_ra, sizeof(hbh_ra));
	{
		struct pgm_packet p;

		/* inserting headers does not touch the pseudo header: the UDP sum holds */
		ck_assert_int_eq(pgm_parse_datagram(b, n, &ports, 0, &ip, &p), PGM_ERR_OK);
		ck_assert(ip.router_alert);
		ck_assert_uint_eq(ip.pgm_offset, 56);
	}
}
END_TEST

static Suite *ip_suite(void)
{
	Suite *s = suite_create("wire_ip");
	TCase *tc = tcase_create("ip");

	tcase_add_test(tc, test_ipv4_plain_and_router_alert);
	tcase_add_test(tc, test_ipv4_options_walk);
	tcase_add_test(tc, test_ipv4_padding_and_df);
	tcase_add_test(tc, test_udp_ports);
	tcase_add_test(tc, test_udp_shorter_than_payload);
	tcase_add_test(tc, test_udp_checksum_verification);
	tcase_add_test(tc, test_ipv6_plain_udp);
	tcase_add_test(tc, test_ipv6_extension_chain);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(ip_suite());
}

/*
 * Helpers shared by the wire codec tests (tests/unit/test_wire_*.c): a catalog of valid sample
 * packets covering every type, option and address family, a rebuild of a parsed packet through
 * the public builders, and small byte-level utilities.
 */
#ifndef WIRE_TEST_H
#define WIRE_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/wire/pgm_wire.h"

#define WIRE_TEST_MAX_TPDU 1600

struct wire_test_case {
	char name[64];
	uint8_t tpdu[WIRE_TEST_MAX_TPDU];
	size_t len;
	struct pgm_ip_params ip; /* how the tshark and pcap tests wrap it */
};

/* Fills up to max cases; returns how many there are (all parse with flags 0). */
size_t wire_test_catalog(struct wire_test_case *cases, size_t max);

/* "198.18.0.1" -> NLA (aborts on a bad literal: the tests' own constants). */
struct pgm_nla wire_test_nla(const char *text);

/* The sample session: GSI 0a0b0c0d0e0f, data-source port 41000, data-destination port 7500. */
extern const uint8_t wire_test_gsi[PGM_GSI_LEN];
#define WIRE_TEST_SPORT 41000
#define WIRE_TEST_DPORT 7500

/* Header params for a downstream (source -> receivers) or upstream packet of the session. */
struct pgm_header_params wire_test_downstream(void);
struct pgm_header_params wire_test_upstream(void);

/*
 * Rebuilds a parsed packet through the public builders (pgm_build_*), handing every known
 * option back through pgm_build_options and unknown ones through o->raw. Byte-identical to the
 * original for packets the builders made. Returns the length or 0.
 */
size_t wire_test_rebuild(const struct pgm_packet *pkt, uint8_t *out, size_t cap);

/*
 * Replays a capture through the codec (pgm_pcap_check_file with the default encapsulation
 * ports and `flags`) and asserts, inside a Check test, that it holds at least min_pgm PGM
 * packets and that every one of them parsed and re-serialized byte for byte. Prints a one-line
 * summary. For a fixture test:
 *     wire_test_assert_pcap_round_trip("tests/fixtures/x.pcap", PGM_PARSE_NO_UDP_CHECKSUM, 1);
 */
void wire_test_assert_pcap_round_trip(const char *path, unsigned flags, unsigned long min_pgm);

/* Reads a big-endian 16/32-bit value; writes one and recomputes the PGM checksum. */
uint16_t wire_test_get16(const uint8_t *p);
uint32_t wire_test_get32(const uint8_t *p);
void wire_test_put16(uint8_t *p, uint16_t v);
void wire_test_put32(uint8_t *p, uint32_t v);

/* Straightforward RFC 1071 reference sum (16-bit big-endian words), folded, not complemented. */
uint16_t wire_test_reference_sum(const uint8_t *buf, size_t len);

/* Recomputes the header checksum of the IPv4 datagram in b after a test edited the header. */
void wire_test_ip4_fix_checksum(uint8_t *b);
/*
 * Inserts an IPv4 option block (a multiple of 4 bytes) into the n-byte datagram and returns the
 * new length. The header checksum is left as it was (the parser does not check it).
 */
size_t wire_test_ip4_insert_options(uint8_t *b, size_t n, const uint8_t *opts, size_t olen);
/*
 * Inserts an IPv6 extension header of type `type` (bytes already chained) after the fixed header
 * of the n-byte datagram: ext[0] becomes the old next header. Returns the new length.
 */
size_t wire_test_ip6_insert_ext(
	uint8_t *b, size_t n, uint8_t type, const uint8_t *ext, size_t elen);

#endif /* WIRE_TEST_H */

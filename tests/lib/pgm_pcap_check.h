/*
 * Replaying pcap files through the wire codec: every PGM packet is parsed and re-serialized from
 * its parsed fields, and the bytes are compared with the original. Used by the fixture tests
 * (real OpenPGM captures) and to seed the fuzzer.
 *
 * Link types: DLT_EN10MB (with 802.1Q/802.1ad tags), DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW,
 * DLT_IPV4 and DLT_IPV6.
 */
#ifndef PGM_PCAP_CHECK_H
#define PGM_PCAP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/wire/pgm_wire.h"

/* Called with each IP datagram of a capture; index counts records from 1. */
typedef void (*pgm_pcap_datagram_fn)(
	const uint8_t *datagram, size_t len, unsigned long index, void *arg);

struct pgm_pcap_walk {
	unsigned long records;	 /* records in the file */
	unsigned long truncated; /* captured shorter than sent: skipped */
	unsigned long not_ip;	 /* no IPv4 or IPv6 datagram inside: skipped */
	unsigned long datagrams; /* passed to the callback */
};

/* Returns 0, or -1 with a message in errbuf (file unreadable, link type unsupported). */
int pgm_pcap_for_each_datagram(const char *path, pgm_pcap_datagram_fn fn, void *arg,
	struct pgm_pcap_walk *walk, char *errbuf, size_t errlen);

struct pgm_pcap_check {
	struct pgm_pcap_walk walk;
	unsigned long not_pgm;		     /* IP datagrams that are not PGM */
	unsigned long pgm;		     /* PGM datagrams, parsed or not */
	unsigned long parsed;		     /* accepted by pgm_parse_datagram */
	unsigned long identical;	     /* re-serialized byte for byte */
	unsigned long mismatches;	     /* re-serialized differently */
	unsigned long errors[PGM_ERR_COUNT]; /* by error, IP and UDP layers included */
	unsigned long first_error_record;    /* 0: none */
	enum pgm_err first_error;
	unsigned long first_mismatch_record; /* 0: none */
	size_t first_mismatch_offset;	     /* byte offset in the TPDU */
	char first_mismatch_summary[160];    /* pgm_packet_format of that packet */
};

/*
 * Parses every datagram with pgm_parse_datagram(ports, flags) and re-serializes each accepted
 * packet with pgm_packet_serialize. Captures of locally sent UDP usually carry unfinished UDP
 * checksums (offload): pass PGM_PARSE_NO_UDP_CHECKSUM for those. Returns as
 * pgm_pcap_for_each_datagram; the counts say whether the capture round-tripped.
 */
int pgm_pcap_check_file(const char *path, const struct pgm_udp_ports *ports, unsigned flags,
	struct pgm_pcap_check *result, char *errbuf, size_t errlen);

#endif /* PGM_PCAP_CHECK_H */

/*
 * IPv4 fragmentation as the kernel does it (net/ipv4/ip_output.c, ip_fragment; RFC 791 3.2):
 * for the router's own copies larger than the MTU of the interface they leave by (rawsock.c),
 * which neither a raw IP_HDRINCL socket nor a packet socket fragments.
 *
 * Every fragment carries the original header: the same id, protocol, addresses, TTL and TOS. The
 * first keeps every option; the later ones keep the options whose copied flag is set (Router
 * Alert's is) and have the others overwritten with NOPs, so every header is as long as the
 * original's (ip_options_fragment). Each fragment but the last carries (MTU - header) rounded
 * down to 8 bytes of data; offsets count 8-byte units from the original's own offset, and MF is
 * set on all but the last, which keeps the original's. The header checksum is computed.
 */
#ifndef PGMROUTER_WIRE_IPFRAG_H
#define PGMROUTER_WIRE_IPFRAG_H

#include <stddef.h>
#include <stdint.h>

/* The smallest IPv4 MTU (RFC 791): a full 60-byte header and 8 bytes of data. */
#define IPFRAG_MIN_MTU 68u

enum ipfrag_result {
	IPFRAG_FITS = 0,   /* no larger than the MTU: goes as it is */
	IPFRAG_SPLIT,	   /* fragments needed, ipfrag_count says how many */
	IPFRAG_DF,	   /* larger, and Don't Fragment is set: refused */
	IPFRAG_MTU_SMALL,  /* larger, and the MTU cannot hold the header and 8 bytes of data */
	IPFRAG_MALFORMED,  /* not an IPv4 datagram of exactly len bytes */
};

/* What sending the IPv4 datagram ip (len bytes, total length len) out of an interface of the
 * given MTU needs; with IPFRAG_SPLIT, *count is the number of fragments (2 or more). */
enum ipfrag_result ipfrag_plan(const uint8_t *ip, size_t len, size_t mtu, unsigned *count);

/* Writes fragment index (0 .. count - 1 of a datagram ipfrag_plan split) into out, which has
 * room for mtu bytes, with the IP id id; returns its length. */
size_t ipfrag_build(const uint8_t *ip, size_t len, size_t mtu, unsigned index, uint16_t id,
	uint8_t *out);

#endif /* PGMROUTER_WIRE_IPFRAG_H */

/*
 * Parsing and validation of PGM TPDUs (RFC 3208 sections 8, 9, 11.8, 12.7, 13.6, 14.7, 15.4) and
 * of the IPv4, IPv6 and UDP layers around them.
 *
 * Every rule below maps a malformed input to one named error; the comments give the rule and
 * the reason for its strictness. Nothing here allocates or reads outside [buf, buf + len), and
 * every multi-byte field is converted to host order exactly once, into the parsed structs.
 *
 * Order of the checks on a TPDU (the first failing one names the error):
 *   header length, version, reserved bits, type, zero checksum on data, checksum value,
 *   VAR_PKTLEN without PARITY, TSDU length of non-data types, the type's fixed body and NLAs,
 *   OPT_LENGTH, the options' total length against the packet and the TSDU, each option, OPX.
 * The checksum comes early so that a packet damaged in transit is counted as damaged rather
 * than as whatever structural error the damage happens to produce.
 *
 * Deliberately lenient (a router forwards what it does not act on, and peers differ): reserved
 * words of NLAs and of POLR, the reserved, F (OP_ENCODED: 0x04 per the RFC, 0x08 in OpenPGM) and
 * U bits of options, and the network-significant header flag (set or not, with or without
 * options) are not checked; the placement of known options on packet types is checked only
 * with PGM_PARSE_STRICT_OPTIONS; the IPv4 header checksum is left to the kernel, which drops
 * bad ones before any netfilter hook.
 */
#include <stddef.h>
#include <string.h>

#include "dataplane/wire/pgm_wire.h"

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A partial sum folded to 16 bits, not complemented: all ones when a checksum verifies. */
static inline uint32_t fold16(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	return (sum & 0xffff) + (sum >> 16);
}

/* Serial-number arithmetic (RFC 1982 with 32 bits): a comes strictly after b. */
static inline bool sqn_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline size_t afi_addr_len(uint16_t afi)
{
	return afi == PGM_AFI_IP ? 4 : afi == PGM_AFI_IP6 ? 16 : 0;
}

/* ---- IP layer ---- */

#define IPV4_OPT_EOL		0
#define IPV4_OPT_NOP		1
#define IPV4_OPT_ROUTER_ALERT	148 /* RFC 2113: copied flag + option 20 */
#define IPV6_OPT_PAD1		0
#define IPV6_OPT_ROUTER_ALERT	5 /* RFC 2711 */
#define IPPROTO_HOPOPTS_NUMBER	0
#define IPPROTO_UDP_NUMBER	17
#define IPPROTO_ROUTING_NUMBER	43
#define IPPROTO_FRAGMENT_NUMBER 44
#define IPPROTO_ESP_NUMBER	50
#define IPPROTO_AH_NUMBER	51
#define IPPROTO_NONE_NUMBER	59
#define IPPROTO_DSTOPTS_NUMBER	60
#define UDP_HEADER_LEN		8
#define IPV6_MAX_EXT_HEADERS	16

static bool is_pgm_port(const struct pgm_udp_ports *ports, uint16_t port)
{
	return port != 0 && (port == ports->ucast_port || port == ports->mcast_port ||
				    (ports->more.n != 0 && pgm_port_set_has(&ports->more, port)));
}

/*
 * The transport header at [off, end): protocol 113 is PGM as it stands; UDP is PGM when either
 * port is an encapsulation port (OpenPGM sends to the peer's port from its own, so a NAK to
 * 3055 may come from 3056 and the other way round).
 */
static enum pgm_err locate_tpdu(const uint8_t *buf, size_t off, size_t end, unsigned proto,
	const struct pgm_udp_ports *ports, struct pgm_ip *ip)
{
	uint16_t udp_len;

	if (proto == IPPROTO_PGM_NUMBER) {
		ip->pgm_offset = (uint16_t)off;
		ip->pgm_len = (uint16_t)(end - off);
		return PGM_ERR_OK;
	}
	if (proto != IPPROTO_UDP_NUMBER)
		return PGM_ERR_NOT_PGM;
	if (end - off < UDP_HEADER_LEN)
		return PGM_ERR_UDP_LENGTH;
	ip->udp = true;
	ip->udp_sport = get16(buf + off);
	ip->udp_dport = get16(buf + off + 2);
	ip->udp_checksum = get16(buf + off + 6);
	if (ports == NULL || !ports->enabled ||
		(!is_pgm_port(ports, ip->udp_sport) && !is_pgm_port(ports, ip->udp_dport)))
		return PGM_ERR_NOT_PGM;
	/*
	 * A UDP length below the IP payload leaves trailing bytes that belong to nobody; Linux
	 * trims them, so do we. Above the payload the datagram is truncated.
	 */
	udp_len = get16(buf + off + 4);
	if (udp_len < UDP_HEADER_LEN || udp_len > end - off)
		return PGM_ERR_UDP_LENGTH;
	ip->pgm_offset = (uint16_t)(off + UDP_HEADER_LEN);
	ip->pgm_len = (uint16_t)(udp_len - UDP_HEADER_LEN);
	return PGM_ERR_OK;
}

/* Inlined into pgm_parse_ip: every queued packet takes this path, and the call costs as much as
   a short header's checks. */
static inline __attribute__((always_inline)) enum pgm_err parse_ip4(
	const uint8_t *buf, size_t len, const struct pgm_udp_ports *ports, struct pgm_ip *ip)
{
	size_t ihl, total, i;

	if (len < 20)
		return PGM_ERR_IP_SHORT;
	ihl = (size_t)(buf[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > len)
		return PGM_ERR_IP_HEADER_LENGTH;
	/* Link layers pad short frames, so the buffer may be longer than the datagram; never
	 * shorter. */
	total = get16(buf + 2);
	if (total < ihl || total > len)
		return PGM_ERR_IP_TOTAL_LENGTH;
	/* MF set or a non-zero offset: a fragment. PGM checksums and lengths need the whole
	 * TPDU, and the kernel reassembles before netfilter anyway. */
	if (get16(buf + 6) & 0x3fff)
		return PGM_ERR_IP_FRAGMENT;

	/*
	 * Options are TLVs except EOL and NOP (RFC 791). Router Alert must be exactly 4 bytes
	 * (RFC 2113). The header checksum is not verified here: the kernel drops bad IPv4 header
	 * checksums before any netfilter hook, and pcap replays are checked by the TPDU checksum.
	 */
	for (i = 20; i < ihl;) {
		unsigned type = buf[i], opt_len;

		if (type == IPV4_OPT_EOL)
			break;
		if (type == IPV4_OPT_NOP) {
			i++;
			continue;
		}
		if (ihl - i < 2)
			return PGM_ERR_IP_OPTIONS;
		opt_len = buf[i + 1];
		if (opt_len < 2 || opt_len > ihl - i)
			return PGM_ERR_IP_OPTIONS;
		if (type == IPV4_OPT_ROUTER_ALERT) {
			if (opt_len != 4)
				return PGM_ERR_IP_OPTIONS;
			ip->router_alert = true;
		}
		i += opt_len;
	}

	ip->version = 4;
	ip->tos = buf[1];
	ip->ttl = buf[8];
	ip->ip_header_len = (uint16_t)ihl;
	pgm_nla_from_ip4(&ip->src, buf + 12);
	pgm_nla_from_ip4(&ip->dst, buf + 16);
	return locate_tpdu(buf, ihl, total, buf[9], ports, ip);
}

/* Hop-by-hop and destination options (RFC 8200 4.2): TLVs, Pad1 the only exception. */
static enum pgm_err parse_ip6_options(
	const uint8_t *opt, size_t len, bool hop_by_hop, struct pgm_ip *ip)
{
	size_t i;

	for (i = 2; i < len;) {
		unsigned type = opt[i], opt_len;

		if (type == IPV6_OPT_PAD1) {
			i++;
			continue;
		}
		if (len - i < 2)
			return PGM_ERR_IP6_EXT_HEADER;
		opt_len = opt[i + 1];
		if (opt_len > len - i - 2)
			return PGM_ERR_IP6_EXT_HEADER;
		if (type == IPV6_OPT_ROUTER_ALERT && hop_by_hop) {
			if (opt_len != 2)
				return PGM_ERR_IP6_EXT_HEADER;
			ip->router_alert = true;
		}
		i += 2 + opt_len;
	}
	return PGM_ERR_OK;
}

/* Extension headers this parser cannot walk past or must not look inside. */
static bool ip6_unsupported_ext(unsigned next)
{
	return next == IPPROTO_ESP_NUMBER || next == IPPROTO_AH_NUMBER || next == 135 /* MIPv6 */ ||
	       next == 139 /* HIP */ || next == 140 /* Shim6 */ || next == 253 || next == 254;
}

static enum pgm_err parse_ip6(
	const uint8_t *buf, size_t len, const struct pgm_udp_ports *ports, struct pgm_ip *ip)
{
	size_t payload, end, off = 40;
	unsigned next, headers = 0;
	enum pgm_err err;

	if (len < 40)
		return PGM_ERR_IP_SHORT;
	/* Payload length 0 announces a jumbogram, which no PGM packet can need. */
	payload = get16(buf + 4);
	if (payload == 0 || 40 + payload > len)
		return PGM_ERR_IP_TOTAL_LENGTH;
	end = 40 + payload;

	ip->version = 6;
	ip->tos = (uint8_t)(get32(buf) >> 20);
	ip->ttl = buf[7];
	ip->src.afi = PGM_AFI_IP6;
	memcpy(ip->src.addr, buf + 8, 16);
	ip->dst.afi = PGM_AFI_IP6;
	memcpy(ip->dst.addr, buf + 24, 16);

	for (next = buf[6];; headers++) {
		size_t ext_len;

		if (next == IPPROTO_PGM_NUMBER || next == IPPROTO_UDP_NUMBER)
			break;
		if (next == IPPROTO_NONE_NUMBER)
			return PGM_ERR_NOT_PGM;
		if (ip6_unsupported_ext(next))
			return PGM_ERR_IP6_EXT_HEADER;
		if (next != IPPROTO_HOPOPTS_NUMBER && next != IPPROTO_ROUTING_NUMBER &&
			next != IPPROTO_FRAGMENT_NUMBER && next != IPPROTO_DSTOPTS_NUMBER)
			return PGM_ERR_NOT_PGM; /* another upper-layer protocol */
		/* Hop-by-hop must come first (RFC 8200 4.1); a long chain is an attack. */
		if ((next == IPPROTO_HOPOPTS_NUMBER && off != 40) ||
			headers >= IPV6_MAX_EXT_HEADERS)
			return PGM_ERR_IP6_EXT_HEADER;
		if (end - off < 8)
			return PGM_ERR_IP6_EXT_HEADER;
		if (next == IPPROTO_FRAGMENT_NUMBER) {
			/* Offset or M set: a real fragment. An atomic fragment is a whole datagram.
			 */
			if (get16(buf + off + 2) & 0xfff9)
				return PGM_ERR_IP_FRAGMENT;
			ext_len = 8;
		} else {
			ext_len = ((size_t)buf[off + 1] + 1) * 8;
			if (ext_len > end - off)
				return PGM_ERR_IP6_EXT_HEADER;
			if (next != IPPROTO_ROUTING_NUMBER) {
				err = parse_ip6_options(
					buf + off, ext_len, next == IPPROTO_HOPOPTS_NUMBER, ip);
				if (err != PGM_ERR_OK)
					return err;
			}
		}
		next = buf[off];
		off += ext_len;
	}
	/* The TPDU offset is a 16-bit field: headers that push it further are nonsense. */
	if (off + UDP_HEADER_LEN > 0xffff)
		return PGM_ERR_IP6_EXT_HEADER;
	ip->ip_header_len = (uint16_t)off;
	return locate_tpdu(buf, off, end, next, ports, ip);
}

enum pgm_err pgm_parse_ip(
	const uint8_t *buf, size_t len, const struct pgm_udp_ports *ports, struct pgm_ip *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (len < 1)
		return PGM_ERR_IP_SHORT;
	switch (buf[0] >> 4) {
	case 4:
		return parse_ip4(buf, len, ports, ip);
	case 6:
		return parse_ip6(buf, len, ports, ip);
	default:
		return PGM_ERR_IP_VERSION;
	}
}

int pgm_peek_type(const uint8_t *datagram, const struct pgm_ip *ip)
{
	/* the type byte follows SPORT, DPORT (2 bytes each): 8.1 */
	if (ip->pgm_len < 5)
		return -1;
	return datagram[ip->pgm_offset + 4] & 0x0f;
}

/* One's-complement sum of the UDP pseudo header and segment, checksum field included. */
static uint32_t udp_sum(const uint8_t *datagram, const struct pgm_ip *ip)
{
	const uint8_t *udp = datagram + ip->pgm_offset - UDP_HEADER_LEN;
	uint32_t udp_len = (uint32_t)ip->pgm_len + UDP_HEADER_LEN;
	uint32_t sum;

	sum = pgm_csum_partial(ip->src.addr, pgm_nla_len(&ip->src), 0);
	sum = pgm_csum_partial(ip->dst.addr, pgm_nla_len(&ip->dst), sum);
	sum += IPPROTO_UDP_NUMBER + udp_len; /* IPv6's 32-bit length folds to the same value */
	return pgm_csum_partial(udp, udp_len, sum);
}

bool pgm_ip_udp_checksum_ok(const uint8_t *datagram, const struct pgm_ip *ip)
{
	if (!ip->udp)
		return true;
	/* IPv4 allows "no checksum"; IPv6 does not (RFC 8200 8.1). The field is read from the
	 * datagram, which may have been fixed since it was parsed. */
	if (get16(datagram + ip->pgm_offset - 2) == 0)
		return ip->version == 4;
	return fold16(udp_sum(datagram, ip)) == 0xffff;
}

void pgm_ip_fix_udp_checksum(uint8_t *datagram, const struct pgm_ip *ip)
{
	uint8_t *field;
	uint16_t csum;

	if (!ip->udp || ip->pgm_offset < UDP_HEADER_LEN)
		return;
	field = datagram + ip->pgm_offset - 2;
	if (ip->version == 4 && field[0] == 0 && field[1] == 0)
		return; /* sent without a checksum: keep it that way */
	field[0] = 0;
	field[1] = 0;
	csum = pgm_csum_fold(udp_sum(datagram, ip)); /* 0 becomes 0xffff, as UDP also requires */
	field[0] = (uint8_t)(csum >> 8);
	field[1] = (uint8_t)csum;
}

/* ---- PGM TPDU ---- */

typedef uint64_t u64x2_unaligned __attribute__((vector_size(16), aligned(1)));

/*
 * Zeroes a parsed packet, up to the per-option arrays (valid only below opt.count), with plain
 * 16-byte stores. A memset of this size becomes `rep stosq` with GCC's generic tuning, and its
 * start-up cost on AMD cores exceeds the rest of a NAK's parse. The stores are volatile only so
 * that the compiler cannot turn the loop back into that memset.
 */
#define CLEARED_BYTES offsetof(struct pgm_packet, opt.offset)

static void clear_packet(struct pgm_packet *pkt)
{
	const u64x2_unaligned zero = {0, 0};
	uint8_t *p = (uint8_t *)pkt;
	size_t i;

	_Static_assert(CLEARED_BYTES % 2 == 0, "the arrays start with 16-bit offsets");
	for (i = 0; i + 16 <= CLEARED_BYTES; i += 16)
		*(volatile u64x2_unaligned *)(p + i) = zero;
	/* the rest, below 16 bytes; the conditions are constants */
	if (CLEARED_BYTES - i >= 8) {
		memcpy((void *)(p + i), &zero, 8);
		i += 8;
	}
	if (CLEARED_BYTES - i >= 4) {
		memcpy((void *)(p + i), &zero, 4);
		i += 4;
	}
	if (CLEARED_BYTES - i >= 2)
		memcpy((void *)(p + i), &zero, 2);
}

/* pgm_opt_bit as a table, offset by one so that unlisted (unknown) types read 0. */
static const uint8_t option_bit_plus_one[128] = {
	[PGM_OPT_LENGTH] = 1,
	[PGM_OPT_FRAGMENT] = 2,
	[PGM_OPT_NAK_LIST] = 3,
	[PGM_OPT_JOIN] = 4,
	[PGM_OPT_NAK_BO_IVL] = 5,
	[PGM_OPT_NAK_BO_RNG] = 6,
	[PGM_OPT_REDIRECT] = 8,
	[PGM_OPT_PARITY_PRM] = 9,
	[PGM_OPT_PARITY_GRP] = 10,
	[PGM_OPT_CURR_TGSIZE] = 11,
	[PGM_OPT_NBR_UNREACH] = 12,
	[PGM_OPT_PATH_NLA] = 13,
	[PGM_OPT_SYN] = 14,
	[PGM_OPT_FIN] = 15,
	[PGM_OPT_RST] = 16,
	[PGM_OPT_CR] = 17,
	[PGM_OPT_CRQST] = 18,
	[PGM_OPT_PGMCC_DATA] = 19,
	[PGM_OPT_PGMCC_FEEDBACK] = 20,
	[PGM_OPT_INVALID] = 21,
};

static inline int option_bit(unsigned type)
{
	return (int)option_bit_plus_one[type & PGM_OPT_TYPE_MASK] - 1;
}

/* An address of 4 or 16 bytes, with constant-size copies the compiler inlines. */
static inline void copy_addr(uint8_t *dst, const uint8_t *src, size_t len)
{
	if (len == 4)
		memcpy(dst, src, 4);
	else
		memcpy(dst, src, 16);
}

static bool is_nak_like(unsigned type)
{
	return type == PGM_NAK || type == PGM_NNAK || type == PGM_NCF;
}

static bool is_data(unsigned type)
{
	return type == PGM_ODATA || type == PGM_RDATA;
}

static bool known_type(unsigned type)
{
	switch (type) {
	case PGM_SPM:
	case PGM_POLL:
	case PGM_POLR:
	case PGM_ODATA:
	case PGM_RDATA:
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
	case PGM_SPMR:
	case PGM_ACK:
		return true;
	default:
		return false;
	}
}

/*
 * Where RFC 3208 lets each option appear (the "MAY be appended to" sentences of sections 9,
 * 11.8, 12.7 and 15.4, and the pgmcc draft for 0x12/0x13). Checked only with
 * PGM_PARSE_STRICT_OPTIONS: a router forwards what it does not act on, and a misplaced option
 * hurts nobody downstream.
 */
static bool option_allowed(unsigned opt, unsigned type)
{
#define T(t) (1u << (t))
	static const uint16_t allowed[PGM_OPT_PGMCC_FEEDBACK + 1] = {
		[PGM_OPT_FRAGMENT] = T(PGM_ODATA) | T(PGM_RDATA),
		[PGM_OPT_NAK_LIST] = T(PGM_NAK) | T(PGM_NNAK) | T(PGM_NCF),
		[PGM_OPT_JOIN] = T(PGM_ODATA) | T(PGM_RDATA) | T(PGM_SPM),
		[PGM_OPT_NAK_BO_IVL] = T(PGM_NCF) | T(PGM_SPM) | T(PGM_POLL),
		[PGM_OPT_NAK_BO_RNG] = T(PGM_SPM),
		[PGM_OPT_REDIRECT] = T(PGM_POLR) | T(PGM_NCF),
		[PGM_OPT_PARITY_PRM] = T(PGM_SPM),
		[PGM_OPT_PARITY_GRP] = T(PGM_ODATA) | T(PGM_RDATA),
		[PGM_OPT_CURR_TGSIZE] = T(PGM_ODATA) | T(PGM_RDATA) | T(PGM_SPM),
		[PGM_OPT_NBR_UNREACH] = T(PGM_SPM) | T(PGM_NCF),
		[PGM_OPT_PATH_NLA] = T(PGM_NCF),
		[PGM_OPT_SYN] = T(PGM_ODATA) | T(PGM_RDATA),
		[PGM_OPT_FIN] = T(PGM_ODATA) | T(PGM_RDATA) | T(PGM_SPM),
		[PGM_OPT_RST] = T(PGM_SPM),
		/* NNAKs may carry the congestion report of an eliminated NAK (12.6, MIB). */
		[PGM_OPT_CR] = T(PGM_NAK) | T(PGM_NNAK),
		[PGM_OPT_CRQST] = T(PGM_SPM),
		[PGM_OPT_PGMCC_DATA] = T(PGM_ODATA) | T(PGM_RDATA),
		[PGM_OPT_PGMCC_FEEDBACK] = T(PGM_NAK) | T(PGM_ACK),
	};
#undef T
	if (opt == PGM_OPT_LENGTH || opt == PGM_OPT_INVALID || opt > PGM_OPT_PGMCC_FEEDBACK)
		return true;
	return (allowed[opt] & (1u << type)) != 0;
}

/* An NLA inside an option: AFI at p[0..1], reserved, address at p[4..]. */
static enum pgm_err option_nla(
	const uint8_t *p, size_t avail, struct pgm_nla *nla, size_t *addr_len)
{
	uint16_t afi;

	if (avail < 4)
		return PGM_ERR_OPT_SIZE;
	afi = get16(p);
	*addr_len = afi_addr_len(afi);
	if (*addr_len == 0)
		return PGM_ERR_UNKNOWN_AFI;
	if (avail != 4 + *addr_len)
		return PGM_ERR_OPT_SIZE;
	nla->afi = afi;
	copy_addr(nla->addr, p + 4, *addr_len);
	return PGM_ERR_OK;
}

/*
 * OPT_NAK_LIST (9.3): 1 to 62 SQNs in whole 32-bit words. In NAKs, NNAKs and NCFs 9.3 wants each
 * entry strictly after the previous one, starting from the header SQN, all within half the
 * sequence space after the header SQN: with serial arithmetic a list may wrap through 0, but a
 * list that goes round the whole space is not ordered. OpenPGM receivers break the rule (their
 * lists follow NAK timer expiry), so it is enforced only with PGM_PARSE_STRICT_NAK_LIST and
 * otherwise reported in nak_list_unordered.
 */
static enum pgm_err parse_nak_list(
	const uint8_t *opt, unsigned len, unsigned flags, struct pgm_packet *pkt)
{
	unsigned count, i;
	const uint32_t header_sqn = pkt->sqn;
	uint32_t prev = header_sqn;

	if (len < 8 || (len - 4) % 4 != 0)
		return PGM_ERR_NAK_LIST_LENGTH;
	count = (len - 4) / 4;
	if (count > PGM_MAX_NAK_LIST)
		return PGM_ERR_NAK_LIST_LENGTH;
	if (is_nak_like(pkt->type)) {
		for (i = 0; i < count; i++) {
			uint32_t sqn = get32(opt + 4 + 4 * i);

			if (!sqn_after(sqn, prev) || !sqn_after(sqn, header_sqn)) {
				if (flags & PGM_PARSE_STRICT_NAK_LIST)
					return PGM_ERR_NAK_LIST_ORDER;
				pkt->opt.nak_list_unordered = true;
			}
			prev = sqn;
		}
	}
	pkt->opt.nak_list = opt + 4;
	pkt->opt.nak_list_count = (uint8_t)count;
	return PGM_ERR_OK;
}

/* Exact lengths of the fixed-size options (RFC 3208 9; its text says 12 for OPT_FRAGMENT,
 * its diagram and every implementation 16). 0: variable, checked by its parser. */
static unsigned fixed_option_len(unsigned opt)
{
	switch (opt) {
	case PGM_OPT_FRAGMENT:
		return 16;
	case PGM_OPT_JOIN:
		return 8;
	case PGM_OPT_NAK_BO_IVL:
		return 12;
	case PGM_OPT_NAK_BO_RNG:
		return 12;
	case PGM_OPT_PARITY_PRM:
		return 8;
	case PGM_OPT_PARITY_GRP:
		return 8;
	case PGM_OPT_CURR_TGSIZE:
		return 8;
	case PGM_OPT_NBR_UNREACH:
		return 4;
	case PGM_OPT_SYN:
		return 4;
	case PGM_OPT_FIN:
		return 4;
	case PGM_OPT_RST:
		return 4;
	case PGM_OPT_CRQST:
		return 4;
	default:
		return 0;
	}
}

/* The value of one known option; opt points at its 4-byte header, len is its length. */
static enum pgm_err parse_known_option(
	const uint8_t *opt, unsigned len, unsigned type, unsigned flags, struct pgm_packet *pkt)
{
	struct pgm_options *o = &pkt->opt;
	unsigned fixed = fixed_option_len(type);
	size_t addr_len;

	if (fixed != 0 && len != fixed)
		return PGM_ERR_OPT_SIZE;
	switch (type) {
	case PGM_OPT_FRAGMENT:
		o->frag_first_sqn = get32(opt + 4);
		o->frag_offset = get32(opt + 8);
		o->frag_apdu_len = get32(opt + 12);
		break;
	case PGM_OPT_NAK_LIST:
		return parse_nak_list(opt, len, flags, pkt);
	case PGM_OPT_JOIN:
		o->join_min_sqn = get32(opt + 4);
		break;
	case PGM_OPT_NAK_BO_IVL:
		o->nak_bo_ivl = get32(opt + 4);
		o->nak_bo_ivl_sqn = get32(opt + 8);
		break;
	case PGM_OPT_NAK_BO_RNG:
		o->nak_bo_max = get32(opt + 4);
		o->nak_bo_min = get32(opt + 8);
		break;
	case PGM_OPT_REDIRECT:
		/* AFI word included: 12 or 24 bytes (the RFC text's "4 + NLA" is wrong). */
		return option_nla(opt + 4, len - 4, &o->redirect, &addr_len);
	case PGM_OPT_PARITY_PRM:
		/* 11.2: TGS is a power of 2; OpenPGM and MS-PGM accept 2..128. */
		o->parity_prm_flags = opt[3];
		o->parity_tgs = get32(opt + 4);
		if (o->parity_tgs < 2 || o->parity_tgs > 128 ||
			(o->parity_tgs & (o->parity_tgs - 1)) != 0)
			return PGM_ERR_PARITY_TGS;
		break;
	case PGM_OPT_PARITY_GRP:
		/* 11.8.2: group 0 would be the original data itself. */
		o->parity_grp = get32(opt + 4);
		if (o->parity_grp == 0)
			return PGM_ERR_PARITY_GRP;
		break;
	case PGM_OPT_CURR_TGSIZE:
		o->curr_tgsize = get32(opt + 4);
		break;
	case PGM_OPT_PATH_NLA:
		/* 15.4.4: no AFI on the wire, the family follows from the length. */
		if (len == 8)
			o->path_nla.afi = PGM_AFI_IP;
		else if (len == 20)
			o->path_nla.afi = PGM_AFI_IP6;
		else
			return PGM_ERR_OPT_SIZE;
		memcpy(o->path_nla.addr, opt + 4, len - 4);
		break;
	case PGM_OPT_RST:
		o->rst_flags = opt[3];
		break;
	case PGM_OPT_CR:
		/* 12.7.1: flags, LEAD, NE_WL, NE_WP, RX_WP, reserved, then the worst receiver. */
		if (len < 24)
			return PGM_ERR_OPT_SIZE;
		o->cr_flags = opt[3];
		o->cr_lead = get32(opt + 4);
		o->cr_ne_wl = get16(opt + 8);
		o->cr_ne_wp = get16(opt + 10);
		o->cr_rx_wp = get16(opt + 12);
		return option_nla(opt + 16, len - 16, &o->cr_rcvr, &addr_len);
	case PGM_OPT_CRQST:
		o->crqst_flags = opt[3];
		break;
	case PGM_OPT_PGMCC_DATA:
	case PGM_OPT_PGMCC_FEEDBACK:
		/* pgmcc: timestamp, AFI, reserved (DATA) or loss rate (FEEDBACK), NLA. */
		if (len < 16)
			return PGM_ERR_OPT_SIZE;
		o->pgmcc_tstamp = get32(opt + 4);
		if (type == PGM_OPT_PGMCC_FEEDBACK)
			o->pgmcc_loss_rate = get16(opt + 10);
		{
			/* The AFI word sits before the 16-bit field, unlike the generic layout. */
			uint16_t afi = get16(opt + 8);

			addr_len = afi_addr_len(afi);
			if (addr_len == 0)
				return PGM_ERR_UNKNOWN_AFI;
			if (len != 12 + addr_len)
				return PGM_ERR_OPT_SIZE;
			o->pgmcc_nla.afi = afi;
			memcpy(o->pgmcc_nla.addr, opt + 12, addr_len);
		}
		break;
	default:
		break; /* OPT_NBR_UNREACH, OPT_SYN, OPT_FIN: presence only; OPT_INVALID: skip */
	}
	return PGM_ERR_OK;
}

/*
 * The option list at [off, end) (section 9): OPT_LENGTH first (already checked by the caller),
 * then TLVs of at least 4 bytes that fit, at most 16 in all, the last with OPT_END and nothing
 * after it. Known options get their exact length and value rules and may appear once
 * (OPT_INVALID excepted: several unknown options may have been invalidated). Unknown options
 * are counted by OPX; OPX 10 discards the packet, reported after the whole list validated so
 * that a malformed list is still named as such.
 */
static enum pgm_err parse_options(
	const uint8_t *tpdu, size_t off, size_t end, unsigned flags, struct pgm_packet *pkt)
{
	struct pgm_options *o = &pkt->opt;
	unsigned packet_type = pkt->type, count = 1;
	uint32_t present = 1u << option_bit(PGM_OPT_LENGTH);
	enum pgm_err err = PGM_ERR_OK;
	bool discard = false;
	size_t pos;

	/* Counters live in locals: with -fno-strict-aliasing every store through `o` would
	 * otherwise force them to be reloaded. */
	o->offset[0] = (uint16_t)off;
	o->type[0] = PGM_OPT_LENGTH;
	o->flags[0] = tpdu[off + 2];
	o->specific[0] = tpdu[off + 3];

	for (pos = off + 4;;) {
		const uint8_t *opt = tpdu + pos;
		unsigned type, len, opx;
		int bit;

		if (pos == end) {
			err = PGM_ERR_OPT_NO_END;
			break;
		}
		if (end - pos < 4 || opt[1] < 4 || opt[1] > end - pos) {
			err = PGM_ERR_OPT_LENGTH;
			break;
		}
		if (count == PGM_MAX_OPTIONS) {
			err = PGM_ERR_OPT_TOO_MANY;
			break;
		}
		len = opt[1];
		type = opt[0] & PGM_OPT_TYPE_MASK;
		opx = opt[2] & PGM_OPX_MASK;
		o->offset[count] = (uint16_t)pos;
		o->type[count] = (uint8_t)type;
		o->flags[count] = opt[2];
		o->specific[count] = opt[3];
		count++;

		bit = option_bit(type);
		if (bit < 0) {
			/* OPX concerns network elements only (9); endpoints pass IGNORE_OPX. */
			o->unknown++;
			if (opx == PGM_OPX_INVALIDATE)
				o->opx_invalidate++;
			else if (opx == PGM_OPX_RESERVED)
				o->opx_reserved++;
			else if (opx == PGM_OPX_DISCARD && !(flags & PGM_PARSE_IGNORE_OPX))
				discard = true;
		} else {
			if ((present & (1u << bit)) && type != PGM_OPT_INVALID) {
				err = PGM_ERR_OPT_DUPLICATE;
				break;
			}
			if ((flags & PGM_PARSE_STRICT_OPTIONS) &&
				!option_allowed(type, packet_type)) {
				err = PGM_ERR_OPT_WRONG_TYPE;
				break;
			}
			present |= 1u << bit;
			err = parse_known_option(opt, len, type, flags, pkt);
			if (err != PGM_ERR_OK)
				break;
		}
		pos += len;
		if (opt[0] & PGM_OPT_END) {
			if (pos != end)
				err = PGM_ERR_OPT_TRAILING;
			break;
		}
	}
	o->count = (uint8_t)count;
	o->present = present;
	if (err == PGM_ERR_OK && discard)
		err = PGM_ERR_OPT_DISCARD;
	return err;
}

/* An NLA in a packet body at *off; short_err if even the AFI word is missing. */
static inline enum pgm_err body_nla(const uint8_t *tpdu, size_t len, size_t *off,
	enum pgm_err short_err, struct pgm_nla *nla, uint16_t *addr_offset)
{
	uint16_t afi;
	size_t addr_len;

	if (len - *off < 4)
		return short_err;
	afi = get16(tpdu + *off);
	addr_len = afi_addr_len(afi);
	if (addr_len == 0)
		return PGM_ERR_UNKNOWN_AFI;
	if (len - *off - 4 < addr_len)
		return PGM_ERR_TRUNCATED_NLA;
	nla->afi = afi;
	copy_addr(nla->addr, tpdu + *off + 4, addr_len);
	if (addr_offset != NULL)
		*addr_offset = (uint16_t)(*off + 4);
	*off += 4 + addr_len;
	return PGM_ERR_OK;
}

/*
 * The fixed part of each type. A packet that ends before a fixed field or an NLA's AFI word
 * gets the type's length error; one whose NLA address runs past the end gets TRUNCATED_NLA.
 * Returns the offset after the fixed part in *off.
 */
static enum pgm_err parse_body(const uint8_t *tpdu, size_t len, struct pgm_packet *pkt, size_t *off)
{
	enum pgm_err err;

	*off = PGM_HEADER_LEN;
	switch (pkt->type) {
	case PGM_SPM: /* 8.1: SQN, TRAIL, LEAD, path NLA */
		if (len < 28)
			return PGM_ERR_SPM_LENGTH;
		pkt->sqn = get32(tpdu + 16);
		pkt->trail = get32(tpdu + 20);
		pkt->lead = get32(tpdu + 24);
		*off = 28;
		return body_nla(tpdu, len, off, PGM_ERR_SPM_LENGTH, &pkt->path, &pkt->path_offset);
	case PGM_POLL: /* 14.7.1: SQN, ROUND, S_TYPE, path NLA, BO_IVL, RAND, MASK */
		if (len < 24)
			return PGM_ERR_POLL_LENGTH;
		pkt->sqn = get32(tpdu + 16);
		pkt->poll_round = get16(tpdu + 20);
		pkt->poll_s_type = get16(tpdu + 22);
		*off = 24;
		err = body_nla(tpdu, len, off, PGM_ERR_POLL_LENGTH, &pkt->path, &pkt->path_offset);
		if (err != PGM_ERR_OK)
			return err;
		if (len - *off < 12)
			return PGM_ERR_POLL_LENGTH;
		pkt->poll_bo_ivl = get32(tpdu + *off);
		pkt->poll_rand = get32(tpdu + *off + 4);
		pkt->poll_mask = get32(tpdu + *off + 8);
		*off += 12;
		return PGM_ERR_OK;
	case PGM_POLR: /* 14.7.2: SQN, ROUND, reserved */
		if (len < 24)
			return PGM_ERR_POLR_LENGTH;
		pkt->sqn = get32(tpdu + 16);
		pkt->polr_round = get16(tpdu + 20);
		*off = 24;
		return PGM_ERR_OK;
	case PGM_ODATA:
	case PGM_RDATA: /* 8.2: SQN, TRAIL */
		if (len < 24)
			return PGM_ERR_DATA_LENGTH;
		pkt->sqn = get32(tpdu + 16);
		pkt->trail = get32(tpdu + 20);
		*off = 24;
		return PGM_ERR_OK;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF: /* 8.3: SQN, source NLA, group NLA; the families may differ (OpenPGM) */
		if (len < 20)
			return PGM_ERR_NAK_LENGTH;
		pkt->sqn = get32(tpdu + 16);
		*off = 20;
		err = body_nla(tpdu, len, off, PGM_ERR_NAK_LENGTH, &pkt->nak_src, NULL);
		if (err != PGM_ERR_OK)
			return err;
		return body_nla(tpdu, len, off, PGM_ERR_NAK_LENGTH, &pkt->nak_grp, NULL);
	case PGM_SPMR: /* 13.6: no body */
		return PGM_ERR_OK;
	case PGM_ACK: /* pgmcc: RX_MAX, bitmap */
		if (len < 24)
			return PGM_ERR_ACK_LENGTH;
		pkt->sqn = get32(tpdu + 16);
		pkt->ack_bitmap = get32(tpdu + 20);
		*off = 24;
		return PGM_ERR_OK;
	default:
		return PGM_ERR_UNKNOWN_TYPE;
	}
}

enum pgm_err pgm_parse(const uint8_t *tpdu, size_t len, unsigned flags, struct pgm_packet *pkt)
{
	size_t off, opt_end;
	enum pgm_err err;
	unsigned type_byte, type, opt_flags, tsdu_len;
	uint16_t checksum;
	bool checksum_bad = false;

	if (len < PGM_HEADER_LEN || len > 0xffff) {
		clear_packet(pkt);
		/* No IP datagram carries more; the 16-bit offsets below rely on it. */
		return len < PGM_HEADER_LEN ? PGM_ERR_SHORT_HEADER : PGM_ERR_TSDU_LENGTH;
	}

	/* 8: the common header. On any later error these fields stay valid for logging. The
	 * checks below use locals, which stores into *pkt cannot invalidate. */
	type_byte = tpdu[4];
	type = type_byte & 0x0f;
	opt_flags = tpdu[5];
	checksum = get16(tpdu + 6);
	tsdu_len = get16(tpdu + 14);
	/*
	 * The checksum is computed before *pkt is cleared: reading the whole TPDU right after
	 * hundreds of bytes of stores makes the CPU wait whenever the two buffers happen to share
	 * address bits (4 KiB aliasing), which costs more than the sum itself. Its verdict is
	 * reported in the order of the checks below.
	 */
	if ((type_byte & 0xf0) == 0 && known_type(type) && checksum != 0 &&
		!(flags & PGM_PARSE_NO_CHECKSUM))
		checksum_bad = !pgm_csum_verifies(tpdu, len);
	clear_packet(pkt);
	pkt->tpdu = tpdu;
	pkt->tpdu_len = (uint16_t)len;
	pkt->sport = get16(tpdu);
	pkt->dport = get16(tpdu + 2);
	pkt->type = (uint8_t)type;
	pkt->opt_flags = (uint8_t)opt_flags;
	pkt->checksum = checksum;
	memcpy(pkt->gsi, tpdu + 8, PGM_GSI_LEN);
	pkt->tsdu_len = (uint16_t)tsdu_len;

	if (type_byte & 0xc0)
		return PGM_ERR_BAD_VERSION;
	if (type_byte & 0x30)
		return PGM_ERR_BAD_RESERVED;
	if (!known_type(type))
		return PGM_ERR_UNKNOWN_TYPE;

	/* 8: the checksum is optional except on ODATA and RDATA; 0 means "not computed". A
	 * correct checksum makes the sum over the whole TPDU, field included, all ones. */
	if (checksum == 0 && is_data(type))
		return PGM_ERR_ZERO_CHECKSUM;
	if (checksum_bad)
		return PGM_ERR_BAD_CHECKSUM;

	/* 8: VAR_PKTLEN qualifies a parity packet; alone it means nothing. */
	if ((opt_flags & PGM_OPT_VAR_PKTLEN) && !(opt_flags & PGM_OPT_PARITY))
		return PGM_ERR_PARITY_FLAGS;
	/* 8: only ODATA and RDATA carry a TSDU. */
	if (!is_data(type) && tsdu_len != 0)
		return PGM_ERR_TSDU_LENGTH;

	err = parse_body(tpdu, len, pkt, &off);
	if (err != PGM_ERR_OK)
		return err;

	/*
	 * Without the "options present" flag the body is followed directly by the TSDU (data) or
	 * by nothing. A stray "network-significant" flag without "present" is ignored, as OpenPGM
	 * does: it does not change how the packet is read.
	 */
	opt_end = off;
	if (opt_flags & PGM_OPT_PRESENT) {
		unsigned total;

		/* 9.1: OPT_LENGTH first, exactly 4 bytes, E bit clear (other options follow). */
		if (len - off < 4 || tpdu[off] != PGM_OPT_LENGTH || tpdu[off + 1] != 4)
			return PGM_ERR_OPT_NO_LENGTH;
		total = get16(tpdu + off + 2);
		if (total < 4 || total > len - off)
			return PGM_ERR_OPT_TOTAL_LENGTH;
		opt_end = off + total;
		pkt->opt_offset = (uint16_t)off;
		pkt->opt.total_len = (uint16_t)total;
	}
	/* The packet ends exactly after the options and the TSDU: no truncation, and no trailing
	 * bytes where a second packet or a covert channel could hide. */
	if (opt_end + tsdu_len != len)
		return PGM_ERR_TSDU_LENGTH;
	if (is_data(type))
		pkt->tsdu = tpdu + opt_end;
	if (opt_flags & PGM_OPT_PRESENT)
		return parse_options(tpdu, off, opt_end, flags, pkt);
	return PGM_ERR_OK;
}

enum pgm_err pgm_parse_datagram(const uint8_t *buf, size_t len, const struct pgm_udp_ports *ports,
	unsigned flags, struct pgm_ip *ip, struct pgm_packet *pkt)
{
	enum pgm_err err;

	err = pgm_parse_ip(buf, len, ports, ip);
	if (err != PGM_ERR_OK) {
		clear_packet(pkt);
		return err;
	}
	if (ip->udp && !(flags & PGM_PARSE_NO_UDP_CHECKSUM) && !pgm_ip_udp_checksum_ok(buf, ip)) {
		clear_packet(pkt);
		return PGM_ERR_UDP_CHECKSUM;
	}
	return pgm_parse(buf + ip->pgm_offset, ip->pgm_len, flags, pkt);
}

/*
 * PGM (RFC 3208) wire codec: parse, validate, build and rewrite PGM packets, with the IPv4, IPv6
 * and UDP-encapsulation layers around them.
 *
 * Rules of this module:
 *  - parsing never allocates and never reads outside [buf, buf + len); every malformed input maps
 *    to one named error (enum pgm_err), and those names are the error counters that
 *    `show ip pgm router traffic` prints;
 *  - byte order is converted here, once: every integer in the parsed structs is in host order;
 *  - parsed structs point into the caller's buffer (option values, NAK lists, TSDU), so they live
 *    as long as the buffer does;
 *  - builders write into a caller-supplied buffer and return the number of bytes written, or 0
 *    when the buffer is too small or the parameters are invalid.
 *
 * Section numbers refer to RFC 3208. The header option flag masks follow OpenPGM, Wireshark and
 * tcpdump (0x01 present, 0x02 network-significant, 0x40 variable length, 0x80 parity), not the
 * RFC's ambiguous bit numbering.
 */
#ifndef PGM_WIRE_H
#define PGM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPPROTO_PGM_NUMBER 113

/* Packet types (8, type nibble). 0x0D is the PGMCC ACK of OpenPGM and Wireshark (not RFC 3208). */
enum pgm_type {
	PGM_SPM = 0x00,
	PGM_POLL = 0x01,
	PGM_POLR = 0x02,
	PGM_ODATA = 0x04,
	PGM_RDATA = 0x05,
	PGM_NAK = 0x08,
	PGM_NNAK = 0x09,
	PGM_NCF = 0x0a,
	PGM_SPMR = 0x0c,
	PGM_ACK = 0x0d,
};
#define PGM_TYPE_COUNT 16 /* type nibble values, for per-type counter arrays */

/* Header option flags, byte 5 of the common header (RFC 3208 8, 9). */
#define PGM_OPT_PRESENT 0x01
#define PGM_OPT_NETWORK 0x02
#define PGM_OPT_VAR_PKTLEN 0x40
#define PGM_OPT_PARITY 0x80

/* Option types (9, 11.8, 12.7, 15.4). Byte 0 of an option is E (0x80, OPT_END) | type. */
enum pgm_opt_type {
	PGM_OPT_LENGTH = 0x00,
	PGM_OPT_FRAGMENT = 0x01,
	PGM_OPT_NAK_LIST = 0x02,
	PGM_OPT_JOIN = 0x03,
	PGM_OPT_NAK_BO_IVL = 0x04,
	PGM_OPT_NAK_BO_RNG = 0x05,
	PGM_OPT_REDIRECT = 0x07,
	PGM_OPT_PARITY_PRM = 0x08,
	PGM_OPT_PARITY_GRP = 0x09,
	PGM_OPT_CURR_TGSIZE = 0x0a,
	PGM_OPT_NBR_UNREACH = 0x0b,
	PGM_OPT_PATH_NLA = 0x0c,
	PGM_OPT_SYN = 0x0d,
	PGM_OPT_FIN = 0x0e,
	PGM_OPT_RST = 0x0f,
	PGM_OPT_CR = 0x10,
	PGM_OPT_CRQST = 0x11,
	PGM_OPT_PGMCC_DATA = 0x12,
	PGM_OPT_PGMCC_FEEDBACK = 0x13,
	PGM_OPT_INVALID = 0x7f,
};
#define PGM_OPT_END 0x80
#define PGM_OPT_TYPE_MASK 0x7f
#define PGM_OPX_MASK 0x03 /* byte 2 of an option */
enum pgm_opx {
	PGM_OPX_IGNORE = 0,	/* forward unchanged */
	PGM_OPX_INVALIDATE = 1, /* rename the option to OPT_INVALID, fix the checksum */
	PGM_OPX_DISCARD = 2,	/* discard the packet */
	PGM_OPX_RESERVED = 3,	/* no action defined: treated as IGNORE and counted */
};

#define PGM_MAX_OPTIONS 16	/* 9 */
#define PGM_MAX_NAK_LIST 62	/* 9.3: entries in OPT_NAK_LIST, besides the header SQN */
#define PGM_HEADER_LEN 16	/* 8 */
#define PGM_GSI_LEN 6
#define PGM_DEFAULT_UDP_UCAST_PORT 3055 /* OpenPGM, after IBM WebSphere MQ */
#define PGM_DEFAULT_UDP_MCAST_PORT 3056

/* NLA address family identifiers (8, IANA address family numbers). */
#define PGM_AFI_IP 1
#define PGM_AFI_IP6 2

/*
 * Every malformed input has a name. X(symbol, counter name, description). The counter names are
 * stable: CLI output, JSON and tests use them. Order matters only for array indexing.
 */
#define PGM_ERRORS(X)                                                                              \
	X(OK, "ok", "no error")                                                                    \
	X(IP_SHORT, "ip-short", "shorter than an IP header")                                       \
	X(IP_VERSION, "ip-version", "IP version is neither 4 nor 6")                               \
	X(IP_HEADER_LENGTH, "ip-header-length", "IPv4 header length below 20 or beyond the packet") \
	X(IP_TOTAL_LENGTH, "ip-total-length", "IP total or payload length disagrees with the packet") \
	X(IP_OPTIONS, "ip-options", "malformed IPv4 option")                                       \
	X(IP_FRAGMENT, "ip-fragment", "IP fragment (PGM needs whole datagrams)")                    \
	X(IP6_EXT_HEADER, "ip6-ext-header", "malformed or unsupported IPv6 extension header")      \
	X(NOT_PGM, "not-pgm", "neither IP protocol 113 nor UDP on a PGM encapsulation port")       \
	X(UDP_LENGTH, "udp-length", "UDP header truncated or UDP length disagrees with the packet") \
	X(UDP_CHECKSUM, "udp-checksum", "bad UDP checksum on an encapsulated packet")              \
	X(SHORT_HEADER, "short-header", "shorter than the 16-byte PGM header")                     \
	X(BAD_VERSION, "bad-version", "PGM version bits are not 0")                                \
	X(BAD_RESERVED, "bad-reserved", "PGM reserved type bits are not 0")                        \
	X(UNKNOWN_TYPE, "unknown-type", "PGM type not defined by RFC 3208")                        \
	X(BAD_CHECKSUM, "bad-checksum", "PGM checksum does not verify")                            \
	X(ZERO_CHECKSUM, "zero-checksum", "ODATA or RDATA without a checksum")                     \
	X(TSDU_LENGTH, "tsdu-length", "TSDU length disagrees with the packet length")              \
	X(SPM_LENGTH, "spm-length", "SPM shorter than its fixed part")                             \
	X(POLL_LENGTH, "poll-length", "POLL shorter than its fixed part")                          \
	X(POLR_LENGTH, "polr-length", "POLR shorter than its fixed part")                          \
	X(DATA_LENGTH, "data-length", "ODATA or RDATA shorter than its fixed part")                \
	X(NAK_LENGTH, "nak-length", "NAK, NNAK or NCF shorter than its fixed part")                \
	X(UNKNOWN_AFI, "unknown-afi", "NLA address family is neither 1 (IPv4) nor 2 (IPv6)")       \
	X(TRUNCATED_NLA, "truncated-nla", "NLA runs past the end of the packet")                   \
	X(OPT_NO_LENGTH, "opt-no-length", "options present but OPT_LENGTH is missing or not 4 bytes") \
	X(OPT_TOTAL_LENGTH, "opt-total-length", "OPT_LENGTH total overflows the packet")           \
	X(OPT_LENGTH, "opt-length", "an option shorter than 4 bytes or past the options' end")     \
	X(OPT_TOO_MANY, "opt-too-many", "more than 16 options")                                    \
	X(OPT_NO_END, "opt-no-end", "the last option does not carry OPT_END")                      \
	X(OPT_TRAILING, "opt-trailing", "bytes after OPT_END inside the options' total length")    \
	X(OPT_SIZE, "opt-size", "a known option with the wrong length for its type")               \
	X(OPT_DUPLICATE, "opt-duplicate", "the same option twice in one packet")                   \
	X(OPT_DISCARD, "opt-discard", "unknown option whose OPX bits say discard")                 \
	X(NAK_LIST_LENGTH, "nak-list-length", "OPT_NAK_LIST empty, over 62 entries or ragged")     \
	X(NAK_LIST_ORDER, "nak-list-order", "OPT_NAK_LIST not strictly increasing after the header SQN") \
	X(PARITY_TGS, "parity-tgs", "OPT_PARITY_PRM transmission group size not a power of 2 in 2..128") \
	X(PARITY_GRP, "parity-grp", "OPT_PARITY_GRP number is 0")                                  \
	X(PARITY_FLAGS, "parity-flags", "OPT_VAR_PKTLEN without OPT_PARITY")                       \
	X(ACK_LENGTH, "ack-length", "ACK shorter than its fixed part")                             \
	X(OPT_WRONG_TYPE, "opt-wrong-type", "a known option on a packet type that never carries it")

enum pgm_err {
#define PGM_ERR_ENUM(sym, name, desc) PGM_ERR_##sym,
	PGM_ERRORS(PGM_ERR_ENUM)
#undef PGM_ERR_ENUM
	PGM_ERR_COUNT
};

const char *pgm_err_name(enum pgm_err err);	   /* "bad-checksum" */
const char *pgm_err_description(enum pgm_err err); /* "PGM checksum does not verify" */
const char *pgm_type_name(unsigned type);	   /* "SPM", "NAK", ..., "type-0x3" */
const char *pgm_opt_name(unsigned opt_type);	   /* "OPT_NAK_LIST", ..., "OPT_0x2a" */

/* A network-layer address: an NLA (AFI 1 or 2) or an IP address. Unused bytes are zero. */
struct pgm_nla {
	uint16_t afi; /* PGM_AFI_IP or PGM_AFI_IP6; 0 = unset */
	uint8_t addr[16];
};
size_t pgm_nla_len(const struct pgm_nla *nla); /* 4, 16, or 0 */
bool pgm_nla_equal(const struct pgm_nla *a, const struct pgm_nla *b);
void pgm_nla_from_ip4(struct pgm_nla *nla, const void *addr4 /* network order */);
/* "198.18.0.1" or "2001:db8::1"; returns buf. */
char *pgm_nla_format(const struct pgm_nla *nla, char *buf, size_t len);
bool pgm_nla_parse(struct pgm_nla *nla, const char *text);

/* Transport session identifier (3.1): GSI and data-source port. */
struct pgm_tsi {
	uint8_t gsi[PGM_GSI_LEN];
	uint16_t sport; /* data-source port, host order */
};
bool pgm_tsi_equal(const struct pgm_tsi *a, const struct pgm_tsi *b);
/* "0a0b0c0d0e0f.1234" (GSI in hex, port in decimal); returns buf (at least 20 bytes). */
char *pgm_tsi_format(const struct pgm_tsi *tsi, char *buf, size_t len);

/* A set of UDP ports: at most PGM_PORT_SET_MAX ports, a range counting two (the limit of
 * iptables' multiport match, which the rules use), as sorted disjoint ranges. */
#define PGM_PORT_SET_MAX 15
struct pgm_port_range {
	uint16_t lo, hi;
};
struct pgm_port_set {
	unsigned n;
	struct pgm_port_range r[PGM_PORT_SET_MAX];
};
/* "3055 3056 5555 7000-7010" (blanks or commas between ports and ranges): 0, or -1 with one
 * sentence in err. Sorted, overlapping and adjacent ranges merged. */
int pgm_port_set_parse(const char *text, struct pgm_port_set *set, char *err, size_t errlen);
/* The canonical text: ranges as "lo-hi", two adjacent ports as "lo hi", one as "lo". */
char *pgm_port_set_format(const struct pgm_port_set *set, char *buf, size_t len);
bool pgm_port_set_has(const struct pgm_port_set *set, uint16_t port);
/* How many ports the set counts (a range two): what a multiport match takes. */
unsigned pgm_port_set_weight(const struct pgm_port_set *set);

/* UDP encapsulation ports: packets from or to a port of the set are PGM. OpenPGM uses 3055
 * (unicast: NAKs) and 3056 (group traffic); ZeroMQ's epgm its endpoint's port for both. */
struct pgm_udp_ports {
	bool enabled;
	uint16_t ucast_port; /* NAKs and other unicast, default 3055 */
	uint16_t mcast_port; /* group traffic, default 3056 */
	struct pgm_port_set more; /* further ports (empty: the two alone) */
};
void pgm_udp_ports_default(struct pgm_udp_ports *ports);

/* The IP layer around a PGM TPDU. */
struct pgm_ip {
	uint8_t version; /* 4 or 6 */
	uint8_t ttl;	 /* TTL or hop limit */
	uint8_t tos;	 /* TOS or traffic class */
	bool router_alert; /* IPv4 option 148 (RFC 2113) or IPv6 hop-by-hop RA (RFC 2711) */
	bool udp;	   /* PGM over UDP */
	uint16_t ip_header_len; /* including IPv4 options or IPv6 extension headers */
	uint16_t udp_sport, udp_dport;
	uint16_t udp_checksum; /* as received; 0 = none (IPv4 only) */
	struct pgm_nla src, dst;
	uint16_t pgm_offset; /* TPDU offset within the datagram */
	uint16_t pgm_len;    /* TPDU length */
};
bool pgm_ip_dst_is_multicast(const struct pgm_ip *ip);

/*
 * Options found in a packet. Values are in host order; `list` points into the packet. Each known
 * option may appear at most once (PGM_ERR_OPT_DUPLICATE otherwise). `offset[i]` and `type[i]` list
 * every option in wire order (OPT_LENGTH included) for rewrites, for i < count. The values of
 * absent options are zero.
 */
struct pgm_options {
	uint32_t present; /* bit (1u << index) for index = pgm_opt_bit(type), see below */
	uint8_t count;	  /* options in the packet, OPT_LENGTH included */
	uint16_t total_len; /* from OPT_LENGTH: all options, OPT_LENGTH included */
	uint8_t unknown;		   /* unknown options (any OPX) */
	uint8_t opx_invalidate;		   /* unknown options with OPX 01 */
	uint8_t opx_reserved;		   /* unknown options with OPX 11 */

	/* OPT_FRAGMENT (9.2) */
	uint32_t frag_first_sqn, frag_offset, frag_apdu_len;
	/* OPT_NAK_LIST (9.3): SQNs in wire order, big-endian 32-bit words inside the packet */
	const uint8_t *nak_list;
	uint8_t nak_list_count;
	bool nak_list_unordered; /* not strictly increasing from the header SQN (9.3) */
	/* OPT_JOIN (9.4) */
	uint32_t join_min_sqn;
	/* OPT_NAK_BO_IVL (15.4.1), µs */
	uint32_t nak_bo_ivl, nak_bo_ivl_sqn;
	/* OPT_NAK_BO_RNG (15.4.2), µs */
	uint32_t nak_bo_max, nak_bo_min;
	/* OPT_REDIRECT (9.5.5): the DLR's NLA */
	struct pgm_nla redirect;
	/* OPT_PARITY_PRM (11.8.1): byte 3 flags as sent (RFC: P 0x02, O 0x01; OpenPGM swaps them) */
	uint8_t parity_prm_flags;
	uint32_t parity_tgs;
	/* OPT_PARITY_GRP (11.8.2) */
	uint32_t parity_grp;
	/* OPT_CURR_TGSIZE (11.8.3) */
	uint32_t curr_tgsize;
	/* OPT_PATH_NLA (15.4.4): no AFI on the wire; the family follows from the length */
	struct pgm_nla path_nla;
	/* OPT_RST (9.8.4): byte 3, N = 0x40, error code in the low 6 bits */
	uint8_t rst_flags;
	/* OPT_CR (12.7.1) */
	uint8_t cr_flags; /* L 0x04, P 0x02, R 0x01 */
	uint32_t cr_lead;
	uint16_t cr_ne_wl, cr_ne_wp, cr_rx_wp;
	struct pgm_nla cr_rcvr;
	/* OPT_CRQST (12.7.2) */
	uint8_t crqst_flags;
	/* OPT_PGMCC_DATA / OPT_PGMCC_FEEDBACK (pgmcc draft) */
	uint32_t pgmcc_tstamp;
	uint16_t pgmcc_loss_rate;
	struct pgm_nla pgmcc_nla;

	/* Every option in wire order; entries from `count` on are unspecified (the parser does
	 * not spend time clearing them). Last in the struct for that reason. */
	uint16_t offset[PGM_MAX_OPTIONS]; /* byte offset of each option from the TPDU start */
	uint8_t type[PGM_MAX_OPTIONS];	   /* its type byte without the E bit */
	uint8_t flags[PGM_MAX_OPTIONS];	   /* its byte 2: reserved | F (OP_ENCODED) | OPX (0x03) */
	uint8_t specific[PGM_MAX_OPTIONS]; /* its byte 3: U (OP_ENCODED_NULL) | option-specific */
};
/* Bit index of a known option type in pgm_options.present, or -1 for an unknown type. */
int pgm_opt_bit(unsigned opt_type);
bool pgm_opt_has(const struct pgm_options *opts, unsigned opt_type);
uint32_t pgm_opt_nak_list_sqn(const struct pgm_options *opts, unsigned index);

/*
 * A parsed PGM TPDU. Fields a packet type does not have are zero. `sqn` is the type's main
 * sequence number: SPM_SQN, OD/RD_SQN, NAK_SQN (NAK, NNAK, NCF), POLL_SQN, POLR_SQN.
 */
struct pgm_packet {
	/* common header (8) */
	uint16_t sport, dport;
	uint8_t type;	   /* enum pgm_type */
	uint8_t opt_flags; /* PGM_OPT_* header flags */
	uint16_t checksum; /* as received */
	uint8_t gsi[PGM_GSI_LEN];
	uint16_t tsdu_len;

	uint32_t sqn;
	uint32_t trail; /* SPM_TRAIL, or the trailing edge in ODATA/RDATA */
	uint32_t lead;	/* SPM_LEAD */
	/* SPM_PATH (SPM), POLL_PATH (POLL) */
	struct pgm_nla path;
	uint16_t path_offset; /* offset of the path NLA's address bytes, for rewriting */
	/* NAK, NNAK, NCF: NAK_SRC (the data source) and NAK_GRP */
	struct pgm_nla nak_src, nak_grp;
	/* POLL (14.7.1) */
	uint16_t poll_round, poll_s_type;
	uint32_t poll_bo_ivl, poll_rand, poll_mask;
	/* POLR (14.7.2) */
	uint16_t polr_round;
	/* ACK (pgmcc): RX_MAX is in sqn, the 32-bit receive bitmap here */
	uint32_t ack_bitmap;

	uint16_t opt_offset; /* where the options start, 0 if none */
	const uint8_t *tsdu; /* ODATA/RDATA payload, tsdu_len bytes */
	const uint8_t *tpdu; /* the whole TPDU as parsed */
	uint16_t tpdu_len;
	struct pgm_options opt; /* last: its per-option arrays end the struct */
};

/* The TSI of a packet, with the upstream port swap applied (8.3): NAK, NNAK, SPMR, POLR and ACK
 * carry the data-source port in DPORT. */
void pgm_packet_tsi(const struct pgm_packet *pkt, struct pgm_tsi *tsi);
/* The data-destination port of the session (DPORT downstream, SPORT upstream). */
uint16_t pgm_packet_data_dport(const struct pgm_packet *pkt);
bool pgm_type_is_upstream(unsigned type);
bool pgm_packet_is_parity(const struct pgm_packet *pkt);

/* Parse flags. */
/* Skip checksum verification (fuzz seeds, replay of rewritten packets); a zero checksum on
 * ODATA/RDATA is still PGM_ERR_ZERO_CHECKSUM: it breaks the protocol, not the transmission. */
#define PGM_PARSE_NO_CHECKSUM 0x01
#define PGM_PARSE_STRICT_OPTIONS 0x02 /* reject known options on packet types that never carry them */
/* Endpoints: OPX bits concern network elements only (9), so an unknown option with OPX 10 does
 * not discard the packet (it is still counted in pgm_options.unknown). */
#define PGM_PARSE_IGNORE_OPX 0x04
/* pgm_parse_datagram: do not verify the UDP checksum (NFQUEUE packets flagged
 * NFQA_SKB_CSUMNOTREADY, captures of locally sent packets with checksum offload). */
#define PGM_PARSE_NO_UDP_CHECKSUM 0x08
/* Reject NAK lists that are not strictly increasing from the header SQN (9.3: "MUST be
 * ordered"). Without it such lists are accepted and flagged in pgm_options.nak_list_unordered:
 * OpenPGM receivers send their lists in the order their NAK timers expire, not by SQN, and a
 * network element processes every entry as a NAK of its own anyway. */
#define PGM_PARSE_STRICT_NAK_LIST 0x10

/*
 * Parse an IP datagram (IPv4 with or without options, or IPv6 with hop-by-hop, routing and
 * destination-options headers) and locate the PGM TPDU: IP protocol 113, or UDP to or from an
 * encapsulation port when `ports` is non-NULL and enabled.
 */
enum pgm_err pgm_parse_ip(const uint8_t *buf, size_t len, const struct pgm_udp_ports *ports,
	struct pgm_ip *ip);
/* The type of the TPDU pgm_parse_ip() located in datagram, from its type byte, before anything
   is validated (the data plane's dispatch); -1 when the TPDU is too short to hold one. */
int pgm_peek_type(const uint8_t *datagram, const struct pgm_ip *ip);
/* Parse and validate a PGM TPDU. */
enum pgm_err pgm_parse(const uint8_t *tpdu, size_t len, unsigned flags, struct pgm_packet *pkt);
/* Whether the UDP checksum of an encapsulated datagram verifies (true when not UDP, or IPv4 sent
 * without one; IPv6 requires one). pgm_parse_ip does not check it; pgm_parse_datagram does. */
bool pgm_ip_udp_checksum_ok(const uint8_t *datagram, const struct pgm_ip *ip);
/* Both, on a whole datagram, plus the UDP checksum unless PGM_PARSE_NO_UDP_CHECKSUM. On an IP
 * error *pkt is zeroed. */
enum pgm_err pgm_parse_datagram(const uint8_t *buf, size_t len, const struct pgm_udp_ports *ports,
	unsigned flags, struct pgm_ip *ip, struct pgm_packet *pkt);

/* ---- checksums (8; RFC 1071, RFC 1624) ---- */

/* 32-bit partial one's-complement sum of len bytes, added to sum (odd length padded with 0). */
uint32_t pgm_csum_partial(const void *buf, size_t len, uint32_t sum);
/* Fold a partial sum and complement it; 0 becomes 0xffff (the PGM rule for "computed"). */
uint16_t pgm_csum_fold(uint32_t sum);
/* The IPv4 header checksum of h (len bytes, its checksum field zeroed by the caller). */
uint16_t pgm_ip_header_checksum(const uint8_t *h, size_t len);
/* The checksum of a whole TPDU, ignoring the value currently in its checksum field. */
uint16_t pgm_checksum(const uint8_t *tpdu, size_t len);
/* Writes the checksum into a TPDU. */
void pgm_checksum_set(uint8_t *tpdu, size_t len);
/* Whether the one's-complement sum of buf, checksum field included, is all ones: the check a
 * receiver makes on a non-zero checksum (cheaper than comparing with pgm_checksum). */
bool pgm_csum_verifies(const void *buf, size_t len);
/* RFC 1624 eqn. 3: new checksum after 16-bit words old[] became new[] (n words, network order). */
uint16_t pgm_csum_update(uint16_t csum, const void *old_words, const void *new_words, size_t n);

/* ---- in-place rewrites (checksums updated incrementally) ---- */

/*
 * Each takes the mutable TPDU the packet was parsed from. A zero checksum (none) stays zero.
 * Return false, changing nothing, when the rewrite does not apply (wrong type, option absent,
 * different address family).
 */
bool pgm_rewrite_spm_path(uint8_t *tpdu, const struct pgm_packet *spm, const struct pgm_nla *path);
bool pgm_rewrite_nak_bo_ivl(uint8_t *tpdu, const struct pgm_packet *pkt, uint32_t ivl_us,
	uint32_t ivl_sqn);
/* Parity NAK: replace the PKT_CNT bits of NAK_SQN (11.6); tgs is the transmission group size. */
bool pgm_rewrite_parity_pkt_cnt(uint8_t *tpdu, const struct pgm_packet *nak, uint32_t tgs,
	uint32_t pkt_cnt);
/* NAK/NNAK/NCF: replace NAK_SRC with an NLA of the same family. */
bool pgm_rewrite_nak_src(uint8_t *tpdu, const struct pgm_packet *nak, const struct pgm_nla *src);
/* OPX 01: rename option number `index` (in pkt->opt order) to OPT_INVALID, keeping the E bit. */
bool pgm_rewrite_opt_invalid(uint8_t *tpdu, const struct pgm_packet *pkt, unsigned index);
/* The same for every option whose bit is set in mask (bit i: option i); false when one fails. */
bool pgm_rewrite_opts_invalid(uint8_t *tpdu, const struct pgm_packet *pkt, unsigned mask);
/* SPM: removes OPT_NAK_BO_IVL (15.2.1: an NE removes or overwrites it) from the whole IP
 * datagram the packet was parsed from, after any in-place rewrite. The options behind it move
 * up; OPT_LENGTH, OPT_END (or the whole option extension and the O and N bits, when nothing else
 * is left), the PGM checksum (if not 0), the UDP length and checksum and the IP lengths and
 * header checksum follow. Returns the datagram's new length, or 0 (nothing changed) when the
 * option is absent or the layout is not as parsed. */
size_t pgm_remove_nak_bo_ivl(
	uint8_t *datagram, size_t len, const struct pgm_ip *ip, const struct pgm_packet *spm);
/* After any rewrite of a UDP-encapsulated datagram: recompute the UDP checksum (if not 0).
 * Only needed when the TPDU has no PGM checksum: a rewrite that updates a PGM checksum leaves
 * the TPDU's one's-complement sum, and so the UDP checksum, unchanged. */
void pgm_ip_fix_udp_checksum(uint8_t *datagram, const struct pgm_ip *ip);

/* ---- builders ---- */

/* Common header fields for a packet a builder makes. */
struct pgm_header_params {
	uint16_t sport, dport; /* as they go on the wire (upstream types already swapped) */
	uint8_t gsi[PGM_GSI_LEN];
};

/* Options a builder can append (NCF, SPM, POLR, NAK). Zero means absent. */
struct pgm_build_options {
	const uint32_t *nak_list; /* SQNs after the header SQN, host order */
	unsigned nak_list_count;  /* up to 62 */
	bool nak_bo_ivl;
	uint32_t nak_bo_ivl_us, nak_bo_ivl_sqn;
	bool nak_bo_rng;
	uint32_t nak_bo_max_us, nak_bo_min_us;
	const struct pgm_nla *redirect;
	bool parity_prm;
	uint8_t parity_prm_flags;
	uint32_t parity_tgs;
	bool curr_tgsize;
	uint32_t curr_tgsize_value;
	bool parity_grp;
	uint32_t parity_grp_value;
	bool nbr_unreach;
	const struct pgm_nla *path_nla;
	bool fragment;
	uint32_t frag_first_sqn, frag_offset, frag_apdu_len;
	bool join;
	uint32_t join_min_sqn;
	bool syn, fin, rst;
	uint8_t rst_flags;
	bool crqst;
	uint8_t crqst_flags;
	bool cr;
	uint8_t cr_flags;
	uint32_t cr_lead;
	uint16_t cr_ne_wl, cr_ne_wp, cr_rx_wp;
	const struct pgm_nla *cr_rcvr;
	/* extra raw options appended verbatim before OPT_END is set (tests: unknown/OPX options) */
	const uint8_t *raw;
	size_t raw_len;
	uint8_t extra_header_flags; /* e.g. PGM_OPT_PARITY, PGM_OPT_VAR_PKTLEN */
};

/* SPM (8.1). */
size_t pgm_build_spm(uint8_t *out, size_t cap, const struct pgm_header_params *hdr, uint32_t spm_sqn,
	uint32_t trail, uint32_t lead, const struct pgm_nla *path, const struct pgm_build_options *o);
/* ODATA / RDATA (8.2). */
size_t pgm_build_data(uint8_t *out, size_t cap, unsigned type, const struct pgm_header_params *hdr,
	uint32_t sqn, uint32_t trail, const void *tsdu, size_t tsdu_len,
	const struct pgm_build_options *o);
/* NAK, NNAK or NCF (8.3); the caller gives ports in the form the type needs. */
size_t pgm_build_nak(uint8_t *out, size_t cap, unsigned type, const struct pgm_header_params *hdr,
	uint32_t sqn, const struct pgm_nla *src, const struct pgm_nla *grp,
	const struct pgm_build_options *o);
/* POLL (14.7.1). */
size_t pgm_build_poll(uint8_t *out, size_t cap, const struct pgm_header_params *hdr, uint32_t sqn,
	uint16_t round, uint16_t s_type, const struct pgm_nla *path, uint32_t bo_ivl_us,
	uint32_t rand, uint32_t mask, const struct pgm_build_options *o);
/* POLR (14.7.2); a DLR's redirecting POLR sets o->redirect. */
size_t pgm_build_polr(uint8_t *out, size_t cap, const struct pgm_header_params *hdr, uint32_t sqn,
	uint16_t round, const struct pgm_build_options *o);
/* SPMR (13.6). */
size_t pgm_build_spmr(uint8_t *out, size_t cap, const struct pgm_header_params *hdr,
	const struct pgm_build_options *o);
/* ACK 0x0D (pgmcc; OpenPGM, Wireshark): RX_MAX and the receive bitmap, upstream port form.
 * PGMCC options, which pgm_build_options does not name, go in o->raw. */
size_t pgm_build_ack(uint8_t *out, size_t cap, const struct pgm_header_params *hdr,
	uint32_t rx_max, uint32_t bitmap, const struct pgm_build_options *o);

/*
 * Re-serialize a packet pgm_parse accepted, from its parsed fields: header, body, every option
 * in its original order re-encoded from the parsed values (unknown options and OPT_INVALID,
 * which have no parsed value, copied from pkt->tpdu), the TSDU, and a recomputed checksum (none
 * if the original had none). Reserved fields are written as 0, so the output equals the input
 * byte for byte exactly when the sender zeroed them as RFC 3208 requires. Returns the length,
 * or 0 if cap is too small.
 */
size_t pgm_packet_serialize(uint8_t *out, size_t cap, const struct pgm_packet *pkt);

/*
 * What a router originates or rewrites:
 *  - NCF from a NAK (7.2, 8.3, 9.3.3): ports swapped back to downstream form, same SQN, NLAs and
 *    NAK list, OPT_PARITY kept (with pkt_cnt as the count when parity), other NAK options dropped;
 *    extra NCF options (NAK_BO_IVL, REDIRECT, NBR_UNREACH + PATH_NLA) from o, may be NULL;
 *  - a NAK or NNAK from state (router repeats): upstream port form for the TSI;
 *  - an SPM with a new path NLA: the copy with pgm_rewrite_spm_path.
 */
size_t pgm_build_ncf_from_nak(uint8_t *out, size_t cap, const struct pgm_packet *nak,
	uint32_t parity_pkt_cnt, const struct pgm_build_options *o);
/*
 * The same for the common case, a NAK with no options and no NCF options to add: the NAK's bytes
 * with the ports swapped back, the type changed and the checksum made again, which is what
 * pgm_build_ncf_from_nak writes for it. Returns 0 for any other NAK (options, a TSDU length,
 * nonzero reserved NLA bytes) or if cap is too small: then build it with pgm_build_ncf_from_nak.
 */
size_t pgm_build_ncf_from_plain_nak(uint8_t *out, size_t cap, const struct pgm_packet *nak);
/*
 * For a parity NAK, parity_pkt_cnt above becomes NCF_PKT_CNT and must already be
 * max(NAK_PKT_CNT, the interface's known count) (11.6): without the group size the builder
 * replaces the low bits that hold parity_pkt_cnt and can detect a smaller count only where
 * those bits show it (returns 0 then, and for counts of 128 or more). This variant takes the
 * transmission group size (PARITY_PRM_TGS of the session) and computes the max itself; it
 * returns 0 if tgs is not a power of 2 in 2..128 or pkt_cnt >= tgs.
 */
size_t pgm_build_ncf_from_nak_tgs(uint8_t *out, size_t cap, const struct pgm_packet *nak,
	uint32_t tgs, uint32_t pkt_cnt, const struct pgm_build_options *o);
size_t pgm_build_nak_for_tsi(uint8_t *out, size_t cap, unsigned type, const struct pgm_tsi *tsi,
	uint16_t data_dport, uint32_t sqn, const struct pgm_nla *src, const struct pgm_nla *grp,
	const struct pgm_build_options *o);
size_t pgm_build_ncf_for_tsi(uint8_t *out, size_t cap, const struct pgm_tsi *tsi,
	uint16_t data_dport, uint32_t sqn, const struct pgm_nla *src, const struct pgm_nla *grp,
	const struct pgm_build_options *o);

/*
 * The IPv6 Router Alert value (RFC 2711) of what the router sends. IANA assigned PGM none (RFC
 * 3208 cites only IPv4's), and OpenPGM sends no IPv6 Router Alert at all. Not 0: that is MLD's,
 * and Linux's multicast forwarding holds back a non-MLD packet carrying it; the first value of
 * the experimental range (RFC 5350), which routers treat as any unknown value: forwarded as
 * usual, examined by those that look. Receivers accept any value.
 */
#define PGM_IPV6_ROUTER_ALERT_VALUE 65503

/* IP (and UDP) around a TPDU. */
struct pgm_ip_params {
	struct pgm_nla src, dst; /* same family */
	uint8_t ttl;
	uint8_t tos;
	uint16_t id;
	/* IPv4: option 148, 4 bytes (0x94 0x04 0x00 0x00); IPv6: a hop-by-hop header with the
	   RFC 2711 option of value PGM_IPV6_ROUTER_ALERT_VALUE */
	bool router_alert;
	bool udp;
	uint16_t udp_sport, udp_dport;
};
/* Writes header(s) + TPDU; the IPv4 header checksum and the UDP checksum (mandatory over IPv6,
 * RFC 8200 8.1; PGM's own checksum has no pseudo-header) are computed. The TPDU may already sit
 * at its final place in out (after the headers). Returns 0 if the families of src and dst
 * differ, or if cap is short. */
size_t pgm_build_ip(uint8_t *out, size_t cap, const struct pgm_ip_params *p, const uint8_t *tpdu,
	size_t tpdu_len);

/* Human-readable one-line summary for debug logs and replay output, e.g.
 * "NAK 0a0b0c0d0e0f.1234 sqn 17 list 18,19 src 198.18.0.1 grp 239.192.0.1". */
size_t pgm_packet_format(const struct pgm_packet *pkt, char *buf, size_t len);

#endif /* PGM_WIRE_H */

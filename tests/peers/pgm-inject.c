/*
 * pgm-inject: sends crafted PGM packets, well-formed or deliberately broken, over IP or UDP, for
 * shell-driven tests. Built with the wire codec (dataplane/pgm_wire.h) and sent through the data
 * plane's raw socket (dataplane/rawsock.h), so the IP source can be any address.
 *
 *   pgm-inject --src A --dst D --type TYPE [options]
 *
 * A and D are IPv4 or IPv6 addresses, of one family; every NLA option takes either (an IPv6
 * datagram with NLAs of AFI 1 is allowed: PGM's NLAs are independent of the datagram's family).
 * Over IPv6, --ttl is the hop limit, --ra the RFC 2711 hop-by-hop option, --tos the traffic
 * class.
 *
 * TYPE: spm, odata, rdata, nak, nnak, ncf, poll, polr, spmr.
 *   --gsi HEX12          GSI (default 010203040506)
 *   --sport N --dport N  PGM ports as they go on the wire (default: data-source port 1234,
 *                        data-destination port 7500, swapped for NAK, NNAK, POLR, SPMR)
 *   --sqn N              the type's sequence number (default 1); --sqn-step N per packet (1)
 *   --trail N --lead N   SPM trail/lead, ODATA/RDATA trail (default 0, lead = sqn)
 *   --list A,B,...       OPT_NAK_LIST (NAK, NNAK, NCF)
 *   --nak-src S --nak-grp G  NLAs of NAK/NNAK/NCF (default: the data source is --src for NCF
 *                        and --dst for NAK/NNAK; the group is --dst if multicast, else
 *                        239.192.0.1, for IPv6 ff3e::8000:1)
 *   --path P             SPM_PATH / POLL_PATH (default --src)
 *   --poll-round N --poll-type N --poll-bo-ivl US --poll-rand N --poll-mask N
 *                        POLL_ROUND (0), POLL_S_TYPE (0 general, 1 DLR), POLL_BO_IVL
 *                        (100000), POLL_RAND (0), POLL_MASK (0)
 *   --polr-round N       POLR_ROUND (0)
 *   --payload TEXT | --payload-len N   ODATA/RDATA payload (default "pgm-inject")
 *   --nak-bo-ivl US[,SQN]   OPT_NAK_BO_IVL (SPM, NCF)
 *   --nbr-unreach        OPT_NBR_UNREACH (SPM, NCF; 15.3)
 *   --path-nla A         OPT_PATH_NLA (NCF with --nbr-unreach: the neighbour it names)
 *   --redirect A         OPT_REDIRECT (POLR: the DLR it announces, 9.5.3)
 *   --parity             OPT_PARITY header flag
 *   --opt-raw HEX        raw option bytes appended (e.g. an unknown option: 2a040200)
 *   --udp [--udp-port N] UDP encapsulation (default port 3056 downstream, 3055 upstream)
 *   --ttl N (default 16)  --tos N  --ra (Router Alert)  --if IF (egress)  --loop
 *   --frag-mtu N         IPv4 fragments of at most N bytes (28 and up; needs --if), made by the
 *                        data plane's fragmenter as the router makes its own (rawsock.h)
 *   --frag-order reverse|dup   with --frag-mtu: the fragments last first, or each twice
 *   --count N (default 1)  --interval-ms M (default 0)  -v (print each packet)
 * Malformed packets (the checksum is recomputed after each change unless said otherwise):
 *   --truncate N         cut N bytes off the end of the TPDU (IP and UDP lengths follow)
 *   --bad-checksum       a wrong PGM checksum;  --zero-checksum  no checksum (0)
 *   --tsdu-len N         a TSDU length field that lies
 *   --version N          PGM version bits (0..3);  --type-byte 0xNN  the whole type byte
 *   --afi N              the first NLA's AFI (SPM, POLL, NAK, NNAK, NCF)
 *   --opt-total N        OPT_LENGTH's total length field
 * The kernel fills the IP total length and checksum of raw datagrams, so those cannot lie.
 * Prints "sent N packets, B bytes, E errors"; exit status 0 when every packet was sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/wire/ipfrag.h"
#include "dataplane/wire/pgm_wire.h"
#include "dataplane/rawsock.h"

#define MAX_PACKET 9000

struct inject {
	struct pgm_nla src, dst, nak_src, nak_grp, path;
	bool have_nak_src, have_nak_grp, have_path;
	int type;
	uint8_t gsi[PGM_GSI_LEN];
	int sport, dport;
	uint32_t sqn, sqn_step, trail, lead;
	bool have_lead;
	uint32_t list[PGM_MAX_NAK_LIST];
	unsigned list_count;
	const char *payload;
	long payload_len;
	bool nak_bo_ivl;
	uint32_t nak_bo_ivl_us, nak_bo_ivl_sqn;
	bool parity;
	bool nbr_unreach;
	struct pgm_nla path_nla, redirect;
	bool have_path_nla, have_redirect;
	uint8_t opt_raw[256];
	size_t opt_raw_len;
	bool udp;
	int udp_port;
	int ttl, tos;
	long frag_mtu;	   /* 0: none */
	bool frag_reverse; /* the fragments last first */
	bool frag_dup;	   /* every fragment twice */
	bool ra, loop, verbose;
	const char *ifname;
	unsigned long count;
	long interval_ms;
	/* malformations */
	long truncate;
	bool bad_checksum, zero_checksum;
	long tsdu_len, version, type_byte, afi, opt_total;
	/* POLL and POLR fields (14.7) */
	uint16_t poll_round, poll_type, polr_round;
	uint32_t poll_bo_ivl, poll_rand, poll_mask;
};

static void usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "pgm-inject: %s\n", msg);
	fprintf(stderr,
		"usage: pgm-inject --src A --dst D --type TYPE [options] (see the source)\n");
	exit(2);
}

static unsigned long number(const char *s, unsigned long max, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *s == '\0' || *end != '\0' || v > max) {
		fprintf(stderr, "pgm-inject: bad %s \"%s\"\n", what, s);
		exit(2);
	}
	return v;
}

static void address(struct pgm_nla *nla, const char *s, const char *what)
{
	if (!pgm_nla_parse(nla, s)) {
		fprintf(stderr, "pgm-inject: bad IPv4 or IPv6 %s \"%s\"\n", what, s);
		exit(2);
	}
}

static bool nla_multicast(const struct pgm_nla *nla)
{
	if (nla->afi == PGM_AFI_IP6)
		return nla->addr[0] == 0xff;
	return nla->addr[0] >= 224 && nla->addr[0] <= 239;
}

static size_t hex_bytes(const char *s, uint8_t *out, size_t cap, const char *what)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > cap) {
		fprintf(stderr, "pgm-inject: bad %s \"%s\"\n", what, s);
		exit(2);
	}
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "pgm-inject: bad %s \"%s\"\n", what, s);
			exit(2);
		}
		out[i] = (uint8_t)v;
	}
	return n / 2;
}

static int parse_type(const char *s)
{
	static const struct {
		const char *name;
		int type;
	} types[] = {{"spm", PGM_SPM}, {"odata", PGM_ODATA}, {"rdata", PGM_RDATA}, {"nak", PGM_NAK},
		{"nnak", PGM_NNAK}, {"ncf", PGM_NCF}, {"poll", PGM_POLL}, {"polr", PGM_POLR},
		{"spmr", PGM_SPMR}};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(s, types[i].name) == 0)
			return types[i].type;
	usage("unknown --type");
	return -1;
}

static void parse_args(int argc, char **argv, struct inject *in)
{
	static const struct option opts[] = {
		{"src", required_argument, NULL, 1},
		{"dst", required_argument, NULL, 2},
		{"type", required_argument, NULL, 3},
		{"gsi", required_argument, NULL, 4},
		{"sport", required_argument, NULL, 5},
		{"dport", required_argument, NULL, 6},
		{"sqn", required_argument, NULL, 7},
		{"sqn-step", required_argument, NULL, 8},
		{"trail", required_argument, NULL, 9},
		{"lead", required_argument, NULL, 10},
		{"list", required_argument, NULL, 11},
		{"nak-src", required_argument, NULL, 12},
		{"nak-grp", required_argument, NULL, 13},
		{"path", required_argument, NULL, 14},
		{"payload", required_argument, NULL, 15},
		{"payload-len", required_argument, NULL, 16},
		{"nak-bo-ivl", required_argument, NULL, 17},
		{"parity", no_argument, NULL, 18},
		{"opt-raw", required_argument, NULL, 19},
		{"udp", no_argument, NULL, 20},
		{"udp-port", required_argument, NULL, 21},
		{"ttl", required_argument, NULL, 22},
		{"tos", required_argument, NULL, 23},
		{"ra", no_argument, NULL, 24},
		{"if", required_argument, NULL, 25},
		{"loop", no_argument, NULL, 26},
		{"count", required_argument, NULL, 27},
		{"interval-ms", required_argument, NULL, 28},
		{"truncate", required_argument, NULL, 29},
		{"bad-checksum", no_argument, NULL, 30},
		{"zero-checksum", no_argument, NULL, 31},
		{"tsdu-len", required_argument, NULL, 32},
		{"version", required_argument, NULL, 33},
		{"type-byte", required_argument, NULL, 34},
		{"afi", required_argument, NULL, 35},
		{"opt-total", required_argument, NULL, 36},
		{"poll-round", required_argument, NULL, 37},
		{"poll-type", required_argument, NULL, 38},
		{"poll-bo-ivl", required_argument, NULL, 39},
		{"poll-rand", required_argument, NULL, 40},
		{"poll-mask", required_argument, NULL, 41},
		{"polr-round", required_argument, NULL, 42},
		{"nbr-unreach", no_argument, NULL, 43},
		{"path-nla", required_argument, NULL, 44},
		{"redirect", required_argument, NULL, 45},
		{"frag-mtu", required_argument, NULL, 46},
		{"frag-order", required_argument, NULL, 47},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool have_src = false, have_dst = false;
	int c;

	memset(in, 0, sizeof(*in));
	in->type = -1;
	memcpy(in->gsi, "\x01\x02\x03\x04\x05\x06", PGM_GSI_LEN);
	in->sport = in->dport = in->udp_port = -1;
	in->sqn = 1;
	in->sqn_step = 1;
	in->payload = "pgm-inject";
	in->payload_len = -1;
	in->ttl = 16;
	in->count = 1;
	in->tsdu_len = in->version = in->type_byte = in->afi = in->opt_total = -1;
	in->poll_bo_ivl = 100000;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			address(&in->src, optarg, "--src");
			have_src = true;
			break;
		case 2:
			address(&in->dst, optarg, "--dst");
			have_dst = true;
			break;
		case 3:
			in->type = parse_type(optarg);
			break;
		case 4:
			if (hex_bytes(optarg, in->gsi, PGM_GSI_LEN, "--gsi") != PGM_GSI_LEN)
				usage("--gsi needs 12 hex digits");
			break;
		case 5:
			in->sport = (int)number(optarg, 0xffff, "--sport");
			break;
		case 6:
			in->dport = (int)number(optarg, 0xffff, "--dport");
			break;
		case 7:
			in->sqn = (uint32_t)number(optarg, UINT32_MAX, "--sqn");
			break;
		case 8:
			in->sqn_step = (uint32_t)number(optarg, UINT32_MAX, "--sqn-step");
			break;
		case 9:
			in->trail = (uint32_t)number(optarg, UINT32_MAX, "--trail");
			break;
		case 10:
			in->lead = (uint32_t)number(optarg, UINT32_MAX, "--lead");
			in->have_lead = true;
			break;
		case 11:
			for (char *t = strtok(optarg, ","); t != NULL; t = strtok(NULL, ",")) {
				if (in->list_count == PGM_MAX_NAK_LIST)
					usage("--list holds at most 62 entries");
				in->list[in->list_count++] =
					(uint32_t)number(t, UINT32_MAX, "--list");
			}
			break;
		case 12:
			address(&in->nak_src, optarg, "--nak-src");
			in->have_nak_src = true;
			break;
		case 13:
			address(&in->nak_grp, optarg, "--nak-grp");
			in->have_nak_grp = true;
			break;
		case 14:
			address(&in->path, optarg, "--path");
			in->have_path = true;
			break;
		case 15:
			in->payload = optarg;
			break;
		case 16:
			in->payload_len = (long)number(optarg, 8000, "--payload-len");
			break;
		case 17: {
			char *comma = strchr(optarg, ',');

			if (comma)
				*comma = '\0';
			in->nak_bo_ivl = true;
			in->nak_bo_ivl_us = (uint32_t)number(optarg, UINT32_MAX, "--nak-bo-ivl");
			if (comma)
				in->nak_bo_ivl_sqn =
					(uint32_t)number(comma + 1, UINT32_MAX, "--nak-bo-ivl");
			break;
		}
		case 18:
			in->parity = true;
			break;
		case 19:
			in->opt_raw_len =
				hex_bytes(optarg, in->opt_raw, sizeof(in->opt_raw), "--opt-raw");
			break;
		case 20:
			in->udp = true;
			break;
		case 21:
			in->udp_port = (int)number(optarg, 0xffff, "--udp-port");
			break;
		case 22:
			in->ttl = (int)number(optarg, 255, "--ttl");
			break;
		case 23:
			in->tos = (int)number(optarg, 255, "--tos");
			break;
		case 24:
			in->ra = true;
			break;
		case 25:
			in->ifname = optarg;
			break;
		case 26:
			in->loop = true;
			break;
		case 46:
			in->frag_mtu = (long)number(optarg, 0xffff, "--frag-mtu");
			break;
		case 47:
			if (strcmp(optarg, "reverse") == 0)
				in->frag_reverse = true;
			else if (strcmp(optarg, "dup") == 0)
				in->frag_dup = true;
			else
				usage("--frag-order: reverse or dup");
			break;
		case 27:
			in->count = number(optarg, 100000000, "--count");
			break;
		case 28:
			in->interval_ms = (long)number(optarg, 3600000, "--interval-ms");
			break;
		case 29:
			in->truncate = (long)number(optarg, MAX_PACKET, "--truncate");
			break;
		case 30:
			in->bad_checksum = true;
			break;
		case 31:
			in->zero_checksum = true;
			break;
		case 32:
			in->tsdu_len = (long)number(optarg, 0xffff, "--tsdu-len");
			break;
		case 33:
			in->version = (long)number(optarg, 3, "--version");
			break;
		case 34:
			in->type_byte = (long)number(optarg, 0xff, "--type-byte");
			break;
		case 35:
			in->afi = (long)number(optarg, 0xffff, "--afi");
			break;
		case 36:
			in->opt_total = (long)number(optarg, 0xffff, "--opt-total");
			break;
		case 37:
			in->poll_round = (uint16_t)number(optarg, 0xffff, "--poll-round");
			break;
		case 38:
			in->poll_type = (uint16_t)number(optarg, 0xffff, "--poll-type");
			break;
		case 39:
			in->poll_bo_ivl = (uint32_t)number(optarg, UINT32_MAX, "--poll-bo-ivl");
			break;
		case 40:
			in->poll_rand = (uint32_t)number(optarg, UINT32_MAX, "--poll-rand");
			break;
		case 41:
			in->poll_mask = (uint32_t)number(optarg, UINT32_MAX, "--poll-mask");
			break;
		case 42:
			in->polr_round = (uint16_t)number(optarg, 0xffff, "--polr-round");
			break;
		case 43:
			in->nbr_unreach = true;
			break;
		case 44:
			address(&in->path_nla, optarg, "--path-nla");
			in->have_path_nla = true;
			break;
		case 45:
			address(&in->redirect, optarg, "--redirect");
			in->have_redirect = true;
			break;
		case 'v':
			in->verbose = true;
			break;
		default:
			usage(NULL);
		}
	}
	if (!have_src || !have_dst || in->type < 0)
		usage("--src, --dst and --type are required");
	if (in->src.afi != in->dst.afi)
		usage("--src and --dst must be of one family");
	if (optind < argc)
		usage("unexpected argument");
}

/* Offset of the first NLA's AFI in the TPDU (8.1, 8.3, 14.7.1), 0 if the type has none. */
static size_t afi_offset(int type)
{
	switch (type) {
	case PGM_SPM:
		return 28;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		return 20;
	case PGM_POLL:
		return 24;
	default:
		return 0;
	}
}

static size_t build_tpdu(const struct inject *in, uint32_t sqn, uint8_t *out, size_t cap)
{
	bool upstream = pgm_type_is_upstream((unsigned)in->type);
	struct pgm_header_params hdr;
	struct pgm_build_options o;
	uint8_t payload[8192];
	const void *tsdu = in->payload;
	size_t tsdu_len = strlen(in->payload);
	struct pgm_nla mcast_default;
	bool dst_mcast = nla_multicast(&in->dst);

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.gsi, in->gsi, PGM_GSI_LEN);
	hdr.sport = (uint16_t)(in->sport >= 0 ? in->sport : upstream ? 7500 : 1234);
	hdr.dport = (uint16_t)(in->dport >= 0 ? in->dport : upstream ? 1234 : 7500);
	memset(&o, 0, sizeof(o));
	o.nak_list = in->list_count ? in->list : NULL;
	o.nak_list_count = in->list_count;
	o.nak_bo_ivl = in->nak_bo_ivl;
	o.nak_bo_ivl_us = in->nak_bo_ivl_us;
	o.nak_bo_ivl_sqn = in->nak_bo_ivl_sqn;
	o.raw = in->opt_raw_len ? in->opt_raw : NULL;
	o.raw_len = in->opt_raw_len;
	o.extra_header_flags = in->parity ? PGM_OPT_PARITY : 0;
	o.nbr_unreach = in->nbr_unreach;
	o.path_nla = in->have_path_nla ? &in->path_nla : NULL;
	o.redirect = in->have_redirect ? &in->redirect : NULL;
	if (in->payload_len >= 0) {
		for (long i = 0; i < in->payload_len; i++)
			payload[i] = (uint8_t)('a' + i % 26);
		tsdu = payload;
		tsdu_len = (size_t)in->payload_len;
	}
	pgm_nla_parse(&mcast_default, in->dst.afi == PGM_AFI_IP6 ? "ff3e::8000:1" : "239.192.0.1");
	const struct pgm_nla *path = in->have_path ? &in->path : &in->src;
	const struct pgm_nla *nak_src = in->have_nak_src      ? &in->nak_src
					: in->type == PGM_NCF ? &in->src
							      : &in->dst;
	const struct pgm_nla *nak_grp = in->have_nak_grp ? &in->nak_grp
					: dst_mcast	 ? &in->dst
							 : &mcast_default;

	switch (in->type) {
	case PGM_SPM:
		return pgm_build_spm(
			out, cap, &hdr, sqn, in->trail, in->have_lead ? in->lead : sqn, path, &o);
	case PGM_ODATA:
	case PGM_RDATA:
		return pgm_build_data(
			out, cap, (unsigned)in->type, &hdr, sqn, in->trail, tsdu, tsdu_len, &o);
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		return pgm_build_nak(out, cap, (unsigned)in->type, &hdr, sqn, nak_src, nak_grp, &o);
	case PGM_POLL:
		return pgm_build_poll(out, cap, &hdr, sqn, in->poll_round, in->poll_type, path,
			in->poll_bo_ivl, in->poll_rand, in->poll_mask, &o);
	case PGM_POLR:
		return pgm_build_polr(out, cap, &hdr, sqn, in->polr_round, &o);
	case PGM_SPMR:
		return pgm_build_spmr(out, cap, &hdr, &o);
	default:
		return 0;
	}
}

/* Applies the requested malformations; returns the final TPDU length. */
static size_t malform(const struct inject *in, uint8_t *tpdu, size_t len)
{
	if (in->tsdu_len >= 0) {
		tpdu[14] = (uint8_t)(in->tsdu_len >> 8);
		tpdu[15] = (uint8_t)in->tsdu_len;
	}
	if (in->version >= 0)
		tpdu[4] = (uint8_t)((tpdu[4] & 0x3f) | (in->version << 6));
	if (in->type_byte >= 0)
		tpdu[4] = (uint8_t)in->type_byte;
	if (in->afi >= 0 && afi_offset(in->type) && afi_offset(in->type) + 2 <= len) {
		tpdu[afi_offset(in->type)] = (uint8_t)(in->afi >> 8);
		tpdu[afi_offset(in->type) + 1] = (uint8_t)in->afi;
	}
	if (in->opt_total >= 0) {
		struct pgm_packet pkt;

		if (pgm_parse(tpdu, len, PGM_PARSE_NO_CHECKSUM, &pkt) == PGM_ERR_OK &&
			pkt.opt_offset != 0) {
			tpdu[pkt.opt_offset + 2] = (uint8_t)(in->opt_total >> 8);
			tpdu[pkt.opt_offset + 3] = (uint8_t)in->opt_total;
		} else {
			fprintf(stderr, "pgm-inject: --opt-total needs a packet with options\n");
			exit(2);
		}
	}
	if (in->truncate > 0)
		len = (size_t)in->truncate < len ? len - (size_t)in->truncate : 0;
	if (in->zero_checksum) {
		tpdu[6] = tpdu[7] = 0;
	} else if (len >= PGM_HEADER_LEN) {
		pgm_checksum_set(tpdu, len);
		if (in->bad_checksum) {
			/* a different, non-zero value: flip bits of the valid one */
			tpdu[6] ^= 0x5a;
			tpdu[7] ^= 0xa5;
		}
	}
	return len;
}

/* --frag-order: the datagram's fragments (ipfrag.h) sent one by one, last first or each twice. */
static int send_fragments(
	struct rawsock *rs, int ifindex, const struct inject *in, const uint8_t *d, size_t len)
{
	static uint8_t frag[MAX_PACKET + 128];
	size_t mtu = (size_t)in->frag_mtu;
	unsigned count;
	int rc = 0;

	if (ipfrag_plan(d, len, mtu, &count) != IPFRAG_SPLIT) {
		fprintf(stderr, "pgm-inject: --frag-order: the datagram cannot be split for %zu\n", mtu);
		return -1;
	}
	for (unsigned k = 0; k < count; k++) {
		unsigned i = in->frag_reverse ? count - 1 - k : k;
		size_t n = ipfrag_build(d, len, mtu, i, (uint16_t)(d[4] << 8 | d[5]), frag);

		for (int copy = 0; copy < (in->frag_dup ? 2 : 1); copy++)
			if (rawsock_send(rs, ifindex, frag, n) < 0) {
				fprintf(stderr, "pgm-inject: send: %s\n", strerror(errno));
				rc = -1;
			}
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct rawsock_config rcfg;
	struct rawsock_stats st;
	struct pgm_ip_params ipp;
	struct inject in;
	struct rawsock *rs;
	static uint8_t tpdu[MAX_PACKET], datagram[MAX_PACKET + 128];
	unsigned ifindex = 0;
	unsigned long errors = 0;
	char err[256];

	parse_args(argc, argv, &in);
	if (in.ifname && (ifindex = if_nametoindex(in.ifname)) == 0) {
		fprintf(stderr, "pgm-inject: no interface %s\n", in.ifname);
		return 2;
	}
	rawsock_config_default(&rcfg);
	rcfg.multicast_loop = in.loop;
	rs = rawsock_open(&rcfg, err, sizeof(err));
	if (rs == NULL) {
		fprintf(stderr, "pgm-inject: %s\n", err);
		return 1;
	}
	if (in.frag_mtu != 0 && (ifindex == 0 || rawsock_set_mtu(rs, (int)ifindex,
							 (uint32_t)in.frag_mtu) < 0)) {
		fprintf(stderr, "pgm-inject: --frag-mtu needs --if\n");
		return 2;
	}
	memset(&ipp, 0, sizeof(ipp));
	ipp.src = in.src;
	ipp.dst = in.dst;
	ipp.ttl = (uint8_t)in.ttl;
	ipp.tos = (uint8_t)in.tos;
	ipp.router_alert = in.ra;
	ipp.udp = in.udp;
	if (in.udp) {
		uint16_t port = (uint16_t)(in.udp_port >= 0 ? in.udp_port
					   : pgm_type_is_upstream((unsigned)in.type)
						   ? PGM_DEFAULT_UDP_UCAST_PORT
						   : PGM_DEFAULT_UDP_MCAST_PORT);

		ipp.udp_sport = ipp.udp_dport = port;
	}
	for (unsigned long i = 0; i < in.count; i++) {
		uint32_t sqn = in.sqn + (uint32_t)i * in.sqn_step;
		size_t len = build_tpdu(&in, sqn, tpdu, sizeof(tpdu)), dlen;

		if (len == 0) {
			fprintf(stderr, "pgm-inject: the codec refused these parameters\n");
			return 2;
		}
		len = malform(&in, tpdu, len);
		/* an id of its own per run (the process id): the fragments of two runs from one
		   source never meet in a reassembly queue */
		ipp.id = (uint16_t)((unsigned long)getpid() * 64 + i);
		if (ipp.id == 0)
			ipp.id = 1;
		dlen = pgm_build_ip(datagram, sizeof(datagram), &ipp, tpdu, len);
		if (dlen == 0) {
			fprintf(stderr, "pgm-inject: cannot build the IP datagram\n");
			return 2;
		}
		if (in.verbose) {
			struct pgm_packet pkt;
			char line[512];

			if (pgm_parse(tpdu, len, PGM_PARSE_NO_CHECKSUM, &pkt) == PGM_ERR_OK)
				pgm_packet_format(&pkt, line, sizeof(line));
			else
				snprintf(line, sizeof(line), "malformed %zu-byte TPDU", len);
			printf("send %zu bytes: %s\n", dlen, line);
		}
		if ((in.frag_reverse || in.frag_dup) && in.frag_mtu != 0) {
			if (send_fragments(rs, (int)ifindex, &in, datagram, dlen) < 0)
				errors++;
		} else if (rawsock_send(rs, (int)ifindex, datagram, dlen) < 0) {
			errors++;
			fprintf(stderr, "pgm-inject: send: %s\n", strerror(errno));
		}
		if (in.interval_ms > 0 && i + 1 < in.count) {
			struct timespec ts = {
				in.interval_ms / 1000, (in.interval_ms % 1000) * 1000000};

			nanosleep(&ts, NULL);
		}
	}
	rawsock_get_stats(rs, &st);
	printf("sent %llu packets, %llu bytes, %lu errors\n", (unsigned long long)st.packets,
		(unsigned long long)st.bytes, errors);
	rawsock_close(rs);
	return errors ? 1 : 0;
}

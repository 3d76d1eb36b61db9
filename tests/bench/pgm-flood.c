/*
 * pgm-flood: a PGM packet generator for the benchmarks. Builds valid PGM packets with the wire
 * codec's builders (checksums included) and sends them as whole IP datagrams through one raw
 * socket with sendmmsg(), as fast as possible or at a paced rate, for a count or a duration.
 * IPv4 or IPv6, by the addresses given (all of one family; IPv6 datagrams come whole from the
 * codec's pgm_build_ip, as pgm-inject sends them; -A is then the hop-by-hop Router Alert).
 *
 *   pgm-flood -s SRC -d DST [options]
 *
 * Packet types and their addressing (RFC 3208 section 8):
 *   odata, rdata, spm   downstream: IP SRC -> DST (the group), TSI = (GSI, --sport); SPM path NLA
 *                       and trailing edge as a source sends them
 *   nak                 upstream: IP SRC (a receiver) -> DST (the SPM's path: router or source);
 *                       NLAs --nla-src (the data source) and --nla-grp (the group)
 *   ncf                 downstream: like a source's NCF, IP SRC -> DST (the group)
 * The mix (-m odata:1000,spm:1) interleaves types by weight, deterministically. Each packet of a
 * type takes the next TSI (round robin over --tsis sessions); each TSI counts its own sequence
 * numbers per type from --sqn-start, NAKs and NCFs advancing by 1 + --nak-list (a list covers the
 * header SQN and the next --nak-list SQNs). --sqn-span wraps the SQNs, to repeat them. --srcs N
 * sends every packet N times in a row from N consecutive source addresses (a NAK storm of N
 * receivers, each asking for the same SQNs).
 * --random SEED draws each packet's TSI uniformly from the --tsis sessions and, for NAKs and
 * NCFs, its SQN uniformly from the --sqn-span SQNs after --sqn-start (whole lists: a multiple of
 * 1 + --nak-list from it), with a generator of its own seeded by SEED: probes that touch the
 * whole of a table rather than the same few entries. SPMs then number from --spm-sqn by the
 * packet's place in the flood (rising for every session, with gaps).
 *
 * Prints one key=value line at the end (sent packets and bytes per type, send errors, seconds,
 * CPU seconds of this process).
 * Exit: 0 done, 1 send failure, 64 usage, 70 setup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/wire/pgm_wire.h"
#include "tests/lib/tool.h"

#define FLOOD_MAX_BATCH	 256
#define FLOOD_SLOT_BYTES 2048 /* one datagram: up to the MTU and a little */
#define FLOOD_MAX_TSDU	 1400
#define EXIT_USAGE	 64
#define EXIT_SETUP	 70

enum flood_kind { K_ODATA, K_RDATA, K_SPM, K_NAK, K_NCF, K_COUNT };
static const char *const kind_names[K_COUNT] = {"odata", "rdata", "spm", "nak", "ncf"};

struct flood_options {
	struct pgm_nla src, dst, nla_src, nla_grp;
	const char *ifname;
	unsigned weight[K_COUNT];
	uint32_t tsdu_len;
	double rate; /* packets per second; 0 = unpaced */
	uint64_t count;
	double seconds;
	uint32_t tsis;
	uint16_t gsi_base;
	uint16_t sport, dport;
	uint32_t sqn_start;
	uint32_t sqn_span; /* 0 = no wrap */
	unsigned nak_list;
	uint32_t spm_sqn; /* SPM_SQN of each TSI's first SPM */
	uint32_t spm_trail;
	uint32_t spm_lead; /* 0 = the SQN of the data sent so far on that TSI */
	uint8_t ttl;
	bool router_alert;
	unsigned batch;
	uint32_t srcs; /* each packet sent this many times, from consecutive source addresses */
	bool random; /* --random: TSI (and NAK/NCF SQN) drawn at random */
	uint64_t random_seed;
};

struct flood_state {
	uint64_t sent[K_COUNT];
	uint64_t bytes[K_COUNT]; /* IP datagram bytes */
	uint64_t per_kind_seq[K_COUNT];
	uint64_t send_errors;
	int last_errno;
	/* smooth weighted round robin over the mix */
	int64_t current[K_COUNT];
	unsigned total_weight;
	uint16_t ip_id;
	uint64_t rng; /* xorshift64* state (--random) */
	/* --random with --srcs: the draw of a packet's first copy, kept for its other sources */
	uint32_t drawn_tsi[K_COUNT];
	uint64_t drawn_per_tsi[K_COUNT];
};

/* xorshift64*: fast, good enough to spread probes evenly over a table. */
static uint64_t flood_rand(struct flood_state *st)
{
	st->rng ^= st->rng >> 12;
	st->rng ^= st->rng << 25;
	st->rng ^= st->rng >> 27;
	return st->rng * 0x2545F4914F6CDD1DULL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pgm-flood -s SRC -d DST [options]\n"
		"  -s, --src ADDR        IP source address (this host's), IPv4 or IPv6\n"
		"  -d, --dst ADDR        IP destination: the group, or a router/source for NAKs\n"
		"  -i, --interface IF    egress interface for multicast (default: by route)\n"
		"  -m, --mix SPEC        type weights, e.g. odata:1000,spm:1 (types odata rdata\n"
		"                        spm nak ncf; default odata:1)\n"
		"  -z, --size N          ODATA/RDATA TSDU bytes, 0..1400 (default 32)\n"
		"  -r, --rate PPS        packets per second (default 0: as fast as possible)\n"
		"  -n, --count N         packets to send (default 0: no limit)\n"
		"  -T, --seconds S       stop after S seconds (default 0: no limit)\n"
		"      --tsis N          distinct sessions, round robin (default 1)\n"
		"      --gsi-base N      16-bit value in every GSI, to tell runs apart (default "
		"1)\n"
		"      --sport N         data-source port of every TSI (default 4000)\n"
		"      --dport N         data-destination port (default 7500)\n"
		"      --sqn-start N     first sequence number (default 0)\n"
		"      --sqn-span N      wrap sequence numbers after N (default 0: never)\n"
		"      --random SEED     TSI (NAK/NCF: and SQN within --sqn-span) drawn at random\n"
		"      --nak-list N      NAK/NCF: OPT_NAK_LIST entries after the header SQN, "
		"0..62\n"
		"      --nla-src ADDR    NAK/NCF: the data source (default: -s)\n"
		"      --nla-grp ADDR    NAK/NCF: the group (default: -d)\n"
		"      --spm-sqn N       SPM_SQN of each session's first SPM (default 0)\n"
		"      --spm-trail N     SPM_TRAIL (default --sqn-start)\n"
		"      --srcs N          every packet N times in a row, from N consecutive\n"
		"                        source addresses from -s on (a NAK storm; default 1)\n"
		"      --spm-lead N      SPM_LEAD (default 0: the last data SQN sent on the TSI)\n"
		"      --ttl N           IP TTL (default 16)\n"
		"  -A, --router-alert    IP Router Alert option (IPv6: hop-by-hop header)\n"
		"  -b, --batch N         datagrams per sendmmsg (default 64, at most 256)\n");
}

static bool parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (text == NULL || *text == '\0' || *text == '-')
		return false;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* An IPv4 or IPv6 address. */
static bool parse_ip(const char *text, struct pgm_nla *nla)
{
	return pgm_nla_parse(nla, text);
}

static bool parse_mix(const char *text, unsigned weight[K_COUNT])
{
	char buf[256], *save = NULL, *item;

	if (strlen(text) >= sizeof(buf))
		return false;
	strcpy(buf, text);
	memset(weight, 0, sizeof(unsigned) * K_COUNT);
	for (item = strtok_r(buf, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		uint64_t w = 1;
		int k;

		if (colon != NULL) {
			*colon = '\0';
			if (!parse_u64(colon + 1, 0, 1000000, &w))
				return false;
		}
		for (k = 0; k < K_COUNT; k++)
			if (strcmp(item, kind_names[k]) == 0)
				break;
		if (k == K_COUNT)
			return false;
		weight[k] = (unsigned)w;
	}
	for (int k = 0; k < K_COUNT; k++)
		if (weight[k] > 0)
			return true;
	return false;
}

static int parse_options(int argc, char **argv, struct flood_options *o)
{
	enum {
		O_TSIS = 256,
		O_GSI_BASE,
		O_SPORT,
		O_DPORT,
		O_SQN_START,
		O_SQN_SPAN,
		O_NAK_LIST,
		O_NLA_SRC,
		O_NLA_GRP,
		O_SPM_SQN,
		O_SPM_TRAIL,
		O_SPM_LEAD,
		O_TTL,
		O_SRCS,
		O_RANDOM,
	};
	static const struct option longopts[] = {
		{"src", required_argument, NULL, 's'},
		{"dst", required_argument, NULL, 'd'},
		{"interface", required_argument, NULL, 'i'},
		{"mix", required_argument, NULL, 'm'},
		{"size", required_argument, NULL, 'z'},
		{"rate", required_argument, NULL, 'r'},
		{"count", required_argument, NULL, 'n'},
		{"seconds", required_argument, NULL, 'T'},
		{"tsis", required_argument, NULL, O_TSIS},
		{"gsi-base", required_argument, NULL, O_GSI_BASE},
		{"sport", required_argument, NULL, O_SPORT},
		{"dport", required_argument, NULL, O_DPORT},
		{"sqn-start", required_argument, NULL, O_SQN_START},
		{"sqn-span", required_argument, NULL, O_SQN_SPAN},
		{"nak-list", required_argument, NULL, O_NAK_LIST},
		{"nla-src", required_argument, NULL, O_NLA_SRC},
		{"nla-grp", required_argument, NULL, O_NLA_GRP},
		{"spm-sqn", required_argument, NULL, O_SPM_SQN},
		{"spm-trail", required_argument, NULL, O_SPM_TRAIL},
		{"spm-lead", required_argument, NULL, O_SPM_LEAD},
		{"ttl", required_argument, NULL, O_TTL},
		{"srcs", required_argument, NULL, O_SRCS},
		{"random", required_argument, NULL, O_RANDOM},
		{"router-alert", no_argument, NULL, 'A'},
		{"batch", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool have_src = false, have_dst = false, have_trail = false;
	uint64_t v = 0;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->weight[K_ODATA] = 1;
	o->tsdu_len = 32;
	o->tsis = 1;
	o->gsi_base = 1;
	o->sport = 4000;
	o->dport = 7500;
	o->ttl = 16;
	o->batch = 64;
	o->srcs = 1;
	while ((c = getopt_long(argc, argv, "s:d:i:m:z:r:n:T:Ab:h", longopts, NULL)) != -1) {
		bool ok = true;

		switch (c) {
		case 's':
			ok = have_src = parse_ip(optarg, &o->src);
			break;
		case 'd':
			ok = have_dst = parse_ip(optarg, &o->dst);
			break;
		case 'i':
			o->ifname = optarg;
			break;
		case 'm':
			ok = parse_mix(optarg, o->weight);
			break;
		case 'z':
			ok = parse_u64(optarg, 0, FLOOD_MAX_TSDU, &v);
			o->tsdu_len = (uint32_t)v;
			break;
		case 'r':
			errno = 0;
			o->rate = strtod(optarg, &end);
			ok = errno == 0 && *end == '\0' && o->rate >= 0 && o->rate <= 1e8;
			break;
		case 'n':
			ok = parse_u64(optarg, 0, UINT64_MAX, &o->count);
			break;
		case 'T':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			ok = errno == 0 && *end == '\0' && o->seconds >= 0 && o->seconds <= 86400;
			break;
		case O_TSIS:
			ok = parse_u64(optarg, 1, 1u << 24, &v);
			o->tsis = (uint32_t)v;
			break;
		case O_GSI_BASE:
			ok = parse_u64(optarg, 0, 0xffff, &v);
			o->gsi_base = (uint16_t)v;
			break;
		case O_SPORT:
			ok = parse_u64(optarg, 1, 0xffff, &v);
			o->sport = (uint16_t)v;
			break;
		case O_DPORT:
			ok = parse_u64(optarg, 1, 0xffff, &v);
			o->dport = (uint16_t)v;
			break;
		case O_SQN_START:
			ok = parse_u64(optarg, 0, UINT32_MAX, &v);
			o->sqn_start = (uint32_t)v;
			break;
		case O_SQN_SPAN:
			ok = parse_u64(optarg, 0, UINT32_MAX, &v);
			o->sqn_span = (uint32_t)v;
			break;
		case O_NAK_LIST:
			ok = parse_u64(optarg, 0, PGM_MAX_NAK_LIST, &v);
			o->nak_list = (unsigned)v;
			break;
		case O_NLA_SRC:
			ok = parse_ip(optarg, &o->nla_src);
			break;
		case O_NLA_GRP:
			ok = parse_ip(optarg, &o->nla_grp);
			break;
		case O_SPM_SQN:
			ok = parse_u64(optarg, 0, UINT32_MAX, &v);
			o->spm_sqn = (uint32_t)v;
			break;
		case O_SPM_TRAIL:
			ok = have_trail = parse_u64(optarg, 0, UINT32_MAX, &v);
			o->spm_trail = (uint32_t)v;
			break;
		case O_SPM_LEAD:
			ok = parse_u64(optarg, 0, UINT32_MAX, &v);
			o->spm_lead = (uint32_t)v;
			break;
		case O_TTL:
			ok = parse_u64(optarg, 1, 255, &v);
			o->ttl = (uint8_t)v;
			break;
		case O_SRCS:
			ok = parse_u64(optarg, 1, 1u << 16, &v);
			o->srcs = (uint32_t)v;
			break;
		case O_RANDOM:
			ok = parse_u64(optarg, 0, UINT64_MAX, &o->random_seed);
			o->random = true;
			break;
		case 'A':
			o->router_alert = true;
			break;
		case 'b':
			ok = parse_u64(optarg, 1, FLOOD_MAX_BATCH, &v);
			o->batch = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
		if (!ok) {
			fprintf(stderr, "pgm-flood: invalid value for -%c: %s\n", c < 256 ? c : '-',
				optarg);
			return -1;
		}
	}
	if (optind != argc || !have_src || !have_dst) {
		usage(stderr);
		return -1;
	}
	if (o->src.afi != o->dst.afi) {
		fprintf(stderr, "pgm-flood: -s and -d must be of one family\n");
		return -1;
	}
	if (o->nla_src.afi == 0)
		o->nla_src = o->src;
	if (o->nla_grp.afi == 0)
		o->nla_grp = o->dst;
	if (!have_trail)
		o->spm_trail = o->sqn_start;
	return 0;
}

/* The next type of the mix: smooth weighted round robin (nginx's), deterministic and even. */
static enum flood_kind next_kind(const struct flood_options *o, struct flood_state *st)
{
	int best = -1;

	for (int k = 0; k < K_COUNT; k++) {
		if (o->weight[k] == 0)
			continue;
		st->current[k] += o->weight[k];
		if (best < 0 || st->current[k] > st->current[best])
			best = k;
	}
	st->current[best] -= st->total_weight;
	return (enum flood_kind)best;
}

static uint32_t sqn_at(const struct flood_options *o, uint64_t per_tsi_index, unsigned stride)
{
	uint64_t offset = per_tsi_index * stride;

	if (o->sqn_span != 0)
		offset %= o->sqn_span;
	return (uint32_t)(o->sqn_start + offset);
}

/* Builds the next packet of the mix into slot; returns its IP length (0 on a builder error). */
static size_t build_next(const struct flood_options *o, struct flood_state *st, uint8_t *slot,
	size_t cap, const uint8_t *tsdu, enum flood_kind *kind_out)
{
	static uint32_t list[PGM_MAX_NAK_LIST];
	enum flood_kind kind = next_kind(o, st);
	uint64_t nth = st->per_kind_seq[kind]++;
	uint64_t seq = nth / o->srcs; /* --srcs: the same packet from each source in turn */
	uint32_t src_index = (uint32_t)(nth % o->srcs);
	uint32_t src4;
	uint32_t tsi_index = (uint32_t)(seq % o->tsis);
	uint64_t per_tsi = seq / o->tsis;
	uint64_t spm_index = per_tsi; /* SPM_SQN - --spm-sqn */

	if (o->random) {
		/* One draw per packet: with --srcs its copies from the other sources repeat it. */
		if (src_index == 0) {
			st->drawn_tsi[kind] = (uint32_t)(flood_rand(st) % o->tsis);
			if (kind == K_NAK || kind == K_NCF) {
				uint64_t lists = o->sqn_span / (1 + o->nak_list);

				st->drawn_per_tsi[kind] = lists > 0 ? flood_rand(st) % lists : 0;
			}
		}
		tsi_index = st->drawn_tsi[kind];
		spm_index = seq;
		if (kind == K_NAK || kind == K_NCF)
			per_tsi = st->drawn_per_tsi[kind];
	}
	bool v6 = o->src.afi == PGM_AFI_IP6;
	size_t ip_header = v6 ? 40 + (o->router_alert ? 8 : 0) : 20 + (o->router_alert ? 4 : 0);
	uint8_t *tpdu = slot + ip_header;
	size_t tpdu_cap = cap - ip_header, tpdu_len = 0, len;
	struct pgm_build_options opts;
	struct pgm_header_params hdr;
	struct pgm_ip_params ip;
	struct pgm_tsi tsi;
	uint32_t sqn;

	memset(&tsi, 0, sizeof(tsi));
	tsi.gsi[0] = 'P';
	tsi.gsi[1] = (uint8_t)(o->gsi_base >> 8);
	tsi.gsi[2] = (uint8_t)o->gsi_base;
	tsi.gsi[3] = (uint8_t)(tsi_index >> 16);
	tsi.gsi[4] = (uint8_t)(tsi_index >> 8);
	tsi.gsi[5] = (uint8_t)tsi_index;
	tsi.sport = o->sport;
	memcpy(hdr.gsi, tsi.gsi, PGM_GSI_LEN);
	hdr.sport = o->sport;
	hdr.dport = o->dport;
	memset(&opts, 0, sizeof(opts));

	switch (kind) {
	case K_ODATA:
	case K_RDATA:
		sqn = sqn_at(o, per_tsi, 1);
		tpdu_len = pgm_build_data(tpdu, tpdu_cap, kind == K_ODATA ? PGM_ODATA : PGM_RDATA,
			&hdr, sqn, o->sqn_start, tsdu, o->tsdu_len, NULL);
		break;
	case K_SPM: {
		uint64_t data_sent = st->per_kind_seq[K_ODATA] / o->srcs / o->tsis;
		uint32_t lead = o->spm_lead;

		if (lead == 0)
			lead = data_sent > 0 ? sqn_at(o, data_sent - 1, 1) : o->sqn_start;
		tpdu_len = pgm_build_spm(tpdu, tpdu_cap, &hdr, o->spm_sqn + (uint32_t)spm_index,
			o->spm_trail, lead, &o->src, NULL);
		break;
	}
	case K_NAK:
	case K_NCF:
		sqn = sqn_at(o, per_tsi, 1 + o->nak_list);
		for (unsigned i = 0; i < o->nak_list; i++)
			list[i] = sqn + 1 + i;
		opts.nak_list = list;
		opts.nak_list_count = o->nak_list;
		if (kind == K_NAK)
			tpdu_len = pgm_build_nak_for_tsi(tpdu, tpdu_cap, PGM_NAK, &tsi, o->dport,
				sqn, &o->nla_src, &o->nla_grp, &opts);
		else
			tpdu_len = pgm_build_ncf_for_tsi(tpdu, tpdu_cap, &tsi, o->dport, sqn,
				&o->nla_src, &o->nla_grp, &opts);
		break;
	default:
		return 0;
	}
	if (tpdu_len == 0)
		return 0;
	memset(&ip, 0, sizeof(ip));
	ip.src = o->src;
	/* --srcs: the address's last 32 bits count up (all of IPv4's) */
	memcpy(&src4, ip.src.addr + (v6 ? 12 : 0), sizeof(src4));
	src4 = htonl(ntohl(src4) + src_index);
	memcpy(ip.src.addr + (v6 ? 12 : 0), &src4, sizeof(src4));
	ip.dst = o->dst;
	ip.ttl = o->ttl;
	ip.id = st->ip_id++;
	ip.router_alert = o->router_alert;
	len = pgm_build_ip(slot, cap, &ip, tpdu, tpdu_len);
	*kind_out = kind;
	return len;
}

static int open_socket(const struct flood_options *o)
{
	bool v6 = o->src.afi == PGM_AFI_IP6;
	/* IPPROTO_RAW: the header is ours in either family (IPV6_HDRINCL is implied) */
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
	int sndbuf = 4 << 20;

	if (fd < 0) {
		fprintf(stderr, "pgm-flood: raw socket: %s (needs CAP_NET_RAW)\n", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	if (o->ifname != NULL) {
		struct ip_mreqn mreq;
		int ifindex = (int)if_nametoindex(o->ifname), mc;

		memset(&mreq, 0, sizeof(mreq));
		mreq.imr_ifindex = ifindex;
		if (mreq.imr_ifindex == 0) {
			fprintf(stderr, "pgm-flood: no interface %s\n", o->ifname);
			close(fd);
			return -1;
		}
		mc = v6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex))
			: setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mreq, sizeof(mreq));
		if (mc != 0 || setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, o->ifname,
				       (socklen_t)strlen(o->ifname)) != 0) {
			fprintf(stderr, "pgm-flood: binding to %s: %s\n", o->ifname,
				strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
		!stop_requested)
		;
}

int main(int argc, char **argv)
{
	static uint8_t slots[FLOOD_MAX_BATCH][FLOOD_SLOT_BYTES];
	static uint8_t tsdu[FLOOD_MAX_TSDU];
	struct mmsghdr msgs[FLOOD_MAX_BATCH];
	struct iovec iov[FLOOD_MAX_BATCH];
	enum flood_kind kinds[FLOOD_MAX_BATCH];
	struct flood_options o;
	struct flood_state st;
	struct sockaddr_storage dst;
	socklen_t dst_len;
	uint64_t total = 0, attempted = 0;
	double start, end, next_time, cpu_start;
	int fd, rc = 0;

	if (parse_options(argc, argv, &o) != 0)
		return EXIT_USAGE;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fd = open_socket(&o);
	if (fd < 0)
		return EXIT_SETUP;
	memset(&st, 0, sizeof(st));
	st.rng = o.random_seed * 0x9E3779B97F4A7C15ULL + 1; /* never 0 */
	for (int k = 0; k < K_COUNT; k++)
		st.total_weight += o.weight[k];
	for (size_t i = 0; i < sizeof(tsdu); i++)
		tsdu[i] = (uint8_t)(i * 7 + 1);
	memset(&dst, 0, sizeof(dst));
	if (o.dst.afi == PGM_AFI_IP6) {
		struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&dst;

		d6->sin6_family = AF_INET6;
		memcpy(&d6->sin6_addr, o.dst.addr, 16);
		dst_len = sizeof(*d6);
	} else {
		struct sockaddr_in *d4 = (struct sockaddr_in *)&dst;

		d4->sin_family = AF_INET;
		memcpy(&d4->sin_addr, o.dst.addr, 4);
		dst_len = sizeof(*d4);
	}

	start = now_seconds();
	cpu_start = cpu_seconds();
	next_time = start;
	while (!stop_requested) {
		unsigned want = o.batch, n = 0;

		/* The count bounds the attempts, so a persistent send error cannot loop forever. */
		if (o.count != 0 && attempted >= o.count)
			break;
		if (o.count != 0 && o.count - attempted < want)
			want = (unsigned)(o.count - attempted);
		if (o.rate > 0) {
			/* Pace in bursts of about a millisecond's worth, at least one packet. */
			unsigned per_ms = (unsigned)(o.rate / 1000.0);

			if (per_ms < 1)
				per_ms = 1;
			if (want > per_ms)
				want = per_ms;
			sleep_until(next_time);
			next_time += want / o.rate;
		}
		if (o.seconds > 0 && now_seconds() - start >= o.seconds)
			break;
		for (n = 0; n < want; n++) {
			size_t len =
				build_next(&o, &st, slots[n], FLOOD_SLOT_BYTES, tsdu, &kinds[n]);

			if (len == 0) {
				fprintf(stderr, "pgm-flood: cannot build a packet (size %u)\n",
					o.tsdu_len);
				return EXIT_USAGE;
			}
			iov[n].iov_base = slots[n];
			iov[n].iov_len = len;
			memset(&msgs[n], 0, sizeof(msgs[n]));
			msgs[n].msg_hdr.msg_name = &dst;
			msgs[n].msg_hdr.msg_namelen = dst_len;
			msgs[n].msg_hdr.msg_iov = &iov[n];
			msgs[n].msg_hdr.msg_iovlen = 1;
		}
		attempted += n;
		/* sendmmsg stops at the first failing datagram: that one is counted as an error
		 * and skipped (its sequence number is not reused), the rest are sent again. */
		for (unsigned done = 0; done < n && rc == 0;) {
			int sent = sendmmsg(fd, msgs + done, n - done, 0);

			if (sent < 0) {
				if (errno == EINTR)
					continue;
				st.send_errors++;
				st.last_errno = errno;
				if (errno != ENOBUFS && errno != EAGAIN && errno != EPERM) {
					fprintf(stderr, "pgm-flood: sendmmsg: %s\n",
						strerror(errno));
					rc = 1;
				}
				done++;
				continue;
			}
			for (int i = 0; i < sent; i++) {
				st.sent[kinds[done + (unsigned)i]]++;
				st.bytes[kinds[done + (unsigned)i]] +=
					iov[done + (unsigned)i].iov_len;
			}
			done += (unsigned)sent;
			total += (unsigned)sent;
		}
		if (rc != 0)
			break;
	}
	end = now_seconds();
	printf("result=%s sent=%" PRIu64, rc == 0 ? "ok" : "fail", total);
	for (int k = 0; k < K_COUNT; k++)
		if (o.weight[k] > 0)
			printf(" %s=%" PRIu64 " %s_bytes=%" PRIu64, kind_names[k], st.sent[k],
				kind_names[k], st.bytes[k]);
	printf(" send_errors=%" PRIu64 " last_errno=%d seconds=%.6f cpu_seconds=%.6f pps=%.0f\n",
		st.send_errors, st.last_errno, end - start, cpu_seconds() - cpu_start,
		end > start ? (double)total / (end - start) : 0.0);
	close(fd);
	return rc;
}

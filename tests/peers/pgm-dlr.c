/*
 * pgm-dlr: a PGM designated local repairer (RFC 3208 9.5) for the lab. It receives the group's
 * sessions on one interface, keeps the last N data packets of every TSI, and repairs from them:
 *
 *  - upstream DLR (9.5.2.1): an NCF from its parent for an SQN it holds makes it multicast a
 *    redirecting POLR (OPT_REDIRECT = its own NLA; IP source = the data source, Router Alert),
 *    so that the network element below learns it. No POLR for an NCF that confirms a NAK the
 *    DLR sent itself.
 *  - off-tree DLR (9.5.2.2): a POLL of sub-type PGM_POLL_DLR that matches (mask, round rules
 *    of 14.5) gets one unicast redirecting POLR to POLL_PATH after a random delay in
 *    [0, POLL_BO_IVL]; a POLL with another POLL_SQN cancels a pending reply. General polls get
 *    a POLR without options, as 14.5 requires of every child (--no-general-polls: none).
 *  - a NAK addressed to it: first an NCF for the whole NAK, then a NAK upstream for the SQNs it
 *    does not hold (9.5.3.2: this tells a network element to drop the redirect for them), then
 *    one NNAK upstream for the SQNs it repairs (flow-control feedback, 3.6.3.2, sent before the
 *    RDATA as 9.5.2.2 requires), then the RDATA. A NAK from its parent (the SPM path, 9.5.2.3)
 *    gets off-tree answers: NCF and RDATA unicast to that parent from the DLR's own address,
 *    without Router Alert. Any other NAK gets upstream answers: NCF and RDATA multicast on the
 *    LAN with the data source's address and Router Alert. NAKs and NNAKs go to the parent (in
 *    the off-tree case the NAK's sender, in the upstream case the SPM path, or the data source
 *    before any SPM), from the DLR's own address.
 *
 * Limits, on purpose: IPv4 only; it does not NAK its own losses (it is a cache, not a full
 * receiver); it makes no parity. --parity only sets OPT_PARITY in its redirecting POLRs
 * (9.5.2, 11.7); parity NAKs are confirmed and NAKed upstream like SQNs it lacks. A multicast
 * repair that the Router Alert option would push past the interface MTU goes without it
 * (counted: ra_dropped_mtu), see send_tpdu.
 *
 *   pgm-dlr -i IF [options]            (--help lists them)
 *
 * Prints "event=ready" once listening, "event=session" when it learns a session or its parent,
 * "event=poll" per POLL, "event=failing" when --fail-after is reached, per-packet events with
 * -v, and a key=value summary on exit (SIGINT, SIGTERM or -T). Exit 0, 64 usage, 70 setup.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dataplane/wire/pgm_wire.h"
#include "dataplane/rawsock.h"
#include "dlr_core.h"
#include "peer_common.h"

#define PEER_NAME    "pgm-dlr"
#define MAX_GROUPS   8
#define MAX_DATAGRAM 65535
#define RECV_BATCH   64

enum fail_mode { FAIL_SILENT, FAIL_NAK };

struct dlr_options {
	const char *ifname;
	struct pgm_nla groups[MAX_GROUPS];
	unsigned group_count;
	struct pgm_nla addr;
	bool have_addr;
	uint64_t dport; /* 0: any */
	bool udp;
	struct peer_udp_ports udp_ports;
	uint64_t window;
	uint64_t max_sessions;
	enum dlr_role role;
	bool parity;
	bool general_polls;
	bool have_fail_after;
	uint64_t fail_after;
	enum fail_mode fail_mode;
	bool have_node_id;
	uint64_t node_id;
	bool have_seed;
	uint64_t seed;
	uint64_t ttl;
	uint64_t own_nak_hold_ms;
	const char *ready_file;
	uint64_t timeout_s;
	bool verbose;
};

/* A POLR scheduled in answer to a POLL (14.5). */
struct polr_pending {
	bool active;
	bool redirect;
	uint64_t due_us;
	uint32_t sqn;
	uint16_t round;
	struct pgm_nla to; /* POLL_PATH */
	uint16_t poll_sport, poll_dport;
};

struct session {
	struct pgm_tsi tsi;
	struct pgm_nla source, group, parent; /* parent: SPM_PATH, afi 0 before the first SPM */
	uint16_t dport;
	bool have_spm;
	uint32_t spm_sqn, trail, lead;
	bool have_trail;
	uint32_t parity_tgs; /* OPT_PARITY_PRM of the SPMs, 0 if none */
	bool acting_upstream, acting_off_tree;
	struct dlr_cache cache;
	struct dlr_poll_memory polls;
	struct polr_pending polr;
	struct dlr_own_naks own_naks;
};

struct stats {
	uint64_t packets, bad_packets, not_pgm, foreign_port;
	uint64_t spms, odata_cached, rdata_cached, data_duplicate, data_too_old, parity_data;
	uint64_t sessions_refused, cache_no_memory;
	uint64_t naks_received, naks_ignored, naks_not_for_us, parity_naks;
	uint64_t ncfs_sent, rdata_sent, nnaks_sent, naks_sent, unknown_sqn;
	uint64_t ncfs_received, ncfs_own_nak, ncfs_uncached, upstream_polrs;
	uint64_t polls_received, polls_answered, polrs_sent, polls_cancelled;
	uint64_t poll_verdicts[DLR_POLL_VERDICTS];
	uint64_t build_errors, send_errors;
	uint64_t ra_dropped_mtu; /* multicast sent without Router Alert: it would not fit the MTU */
};

struct dlr {
	struct dlr_options opt;
	unsigned ifindex;
	unsigned mtu; /* of the interface, 0 if unknown */
	struct pgm_udp_ports ports;
	int fds[4];
	unsigned fd_count;
	struct rawsock *out;
	struct session *sessions;
	unsigned session_count;
	uint64_t rng;
	bool failed;
	struct stats st;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PEER_NAME " -i IF [options]\n"
		"  -i, --if IF              interface to receive and repair on (required)\n"
		"  -g, --group G            multicast group to join (default 239.192.0.1;\n"
		"                           repeat for up to 8 groups)\n"
		"  -a, --addr A             own unicast NLA (default: the interface's IPv4 "
		"address)\n"
		"  -s, --port N             only sessions with this data-destination port\n"
		"                           (default any)\n"
		"  -u, --udp PORT[:PORT]    PGM over UDP, unicast[:multicast] port\n"
		"  -w, --window N           data packets cached per TSI (default 4096)\n"
		"      --sessions N         at most N sessions (TSIs) (default 64)\n"
		"      --role R             upstream, off-tree or both (default both): which\n"
		"                           redirecting POLRs it sends (9.5.2.1 on NCFs, 9.5.2.2\n"
		"                           on DLR polls); NAKs addressed to it are answered in\n"
		"                           either case\n"
		"      --parity             set OPT_PARITY in redirecting POLRs (advertisement\n"
		"                           only: parity NAKs are still NAKed upstream)\n"
		"      --no-general-polls   do not answer general POLLs (14.5 says children MUST)\n"
		"      --fail-after N       stop repairing after N RDATA sent\n"
		"      --fail-mode M        then: silent (answer nothing: no NCF, RDATA or POLR;\n"
		"                           default) or nak (NCF every NAK and NAK upstream)\n"
		"      --node-id N          RAND_NODE_ID for POLL matching (default random)\n"
		"      --seed N             seed of the POLR delay generator (default random)\n"
		"      --ttl N              IP TTL of everything sent (default 16)\n"
		"      --own-nak-hold MS    how long an SQN it NAKed itself keeps its NCF from\n"
		"                           drawing a redirecting POLR (default 5000)\n"
		"      --ready FILE         create FILE once listening\n"
		"  -T, --timeout S          exit after S seconds (default 60, 0 = never)\n"
		"  -v, --verbose            an event line per NAK, NCF and packet sent\n"
		"Exit: 0 after the summary, 64 usage, 70 setup failure.\n");
}

static bool parse_ipv4(const char *text, struct pgm_nla *nla)
{
	return pgm_nla_parse(nla, text) && nla->afi == PGM_AFI_IP;
}

static int parse_options(int argc, char **argv, struct dlr_options *o)
{
	enum {
		OPT_SESSIONS = 256,
		OPT_ROLE,
		OPT_PARITY,
		OPT_NO_GENERAL,
		OPT_FAIL_AFTER,
		OPT_FAIL_MODE,
		OPT_NODE_ID,
		OPT_SEED,
		OPT_TTL,
		OPT_OWN_NAK_HOLD,
		OPT_READY,
	};
	static const struct option longopts[] = {
		{"if", required_argument, NULL, 'i'},
		{"group", required_argument, NULL, 'g'},
		{"addr", required_argument, NULL, 'a'},
		{"port", required_argument, NULL, 's'},
		{"udp", required_argument, NULL, 'u'},
		{"window", required_argument, NULL, 'w'},
		{"sessions", required_argument, NULL, OPT_SESSIONS},
		{"role", required_argument, NULL, OPT_ROLE},
		{"parity", no_argument, NULL, OPT_PARITY},
		{"no-general-polls", no_argument, NULL, OPT_NO_GENERAL},
		{"fail-after", required_argument, NULL, OPT_FAIL_AFTER},
		{"fail-mode", required_argument, NULL, OPT_FAIL_MODE},
		{"node-id", required_argument, NULL, OPT_NODE_ID},
		{"seed", required_argument, NULL, OPT_SEED},
		{"ttl", required_argument, NULL, OPT_TTL},
		{"own-nak-hold", required_argument, NULL, OPT_OWN_NAK_HOLD},
		{"ready", required_argument, NULL, OPT_READY},
		{"timeout", required_argument, NULL, 'T'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, longindex = -1;
	bool ok;

	*o = (struct dlr_options){
		.window = 4096,
		.max_sessions = 64,
		.role = DLR_ROLE_BOTH,
		.general_polls = true,
		.fail_mode = FAIL_SILENT,
		.ttl = 16,
		.own_nak_hold_ms = 5000,
		.timeout_s = 60,
	};
	while ((c = getopt_long(argc, argv, "i:g:a:s:u:w:T:vh", longopts, &longindex)) != -1) {
		switch (c) {
		case 'i':
			o->ifname = optarg;
			ok = strlen(optarg) < IF_NAMESIZE;
			break;
		case 'g':
			ok = o->group_count < MAX_GROUPS &&
			     parse_ipv4(optarg, &o->groups[o->group_count]) &&
			     o->groups[o->group_count].addr[0] >= 224 &&
			     o->groups[o->group_count].addr[0] <= 239;
			if (ok)
				o->group_count++;
			break;
		case 'a':
			ok = parse_ipv4(optarg, &o->addr);
			o->have_addr = true;
			break;
		case 's':
			ok = peer_parse_u64(optarg, 1, 65535, &o->dport);
			break;
		case 'u':
			ok = peer_parse_udp_ports(optarg, &o->udp_ports);
			o->udp = true;
			break;
		case 'w':
			ok = peer_parse_u64(optarg, 1, 1000000, &o->window);
			break;
		case OPT_SESSIONS:
			ok = peer_parse_u64(optarg, 1, 4096, &o->max_sessions);
			break;
		case OPT_ROLE:
			ok = true;
			if (strcmp(optarg, "upstream") == 0)
				o->role = DLR_ROLE_UPSTREAM;
			else if (strcmp(optarg, "off-tree") == 0)
				o->role = DLR_ROLE_OFF_TREE;
			else if (strcmp(optarg, "both") == 0)
				o->role = DLR_ROLE_BOTH;
			else
				ok = false;
			break;
		case OPT_PARITY:
			o->parity = ok = true;
			break;
		case OPT_NO_GENERAL:
			o->general_polls = false;
			ok = true;
			break;
		case OPT_FAIL_AFTER:
			ok = peer_parse_u64(optarg, 0, UINT32_MAX, &o->fail_after);
			o->have_fail_after = true;
			break;
		case OPT_FAIL_MODE:
			ok = true;
			if (strcmp(optarg, "silent") == 0)
				o->fail_mode = FAIL_SILENT;
			else if (strcmp(optarg, "nak") == 0)
				o->fail_mode = FAIL_NAK;
			else
				ok = false;
			break;
		case OPT_NODE_ID:
			ok = peer_parse_u64(optarg, 0, UINT32_MAX, &o->node_id);
			o->have_node_id = true;
			break;
		case OPT_SEED:
			ok = peer_parse_u64(optarg, 0, UINT64_MAX, &o->seed);
			o->have_seed = true;
			break;
		case OPT_TTL:
			ok = peer_parse_u64(optarg, 1, 255, &o->ttl);
			break;
		case OPT_OWN_NAK_HOLD:
			ok = peer_parse_u64(optarg, 0, 3600000, &o->own_nak_hold_ms);
			break;
		case OPT_READY:
			o->ready_file = optarg;
			ok = true;
			break;
		case 'T':
			ok = peer_parse_u64(optarg, 0, 86400, &o->timeout_s);
			break;
		case 'v':
			o->verbose = ok = true;
			break;
		case 'h':
			usage(stdout);
			exit(PEER_EXIT_OK);
		default:
			usage(stderr);
			return -1;
		}
		if (!ok) {
			if (longindex >= 0)
				fprintf(stderr, PEER_NAME ": bad value for option --%s: %s\n",
					longopts[longindex].name, optarg ? optarg : "");
			else
				fprintf(stderr, PEER_NAME ": bad value for option -%c: %s\n", c,
					optarg ? optarg : "");
			return -1;
		}
		longindex = -1;
	}
	if (optind < argc) {
		fprintf(stderr, PEER_NAME ": unexpected argument %s\n", argv[optind]);
		return -1;
	}
	if (o->ifname == NULL) {
		fprintf(stderr, PEER_NAME ": --if is required\n");
		return -1;
	}
	if (o->group_count == 0) {
		pgm_nla_parse(&o->groups[0], "239.192.0.1");
		o->group_count = 1;
	}
	return 0;
}

/* ---- small helpers ---- */

static uint32_t rng_next(struct dlr *d)
{
	/* xorshift64*: enough for reply delays */
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return (uint32_t)((d->rng * 2685821657736338717ull) >> 32);
}

static const char *nla_text(const struct pgm_nla *nla, char *buf, size_t len)
{
	return pgm_nla_format(nla, buf, len);
}

static bool nla_is_multicast(const struct pgm_nla *nla)
{
	return nla->afi == PGM_AFI_IP && nla->addr[0] >= 224 && nla->addr[0] <= 239;
}

static bool interface_address(const char *ifname, struct pgm_nla *nla)
{
	struct ifaddrs *list, *ifa;
	bool found = false;

	if (getifaddrs(&list) < 0)
		return false;
	for (ifa = list; ifa != NULL && !found; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET ||
			strcmp(ifa->ifa_name, ifname) != 0)
			continue;
		pgm_nla_from_ip4(nla, &((struct sockaddr_in *)(void *)ifa->ifa_addr)->sin_addr);
		found = true;
	}
	freeifaddrs(list);
	return found;
}

static unsigned interface_mtu(const char *ifname)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	rc = ioctl(fd, SIOCGIFMTU, &ifr);
	close(fd);
	return rc == 0 && ifr.ifr_mtu > 0 ? (unsigned)ifr.ifr_mtu : 0;
}

/* ---- sessions ---- */

static struct session *session_find(struct dlr *d, const struct pgm_tsi *tsi)
{
	for (unsigned i = 0; i < d->session_count; i++)
		if (pgm_tsi_equal(&d->sessions[i].tsi, tsi))
			return &d->sessions[i];
	return NULL;
}

static void session_print(const struct session *s)
{
	char tsi[24], src[64], grp[64], parent[64] = "unknown";

	if (s->parent.afi != 0)
		nla_text(&s->parent, parent, sizeof(parent));
	printf("event=session tsi=%s source=%s group=%s dport=%u parent=%s\n",
		pgm_tsi_format(&s->tsi, tsi, sizeof(tsi)), nla_text(&s->source, src, sizeof(src)),
		nla_text(&s->group, grp, sizeof(grp)), s->dport, parent);
	fflush(stdout);
}

/*
 * The session of a downstream packet (SPM, ODATA, RDATA, POLL), created when new: its TSI,
 * the data source (the IP source: network elements keep it), the group and the
 * data-destination port.
 */
static struct session *session_learn(
	struct dlr *d, const struct pgm_ip *ip, const struct pgm_packet *pkt)
{
	struct pgm_tsi tsi;
	struct session *s;

	pgm_packet_tsi(pkt, &tsi);
	s = session_find(d, &tsi);
	if (s != NULL)
		return s;
	if (d->opt.dport != 0 && pgm_packet_data_dport(pkt) != d->opt.dport) {
		d->st.foreign_port++;
		return NULL;
	}
	if (d->session_count == d->opt.max_sessions) {
		d->st.sessions_refused++;
		return NULL;
	}
	s = &d->sessions[d->session_count];
	memset(s, 0, sizeof(*s));
	if (!dlr_cache_init(&s->cache, (uint32_t)d->opt.window)) {
		d->st.cache_no_memory++;
		return NULL;
	}
	d->session_count++;
	s->tsi = tsi;
	s->source = ip->src;
	s->group = ip->dst;
	s->dport = pgm_packet_data_dport(pkt);
	session_print(s);
	return s;
}

/* ---- output ---- */

static void event_sent(struct dlr *d, const char *what, const struct pgm_nla *src,
	const struct pgm_nla *dst, bool ra, uint32_t sqn, unsigned list_count)
{
	char s[64], t[64];

	if (!d->opt.verbose)
		return;
	printf("event=send type=%s src=%s dst=%s ra=%d sqn=%u list=%u\n", what,
		nla_text(src, s, sizeof(s)), nla_text(dst, t, sizeof(t)), ra, sqn, list_count);
	fflush(stdout);
}

/*
 * Sends a TPDU in an IPv4 datagram (UDP-encapsulated with --udp): multicast out of the DLR's
 * interface, unicast by route. UDP uses the multicast port for the group, the unicast port
 * otherwise, as OpenPGM does.
 *
 * Router Alert costs 4 bytes of IP header. OpenPGM fills its TPDUs up to the MTU and sends
 * them without Router Alert, so a repair of a full-size TPDU with the option added cannot be
 * sent (a raw IP_HDRINCL datagram is never fragmented). A repair without Router Alert is
 * still a repair, and network elements find PGM without it: such a datagram goes without the
 * option, counted (ra_dropped_mtu).
 */
static bool send_tpdu(struct dlr *d, const uint8_t *tpdu, size_t len, const struct pgm_nla *src,
	const struct pgm_nla *dst, bool router_alert)
{
	static uint8_t datagram[MAX_DATAGRAM + 64];
	struct pgm_ip_params p;
	bool mcast = nla_is_multicast(dst);
	size_t dlen;

	memset(&p, 0, sizeof(p));
	p.src = *src;
	p.dst = *dst;
	p.ttl = (uint8_t)d->opt.ttl;
	p.router_alert = router_alert;
	p.udp = d->opt.udp;
	if (p.udp)
		p.udp_sport = p.udp_dport =
			(uint16_t)(mcast ? d->opt.udp_ports.mcast : d->opt.udp_ports.ucast);
	dlen = pgm_build_ip(datagram, sizeof(datagram), &p, tpdu, len);
	if (dlen > d->mtu && d->mtu != 0 && p.router_alert) {
		p.router_alert = false;
		dlen = pgm_build_ip(datagram, sizeof(datagram), &p, tpdu, len);
		d->st.ra_dropped_mtu++;
		if (d->opt.verbose)
			printf("event=ra-dropped len=%zu mtu=%u\n", dlen, d->mtu);
	}
	if (dlen == 0) {
		d->st.build_errors++;
		return false;
	}
	if (rawsock_send(d->out, mcast ? (int)d->ifindex : 0, datagram, dlen) < 0) {
		d->st.send_errors++;
		if (d->opt.verbose)
			fprintf(stderr, PEER_NAME ": send: %s\n", strerror(errno));
		return false;
	}
	return true;
}

/* A NAK or NNAK in upstream form: header SQN sqns[0], the rest in OPT_NAK_LIST. */
static bool send_nak_like(struct dlr *d, unsigned type, const struct pgm_packet *nak,
	const uint32_t *sqns, unsigned count, const struct pgm_nla *to)
{
	struct pgm_header_params hdr;
	struct pgm_build_options o;
	uint8_t tpdu[512];
	size_t len;

	memset(&hdr, 0, sizeof(hdr));
	hdr.sport = nak->sport; /* the NAK's upstream ports, unchanged */
	hdr.dport = nak->dport;
	memcpy(hdr.gsi, nak->gsi, PGM_GSI_LEN);
	memset(&o, 0, sizeof(o));
	o.nak_list = count > 1 ? sqns + 1 : NULL;
	o.nak_list_count = count - 1;
	/* a parity NAK goes upstream as a parity NAK (11.3) */
	if (type == PGM_NAK)
		o.extra_header_flags = nak->opt_flags & (PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN);
	len = pgm_build_nak(
		tpdu, sizeof(tpdu), type, &hdr, sqns[0], &nak->nak_src, &nak->nak_grp, &o);
	if (len == 0) {
		d->st.build_errors++;
		return false;
	}
	if (!send_tpdu(d, tpdu, len, &d->opt.addr, to, false))
		return false;
	event_sent(d, pgm_type_name(type), &d->opt.addr, to, false, sqns[0], count - 1);
	return true;
}

/* RDATA "as if the packet had come from the source" (9.5.2.2), rebuilt from the cached TPDU. */
static bool send_rdata(struct dlr *d, struct session *s, const struct dlr_cache_entry *e,
	const struct pgm_nla *src, const struct pgm_nla *dst, bool router_alert)
{
	static uint8_t tpdu[MAX_DATAGRAM];
	struct pgm_packet pkt;
	size_t len;

	if (pgm_parse(e->tpdu, e->len, PGM_PARSE_NO_CHECKSUM | PGM_PARSE_IGNORE_OPX, &pkt) !=
		PGM_ERR_OK) {
		d->st.build_errors++;
		return false;
	}
	pkt.type = PGM_RDATA;
	/* the session's trailing edge now, but never beyond the repaired SQN: a source would
	 * not repair below its window, and a receiver would drop such a repair */
	if (s->have_trail)
		pkt.trail = dlr_sqn_after(s->trail, e->sqn) ? e->sqn : s->trail;
	len = pgm_packet_serialize(tpdu, sizeof(tpdu), &pkt);
	if (len == 0) {
		d->st.build_errors++;
		return false;
	}
	if (!send_tpdu(d, tpdu, len, src, dst, router_alert))
		return false;
	event_sent(d, "RDATA", src, dst, router_alert, e->sqn, 0);
	return true;
}

static void fail_check(struct dlr *d)
{
	if (d->failed || !d->opt.have_fail_after || d->st.rdata_sent < d->opt.fail_after)
		return;
	d->failed = true;
	printf("event=failing after=%" PRIu64 " mode=%s\n", d->st.rdata_sent,
		d->opt.fail_mode == FAIL_SILENT ? "silent" : "nak");
	fflush(stdout);
}

/* ---- receive path ---- */

static void on_data(struct dlr *d, const struct pgm_ip *ip, const struct pgm_packet *pkt)
{
	struct session *s;

	if (pgm_packet_is_parity(pkt)) {
		d->st.parity_data++; /* its SQN names a transmission group, not a packet */
		return;
	}
	s = session_learn(d, ip, pkt);
	if (s == NULL)
		return;
	if (!s->have_trail || dlr_sqn_after(pkt->trail, s->trail)) {
		s->trail = pkt->trail;
		s->have_trail = true;
	}
	switch (dlr_cache_put(&s->cache, pkt->sqn, pkt->tpdu, pkt->tpdu_len)) {
	case DLR_CACHE_STORED:
		if (pkt->type == PGM_ODATA)
			d->st.odata_cached++;
		else
			d->st.rdata_cached++;
		break;
	case DLR_CACHE_DUPLICATE:
		d->st.data_duplicate++;
		break;
	case DLR_CACHE_TOO_OLD:
		d->st.data_too_old++;
		break;
	case DLR_CACHE_NO_MEMORY:
	case DLR_CACHE_BAD_LENGTH:
		d->st.cache_no_memory++;
		break;
	}
}

static void on_spm(struct dlr *d, const struct pgm_ip *ip, const struct pgm_packet *pkt)
{
	struct session *s = session_learn(d, ip, pkt);

	d->st.spms++;
	if (s == NULL)
		return;
	if (s->have_spm && !dlr_sqn_after(pkt->sqn, s->spm_sqn))
		return; /* an old or repeated SPM (8.1: SPM_SQN orders them) */
	s->have_spm = true;
	s->spm_sqn = pkt->sqn;
	s->lead = pkt->lead;
	if (!s->have_trail || dlr_sqn_after(pkt->trail, s->trail)) {
		s->trail = pkt->trail;
		s->have_trail = true;
	}
	if (pgm_opt_has(&pkt->opt, PGM_OPT_PARITY_PRM))
		s->parity_tgs = pkt->opt.parity_tgs;
	if (!pgm_nla_equal(&s->parent, &pkt->path)) {
		s->parent = pkt->path;
		session_print(s);
	}
}

static void on_nak(
	struct dlr *d, const struct pgm_ip *ip, const struct pgm_packet *nak, uint64_t now)
{
	static uint8_t tpdu[512];
	struct dlr_nak_split split;
	struct pgm_tsi tsi;
	struct session *s;
	const struct pgm_nla *ncf_src, *ncf_dst, *upstream, *data_src, *data_dst;
	enum dlr_answer answer;
	bool ra;
	size_t len;
	uint64_t budget = UINT64_MAX;

	if (!pgm_nla_equal(&ip->dst, &d->opt.addr)) {
		d->st.naks_not_for_us++;
		if (d->opt.verbose)
			printf("event=nak-not-for-us sqn=%u\n", nak->sqn);
		return;
	}
	d->st.naks_received++;
	if (d->failed && d->opt.fail_mode == FAIL_SILENT) {
		d->st.naks_ignored++;
		if (d->opt.verbose) {
			printf("event=nak sqn=%u ignored=failed\n", nak->sqn);
			fflush(stdout);
		}
		return;
	}
	if (pgm_packet_is_parity(nak))
		d->st.parity_naks++;
	pgm_packet_tsi(nak, &tsi);
	s = session_find(d, &tsi);
	answer = dlr_nak_answer(&ip->src, s != NULL ? &s->parent : NULL, d->opt.role);
	if (d->failed)
		budget = 0;
	else if (d->opt.have_fail_after)
		budget = d->opt.fail_after - d->st.rdata_sent;
	dlr_nak_split(s != NULL ? &s->cache : NULL, nak, budget, &split);
	d->st.unknown_sqn += split.missing_count;
	if (d->opt.verbose) {
		char from[64], t[24];

		printf("event=nak from=%s tsi=%s sqn=%u list=%u answer=%s repair=%u missing=%u\n",
			nla_text(&ip->src, from, sizeof(from)), pgm_tsi_format(&tsi, t, sizeof(t)),
			nak->sqn, nak->opt.nak_list_count,
			answer == DLR_ANSWER_OFF_TREE ? "off-tree" : "upstream", split.repair_count,
			split.missing_count);
	}
	if (answer == DLR_ANSWER_OFF_TREE) {
		/* 9.5.2.2: unicast to the parent, own address, no Router Alert */
		ncf_src = data_src = &d->opt.addr;
		ncf_dst = data_dst = &ip->src;
		upstream = &ip->src;
		ra = false;
		if (s != NULL)
			s->acting_off_tree = true;
	} else {
		/* 9.5.2.1: as a source would, down the tree */
		ncf_src = data_src = &nak->nak_src;
		ncf_dst = data_dst = &nak->nak_grp;
		upstream = s != NULL && s->parent.afi != 0 ? &s->parent : &nak->nak_src;
		ra = true;
	}

	/* 1. the NCF confirms the whole NAK, whatever follows */
	if (pgm_packet_is_parity(nak))
		len = s != NULL && s->parity_tgs != 0
			      ? pgm_build_ncf_from_nak_tgs(
					tpdu, sizeof(tpdu), nak, s->parity_tgs, 0, NULL)
			      : 0; /* the NAK's PKT_CNT cannot be read without the group size */
	else
		len = pgm_build_ncf_from_nak(tpdu, sizeof(tpdu), nak, 0, NULL);
	if (len == 0) {
		d->st.build_errors++;
	} else if (send_tpdu(d, tpdu, len, ncf_src, ncf_dst, ra)) {
		d->st.ncfs_sent++;
		event_sent(d, "NCF", ncf_src, ncf_dst, ra, nak->sqn, nak->opt.nak_list_count);
	}
	/* 2. what it lacks goes upstream at once (9.5.2.2), from its own address */
	if (split.missing_count > 0 &&
		send_nak_like(d, PGM_NAK, nak, split.missing, split.missing_count, upstream)) {
		d->st.naks_sent++;
		if (s != NULL)
			for (unsigned i = 0; i < split.missing_count; i++)
				dlr_own_naks_add(&s->own_naks, split.missing[i],
					now + d->opt.own_nak_hold_ms * 1000u);
	}
	if (split.repair_count == 0 || s == NULL)
		return;
	/* 3. the NNAK before the RDATA (9.5.2.2) */
	if (send_nak_like(d, PGM_NNAK, nak, split.repair, split.repair_count, upstream))
		d->st.nnaks_sent++;
	/* 4. the repairs */
	for (unsigned i = 0; i < split.repair_count; i++) {
		const struct dlr_cache_entry *e = dlr_cache_get(&s->cache, split.repair[i]);

		if (e != NULL && send_rdata(d, s, e, data_src, data_dst, ra))
			d->st.rdata_sent++;
	}
	fail_check(d);
}

/* 9.5.2.1: an NCF from the parent for an SQN it holds draws a multicast redirecting POLR. */
static void on_ncf(
	struct dlr *d, const struct pgm_ip *ip, const struct pgm_packet *ncf, uint64_t now)
{
	static uint8_t tpdu[256];
	struct pgm_header_params hdr;
	struct pgm_build_options o;
	struct pgm_tsi tsi;
	struct session *s;
	bool own = false, held = false;
	size_t len;

	d->st.ncfs_received++;
	pgm_packet_tsi(ncf, &tsi);
	s = session_find(d, &tsi);
	if (d->opt.verbose) {
		char t[24];

		printf("event=ncf tsi=%s sqn=%u list=%u\n", pgm_tsi_format(&tsi, t, sizeof(t)),
			ncf->sqn, ncf->opt.nak_list_count);
		fflush(stdout);
	}
	if (s == NULL || !(d->opt.role & DLR_ROLE_UPSTREAM) || !pgm_ip_dst_is_multicast(ip) ||
		pgm_packet_is_parity(ncf) || (d->failed && d->opt.fail_mode == FAIL_SILENT))
		return;
	for (unsigned i = 0; i <= ncf->opt.nak_list_count; i++) {
		uint32_t sqn = i == 0 ? ncf->sqn : pgm_opt_nak_list_sqn(&ncf->opt, i - 1);

		own |= dlr_own_naks_has(&s->own_naks, sqn, now);
		held |= dlr_cache_get(&s->cache, sqn) != NULL;
	}
	if (own) {
		/* "If the NCF completes NAK transmission initiated by the DLR itself, the DLR
		 * MUST NOT send a redirecting POLR." */
		d->st.ncfs_own_nak++;
		return;
	}
	if (!held) {
		d->st.ncfs_uncached++;
		return;
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.sport = ncf->dport; /* upstream form: data-destination port first */
	hdr.dport = ncf->sport;
	memcpy(hdr.gsi, ncf->gsi, PGM_GSI_LEN);
	memset(&o, 0, sizeof(o));
	o.redirect = &d->opt.addr;
	o.extra_header_flags = d->opt.parity ? PGM_OPT_PARITY : 0;
	/* No POLL asked for it: POLR_SQN carries the SQN of the NCF that triggered it. */
	len = pgm_build_polr(tpdu, sizeof(tpdu), &hdr, ncf->sqn, 0, &o);
	if (len == 0) {
		d->st.build_errors++;
		return;
	}
	if (send_tpdu(d, tpdu, len, &ncf->nak_src, &ncf->nak_grp, true)) {
		d->st.polrs_sent++;
		d->st.upstream_polrs++;
		s->acting_upstream = true;
		event_sent(d, "POLR", &ncf->nak_src, &ncf->nak_grp, true, ncf->sqn, 0);
	}
}

static void on_poll(
	struct dlr *d, const struct pgm_ip *ip, const struct pgm_packet *poll, uint64_t now)
{
	struct dlr_poll_policy policy;
	enum dlr_poll_verdict verdict;
	struct session *s;
	uint32_t delay = 0;
	char path[64];

	d->st.polls_received++;
	s = session_learn(d, ip, poll);
	if (s == NULL)
		return;
	/* 14.5: a POLL with another POLL_SQN cancels a pending reply */
	if (s->polr.active && s->polr.sqn != poll->sqn) {
		s->polr.active = false;
		d->st.polls_cancelled++;
	}
	policy.node_id = (uint32_t)d->opt.node_id;
	policy.answer_dlr = (d->opt.role & DLR_ROLE_OFF_TREE) &&
			    !(d->failed && d->opt.fail_mode == FAIL_SILENT);
	policy.answer_general =
		d->opt.general_polls && !(d->failed && d->opt.fail_mode == FAIL_SILENT);
	policy.has_data = s->cache.stored > 0;
	verdict = dlr_poll_decide(&policy, &s->polls, poll->sqn, poll->poll_round,
		poll->poll_s_type, &poll->path, poll->poll_rand, poll->poll_mask);
	d->st.poll_verdicts[verdict]++;
	if (verdict == DLR_POLL_REPLY_REDIRECT || verdict == DLR_POLL_REPLY_PLAIN) {
		bool redirect = verdict == DLR_POLL_REPLY_REDIRECT;

		/* one POLR per poll: a repeat of the pending poll keeps its timer */
		if (!(s->polr.active && s->polr.sqn == poll->sqn &&
			    s->polr.round == poll->poll_round && s->polr.redirect == redirect)) {
			delay = dlr_poll_delay_us(poll->poll_bo_ivl, rng_next(d));
			s->polr = (struct polr_pending){.active = true,
				.redirect = redirect,
				.due_us = now + delay,
				.sqn = poll->sqn,
				.round = poll->poll_round,
				.to = poll->path,
				.poll_sport = poll->sport,
				.poll_dport = poll->dport};
		}
	}
	printf("event=poll sqn=%u round=%u s_type=%u path=%s bo_ivl_us=%u mask=0x%08x "
	       "verdict=%s delay_us=%u\n",
		poll->sqn, poll->poll_round, poll->poll_s_type,
		nla_text(&poll->path, path, sizeof(path)), poll->poll_bo_ivl, poll->poll_mask,
		dlr_poll_verdict_name(verdict), delay);
	fflush(stdout);
}

/* Sends the POLRs whose delay ran out; returns the time until the next one (µs), or
 * UINT64_MAX. */
static uint64_t polr_timers(struct dlr *d, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < d->session_count; i++) {
		struct session *s = &d->sessions[i];
		struct polr_pending *p = &s->polr;
		struct pgm_header_params hdr;
		struct pgm_build_options o;
		uint8_t tpdu[256];
		size_t len;

		if (!p->active)
			continue;
		if (p->due_us > now) {
			if (p->due_us - now < next)
				next = p->due_us - now;
			continue;
		}
		p->active = false;
		if (d->failed && d->opt.fail_mode == FAIL_SILENT)
			continue;
		memset(&hdr, 0, sizeof(hdr));
		hdr.sport = p->poll_dport; /* upstream form */
		hdr.dport = p->poll_sport;
		memcpy(hdr.gsi, s->tsi.gsi, PGM_GSI_LEN);
		memset(&o, 0, sizeof(o));
		if (p->redirect) {
			o.redirect = &d->opt.addr;
			o.extra_header_flags = d->opt.parity ? PGM_OPT_PARITY : 0;
		}
		len = pgm_build_polr(tpdu, sizeof(tpdu), &hdr, p->sqn, p->round, &o);
		if (len == 0) {
			d->st.build_errors++;
			continue;
		}
		/* 14.5: to POLL_PATH, from its own address */
		if (send_tpdu(d, tpdu, len, &d->opt.addr, &p->to, false)) {
			d->st.polrs_sent++;
			d->st.polls_answered++;
			if (p->redirect)
				s->acting_off_tree = true;
			event_sent(d, "POLR", &d->opt.addr, &p->to, false, p->sqn, 0);
		}
	}
	return next;
}

static void on_datagram(struct dlr *d, const uint8_t *buf, size_t len, uint64_t now)
{
	struct pgm_ip ip;
	struct pgm_packet pkt;
	enum pgm_err e;

	/* UDP checksums of local senders on veth are unfinished (offload): not judged here;
	 * the PGM checksum is. */
	e = pgm_parse_datagram(buf, len, d->opt.udp ? &d->ports : NULL,
		PGM_PARSE_IGNORE_OPX | PGM_PARSE_NO_UDP_CHECKSUM, &ip, &pkt);
	if (e == PGM_ERR_NOT_PGM) {
		d->st.not_pgm++;
		return;
	}
	d->st.packets++;
	if (e != PGM_ERR_OK) {
		d->st.bad_packets++;
		if (d->opt.verbose) {
			printf("event=bad-packet error=%s len=%zu\n", pgm_err_name(e), len);
			fflush(stdout);
		}
		return;
	}
	if (ip.version != 4)
		return;
	switch (pkt.type) {
	case PGM_SPM:
		on_spm(d, &ip, &pkt);
		break;
	case PGM_ODATA:
	case PGM_RDATA:
		on_data(d, &ip, &pkt);
		break;
	case PGM_NAK:
		on_nak(d, &ip, &pkt, now);
		break;
	case PGM_NCF:
		on_ncf(d, &ip, &pkt, now);
		break;
	case PGM_POLL:
		on_poll(d, &ip, &pkt, now);
		break;
	default:
		break; /* NNAK, POLR, SPMR, ACK: nothing for a DLR to do */
	}
}

/* ---- setup ---- */

static int bound_socket(int type, int protocol, const char *ifname)
{
	int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
	int rcvbuf = 8 << 20;

	if (fd < 0)
		return -1;
	/* only what arrives on the DLR's interface */
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	return fd;
}

static bool join_groups(struct dlr *d, int fd)
{
	for (unsigned i = 0; i < d->opt.group_count; i++) {
		struct ip_mreqn mreq;

		memset(&mreq, 0, sizeof(mreq));
		memcpy(&mreq.imr_multiaddr, d->opt.groups[i].addr, 4);
		mreq.imr_ifindex = (int)d->ifindex;
		if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) < 0)
			return false;
	}
	return true;
}

/* A UDP socket on an encapsulation port: the kernel then delivers the group's datagrams and
 * answers no unicast NAK with "port unreachable". The raw socket reads them; this one is
 * drained. */
static int udp_port_socket(struct dlr *d, uint16_t port)
{
	struct sockaddr_in sin;
	int fd = bound_socket(SOCK_DGRAM, IPPROTO_UDP, d->opt.ifname), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || !join_groups(d, fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool setup(struct dlr *d)
{
	struct rawsock_config rcfg;
	char err[256];
	int fd;

	d->ifindex = if_nametoindex(d->opt.ifname);
	if (d->ifindex == 0) {
		fprintf(stderr, PEER_NAME ": no interface %s\n", d->opt.ifname);
		return false;
	}
	d->mtu = interface_mtu(d->opt.ifname);
	if (!d->opt.have_addr && !interface_address(d->opt.ifname, &d->opt.addr)) {
		fprintf(stderr, PEER_NAME ": %s has no IPv4 address (use --addr)\n", d->opt.ifname);
		return false;
	}
	d->sessions = calloc(d->opt.max_sessions, sizeof(*d->sessions));
	if (d->sessions == NULL) {
		fprintf(stderr, PEER_NAME ": out of memory\n");
		return false;
	}
	/* PGM over IP, or every UDP datagram (with its IP header) under --udp */
	fd = bound_socket(SOCK_RAW, d->opt.udp ? IPPROTO_UDP : IPPROTO_PGM_NUMBER, d->opt.ifname);
	if (fd < 0 || !join_groups(d, fd)) {
		fprintf(stderr, PEER_NAME ": raw socket on %s: %s\n", d->opt.ifname,
			strerror(errno));
		return false;
	}
	d->fds[d->fd_count++] = fd;
	if (d->opt.udp) {
		pgm_udp_ports_default(&d->ports);
		d->ports.enabled = true;
		d->ports.ucast_port = (uint16_t)d->opt.udp_ports.ucast;
		d->ports.mcast_port = (uint16_t)d->opt.udp_ports.mcast;
		fd = udp_port_socket(d, d->ports.ucast_port);
		if (fd < 0) {
			fprintf(stderr, PEER_NAME ": UDP port %u: %s\n", d->ports.ucast_port,
				strerror(errno));
			return false;
		}
		d->fds[d->fd_count++] = fd;
		if (d->ports.mcast_port != d->ports.ucast_port) {
			fd = udp_port_socket(d, d->ports.mcast_port);
			if (fd < 0) {
				fprintf(stderr, PEER_NAME ": UDP port %u: %s\n",
					d->ports.mcast_port, strerror(errno));
				return false;
			}
			d->fds[d->fd_count++] = fd;
		}
	}
	rawsock_config_default(&rcfg);
	d->out = rawsock_open(&rcfg, err, sizeof(err));
	if (d->out == NULL) {
		fprintf(stderr, PEER_NAME ": %s\n", err);
		return false;
	}
	if (!d->opt.have_node_id) {
		uint32_t id;

		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint32_t)now_microseconds() ^ (uint32_t)getpid();
		d->opt.node_id = id;
	}
	if (!d->opt.have_seed && getrandom(&d->opt.seed, sizeof(d->opt.seed), 0) != 8)
		d->opt.seed = now_microseconds() ^ (uint64_t)getpid() << 32;
	d->rng = d->opt.seed ? d->opt.seed : 0x9e3779b97f4a7c15ull;
	return true;
}

static void print_summary(struct dlr *d, uint64_t start_us)
{
	uint64_t held = 0, upstream = 0, off_tree = 0;
	const struct stats *st = &d->st;

	for (unsigned i = 0; i < d->session_count; i++) {
		held += dlr_cache_held(&d->sessions[i].cache);
		upstream += d->sessions[i].acting_upstream;
		off_tree += d->sessions[i].acting_off_tree;
	}
	printf("result=ok peer=" PEER_NAME " sessions=%u spms=%" PRIu64 " odata_cached=%" PRIu64
	       " rdata_cached=%" PRIu64 " cache_held=%" PRIu64 " data_duplicate=%" PRIu64
	       " data_too_old=%" PRIu64 " parity_data=%" PRIu64 " naks_received=%" PRIu64
	       " naks_ignored=%" PRIu64 " naks_not_for_us=%" PRIu64 " parity_naks=%" PRIu64
	       " ncfs_sent=%" PRIu64 " rdata_sent=%" PRIu64 " nnaks_sent=%" PRIu64
	       " naks_sent=%" PRIu64 " unknown_sqn=%" PRIu64 " ncfs_received=%" PRIu64
	       " ncfs_own_nak=%" PRIu64 " ncfs_uncached=%" PRIu64 " upstream_polrs=%" PRIu64
	       " polls_received=%" PRIu64 " polls_answered=%" PRIu64 " polrs_sent=%" PRIu64
	       " polls_cancelled=%" PRIu64,
		d->session_count, st->spms, st->odata_cached, st->rdata_cached, held,
		st->data_duplicate, st->data_too_old, st->parity_data, st->naks_received,
		st->naks_ignored, st->naks_not_for_us, st->parity_naks, st->ncfs_sent,
		st->rdata_sent, st->nnaks_sent, st->naks_sent, st->unknown_sqn, st->ncfs_received,
		st->ncfs_own_nak, st->ncfs_uncached, st->upstream_polrs, st->polls_received,
		st->polls_answered, st->polrs_sent, st->polls_cancelled);
	for (unsigned v = 0; v < DLR_POLL_VERDICTS; v++) {
		char key[32];
		unsigned k;

		/* poll_mask_mismatch=..., poll_reply_redirect=... */
		snprintf(key, sizeof(key), "poll_%s", dlr_poll_verdict_name(v));
		for (k = 0; key[k] != '\0'; k++)
			if (key[k] == '-')
				key[k] = '_';
		printf(" %s=%" PRIu64, key, st->poll_verdicts[v]);
	}
	printf(" acting_upstream=%" PRIu64 " acting_off_tree=%" PRIu64 " failed=%d packets=%" PRIu64
	       " bad_packets=%" PRIu64 " sessions_refused=%" PRIu64 " foreign_port=%" PRIu64
	       " build_errors=%" PRIu64 " send_errors=%" PRIu64 " ra_dropped_mtu=%" PRIu64
	       " run_ms=%" PRIu64 "\n",
		upstream, off_tree, d->failed, st->packets, st->bad_packets, st->sessions_refused,
		st->foreign_port, st->build_errors, st->send_errors, st->ra_dropped_mtu,
		(now_microseconds() - start_us) / 1000u);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static uint8_t buf[MAX_DATAGRAM];
	static struct dlr d;
	uint64_t start_us, deadline_us = 0;
	char addr[64];

	if (parse_options(argc, argv, &d.opt) < 0)
		return PEER_EXIT_USAGE;
	peer_install_signals();
	setvbuf(stdout, NULL, _IOLBF, 0); /* event lines reach a log file as they happen */
	if (!setup(&d))
		return PEER_EXIT_SETUP;
	start_us = now_microseconds();
	if (d.opt.timeout_s > 0)
		deadline_us = start_us + d.opt.timeout_s * 1000000u;
	if (d.opt.have_fail_after)
		fail_check(&d); /* --fail-after 0: failed from the start */
	printf("event=ready peer=" PEER_NAME " if=%s addr=%s node_id=0x%08x role=%s window=%" PRIu64
	       " encap=%s mtu=%u\n",
		d.opt.ifname, nla_text(&d.opt.addr, addr, sizeof(addr)), (uint32_t)d.opt.node_id,
		d.opt.role == DLR_ROLE_BOTH	  ? "both"
		: d.opt.role == DLR_ROLE_UPSTREAM ? "upstream"
						  : "off-tree",
		d.opt.window, d.opt.udp ? "udp" : "ip", d.mtu);
	fflush(stdout);
	if (d.opt.ready_file != NULL) {
		FILE *f = fopen(d.opt.ready_file, "w");

		if (f != NULL)
			fclose(f);
	}
	while (!stop_requested) {
		struct pollfd pfd[4];
		uint64_t now = now_microseconds(), wait_us;
		int timeout_ms;

		if (deadline_us != 0 && now >= deadline_us)
			break;
		wait_us = polr_timers(&d, now);
		if (deadline_us != 0 && deadline_us - now < wait_us)
			wait_us = deadline_us - now;
		if (wait_us > 200000)
			wait_us = 200000;
		timeout_ms = (int)((wait_us + 999) / 1000);
		for (unsigned i = 0; i < d.fd_count; i++)
			pfd[i] = (struct pollfd){.fd = d.fds[i], .events = POLLIN};
		if (poll(pfd, d.fd_count, timeout_ms) < 0)
			continue; /* EINTR: the loop checks the stop flag */
		for (unsigned i = 0; i < d.fd_count; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			for (unsigned n = 0; n < RECV_BATCH; n++) {
				ssize_t len = recv(d.fds[i], buf, sizeof(buf), 0);

				if (len < 0)
					break;
				/* fds[0] is the raw socket; the UDP port sockets are drained.
				 * Due POLRs go out before the next packet is read, so a reply
				 * with no delay precedes whatever the DLR does next. */
				if (i == 0) {
					on_datagram(&d, buf, (size_t)len, now_microseconds());
					polr_timers(&d, now_microseconds());
				}
			}
		}
	}
	print_summary(&d, start_us);
	for (unsigned i = 0; i < d.session_count; i++)
		dlr_cache_free(&d.sessions[i].cache);
	free(d.sessions);
	for (unsigned i = 0; i < d.fd_count; i++)
		close(d.fds[i]);
	rawsock_close(d.out);
	return PEER_EXIT_OK;
}

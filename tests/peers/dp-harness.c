/*
 * dp-harness: drives the data-plane modules one at a time for the namespace tests.
 *
 *   dp-harness rules-script --backend nft|iptables [--if A,B] [--queue N] [--no-udp] [--remove]
 *                           [--workers N] [--ip6]
 *   dp-harness rules-install [--backend auto|nft|iptables] [--if A,B] [--queue N] [--no-udp]
 *                            [--workers N]
 *   dp-harness rules-remove
 *   dp-harness consume [--queue N] [--if A,B [--backend B] [--update-if C,D|-]] [--timeout S]
 *                      [--count N]
 *                      [--drop TYPE] [--defer-every N] [--hold] [--max-queue N]
 *                      [--hold-drops N]
 *                      [--rewrite-spm-path ADDR|egress]
 *                      [--ready FILE]
 *                      [--pcap FILE]
 *   dp-harness send --if IF --src A --dst B [--ttl N] [--ra] [--type NAME] [--count N] [--udp]
 *                   [--loop]        (IPv6 addresses: an NCF or NAK built by the codec)
 *   dp-harness mfc  the multicast routes the mirror holds, both families, one line each
 *   dp-harness rtnl [--timeout S] [--count N] [--ready FILE]
 *   dp-harness pcap-read FILE
 *   dp-harness sniff --if IF [--timeout S] [--count N] [--ready FILE] [BPF-FILTER]
 *
 * consume prints one line per queued packet:
 *   pkt id=12 hook=forward in=up0 out=d1 len=56 proto=113 type=SPM verdict=accept
 * and at exit one "stats ..." line with the module's and the kernel's counters. With --if it
 * installs interception rules first and removes them at exit (SIGINT/SIGTERM/timeout);
 * --update-if then replaces them at once with rules for another set ("-": none).
 * The PGM type is read here with a few lines of code of its own, independent of the codec.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/netfilter.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/mfc.h"
#include "dataplane/nfq.h"
#include "dataplane/pcapio.h"
#include "dataplane/rawsock.h"
#include "dataplane/rtnl.h"
#include "dataplane/rules.h"
#include "dataplane/wire/pgm_wire.h"
#include "tests/lib/tool.h"

/* SIGINT and SIGTERM end a command's loop; it still prints its statistics. */
static void catch_stop_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "dp-harness: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(2);
}

/* A module's error text, as every command reports it. */
static void warn_err(const char *err)
{
	fprintf(stderr, "dp-harness: %s\n", err);
}

/* ---- options shared by the subcommands ---- */

struct opts {
	enum rules_backend backend;
	char *ifs[64];
	size_t nifs;
	char *update_ifs[64];
	size_t nupdate_ifs;
	bool update;
	unsigned queue;
	unsigned workers; /* rules for this many queues from --queue on (steering) */
	bool family6;	  /* rules-script: the ip6 table */
	bool no_udp, remove;
	double timeout;
	unsigned long count;
	int drop_type;
	unsigned defer_every;
	bool hold; /* never give verdicts: the queue fills up */
	unsigned max_queue;
	unsigned hold_drops; /* held drops (nfq.h): sent with a later round's, or at exit */
	bool rewrite_spm;
	bool rewrite_egress; /* the egress interface's primary IPv4 address, from rtnl */
	struct in_addr rewrite_addr;
	const char *ready, *pcap;
	const char *ifname, *src, *dst, *type;
	int ttl;
	bool ra, udp, loop;
};

static size_t split_list(char **out, char *list)
{
	size_t n = 0;

	for (char *tok = strtok(list, ","); tok != NULL && n < 64; tok = strtok(NULL, ","))
		out[n++] = tok;
	return n;
}

static const char *const type_names[16] = {"SPM", "POLL", "POLR", "type-3", "ODATA", "RDATA",
	"type-6", "type-7", "NAK", "NNAK", "NCF", "type-11", "SPMR", "ACK", "type-14", "type-15"};

static int parse_type_name(const char *s)
{
	for (int i = 0; i < 16; i++)
		if (strcasecmp(s, type_names[i]) == 0)
			return i;
	return -1;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"backend", required_argument, NULL, 'b'},
		{"if", required_argument, NULL, 'i'},
		{"update-if", required_argument, NULL, 'I'},
		{"queue", required_argument, NULL, 'q'},
		{"workers", required_argument, NULL, 'W'},
		{"ip6", no_argument, NULL, '6'},
		{"no-udp", no_argument, NULL, 'U'},
		{"remove", no_argument, NULL, 'R'},
		{"timeout", required_argument, NULL, 't'},
		{"count", required_argument, NULL, 'n'},
		{"drop", required_argument, NULL, 'd'},
		{"defer-every", required_argument, NULL, 'D'},
		{"hold", no_argument, NULL, 'H'},
		{"max-queue", required_argument, NULL, 'M'},
		{"hold-drops", required_argument, NULL, 'h'},
		{"rewrite-spm-path", required_argument, NULL, 'w'},
		{"ready", required_argument, NULL, 'r'},
		{"pcap", required_argument, NULL, 'p'},
		{"src", required_argument, NULL, 's'},
		{"dst", required_argument, NULL, 'x'},
		{"type", required_argument, NULL, 'T'},
		{"ttl", required_argument, NULL, 'l'},
		{"ra", no_argument, NULL, 'a'},
		{"udp", no_argument, NULL, 'u'},
		{"loop", no_argument, NULL, 'L'},
		{NULL, 0, NULL, 0},
	};
	/* The options that only set a flag, keep their argument or take a number, by letter. */
	bool *const flags[128] = {['U'] = &o->no_udp,
		['6'] = &o->family6,
		['R'] = &o->remove,
		['H'] = &o->hold,
		['a'] = &o->ra,
		['u'] = &o->udp,
		['L'] = &o->loop};
	const char **const strings[128] = {['r'] = &o->ready,
		['p'] = &o->pcap,
		['s'] = &o->src,
		['x'] = &o->dst,
		['T'] = &o->type};
	unsigned *const numbers[128] = {['q'] = &o->queue,
		['W'] = &o->workers,
		['D'] = &o->defer_every,
		['M'] = &o->max_queue,
		['h'] = &o->hold_drops};
	int c;

	memset(o, 0, sizeof(*o));
	o->drop_type = -1;
	o->ttl = -1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c > 0 && c < 128 && flags[c] != NULL) {
			*flags[c] = true;
			continue;
		}
		if (c > 0 && c < 128 && strings[c] != NULL) {
			*strings[c] = optarg;
			continue;
		}
		if (c > 0 && c < 128 && numbers[c] != NULL) {
			*numbers[c] = (unsigned)strtoul(optarg, NULL, 0);
			continue;
		}
		switch (c) {
		case 'b':
			if (!rules_backend_parse(optarg, &o->backend))
				die("unknown backend %s", optarg);
			break;
		case 'i':
			o->nifs = split_list(o->ifs, optarg);
			o->ifname = o->ifs[0];
			break;
		case 'I':
			o->update = true;
			o->nupdate_ifs =
				strcmp(optarg, "-") == 0 ? 0 : split_list(o->update_ifs, optarg);
			break;
		case 't':
			o->timeout = strtod(optarg, NULL);
			break;
		case 'n':
			o->count = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			o->drop_type = parse_type_name(optarg);
			if (o->drop_type < 0)
				die("unknown PGM type %s", optarg);
			break;
		case 'w':
			o->rewrite_spm = true;
			o->rewrite_egress = strcmp(optarg, "egress") == 0;
			if (!o->rewrite_egress && inet_pton(AF_INET, optarg, &o->rewrite_addr) != 1)
				die("bad address %s", optarg);
			break;
		case 'l':
			o->ttl = atoi(optarg);
			break;
		default:
			exit(2);
		}
	}
}

static void touch(const char *path)
{
	FILE *f;

	if (path == NULL)
		return;
	f = fopen(path, "w");
	if (f != NULL)
		fclose(f);
}

static void rules_cfg_from_opts(const struct opts *o, struct rules_config *cfg)
{
	rules_config_default(cfg);
	cfg->queue_num = (uint16_t)o->queue;
	if (o->workers != 0)
		cfg->workers = (uint16_t)o->workers;
	cfg->udp = !o->no_udp;
}

static struct rules *rules_from_opts(const struct opts *o)
{
	struct rules_config cfg;

	rules_cfg_from_opts(o, &cfg);
	return rules_new(&cfg);
}

/* Whether the command stays in its loop: no stop signal, --timeout and --count not reached. */
static bool keep_running(const struct opts *o, double start, unsigned long seen)
{
	return !stop_requested && (o->timeout <= 0 || now_seconds() - start < o->timeout) &&
	       (o->count == 0 || seen < o->count);
}

/* ---- rules ---- */

static int cmd_rules_script(const struct opts *o)
{
	struct rules_config cfg;
	struct rules_ipt_state none = {0};
	char *s;

	rules_cfg_from_opts(o, &cfg);
	if (o->backend == RULES_BACKEND_NFT)
		s = rules_nft_script_family(&cfg, o->family6 ? RULES_IPV6 : RULES_IPV4,
			(const char *const *)o->ifs, o->nifs, !o->remove);
	else if (o->backend == RULES_BACKEND_IPTABLES)
		s = rules_ipt_script_family(&cfg, o->family6 ? RULES_IPV6 : RULES_IPV4, &none,
			(const char *const *)o->ifs, o->nifs, !o->remove);
	else
		die("rules-script needs --backend nft or iptables%s", "");
	if (s == NULL)
		die("cannot generate the script%s", "");
	fputs(s, stdout);
	free(s);
	return 0;
}

static int cmd_rules_install(const struct opts *o)
{
	struct rules *r = rules_from_opts(o);
	char err[512], detail[400];
	int rc;

	rc = rules_install(r, o->backend, (const char *const *)o->ifs, o->nifs, err, sizeof(err));
	if (rc < 0)
		warn_err(err);
	else
		printf("backend=%s queue=\"%s\" nft_unavailable=\"%s\" ipv6=%s "
		       "ipv6_unavailable=\"%s\"\n",
			rules_backend_name(rules_backend(r)),
			rules_backend_detail(r, detail, sizeof(detail)),
			rules_nft_unavailable_reason(r),
			rules_family_installed(r, RULES_IPV6) ? "yes" : "no",
			rules_family_unavailable_reason(r, RULES_IPV6));
	rules_free(r);
	return rc < 0 ? 1 : 0;
}

static int cmd_rules_remove(const struct opts *o)
{
	struct rules *r = rules_from_opts(o);
	char err[512];
	int rc;

	rc = rules_remove(r, err, sizeof(err));
	if (rc < 0)
		warn_err(err);
	rules_free(r);
	return rc < 0 ? 1 : 0;
}

/* ---- consume ---- */

struct consumer {
	const struct opts *o;
	struct rtnl *rt;
	struct pcap_writer *pcap;
	uint32_t deferred[4096];
	size_t ndeferred;
	unsigned long seen;
};

static const char *hook_name(unsigned hook)
{
	switch (hook) {
	case NF_INET_PRE_ROUTING:
		return "prerouting";
	case NF_INET_LOCAL_IN:
		return "input";
	case NF_INET_FORWARD:
		return "forward";
	case NF_INET_LOCAL_OUT:
		return "output";
	case NF_INET_POST_ROUTING:
		return "postrouting";
	default:
		return "?";
	}
}

static const char *ifname_or_dash(uint32_t ifindex, char *buf)
{
	if (ifindex == 0 || if_indextoname(ifindex, buf) == NULL)
		return "-";
	return buf;
}

/* Locates the PGM header of an IPv4 datagram (IP protocol 113, or UDP). -1 if none. */
static int pgm_offset(const uint8_t *p, size_t len, int *proto)
{
	size_t ihl;

	if (len < 20 || (p[0] >> 4) != 4)
		return -1;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	*proto = p[9];
	if (ihl < 20 || len < ihl + 16)
		return -1;
	if (p[9] == 113)
		return (int)ihl;
	if (p[9] == 17 && len >= ihl + 8 + 16)
		return (int)(ihl + 8);
	return -1;
}

static uint16_t csum16(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void on_packet(void *ctx, struct nfqueue *q, const struct nfqueue_packet *pkt)
{
	struct consumer *c = ctx;
	char in[IF_NAMESIZE], out[IF_NAMESIZE];
	int proto = -1, off = pgm_offset(pkt->payload, pkt->len, &proto);
	int type = off >= 0 ? pkt->payload[off + 4] & 0x0f : -1;
	const char *verdict = "accept";

	c->seen++;
	if (c->pcap != NULL)
		pcap_writer_write(c->pcap, pkt->payload, pkt->len, NULL);
	if (c->o->hold) {
		verdict = "held";
	} else if (c->o->defer_every && c->seen % c->o->defer_every == 0 && c->ndeferred < 4096) {
		c->deferred[c->ndeferred++] = pkt->id;
		verdict = "deferred";
	} else if (type >= 0 && type == c->o->drop_type) {
		nfqueue_verdict(q, pkt->id, NFQUEUE_DROP);
		verdict = "drop";
	} else if (c->o->rewrite_spm && type == 0 && proto == 113 && pkt->len >= (size_t)off + 36 &&
		   pkt->len <= 2048) {
		uint8_t copy[2048];
		struct in_addr path = c->o->rewrite_addr;
		uint16_t sum;

		if (c->rt != NULL) {
			const struct rtnl_if *ifp;

			(void)rtnl_process(c->rt);
			ifp = rtnl_if_by_index(c->rt, (int)pkt->out_ifindex);
			if (ifp != NULL && ifp->has_primary4)
				path = ifp->primary4;
		}
		memcpy(copy, pkt->payload, pkt->len);
		/* SPM_PATH (AFI 1) at PGM offset 32; checksum over the TPDU with the field 0 */
		memcpy(copy + off + 32, &path, 4);
		copy[off + 6] = copy[off + 7] = 0;
		sum = csum16(copy + off, pkt->len - (size_t)off);
		if (sum == 0)
			sum = 0xffff;
		copy[off + 6] = (uint8_t)(sum >> 8);
		copy[off + 7] = (uint8_t)sum;
		nfqueue_verdict_payload(q, pkt->id, copy, pkt->len);
		verdict = "rewritten";
	} else {
		nfqueue_verdict(q, pkt->id, NFQUEUE_ACCEPT);
	}
	printf("pkt id=%u hook=%s in=%s out=%s len=%zu proto=%d type=%s verdict=%s\n", pkt->id,
		hook_name(pkt->hook), ifname_or_dash(pkt->in_ifindex, in),
		ifname_or_dash(pkt->out_ifindex, out), pkt->len, proto,
		type >= 0 ? type_names[type] : "-", verdict);
	fflush(stdout);
}

static int cmd_consume(const struct opts *o)
{
	struct consumer c = {.o = o};
	struct nfqueue_config qcfg;
	struct nfqueue_stats st;
	struct nfqueue_kernel_stats ks;
	struct rules *r = NULL;
	struct nfqueue *q;
	char err[512];
	double start;
	int rc = 0;

	catch_stop_signals();
	if (o->pcap != NULL) {
		struct pcap_writer_config pc;

		pcap_writer_config_default(&pc);
		c.pcap = pcap_writer_open(o->pcap, &pc, err, sizeof(err));
		if (c.pcap == NULL)
			die("%s", err);
	}
	if (o->rewrite_egress) {
		c.rt = rtnl_new(NULL, NULL);
		if (c.rt == NULL || rtnl_open(c.rt, err, sizeof(err)) < 0)
			die("%s", err);
	}
	nfqueue_config_default(&qcfg);
	qcfg.queue_num = (uint16_t)o->queue;
	qcfg.max_queue_len = o->max_queue;
	q = nfqueue_open(&qcfg, on_packet, &c, err, sizeof(err));
	if (q == NULL) {
		warn_err(err);
		return 1;
	}
	nfqueue_set_hold_drops(q, o->hold_drops);
	if (o->nifs > 0) {
		r = rules_from_opts(o);
		if (rules_install(r, o->backend, (const char *const *)o->ifs, o->nifs, err,
			    sizeof(err)) < 0) {
			warn_err(err);
			nfqueue_close(q);
			rules_free(r);
			return 1;
		}
		printf("rules backend=%s\n", rules_backend_name(rules_backend(r)));
		if (o->update) {
			/* The set of assisted interfaces changes at run time. */
			if (rules_update(r, (const char *const *)o->update_ifs, o->nupdate_ifs, err,
				    sizeof(err)) < 0) {
				warn_err(err);
				rc = 1;
			} else {
				printf("rules updated interfaces=%zu\n", o->nupdate_ifs);
			}
		}
		fflush(stdout);
	}
	touch(o->ready);
	start = now_seconds();
	while (keep_running(o, start, c.seen)) {
		struct pollfd pfd = {.fd = nfqueue_fd(q), .events = POLLIN};

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		if ((pfd.revents & POLLIN) && nfqueue_process(q, 16) < 0) {
			fprintf(stderr, "dp-harness: receive: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		/* Deferred packets get their verdicts after the round, out of order. */
		for (size_t i = 0; i < c.ndeferred; i++) {
			nfqueue_verdict(q, c.deferred[i], NFQUEUE_ACCEPT);
			printf("late-verdict id=%u verdict=accept\n", c.deferred[i]);
		}
		if (c.ndeferred) {
			c.ndeferred = 0;
			nfqueue_flush(q);
			fflush(stdout);
		}
	}
	/* drop verdicts still held (--hold-drops) go out before the counters are read */
	nfqueue_flush(q);
	nfqueue_get_stats(q, &st);
	nfqueue_get_kernel_stats(q, &ks);
	printf("stats packets=%" PRIu64 " accepted=%" PRIu64 " dropped=%" PRIu64
	       " rewritten=%" PRIu64 " batches=%" PRIu64 " batched=%" PRIu64
	       " verdict_messages=%" PRIu64 " sends=%" PRIu64 " held_rounds=%" PRIu64
	       " held=%u netlink_errors=%" PRIu64 " pending=%" PRIu64 " id_gaps=%" PRIu64
	       " rcvbuf=%u kernel_valid=%d kernel_queue_total=%u"
	       " kernel_queue_dropped=%u kernel_user_dropped=%u kernel_id_sequence=%u\n",
		st.packets, st.accepted, st.dropped, st.rewritten, st.batches, st.batched,
		st.verdict_messages, st.sends, st.held_rounds, st.held, st.netlink_errors,
		st.pending, st.id_gaps, st.rcvbuf_bytes, ks.valid, ks.queue_total, ks.queue_dropped,
		ks.user_dropped, ks.id_sequence);
	if (r != NULL) {
		struct rules_counters rc_;

		if (rules_read_counters(r, &rc_, err, sizeof(err)) == 0)
			printf("rules matched prerouting=%" PRIu64 " input=%" PRIu64 "\n",
				rc_.packets[RULES_IPT_PRE], rc_.packets[RULES_IPT_IN]);
		else
			warn_err(err);
	}
	fflush(stdout);
	nfqueue_close(q);
	if (r != NULL) {
		if (rules_remove(r, err, sizeof(err)) < 0) {
			warn_err(err);
			rc = 1;
		}
		rules_free(r);
	}
	if (c.pcap != NULL) {
		struct pcap_writer_stats ps;

		pcap_writer_get_stats(c.pcap, &ps);
		printf("pcap written=%" PRIu64 " bytes=%" PRIu64 "\n", ps.packets, ps.bytes);
		pcap_writer_close(c.pcap);
	}
	rtnl_free(c.rt);
	return rc;
}

/* ---- send: a minimal PGM packet of our own, out through rawsock ---- */

static size_t put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return 4;
}

static size_t put_nla(uint8_t *p, struct in_addr a)
{
	p[0] = 0;
	p[1] = 1; /* AFI IPv4 */
	p[2] = p[3] = 0;
	memcpy(p + 4, &a, 4);
	return 8;
}

/* Builds IPv4 [+ RA] [+ UDP] + PGM of the given type; returns the datagram length. */
static size_t build_packet(uint8_t *out, int type, struct in_addr src, struct in_addr dst,
	struct in_addr grp, int ttl, bool ra, bool udp, uint32_t sqn)
{
	uint8_t *ip = out, *pgm;
	size_t ihl = ra ? 24 : 20, l4 = udp ? 8 : 0, n;
	bool upstream = type == 8 || type == 9 || type == 2;
	uint16_t sport = upstream ? 7500 : 1234, dport = upstream ? 1234 : 7500;

	memset(out, 0, 128);
	pgm = out + ihl + l4;
	pgm[0] = (uint8_t)(sport >> 8);
	pgm[1] = (uint8_t)sport;
	pgm[2] = (uint8_t)(dport >> 8);
	pgm[3] = (uint8_t)dport;
	pgm[4] = (uint8_t)type;
	memcpy(pgm + 8, "\x01\x02\x03\x04\x05\x06", 6); /* GSI */
	n = 16;
	switch (type) {
	case 0: /* SPM: sqn, trail, lead, path NLA */
		n += put32(pgm + n, sqn);
		n += put32(pgm + n, 0);
		n += put32(pgm + n, sqn);
		n += put_nla(pgm + n, src);
		break;
	case 4: /* ODATA, RDATA: sqn, trail, payload */
	case 5:
		n += put32(pgm + n, sqn);
		n += put32(pgm + n, 0);
		memcpy(pgm + n, "payload!", 8);
		n += 8;
		pgm[14] = 0;
		pgm[15] = 8; /* TSDU length */
		break;
	case 8: /* NAK, NNAK, NCF: sqn, source NLA, group NLA */
	case 9:
	case 10:
		n += put32(pgm + n, sqn);
		n += put_nla(pgm + n, type == 10 ? src : dst);
		n += put_nla(pgm + n, grp);
		break;
	case 1: /* POLL: sqn, round, s_type, path NLA, bo_ivl, rand, mask */
		n += put32(pgm + n, sqn);
		n += put32(pgm + n, 0);
		n += put_nla(pgm + n, src);
		n += put32(pgm + n, 100000);
		n += put32(pgm + n, 0);
		n += put32(pgm + n, 0);
		break;
	case 2: /* POLR: sqn, round, reserved */
		n += put32(pgm + n, sqn);
		n += put32(pgm + n, 0);
		break;
	default:
		break;
	}
	uint16_t sum = csum16(pgm, n);

	if (sum == 0)
		sum = 0xffff;
	pgm[6] = (uint8_t)(sum >> 8);
	pgm[7] = (uint8_t)sum;
	if (udp) {
		uint8_t *u = out + ihl;
		uint16_t port = upstream ? 3055 : 3056;

		u[0] = u[2] = (uint8_t)(port >> 8);
		u[1] = u[3] = (uint8_t)port;
		u[4] = (uint8_t)((8 + n) >> 8);
		u[5] = (uint8_t)(8 + n);
		/* UDP checksum 0: none, allowed over IPv4 */
	}
	ip[0] = (uint8_t)(0x40 | (ihl / 4));
	ip[2] = (uint8_t)((ihl + l4 + n) >> 8);
	ip[3] = (uint8_t)(ihl + l4 + n);
	ip[8] = (uint8_t)ttl;
	ip[9] = udp ? 17 : 113;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	if (ra) {
		ip[20] = 0x94; /* Router Alert, RFC 2113 */
		ip[21] = 0x04;
	}
	return ihl + l4 + n;
}

/* IPv6: what the daemon's output does (control/encode.c, router/assist/output.c), with the
   codec; a multicast destination makes an NCF for that group, a unicast one a NAK for
   ff3e::8000:1 (data source dst). */
static int cmd_send6(const struct opts *o)
{
	struct rawsock_config cfg;
	struct rawsock_stats st;
	struct rawsock *rs;
	struct pgm_ip_params ip = {.ttl = 64, .router_alert = o->ra, .udp = o->udp};
	struct pgm_tsi tsi = {.gsi = {1, 2, 3, 4, 5, 6}, .sport = 1234};
	struct pgm_nla grp;
	uint8_t tpdu[256], buf[512];
	char err[256];
	unsigned ifindex = 0;
	unsigned long count = o->count ? o->count : 1;
	bool multicast;

	if (o->src == NULL || o->dst == NULL || !pgm_nla_parse(&ip.src, o->src) ||
		!pgm_nla_parse(&ip.dst, o->dst) || ip.src.afi != PGM_AFI_IP6 ||
		ip.dst.afi != PGM_AFI_IP6)
		die("send needs --src and --dst IPv6 addresses%s", "");
	if (o->ifname != NULL && (ifindex = if_nametoindex(o->ifname)) == 0)
		die("no interface %s", o->ifname);
	multicast = ip.dst.addr[0] == 0xff;
	if (multicast)
		grp = ip.dst;
	else
		(void)pgm_nla_parse(&grp, "ff3e::8000:1");
	ip.udp_sport = ip.udp_dport = o->udp ? PGM_DEFAULT_UDP_MCAST_PORT : 0;
	rawsock_config_default(&cfg);
	cfg.multicast_loop = o->loop;
	cfg.ttl = o->ttl >= 0 ? o->ttl : 0;
	rs = rawsock_open(&cfg, err, sizeof(err));
	if (rs == NULL)
		die("%s", err);
	/* the lab's links are veth, Ethernet: frames, as the daemon sends them */
	if (ifindex != 0)
		(void)rawsock_set_link(rs, (int)ifindex, true);
	for (unsigned long i = 0; i < count; i++) {
		size_t tn = multicast ? pgm_build_ncf_for_tsi(tpdu, sizeof(tpdu), &tsi, 7500,
						(uint32_t)(100 + i), &ip.src, &grp, NULL)
				      : pgm_build_nak_for_tsi(tpdu, sizeof(tpdu), PGM_NAK, &tsi,
						7500, (uint32_t)(100 + i), &ip.dst, &grp, NULL);
		size_t len = tn ? pgm_build_ip(buf, sizeof(buf), &ip, tpdu, tn) : 0;

		if (len == 0)
			die("cannot build the packet%s", "");
		if (rawsock_send(rs, (int)ifindex, buf, len) < 0)
			fprintf(stderr, "dp-harness: send: %s\n", strerror(errno));
	}
	rawsock_get_stats(rs, &st);
	printf("sent packets=%" PRIu64 " bytes=%" PRIu64 " errors=%" PRIu64 " link=%" PRIu64
	       " link_unicast=%" PRIu64 "\n",
		st.packets, st.bytes,
		st.would_block + st.too_big + st.unreachable + st.bad_input + st.other_errors,
		st.link_packets, st.link_unicast);
	rawsock_close(rs);
	return st.packets == count ? 0 : 1;
}

static void print_route(void *arg, const struct mfc_route *r)
{
	char s[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];

	(void)arg;
	printf("route src=%s grp=%s iif=%s oifs=",
		mfc_route_any_source(r) ? "*" : pgm_nla_format(&r->src, s, sizeof(s)),
		pgm_nla_format(&r->grp, g, sizeof(g)),
		r->iif && if_indextoname((unsigned)r->iif, ifname) ? ifname : "-");
	for (unsigned i = 0; i < r->noifs; i++)
		printf("%s%s:%u", i ? "," : "",
			if_indextoname((unsigned)r->oif[i], ifname) ? ifname : "?", r->ttl[i]);
	printf("\n");
}

static int cmd_mfc(void)
{
	struct mfc *m = mfc_new();
	struct mfc_stats st;
	char err[256];

	if (m == NULL || mfc_open(m, err, sizeof(err)) < 0)
		die("%s", m == NULL ? "out of memory" : err);
	mfc_foreach(m, print_route, NULL);
	mfc_get_stats(m, &st);
	printf("stats routes=%zu invalid=%" PRIu64 " errors=%" PRIu64 "\n", mfc_count(m),
		st.invalid, st.errors);
	mfc_free(m);
	return 0;
}

static int cmd_send(const struct opts *o)
{
	struct rawsock_config cfg;
	struct rawsock_stats st;
	struct rawsock *rs;
	struct in_addr src, dst, grp;
	uint8_t buf[256];
	char err[256];
	int type = o->type ? parse_type_name(o->type) : 0;
	unsigned ifindex = 0;
	unsigned long count = o->count ? o->count : 1;

	if (o->src != NULL && strchr(o->src, ':') != NULL)
		return cmd_send6(o);
	if (o->src == NULL || o->dst == NULL || inet_pton(AF_INET, o->src, &src) != 1 ||
		inet_pton(AF_INET, o->dst, &dst) != 1)
		die("send needs --src and --dst IPv4 addresses%s", "");
	if (type < 0)
		die("unknown type %s", o->type);
	inet_pton(AF_INET, "239.192.0.1", &grp);
	if (IN_MULTICAST(ntohl(dst.s_addr)))
		grp = dst;
	if (o->ifname != NULL && (ifindex = if_nametoindex(o->ifname)) == 0)
		die("no interface %s", o->ifname);
	rawsock_config_default(&cfg);
	cfg.multicast_loop = o->loop;
	/* The TTL goes through the module's override, not into the packet built here. */
	cfg.ttl = o->ttl >= 0 ? o->ttl : 0;
	rs = rawsock_open(&cfg, err, sizeof(err));
	if (rs == NULL)
		die("%s", err);
	for (unsigned long i = 0; i < count; i++) {
		size_t len = build_packet(
			buf, type, src, dst, grp, 64, o->ra, o->udp, (uint32_t)(100 + i));

		if (rawsock_send(rs, (int)ifindex, buf, len) < 0)
			fprintf(stderr, "dp-harness: send: %s\n", strerror(errno));
	}
	rawsock_get_stats(rs, &st);
	printf("sent packets=%" PRIu64 " bytes=%" PRIu64 " errors=%" PRIu64 "\n", st.packets,
		st.bytes,
		st.would_block + st.too_big + st.unreachable + st.bad_input + st.other_errors);
	rawsock_close(rs);
	return st.packets == count ? 0 : 1;
}

/* ---- rtnl: print the table and every change ---- */

static void print_if(const char *what, const struct rtnl_if *ifp)
{
	char a[INET_ADDRSTRLEN] = "-";

	if (ifp->has_primary4)
		inet_ntop(AF_INET, &ifp->primary4, a, sizeof(a));
	printf("%s index=%d name=%s up=%d running=%d mtu=%u primary4=%s\n", what, ifp->ifindex,
		ifp->name, ifp->up, ifp->running, ifp->mtu, a);
}

static unsigned long rtnl_events_seen;

static void on_rtnl(void *ctx, const struct rtnl_event *ev)
{
	char a[80];

	(void)ctx;
	rtnl_events_seen++;
	switch (ev->type) {
	case RTNL_IF_ADDED:
		print_if("if-added", ev->ifp);
		break;
	case RTNL_IF_REMOVED:
		print_if("if-removed", ev->ifp);
		break;
	case RTNL_IF_CHANGED:
		printf("if-changed index=%d name=%s changes=%s%s%s%s%s%s%s old=%s\n",
			ev->ifp->ifindex, ev->ifp->name,
			ev->changes & RTNL_CHANGE_NAME ? "name," : "",
			ev->changes & RTNL_CHANGE_UP ? "up," : "",
			ev->changes & RTNL_CHANGE_RUNNING ? "running," : "",
			ev->changes & RTNL_CHANGE_MTU ? "mtu," : "",
			ev->changes & RTNL_CHANGE_PRIMARY4 ? "primary4," : "",
			ev->changes & RTNL_CHANGE_FLAGS ? "flags," : "",
			ev->changes & RTNL_CHANGE_TYPE ? "type," : "",
			ev->old_name ? ev->old_name : "-");
		print_if("  now", ev->ifp);
		break;
	case RTNL_ADDR_ADDED:
	case RTNL_ADDR_REMOVED:
		printf("%s name=%s addr=%s\n",
			ev->type == RTNL_ADDR_ADDED ? "addr-added" : "addr-removed", ev->ifp->name,
			rtnl_addr_format(ev->addr, a, sizeof(a)));
		break;
	}
}

static int cmd_rtnl(const struct opts *o)
{
	struct rtnl *rt = rtnl_new(on_rtnl, NULL);
	struct rtnl_stats st;
	char err[256];
	double start = now_seconds();

	catch_stop_signals();
	if (rt == NULL || rtnl_open(rt, err, sizeof(err)) < 0)
		die("%s", rt ? err : "out of memory");
	printf("dump-done interfaces=%zu\n", rtnl_if_count(rt));
	touch(o->ready);
	while (keep_running(o, start, rtnl_events_seen)) {
		struct pollfd pfd = {.fd = rtnl_fd(rt), .events = POLLIN};

		if (poll(&pfd, 1, 100) > 0 && rtnl_process(rt) < 0)
			die("rtnl: %s", strerror(errno));
	}
	rtnl_get_stats(rt, &st);
	printf("stats messages=%" PRIu64 " events=%" PRIu64 " dumps=%" PRIu64 " resyncs=%" PRIu64
	       " malformed=%" PRIu64 "\n",
		st.messages, st.events, st.dumps, st.resyncs, st.malformed);
	rtnl_free(rt);
	return 0;
}

/* ---- pcap-read ---- */

static int cmd_pcap_read(const char *path)
{
	struct pcap_reader_stats st;
	struct pcap_datagram d;
	struct pcap_reader *r;
	char err[256];
	int rc;

	r = pcap_reader_open(path, err, sizeof(err));
	if (r == NULL)
		die("%s", err);
	while ((rc = pcap_reader_next(r, &d, err, sizeof(err))) == 1) {
		char s[INET6_ADDRSTRLEN] = "?", t[INET6_ADDRSTRLEN] = "?";
		int proto = -1, off = -1;

		if (d.ip_version == 4 && d.len >= 20) {
			inet_ntop(AF_INET, d.ip + 12, s, sizeof(s));
			inet_ntop(AF_INET, d.ip + 16, t, sizeof(t));
			off = pgm_offset(d.ip, d.len, &proto);
		}
		printf("dgram ts=%ld.%06ld v%u len=%zu %s > %s proto=%d type=%s\n",
			(long)d.ts.tv_sec, (long)d.ts.tv_usec, d.ip_version, d.len, s, t, proto,
			off >= 0 ? type_names[d.ip[off + 4] & 0x0f] : "-");
	}
	if (rc < 0)
		die("%s", err);
	pcap_reader_get_stats(r, &st);
	printf("stats frames=%" PRIu64 " datagrams=%" PRIu64 " not_ip=%" PRIu64 "\n", st.frames,
		st.datagrams, st.not_ip);
	pcap_reader_close(r);
	return 0;
}

/* ---- sniff: libpcap on an interface, one line per PGM packet ---- */

static int cmd_sniff(const struct opts *o, const char *filter)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct bpf_program prog;
	unsigned long n = 0;
	double start;
	pcap_t *p;

	if (o->ifname == NULL)
		die("sniff needs --if%s", "");
	p = pcap_create(o->ifname, errbuf);
	if (p == NULL)
		die("%s", errbuf);
	pcap_set_snaplen(p, 65535);
	pcap_set_immediate_mode(p, 1);
	pcap_set_timeout(p, 50);
	if (pcap_activate(p) < 0)
		die("pcap: %s", pcap_geterr(p));
	if (pcap_compile(p, &prog,
		    filter ? filter : "ip proto 113 or udp port 3055 or udp port 3056", 1,
		    PCAP_NETMASK_UNKNOWN) < 0 ||
		pcap_setfilter(p, &prog) < 0)
		die("pcap filter: %s", pcap_geterr(p));
	pcap_freecode(&prog);
	pcap_setnonblock(p, 1, errbuf);
	catch_stop_signals();
	touch(o->ready);
	start = now_seconds();
	while (keep_running(o, start, n)) {
		struct pollfd pfd = {.fd = pcap_get_selectable_fd(p), .events = POLLIN};
		struct pcap_pkthdr *h;
		const u_char *data;

		poll(&pfd, 1, 50);
		while (pcap_next_ex(p, &h, &data) == 1) {
			uint8_t ver = 0;
			int off = pcap_link_ip_offset(pcap_datalink(p), data, h->caplen, &ver);
			const uint8_t *ip;
			size_t len;
			int proto = -1, po;
			char s[INET_ADDRSTRLEN], t[INET_ADDRSTRLEN], path[INET_ADDRSTRLEN] = "-";

			if (off < 0 || ver != 4)
				continue;
			ip = data + off;
			len = h->caplen - (size_t)off;
			po = pgm_offset(ip, len, &proto);
			if (po < 0)
				continue;
			inet_ntop(AF_INET, ip + 12, s, sizeof(s));
			inet_ntop(AF_INET, ip + 16, t, sizeof(t));
			size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
			bool ra = ihl >= 24 && ip[20] == 0x94;
			size_t tpdu = len - (size_t)po;
			int type = ip[po + 4] & 0x0f;
			bool csum_ok = ip[po + 6] == 0 && ip[po + 7] == 0
					       ? false
					       : csum16(ip + po, tpdu) == 0;

			if (type == 0 && tpdu >= 36)
				inet_ntop(AF_INET, ip + po + 32, path, sizeof(path));
			printf("pgm %s > %s ttl=%u ra=%d proto=%s type=%s csum=%s spm_path=%s "
			       "len=%zu\n",
				s, t, ip[8], ra, proto == 17 ? "udp" : "ip", type_names[type],
				csum_ok ? "ok" : "bad", path, len);
			n++;
		}
	}
	pcap_close(p);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	const char *cmd;

	if (argc < 2)
		die("usage: dp-harness COMMAND [options] (see the source's header)%s", "");
	cmd = argv[1];
	parse_opts(argc - 1, argv + 1, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(cmd, "rules-script") == 0)
		return cmd_rules_script(&o);
	if (strcmp(cmd, "rules-install") == 0)
		return cmd_rules_install(&o);
	if (strcmp(cmd, "rules-remove") == 0)
		return cmd_rules_remove(&o);
	if (strcmp(cmd, "consume") == 0)
		return cmd_consume(&o);
	if (strcmp(cmd, "sniff") == 0)
		return cmd_sniff(&o, optind + 1 < argc ? argv[optind + 1] : NULL);
	if (strcmp(cmd, "send") == 0)
		return cmd_send(&o);
	if (strcmp(cmd, "rtnl") == 0)
		return cmd_rtnl(&o);
	if (strcmp(cmd, "mfc") == 0)
		return cmd_mfc();
	if (strcmp(cmd, "pcap-read") == 0) {
		if (argc < 3)
			die("pcap-read needs a file%s", "");
		return cmd_pcap_read(argv[2]);
	}
	die("unknown command %s", cmd);
	return 2;
}

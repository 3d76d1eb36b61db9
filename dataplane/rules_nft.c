/*
 * The nftables backend of the interception rules: the table's layout as data, rendered as an nft
 * script (rules_nft_script) and as an nf_tables netlink batch, which is what gets committed.
 * See rules_layout.h for the layout and why it is shaped so.
 */
#include "dataplane/rules_layout.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <linux/rtnetlink.h>

#include "dataplane/netlink.h"

#define NFT_PRIORITY	   (-151) /* NF_IP_PRI_MANGLE - 1 */
#define NFT_PRIORITY_TEXT  "mangle - 1"
#define NFT_TIMEOUT_MS	   5000
#define NFT_MSG_ROOM	   8192u /* more than any one message of ours */
#define LAYOUT_MAX_CHAINS  ((5 + 2 * RULES_POLICE_CLASS_COUNT) * RULES_IPT_CHAIN_COUNT + 1)
#define LAYOUT_MAX_MATCHES 4
#define LAYOUT_CHAIN_NAME  32
#define NFT_REG		   NFT_REG_1
#define NFT_SET_NAME	   "udp_ports" /* the encapsulation ports, when more than one range */
#define NFT_SET_ID	   1
/* The chain that makes the kernel reassemble fragments before the queue rules see them
   (ex_defrag; dataplane/README, Fragments), and the port its never-run rule names. */
#define DEFRAG_CHAIN "defrag"
#define DEFRAG_PORT  9
#define NFT_TYPE_INET_SERVICE 13 /* nft's data type number: `nft list` shows ports */
#define NFT_TYPE_IPADDR	      7	 /* ... addresses */
#define NFT_TYPE_IP6ADDR      8	 /* ... IPv6 addresses */
#define NFT_TYPE_IFINDEX      20 /* ... interfaces */
/* The policing sets (one per class and key): an element per source address or interface,
   gone when idle for longer than a full bucket takes to fill. A full source set adds no
   element: that packet is policed by its interface's bucket alone. */
#define NFT_POLICE_SET_ID	   2 /* + class * RULES_POLICE_KEY_COUNT + key */
#define NFT_POLICE_SOURCES	   65536
#define NFT_POLICE_TIMEOUT_MS	   10000

const struct rules_hook rules_hooks[RULES_IPT_CHAIN_COUNT] = {
	{RULES_IPT_PRE, "prerouting", "PREROUTING", "PRE", NF_INET_PRE_ROUTING, false, false, 3,
		{RULES_T_POLL, RULES_T_POLR, RULES_T_NCF}, 2, {RULES_T_NAK, RULES_T_NNAK}, 2,
		{RULES_T_SPM, RULES_T_RDATA}, false, 1, {RULES_T_NAK}},
	{RULES_IPT_IN, "input", "INPUT", "IN", NF_INET_LOCAL_IN, false, true, 3,
		{RULES_T_RDATA, RULES_T_NAK, RULES_T_NNAK}, 0, {0}, 0, {0}, false, 0, {0}},
	{RULES_IPT_FWD, "forward", "FORWARD", "FWD", NF_INET_FORWARD, true, false, 0, {0}, 0, {0},
		0, {0}, true, 0, {0}},
};

unsigned rules_short_datagram_len(bool udp)
{
	return 20 + (udp ? 8 : 0) + 16 /* the PGM common header */;
}

/* What `ip length` / `ip6 length` is compared with: IPv4's total length counts the header,
   IPv6's payload length does not (it counts extension headers: a PGM header behind them
   that is short goes unqueued, its type unreadable). */
static uint16_t short_len(enum rules_family f, bool udp)
{
	return (uint16_t)(f == RULES_IPV6 ? (udp ? 8 : 0) + 16 : rules_short_datagram_len(udp));
}

const char *rules_family_name(enum rules_family f)
{
	return f == RULES_IPV6 ? "ip6" : "ip";
}

const char *rules_nft_queue_name(enum rules_nft_queue q)
{
	return q == RULES_NFT_QUEUE_XT ? "xtables NFQUEUE target" : "queue statement";
}

/* ---- the layout as data ---- */

enum match_kind {
	M_IP_PROTO,    /* ip protocol == a; IPv6: meta l4proto, after any extension headers */
	M_UDP_DPORT,   /* udp dport a-b (a == b: one port) */
	M_UDP_DPORT_SET, /* udp dport @udp_ports */
	M_PGM_TYPE,    /* the type nibble, `off` bytes into the transport header, == a */
	M_IP_LEN_LT,   /* ip length < a (ip6 length: the payload's) */
	M_IP_LEN_GE,   /* ip length >= a */
	M_DADDR_MCAST, /* ip daddr 224.0.0.0/4, ip6 daddr ff00::/8 */
	M_IIFNAME,     /* iifname == ifname */
	M_OIFNAME,     /* oifname == ifname */
	M_NOT_LOCAL,   /* fib daddr type != local */
	M_BYTE_RANGE,  /* the byte `off` bytes into the transport header, a-b (steering) */
};

struct match {
	enum match_kind kind;
	uint8_t off;
	uint16_t a, b;
	const char *ifname;
};

/* V_POLICE: the packet's bucket (class, key) updated; over the limit: counted and dropped.
   V_DEFRAG: the defragmentation anchor (DEFRAG_CHAIN), a rule no packet reaches. */
enum verdict_kind { V_ACCEPT, V_GOTO, V_QUEUE, V_POLICE, V_DEFRAG };

struct rule {
	struct match m[LAYOUT_MAX_MATCHES];
	unsigned nmatch;
	enum verdict_kind verdict;
	unsigned target; /* chain index for V_GOTO; class * RULES_POLICE_KEY_COUNT + key for
			    V_POLICE; the worker (queue_num + target) for V_QUEUE */
};

struct chain {
	char name[LAYOUT_CHAIN_NAME];
	int hook; /* index into rules_hooks for a base chain, -1 for a regular one */
	struct rule *rules;
	size_t nrules, cap;
};

struct layout {
	enum rules_family family;
	struct chain chains[LAYOUT_MAX_CHAINS];
	unsigned nchains;
	const struct pgm_port_set *ports; /* the set udp_ports, NULL when there is none */
	/* the policing in force (no interfaces: none), by class and key; rate 0: none */
	struct rules_police police[RULES_POLICE_CLASS_COUNT][RULES_POLICE_KEY_COUNT];
	bool failed;
};

int rules_police_class_of(uint8_t type)
{
	switch (type) {
	case RULES_T_NAK:
	case RULES_T_NNAK:
		return RULES_POLICE_NAK;
	case RULES_T_NCF:
		return RULES_POLICE_NCF;
	case RULES_T_SPM:
	case RULES_T_POLL:
	case RULES_T_POLR:
		return RULES_POLICE_SPM;
	default:
		return -1;
	}
}

static bool police_on(const struct layout *L, int k)
{
	return k >= 0 && (L->police[k][RULES_POLICE_SOURCE].rate > 0 ||
				 L->police[k][RULES_POLICE_INTERFACE].rate > 0);
}

/* "police_nak_src", the set of a class and key */
static const char *police_set_name(unsigned set, char *buf, size_t len)
{
	snprintf(buf, len, "police_%s_%s",
		rules_police_class_name((enum rules_police_class)(set / RULES_POLICE_KEY_COUNT)),
		set % RULES_POLICE_KEY_COUNT == RULES_POLICE_SOURCE ? "src" : "if");
	return buf;
}

static unsigned layout_chain(struct layout *L, const char *prefix, const char *hook_name, int hook)
{
	struct chain *c;

	if (L->nchains == LAYOUT_MAX_CHAINS) {
		L->failed = true;
		return 0;
	}
	c = &L->chains[L->nchains];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s%s", prefix, hook_name);
	c->hook = hook;
	return L->nchains++;
}

static struct rule *layout_rule(struct layout *L, unsigned chain)
{
	struct chain *c = &L->chains[chain];

	if (L->failed)
		return NULL;
	if (c->nrules == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct rule *n = realloc(c->rules, cap * sizeof(*n));

		if (n == NULL) {
			L->failed = true;
			return NULL;
		}
		c->rules = n;
		c->cap = cap;
	}
	memset(&c->rules[c->nrules], 0, sizeof(c->rules[0]));
	return &c->rules[c->nrules++];
}

static void rule_match(struct rule *r, enum match_kind kind, uint16_t a, uint16_t b, uint8_t off)
{
	if (r == NULL || r->nmatch == LAYOUT_MAX_MATCHES)
		return;
	r->m[r->nmatch++] = (struct match){.kind = kind, .a = a, .b = b, .off = off};
}

static void rule_ifname(struct rule *r, bool out, const char *ifname)
{
	if (r == NULL || r->nmatch == LAYOUT_MAX_MATCHES)
		return;
	r->m[r->nmatch++] = (struct match){.kind = out ? M_OIFNAME : M_IIFNAME, .ifname = ifname};
}

static void rule_verdict(struct rule *r, enum verdict_kind v, unsigned target)
{
	if (r == NULL)
		return;
	r->verdict = v;
	r->target = target;
}

/* To the queue: the queue rule itself with one worker, else the hook's steering chain. */
static void rule_queue(struct rule *r, unsigned steer)
{
	if (steer != 0)
		rule_verdict(r, V_GOTO, steer);
	else
		rule_verdict(r, V_QUEUE, 0);
}

static void layout_free(struct layout *L)
{
	for (unsigned i = 0; i < L->nchains; i++)
		free(L->chains[i].rules);
	L->nchains = 0;
}

/* The destination port match of PGM over UDP: one range (the defaults 3055-3056, ZeroMQ's one
 * port) is a comparison, the cheapest match for ODATA over UDP; more are one set lookup. */
static void rule_udp_ports(struct rule *r, const struct rules_config *cfg)
{
	const struct pgm_port_set *p = &cfg->udp_ports;

	if (p->n == 1)
		rule_match(r, M_UDP_DPORT, p->r[0].lo, p->r[0].hi, 0);
	else
		rule_match(r, M_UDP_DPORT_SET, 0, 0, 0);
}

/* Where a type queued on the interface goes from the classify chain: its class's chain
   when the class is policed (gate[class] != 0), else the queue chain. */
static unsigned type_target(const unsigned *gate, uint8_t type, unsigned queue)
{
	int k = rules_police_class_of(type);

	return k >= 0 && gate[k] != 0 ? gate[k] : queue;
}

/* The policing rules of a class, each behind the matches of `like` (nmatch of them). */
static void layout_police(struct layout *L, unsigned chain, int k, const struct rule *like)
{
	for (unsigned key = 0; police_on(L, k) && key < RULES_POLICE_KEY_COUNT; key++) {
		struct rule *r;

		if (L->police[k][key].rate == 0)
			continue;
		r = layout_rule(L, chain);
		if (r == NULL)
			return;
		if (like != NULL) {
			memcpy(r->m, like->m, sizeof(r->m));
			r->nmatch = like->nmatch;
		}
		rule_verdict(r, V_POLICE, (unsigned)k * RULES_POLICE_KEY_COUNT + key);
	}
}

/* The PGM-specific part of one hook for one encapsulation: chain `classify`. */
static void layout_classify(struct layout *L, const struct rules_hook *h, unsigned classify,
	unsigned queue, unsigned steer, const unsigned *gate, bool udp, bool any_interface)
{
	uint8_t off = udp ? 8 + 4 : 4;
	struct rule *r;

	r = layout_rule(L, classify);
	rule_match(r, M_IP_LEN_LT, short_len(L->family, udp), 0, 0);
	rule_verdict(r, V_GOTO, queue);
	for (unsigned t = 0; t < h->ntypes; t++) {
		r = layout_rule(L, classify);
		rule_match(r, M_PGM_TYPE, h->types[t], 0, off);
		rule_verdict(r, V_GOTO, type_target(gate, h->types[t], queue));
	}
	for (unsigned t = 0; t < h->nmcast_types; t++) {
		r = layout_rule(L, classify);
		rule_match(r, M_PGM_TYPE, h->mcast_types[t], 0, off);
		rule_match(r, M_DADDR_MCAST, 0, 0, 0);
		rule_verdict(r, V_GOTO, type_target(gate, h->mcast_types[t], queue));
	}
	for (unsigned t = 0; t < h->ntransit_types; t++) {
		/* after the multicast rule above: unicast here */
		r = layout_rule(L, classify);
		rule_match(r, M_PGM_TYPE, h->transit_types[t], 0, off);
		rule_match(r, M_NOT_LOCAL, 0, 0, 0);
		rule_verdict(r, V_GOTO, type_target(gate, h->transit_types[t], queue));
	}
	for (unsigned t = 0; any_interface && t < h->nrepl_types; t++) {
		struct rule like = {0};

		/* from any interface: policed here, in front of the queue rule */
		rule_match(&like, M_PGM_TYPE, h->repl_types[t], 0, off);
		rule_match(&like, M_DADDR_MCAST, 0, 0, 0);
		layout_police(L, classify, rules_police_class_of(h->repl_types[t]), &like);
		r = layout_rule(L, classify);
		rule_match(r, M_PGM_TYPE, h->repl_types[t], 0, off);
		rule_match(r, M_DADDR_MCAST, 0, 0, 0);
		rule_queue(r, steer);
	}
}

static bool hook_has_class(const struct rules_hook *h, int k)
{
	for (unsigned t = 0; t < h->ntypes; t++)
		if (rules_police_class_of(h->types[t]) == k)
			return true;
	for (unsigned t = 0; t < h->nmcast_types; t++)
		if (rules_police_class_of(h->mcast_types[t]) == k)
			return true;
	for (unsigned t = 0; t < h->ntransit_types; t++)
		if (rules_police_class_of(h->transit_types[t]) == k)
			return true;
	return false;
}

/*
 * A policed class of one hook: chain K-HOOK sends what arrives on an interface with router
 * assist to police-K-HOOK (anything else goes on unqueued and unpoliced, as it would without
 * policing), which updates the buckets and goes to the queue chain. Returns K-HOOK.
 */
static unsigned layout_gate(struct layout *L, const struct rules_hook *h, int k, unsigned queue,
	const char *const *ifnames, size_t count)
{
	char prefix[LAYOUT_CHAIN_NAME];
	unsigned gate, police;
	struct rule *r;

	snprintf(prefix, sizeof(prefix), "%s-", rules_police_class_name((enum rules_police_class)k));
	gate = layout_chain(L, prefix, h->nft_chain, -1);
	snprintf(prefix, sizeof(prefix), "police-%s-",
		rules_police_class_name((enum rules_police_class)k));
	police = layout_chain(L, prefix, h->nft_chain, -1);
	if (L->failed)
		return 0;
	for (size_t i = 0; i < count; i++) {
		r = layout_rule(L, gate);
		rule_ifname(r, h->by_output, ifnames[i]);
		rule_verdict(r, V_GOTO, police);
	}
	layout_police(L, police, k, NULL);
	r = layout_rule(L, police);
	rule_verdict(r, V_GOTO, queue);
	return gate;
}

/*
 * Several workers: the hook's steering chain picks the queue from the GSI's last byte
 * (rules_worker_of_gsi), PGM over IP first, then over UDP (8 bytes further). A datagram too
 * short for the GSI matches no range (the payload cannot be loaded) and goes to the first queue
 * with the rest of worker 0's.
 */
static void layout_steer(struct layout *L, const struct rules_config *cfg, unsigned steer)
{
	struct rule *r;

	for (int udp = 0; udp <= (cfg->udp ? 1 : 0); udp++) {
		uint8_t off = (uint8_t)(RULES_GSI_STEER_BYTE + (udp ? 8 : 0));

		for (unsigned k = 1; k < cfg->workers; k++) {
			uint8_t lo, hi;

			rules_worker_range(k, cfg->workers, &lo, &hi);
			r = layout_rule(L, steer);
			if (!udp)
				rule_match(r, M_IP_PROTO, RULES_IPPROTO_PGM, 0, 0);
			rule_match(r, M_BYTE_RANGE, lo, hi, off);
			rule_verdict(r, V_QUEUE, k);
		}
		r = layout_rule(L, steer);
		if (!udp && cfg->udp)
			rule_match(r, M_IP_PROTO, RULES_IPPROTO_PGM, 0, 0);
		rule_verdict(r, V_QUEUE, 0);
	}
}

static int layout_build(struct layout *L, const struct rules_config *cfg, enum rules_family family,
	const char *const *ifnames, size_t count)
{
	memset(L, 0, sizeof(*L));
	L->family = family;
	if (cfg->udp && (cfg->udp_ports.n == 0 || cfg->udp_ports.n > PGM_PORT_SET_MAX))
		return -1;
	if (cfg->udp && cfg->udp_ports.n > 1)
		L->ports = &cfg->udp_ports;
	if (cfg->workers > RULES_WORKERS_MAX ||
		(cfg->workers > 1 && cfg->queue_num + cfg->workers - 1u > UINT16_MAX))
		return -1;
	if (count > 0)
		memcpy(L->police, cfg->police, sizeof(L->police));
	for (unsigned hi = 0; hi < RULES_IPT_CHAIN_COUNT; hi++) {
		const struct rules_hook *h = &rules_hooks[hi];
		unsigned base, pgm, udp, queue, steer, gate[RULES_POLICE_CLASS_COUNT] = {0};
		struct rule *r;

		if (h->retired)
			continue;
		base = layout_chain(L, "", h->nft_chain, (int)hi);
		pgm = layout_chain(L, "pgm-", h->nft_chain, -1);
		udp = cfg->udp ? layout_chain(L, "udp-", h->nft_chain, -1) : 0;
		queue = layout_chain(L, "queue-", h->nft_chain, -1);
		steer = cfg->workers > 1 ? layout_chain(L, "steer-", h->nft_chain, -1) : 0;
		for (int k = 0; k < RULES_POLICE_CLASS_COUNT; k++)
			if (police_on(L, k) && hook_has_class(h, k))
				gate[k] = layout_gate(L, h, k, queue, ifnames, count);

		if (L->failed)
			break;
		/* The base chain: ODATA (the fast path) leaves by the first rule. */
		r = layout_rule(L, base);
		rule_match(r, M_IP_PROTO, RULES_IPPROTO_PGM, 0, 0);
		rule_match(r, M_PGM_TYPE, RULES_T_ODATA, 0, 4);
		rule_match(r, M_IP_LEN_GE, short_len(family, false), 0, 0);
		rule_verdict(r, V_ACCEPT, 0);
		r = layout_rule(L, base);
		rule_match(r, M_IP_PROTO, RULES_IPPROTO_PGM, 0, 0);
		rule_verdict(r, V_GOTO, pgm);
		if (cfg->udp) {
			r = layout_rule(L, base);
			rule_udp_ports(r, cfg);
			rule_match(r, M_PGM_TYPE, RULES_T_ODATA, 0, 8 + 4);
			rule_match(r, M_IP_LEN_GE, short_len(family, true), 0, 0);
			rule_verdict(r, V_ACCEPT, 0);
			r = layout_rule(L, base);
			rule_udp_ports(r, cfg);
			rule_verdict(r, V_GOTO, udp);
		}
		layout_classify(L, h, pgm, queue, steer, gate, false, count > 0);
		if (cfg->udp)
			layout_classify(L, h, udp, queue, steer, gate, true, count > 0);
		if (h->local_only) {
			r = layout_rule(L, queue);
			rule_match(r, M_NOT_LOCAL, 0, 0, 0);
			rule_verdict(r, V_ACCEPT, 0);
		}
		for (size_t i = 0; i < count; i++) {
			r = layout_rule(L, queue);
			rule_ifname(r, h->by_output, ifnames[i]);
			rule_queue(r, steer);
		}
		if (steer != 0)
			layout_steer(L, cfg, steer);
	}
	if (!L->failed)
		rule_verdict(layout_rule(L, layout_chain(L, "", DEFRAG_CHAIN, -1)), V_DEFRAG, 0);
	if (L->failed) {
		layout_free(L);
		return -1;
	}
	return 0;
}

/* ---- the nft script ---- */

static void text_match(struct rules_text *t, enum rules_family f, const struct match *m)
{
	bool v6 = f == RULES_IPV6;

	switch (m->kind) {
	case M_IP_PROTO:
		if (v6)
			rules_text_printf(t, "meta l4proto %u-%u", m->a, m->a);
		else
			rules_text_printf(t, "ip protocol %u", m->a);
		break;
	case M_UDP_DPORT:
		if (m->a == m->b)
			rules_text_printf(t, "udp dport %u", m->a);
		else
			rules_text_printf(t, "udp dport %u-%u", m->a, m->b);
		break;
	case M_UDP_DPORT_SET:
		rules_text_printf(t, "udp dport @%s", NFT_SET_NAME);
		break;
	case M_PGM_TYPE:
		rules_text_printf(t, "@th,%u,8 & 0xf == 0x%x", m->off * 8u, m->a);
		break;
	case M_IP_LEN_LT:
		rules_text_printf(t, "%s length < %u", rules_family_name(f), m->a);
		break;
	case M_IP_LEN_GE:
		rules_text_printf(t, "%s length >= %u", rules_family_name(f), m->a);
		break;
	case M_DADDR_MCAST:
		rules_text_printf(t, v6 ? "ip6 daddr ff00::/8" : "ip daddr 224.0.0.0/4");
		break;
	case M_IIFNAME:
	case M_OIFNAME:
		rules_text_printf(
			t, "%s \"%s\"", m->kind == M_IIFNAME ? "iifname" : "oifname", m->ifname);
		break;
	case M_NOT_LOCAL:
		rules_text_printf(t, "fib daddr type != local");
		break;
	case M_BYTE_RANGE:
		rules_text_printf(t, "@th,%u,8 0x%x-0x%x", m->off * 8u, m->a, m->b);
		break;
	}
}

static void text_police(struct rules_text *t, const struct layout *L, unsigned set)
{
	const struct rules_police *p =
		&L->police[set / RULES_POLICE_KEY_COUNT][set % RULES_POLICE_KEY_COUNT];
	char name[32];

	rules_text_printf(t,
		"update @%s { %s limit rate over %u/second burst %u packets } counter drop\n",
		police_set_name(set, name, sizeof(name)),
		set % RULES_POLICE_KEY_COUNT != RULES_POLICE_SOURCE ? "iif"
		: L->family == RULES_IPV6			     ? "ip6 saddr"
								     : "ip saddr",
		p->rate,
		p->burst);
}

char *rules_nft_script(
	const struct rules_config *cfg, const char *const *ifnames, size_t count, bool install)
{
	return rules_nft_script_family(cfg, RULES_IPV4, ifnames, count, install);
}

char *rules_nft_script_family(const struct rules_config *cfg, enum rules_family family,
	const char *const *ifnames, size_t count, bool install)
{
	const char *fam = rules_family_name(family);
	struct rules_text t = {0};
	struct layout L;

	if (!rules_name_valid(cfg->name) || (install && !rules_ifnames_valid(ifnames, count)))
		return NULL;
	rules_text_printf(&t,
		"# %s interception rules, generated. One transaction: the table of an\n"
		"# earlier run is replaced (or removed) as a whole.\n",
		cfg->name);
	/* "add" then "delete": works whether or not the table exists. */
	rules_text_printf(
		&t, "add table %s %s\ndelete table %s %s\n", fam, cfg->name, fam, cfg->name);
	if (!install)
		goto done;
	if (layout_build(&L, cfg, family, ifnames, count) < 0) {
		free(t.s);
		return NULL;
	}
	rules_text_printf(&t, "table %s %s {\n", fam, cfg->name);
	if (L.ports != NULL) {
		rules_text_printf(&t,
			"\tset %s {\n\t\ttype inet_service\n\t\tflags constant,interval\n"
			"\t\telements = { ",
			NFT_SET_NAME);
		for (unsigned i = 0; i < L.ports->n; i++) {
			const struct pgm_port_range *pr = &L.ports->r[i];

			if (pr->lo == pr->hi)
				rules_text_printf(&t, "%s%u", i ? ", " : "", pr->lo);
			else
				rules_text_printf(&t, "%s%u-%u", i ? ", " : "", pr->lo, pr->hi);
		}
		rules_text_printf(&t, " }\n\t}\n\n");
	}
	for (unsigned set = 0; set < RULES_POLICE_CLASS_COUNT * RULES_POLICE_KEY_COUNT; set++) {
		bool src = set % RULES_POLICE_KEY_COUNT == RULES_POLICE_SOURCE;
		char name[32];

		if (L.police[set / RULES_POLICE_KEY_COUNT][set % RULES_POLICE_KEY_COUNT].rate == 0)
			continue;
		rules_text_printf(&t,
			"\tset %s {\n\t\ttype %s\n\t\tsize %u\n\t\tflags dynamic,timeout\n"
			"\t\ttimeout %us\n\t}\n\n",
			police_set_name(set, name, sizeof(name)),
			!src ? "iface_index" : family == RULES_IPV6 ? "ipv6_addr" : "ipv4_addr",
			src ? NFT_POLICE_SOURCES : RULES_MAX_INTERFACES,
			NFT_POLICE_TIMEOUT_MS / 1000);
	}
	for (unsigned ci = 0; ci < L.nchains; ci++) {
		const struct chain *c = &L.chains[ci];

		rules_text_printf(&t, "%s\tchain %s {\n", ci ? "\n" : "", c->name);
		if (c->hook >= 0)
			rules_text_printf(&t,
				"\t\ttype filter hook %s priority %s; policy accept;\n",
				rules_hooks[c->hook].nft_chain, NFT_PRIORITY_TEXT);
		for (size_t ri = 0; ri < c->nrules; ri++) {
			const struct rule *r = &c->rules[ri];

			rules_text_printf(&t, "\t\t");
			for (unsigned mi = 0; mi < r->nmatch; mi++) {
				text_match(&t, family, &r->m[mi]);
				rules_text_printf(&t, " ");
			}
			if (r->verdict == V_ACCEPT)
				rules_text_printf(&t, "accept\n");
			else if (r->verdict == V_GOTO)
				rules_text_printf(&t, "goto %s\n", L.chains[r->target].name);
			else if (r->verdict == V_POLICE)
				text_police(&t, &L, r->target);
			else if (r->verdict == V_DEFRAG)
				rules_text_printf(&t, "meta l4proto tcp tproxy to :%u\n", DEFRAG_PORT);
			else
				rules_text_printf(&t, "counter queue num %u bypass\n",
					cfg->queue_num + r->target);
		}
		rules_text_printf(&t, "\t}\n");
	}
	rules_text_printf(&t, "}\n");
	layout_free(&L);
done:
	return rules_text_finish(&t);
}

/* ---- netlink messages ---- */

struct batch {
	uint8_t *buf;
	size_t len, cap;
	uint32_t seq;
	unsigned nmsgs;
	bool failed;
	bool ipv6; /* the table's family: ip6, else ip */
};

static bool batch_room(struct batch *b)
{
	if (b->failed)
		return false;
	if (b->len + NFT_MSG_ROOM > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64 * 1024;
		uint8_t *n;

		while (cap < b->len + NFT_MSG_ROOM)
			cap *= 2;
		n = realloc(b->buf, cap);
		if (n == NULL) {
			b->failed = true;
			return false;
		}
		b->buf = n;
		b->cap = cap;
	}
	/* attribute padding goes out as it is in the buffer */
	memset(b->buf + b->len, 0, NFT_MSG_ROOM);
	return true;
}

static struct nlmsghdr *msg_begin(
	struct batch *b, uint16_t type, uint16_t flags, uint8_t family, uint16_t res_id)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *g;

	if (!batch_room(b))
		return NULL;
	nlh = mnl_nlmsg_put_header(b->buf + b->len);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = b->seq++;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = htons(res_id);
	return nlh;
}

static void msg_end(struct batch *b, struct nlmsghdr *nlh)
{
	if (nlh == NULL)
		return;
	if (nlh->nlmsg_len > NFT_MSG_ROOM) {
		b->failed = true; /* cannot happen with our messages; refuse rather than overrun */
		return;
	}
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	b->nmsgs++;
}

static struct nlmsghdr *nft_msg(struct batch *b, uint16_t msg, uint16_t flags)
{
	return msg_begin(b, (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | msg), flags,
		b->ipv6 ? NFPROTO_IPV6 : NFPROTO_IPV4, 0);
}

static void put_u32(struct nlmsghdr *nlh, uint16_t type, uint32_t v)
{
	mnl_attr_put_u32(nlh, type, htonl(v));
}

static void put_value(struct nlmsghdr *nlh, uint16_t type, const void *v, size_t len)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);

	mnl_attr_put(nlh, NFTA_DATA_VALUE, len, v);
	mnl_attr_nest_end(nlh, nest);
}

struct expr {
	struct nlattr *elem, *data;
};

static struct expr expr_begin(struct nlmsghdr *nlh, const char *name)
{
	struct expr e;

	e.elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, name);
	e.data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	return e;
}

static void expr_end(struct nlmsghdr *nlh, struct expr e)
{
	mnl_attr_nest_end(nlh, e.data);
	mnl_attr_nest_end(nlh, e.elem);
}

static void ex_payload(struct nlmsghdr *nlh, uint32_t base, uint32_t offset, uint32_t len)
{
	struct expr e = expr_begin(nlh, "payload");

	put_u32(nlh, NFTA_PAYLOAD_DREG, NFT_REG);
	put_u32(nlh, NFTA_PAYLOAD_BASE, base);
	put_u32(nlh, NFTA_PAYLOAD_OFFSET, offset);
	put_u32(nlh, NFTA_PAYLOAD_LEN, len);
	expr_end(nlh, e);
}

static void ex_meta(struct nlmsghdr *nlh, uint32_t key)
{
	struct expr e = expr_begin(nlh, "meta");

	put_u32(nlh, NFTA_META_KEY, key);
	put_u32(nlh, NFTA_META_DREG, NFT_REG);
	expr_end(nlh, e);
}

static void ex_cmp(struct nlmsghdr *nlh, uint32_t op, const void *v, size_t len)
{
	struct expr e = expr_begin(nlh, "cmp");

	put_u32(nlh, NFTA_CMP_SREG, NFT_REG);
	put_u32(nlh, NFTA_CMP_OP, op);
	put_value(nlh, NFTA_CMP_DATA, v, len);
	expr_end(nlh, e);
}

static void ex_bitwise(struct nlmsghdr *nlh, const void *mask, size_t len)
{
	static const uint8_t zero[4];
	struct expr e = expr_begin(nlh, "bitwise");

	put_u32(nlh, NFTA_BITWISE_SREG, NFT_REG);
	put_u32(nlh, NFTA_BITWISE_DREG, NFT_REG);
	put_u32(nlh, NFTA_BITWISE_LEN, (uint32_t)len);
	put_value(nlh, NFTA_BITWISE_MASK, mask, len);
	put_value(nlh, NFTA_BITWISE_XOR, zero, len);
	expr_end(nlh, e);
}

static void ex_verdict(struct nlmsghdr *nlh, int32_t code, const char *chain)
{
	struct expr e = expr_begin(nlh, "immediate");
	struct nlattr *data, *verdict;

	put_u32(nlh, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
	data = mnl_attr_nest_start(nlh, NFTA_IMMEDIATE_DATA);
	verdict = mnl_attr_nest_start(nlh, NFTA_DATA_VERDICT);
	put_u32(nlh, NFTA_VERDICT_CODE, (uint32_t)code);
	if (chain != NULL)
		mnl_attr_put_strz(nlh, NFTA_VERDICT_CHAIN, chain);
	mnl_attr_nest_end(nlh, verdict);
	mnl_attr_nest_end(nlh, data);
	expr_end(nlh, e);
}

static void ex_counter(struct nlmsghdr *nlh)
{
	struct expr e = expr_begin(nlh, "counter");

	mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES, 0);
	mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, 0);
	expr_end(nlh, e);
}

static void ex_queue(struct nlmsghdr *nlh, enum rules_nft_queue q, uint16_t queue_num)
{
	struct expr e;

	if (q == RULES_NFT_QUEUE_STATEMENT) {
		e = expr_begin(nlh, "queue");
		mnl_attr_put_u16(nlh, NFTA_QUEUE_NUM, htons(queue_num));
		mnl_attr_put_u16(nlh, NFTA_QUEUE_TOTAL, htons(1));
		mnl_attr_put_u16(nlh, NFTA_QUEUE_FLAGS, htons(NFT_QUEUE_FLAG_BYPASS));
	} else {
		/* The target's data as iptables-nft sends it: the struct padded to 8 bytes. */
		uint8_t info[8] = {0};
		struct xt_NFQ_info_v3 nfq = {
			.queuenum = queue_num, .queues_total = 1, .flags = NFQ_FLAG_BYPASS};

		memcpy(info, &nfq, sizeof(nfq));
		e = expr_begin(nlh, "target");
		mnl_attr_put_strz(nlh, NFTA_TARGET_NAME, "NFQUEUE");
		put_u32(nlh, NFTA_TARGET_REV, 3);
		mnl_attr_put(nlh, NFTA_TARGET_INFO, sizeof(info), info);
	}
	expr_end(nlh, e);
}

/* One match as nft itself linearizes it, so that `nft list` shows the script's text. */
static void ex_match(struct nlmsghdr *nlh, enum rules_family f, const struct match *m)
{
	static const uint8_t mcast6 = 0xff;
	uint8_t b1;
	uint16_t b2;
	uint8_t mask4[4] = {0xf0, 0, 0, 0}, mcast4[4] = {0xe0, 0, 0, 0};
	char ifname[16];
	uint32_t rtn_local = RTN_LOCAL;
	struct expr e;

	switch (m->kind) {
	case M_IP_PROTO:
		b1 = (uint8_t)m->a;
		if (f == RULES_IPV6) {
			/* The upper layer, past extension headers. A range of one, not equality:
			   nft 1.0.6 aborts listing `meta l4proto 113 @th,...` (an equality sets a
			   transport protocol it has no description of); two compares cost less
			   than a jump on ODATA's path. */
			ex_meta(nlh, NFT_META_L4PROTO);
			ex_cmp(nlh, NFT_CMP_GTE, &b1, 1);
			ex_cmp(nlh, NFT_CMP_LTE, &b1, 1);
			break;
		}
		ex_payload(nlh, NFT_PAYLOAD_NETWORK_HEADER, 9, 1);
		ex_cmp(nlh, NFT_CMP_EQ, &b1, 1);
		break;
	case M_UDP_DPORT:
		b1 = IPPROTO_UDP;
		ex_meta(nlh, NFT_META_L4PROTO);
		ex_cmp(nlh, NFT_CMP_EQ, &b1, 1);
		ex_payload(nlh, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
		b2 = htons(m->a);
		if (m->a == m->b) {
			ex_cmp(nlh, NFT_CMP_EQ, &b2, 2);
			break;
		}
		ex_cmp(nlh, NFT_CMP_GTE, &b2, 2);
		b2 = htons(m->b);
		ex_cmp(nlh, NFT_CMP_LTE, &b2, 2);
		break;
	case M_UDP_DPORT_SET:
		b1 = IPPROTO_UDP;
		ex_meta(nlh, NFT_META_L4PROTO);
		ex_cmp(nlh, NFT_CMP_EQ, &b1, 1);
		ex_payload(nlh, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
		e = expr_begin(nlh, "lookup");
		mnl_attr_put_strz(nlh, NFTA_LOOKUP_SET, NFT_SET_NAME);
		put_u32(nlh, NFTA_LOOKUP_SET_ID, NFT_SET_ID);
		put_u32(nlh, NFTA_LOOKUP_SREG, NFT_REG);
		expr_end(nlh, e);
		break;
	case M_PGM_TYPE:
		b1 = 0x0f;
		ex_payload(nlh, NFT_PAYLOAD_TRANSPORT_HEADER, m->off, 1);
		ex_bitwise(nlh, &b1, 1);
		b1 = (uint8_t)m->a;
		ex_cmp(nlh, NFT_CMP_EQ, &b1, 1);
		break;
	case M_IP_LEN_LT:
	case M_IP_LEN_GE:
		b2 = htons(m->a);
		ex_payload(nlh, NFT_PAYLOAD_NETWORK_HEADER, f == RULES_IPV6 ? 4 : 2, 2);
		ex_cmp(nlh, m->kind == M_IP_LEN_LT ? NFT_CMP_LT : NFT_CMP_GTE, &b2, 2);
		break;
	case M_DADDR_MCAST:
		if (f == RULES_IPV6) {
			ex_payload(nlh, NFT_PAYLOAD_NETWORK_HEADER, 24, 1);
			ex_cmp(nlh, NFT_CMP_EQ, &mcast6, 1);
			break;
		}
		ex_payload(nlh, NFT_PAYLOAD_NETWORK_HEADER, 16, 4);
		ex_bitwise(nlh, mask4, 4);
		ex_cmp(nlh, NFT_CMP_EQ, mcast4, 4);
		break;
	case M_IIFNAME:
	case M_OIFNAME:
		memset(ifname, 0, sizeof(ifname));
		strncpy(ifname, m->ifname, sizeof(ifname) - 1);
		ex_meta(nlh, m->kind == M_IIFNAME ? NFT_META_IIFNAME : NFT_META_OIFNAME);
		ex_cmp(nlh, NFT_CMP_EQ, ifname, sizeof(ifname));
		break;
	case M_NOT_LOCAL:
		e = expr_begin(nlh, "fib");
		put_u32(nlh, NFTA_FIB_DREG, NFT_REG);
		put_u32(nlh, NFTA_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
		put_u32(nlh, NFTA_FIB_FLAGS, NFTA_FIB_F_DADDR);
		expr_end(nlh, e);
		ex_cmp(nlh, NFT_CMP_NEQ, &rtn_local, sizeof(rtn_local));
		break;
	case M_BYTE_RANGE:
		ex_payload(nlh, NFT_PAYLOAD_TRANSPORT_HEADER, m->off, 1);
		b1 = (uint8_t)m->a;
		ex_cmp(nlh, NFT_CMP_GTE, &b1, 1);
		b1 = (uint8_t)m->b;
		ex_cmp(nlh, NFT_CMP_LTE, &b1, 1);
		break;
	}
}

static void batch_begin(struct batch *b)
{
	msg_end(b, msg_begin(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
}

static void batch_end(struct batch *b)
{
	msg_end(b, msg_begin(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES));
}

static void msg_table(struct batch *b, uint16_t msg, const char *name)
{
	struct nlmsghdr *nlh =
		nft_msg(b, msg, (msg == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0) | NLM_F_ACK);

	if (nlh == NULL)
		return;
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, name);
	if (msg == NFT_MSG_NEWTABLE)
		put_u32(nlh, NFTA_TABLE_FLAGS, 0);
	msg_end(b, nlh);
}

static void msg_chain(struct batch *b, const char *table, const char *name, int hook)
{
	struct nlmsghdr *nlh = nft_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_ACK);
	struct nlattr *nest;

	if (nlh == NULL)
		return;
	mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_CHAIN_NAME, name);
	if (hook >= 0) {
		nest = mnl_attr_nest_start(nlh, NFTA_CHAIN_HOOK);
		put_u32(nlh, NFTA_HOOK_HOOKNUM, rules_hooks[hook].hooknum);
		put_u32(nlh, NFTA_HOOK_PRIORITY, (uint32_t)NFT_PRIORITY);
		mnl_attr_nest_end(nlh, nest);
		put_u32(nlh, NFTA_CHAIN_POLICY, NF_ACCEPT);
		mnl_attr_put_strz(nlh, NFTA_CHAIN_TYPE, "filter");
	}
	msg_end(b, nlh);
}

/*
 * The defragmentation anchor's expressions, `meta l4proto tcp tproxy to :DEFRAG_PORT`: the
 * tproxy expression, when the kernel takes it, registers defragmentation at prerouting in this
 * namespace for the table's family (nf_defrag_ipv4_enable, nf_defrag_ipv6_enable) and releases
 * it when the rule goes. Nothing jumps to its chain, so it never runs.
 */
static void ex_defrag(struct nlmsghdr *nlh, enum rules_family f)
{
	uint8_t tcp = IPPROTO_TCP;
	uint16_t port = htons(DEFRAG_PORT);
	struct nlattr *data;
	struct expr e;

	ex_meta(nlh, NFT_META_L4PROTO);
	ex_cmp(nlh, NFT_CMP_EQ, &tcp, 1);
	e = expr_begin(nlh, "immediate");
	put_u32(nlh, NFTA_IMMEDIATE_DREG, NFT_REG);
	data = mnl_attr_nest_start(nlh, NFTA_IMMEDIATE_DATA);
	mnl_attr_put(nlh, NFTA_DATA_VALUE, sizeof(port), &port);
	mnl_attr_nest_end(nlh, data);
	expr_end(nlh, e);
	e = expr_begin(nlh, "tproxy");
	put_u32(nlh, NFTA_TPROXY_FAMILY, f == RULES_IPV6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
	put_u32(nlh, NFTA_TPROXY_REG_PORT, NFT_REG);
	expr_end(nlh, e);
}

/* The set of encapsulation ports, an interval set as nft makes one: each range [lo, hi] is an
 * element lo and an interval end hi + 1, after an interval end at 0. */
static void set_elem(struct nlmsghdr *nlh, uint16_t port, bool end)
{
	struct nlattr *elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	uint16_t key = htons(port);

	put_value(nlh, NFTA_SET_ELEM_KEY, &key, sizeof(key));
	if (end)
		put_u32(nlh, NFTA_SET_ELEM_FLAGS, NFT_SET_ELEM_INTERVAL_END);
	mnl_attr_nest_end(nlh, elem);
}

static void msg_set(struct batch *b, const char *table)
{
	struct nlmsghdr *nlh = nft_msg(b, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_ACK);

	if (nlh == NULL)
		return;
	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_SET_NAME, NFT_SET_NAME);
	put_u32(nlh, NFTA_SET_FLAGS, NFT_SET_CONSTANT | NFT_SET_INTERVAL);
	put_u32(nlh, NFTA_SET_KEY_TYPE, NFT_TYPE_INET_SERVICE);
	put_u32(nlh, NFTA_SET_KEY_LEN, 2);
	put_u32(nlh, NFTA_SET_ID, NFT_SET_ID);
	msg_end(b, nlh);
}

/* A policing set, as nft makes one for `flags dynamic,timeout`. */
static void msg_police_set(struct batch *b, const char *table, unsigned set)
{
	uint32_t addr_len = b->ipv6 ? 16 : 4;
	struct nlmsghdr *nlh = nft_msg(b, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_ACK);
	bool src = set % RULES_POLICE_KEY_COUNT == RULES_POLICE_SOURCE;
	struct nlattr *desc;
	char name[32];

	if (nlh == NULL)
		return;
	mnl_attr_put_strz(nlh, NFTA_SET_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_SET_NAME, police_set_name(set, name, sizeof(name)));
	put_u32(nlh, NFTA_SET_FLAGS, NFT_SET_TIMEOUT | NFT_SET_EVAL);
	put_u32(nlh, NFTA_SET_KEY_TYPE,
		!src ? NFT_TYPE_IFINDEX : b->ipv6 ? NFT_TYPE_IP6ADDR : NFT_TYPE_IPADDR);
	put_u32(nlh, NFTA_SET_KEY_LEN, src ? addr_len : 4);
	put_u32(nlh, NFTA_SET_ID, NFT_POLICE_SET_ID + set);
	desc = mnl_attr_nest_start(nlh, NFTA_SET_DESC);
	put_u32(nlh, NFTA_SET_DESC_SIZE, src ? NFT_POLICE_SOURCES : RULES_MAX_INTERFACES);
	mnl_attr_nest_end(nlh, desc);
	mnl_attr_put_u64(nlh, NFTA_SET_TIMEOUT, htobe64(NFT_POLICE_TIMEOUT_MS));
	msg_end(b, nlh);
}

/* update @SET { KEY limit rate over R/second burst B packets } counter drop */
static void ex_police(struct nlmsghdr *nlh, const struct layout *L, unsigned set)
{
	const struct rules_police *p =
		&L->police[set / RULES_POLICE_KEY_COUNT][set % RULES_POLICE_KEY_COUNT];
	struct nlattr *limit, *data;
	struct expr e;
	char name[32];

	if (set % RULES_POLICE_KEY_COUNT == RULES_POLICE_SOURCE && L->family == RULES_IPV6)
		ex_payload(nlh, NFT_PAYLOAD_NETWORK_HEADER, 8, 16);
	else if (set % RULES_POLICE_KEY_COUNT == RULES_POLICE_SOURCE)
		ex_payload(nlh, NFT_PAYLOAD_NETWORK_HEADER, 12, 4);
	else
		ex_meta(nlh, NFT_META_IIF);
	e = expr_begin(nlh, "dynset");
	put_u32(nlh, NFTA_DYNSET_SREG_KEY, NFT_REG);
	put_u32(nlh, NFTA_DYNSET_OP, NFT_DYNSET_OP_UPDATE);
	mnl_attr_put_strz(nlh, NFTA_DYNSET_SET_NAME, police_set_name(set, name, sizeof(name)));
	put_u32(nlh, NFTA_DYNSET_SET_ID, NFT_POLICE_SET_ID + set);
	limit = mnl_attr_nest_start(nlh, NFTA_DYNSET_EXPR);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "limit");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u64(nlh, NFTA_LIMIT_RATE, htobe64(p->rate));
	mnl_attr_put_u64(nlh, NFTA_LIMIT_UNIT, htobe64(1));
	put_u32(nlh, NFTA_LIMIT_BURST, p->burst);
	put_u32(nlh, NFTA_LIMIT_TYPE, NFT_LIMIT_PKTS);
	put_u32(nlh, NFTA_LIMIT_FLAGS, NFT_LIMIT_F_INV);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, limit);
	expr_end(nlh, e);
	ex_counter(nlh);
	ex_verdict(nlh, NF_DROP, NULL);
}

static void msg_set_elems(struct batch *b, const char *table, const struct pgm_port_set *ports)
{
	struct nlmsghdr *nlh = nft_msg(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE | NLM_F_ACK);
	struct nlattr *list;

	if (nlh == NULL)
		return;
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, NFT_SET_NAME);
	put_u32(nlh, NFTA_SET_ELEM_LIST_SET_ID, NFT_SET_ID);
	list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	if (ports->r[0].lo != 0)
		set_elem(nlh, 0, true);
	for (unsigned i = 0; i < ports->n; i++) {
		set_elem(nlh, ports->r[i].lo, false);
		if (ports->r[i].hi != 0xffff)
			set_elem(nlh, (uint16_t)(ports->r[i].hi + 1), true);
	}
	mnl_attr_nest_end(nlh, list);
	msg_end(b, nlh);
}

static void msg_rule(struct batch *b, const char *table, const struct layout *L,
	const struct chain *c, const struct rule *r, enum rules_nft_queue q, uint16_t queue_num)
{
	struct nlmsghdr *nlh = nft_msg(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK);
	struct nlattr *exprs;

	if (nlh == NULL)
		return;
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, table);
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, c->name);
	exprs = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	for (unsigned i = 0; i < r->nmatch; i++)
		ex_match(nlh, L->family, &r->m[i]);
	switch (r->verdict) {
	case V_ACCEPT:
		ex_verdict(nlh, NF_ACCEPT, NULL);
		break;
	case V_GOTO:
		ex_verdict(nlh, NFT_GOTO, L->chains[r->target].name);
		break;
	case V_QUEUE:
		ex_counter(nlh);
		ex_queue(nlh, q, (uint16_t)(queue_num + r->target));
		break;
	case V_POLICE:
		ex_police(nlh, L, r->target);
		break;
	case V_DEFRAG:
		ex_defrag(nlh, L->family);
		break;
	}
	mnl_attr_nest_end(nlh, exprs);
	msg_end(b, nlh);
}

/* What each message of a batch is, for naming the one the kernel refuses. */
struct msg_what {
	uint32_t seq;
	const char *what; /* "table", "chain", "rule" */
	char chain[LAYOUT_CHAIN_NAME];
	unsigned index;
};

struct encoded {
	struct batch b;
	struct msg_what *what;
	size_t nwhat;
};

static void note(struct encoded *enc, const char *what, const char *chain, unsigned index)
{
	struct msg_what *w;

	if (enc == NULL || enc->what == NULL || enc->b.failed)
		return;
	w = &enc->what[enc->nwhat++];
	w->seq = enc->b.seq - 1;
	w->what = what;
	snprintf(w->chain, sizeof(w->chain), "%s", chain ? chain : "");
	w->index = index;
}

static size_t layout_rule_count(const struct layout *L)
{
	size_t n = 0;

	for (unsigned i = 0; i < L->nchains; i++)
		n += L->chains[i].nrules;
	return n;
}

/*
 * The replace (or remove, L == NULL) batch into enc; enc->what gets one entry per acknowledged
 * message. delete_after: the table is deleted again at the end of the batch (the probe).
 */
static int encode(struct encoded *enc, enum rules_family family, const char *table,
	const struct layout *L, enum rules_nft_queue q, uint16_t queue_num, uint32_t first_seq,
	bool delete_after)
{
	size_t nmsg = 6 + (L ? L->nchains + layout_rule_count(L) : 0) +
		      RULES_POLICE_CLASS_COUNT * RULES_POLICE_KEY_COUNT;

	memset(enc, 0, sizeof(*enc));
	enc->b.seq = first_seq;
	enc->b.ipv6 = family == RULES_IPV6;
	enc->what = calloc(nmsg, sizeof(*enc->what));
	if (enc->what == NULL)
		return -1;
	batch_begin(&enc->b);
	/* "new" then "delete": works whether or not the table exists (an earlier run's) */
	msg_table(&enc->b, NFT_MSG_NEWTABLE, table);
	note(enc, "table", NULL, 0);
	msg_table(&enc->b, NFT_MSG_DELTABLE, table);
	note(enc, "table", NULL, 0);
	if (L != NULL) {
		msg_table(&enc->b, NFT_MSG_NEWTABLE, table);
		note(enc, "table", NULL, 0);
		if (L->ports != NULL) {
			msg_set(&enc->b, table);
			note(enc, "set", NULL, 0);
			msg_set_elems(&enc->b, table, L->ports);
			note(enc, "set elements", NULL, 0);
		}
		for (unsigned set = 0; set < RULES_POLICE_CLASS_COUNT * RULES_POLICE_KEY_COUNT;
			set++) {
			if (L->police[set / RULES_POLICE_KEY_COUNT][set % RULES_POLICE_KEY_COUNT]
					.rate == 0)
				continue;
			msg_police_set(&enc->b, table, set);
			note(enc, "set", NULL, 0);
		}
		for (unsigned ci = 0; ci < L->nchains; ci++) {
			msg_chain(&enc->b, table, L->chains[ci].name, L->chains[ci].hook);
			note(enc, "chain", L->chains[ci].name, 0);
		}
		for (unsigned ci = 0; ci < L->nchains; ci++) {
			const struct chain *c = &L->chains[ci];

			for (size_t ri = 0; ri < c->nrules; ri++) {
				msg_rule(&enc->b, table, L, c, &c->rules[ri], q, queue_num);
				note(enc, "rule", c->name, (unsigned)ri + 1);
			}
		}
	}
	if (delete_after) {
		msg_table(&enc->b, NFT_MSG_DELTABLE, table);
		note(enc, "table", NULL, 0);
	}
	batch_end(&enc->b);
	if (enc->b.failed) {
		free(enc->b.buf);
		free(enc->what);
		memset(enc, 0, sizeof(*enc));
		return -1;
	}
	return 0;
}

int rules_nft_encode(const struct rules_config *cfg, enum rules_family family,
	const char *const *ifnames, size_t count, bool install, enum rules_nft_queue q, uint8_t **buf,
	size_t *len)
{
	struct encoded enc;
	struct layout L;
	int rc;

	*buf = NULL;
	*len = 0;
	if (!rules_name_valid(cfg->name) || (install && !rules_ifnames_valid(ifnames, count)))
		return -1;
	if (install && layout_build(&L, cfg, family, ifnames, count) < 0)
		return -1;
	rc = encode(&enc, family, cfg->name, install ? &L : NULL, q, cfg->queue_num, 1, false);
	if (install)
		layout_free(&L);
	if (rc < 0)
		return -1;
	free(enc.what);
	*buf = enc.b.buf;
	*len = enc.b.len;
	return (int)enc.b.nmsgs;
}

/* ---- talking to the kernel ---- */

/* A batch is one datagram and every message of it is acknowledged: both buffers must hold all
   of it. */
static struct mnl_socket *nl_open(size_t sndbuf, size_t rcvbuf, char *err, size_t errlen)
{
	struct mnl_socket *nl =
		netlink_open(&(struct netlink_socket_config){.bus = NETLINK_NETFILTER,
				     .sndbuf = sndbuf > (1u << 30) ? 1u << 30 : (uint32_t)sndbuf,
				     .rcvbuf = rcvbuf > (1u << 30) ? 1u << 30 : (uint32_t)rcvbuf,
				     .what = "nftables"},
			NULL, err, errlen);
	int one = 1, fd;

	if (nl == NULL)
		return NULL;
	fd = mnl_socket_get_fd(nl);
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	return nl;
}

/* The extended-ack message of an error reply, if the kernel gave one. */
static const char *ext_ack_msg(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e); /* NETLINK_CAP_ACK: the request's header only */
	const struct nlattr *attr;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	mnl_attr_for_each(attr, nlh, off)
	{
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
			mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			return mnl_attr_get_str(attr);
	}
	return NULL;
}

static void describe_refusal(const struct encoded *enc, uint32_t seq, int error, const char *extack,
	char *err, size_t errlen)
{
	const struct msg_what *w = NULL;
	char where[96] = "the batch";

	for (size_t i = 0; i < enc->nwhat; i++)
		if (enc->what[i].seq == seq)
			w = &enc->what[i];
	if (w != NULL && strcmp(w->what, "rule") == 0)
		snprintf(where, sizeof(where), "rule %u of chain %s", w->index, w->chain);
	else if (w != NULL && strcmp(w->what, "chain") == 0)
		snprintf(where, sizeof(where), "chain %s", w->chain);
	else if (w != NULL)
		snprintf(where, sizeof(where), "the table");
	snprintf(err, errlen, "the kernel refused %s: %s%s%s", where, strerror(error),
		extack ? " - " : "", extack ? extack : "");
}

/* Sends the batch and waits for every acknowledgement. 0, or -1 with err set. */
static int commit(const struct encoded *enc, char *err, size_t errlen)
{
	size_t expected = enc->nwhat, got = 0;
	struct mnl_socket *nl;
	uint8_t *rx;
	int64_t deadline;
	int rc = 0;
	uint32_t first_seq = enc->what[0].seq - 1; /* the batch's begin message */

	nl = nl_open(enc->b.len + 4096, 64 * 1024 + expected * 1024, err, errlen);
	if (nl == NULL)
		return -1;
	rx = malloc(MNL_SOCKET_BUFFER_SIZE * 4);
	if (rx == NULL) {
		snprintf(err, errlen, "out of memory");
		mnl_socket_close(nl);
		return -1;
	}
	if (mnl_socket_sendto(nl, enc->b.buf, enc->b.len) < 0) {
		snprintf(err, errlen, "cannot send to nf_tables: %s", strerror(errno));
		rc = -1;
		goto out;
	}
	deadline = netlink_now_ms() + NFT_TIMEOUT_MS;
	while (got < expected) {
		struct pollfd pfd = {.fd = mnl_socket_get_fd(nl), .events = POLLIN};
		int left = (int)(deadline - netlink_now_ms()), pr;
		ssize_t n;

		if (left <= 0) {
			snprintf(err, errlen, "no answer from nf_tables within %d ms",
				NFT_TIMEOUT_MS);
			rc = -1;
			break;
		}
		pr = poll(&pfd, 1, left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		n = recv(pfd.fd, rx, MNL_SOCKET_BUFFER_SIZE * 4, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			snprintf(err, errlen, "receiving from nf_tables: %s", strerror(errno));
			rc = -1;
			break;
		}
		int remaining = (int)n;

		for (const struct nlmsghdr *nlh = (const void *)rx; netlink_msg_ok(nlh, remaining);
			nlh = mnl_nlmsg_next(nlh, &remaining)) {
			const struct nlmsgerr *e;

			if (nlh->nlmsg_type != NLMSG_ERROR ||
				nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
				continue;
			e = mnl_nlmsg_get_payload(nlh);
			got++;
			if (e->error != 0 && rc == 0) {
				describe_refusal(enc, nlh->nlmsg_seq, -e->error, ext_ack_msg(nlh),
					err, errlen);
				rc = -1;
			}
			/* An error about the batch as a whole (EPERM): nothing else follows. */
			if (e->error != 0 && nlh->nlmsg_seq == first_seq)
				got = expected;
		}
	}
out:
	free(rx);
	mnl_socket_close(nl);
	return rc;
}

static int commit_layout(enum rules_family family, const char *table, const struct layout *L,
	enum rules_nft_queue q, uint16_t queue_num, char *err, size_t errlen)
{
	struct encoded enc;
	int rc;

	if (encode(&enc, family, table, L, q, queue_num, (uint32_t)time(NULL), false) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = commit(&enc, err, errlen);
	free(enc.b.buf);
	free(enc.what);
	return rc;
}

int rules_nft_commit(const struct rules_config *cfg, enum rules_family family,
	const char *const *ifnames, size_t count, bool install, enum rules_nft_queue q, char *err,
	size_t errlen)
{
	struct layout L;
	int rc;

	if (!rules_name_valid(cfg->name) || (install && !rules_ifnames_valid(ifnames, count))) {
		snprintf(err, errlen, "an interface or table name cannot be used in a rule");
		return -1;
	}
	if (!install)
		return commit_layout(family, cfg->name, NULL, q, cfg->queue_num, err, errlen);
	if (layout_build(&L, cfg, family, ifnames, count) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = commit_layout(family, cfg->name, &L, q, cfg->queue_num, err, errlen);
	layout_free(&L);
	return rc;
}

int rules_nft_probe(
	const struct rules_config *cfg, enum rules_nft_queue q, char *err, size_t errlen)
{
	char table[RULES_NAME_MAX + 8];
	struct layout L;
	struct rule *r;
	struct encoded enc;
	int rc;

	if (!rules_name_valid(cfg->name)) {
		snprintf(err, errlen, "invalid table name \"%s\"", cfg->name);
		return -1;
	}
	snprintf(table, sizeof(table), "%s-probe", cfg->name);
	/* A regular chain with one queue rule in a table created and deleted again in the same
	 * batch: nothing stays, whatever the outcome. */
	memset(&L, 0, sizeof(L));
	layout_chain(&L, "", "probe", -1);
	r = layout_rule(&L, 0);
	rule_match(r, M_IP_PROTO, RULES_IPPROTO_PGM, 0, 0);
	rule_verdict(r, V_QUEUE, 0);
	if (L.failed ||
		encode(&enc, RULES_IPV4, table, &L, q, cfg->queue_num, (uint32_t)time(NULL), true) <
			0) {
		layout_free(&L);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	layout_free(&L);
	rc = commit(&enc, err, errlen);
	free(enc.b.buf);
	free(enc.what);
	return rc;
}

/* ---- other tables and reading back ---- */

/* Sends one request and runs cb over the replies until the answer is complete. Returns 0, or
 * a positive errno from the kernel, or -1 for a local failure (err set). */
static int request(const void *req, size_t len, mnl_cb_t cb, void *data, char *err, size_t errlen)
{
	struct mnl_socket *nl = nl_open(len + 4096, 4u << 20, err, errlen);
	const struct nlmsghdr *nlh = req;
	uint8_t *rx;
	int rc = -1;
	int64_t deadline;

	if (nl == NULL)
		return -1;
	rx = malloc(MNL_SOCKET_BUFFER_SIZE * 4);
	if (rx == NULL || mnl_socket_sendto(nl, req, len) < 0) {
		snprintf(err, errlen, "cannot talk to nf_tables: %s", strerror(errno));
		goto out;
	}
	deadline = netlink_now_ms() + NFT_TIMEOUT_MS;
	for (;;) {
		struct pollfd pfd = {.fd = mnl_socket_get_fd(nl), .events = POLLIN};
		int left = (int)(deadline - netlink_now_ms()), pr;
		ssize_t n;
		int cbr;

		if (left <= 0) {
			snprintf(err, errlen, "no answer from nf_tables within %d ms",
				NFT_TIMEOUT_MS);
			break;
		}
		pr = poll(&pfd, 1, left);
		if (pr <= 0)
			continue; /* EINTR, or the deadline: checked above */
		n = recv(pfd.fd, rx, MNL_SOCKET_BUFFER_SIZE * 4, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			snprintf(err, errlen, "receiving from nf_tables: %s", strerror(errno));
			break;
		}
		cbr = mnl_cb_run(rx, netlink_msgs_len(rx, (size_t)n), nlh->nlmsg_seq,
			mnl_socket_get_portid(nl), cb, data);
		if (cbr == MNL_CB_ERROR) {
			rc = errno > 0 ? errno : EIO;
			break;
		}
		if (cbr == MNL_CB_STOP) {
			rc = 0;
			break;
		}
	}
out:
	free(rx);
	mnl_socket_close(nl);
	return rc;
}

static int ignore_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

int rules_nft_table_exists(enum rules_family family, const char *name, char *err, size_t errlen)
{
	struct batch b = {.seq = (uint32_t)time(NULL), .ipv6 = family == RULES_IPV6};
	struct nlmsghdr *nlh = nft_msg(&b, NFT_MSG_GETTABLE, NLM_F_ACK);
	int rc;

	if (nlh == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, name);
	msg_end(&b, nlh);
	rc = request(b.buf, b.len, ignore_cb, NULL, err, errlen);
	free(b.buf);
	if (rc == ENOENT)
		return 0;
	if (rc > 0)
		snprintf(err, errlen, "cannot read table %s: %s", name, strerror(rc));
	return rc == 0 ? 1 : -1;
}

int rules_nft_table_delete(enum rules_family family, const char *name, char *err, size_t errlen)
{
	return commit_layout(family, name, NULL, RULES_NFT_QUEUE_XT, 0, err, errlen);
}

struct dump_ctx {
	struct rules_counters *c;
};

/* The hook a chain of ours belongs to, by the name's ending (prerouting, queue-prerouting). */
static int chain_hook(const char *chain)
{
	size_t cl = strlen(chain);

	for (unsigned i = 0; i < RULES_IPT_CHAIN_COUNT; i++) {
		size_t hl = strlen(rules_hooks[i].nft_chain);

		if (cl >= hl && strcmp(chain + cl - hl, rules_hooks[i].nft_chain) == 0 &&
			(cl == hl || chain[cl - hl - 1] == '-'))
			return (int)i;
	}
	return -1;
}

/* The policing set a dynset expression updates (class * RULES_POLICE_KEY_COUNT + key), -1 for
   another set. */
static int police_set_of(const struct nlattr *data)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, data)
	{
		char name[32];

		if (mnl_attr_get_type(a) != NFTA_DYNSET_SET_NAME ||
			mnl_attr_validate(a, MNL_TYPE_NUL_STRING) != 0)
			continue;
		for (unsigned set = 0; set < RULES_POLICE_CLASS_COUNT * RULES_POLICE_KEY_COUNT;
			set++)
			if (strcmp(mnl_attr_get_str(a), police_set_name(set, name, sizeof(name))) ==
				0)
				return (int)set;
	}
	return -1;
}

static void parse_rule(const struct nlmsghdr *nlh, struct rules_counters *c)
{
	const struct nlattr *attr, *exprs = NULL;
	const char *chain = NULL;
	uint64_t packets = 0, bytes = 0;
	bool queues = false, counted = false;
	int hook, police = -1;

	mnl_attr_for_each(attr, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(attr) == NFTA_RULE_CHAIN &&
			mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			chain = mnl_attr_get_str(attr);
		else if (mnl_attr_get_type(attr) == NFTA_RULE_EXPRESSIONS)
			exprs = attr;
	}
	if (chain == NULL || exprs == NULL || (hook = chain_hook(chain)) < 0)
		return;
	mnl_attr_for_each_nested(attr, exprs)
	{
		const struct nlattr *a, *name = NULL, *data = NULL;

		mnl_attr_for_each_nested(a, attr)
		{
			if (mnl_attr_get_type(a) == NFTA_EXPR_NAME &&
				mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				name = a;
			else if (mnl_attr_get_type(a) == NFTA_EXPR_DATA)
				data = a;
		}
		if (name == NULL)
			continue;
		if (strcmp(mnl_attr_get_str(name), "queue") == 0 ||
			strcmp(mnl_attr_get_str(name), "target") == 0)
			queues = true;
		if (strcmp(mnl_attr_get_str(name), "dynset") == 0 && data != NULL)
			police = police_set_of(data);
		if (strcmp(mnl_attr_get_str(name), "counter") != 0 || data == NULL)
			continue;
		mnl_attr_for_each_nested(a, data)
		{
			if (mnl_attr_validate(a, MNL_TYPE_U64) != 0)
				continue;
			if (mnl_attr_get_type(a) == NFTA_COUNTER_PACKETS)
				packets = be64toh(mnl_attr_get_u64(a));
			else if (mnl_attr_get_type(a) == NFTA_COUNTER_BYTES)
				bytes = be64toh(mnl_attr_get_u64(a));
		}
		counted = true;
	}
	if (queues && counted) {
		c->packets[hook] += packets;
		c->bytes[hook] += bytes;
	}
	if (police >= 0 && counted)
		c->policed[police / RULES_POLICE_KEY_COUNT][police % RULES_POLICE_KEY_COUNT] +=
			packets;
}

void rules_nft_parse_dump(const uint8_t *buf, size_t len, struct rules_counters *c)
{
	int remaining = (int)len;

	memset(c, 0, sizeof(*c));
	for (const struct nlmsghdr *nlh = (const void *)buf; netlink_msg_ok(nlh, remaining);
		nlh = mnl_nlmsg_next(nlh, &remaining)) {
		if (nlh->nlmsg_type == (NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWRULE) &&
			nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct nfgenmsg)))
			parse_rule(nlh, c);
	}
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *d = data;
	struct rules_counters one;

	rules_nft_parse_dump((const uint8_t *)nlh, nlh->nlmsg_len, &one);
	for (unsigned i = 0; i < RULES_IPT_CHAIN_COUNT; i++) {
		d->c->packets[i] += one.packets[i];
		d->c->bytes[i] += one.bytes[i];
	}
	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++)
		for (unsigned key = 0; key < RULES_POLICE_KEY_COUNT; key++)
			d->c->policed[k][key] += one.policed[k][key];
	return MNL_CB_OK;
}

int rules_nft_read_counters(const struct rules_config *cfg, enum rules_family family,
	struct rules_counters *c, char *err, size_t errlen)
{
	struct batch b = {.seq = (uint32_t)time(NULL), .ipv6 = family == RULES_IPV6};
	struct nlmsghdr *nlh = nft_msg(&b, NFT_MSG_GETRULE, NLM_F_DUMP);
	struct dump_ctx d = {.c = c};
	int rc;

	memset(c, 0, sizeof(*c));
	if (nlh == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, cfg->name);
	msg_end(&b, nlh);
	rc = request(b.buf, b.len, dump_cb, &d, err, errlen);
	free(b.buf);
	if (rc > 0)
		snprintf(err, errlen, "cannot read the rules of table %s %s: %s",
			rules_family_name(family), cfg->name, strerror(rc));
	return rc == 0 ? 0 : -1;
}

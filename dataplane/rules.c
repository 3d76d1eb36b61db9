/*
 * Interception rules: script generation for nftables and iptables, backend detection, and
 * running the tools. See rules.h for what is matched and why.
 */
#include "dataplane/rules.h"
#include "dataplane/netlink.h"
#include "dataplane/rules_layout.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RULES_TOOL_TIMEOUT_MS 15000

/* ---- a growing string ---- */

void rules_text_printf(struct rules_text *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if (b->s != NULL && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = b->cap ? b->cap * 2 : 1024;

		while (ncap < b->len + (size_t)n + 1)
			ncap *= 2;
		char *ns = realloc(b->s, ncap);

		if (ns == NULL) {
			b->failed = true;
			return;
		}
		b->s = ns;
		b->cap = ncap;
	}
}

char *rules_text_finish(struct rules_text *b)
{
	if (b->failed || b->s == NULL) {
		free(b->s);
		return NULL;
	}
	return b->s;
}

/* ---- configuration ---- */

/*
 * Per source, a few times what one busy peer sends: an OpenPGM receiver NAKs at most once per
 * lost SQN, in lists of up to 63, and a downstream router sends one NAK for all of its
 * receivers; the upstream neighbour confirms each NAK the router forwards with one NCF; a
 * source sends a few SPMs per second per session. Per interface, what the daemon serves with
 * room to spare (it answers 10,000 single NAKs/s within a millisecond, tests/bench): a host
 * forging source addresses saturates no more than its own interface's share.
 */
const struct rules_police rules_police_default[RULES_POLICE_CLASS_COUNT][RULES_POLICE_KEY_COUNT] = {
	[RULES_POLICE_NAK] = {{RULES_POLICE_NAK_RATE, RULES_POLICE_NAK_BURST},
		{RULES_POLICE_IF_RATE, RULES_POLICE_IF_BURST}},
	[RULES_POLICE_NCF] = {{RULES_POLICE_NCF_RATE, RULES_POLICE_NCF_BURST},
		{RULES_POLICE_IF_RATE, RULES_POLICE_IF_BURST}},
	[RULES_POLICE_SPM] = {{RULES_POLICE_SPM_RATE, RULES_POLICE_SPM_BURST},
		{RULES_POLICE_IF_RATE, RULES_POLICE_IF_BURST}},
};

unsigned rules_worker_of_gsi(const uint8_t gsi[PGM_GSI_LEN], unsigned workers)
{
	if (workers <= 1)
		return 0;
	return (unsigned)gsi[PGM_GSI_LEN - 1] * workers / 256u;
}

void rules_worker_range(unsigned k, unsigned workers, uint8_t *lo, uint8_t *hi)
{
	/* b * n / 256 == k  <=>  ceil(k * 256 / n) <= b <= ceil((k + 1) * 256 / n) - 1 */
	if (workers <= 1) {
		*lo = 0;
		*hi = 255;
		return;
	}
	*lo = (uint8_t)((k * 256u + workers - 1) / workers);
	*hi = (uint8_t)(((k + 1) * 256u + workers - 1) / workers - 1);
}

unsigned rules_worker_of_datagram(const uint8_t *ip, size_t len, bool udp, unsigned workers)
{
	size_t at;

	if (workers <= 1 || len < 1)
		return 0;
	if ((ip[0] >> 4) == 6) {
		/* past the extension headers before the upper layer, as nft's @th */
		uint8_t next = len >= 40 ? ip[6] : 0;

		at = 40;
		while ((next == 0 || next == 43 || next == 60) && at + 2 <= len) {
			next = ip[at];
			at += ((size_t)ip[at + 1] + 1) * 8;
		}
	} else {
		at = (size_t)(ip[0] & 0x0f) * 4;
	}
	at += (udp ? 8 : 0) + RULES_GSI_STEER_BYTE;
	if (at >= len)
		return 0; /* the rules' payload match fails: the last rule, worker 0 */
	/* the rules' order: workers 1 .. n-1 by their ranges, then worker 0 */
	for (unsigned k = 1; k < workers; k++) {
		uint8_t lo, hi;

		rules_worker_range(k, workers, &lo, &hi);
		if (ip[at] >= lo && ip[at] <= hi)
			return k;
	}
	return 0;
}

void rules_config_default(struct rules_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->name, sizeof(cfg->name), "%s", RULES_DEFAULT_NAME);
	cfg->workers = 1;
	cfg->udp = true;
	cfg->udp_ports.n = 1;
	cfg->udp_ports.r[0].lo = PGM_DEFAULT_UDP_UCAST_PORT;
	cfg->udp_ports.r[0].hi = PGM_DEFAULT_UDP_MCAST_PORT;
	snprintf(cfg->iptables_restore, sizeof(cfg->iptables_restore), "iptables-restore");
	snprintf(cfg->iptables_save, sizeof(cfg->iptables_save), "iptables-save");
	snprintf(cfg->ip6tables_restore, sizeof(cfg->ip6tables_restore), "ip6tables-restore");
	snprintf(cfg->ip6tables_save, sizeof(cfg->ip6tables_save), "ip6tables-save");
	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++) {
		const struct rules_police *d = rules_police_default[k];

		cfg->police[k][RULES_POLICE_SOURCE] = d[RULES_POLICE_SOURCE];
		cfg->police[k][RULES_POLICE_INTERFACE] = d[RULES_POLICE_INTERFACE];
	}
}

const char *rules_police_class_name(enum rules_police_class k)
{
	static const char *const names[RULES_POLICE_CLASS_COUNT] = {"nak", "ncf", "spm"};

	return (unsigned)k < RULES_POLICE_CLASS_COUNT ? names[k] : "?";
}

const char *rules_backend_name(enum rules_backend b)
{
	switch (b) {
	case RULES_BACKEND_NFT:
		return "nftables";
	case RULES_BACKEND_IPTABLES:
		return "iptables";
	default:
		return "auto";
	}
}

bool rules_backend_parse(const char *text, enum rules_backend *b)
{
	if (strcmp(text, "auto") == 0)
		*b = RULES_BACKEND_AUTO;
	else if (strcmp(text, "nftables") == 0 || strcmp(text, "nft") == 0)
		*b = RULES_BACKEND_NFT;
	else if (strcmp(text, "iptables") == 0)
		*b = RULES_BACKEND_IPTABLES;
	else
		return false;
	return true;
}

/*
 * Linux allows almost anything in an interface name, but '*' is a wildcard to nft and a
 * trailing '+' to iptables, and quotes or blanks would break the scripts: such names are
 * refused rather than escaped.
 */
bool rules_ifname_valid(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (len == 0 || len > 15 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!isalnum(c) && c != '_' && c != '-' && c != '.' && c != '@')
			return false;
	}
	return true;
}

bool rules_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!isalnum(c) && c != '_' && c != '-')
			return false;
	}
	return true;
}

bool rules_ifnames_valid(const char *const *ifnames, size_t count)
{
	if (count > RULES_MAX_INTERFACES || (count > 0 && ifnames == NULL))
		return false;
	for (size_t i = 0; i < count; i++)
		if (!rules_ifname_valid(ifnames[i]))
			return false;
	return true;
}

static void ipt_proto(struct rules_text *b, const struct rules_config *cfg, bool udp)
{
	if (!udp) {
		rules_text_printf(b, "-p %u ", RULES_IPPROTO_PGM);
		return;
	}
	rules_text_printf(b, "-p udp ");
	if (cfg->udp_ports.n == 1 && cfg->udp_ports.r[0].lo == cfg->udp_ports.r[0].hi) {
		rules_text_printf(b, "--dport %u ", cfg->udp_ports.r[0].lo);
		return;
	}
	/* one multiport match: at most 15 ports, a range counting two (pgm_port_set) */
	rules_text_printf(b, "-m multiport --dports ");
	for (unsigned i = 0; i < cfg->udp_ports.n; i++) {
		const struct pgm_port_range *r = &cfg->udp_ports.r[i];

		if (r->hi == r->lo + 1)
			rules_text_printf(b, "%s%u,%u", i ? "," : "", r->lo, r->hi);
		else if (r->hi != r->lo)
			rules_text_printf(b, "%s%u:%u", i ? "," : "", r->lo, r->hi);
		else
			rules_text_printf(b, "%s%u", i ? "," : "", r->lo);
	}
	rules_text_printf(b, " ");
}

/* ---- iptables ---- */

const char *rules_ipt_chain_name(
	const struct rules_config *cfg, enum rules_ipt_chain c, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s-%s", cfg->name, rules_hooks[c].suffix);
	for (i = 0; buf[i] != '\0'; i++)
		buf[i] = (char)toupper((unsigned char)buf[i]);
	return buf;
}

static bool is_builtin_mangle_chain(const char *name, size_t len)
{
	static const char *const builtins[] = {
		"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"};

	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strlen(builtins[i]) == len && strncmp(name, builtins[i], len) == 0)
			return true;
	return false;
}

void rules_ipt_parse_save(
	const struct rules_config *cfg, const char *save_text, struct rules_ipt_state *st)
{
	char names[RULES_IPT_CHAIN_COUNT][32];
	const char *line = save_text;
	bool in_mangle = false;

	memset(st, 0, sizeof(*st));
	for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++)
		rules_ipt_chain_name(cfg, c, names[c], sizeof(names[c]));
	while (line != NULL && *line != '\0') {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		bool ours = false;
		char l[1024];

		if (len >= sizeof(l))
			len = sizeof(l) - 1;
		memcpy(l, line, len);
		l[len] = '\0';
		while (len > 0 && (l[len - 1] == '\r' || l[len - 1] == ' '))
			l[--len] = '\0';
		line = end ? end + 1 : NULL;
		if (l[0] == '#') {
			/* "# Generated by iptables-save v1.8.9 (nf_tables) on ..." */
			if (strstr(l, "(nf_tables)") != NULL)
				st->nf_tables = true;
			continue;
		}
		if (l[0] == '*') {
			in_mangle = strcmp(l, "*mangle") == 0;
			if (in_mangle)
				st->table_present = true;
			continue;
		}
		if (!in_mangle || l[0] == '\0' || strcmp(l, "COMMIT") == 0)
			continue;
		for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++) {
			char want[96];
			size_t nl = strlen(names[c]);

			/* ":NAME - [0:0]" declares our chain */
			if (l[0] == ':' && strncmp(l + 1, names[c], nl) == 0 && l[1 + nl] == ' ') {
				st->chain_present[c] = true;
				ours = true;
			}
			/* "-A NAME ..." is a rule inside it */
			snprintf(want, sizeof(want), "-A %s ", names[c]);
			if (strncmp(l, want, strlen(want)) == 0) {
				st->rules[c]++;
				ours = true;
			}
			/* "-A PREROUTING -j NAME" is our jump */
			snprintf(want, sizeof(want), "-A %s -j %s", rules_hooks[c].ipt_builtin,
				names[c]);
			if (strcmp(l, want) == 0) {
				st->jumps[c]++;
				ours = true;
			}
		}
		if (ours)
			continue;
		if (l[0] == ':') {
			size_t nlen = strcspn(l + 1, " ");

			/* ":FORWARD ACCEPT [0:0]" is a built-in chain left as the kernel makes it
			 */
			if (!is_builtin_mangle_chain(l + 1, nlen) ||
				strncmp(l + 1 + nlen, " ACCEPT", 7) != 0)
				st->foreign_content = true;
		} else {
			st->foreign_content = true;
		}
	}
}

/*
 * How one family's chains read the PGM type (rules_layout.h): a shape is where the PGM (or UDP)
 * header starts. IPv4 has one: behind the IP header, first fragment only. IPv6 has two: right
 * behind the IPv6 header, and behind one hop-by-hop, routing or destination options header
 * (a Router Alert). The u32 match reads fixed offsets, and hops over one header by its length
 * field; PGM behind anything longer is not read and so never queued (rules.h).
 */
struct ipt_fam {
	enum rules_family family;
	unsigned nshapes;
	const char *mcast; /* the multicast range for -d */
};

static const struct ipt_fam ipt_fams[RULES_FAMILY_COUNT] = {
	[RULES_IPV4] = {RULES_IPV4, 1, "224.0.0.0/4"},
	[RULES_IPV6] = {RULES_IPV6, 2, "ff00::/8"},
};

/* The type match of one shape and encapsulation. */
struct ipt_match {
	const struct ipt_fam *f;
	unsigned shape;
	bool udp;
};

/* Datagrams shorter than this (what -m length compares: the whole datagram) cannot hold a PGM
   header in any shape. */
static unsigned ipt_short_len(const struct ipt_fam *f, bool udp)
{
	return rules_short_datagram_len(udp) + (f->family == RULES_IPV6 ? 20 : 0);
}

/*
 * The u32 test up to the type list ("...=" then "0x4,0x5"):
 *  - IPv4: only the first fragment carries the header: the fragment offset, the low 13 bits
 *    of the 32-bit word at 4, is 0; "0>>22&0x3C" is the IP header length; from there "@"
 *    moves to the PGM header (or the UDP header), and N>>24&0x0F is the low nibble of the
 *    byte at N, the PGM type.
 *  - IPv6, shape 0: the next header (byte 6) is PGM (UDP), whose header is at 40.
 *  - IPv6, shape 1: the next header is hop-by-hop, routing or destination options (0, 43, 60),
 *    whose own next header (byte 40) is PGM (UDP); "40>>13&0x7F8" is its length field (byte
 *    41, in 8-byte units after the first 8) times 8, and "@" moves past it: the PGM header is
 *    at 48 from there.
 * odata_len: first the datagram long enough to hold the PGM header (IPv4's total length,
 * IPv6's payload length; behind an extension header u32 cannot tell, reading the type needs
 * 8 bytes of the PGM header).
 */
static void ipt_u32_type(struct rules_text *b, const struct ipt_match *m, bool odata_len)
{
	unsigned proto = m->udp ? 17 : RULES_IPPROTO_PGM, off = (m->udp ? 8 : 0) + 4;

	if (m->f->family == RULES_IPV4) {
		if (odata_len)
			rules_text_printf(
				b, "0&0xFFFF=%u:65535&&", rules_short_datagram_len(m->udp));
		rules_text_printf(b, "4&0x1FFF=0&&0>>22&0x3C@%u>>24&0x0F=", off);
	} else if (m->shape == 0) {
		if (odata_len)
			rules_text_printf(
				b, "4>>16=%u:65535&&", rules_short_datagram_len(m->udp) - 20);
		rules_text_printf(b, "4>>8&0xFF=%u&&%u>>24&0x0F=", proto, 40 + off);
	} else {
		rules_text_printf(b,
			"4>>8&0xFF=0,43,60&&40>>24=%u&&40>>13&0x7F8@%u>>24&0x0F=", proto, 48 + off);
	}
}

static void ipt_type_match(
	struct rules_text *b, const struct ipt_match *m, const uint8_t *types, unsigned ntypes)
{
	rules_text_printf(b, "-m u32 --u32 \"");
	ipt_u32_type(b, m, false);
	for (unsigned i = 0; i < ntypes; i++)
		rules_text_printf(b, "%s0x%X", i ? "," : "", types[i]);
	rules_text_printf(b, "\" ");
}

/* "-A CHAIN -i IF -p 113 [-m addrtype --dst-type LOCAL] ": the start of a queue rule. */
static void ipt_rule_start(struct rules_text *b, const struct rules_config *cfg, const char *chain,
	const struct rules_hook *h, const char *ifname, bool udp)
{
	rules_text_printf(b, "-A %s %s %s ", chain, h->by_output ? "-o" : "-i", ifname);
	ipt_proto(b, cfg, udp);
	if (h->local_only)
		rules_text_printf(b, "-m addrtype --dst-type LOCAL ");
}

/* The start of a rule as a callback for ipt_police: the interface's rule, with its extra
   destination match. */
struct ipt_start {
	const struct rules_config *cfg;
	const char *chain;
	const struct rules_hook *h;
	const char *ifname; /* NULL: every interface */
	bool udp;
	const char *extra; /* "-d 224.0.0.0/4 " */
};

static void ipt_start_cb(struct rules_text *b, const void *arg)
{
	const struct ipt_start *st = arg;

	if (st->ifname != NULL) {
		ipt_rule_start(b, st->cfg, st->chain, st->h, st->ifname, st->udp);
	} else {
		rules_text_printf(b, "-A %s ", st->chain);
		ipt_proto(b, st->cfg, st->udp);
	}
	rules_text_printf(b, "%s", st->extra);
}

static void ipt_queue(struct rules_text *b, const struct rules_config *cfg)
{
	rules_text_printf(b, "-j NFQUEUE --queue-num %u --queue-bypass\n", cfg->queue_num);
}

/*
 * The hashlimit table of a class and key: "NAME-nak-s" per source, "NAME-nak3" for the third
 * interface of the list (hashlimit has no mode per interface: each interface's rule has a
 * table of one bucket). At most 15 characters: the rules' name is cut to 7. The kernel keeps
 * each family's tables apart, so the ip6tables rules use the same names.
 */
static const char *ipt_police_name(const struct rules_config *cfg, unsigned k, int ifindex,
	char *buf, size_t len)
{
	if (ifindex < 0)
		snprintf(buf, len, "%.7s-%s-s", cfg->name,
			rules_police_class_name((enum rules_police_class)k));
	else
		snprintf(buf, len, "%.7s-%s%d", cfg->name,
			rules_police_class_name((enum rules_police_class)k), ifindex);
	return buf;
}

/*
 * In front of a queue rule (`start` printed by the caller for each rule, the types it queues):
 * for each policed class among the types, a rule per key dropping what is over the limit.
 * ifindex: the interface's place in the list, -1 for a rule of every interface (no interface
 * bucket then).
 */
static void ipt_police(struct rules_text *b, const struct rules_config *cfg,
	void (*start)(struct rules_text *b, const void *arg), const void *arg, const uint8_t *types,
	unsigned ntypes, const struct ipt_match *m, int ifindex)
{
	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++) {
		uint8_t mine[4];
		unsigned n = 0;

		for (unsigned t = 0; t < ntypes && n < 4; t++)
			if (rules_police_class_of(types[t]) == (int)k)
				mine[n++] = types[t];
		for (unsigned key = 0; n > 0 && key < RULES_POLICE_KEY_COUNT; key++) {
			const struct rules_police *p = &cfg->police[k][key];
			bool src = key == RULES_POLICE_SOURCE;
			char name[32];

			if (p->rate == 0 || (!src && ifindex < 0))
				continue;
			start(b, arg);
			ipt_type_match(b, m, mine, n);
			rules_text_printf(b,
				"-m hashlimit --hashlimit-above %u/sec --hashlimit-burst %u "
				"%s--hashlimit-name %s --hashlimit-htable-max %u "
				"--hashlimit-htable-expire %u -j DROP\n",
				p->rate, p->burst, src ? "--hashlimit-mode srcip " : "",
				ipt_police_name(cfg, k, src ? -1 : ifindex, name, sizeof(name)),
				src ? 65536 : 1, 10000);
		}
	}
}

/* One interface's rules at a hook, for one encapsulation and shape. */
static void ipt_if_rules(struct rules_text *b, const struct rules_config *cfg, const char *chain,
	const struct rules_hook *h, const char *ifname, int ifindex, const struct ipt_match *m)
{
	const char *mc = m->f->mcast;
	char dst[64], transit[96];
	struct ipt_start st = {cfg, chain, h, ifname, m->udp, ""};

	snprintf(dst, sizeof(dst), "-d %s ", mc);
	snprintf(transit, sizeof(transit), "! -d %s -m addrtype ! --dst-type LOCAL ", mc);
	ipt_police(b, cfg, ipt_start_cb, &st, h->types, h->ntypes, m, ifindex);
	ipt_rule_start(b, cfg, chain, h, ifname, m->udp);
	ipt_type_match(b, m, h->types, h->ntypes);
	ipt_queue(b, cfg);
	st.extra = dst;
	ipt_police(b, cfg, ipt_start_cb, &st, h->mcast_types, h->nmcast_types, m, ifindex);
	if (h->nmcast_types > 0) {
		/* -d is a native match in iptables-nft (addrtype MULTICAST is the same test
		   through the compat layer) */
		ipt_rule_start(b, cfg, chain, h, ifname, m->udp);
		rules_text_printf(b, "%s", dst);
		ipt_type_match(b, m, h->mcast_types, h->nmcast_types);
		ipt_queue(b, cfg);
	}
	st.extra = transit;
	ipt_police(b, cfg, ipt_start_cb, &st, h->transit_types, h->ntransit_types, m, ifindex);
	if (h->ntransit_types > 0) {
		/* unicast past us: NAKs to the source directly */
		ipt_rule_start(b, cfg, chain, h, ifname, m->udp);
		rules_text_printf(b, "%s", transit);
		ipt_type_match(b, m, h->transit_types, h->ntransit_types);
		ipt_queue(b, cfg);
	}
}

/* The rules for what the daemon replicates (SPM, RDATA to a group), from any interface, for one
   encapsulation and shape. */
static void ipt_repl_rules(struct rules_text *b, const struct rules_config *cfg, const char *chain,
	const struct rules_hook *h, const char *const *ifnames, size_t count,
	const struct ipt_match *m)
{
	char dst[64];
	struct ipt_start st = {cfg, chain, h, NULL, m->udp, dst};

	snprintf(dst, sizeof(dst), "-d %s ", m->f->mcast);
	/* per source from anywhere; per interface on those with assist */
	ipt_police(b, cfg, ipt_start_cb, &st, h->repl_types, h->nrepl_types, m, -1);
	for (size_t i = 0; i < count; i++) {
		struct ipt_start sti = st;
		struct rules_config only_if = *cfg;

		for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++)
			only_if.police[k][RULES_POLICE_SOURCE].rate = 0;
		sti.ifname = ifnames[i];
		ipt_police(
			b, &only_if, ipt_start_cb, &sti, h->repl_types, h->nrepl_types, m, (int)i);
	}
	rules_text_printf(b, "-A %s ", chain);
	ipt_proto(b, cfg, m->udp);
	rules_text_printf(b, "%s", dst);
	ipt_type_match(b, m, h->repl_types, h->nrepl_types);
	ipt_queue(b, cfg);
}

char *rules_ipt_script(const struct rules_config *cfg, const struct rules_ipt_state *current,
	const char *const *ifnames, size_t count, bool install)
{
	return rules_ipt_script_family(cfg, RULES_IPV4, current, ifnames, count, install);
}

char *rules_ipt_script_family(const struct rules_config *cfg, enum rules_family family,
	const struct rules_ipt_state *current, const char *const *ifnames, size_t count,
	bool install)
{
	char names[RULES_IPT_CHAIN_COUNT][32];
	struct rules_text b = {0};
	const struct ipt_fam *f;

	if ((unsigned)family >= RULES_FAMILY_COUNT || !rules_name_valid(cfg->name) ||
		(install && !rules_ifnames_valid(ifnames, count)))
		return NULL;
	f = &ipt_fams[family];
	for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++)
		rules_ipt_chain_name(cfg, c, names[c], sizeof(names[c]));
	rules_text_printf(&b,
		"# %s interception rules%s, generated; one commit of the mangle table.\n",
		cfg->name, family == RULES_IPV6 ? " (ip6tables)" : "");
	rules_text_printf(&b, "*mangle\n");
	if (install) {
		/* Declaring a chain creates it, or flushes it when an earlier run left it. */
		for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++)
			if (!rules_hooks[c].retired)
				rules_text_printf(&b, ":%s - [0:0]\n", names[c]);
		for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++) {
			const struct rules_hook *h = &rules_hooks[c];

			if (h->retired)
				continue;

			/* ODATA (long enough to be one) returns at once: every packet of the fast
			   path walks one rule per hook and shape, not one per interface. */
			for (int udp = 0; udp <= (cfg->udp ? 1 : 0); udp++) {
				for (unsigned s = 0; s < f->nshapes; s++) {
					struct ipt_match m = {f, s, udp};

					rules_text_printf(&b, "-A %s ", names[c]);
					ipt_proto(&b, cfg, udp);
					rules_text_printf(&b, "-m u32 --u32 \"");
					ipt_u32_type(&b, &m, true);
					rules_text_printf(&b, "0x%X\" -j RETURN\n", RULES_T_ODATA);
				}
			}
			for (size_t i = 0; i < count; i++) {
				for (int udp = 0; udp <= (cfg->udp ? 1 : 0); udp++) {
					for (unsigned s = 0; s < f->nshapes; s++) {
						struct ipt_match m = {f, s, udp};

						ipt_if_rules(&b, cfg, names[c], h, ifnames[i],
							(int)i, &m);
					}
					/* too short for a PGM header (u32 cannot read the type):
					   malformed whatever it is, so the daemon counts it */
					ipt_rule_start(&b, cfg, names[c], h, ifnames[i], udp);
					rules_text_printf(&b, "-m length --length 0:%u ",
						ipt_short_len(f, udp) - 1);
					ipt_queue(&b, cfg);
				}
			}
			/* replicated by the daemon: from any interface */
			for (int udp = 0;
				count > 0 && h->nrepl_types > 0 && udp <= (cfg->udp ? 1 : 0);
				udp++) {
				for (unsigned s = 0; s < f->nshapes; s++) {
					struct ipt_match m = {f, s, udp};

					ipt_repl_rules(&b, cfg, names[c], h, ifnames, count, &m);
				}
			}
		}
		/* Exactly one jump per hook, first in the built-in chain, so rules placed
		 * earlier by others cannot hide PGM from us; old jumps go first. */
		for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++) {
			unsigned old = current ? current->jumps[c] : 0;

			for (unsigned j = 0; j < old; j++)
				rules_text_printf(
					&b, "-D %s -j %s\n", rules_hooks[c].ipt_builtin, names[c]);
			if (!rules_hooks[c].retired)
				rules_text_printf(&b, "-I %s 1 -j %s\n", rules_hooks[c].ipt_builtin,
					names[c]);
			else if (current && current->chain_present[c])
				rules_text_printf(&b, "-F %s\n-X %s\n", names[c], names[c]);
		}
	} else {
		for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++) {
			unsigned old = current ? current->jumps[c] : 0;

			for (unsigned j = 0; j < old; j++)
				rules_text_printf(
					&b, "-D %s -j %s\n", rules_hooks[c].ipt_builtin, names[c]);
		}
		for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++) {
			if (current && current->chain_present[c])
				rules_text_printf(&b, "-F %s\n-X %s\n", names[c], names[c]);
		}
	}
	rules_text_printf(&b, "COMMIT\n");
	return rules_text_finish(&b);
}

char *rules_ipt_probe_script(const struct rules_config *cfg)
{
	return rules_ipt_probe_script_family(cfg, RULES_IPV4);
}

char *rules_ipt_probe_script_family(const struct rules_config *cfg, enum rules_family family)
{
	struct rules_text b = {0};
	struct ipt_match m = {&ipt_fams[family == RULES_IPV6 ? RULES_IPV6 : RULES_IPV4], 1, false};
	char name[48];

	if (!rules_name_valid(cfg->name))
		return NULL;
	if (family == RULES_IPV4)
		m.shape = 0;
	rules_ipt_chain_name(cfg, RULES_IPT_PRE, name, sizeof(name));
	/* A chain of our own, created, given a queue rule and deleted in one commit: the kernel
	 * checks the NFQUEUE target, the u32 (for IPv6 its widest test, the one behind an
	 * extension header) and addrtype matches, nothing stays. */
	strncat(name, "-PROBE", sizeof(name) - strlen(name) - 1);
	rules_text_printf(&b, "*mangle\n:%s - [0:0]\n", name);
	rules_text_printf(&b, "-A %s -p %u ", name, RULES_IPPROTO_PGM);
	ipt_type_match(&b, &m, (const uint8_t[]){RULES_T_SPM}, 1);
	rules_text_printf(&b,
		"-m addrtype --dst-type LOCAL -j NFQUEUE --queue-num %u --queue-bypass\n",
		cfg->queue_num);
	rules_text_printf(&b, "-F %s\n-X %s\nCOMMIT\n", name, name);
	return rules_text_finish(&b);
}

/* ---- running the tools ---- */

struct tool_result {
	int exec_errno; /* the tool could not be started (ENOENT: not installed) */
	int status;	/* exit status, -1 if killed or timed out */
	char *out;	/* stdout */
	char *errtext;	/* stderr */
};

static void tool_result_free(struct tool_result *res)
{
	free(res->out);
	free(res->errtext);
	memset(res, 0, sizeof(*res));
}

static void append_fd(int fd, struct rules_text *b, bool *open_flag)
{
	char chunk[4096];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n > 0)
		rules_text_printf(b, "%.*s", (int)n, chunk);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(fd);
		*open_flag = false;
	}
}

/*
 * Runs argv with `input` on its standard input and collects standard output and error. Standard
 * input is a socket so that a tool exiting early cannot raise SIGPIPE in the daemon.
 */
static int run_tool(char *const argv[], const char *input, struct tool_result *res)
{
	int in_sv[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, st_p[2] = {-1, -1};
	struct rules_text out = {0}, errb = {0};
	size_t in_len = input ? strlen(input) : 0, in_off = 0;
	bool in_open = true, out_open = true, err_open = true;
	int64_t deadline;
	pid_t pid;
	int status = 0, child_errno = 0;

	memset(res, 0, sizeof(*res));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_sv) < 0 ||
		pipe2(out_p, O_CLOEXEC) < 0 || pipe2(err_p, O_CLOEXEC) < 0 ||
		pipe2(st_p, O_CLOEXEC) < 0) {
		res->exec_errno = errno;
		goto fail_fds;
	}
	pid = fork();
	if (pid < 0) {
		res->exec_errno = errno;
		goto fail_fds;
	}
	if (pid == 0) {
		sigset_t none;
		int e;

		dup2(in_sv[1], 0);
		dup2(out_p[1], 1);
		dup2(err_p[1], 2);
		/* Only the three standard descriptors survive (everything else is CLOEXEC or
		 * unrelated to the tool). The daemon blocks signals for its signalfd; the tool
		 * must not inherit that. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(st_p[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(127);
	}
	close(in_sv[1]);
	close(out_p[1]);
	close(err_p[1]);
	close(st_p[1]);
	in_sv[1] = out_p[1] = err_p[1] = st_p[1] = -1;
	if (read(st_p[0], &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno)) {
		res->exec_errno = child_errno;
		in_open = false;
	}
	close(st_p[0]);
	st_p[0] = -1;
	if (in_len == 0 && in_open) {
		shutdown(in_sv[0], SHUT_WR);
		in_open = false;
	}
	fcntl(in_sv[0], F_SETFL, O_NONBLOCK);
	deadline = netlink_now_ms() + RULES_TOOL_TIMEOUT_MS;
	while (out_open || err_open) {
		struct pollfd pfd[3];
		int n = 0, left = (int)(deadline - netlink_now_ms());

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		pfd[n++] = (struct pollfd){.fd = out_open ? out_p[0] : -1, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = err_open ? err_p[0] : -1, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = in_open ? in_sv[0] : -1, .events = POLLOUT};
		if (poll(pfd, (nfds_t)n, left) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			append_fd(out_p[0], &out, &out_open);
		if (pfd[1].revents)
			append_fd(err_p[0], &errb, &err_open);
		if (in_open && pfd[2].revents) {
			ssize_t w = send(in_sv[0], input + in_off, in_len - in_off, MSG_NOSIGNAL);

			if (w > 0)
				in_off += (size_t)w;
			if ((w < 0 && errno != EINTR && errno != EAGAIN) || in_off == in_len) {
				shutdown(in_sv[0], SHUT_WR);
				in_open = false;
			}
		}
	}
	if (out_open)
		close(out_p[0]);
	if (err_open)
		close(err_p[0]);
	close(in_sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	res->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	res->out = rules_text_finish(&out);
	res->errtext = rules_text_finish(&errb);
	return res->exec_errno ? -1 : 0;

fail_fds:
	for (int i = 0; i < 2; i++) {
		if (in_sv[i] >= 0)
			close(in_sv[i]);
		if (out_p[i] >= 0)
			close(out_p[i]);
		if (err_p[i] >= 0)
			close(err_p[i]);
		if (st_p[i] >= 0)
			close(st_p[i]);
	}
	return -1;
}

/* The most telling line of a tool's error output: the first "Error:" line, else the first. */
static void first_error_line(const char *text, char *buf, size_t len)
{
	const char *p = text ? strstr(text, "Error:") : NULL;
	const char *start = p ? p : text;
	size_t n;

	if (start == NULL || *start == '\0') {
		snprintf(buf, len, "no error message");
		return;
	}
	while (*start == '\n' || *start == ' ')
		start++;
	n = strcspn(start, "\n");
	snprintf(buf, len, "%.*s", (int)n, start);
}

/* ---- the handle ---- */

struct rules {
	struct rules_config cfg;
	enum rules_backend backend;
	enum rules_nft_queue nft_queue; /* how the nftables backend queues */
	bool installed;
	char nft_reason[600];	 /* why nftables is not used ("" if it is) */
	char queue_reason[300];	 /* why its queue statement is not (xtables target) */
	/* per family: the mangle table did not exist before our first install */
	bool ipt_created_mangle[RULES_FAMILY_COUNT];
	/* per family: rules in place, why not, failed installs and updates */
	bool family_installed[RULES_FAMILY_COUNT];
	char family_reason[RULES_FAMILY_COUNT][300];
	uint64_t family_failures[RULES_FAMILY_COUNT];
	char **ifnames;
	size_t ifcount;
};

struct rules *rules_new(const struct rules_config *cfg)
{
	struct rules *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	if (cfg != NULL)
		r->cfg = *cfg;
	else
		rules_config_default(&r->cfg);
	return r;
}

static void rules_set_ifnames(struct rules *r, const char *const *ifnames, size_t count)
{
	for (size_t i = 0; i < r->ifcount; i++)
		free(r->ifnames[i]);
	free(r->ifnames);
	r->ifnames = NULL;
	r->ifcount = 0;
	if (count == 0)
		return;
	r->ifnames = calloc(count, sizeof(char *));
	if (r->ifnames == NULL)
		return;
	for (size_t i = 0; i < count; i++) {
		r->ifnames[i] = strdup(ifnames[i]);
		if (r->ifnames[i] == NULL)
			break;
		r->ifcount++;
	}
}

void rules_free(struct rules *r)
{
	if (r == NULL)
		return;
	rules_set_ifnames(r, NULL, 0);
	free(r);
}

bool rules_installed(const struct rules *r)
{
	return r->installed;
}

bool rules_family_installed(const struct rules *r, enum rules_family f)
{
	return r->installed && (unsigned)f < RULES_FAMILY_COUNT && r->family_installed[f];
}

const char *rules_family_unavailable_reason(const struct rules *r, enum rules_family f)
{
	return (unsigned)f < RULES_FAMILY_COUNT ? r->family_reason[f] : "";
}

uint64_t rules_family_failures(const struct rules *r, enum rules_family f)
{
	return (unsigned)f < RULES_FAMILY_COUNT ? r->family_failures[f] : 0;
}

enum rules_backend rules_backend(const struct rules *r)
{
	return r->backend;
}

const char *rules_nft_unavailable_reason(const struct rules *r)
{
	return r->nft_reason;
}

const char *rules_backend_detail(const struct rules *r, char *buf, size_t len)
{
	if (!r->installed || r->backend != RULES_BACKEND_NFT)
		snprintf(buf, len, "%s", "");
	else if (r->nft_queue == RULES_NFT_QUEUE_STATEMENT)
		snprintf(buf, len, "%s", rules_nft_queue_name(r->nft_queue));
	else
		snprintf(buf, len, "%s (%s)", rules_nft_queue_name(r->nft_queue), r->queue_reason);
	return buf;
}

size_t rules_interfaces(const struct rules *r, const char *const **names)
{
	*names = (const char *const *)r->ifnames;
	return r->ifcount;
}

/* CAP_NET_ADMIN in the effective set (root has it, so may a non-root daemon). */
static bool have_net_admin(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool ok = geteuid() == 0;

	if (f == NULL)
		return ok;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			ok = (caps >> 12) & 1; /* CAP_NET_ADMIN */
			break;
		}
	}
	fclose(f);
	return ok;
}

/* The family's tool: iptables-restore or ip6tables-restore (save: -save). */
static char *ipt_tool(struct rules *r, enum rules_family family, bool save)
{
	if (family == RULES_IPV6)
		return save ? r->cfg.ip6tables_save : r->cfg.ip6tables_restore;
	return save ? r->cfg.iptables_save : r->cfg.iptables_restore;
}

static int run_ipt_restore(
	struct rules *r, enum rules_family family, const char *script, struct tool_result *res)
{
	char *argv[] = {ipt_tool(r, family, false), "--noflush", NULL};

	return run_tool(argv, script, res);
}

/* Reads our part of the family's mangle table. Returns 0, or -1 with err set. */
static int ipt_read_state(struct rules *r, enum rules_family family, struct rules_ipt_state *st,
	char *err, size_t errlen)
{
	char *argv[] = {ipt_tool(r, family, true), "-t", "mangle", NULL};
	struct tool_result res;
	char line[200];

	if (run_tool(argv, NULL, &res) < 0) {
		snprintf(
			err, errlen, "rules: cannot run %s: %s", argv[0], strerror(res.exec_errno));
		tool_result_free(&res);
		return -1;
	}
	if (res.status != 0) {
		first_error_line(res.errtext, line, sizeof(line));
		snprintf(err, errlen, "rules: %s failed: %s", argv[0], line);
		tool_result_free(&res);
		return -1;
	}
	rules_ipt_parse_save(&r->cfg, res.out ? res.out : "", st);
	tool_result_free(&res);
	return 0;
}

/*
 * Probes nftables: the queue statement first, then the xtables NFQUEUE target. Returns true
 * when one of them can be committed (r->nft_queue says which), else records why not.
 */
static bool nft_probe(struct rules *r)
{
	char why[200], why_xt[200];

	r->queue_reason[0] = '\0';
	if (rules_nft_probe(&r->cfg, RULES_NFT_QUEUE_STATEMENT, why, sizeof(why)) == 0) {
		r->nft_queue = RULES_NFT_QUEUE_STATEMENT;
		return true;
	}
	/* A kernel without CONFIG_NFT_QUEUE cannot load the expression: ENOENT. */
	if (strstr(why, strerror(ENOENT)) != NULL)
		snprintf(r->queue_reason, sizeof(r->queue_reason),
			"the kernel has no nftables queue statement, CONFIG_NFT_QUEUE");
	else
		snprintf(r->queue_reason, sizeof(r->queue_reason), "queue statement refused: %s",
			why);
	if (rules_nft_probe(&r->cfg, RULES_NFT_QUEUE_XT, why_xt, sizeof(why_xt)) == 0) {
		r->nft_queue = RULES_NFT_QUEUE_XT;
		return true;
	}
	snprintf(r->nft_reason, sizeof(r->nft_reason), "%s; and the xtables NFQUEUE target: %s",
		r->queue_reason, why_xt);
	return false;
}

/* Probes iptables (ip6tables); returns 0 or -1 with err naming the cause. */
static int ipt_probe(struct rules *r, enum rules_family family, char *err, size_t errlen)
{
	char *script = rules_ipt_probe_script_family(&r->cfg, family);
	const char *tool = ipt_tool(r, family, false);
	struct tool_result res;
	char line[200];
	int rc = -1;

	if (script == NULL) {
		snprintf(err, errlen, "rules: invalid chain name \"%s\"", r->cfg.name);
		return -1;
	}
	if (run_ipt_restore(r, family, script, &res) < 0) {
		if (res.exec_errno == ENOENT)
			snprintf(err, errlen, "rules: %s is not installed (not found in PATH)",
				tool);
		else
			snprintf(err, errlen, "rules: cannot run %s: %s", tool,
				strerror(res.exec_errno));
	} else if (res.status != 0) {
		first_error_line(res.errtext, line, sizeof(line));
		snprintf(err, errlen,
			"rules: %s cannot install an NFQUEUE rule (kernel without NFQUEUE, "
			"u32 or addrtype support?): %s",
			family == RULES_IPV6 ? "ip6tables" : "iptables", line);
	} else {
		rc = 0;
	}
	tool_result_free(&res);
	free(script);
	return rc;
}

/*
 * The ip table, then the ip6 one in a batch of its own: a kernel without nf_tables for IPv6
 * (or one refusing the ip6 table for any reason) costs IPv6 interception only. Its failure is
 * kept and counted, not returned; its removal fails quietly where the family never existed.
 */
static int nft_apply(struct rules *r, const char *const *ifnames, size_t count, bool install,
	char *err, size_t errlen)
{
	char why[200];

	if (rules_nft_commit(&r->cfg, RULES_IPV4, ifnames, count, install, r->nft_queue, why,
		    sizeof(why)) != 0) {
		snprintf(err, errlen, "rules: nftables: cannot %s the table: %.160s",
			install ? "install" : "remove", why);
		return -1;
	}
	if (rules_nft_commit(&r->cfg, RULES_IPV6, ifnames, count, install, r->nft_queue, why,
		    sizeof(why)) == 0) {
		if (install) {
			r->family_installed[RULES_IPV4] = r->family_installed[RULES_IPV6] = true;
			r->family_reason[RULES_IPV6][0] = '\0';
		}
	} else if (install) {
		r->family_installed[RULES_IPV4] = true;
		r->family_installed[RULES_IPV6] = false;
		r->family_failures[RULES_IPV6]++;
		snprintf(r->family_reason[RULES_IPV6], sizeof(r->family_reason[RULES_IPV6]),
			"nftables cannot install the ip6 table: %.160s", why);
	}
	return 0;
}

/* "iptables-save v1.8.9 (nf_tables)": the flavour that keeps its tables in nftables. */
static bool ipt_is_nf_tables(struct rules *r, enum rules_family family)
{
	char *argv[] = {ipt_tool(r, family, true), "--version", NULL};
	struct tool_result res;
	bool yes;

	yes = run_tool(argv, NULL, &res) == 0 && res.status == 0 && res.out != NULL &&
	      strstr(res.out, "(nf_tables)") != NULL;
	tool_result_free(&res);
	return yes;
}

/* Whether nftables holds an "ip mangle" ("ip6 mangle") table: 1 yes, 0 no, -1 cannot tell.
 * With iptables-nft, iptables-save prints an empty skeleton for a table that does not exist. */
static int nft_mangle_exists(enum rules_family family)
{
	char ignored[256];

	return rules_nft_table_exists(family, "mangle", ignored, sizeof(ignored));
}

/*
 * iptables-nft created the mangle table for us: once it holds nothing but empty ACCEPT built-in
 * chains again, delete it so the ruleset is as it was. Anything else in it (someone started using
 * it meanwhile) keeps it.
 */
static void ipt_drop_empty_mangle(struct rules *r, enum rules_family family)
{
	struct rules_ipt_state st;
	char ignored[256];

	if (ipt_read_state(r, family, &st, ignored, sizeof(ignored)) < 0 || !st.table_present ||
		!st.nf_tables || st.foreign_content)
		return;
	if (rules_nft_table_delete(family, "mangle", ignored, sizeof(ignored)) == 0)
		r->ipt_created_mangle[family] = false;
}

/* One family's chains: installed for the interfaces, or removed. */
static int ipt_apply_family(struct rules *r, enum rules_family family, const char *const *ifnames,
	size_t count, bool install, char *err, size_t errlen)
{
	const char *tool = ipt_tool(r, family, false);
	struct rules_ipt_state st;
	struct tool_result res;
	char line[200];
	char *script;
	int rc = -1;

	if (ipt_read_state(r, family, &st, err, errlen) < 0)
		return -1;
	if (!install) {
		bool any = false;

		for (unsigned c = 0; c < RULES_IPT_CHAIN_COUNT; c++)
			any = any || st.chain_present[c] || st.jumps[c] > 0;
		if (!any)
			return 0;
	}
	script = rules_ipt_script_family(&r->cfg, family, &st, ifnames, count, install);
	if (script == NULL) {
		snprintf(err, errlen,
			"rules: an interface name cannot be used in a rule, or no "
			"memory");
		return -1;
	}
	if (run_ipt_restore(r, family, script, &res) < 0)
		snprintf(err, errlen, "rules: cannot run %s: %s", tool, strerror(res.exec_errno));
	else if (res.status != 0) {
		first_error_line(res.errtext, line, sizeof(line));
		snprintf(err, errlen, "rules: %s failed to %s the chains: %s", tool,
			install ? "install" : "remove", line);
	} else
		rc = 0;
	tool_result_free(&res);
	free(script);
	if (rc == 0 && !install && r->ipt_created_mangle[family])
		ipt_drop_empty_mangle(r, family);
	return rc;
}

/*
 * The iptables chains, then the ip6tables ones: ip6tables missing, or refusing the chains (a
 * kernel without ip6tables' mangle table, NFQUEUE, u32 or addrtype for IPv6), costs IPv6
 * interception only. Its failure is kept and counted, not returned; its removal fails quietly
 * where the family never existed. ip6tables is probed at every install that finds the IPv6
 * chains absent, so an IPv6 failure never touches the IPv4 chains.
 */
static int ipt_apply(struct rules *r, const char *const *ifnames, size_t count, bool install,
	char *err, size_t errlen)
{
	char why[300];

	if (!install) {
		int rc = ipt_apply_family(r, RULES_IPV4, NULL, 0, false, err, errlen);

		(void)ipt_apply_family(r, RULES_IPV6, NULL, 0, false, why, sizeof(why));
		return rc;
	}
	if (ipt_apply_family(r, RULES_IPV4, ifnames, count, true, err, errlen) < 0)
		return -1;
	r->family_installed[RULES_IPV4] = true;
	if (!r->family_installed[RULES_IPV6]) {
		/* before the probe, which creates the mangle table if it was missing */
		if (!r->ipt_created_mangle[RULES_IPV6])
			r->ipt_created_mangle[RULES_IPV6] = ipt_is_nf_tables(r, RULES_IPV6) &&
							    nft_mangle_exists(RULES_IPV6) == 0;
		if (ipt_probe(r, RULES_IPV6, why, sizeof(why)) < 0)
			goto v6_failed;
	}
	if (ipt_apply_family(r, RULES_IPV6, ifnames, count, true, why, sizeof(why)) < 0)
		goto v6_failed;
	r->family_installed[RULES_IPV6] = true;
	r->family_reason[RULES_IPV6][0] = '\0';
	return 0;
v6_failed:
	/* An update refused: the previous chains stay, as the nftables backend's table does.
	   A first install refused: an earlier run's chains go, nothing half there. */
	if (!r->family_installed[RULES_IPV6]) {
		char ignored[256];

		(void)ipt_apply_family(r, RULES_IPV6, NULL, 0, false, ignored, sizeof(ignored));
	}
	r->family_installed[RULES_IPV6] = false;
	r->family_failures[RULES_IPV6]++;
	snprintf(r->family_reason[RULES_IPV6], sizeof(r->family_reason[RULES_IPV6]),
		"the iptables backend cannot install the ip6tables chains: %.200s",
		strncmp(why, "rules: ", 7) == 0 ? why + 7 : why);
	return 0;
}

/* Removes the other backend's leftovers of an earlier run, quietly: that backend's tool may be
 * missing, which means there is nothing of ours in it either. */
static void remove_other_backend(struct rules *r, enum rules_backend keep)
{
	char ignored[256];

	if (keep != RULES_BACKEND_NFT)
		(void)nft_apply(r, NULL, 0, false, ignored, sizeof(ignored));
	if (keep != RULES_BACKEND_IPTABLES)
		(void)ipt_apply(r, NULL, 0, false, ignored, sizeof(ignored));
}

int rules_install(struct rules *r, enum rules_backend want, const char *const *ifnames,
	size_t count, char *err, size_t errlen)
{
	enum rules_backend chosen;
	int rc;

	if (!rules_name_valid(r->cfg.name)) {
		snprintf(err, errlen, "rules: invalid table name \"%s\"", r->cfg.name);
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		if (!rules_ifname_valid(ifnames[i])) {
			snprintf(err, errlen,
				"rules: interface name \"%s\" cannot be used in a rule (only "
				"letters, "
				"digits and _ - . @, at most 15)",
				ifnames[i]);
			return -1;
		}
	}
	if (count > RULES_MAX_INTERFACES) {
		snprintf(err, errlen, "rules: more than %d interfaces", RULES_MAX_INTERFACES);
		return -1;
	}
	if (!have_net_admin()) {
		snprintf(err, errlen,
			"rules: installing interception rules needs root (CAP_NET_ADMIN)");
		return -1;
	}
	r->nft_reason[0] = '\0';
	if (want == RULES_BACKEND_NFT || want == RULES_BACKEND_AUTO) {
		if (nft_probe(r))
			chosen = RULES_BACKEND_NFT;
		else if (want == RULES_BACKEND_NFT) {
			snprintf(
				err, errlen, "rules: nftables backend unusable: %s", r->nft_reason);
			return -1;
		} else
			chosen = RULES_BACKEND_IPTABLES;
	} else
		chosen = RULES_BACKEND_IPTABLES;

	if (chosen == RULES_BACKEND_IPTABLES && r->cfg.workers > 1) {
		snprintf(err, errlen,
			"rules: %u workers need the nftables backend (iptables queues to one "
			"queue)%s%s",
			r->cfg.workers, r->nft_reason[0] != '\0' ? "; nftables unusable: " : "",
			r->nft_reason);
		return -1;
	}
	if (chosen == RULES_BACKEND_IPTABLES) {
		/* Before the probe, which creates the mangle table if it was missing. */
		if (!r->installed)
			r->ipt_created_mangle[RULES_IPV4] = ipt_is_nf_tables(r, RULES_IPV4) &&
							    nft_mangle_exists(RULES_IPV4) == 0;
		if (ipt_probe(r, RULES_IPV4, err, errlen) < 0) {
			if (want == RULES_BACKEND_AUTO && r->nft_reason[0] != '\0') {
				size_t used = strlen(err);

				snprintf(err + used, errlen > used ? errlen - used : 0,
					"; nftables unusable too: %s", r->nft_reason);
			}
			return -1;
		}
		rc = ipt_apply(r, ifnames, count, true, err, errlen);
	} else {
		rc = nft_apply(r, ifnames, count, true, err, errlen);
	}
	if (rc < 0) {
		char ignored[256];

		/* Nothing of ours stays: not this attempt (the tools commit atomically) and not
		 * what a crashed earlier run left. */
		if (chosen == RULES_BACKEND_IPTABLES)
			(void)ipt_apply(r, NULL, 0, false, ignored, sizeof(ignored));
		else
			(void)nft_apply(r, NULL, 0, false, ignored, sizeof(ignored));
		return -1;
	}
	remove_other_backend(r, chosen);
	r->backend = chosen;
	r->installed = true;
	rules_set_ifnames(r, ifnames, count);
	return 0;
}

int rules_update(
	struct rules *r, const char *const *ifnames, size_t count, char *err, size_t errlen)
{
	int rc;

	if (!r->installed) {
		snprintf(err, errlen, "rules: not installed");
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		if (!rules_ifname_valid(ifnames[i])) {
			snprintf(err, errlen,
				"rules: interface name \"%s\" cannot be used in a rule",
				ifnames[i]);
			return -1;
		}
	}
	if (r->backend == RULES_BACKEND_NFT)
		rc = nft_apply(r, ifnames, count, true, err, errlen);
	else
		rc = ipt_apply(r, ifnames, count, true, err, errlen);
	if (rc == 0)
		rules_set_ifnames(r, ifnames, count);
	return rc;
}

int rules_remove(struct rules *r, char *err, size_t errlen)
{
	int rc;

	if (!have_net_admin()) {
		snprintf(err, errlen,
			"rules: removing interception rules needs root (CAP_NET_ADMIN)");
		return -1;
	}
	if (r->backend == RULES_BACKEND_NFT)
		rc = nft_apply(r, NULL, 0, false, err, errlen);
	else if (r->backend == RULES_BACKEND_IPTABLES)
		rc = ipt_apply(r, NULL, 0, false, err, errlen);
	else {
		/* Never installed by this process: clear whatever an earlier run left in either. */
		char ignored[256];

		(void)nft_apply(r, NULL, 0, false, ignored, sizeof(ignored));
		rc = ipt_apply(r, NULL, 0, false, err, errlen);
		if (rc < 0 && strstr(err, "cannot run") != NULL)
			rc = 0; /* no iptables at all: nothing of ours there */
	}
	if (rc == 0) {
		r->installed = false;
		memset(r->family_installed, 0, sizeof(r->family_installed));
		rules_set_ifnames(r, NULL, 0);
	}
	return rc;
}

/* ---- counters ---- */

void rules_counters_add(struct rules_counters *sum, const struct rules_counters *one,
	enum rules_family family)
{
	for (unsigned i = 0; i < RULES_IPT_CHAIN_COUNT; i++) {
		sum->packets[i] += one->packets[i];
		sum->bytes[i] += one->bytes[i];
		sum->packets_ipv6[i] += family == RULES_IPV6 ? one->packets[i] : one->packets_ipv6[i];
	}
	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++)
		for (unsigned key = 0; key < RULES_POLICE_KEY_COUNT; key++)
			sum->policed[k][key] += one->policed[k][key];
}

/* "... --hashlimit-name NAME-nak-s ... -j DROP": a policing rule's drops. */
static void ipt_count_policed(const struct rules_config *cfg, const char *line, const char *end,
	uint64_t packets, struct rules_counters *c)
{
	const char *n = strstr(line, "--hashlimit-name "), *d = strstr(line, "-j DROP");
	char name[32], want[32];

	if (n == NULL || d == NULL || (end != NULL && (n > end || d > end)) ||
		sscanf(n, "--hashlimit-name %31s", name) != 1)
		return;
	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++) {
		size_t wl;

		ipt_police_name(cfg, k, -1, want, sizeof(want));
		if (strcmp(name, want) == 0) {
			c->policed[k][RULES_POLICE_SOURCE] += packets;
			return;
		}
		/* "NAME-nak" followed by the interface's place */
		wl = strlen(want) - 2;
		if (strncmp(name, want, wl) == 0 && name[wl] >= '0' && name[wl] <= '9') {
			c->policed[k][RULES_POLICE_INTERFACE] += packets;
			return;
		}
	}
}

void rules_parse_ipt_counters(
	const struct rules_config *cfg, const char *text, struct rules_counters *c)
{
	char names[RULES_IPT_CHAIN_COUNT][32];
	const char *line = text;

	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < RULES_IPT_CHAIN_COUNT; i++)
		rules_ipt_chain_name(cfg, i, names[i], sizeof(names[i]));
	while (line != NULL && *line != '\0') {
		unsigned long long pk, by;
		char chain[64];
		int used = 0;

		/* "[12:672] -A PGMROUTER-FWD -o d1 ... -j NFQUEUE ..." */
		if (sscanf(line, "[%llu:%llu] -A %63s %n", &pk, &by, chain, &used) == 3 &&
			used > 0) {
			const char *end = strchr(line, '\n');
			const char *q = strstr(line, "-j NFQUEUE");

			for (unsigned i = 0; i < RULES_IPT_CHAIN_COUNT; i++) {
				if (strcmp(chain, names[i]) == 0 && q != NULL &&
					(!end || q < end)) {
					c->packets[i] += pk;
					c->bytes[i] += by;
				}
				if (strcmp(chain, names[i]) == 0)
					ipt_count_policed(cfg, line, end, pk, c);
			}
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
}

int rules_read_counters(struct rules *r, struct rules_counters *c, char *err, size_t errlen)
{
	struct tool_result res;
	char line[200];
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!r->installed) {
		snprintf(err, errlen, "rules: not installed");
		return -1;
	}
	if (r->backend == RULES_BACKEND_NFT) {
		struct rules_counters six;
		char why[256];

		if (rules_nft_read_counters(&r->cfg, RULES_IPV4, c, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "rules: cannot read counters: %s", why);
			return -1;
		}
		if (!r->family_installed[RULES_IPV6])
			return 0;
		if (rules_nft_read_counters(&r->cfg, RULES_IPV6, &six, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "rules: cannot read counters: %s", why);
			return -1;
		}
		rules_counters_add(c, &six, RULES_IPV6);
		return 0;
	}
	char *argv[] = {r->cfg.iptables_save, "-c", "-t", "mangle", NULL};

	if (run_tool(argv, NULL, &res) == 0 && res.status == 0) {
		rules_parse_ipt_counters(&r->cfg, res.out ? res.out : "", c);
		rc = 0;
	}
	if (rc == 0 && r->family_installed[RULES_IPV6]) {
		struct rules_counters six;

		tool_result_free(&res);
		argv[0] = r->cfg.ip6tables_save;
		rc = -1;
		if (run_tool(argv, NULL, &res) == 0 && res.status == 0) {
			rules_parse_ipt_counters(&r->cfg, res.out ? res.out : "", &six);
			rules_counters_add(c, &six, RULES_IPV6);
			rc = 0;
		}
	}
	if (rc < 0) {
		if (res.exec_errno)
			snprintf(err, errlen, "rules: cannot read counters: %s",
				strerror(res.exec_errno));
		else {
			first_error_line(res.errtext, line, sizeof(line));
			snprintf(err, errlen, "rules: cannot read counters: %s", line);
		}
	}
	tool_result_free(&res);
	return rc;
}

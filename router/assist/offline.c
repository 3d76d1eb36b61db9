/*
 * Router assist without a data plane: the replay of captures and the tests (offline.h).
 */
#include "router/assist/offline.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/pcapio.h"

struct offline_if {
	char name[CP_IFNAME_LEN];
	struct pgm_nla addr;
	uint32_t prefix;
	int ifindex;
	/* what the router sent out of it: how many datagrams, the last one (tests) */
	uint64_t sent;
	uint8_t last[1500];
	size_t last_len;
};

struct offline {
	struct assist *a;
	struct offline_if *ifs;
	size_t nifs;
	bool quiet;
	cp_time_t now;
	uint64_t sent;
	struct mfc_route route; /* the last one route() made */
	/* Routes to groups: those given (offline_route_add), looked up first, and those made
	   from the interfaces, kept for their counters and `show ip pgm router mroute`. */
	struct mfc *given, *made;
};

/* ---- the environment ---- */

static cp_time_t env_now(void *ctx)
{
	return ((struct offline *)ctx)->now;
}

static int env_send(void *ctx, int ifindex, const uint8_t *datagram, size_t len, uint8_t ttl)
{
	struct offline *o = ctx;

	o->sent++;
	for (size_t i = 0; i < o->nifs; i++)
		if (o->ifs[i].ifindex == ifindex) {
			struct offline_if *oif = &o->ifs[i];

			oif->sent++;
			oif->last_len = len < sizeof(oif->last) ? len : sizeof(oif->last);
			memcpy(oif->last, datagram, oif->last_len);
			/* IPv4's TTL as the environment's send replaces it (the header checksum
			   left as it was) */
			if (ttl != 0 && oif->last_len > 8)
				oif->last[8] = ttl;
		}
	return 1;
}

/* A route given for the group (offline_route_add), else one from the arrival interface to
   every other one with router assist, in ifindex order as the kernel's forwarding walks them
   (the packet path goes from the last entry down). */
static struct mfc_route *env_route(
	void *ctx, const struct pgm_nla *src, const struct pgm_nla *group, int in_ifindex)
{
	struct offline *o = ctx;
	struct mfc_route *r = &o->route, *kept;
	const struct offline_if *in = NULL;
	bool to_group = src->afi == PGM_AFI_IP && group->afi == PGM_AFI_IP &&
			(group->addr[0] & 0xf0) == 0xe0; /* 224/4 */

	(void)in_ifindex; /* a route given replaces the kernel's rules: it is what the user meant */
	memset(r, 0, sizeof(*r));
	if (to_group) {
		pgm_nla_from_ip4(&r->src, src->addr);
		pgm_nla_from_ip4(&r->grp, group->addr);
		if ((kept = mfc_find(o->given, &r->src, &r->grp)) != NULL)
			return kept;
	}
	for (size_t i = 0; i < o->nifs && in == NULL; i++) {
		uint32_t x, y,
			mask = o->ifs[i].prefix == 0 ? 0 : htonl(~0u << (32 - o->ifs[i].prefix));

		memcpy(&x, src->addr, 4);
		memcpy(&y, o->ifs[i].addr.addr, 4);
		if (src->afi == PGM_AFI_IP && (x & mask) == (y & mask))
			in = &o->ifs[i];
	}
	if (in == NULL)
		return NULL;
	r->iif = in->ifindex;
	for (size_t i = o->nifs; i-- > 0 && r->noifs < MFC_MAX_OIFS;)
		if (&o->ifs[i] != in && cp_if_assisted(assist_cp(o->a), o->ifs[i].ifindex))
			r->oif[r->noifs++] = o->ifs[i].ifindex;
	if (to_group && (kept = mfc_add(o->made, r)) != NULL)
		return kept;
	return r;
}

static void env_routes(void *ctx, void (*fn)(void *arg, const struct mfc_route *r), void *arg)
{
	struct offline *o = ctx;

	mfc_foreach(o->given, fn, arg);
	mfc_foreach(o->made, fn, arg);
}

int offline_route_add(struct offline *o, const struct mfc_route *r)
{
	return mfc_add(o->given, r) != NULL ? 0 : -1;
}

static int env_if_lookup(void *ctx, const char *name, bool *up, bool *running)
{
	struct offline *o = ctx;

	for (size_t i = 0; i < o->nifs; i++)
		if (strcmp(o->ifs[i].name, name) == 0) {
			*up = *running = true;
			return o->ifs[i].ifindex;
		}
	*up = *running = false;
	return 0;
}

/* What the replay has always printed: packets and the core's events and timers. */
static unsigned env_lines_wanted(void *ctx)
{
	if (((struct offline *)ctx)->quiet)
		return 0;
	return 1u << LOG_CAT_PACKETS | 1u << LOG_CAT_EVENTS | 1u << LOG_CAT_TIMERS;
}

static void env_line(void *ctx, enum log_category cat, const char *text)
{
	(void)ctx;
	(void)cat;
	printf("%s\n", text);
}

/* ---- interfaces ---- */

static int parse_ifspec(const char *spec, struct offline_if *oif)
{
	const char *eq = strchr(spec, '='), *slash;
	char addr[64];
	size_t nlen;

	memset(oif, 0, sizeof(*oif));
	oif->prefix = 24;
	if (eq == NULL || (nlen = (size_t)(eq - spec)) == 0 || nlen >= sizeof(oif->name))
		return -1;
	memcpy(oif->name, spec, nlen);
	slash = strchr(eq + 1, '/');
	snprintf(addr, sizeof(addr), "%.*s", slash ? (int)(slash - eq - 1) : (int)strlen(eq + 1),
		eq + 1);
	if (!pgm_nla_parse(&oif->addr, addr) || oif->addr.afi != PGM_AFI_IP)
		return -1;
	if (slash != NULL) {
		char *end;
		long p = strtol(slash + 1, &end, 10);

		if (*end != '\0' || p < 0 || p > 32)
			return -1;
		oif->prefix = (uint32_t)p;
	}
	return 0;
}

struct offline *offline_new(
	const char *const *ifspecs, size_t n, bool quiet, char *err, size_t errlen)
{
	struct offline *o = calloc(1, sizeof(*o));
	struct assist_env env = {
		.now = env_now,
		.send = env_send,
		.route = env_route,
		.routes = env_routes,
		.if_lookup = env_if_lookup,
		.lines_wanted = env_lines_wanted,
		.line = env_line,
	};

	if (o == NULL || (n != 0 && (o->ifs = calloc(n, sizeof(*o->ifs))) == NULL)) {
		free(o);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	o->quiet = quiet;
	o->now = CP_SEC(1);
	if ((o->given = mfc_new()) == NULL || (o->made = mfc_new()) == NULL) {
		snprintf(err, errlen, "out of memory");
		offline_free(o);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (parse_ifspec(ifspecs[i], &o->ifs[i]) < 0) {
			snprintf(err, errlen, "%s: expected NAME=A.B.C.D[/PREFIX]", ifspecs[i]);
			offline_free(o);
			return NULL;
		}
		o->ifs[i].ifindex = (int)i + 1;
		o->nifs++;
	}
	env.ctx = o;
	if ((o->a = assist_new(&env)) == NULL) {
		snprintf(err, errlen, "out of memory");
		offline_free(o);
		return NULL;
	}
	for (size_t i = 0; i < o->nifs; i++)
		assist_if_added(o->a, o->ifs[i].ifindex, o->ifs[i].name, &o->ifs[i].addr);
	return o;
}

void offline_free(struct offline *o)
{
	if (o == NULL)
		return;
	assist_free(o->a);
	mfc_free(o->given);
	mfc_free(o->made);
	free(o->ifs);
	free(o);
}

struct assist *offline_assist(struct offline *o)
{
	return o->a;
}

static int ifindex_of(const struct offline *o, const char *name)
{
	bool up, running;

	return name != NULL ? env_if_lookup((void *)o, name, &up, &running) : 0;
}

int offline_packet(struct offline *o, const uint8_t *datagram, size_t len, const char *in,
	const char *out, char *err, size_t errlen)
{
	struct assist_packet p = {.datagram = datagram, .len = len, .now = o->now};
	const uint8_t *rw;
	size_t rw_len;

	/* "*": before the routing decision, replicated along the group's route */
	p.before_routing = out != NULL && strcmp(out, "*") == 0;
	if (p.before_routing)
		out = NULL;
	if ((p.in_ifindex = ifindex_of(o, in)) == 0 ||
		(out != NULL && (p.out_ifindex = ifindex_of(o, out)) == 0)) {
		snprintf(err, errlen, "no interface %s", p.in_ifindex == 0 ? in : out);
		return -1;
	}
	(void)assist_packet(o->a, &p, &rw, &rw_len);
	return 0;
}

uint64_t offline_sent(
	const struct offline *o, const char *ifname, const uint8_t **last, size_t *last_len)
{
	for (size_t i = 0; i < o->nifs; i++)
		if (strcmp(o->ifs[i].name, ifname) == 0) {
			if (last != NULL)
				*last = o->ifs[i].last;
			if (last_len != NULL)
				*last_len = o->ifs[i].last_len;
			return o->ifs[i].sent;
		}
	return 0;
}

/*
 * Every timer due at o->now. A run moves a bounded part of a timer wheel's cascade and then
 * reports itself due again (cp_timers): offline there are no packets to let through meanwhile.
 */
static void run_timers(struct offline *o)
{
	do
		assist_timers(o->a, o->now);
	while (cp_next_deadline(assist_cp(o->a)) <= o->now);
}

void offline_advance(struct offline *o, uint64_t us)
{
	o->now += us;
	run_timers(o);
}

/* ---- replay ---- */

static void print_if(void *ctx, const struct cp_if_view *v)
{
	const struct cp_counters *c = v->counters;

	(void)ctx;
	if (c == NULL)
		return;
	printf("replay: %s:", v->name);
	for (unsigned t = 0; t < PGM_TYPE_COUNT; t++)
		if (c->in[t] || c->out[t])
			printf(" %s in %llu out %llu;", pgm_type_name(t),
				(unsigned long long)c->in[t], (unsigned long long)c->out[t]);
	for (unsigned e = 0; e < CP_C_COUNT; e++)
		if (c->ev[e])
			printf(" %s %llu", cp_counter_name(e), (unsigned long long)c->ev[e]);
	for (unsigned e = 1; e < PGM_ERR_COUNT; e++)
		if (c->err[e])
			printf(" %s %llu", pgm_err_name(e), (unsigned long long)c->err[e]);
	printf("\n");
}

static void print_summary(const struct offline *o)
{
	const struct assist_stats *as = assist_stats(o->a);
	struct cp_stats st;

	cp_get_stats(assist_cp(o->a), &st);
	printf("replay: %zu session%s, %zu repair state%s at the end; %llu packets, %llu "
	       "malformed, "
	       "%llu originated\n",
		st.sessions, st.sessions == 1 ? "" : "s", st.repair_states,
		st.repair_states == 1 ? "" : "s", (unsigned long long)as->packets,
		(unsigned long long)as->malformed, (unsigned long long)as->originated);
}

/* The configuration, with router assist on every interface when it names none. */
static int replay_configure(
	struct offline *o, const struct assist_conf *conf, char *err, size_t errlen)
{
	struct assist_conf all = *conf;
	int rc;

	for (size_t i = 0; i < conf->nifs; i++)
		if (conf->ifs[i].s.assist)
			return assist_configure(o->a, conf, 0, err, errlen);
	all.nifs = o->nifs;
	all.ifs = calloc(o->nifs, sizeof(*all.ifs));
	if (o->nifs != 0 && all.ifs == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < o->nifs; i++) {
		snprintf(all.ifs[i].name, sizeof(all.ifs[i].name), "%s", o->ifs[i].name);
		all.ifs[i].s.assist = true;
		all.ifs[i].s.cfg = conf->g.cp.if_defaults;
		for (size_t k = 0; k < conf->nifs; k++)
			if (strcmp(conf->ifs[k].name, o->ifs[i].name) == 0)
				all.ifs[i].s.cfg = conf->ifs[k].s.cfg;
	}
	rc = assist_configure(o->a, &all, 0, err, errlen);
	free(all.ifs);
	return rc;
}

struct offline *offline_replay_open(const struct assist_conf *conf, const char *const *ifspecs,
	size_t n, bool quiet, char *err, size_t errlen)
{
	struct offline *o;

	if (n == 0) {
		snprintf(err, errlen, "replay needs at least one -i NAME=ADDR/PREFIX");
		return NULL;
	}
	if ((o = offline_new(ifspecs, n, quiet, err, errlen)) == NULL)
		return NULL;
	if (replay_configure(o, conf, err, errlen) < 0) {
		offline_free(o);
		return NULL;
	}
	return o;
}

int offline_replay_file(struct offline *o, const char *pcap_path, char *err, size_t errlen)
{
	const struct assist_conf *conf = assist_conf(o->a);
	struct pcap_reader *r;
	struct pcap_datagram d;
	struct pgm_udp_ports ports;
	cp_time_t first = 0;
	int rc;

	assist_udp_ports(&conf->g, &ports);
	if ((r = pcap_reader_open(pcap_path, err, errlen)) == NULL)
		return -1;
	while ((rc = pcap_reader_next(r, &d, err, errlen)) == 1) {
		struct assist_packet p = {
			.datagram = d.ip,
			.len = d.len,
			.udp_csum_unset = true, /* captures of local sends: offloaded checksums */
		};
		struct pgm_ip ip;
		cp_time_t t = (cp_time_t)d.ts.tv_sec * 1000000u + (cp_time_t)d.ts.tv_usec;
		const struct mfc_route *route;
		const uint8_t *rw;
		size_t rw_len;

		if (first == 0)
			first = t;
		/* merged or edited captures go back in time now and then: the clock does not (it
		   would wrap to the far future) */
		if (t >= first && t - first + CP_SEC(1) > o->now)
			o->now = t - first + CP_SEC(1);
		run_timers(o);
		if (pgm_parse_ip(d.ip, d.len, &ports, &ip) != PGM_ERR_OK)
			continue;
		/* unicast is taken as addressed to us (captures without a router hold NAKs to the
		   source): the input hook's; what goes to a group, prerouting's */
		p.before_routing = pgm_ip_dst_is_multicast(&ip);
		/* it arrived on the interface whose subnet holds its source */
		route = env_route(o, &ip.src, &ip.dst, 0);
		if (route == NULL) {
			char src[64];

			if (!o->quiet)
				printf("%.6f: %s is on none of the interfaces: skipped\n",
					(double)(o->now - CP_SEC(1)) / 1e6,
					pgm_nla_format(&ip.src, src, sizeof(src)));
			continue;
		}
		p.in_ifindex = route->iif;
		p.now = o->now;
		if (!o->quiet)
			printf("%.6f:\n", (double)(o->now - CP_SEC(1)) / 1e6);
		(void)assist_packet(o->a, &p, &rw, &rw_len);
	}
	pcap_reader_close(r);
	return rc < 0 ? -1 : 0;
}

void offline_replay_report(struct offline *o)
{
	cp_foreach_if(assist_cp(o->a), print_if, NULL);
	print_summary(o);
}

int offline_replay(const char *pcap_path, const struct assist_conf *conf,
	const char *const *ifspecs, size_t n, bool quiet)
{
	struct offline *o;
	char err[256];
	int status = 0;

	if ((o = offline_replay_open(conf, ifspecs, n, quiet, err, sizeof(err))) == NULL) {
		fprintf(stderr, "pgmrouterd: %s\n", err);
		return 2;
	}
	if (offline_replay_file(o, pcap_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "pgmrouterd: %s: %s\n", pcap_path, err);
		status = 1;
	}
	offline_replay_report(o);
	offline_free(o);
	return status;
}

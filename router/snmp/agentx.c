/*
 * The AgentX subagent (router/snmp/agentx.h): the settings module, the event-loop glue for
 * net-snmp's sockets and alarms, and the handler of the pgmNetworkElement subtree.
 *
 * The handler answers from a snapshot: every served instance of the branch, with its value,
 * sorted by OID, built from the running configuration and the control plane's views (as the
 * JSON shows are) at most once a second, so that a walk sees one moment and costs one build.
 */
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/agent/net-snmp-agent-includes.h>
#include <net-snmp/library/large_fd_set.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/lib/event.h"
#include "router/lib/log.h"
#include "router/snmp/agentx.h"
#include "router/vty/pgm_vty.h"

#define AGENTX_NAME	     "pgmrouterd"
#define AGENTX_DEFAULT_SOCKET "/var/agentx/master" /* snmpd's own default */
#define AGENTX_RETRY_US	     5000000 /* a lost master is looked for this often */
#define AGENTX_MAX_WAIT_US    1000000
#define AGENTX_MAX_FDS	     8
#define SNAPSHOT_MAX_AGE_US   1000000
/* Sessions served in the TSI tables: the snapshot holds every instance (about 40 a session),
   so a router with more sessions serves the first ones in the control plane's order. */
#define SNAPSHOT_MAX_SESSIONS 4096
#define MIB_OID_MAX	      32

/* ---- the settings module ---- */

#define S(field) offsetof(struct snmp_settings, field)

static const struct setting snmp_settings_rows[] = {
	{.keyword = "agentx",
		.kind = SETTING_FLAG,
		.dflt = 0,
		.help = "Serve the PGM MIB as an AgentX subagent of the system's snmpd\n",
		.args = "[port <1-65535>$tcp_port]",
		.value_help = "The master on TCP 127.0.0.1 (default: its unix socket "
			      AGENTX_DEFAULT_SOCKET ")\nTCP port\n",
		.arg = {{.name = "tcp_port", .offset = S(agentx_port), .dflt = 0, .scale = 1}},
		.label = "AgentX subagent",
		.global_offset = S(agentx),
		.if_offset = SETTING_NOWHERE},
};

static int snmp_apply(
	void *ctx, const struct cfg *prev, const struct cfg *next, char *err, size_t errlen);

struct cfg_module snmp_module = {
	.name = "snmp",
	.prefix = "snmp-server",
	.prefix_help = "SNMP\n",
	.rows = snmp_settings_rows,
	.nrows = sizeof(snmp_settings_rows) / sizeof(snmp_settings_rows[0]),
	.global_size = sizeof(struct snmp_settings),
	.if_size = 0,
	.write_order = 120,
	.if_write_order = 120,
	.apply = snmp_apply,
};

/* ---- the snapshot ---- */

static const oid ne_oid[] = {1, 3, 6, 1, 3, 112, 1, 1}; /* pgmNetworkElement */
#define NE_LEN (sizeof(ne_oid) / sizeof(ne_oid[0]))

struct mib_entry {
	oid name[MIB_OID_MAX];
	size_t len;
	u_char type;
	uint32_t value;	 /* integers, counters, gauges, time ticks */
	uint8_t addr[4]; /* IpAddress, network order */
};

struct snapshot {
	struct mib_entry *e;
	size_t n, cap;
	uint64_t built; /* ev_time_now(), 0 = never */
	bool failed;
};

/* Where a counter column takes its value from. */
enum col_src { SRC_IN, SRC_OUT, SRC_EV, SRC_MALFORMED };

struct counter_col {
	unsigned column;
	enum col_src src;
	unsigned index; /* packet type or event */
};

/* pgmNeIfPerformanceEntry: the columns with an equivalent among the interface's counters
   (`show ip pgm router traffic IFNAME json`). */
static const struct counter_col if_perf_cols[] = {
	{3, SRC_EV, CP_C_REPAIR_EXPIRED},      /* pgmNeIfReXmitTimedOut */
	{4, SRC_IN, PGM_SPM},		       /* pgmNeIfInSpms */
	{5, SRC_OUT, PGM_SPM},		       /* pgmNeIfOutSpms */
	{8, SRC_IN, PGM_RDATA},		       /* pgmNeIfInRdata */
	{9, SRC_OUT, PGM_RDATA},	       /* pgmNeIfOutRdata */
	{12, SRC_EV, CP_C_RDATA_NO_SESSION},   /* pgmNeIfInRdataNoSessionErrors */
	{13, SRC_EV, CP_C_NAK_UNIQUE},	       /* pgmNeIfUniqueNaks */
	{14, SRC_IN, PGM_NAK},		       /* pgmNeIfInNaks */
	{15, SRC_OUT, PGM_NAK},		       /* pgmNeIfOutNaks */
	{19, SRC_EV, CP_C_NAK_NO_SESSION},     /* pgmNeIfInNakNoSessionErrors */
	{20, SRC_EV, CP_C_NAK_OUT_OF_WINDOW},  /* pgmNeIfInNakSeqErrors */
	{22, SRC_IN, PGM_NNAK},		       /* pgmNeIfInNnaks */
	{23, SRC_OUT, PGM_NNAK},	       /* pgmNeIfOutNnaks */
	{26, SRC_EV, CP_C_NNAK_NO_SESSION},    /* pgmNeIfInNnakNoSessionErrors */
	{27, SRC_IN, PGM_NCF},		       /* pgmNeIfInNcfs */
	{28, SRC_OUT, PGM_NCF},		       /* pgmNeIfOutNcfs */
	{31, SRC_EV, CP_C_NCF_NO_SESSION},     /* pgmNeIfInNcfNoSessionErrors */
	{33, SRC_MALFORMED, 0},		       /* pgmNeIfMalformed */
	{35, SRC_EV, CP_C_SPM_BAD_SQN},	       /* pgmNeIfSpmBadSqn */
	{43, SRC_EV, CP_C_DLR_POLL_SENT},      /* pgmNeIfPollOriginated */
	{48, SRC_EV, CP_C_POLR_SENT},	       /* pgmNeIfPolrOriginated */
	{52, SRC_EV, CP_C_NCF_CONFIRMED},      /* pgmNeIfNcfReceived */
	{53, SRC_EV, CP_C_NCF_ANTICIPATED},    /* pgmNeIfNcfAnticipated */
	{55, SRC_EV, CP_C_NAK_ELIMINATED},     /* pgmNeIfNakEliminated */
	{58, SRC_EV, CP_C_NNAK_ELIMINATED},    /* pgmNeIfNNakEliminated */
	{62, SRC_EV, CP_C_NAK_RETRY_EXPIRED},  /* pgmNeIfNakRetryExpired */
	{64, SRC_EV, CP_C_NAK_REDIRECTED},     /* pgmNeIfNakForwardedDLR */
	{65, SRC_EV, CP_C_NAK_RETRANSMITTED},  /* pgmNeIfNakRetransmitted */
	{66, SRC_EV, CP_C_RDATA_NO_INTERFACE}, /* pgmNeIfRdataEliminatedOIF */
	{67, SRC_EV, CP_C_RDATA_NO_STATE},     /* pgmNeIfRdataEliminatedSqn */
};

/* pgmNeTsiPerformanceEntry: the counter columns with an equivalent among the session's
   counters (`show ip pgm router state json`, and the traffic counters per TSI). */
static const struct counter_col tsi_perf_cols[] = {
	{6, SRC_IN, PGM_SPM},		      /* pgmNeTsiInSpms */
	{7, SRC_OUT, PGM_SPM},		      /* pgmNeTsiOutSpms */
	{11, SRC_EV, CP_C_REPAIR_EXPIRED},    /* pgmNeTsiTotalReXmitTimedOut */
	{12, SRC_IN, PGM_RDATA},	      /* pgmNeTsiInRdata */
	{13, SRC_OUT, PGM_RDATA},	      /* pgmNeTsiOutRdata */
	{16, SRC_EV, CP_C_RDATA_NO_STATE},    /* pgmNeTsiInRdataNoStateErrors */
	{17, SRC_EV, CP_C_NAK_UNIQUE},	      /* pgmNeTsiUniqueNaks */
	{18, SRC_IN, PGM_NAK},		      /* pgmNeTsiInNaks */
	{19, SRC_OUT, PGM_NAK},		      /* pgmNeTsiOutNaks */
	{23, SRC_EV, CP_C_NAK_OUT_OF_WINDOW}, /* pgmNeTsiInNakSeqErrors */
	{24, SRC_IN, PGM_NNAK},		      /* pgmNeTsiInNnaks */
	{25, SRC_OUT, PGM_NNAK},	      /* pgmNeTsiOutNnaks */
	{28, SRC_IN, PGM_NCF},		      /* pgmNeTsiInNcfs */
	{29, SRC_OUT, PGM_NCF},		      /* pgmNeTsiOutNcfs */
};

static uint32_t counter_value(const struct cp_counters *k, const struct counter_col *c)
{
	uint64_t v = 0;

	if (k == NULL)
		return 0;
	switch (c->src) {
	case SRC_IN:
		v = k->in[c->index];
		break;
	case SRC_OUT:
		v = k->out[c->index];
		break;
	case SRC_EV:
		v = k->ev[c->index];
		break;
	case SRC_MALFORMED:
		for (unsigned e = 1; e < PGM_ERR_COUNT; e++)
			v += k->err[e];
		break;
	}
	return (uint32_t)v; /* Counter32 wraps */
}

static struct mib_entry *snap_add(struct snapshot *s, const oid *suffix, size_t nsuffix,
	const oid *index, size_t nindex, u_char type, uint32_t value)
{
	struct mib_entry *e;

	if (s->failed || NE_LEN + nsuffix + nindex > MIB_OID_MAX)
		return NULL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct mib_entry *grown = realloc(s->e, cap * sizeof(*grown));

		if (grown == NULL) {
			s->failed = true;
			return NULL;
		}
		s->e = grown;
		s->cap = cap;
	}
	e = &s->e[s->n++];
	memcpy(e->name, ne_oid, sizeof(ne_oid));
	memcpy(e->name + NE_LEN, suffix, nsuffix * sizeof(oid));
	memcpy(e->name + NE_LEN + nsuffix, index, nindex * sizeof(oid));
	e->len = NE_LEN + nsuffix + nindex;
	e->type = type;
	e->value = value;
	memset(e->addr, 0, sizeof(e->addr));
	return e;
}

static void snap_scalar(struct snapshot *s, const oid *suffix, size_t n, u_char type, uint32_t v)
{
	static const oid zero[] = {0};

	snap_add(s, suffix, n, zero, 1, type, v);
}

static void snap_addr(struct snapshot *s, const oid *suffix, size_t nsuffix, const oid *index,
	size_t nindex, const struct pgm_nla *nla)
{
	struct mib_entry *e = snap_add(s, suffix, nsuffix, index, nindex, ASN_IPADDRESS, 0);

	/* IpAddress holds IPv4 only: an IPv6 or unknown address reads 0.0.0.0 */
	if (e != NULL && nla->afi == PGM_AFI_IP)
		memcpy(e->addr, nla->addr, 4);
}

static uint32_t limit_value(uint32_t limit)
{
	return limit == 0 ? (uint32_t)-1 : limit; /* the MIB's -1: no limit */
}

struct collect_ctx {
	struct snapshot *s;
	struct assist *a;
	const struct cfg *c;
	cp_time_t now;
	size_t ifs, sessions;
};

static void collect_if(void *arg, const struct cp_if_view *v)
{
	struct collect_ctx *c = arg;
	struct assist_if_settings eff;
	oid index[1] = {(oid)v->ifindex};

	if (v->ifindex <= 0)
		return;
	c->ifs++;
	settings_effective(c->c, &pgm_module, v->name, &eff);
	{
		const oid cfg_col[][4] = {{100, 3, 1, 2}, {100, 3, 1, 3}, {100, 3, 1, 4},
			{100, 3, 1, 5}, {100, 3, 1, 6}};

		snap_add(c->s, cfg_col[0], 4, index, 1, ASN_INTEGER, eff.assist ? 1 : 2);
		snap_add(c->s, cfg_col[1], 4, index, 1, ASN_UNSIGNED, eff.cfg.nak_rpt_ivl_ms);
		snap_add(c->s, cfg_col[2], 4, index, 1, ASN_UNSIGNED, eff.cfg.nak_rpt_rate);
		snap_add(c->s, cfg_col[3], 4, index, 1, ASN_UNSIGNED, eff.cfg.nak_rdata_ivl_ms);
		snap_add(c->s, cfg_col[4], 4, index, 1, ASN_UNSIGNED, eff.cfg.nak_elim_ivl_ms);
	}
	for (size_t i = 0; i < sizeof(if_perf_cols) / sizeof(if_perf_cols[0]); i++) {
		const oid col[4] = {100, 4, 1, if_perf_cols[i].column};

		snap_add(c->s, col, 4, index, 1, ASN_COUNTER,
			counter_value(v->counters, &if_perf_cols[i]));
	}
}

/* The TSI index: pgmNeTsiGlobalId, an OCTET STRING (SIZE (12)) (fixed: no length
   sub-identifier) holding the GSI's 12 hexadecimal digits as the CLI writes them, then
   pgmNeTsiDataSourcePort. */
static size_t tsi_index(const struct pgm_tsi *tsi, oid *index)
{
	char hex[13];

	snprintf(hex, sizeof(hex), "%02x%02x%02x%02x%02x%02x", tsi->gsi[0], tsi->gsi[1],
		tsi->gsi[2], tsi->gsi[3], tsi->gsi[4], tsi->gsi[5]);
	for (size_t i = 0; i < 12; i++)
		index[i] = (oid)(unsigned char)hex[i];
	index[12] = tsi->sport;
	return 13;
}

static void collect_session(void *arg, const struct cp_session_view *v)
{
	struct collect_ctx *c = arg;
	oid index[13];
	size_t ni;
	const struct pgm_nla *dlr = v->dlr_upstream.afi != 0 ? &v->dlr_upstream : &v->dlr_offtree;

	if (c->sessions++ >= SNAPSHOT_MAX_SESSIONS)
		return;
	ni = tsi_index(&v->tsi, index);
	{
		const oid col4[] = {101, 2, 1, 4}, col5[] = {101, 2, 1, 5}, col6[] = {101, 2, 1, 6};
		const oid col7[] = {101, 2, 1, 7}, col8[] = {101, 2, 1, 8}, col9[] = {101, 2, 1, 9};

		snap_add(c->s, col4, 4, index, ni, ASN_UNSIGNED, v->data_dport);
		snap_addr(c->s, col5, 4, index, ni, &v->source);
		snap_addr(c->s, col6, 4, index, ni, &v->group);
		snap_addr(c->s, col7, 4, index, ni, &v->upstream);
		snap_add(c->s, col8, 4, index, ni, ASN_INTEGER, (uint32_t)v->upstream_ifindex);
		snap_addr(c->s, col9, 4, index, ni, dlr);
	}
	{
		const oid trail[] = {101, 4, 1, 3}, lead[] = {101, 4, 1, 5}, states[] = {101, 4, 1, 10};
		const oid spm[] = {101, 4, 1, 32}, tg[] = {101, 4, 1, 33}, timeout[] = {101, 4, 1, 34};
		const oid ttl[] = {101, 4, 1, 35};
		cp_time_t left = v->expires > c->now ? v->expires - c->now : 0;

		snap_add(c->s, trail, 4, index, ni, ASN_COUNTER, v->trail);
		snap_add(c->s, lead, 4, index, ni, ASN_COUNTER, v->lead);
		snap_add(c->s, states, 4, index, ni, ASN_COUNTER, (uint32_t)v->repair_states);
		snap_add(c->s, spm, 4, index, ni, ASN_UNSIGNED, v->spm_sqn);
		snap_add(c->s, tg, 4, index, ni, ASN_UNSIGNED, v->parity_tgs);
		/* TimeTicks (1/100 s) until the session expires; 0 when it never does */
		snap_add(c->s, timeout, 4, index, ni, ASN_TIMETICKS,
			v->expires != 0 ? (uint32_t)(left / 10000) : 0);
		snap_add(c->s, ttl, 4, index, ni, ASN_UNSIGNED, v->last_ttl);
	}
	for (size_t i = 0; i < sizeof(tsi_perf_cols) / sizeof(tsi_perf_cols[0]); i++) {
		const oid col[4] = {101, 4, 1, tsi_perf_cols[i].column};

		snap_add(c->s, col, 4, index, ni, ASN_COUNTER,
			counter_value(v->counters, &tsi_perf_cols[i]));
	}
}

static int entry_cmp(const void *a, const void *b)
{
	const struct mib_entry *x = a, *y = b;

	return snmp_oid_compare(x->name, x->len, y->name, y->len);
}

static void snapshot_build(struct snapshot *s)
{
	const struct cfg *c = cfg_running();
	const struct assist_settings *g = cfg_module_global(c, &pgm_module);
	struct assist *a = pgm_vty_assist();
	struct collect_ctx ctx = {.s = s, .a = a, .c = c};
	struct cp_limits lim;
	static const oid enable[] = {1}, lifetime[] = {2}, max_states[] = {3}, max_sessions[] = {4};
	static const oid if_total[] = {100, 1}, tsi_total[] = {101, 1};

	s->n = 0;
	s->failed = false;
	snap_scalar(s, enable, 1, ASN_INTEGER, a != NULL && assist_running(a) ? 1 : 2);
	snap_scalar(s, lifetime, 1, ASN_UNSIGNED, g->cp.session_lifetime_s);
	/* the limits in force, as the shows give them: derived from the memory budget when unset */
	cp_limits(&g->cp, &lim);
	snap_scalar(s, max_states, 1, ASN_INTEGER, limit_value(lim.max_repair_states));
	snap_scalar(s, max_sessions, 1, ASN_INTEGER, limit_value(lim.max_sessions));
	if (a != NULL) {
		ctx.now = assist_now(a);
		assist_foreach_if(a, collect_if, &ctx);
		assist_foreach_session(a, NULL, collect_session, &ctx);
	}
	snap_scalar(s, if_total, 2, ASN_UNSIGNED, (uint32_t)ctx.ifs);
	snap_scalar(s, tsi_total, 2, ASN_UNSIGNED,
		(uint32_t)(ctx.sessions < SNAPSHOT_MAX_SESSIONS ? ctx.sessions
								 : SNAPSHOT_MAX_SESSIONS));
	if (s->failed) {
		log_warnx("snmp: out of memory building the MIB view");
		s->n = 0;
	}
	qsort(s->e, s->n, sizeof(*s->e), entry_cmp);
	s->built = ev_time_now();
}

/* The first entry whose name is >= (or >, `after`) the one asked for. */
static const struct mib_entry *snapshot_find(
	const struct snapshot *s, const oid *name, size_t len, bool after)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = snmp_oid_compare(s->e[mid].name, s->e[mid].len, name, len);

		if (c < 0 || (after && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n ? &s->e[lo] : NULL;
}

/* ---- the subagent ---- */

/* The agent library's AgentX session with the master (NULL while there is none) and its
   opening, exported by libnetsnmpagent but in no installed header. The subagent opens the
   session itself rather than with net-snmp's pings: those wait for the master's answer, so
   a master that is stopped would stop the daemon's loop with it. */
extern netsnmp_session *main_session;
int subagent_open_master_session(void);

static struct {
	struct ev_loop *loop; /* NULL: settings only */
	bool started;
	uint32_t port;
	struct ev_timer *timer;
	struct ev_io *io[AGENTX_MAX_FDS];
	int fd[AGENTX_MAX_FDS];
	size_t nfds;
	uint64_t next_open; /* ev_time_now() of the next attempt while there is no session */
	struct snapshot snap;
	uint64_t requests, errors;
} ax;

static void set_value(netsnmp_variable_list *var, const struct mib_entry *e)
{
	if (e->type == ASN_IPADDRESS) {
		snmp_set_var_typed_value(var, e->type, e->addr, 4);
	} else if (e->type == ASN_INTEGER) {
		long v = (long)(int32_t)e->value;

		snmp_set_var_typed_value(var, e->type, &v, sizeof(v));
	} else {
		u_long v = e->value;

		snmp_set_var_typed_value(var, e->type, &v, sizeof(v));
	}
}

static int ne_handler(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
	netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	(void)handler;
	(void)reg;
	if (ax.snap.built == 0 || ev_time_now() - ax.snap.built >= SNAPSHOT_MAX_AGE_US)
		snapshot_build(&ax.snap);
	for (netsnmp_request_info *r = requests; r != NULL; r = r->next) {
		netsnmp_variable_list *var = r->requestvb;
		const struct mib_entry *e;

		if (r->processed)
			continue;
		ax.requests++;
		switch (reqinfo->mode) {
		case MODE_GET:
			e = snapshot_find(&ax.snap, var->name, var->name_length, false);
			if (e == NULL || snmp_oid_compare(e->name, e->len, var->name,
						 var->name_length) != 0)
				netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHINSTANCE);
			else
				set_value(var, e);
			break;
		case MODE_GETNEXT:
			e = snapshot_find(&ax.snap, var->name, var->name_length, true);
			/* past the branch: left unanswered, the agent goes on to the next one */
			if (e != NULL) {
				snmp_set_var_objid(var, e->name, e->len);
				set_value(var, e);
			}
			break;
		default:
			ax.errors++;
			netsnmp_set_request_error(reqinfo, r, SNMP_ERR_NOTWRITABLE);
			break;
		}
	}
	return SNMP_ERR_NOERROR;
}

static int log_callback(int major, int minor, void *server, void *client)
{
	const struct snmp_log_message *m = server;
	char text[256];
	size_t n;

	(void)major;
	(void)minor;
	(void)client;
	if (m == NULL || m->msg == NULL)
		return 0;
	snprintf(text, sizeof(text), "%s", m->msg);
	n = strlen(text);
	while (n > 0 && text[n - 1] == '\n')
		text[--n] = '\0';
	if (m->priority <= LOG_WARNING)
		log_warnx("snmp: %s", text);
	else
		log_debug(LOG_CAT_EVENTS, "snmp: %s", text);
	return 0;
}

static void agentx_poll(void);

static void on_io(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	netsnmp_large_fd_set fds;

	(void)loop;
	(void)events;
	(void)arg;
	netsnmp_large_fd_set_init(&fds, fd + 1);
	NETSNMP_LARGE_FD_SET(fd, &fds);
	snmp_read2(&fds);
	netsnmp_large_fd_set_cleanup(&fds);
	agentx_poll();
}

static void on_timer(struct ev_loop *loop, void *arg)
{
	uint64_t now = ev_time_now();

	(void)loop;
	(void)arg;
	snmp_timeout();
	run_alarms();
	/* a master that went away (snmpd restarted: its socket closed) or was never there */
	if (main_session == NULL && now >= ax.next_open) {
		ax.next_open = now + AGENTX_RETRY_US;
		if (subagent_open_master_session() == 0) {
			register_mib_reattach();
			log_info("snmp: connected to the AgentX master");
		}
	}
	agentx_poll();
}

/* Makes the loop's descriptors and timer match net-snmp's sessions and alarms. */
static void agentx_poll(void)
{
	netsnmp_large_fd_set fds;
	struct timeval tv = {.tv_sec = 1};
	int numfds = 0, block = 0;
	uint64_t wait_us;

	netsnmp_check_outstanding_agent_requests();
	netsnmp_large_fd_set_init(&fds, FD_SETSIZE);
	snmp_select_info2(&numfds, &fds, &tv, &block);
	/* drop the descriptors net-snmp closed */
	for (size_t i = 0; i < ax.nfds;) {
		if (ax.fd[i] < numfds && NETSNMP_LARGE_FD_ISSET(ax.fd[i], &fds)) {
			i++;
			continue;
		}
		ev_io_del(ax.loop, ax.io[i]);
		ax.io[i] = ax.io[ax.nfds - 1];
		ax.fd[i] = ax.fd[ax.nfds - 1];
		ax.nfds--;
	}
	/* add the new ones */
	for (int fd = 0; fd < numfds; fd++) {
		bool known = false;

		if (!NETSNMP_LARGE_FD_ISSET(fd, &fds))
			continue;
		for (size_t i = 0; i < ax.nfds; i++)
			known |= ax.fd[i] == fd;
		if (known)
			continue;
		if (ax.nfds == AGENTX_MAX_FDS) {
			log_warnx("snmp: more than %d sockets, descriptor %d not watched",
				AGENTX_MAX_FDS, fd);
			continue;
		}
		if ((ax.io[ax.nfds] = ev_io_add(ax.loop, fd, EV_READ, on_io, NULL)) == NULL) {
			log_warnx("snmp: descriptor %d not watched", fd);
			continue;
		}
		ax.fd[ax.nfds++] = fd;
	}
	netsnmp_large_fd_set_cleanup(&fds);
	wait_us = block ? AGENTX_MAX_WAIT_US : (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	if (wait_us > AGENTX_MAX_WAIT_US)
		wait_us = AGENTX_MAX_WAIT_US;
	ev_timer_start(ax.loop, ax.timer, ev_time_now() + wait_us);
}

const char *snmp_agentx_address(uint32_t port, char *buf, size_t len)
{
	if (port == 0)
		snprintf(buf, len, "%s", AGENTX_DEFAULT_SOCKET);
	else
		snprintf(buf, len, "tcp:127.0.0.1:%u", port);
	return buf;
}

static int agentx_start(uint32_t port)
{
	char address[64];
	netsnmp_handler_registration *reg;

	snmp_agentx_address(port, address, sizeof(address));
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_ROLE, 1);
	netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_X_SOCKET, address);
	/* alarms from the loop's timer, not SIGALRM; no files of net-snmp's own */
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_ALARM_DONT_USE_SIG, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	/* the agent needs no MIB files: it names nothing (and Debian ships few of them) */
	setenv("MIBS", "", 1);
	snmp_disable_log();
	snmp_enable_calllog();
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING, log_callback, NULL);
	if (init_agent(AGENTX_NAME) != 0) {
		log_warnx("snmp: the agent library did not start");
		return -1;
	}
	/* no pings: they wait for the master's answer (on_timer reconnects instead) */
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_AGENTX_PING_INTERVAL, 0);
	reg = netsnmp_create_handler_registration(
		"pgmNetworkElement", ne_handler, ne_oid, NE_LEN, HANDLER_CAN_RONLY);
	if (reg == NULL || netsnmp_register_handler(reg) != MIB_REGISTERED_OK) {
		log_warnx("snmp: pgmNetworkElement not registered");
		shutdown_agent();
		return -1;
	}
	init_snmp(AGENTX_NAME);
	/* without its configuration files net-snmp registers nothing with the master (and
	   opens no session): the handler's registration is sent again once a session is open */
	if (main_session != NULL || subagent_open_master_session() == 0)
		register_mib_reattach();
	if ((ax.timer = ev_timer_new(ax.loop, on_timer, NULL)) == NULL) {
		snmp_shutdown(AGENTX_NAME);
		shutdown_agent();
		return -1;
	}
	ax.started = true;
	ax.port = port;
	ax.snap.built = 0;
	ax.next_open = ev_time_now() + AGENTX_RETRY_US;
	log_info("snmp: AgentX subagent for the PGM MIB, master %s", address);
	agentx_poll();
	return 0;
}

void snmp_agentx_stop(void)
{
	if (!ax.started)
		return;
	for (size_t i = 0; i < ax.nfds; i++)
		ev_io_del(ax.loop, ax.io[i]);
	ax.nfds = 0;
	ev_timer_free(ax.loop, ax.timer);
	ax.timer = NULL;
	snmp_shutdown(AGENTX_NAME);
	shutdown_agent();
	snmp_unregister_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING, log_callback,
		NULL, 1);
	free(ax.snap.e);
	memset(&ax.snap, 0, sizeof(ax.snap));
	ax.started = false;
	log_info("snmp: AgentX subagent stopped");
}

static int snmp_apply(
	void *ctx, const struct cfg *prev, const struct cfg *next, char *err, size_t errlen)
{
	const struct snmp_settings *s = cfg_module_global(next, &snmp_module);

	(void)ctx;
	(void)prev;
	(void)err;
	(void)errlen;
	if (ax.loop == NULL)
		return 0;
	if (ax.started && (!s->agentx || s->agentx_port != ax.port))
		snmp_agentx_stop();
	/* a master that is not there yet is no error: on_timer looks for it */
	if (s->agentx && !ax.started && agentx_start(s->agentx_port) < 0)
		log_warnx("snmp: the AgentX subagent did not start");
	return 0;
}

void snmp_vty_init(struct ev_loop *loop)
{
	ax.loop = loop;
	settings_install(&snmp_module);
}

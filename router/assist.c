/*
 * PGM router assist inside pgmrouterd: configuration, and the wiring of the control plane to the
 * NFQUEUE data plane. See router/assist.h for the packet path.
 */
#include "router/assist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/mfc.h"
#include "dataplane/nfq.h"
#include "dataplane/pcapio.h"
#include "dataplane/wire/pgm_wire.h"
#include "dataplane/rawsock.h"
#include "dataplane/rtnl.h"
#include "router/daemon.h"
#include "router/lib/event.h"
#include "router/lib/log.h"

#define MAX_DATAGRAM 65535u
/* Held drops (dataplane/nfq.h): up to HOLD_DROPS drop verdicts wait at most HOLD_US for a later
   receive round's send; only while the queue wakes the loop again less than HOLD_BUSY_US after
   its last packets were handled. Slower, the wait would mostly end with the timer, a wakeup of its
   own: no system call saved. */
#define HOLD_DROPS   64u
#define HOLD_US	     5000u
#define HOLD_BUSY_US 500u

static const struct assist_timer_def timer_defs[ASSIST_T_COUNT] = {
	[ASSIST_T_NAK_RPT_IVL] = {"nak-repeat-interval", "ms", 10, 600000,
		"NAK_RPT_IVL: how long an unconfirmed NAK is repeated upstream (ms)\n"},
	[ASSIST_T_NAK_RPT_RATE] = {"nak-repeat-rate", "per second", 1, 1000,
		"NAK_RPT_RTE: repeats per second while a NAK is unconfirmed\n"},
	[ASSIST_T_NAK_RDATA_IVL] = {"nak-rdata-interval", "ms", 10, 3600000,
		"NAK_RDATA_IVL: how long repair state waits for RDATA after an NCF (ms)\n"},
	[ASSIST_T_NAK_ELIM_IVL] = {"nak-eliminate-interval", "ms", 0, 3600000,
		"NAK_ELIM_IVL: duplicate NAKs discarded after a confirmation (ms)\n"},
	[ASSIST_T_NCF_IVL] = {"ncf-interval", "ms", 0, 60000,
		"Identical NCFs on one interface at most once per interval (ms)\n"},
	[ASSIST_T_NAK_BO_IVL] = {"nak-backoff-interval", "ms", 0, 60000,
		"NAK_BO_IVL written into forwarded SPMs (ms); 0 leaves it unchanged\n"},
	[ASSIST_T_NAK_BO_PROBE] = {"nak-backoff-probe", "repair states", 0, 1000,
		"NAK_PROBE_NUM: halve NAK_BO_IVL after this many repair states without a duplicate "
		"NAK, double it on a first duplicate; 0 = no tuning\n"},
	[ASSIST_T_NAK_BO_MIN] = {"nak-backoff-minimum", "ms", 0, 60000,
		"NAK_BO_IVL_MIN: the tuned NAK_BO_IVL stays at or above this (ms)\n"},
	[ASSIST_T_NAK_BO_MAX] = {"nak-backoff-maximum", "ms", 0, 60000,
		"NAK_BO_IVL_MAX: the tuned NAK_BO_IVL stays at or below this (ms)\n"},
	[ASSIST_T_DUP_NAK_MAX] = {"duplicate-nak-max", "NAKs", 0, 1000,
		"DUP_NAK_MAX: duplicate NAKs for one repair state at which multicast below is "
		"assumed lost (unicast NCFs with OPT_NBR_UNREACH); 0 = never\n"},
};

struct assist {
	struct assist_conf conf;
	struct assist_if *ifs;
	size_t nifs, ifs_cap;

	bool running;
	struct cp *cp;
	struct rtnl *rtnl;
	struct ev_io *rtnl_io;
	struct mfc *mfc; /* the kernel's multicast routes: where SPM and RDATA copies go */
	struct ev_io *mfc_io;
	struct nfqueue *nfq;
	struct ev_io *nfq_io;
	struct rules *rules;
	struct rawsock *raw;
	bool sends_batched; /* between sends_batch_begin and _end: rawsock_send only queues */
	struct ev_timer *cp_timer;
	struct ev_timer *hold_timer; /* bounds the wait of held drop verdicts */
	uint64_t nfq_idle;	     /* when the loop last finished with the queue's packets */
	unsigned cp_log_mask;
	struct pcap_writer *capture;
	char *capture_path;
	struct pgm_udp_ports udp_ports;
	char nfq_error[128]; /* last receive failure, for show */

	/* The time the packets of one receive round are handled at (packet_now) */
	cp_time_t pkt_now;
	bool pkt_now_fresh;

	/* The packet being processed, for actions built from it. */
	const struct pgm_packet *cur_pkt;
	const struct pgm_ip *cur_ip;

	struct assist_stats stats;
	uint8_t rwbuf[MAX_DATAGRAM];
	uint8_t tpdu[MAX_DATAGRAM];
	uint8_t txbuf[MAX_DATAGRAM];

	/* offline replay */
	bool replay;
	bool replay_quiet;
	int replay_ifindex; /* egress of the copy being replayed, for printing */

	/* assist_test_start: replay-style printing, interfaces by name from the control plane,
	   configuration applied to it, and a clock the test moves */
	bool test;
	cp_time_t test_now;
};

static struct assist *A;

const struct assist_timer_def *assist_timer_def(enum assist_timer t)
{
	return (unsigned)t < ASSIST_T_COUNT ? &timer_defs[t] : NULL;
}

uint32_t assist_timer_get(const struct cp_if_config *cfg, enum assist_timer t)
{
	switch (t) {
	case ASSIST_T_NAK_RPT_IVL: return cfg->nak_rpt_ivl_ms;
	case ASSIST_T_NAK_RPT_RATE: return cfg->nak_rpt_rate;
	case ASSIST_T_NAK_RDATA_IVL: return cfg->nak_rdata_ivl_ms;
	case ASSIST_T_NAK_ELIM_IVL: return cfg->nak_elim_ivl_ms;
	case ASSIST_T_NCF_IVL: return cfg->ncf_ivl_ms;
	case ASSIST_T_NAK_BO_IVL: return cfg->nak_bo_ivl_us / 1000u;
	case ASSIST_T_NAK_BO_PROBE: return cfg->nak_probe_num;
	case ASSIST_T_NAK_BO_MIN: return cfg->nak_bo_ivl_min_us / 1000u;
	case ASSIST_T_NAK_BO_MAX: return cfg->nak_bo_ivl_max_us / 1000u;
	case ASSIST_T_DUP_NAK_MAX: return cfg->dup_nak_max;
	default: return 0;
	}
}

void assist_timer_set(struct cp_if_config *cfg, enum assist_timer t, uint32_t value)
{
	switch (t) {
	case ASSIST_T_NAK_RPT_IVL: cfg->nak_rpt_ivl_ms = value; break;
	case ASSIST_T_NAK_RPT_RATE: cfg->nak_rpt_rate = value; break;
	case ASSIST_T_NAK_RDATA_IVL: cfg->nak_rdata_ivl_ms = value; break;
	case ASSIST_T_NAK_ELIM_IVL: cfg->nak_elim_ivl_ms = value; break;
	case ASSIST_T_NCF_IVL: cfg->ncf_ivl_ms = value; break;
	case ASSIST_T_NAK_BO_IVL: cfg->nak_bo_ivl_us = value * 1000u; break;
	case ASSIST_T_NAK_BO_PROBE: cfg->nak_probe_num = value; break;
	case ASSIST_T_NAK_BO_MIN: cfg->nak_bo_ivl_min_us = value * 1000u; break;
	case ASSIST_T_NAK_BO_MAX: cfg->nak_bo_ivl_max_us = value * 1000u; break;
	case ASSIST_T_DUP_NAK_MAX: cfg->dup_nak_max = value; break;
	default: break;
	}
}

/* ---- configuration ---- */

static void conf_default(struct assist_conf *c)
{
	struct cp_config cp;

	cp_config_default(&cp);
	memset(c, 0, sizeof(*c));
	c->queue_num = ASSIST_DEFAULT_QUEUE;
	c->backend = RULES_BACKEND_AUTO;
	c->ncf_ttl = ASSIST_DEFAULT_NCF_TTL;
	c->udp = true;
	c->link_output = true;
	c->udp_ucast_port = PGM_DEFAULT_UDP_UCAST_PORT;
	c->udp_mcast_port = PGM_DEFAULT_UDP_MCAST_PORT;
	c->session_lifetime_s = cp.session_lifetime_s;
	c->max_sessions = cp.max_sessions;
	c->max_repair_states = cp.max_repair_states;
	c->dlr_redirect = cp.dlr_redirect;
	c->dlr_discovery = cp.dlr_discovery;
	c->dlr_poll_ivl_ms = cp.dlr_poll_ivl_ms;
	c->dlr_poll_bo_ivl_ms = cp.dlr_poll_bo_ivl_ms;
	c->poll_reply = cp.poll_reply;
	c->if_defaults = cp.if_defaults;
}

static void cp_config_from_conf(struct cp_config *cfg)
{
	cp_config_default(cfg);
	cfg->session_lifetime_s = A->conf.session_lifetime_s;
	cfg->max_sessions = A->conf.max_sessions;
	cfg->max_repair_states = A->conf.max_repair_states;
	cfg->dlr_redirect = A->conf.dlr_redirect;
	cfg->dlr_discovery = A->conf.dlr_discovery;
	cfg->dlr_poll_ivl_ms = A->conf.dlr_poll_ivl_ms;
	cfg->dlr_poll_bo_ivl_ms = A->conf.dlr_poll_bo_ivl_ms;
	cfg->poll_reply = A->conf.poll_reply;
	cfg->if_defaults = A->conf.if_defaults;
}

const struct assist_conf *assist_conf(void)
{
	return &A->conf;
}

bool assist_running(void)
{
	return A != NULL && A->running;
}

struct cp *assist_cp(void)
{
	return A != NULL ? A->cp : NULL;
}

void assist_get_stats(struct assist_stats *st)
{
	*st = A->stats;
}

static struct assist_if *if_find(const char *name)
{
	for (size_t i = 0; i < A->nifs; i++)
		if (strcmp(A->ifs[i].name, name) == 0)
			return &A->ifs[i];
	return NULL;
}

const struct assist_if *assist_if_find(const char *name)
{
	return if_find(name);
}

size_t assist_if_count(void)
{
	return A->nifs;
}

const struct assist_if *assist_if_at(size_t i)
{
	return i < A->nifs ? &A->ifs[i] : NULL;
}

size_t assist_if_enabled_count(void)
{
	size_t n = 0;

	for (size_t i = 0; i < A->nifs; i++)
		n += A->ifs[i].enabled;
	return n;
}

static void if_effective_config(struct assist_if *ifc)
{
	for (int t = 0; t < ASSIST_T_COUNT; t++)
		if (!(ifc->timers_set & (1u << t)))
			assist_timer_set(&ifc->cfg, t, assist_timer_get(&A->conf.if_defaults, t));
}

static struct assist_if *if_get(const char *name)
{
	struct assist_if *ifc = if_find(name);

	if (ifc != NULL)
		return ifc;
	if (A->nifs == A->ifs_cap) {
		size_t cap = A->ifs_cap ? A->ifs_cap * 2 : 8;
		struct assist_if *n = realloc(A->ifs, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		A->ifs = n;
		A->ifs_cap = cap;
	}
	ifc = &A->ifs[A->nifs++];
	memset(ifc, 0, sizeof(*ifc));
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	ifc->cfg = A->conf.if_defaults;
	return ifc;
}

struct test_if_lookup {
	const char *name;
	int ifindex;
};

static void test_if_match(void *ctx, const struct cp_if_view *v)
{
	struct test_if_lookup *l = ctx;

	if (l->ifindex == 0 && strcmp(v->name, l->name) == 0)
		l->ifindex = v->ifindex;
}

/* Under assist_test_start the control plane's own table stands in for rtnetlink. */
static int test_ifindex(const char *name)
{
	struct test_if_lookup l = {.name = name};

	if (A->cp != NULL)
		cp_foreach_if(A->cp, test_if_match, &l);
	return l.ifindex;
}

int assist_ifindex(const char *name)
{
	const struct rtnl_if *ifp;

	if (A != NULL && A->test)
		return test_ifindex(name);
	if (A == NULL || A->rtnl == NULL)
		return 0;
	ifp = rtnl_if_by_name(A->rtnl, name);
	return ifp != NULL ? ifp->ifindex : 0;
}

int assist_if_link(const char *name, bool *up, bool *running)
{
	const struct rtnl_if *ifp;

	*up = *running = false;
	if (A != NULL && A->test) {
		int ifindex = test_ifindex(name);

		*up = *running = ifindex != 0;
		return ifindex;
	}
	if (A == NULL || A->rtnl == NULL || (ifp = rtnl_if_by_name(A->rtnl, name)) == NULL)
		return 0;
	*up = ifp->up;
	*running = ifp->running;
	return ifp->ifindex;
}

const char *assist_ifname(int ifindex, char *buf, size_t len)
{
	struct cp_if_view v;

	if (A != NULL && A->cp != NULL && cp_get_if(A->cp, ifindex, &v) && v.name[0] != '\0')
		snprintf(buf, len, "%s", v.name);
	else if (ifindex == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "if%d", ifindex);
	return buf;
}

/* ---- applying configuration to the running packet path ---- */

static size_t enabled_names(const char **names, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < A->nifs && n < max; i++)
		if (A->ifs[i].enabled)
			names[n++] = A->ifs[i].name;
	return n;
}

static int rules_apply(char *err, size_t errlen)
{
	const char *names[CP_MAX_INTERFACES];
	size_t n;

	if (!A->running || A->rules == NULL)
		return 0;
	n = enabled_names(names, CP_MAX_INTERFACES);
	A->stats.rules_updates++;
	if (rules_update(A->rules, names, n, err, errlen) < 0)
		return -1;
	log_debug(LOG_CAT_DATAPLANE, "interception rules updated: %zu interface%s", n,
		n == 1 ? "" : "s");
	return 0;
}

/* Pushes one configured interface's settings to the control plane, if the interface exists. */
static void cp_sync_if(const struct assist_if *ifc)
{
	int ifindex;

	if (A->cp == NULL || (ifindex = assist_ifindex(ifc->name)) == 0)
		return;
	cp_if_set_config(A->cp, ifindex, &ifc->cfg);
	if (cp_if_set_assist(A->cp, ifindex, ifc->enabled) < 0)
		log_warnx("%s: router assist not enabled: more than %d interfaces with router assist",
			ifc->name, CP_MAX_INTERFACES);
}

static void cp_sync_config(void)
{
	struct cp_config cfg;

	if (A->cp == NULL || (A->replay && !A->test))
		return;
	cp_config_from_conf(&cfg);
	cp_set_config(A->cp, &cfg);
	for (size_t i = 0; i < A->nifs; i++)
		cp_sync_if(&A->ifs[i]);
}

static void udp_ports_from_conf(void)
{
	A->udp_ports.enabled = A->conf.udp;
	A->udp_ports.ucast_port = A->conf.udp_ucast_port;
	A->udp_ports.mcast_port = A->conf.udp_mcast_port;
}

static void rules_config_from_conf(struct rules_config *rc)
{
	rules_config_default(rc);
	rc->queue_num = A->conf.queue_num;
	rc->udp = A->conf.udp;
	rc->udp_ucast_port = A->conf.udp_ucast_port;
	rc->udp_mcast_port = A->conf.udp_mcast_port;
}

static int dataplane_restart(char *err, size_t errlen);

int assist_set_queue(uint16_t queue_num, char *err, size_t errlen)
{
	uint16_t old = A->conf.queue_num;

	if (old == queue_num)
		return 0;
	A->conf.queue_num = queue_num;
	if (A->running && dataplane_restart(err, errlen) < 0) {
		char err2[256];

		A->conf.queue_num = old;
		if (dataplane_restart(err2, sizeof(err2)) < 0)
			log_warnx("queue %u: %s; and back to queue %u: %s", queue_num, err, old, err2);
		return -1;
	}
	return 0;
}

int assist_set_backend(enum rules_backend backend, char *err, size_t errlen)
{
	enum rules_backend old = A->conf.backend;

	if (old == backend)
		return 0;
	A->conf.backend = backend;
	if (A->running && dataplane_restart(err, errlen) < 0) {
		char err2[256];

		A->conf.backend = old;
		if (dataplane_restart(err2, sizeof(err2)) < 0)
			log_warnx("backend %s: %s; and back: %s", rules_backend_name(backend), err,
				err2);
		return -1;
	}
	return 0;
}

void assist_set_ncf_ttl(uint8_t ttl)
{
	A->conf.ncf_ttl = ttl;
}

int assist_set_udp(bool enabled, uint16_t ucast_port, uint16_t mcast_port, char *err,
	size_t errlen)
{
	struct assist_conf old = A->conf;

	if (enabled && (ucast_port == 0 || mcast_port == 0)) {
		snprintf(err, errlen, "UDP encapsulation ports must not be 0");
		return -1;
	}
	A->conf.udp = enabled;
	A->conf.udp_ucast_port = ucast_port;
	A->conf.udp_mcast_port = mcast_port;
	if (A->conf.udp == old.udp && A->conf.udp_ucast_port == old.udp_ucast_port &&
		A->conf.udp_mcast_port == old.udp_mcast_port)
		return 0;
	udp_ports_from_conf();
	if (A->running && dataplane_restart(err, errlen) < 0) {
		char err2[256];

		A->conf = old;
		udp_ports_from_conf();
		if (dataplane_restart(err2, sizeof(err2)) < 0)
			log_warnx("udp-encapsulation: %s; and back: %s", err, err2);
		return -1;
	}
	return 0;
}

int assist_set_link_output(bool enabled, char *err, size_t errlen)
{
	A->conf.link_output = enabled;
	if (A->raw != NULL && !rawsock_set_link_output(A->raw, enabled)) {
		snprintf(err, errlen, "no packet socket: multicast goes through the IP stack");
		return -1;
	}
	return 0;
}

void assist_set_session_lifetime(uint32_t seconds)
{
	A->conf.session_lifetime_s = seconds;
	cp_sync_config();
}

void assist_set_dlr(bool redirect, bool discovery, uint32_t poll_ivl_ms, uint32_t poll_bo_ivl_ms)
{
	A->conf.dlr_redirect = redirect;
	A->conf.dlr_discovery = discovery;
	A->conf.dlr_poll_ivl_ms = poll_ivl_ms;
	A->conf.dlr_poll_bo_ivl_ms = poll_bo_ivl_ms;
	cp_sync_config();
}

void assist_set_poll_reply(bool enabled)
{
	A->conf.poll_reply = enabled;
	cp_sync_config();
}

void assist_set_limits(uint32_t max_sessions, uint32_t max_repair_states)
{
	A->conf.max_sessions = max_sessions;
	A->conf.max_repair_states = max_repair_states;
	cp_sync_config();
}

void assist_set_max_sessions(uint32_t max_sessions)
{
	assist_set_limits(max_sessions, A->conf.max_repair_states);
}

void assist_set_max_repair_states(uint32_t max_repair_states)
{
	assist_set_limits(A->conf.max_sessions, max_repair_states);
}

void assist_set_default_timer(enum assist_timer t, bool set, uint32_t value)
{
	struct cp_if_config builtin;

	cp_if_config_default(&builtin);
	if (set)
		A->conf.defaults_set |= 1u << t;
	else
		A->conf.defaults_set &= ~(1u << t);
	assist_timer_set(&A->conf.if_defaults, t, set ? value : assist_timer_get(&builtin, t));
	for (size_t i = 0; i < A->nifs; i++)
		if_effective_config(&A->ifs[i]);
	cp_sync_config();
}

int assist_if_enable(const char *name, bool enabled, char *err, size_t errlen)
{
	struct assist_if *ifc = if_get(name);

	if (ifc == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (ifc->enabled == enabled)
		return 0;
	if (enabled && assist_if_enabled_count() >= CP_MAX_INTERFACES) {
		snprintf(err, errlen, "at most %d interfaces can have router assist",
			CP_MAX_INTERFACES);
		return -1;
	}
	ifc->enabled = enabled;
	if (!A->running) {
		cp_sync_if(ifc); /* a control plane without packet path (tests) */
		return 0;
	}
	if (rules_apply(err, errlen) < 0) {
		ifc->enabled = !enabled;
		return -1;
	}
	cp_sync_if(ifc);
	if (enabled && assist_ifindex(name) == 0)
		log_info("%s: router assist configured; the interface does not exist yet, waiting "
			 "for it",
			name);
	else
		log_info("%s: router assist %s", name, enabled ? "enabled" : "disabled");
	return 0;
}

void assist_if_set_timer(const char *name, enum assist_timer t, bool set, uint32_t value)
{
	struct assist_if *ifc = if_get(name);

	if (ifc == NULL)
		return;
	if (set) {
		ifc->timers_set |= 1u << t;
		assist_timer_set(&ifc->cfg, t, value);
	} else {
		ifc->timers_set &= ~(1u << t);
	}
	if_effective_config(ifc);
	cp_sync_if(ifc);
}

void assist_if_forget(const char *name)
{
	struct assist_if *ifc = if_find(name);
	char err[256];

	if (ifc == NULL)
		return;
	if (ifc->enabled && assist_if_enable(name, false, err, sizeof(err)) < 0)
		log_warnx("%s: %s", name, err);
	ifc->timers_set = 0;
	if_effective_config(ifc);
	cp_sync_if(ifc);
	*ifc = A->ifs[--A->nifs];
}

/* ---- interfaces from rtnetlink ---- */

/* Whether the interface's output can go through the link layer (rawsock.h). */
static void raw_link_from_rtnl(const struct rtnl_if *ifp, bool present)
{
	if (A->raw != NULL &&
		rawsock_set_link(A->raw, ifp->ifindex, present && ifp->type == ARPHRD_ETHER) < 0)
		log_warnx("%s: multicast out of it goes through the IP stack (ifindex %d: %s)",
			ifp->name, ifp->ifindex, strerror(errno));
}

static void cp_if_from_rtnl(const struct rtnl_if *ifp)
{
	struct pgm_nla addr = {0};
	struct assist_if *ifc;

	raw_link_from_rtnl(ifp, true);
	if (cp_if_add(A->cp, ifp->ifindex, ifp->name) < 0) {
		log_warnx("%s: not tracked: the control plane's interface table is full", ifp->name);
		return;
	}
	if (ifp->has_primary4)
		pgm_nla_from_ip4(&addr, &ifp->primary4);
	cp_if_set_addr(A->cp, ifp->ifindex, &addr);
	ifc = if_find(ifp->name);
	if (ifc != NULL)
		cp_sync_if(ifc);
}

static void on_rtnl_event(void *ctx, const struct rtnl_event *ev)
{
	const struct rtnl_if *ifp = ev->ifp;
	struct pgm_nla addr = {0};
	const struct assist_if *ifc;

	(void)ctx;
	if (A->cp == NULL || ifp == NULL)
		return;
	switch (ev->type) {
	case RTNL_IF_ADDED:
		cp_if_from_rtnl(ifp);
		ifc = if_find(ifp->name);
		/* Not during the start-up dump: the start may still fail, and its own message
		   then is the only one. */
		if (ifc != NULL && ifc->enabled && A->running)
			log_info("%s: appeared (ifindex %d), router assist active", ifp->name,
				ifp->ifindex);
		break;
	case RTNL_IF_REMOVED:
		ifc = if_find(ifp->name);
		cp_if_remove(A->cp, ifp->ifindex);
		raw_link_from_rtnl(ifp, false);
		if (ifc != NULL && ifc->enabled)
			log_info("%s: removed; router assist waits for it to come back", ifp->name);
		break;
	case RTNL_IF_CHANGED:
		if (ev->changes & RTNL_CHANGE_TYPE)
			raw_link_from_rtnl(ifp, true);
		if (ev->changes & RTNL_CHANGE_NAME) {
			/* The control plane knows interfaces by index and name; a rename makes it
			   another interface for the configuration (which is by name). */
			cp_if_remove(A->cp, ifp->ifindex);
			cp_if_from_rtnl(ifp);
			log_info("%s: renamed from %s", ifp->name, ev->old_name);
		} else if (ev->changes & RTNL_CHANGE_PRIMARY4) {
			if (ifp->has_primary4)
				pgm_nla_from_ip4(&addr, &ifp->primary4);
			cp_if_set_addr(A->cp, ifp->ifindex, &addr);
			log_debug(LOG_CAT_DATAPLANE, "%s: primary address changed", ifp->name);
		}
		break;
	default:
		break;
	}
}

static void on_rtnl_readable(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	(void)loop;
	(void)fd;
	(void)events;
	(void)arg;
	if (rtnl_process(A->rtnl) < 0)
		log_warn("rtnetlink");
}

static void on_mfc_readable(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	(void)loop;
	(void)fd;
	(void)events;
	(void)arg;
	if (mfc_process(A->mfc) < 0)
		log_warn("multicast routes");
}

static void add_existing_if(void *ctx, const struct rtnl_if *ifp)
{
	(void)ctx;
	cp_if_from_rtnl(ifp);
}

/* ---- debug capture ---- */

static void capture_packet(const void *ip, size_t len)
{
	if (A->capture != NULL)
		pcap_writer_write(A->capture, ip, len, NULL);
}

int assist_capture_start(const char *path, uint32_t max_mb, char *err, size_t errlen)
{
	struct pcap_writer_config cfg;
	struct pcap_writer *w;

	pcap_writer_config_default(&cfg);
	cfg.max_bytes = (uint64_t)max_mb << 20;
	cfg.on_limit = PCAP_LIMIT_STOP;
	w = pcap_writer_open(path, &cfg, err, errlen);
	if (w == NULL)
		return -1;
	assist_capture_stop();
	A->capture = w;
	A->capture_path = strdup(path);
	log_info("capture: writing to %s (at most %u MB)", path, max_mb);
	return 0;
}

void assist_capture_stop(void)
{
	struct pcap_writer_stats st;

	if (A == NULL || A->capture == NULL)
		return;
	pcap_writer_get_stats(A->capture, &st);
	pcap_writer_close(A->capture);
	log_info("capture: %s closed, %llu packets", A->capture_path,
		(unsigned long long)st.packets);
	A->capture = NULL;
	free(A->capture_path);
	A->capture_path = NULL;
}

bool assist_capture_active(const char **path)
{
	if (A == NULL)
		return false;
	if (path != NULL)
		*path = A->capture_path;
	return A->capture != NULL;
}

/* ---- packets the control plane originates ---- */

static bool if_primary4(int ifindex, struct pgm_nla *out)
{
	return cp_if_addr(A->cp, ifindex, out) && out->afi == PGM_AFI_IP;
}

/* Header fields for a downstream (SPM, POLL) or upstream (POLR) packet of the action's TSI. */
static void action_header(const struct cp_action *a, bool upstream, struct pgm_header_params *hdr)
{
	hdr->sport = upstream ? a->data_dport : a->tsi.sport;
	hdr->dport = upstream ? a->tsi.sport : a->data_dport;
	memcpy(hdr->gsi, a->tsi.gsi, PGM_GSI_LEN);
}

/* Marks the options whose bits are set in mask (pgm_options order) OPT_INVALID. */
static bool rewrite_opts_invalid(uint8_t *tpdu, const struct pgm_packet *pkt, unsigned mask)
{
	for (; mask != 0; mask &= mask - 1)
		if (!pgm_rewrite_opt_invalid(tpdu, pkt, (unsigned)__builtin_ctz(mask)))
			return false;
	return true;
}

/* A copy of the packet being processed (forwarded NAK/NNAK, re-sourced RDATA), rewritten. */
static size_t copy_tpdu(const struct cp_action *a, const struct pgm_packet *cur, uint8_t *tpdu,
	size_t cap)
{
	if (cur->tpdu_len > cap)
		return 0;
	memcpy(tpdu, cur->tpdu, cur->tpdu_len);
	if (a->nak_src_rewrite && !pgm_rewrite_nak_src(tpdu, cur, &a->nak_src))
		return 0;
	if (a->pkt_cnt_rewrite && !pgm_rewrite_parity_pkt_cnt(tpdu, cur, a->tgs, a->pkt_cnt))
		return 0;
	if (!rewrite_opts_invalid(tpdu, cur, a->opt_invalid_mask))
		return 0;
	return cur->tpdu_len;
}

static size_t build_tpdu(const struct cp_action *a, uint8_t *tpdu, size_t cap)
{
	const struct pgm_packet *cur = a->from_packet ? A->cur_pkt : NULL;
	struct pgm_build_options o = {0};
	struct pgm_header_params hdr;
	unsigned type;

	if (a->from_packet && cur == NULL)
		return 0;
	o.nak_list = a->list;
	o.nak_list_count = a->list_count;
	if (a->parity)
		o.extra_header_flags = PGM_OPT_PARITY;
	switch (a->type) {
	case CP_ACT_NCF:
		if (a->nak_bo_ivl) {
			o.nak_bo_ivl = true;
			o.nak_bo_ivl_us = a->nak_bo_ivl_us;
			o.nak_bo_ivl_sqn = a->nak_bo_ivl_sqn;
		}
		if (a->nbr_unreach) {
			/* 15.3.2: a unicast NCF says multicast does not reach below us */
			o.nbr_unreach = true;
			o.path_nla = &a->path;
		}
		if (cur != NULL) {
			size_t len;

			if (!a->nak_bo_ivl && !a->nbr_unreach &&
				(len = pgm_build_ncf_from_plain_nak(tpdu, cap, cur)) != 0)
				return len;
			o.nak_list = NULL;
			o.nak_list_count = 0;
			o.extra_header_flags = 0;
			if (pgm_packet_is_parity(cur) && a->tgs != 0)
				return pgm_build_ncf_from_nak_tgs(tpdu, cap, cur, a->tgs, a->pkt_cnt, &o);
			return pgm_build_ncf_from_nak(tpdu, cap, cur, 0, &o);
		}
		return pgm_build_ncf_for_tsi(tpdu, cap, &a->tsi, a->data_dport, a->sqn,
			&a->nak_src, &a->nak_grp, &o);
	case CP_ACT_NAK:
	case CP_ACT_NNAK:
		type = a->type == CP_ACT_NAK ? PGM_NAK : PGM_NNAK;
		if (cur != NULL)
			return copy_tpdu(a, cur, tpdu, cap);
		return pgm_build_nak_for_tsi(tpdu, cap, type, &a->tsi, a->data_dport, a->sqn,
			&a->nak_src, &a->nak_grp, &o);
	case CP_ACT_RDATA:
		/* an off-tree DLR's repair, "as if from the source": the TPDU unchanged */
		return cur != NULL && cur->type == PGM_RDATA ? copy_tpdu(a, cur, tpdu, cap) : 0;
	case CP_ACT_POLR:
		action_header(a, true, &hdr);
		return pgm_build_polr(tpdu, cap, &hdr, a->sqn, a->poll_round, NULL);
	case CP_ACT_POLL:
		action_header(a, false, &hdr);
		return pgm_build_poll(tpdu, cap, &hdr, a->sqn, a->poll_round, a->poll_s_type,
			&a->path, a->poll_bo_ivl_us, a->poll_rand, a->poll_mask, NULL);
	case CP_ACT_SPM:
		memset(&o, 0, sizeof(o));
		o.nbr_unreach = a->nbr_unreach;
		action_header(a, false, &hdr);
		return pgm_build_spm(tpdu, cap, &hdr, a->sqn, a->trail, a->lead, &a->path, &o);
	default:
		return 0;
	}
}

/* Whether a line of this category goes anywhere: formatting it costs more than the decision. */
static bool line_wanted(enum log_category cat)
{
	return A->replay ? !A->replay_quiet : log_debug_enabled(cat);
}

static void print_action(const struct cp_action *a, const uint8_t *tpdu, size_t len);

static void on_action(void *ctx, const struct cp_action *a)
{
	struct pgm_ip_params p = {0};
	size_t tpdu_len, len;

	(void)ctx;
	tpdu_len = build_tpdu(a, A->tpdu, sizeof(A->tpdu));
	if (tpdu_len == 0) {
		A->stats.build_failed++;
		log_debug(LOG_CAT_DATAPLANE, "action %d on if %d could not be built", a->type,
			a->ifindex);
		return;
	}
	if (A->replay) {
		if (line_wanted(LOG_CAT_PACKETS))
			print_action(a, A->tpdu, tpdu_len);
		A->stats.originated++;
		return;
	}
	if (a->ip_src.afi != 0)
		p.src = a->ip_src;
	else if (!if_primary4(a->ifindex, &p.src)) {
		A->stats.no_source_addr++;
		log_debug(LOG_CAT_DATAPLANE, "no IPv4 address on if %d to send from", a->ifindex);
		return;
	}
	p.dst = a->ip_dst;
	/* what goes down one hop to the group gets the NCF TTL; unicast (NCFs with
	 * OPT_NBR_UNREACH, NAKs, POLRs) the unicast one */
	p.ttl = pgm_nla_len(&a->ip_dst) == 4 && (a->ip_dst.addr[0] & 0xf0) == 0xe0
			? A->conf.ncf_ttl
			: ASSIST_DEFAULT_UNICAST_TTL;
	p.router_alert = a->router_alert;
	p.udp = a->udp;
	p.udp_sport = a->udp_sport;
	p.udp_dport = a->udp_dport;
	len = pgm_build_ip(A->txbuf, sizeof(A->txbuf), &p, A->tpdu, tpdu_len);
	if (len == 0) {
		A->stats.build_failed++;
		return;
	}
	if (line_wanted(LOG_CAT_PACKETS))
		print_action(a, A->tpdu, tpdu_len);
	capture_packet(A->txbuf, len);
	if (rawsock_send(A->raw, a->ifindex, A->txbuf, len) < 0) {
		A->stats.send_failed++;
		return;
	}
	if (!A->sends_batched)
		A->stats.originated++; /* batched: counted when sent (sends_flush) */
}

/*
 * Packets originated while handling a burst (a receive round, a timer run) are queued and sent
 * together, one sendmmsg() per output socket instead of a sendmsg() each (multicast onto Ethernet
 * first, then the rest, each in the order made), before the verdicts of the packets that made
 * them (nfqueue_set_before_verdicts).
 */
static void sends_batch_begin(void)
{
	rawsock_batch_begin(A->raw);
	A->sends_batched = true;
}

static void sends_count(uint64_t sent, uint64_t failed)
{
	A->stats.originated += sent;
	A->stats.send_failed += failed;
}

static void sends_flush(void *ctx)
{
	uint64_t sent, failed;

	(void)ctx;
	A->pkt_now_fresh = false; /* the end of a receive round */
	if (!A->sends_batched)
		return;
	rawsock_batch_send(A->raw, &sent, &failed);
	sends_count(sent, failed);
}

static void sends_batch_end(void)
{
	uint64_t sent, failed;

	rawsock_batch_end(A->raw, &sent, &failed);
	A->sends_batched = false;
	sends_count(sent, failed);
}

/* ---- debug and replay output ---- */

static const char *verdict_name(enum cp_verdict v)
{
	switch (v) {
	case CP_ACCEPT: return "accept";
	case CP_DROP: return "drop";
	case CP_ACCEPT_REWRITTEN: return "accept rewritten";
	default: return "?";
	}
}

static void emit_line(enum log_category cat, const char *line)
{
	if (A->replay) {
		if (!A->replay_quiet)
			printf("%s\n", line);
		return;
	}
	log_debug(cat, "%s", line);
}

static void print_action(const struct cp_action *a, const uint8_t *tpdu, size_t len)
{
	static const char *const names[] = {"NCF", "NAK", "NNAK", "POLR", "RDATA", "SPM", "POLL"};
	struct pgm_packet pkt;
	char line[768], ifname[CP_IFNAME_LEN], dst[64], src[64], summary[512];

	if (pgm_parse(tpdu, len, 0, &pkt) == PGM_ERR_OK)
		pgm_packet_format(&pkt, summary, sizeof(summary));
	else
		snprintf(summary, sizeof(summary), "(%zu bytes, does not parse)", len);
	if (a->ip_src.afi != 0)
		pgm_nla_format(&a->ip_src, src, sizeof(src));
	else
		snprintf(src, sizeof(src), "own address");
	snprintf(line, sizeof(line), "  send %s on %s %s > %s%s%s: %s",
		(unsigned)a->type < sizeof(names) / sizeof(names[0]) ? names[a->type] : "?",
		assist_ifname(a->ifindex, ifname, sizeof(ifname)), src,
		pgm_nla_format(&a->ip_dst, dst, sizeof(dst)), a->router_alert ? " RA" : "",
		a->from_packet ? " (from packet)" : "", summary);
	emit_line(LOG_CAT_PACKETS, line);
}

static void print_packet(const struct pgm_ip *ip, const struct pgm_packet *pkt, int in, int out,
	const struct cp_result *res)
{
	char line[1024], summary[512], a[64], b[64], inname[CP_IFNAME_LEN], outname[CP_IFNAME_LEN];
	char rw[128] = "";

	pgm_packet_format(pkt, summary, sizeof(summary));
	if (res->verdict == CP_ACCEPT_REWRITTEN && res->rewrite.spm_path) {
		char path[64];

		snprintf(rw, sizeof(rw), " (path %s)",
			pgm_nla_format(&res->rewrite.path, path, sizeof(path)));
	}
	snprintf(line, sizeof(line), "%s%s%s %s > %s%s: %s: %s%s",
		assist_ifname(in, inname, sizeof(inname)), out ? " -> " : "",
		out ? assist_ifname(out, outname, sizeof(outname)) : "",
		pgm_nla_format(&ip->src, a, sizeof(a)), pgm_nla_format(&ip->dst, b, sizeof(b)),
		ip->udp ? " udp" : "", summary, verdict_name(res->verdict), rw);
	emit_line(LOG_CAT_PACKETS, line);
}

static void on_cp_log(void *ctx, enum cp_log_kind kind, const char *line)
{
	(void)ctx;
	emit_line(kind == CP_LOG_TIMER ? LOG_CAT_TIMERS
		  : kind == CP_LOG_PACKET ? LOG_CAT_PACKETS
					  : LOG_CAT_EVENTS,
		line);
}

/* The control plane formats debug lines only for the kinds asked for. */
static void cp_log_mask_sync(void)
{
	unsigned mask = 0;

	if (log_debug_enabled(LOG_CAT_EVENTS))
		mask |= 1u << CP_LOG_EVENT;
	if (log_debug_enabled(LOG_CAT_TIMERS))
		mask |= 1u << CP_LOG_TIMER;
	if (log_debug_enabled(LOG_CAT_PACKETS))
		mask |= 1u << CP_LOG_PACKET;
	if (mask != A->cp_log_mask) {
		A->cp_log_mask = mask;
		cp_set_log(A->cp, on_cp_log, NULL, mask);
	}
}

/* ---- the packet path ---- */

/* Applies the control plane's rewrite to a copy of the datagram; returns its length or 0. */
static size_t apply_rewrite(const uint8_t *payload, size_t len, const struct pgm_ip *ip,
	const struct pgm_packet *pkt, const struct cp_rewrite *rw)
{
	uint8_t *tpdu = A->rwbuf + ip->pgm_offset;

	if (len > sizeof(A->rwbuf))
		return 0;
	memcpy(A->rwbuf, payload, len);
	if (rw->spm_path && !pgm_rewrite_spm_path(tpdu, pkt, &rw->path))
		return 0;
	if (rw->nak_bo_ivl &&
		!pgm_rewrite_nak_bo_ivl(tpdu, pkt, rw->nak_bo_ivl_us, rw->nak_bo_ivl_sqn))
		return 0;
	if (!rewrite_opts_invalid(tpdu, pkt, rw->opt_invalid_mask))
		return 0;
	if (ip->udp)
		pgm_ip_fix_udp_checksum(A->rwbuf, ip);
	return len;
}

/* A parsed packet (or one copy of it) through the control plane: its verdict and rewrite. */
static void process_copy(const struct pgm_ip *ip, const struct pgm_packet *pkt, int in_ifindex,
	int out_ifindex, cp_time_t now, struct cp_result *res)
{
	struct cp_packet in;

	in.ip = ip;
	in.pkt = pkt;
	in.in_ifindex = in_ifindex;
	in.out_ifindex = out_ifindex;
	in.now = now;
	A->cur_pkt = pkt;
	A->cur_ip = ip;
	cp_packet(A->cp, &in, res);
	A->cur_pkt = NULL;
	A->cur_ip = NULL;
	if (line_wanted(LOG_CAT_PACKETS))
		print_packet(ip, pkt, in_ifindex, out_ifindex, res);
}

/* A parsed packet through the control plane: see process_datagram(). */
static enum cp_verdict process_parsed(const uint8_t *payload, size_t len, const struct pgm_ip *ip,
	const struct pgm_packet *pkt, int in_ifindex, int out_ifindex, cp_time_t now,
	size_t *rw_len)
{
	struct cp_result res;

	*rw_len = 0;
	process_copy(ip, pkt, in_ifindex, out_ifindex, now, &res);
	if (res.verdict == CP_ACCEPT_REWRITTEN) {
		*rw_len = apply_rewrite(payload, len, ip, pkt, &res.rewrite);
		if (*rw_len == 0) {
			A->stats.rewrite_failed++;
			return CP_ACCEPT;
		}
	}
	return res.verdict;
}

/*
 * One packet through the control plane. Returns the verdict; a rewritten payload is left in
 * A->rwbuf with its length in *rw_len.
 */
static enum cp_verdict process_datagram(const uint8_t *payload, size_t len, unsigned parse_flags,
	int in_ifindex, int out_ifindex, cp_time_t now, size_t *rw_len)
{
	struct pgm_ip ip;
	struct pgm_packet pkt;
	enum pgm_err err;

	*rw_len = 0;
	err = pgm_parse_ip(payload, len, &A->udp_ports, &ip);
	if (err != PGM_ERR_OK) {
		/* Not PGM we can read at the IP layer (a fragment, another protocol): the kernel
		   validated the IP header already, so let it continue unassisted. */
		A->stats.not_pgm++;
		cp_count_error(A->cp, in_ifindex, err);
		return CP_ACCEPT;
	}
	err = pgm_parse(payload + ip.pgm_offset, ip.pgm_len, parse_flags, &pkt);
	if (err == PGM_ERR_UNKNOWN_TYPE) {
		cp_count_error(A->cp, in_ifindex, err);
		return CP_ACCEPT; /* unknown types pass through unprocessed */
	}
	if (err != PGM_ERR_OK) {
		A->stats.malformed++;
		cp_count_error(A->cp, in_ifindex, err);
		if (log_debug_enabled(LOG_CAT_PACKETS) || A->replay) {
			char line[256], ifname[CP_IFNAME_LEN];

			snprintf(line, sizeof(line), "%s: malformed PGM (%s): drop",
				assist_ifname(in_ifindex, ifname, sizeof(ifname)),
				pgm_err_name(err));
			emit_line(LOG_CAT_PACKETS, line);
		}
		return CP_DROP;
	}
	return process_parsed(payload, len, &ip, &pkt, in_ifindex, out_ifindex, now, rw_len);
}

/*
 * SPM and RDATA to a group are taken at prerouting, before the kernel forwards them, and their
 * copies are made here: one per outgoing interface of the kernel's multicast route, each through
 * the control plane for that interface (SPM_PATH rewritten; RDATA only where a NAK asked for it)
 * and sent with the TTL decremented, as the kernel's forwarding would. The original is dropped.
 * That is what lets ODATA, the fast path, forward with no rule at the forward hook, which the
 * kernel runs for every copy of every forwarded packet. A datagram without a resolved route, or
 * off the route's incoming interface, is left to the kernel (it asks the routing daemon, or drops
 * it and reports the wrong interface), unassisted and counted.
 */
static bool replicable(const struct nfqueue_packet *np)
{
	const uint8_t *ip = np->payload;
	size_t ihl;
	uint8_t type;

	if (np->hook != NF_INET_PRE_ROUTING || A->mfc == NULL || np->len < 20 ||
		np->orig_len > np->len || (ip[16] & 0xf0) != 0xe0 || (ip[6] & 0x3f) != 0 || ip[7] != 0)
		return false; /* not to a group, a truncated copy, or a fragment */
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ip[9] == IPPROTO_PGM_NUMBER) {
		if (np->len < ihl + 5)
			return false;
		type = ip[ihl + 4] & 0x0f;
	} else if (ip[9] == IPPROTO_UDP && A->conf.udp) {
		if (np->len < ihl + 8 + 5)
			return false;
		type = ip[ihl + 8 + 4] & 0x0f;
	} else {
		return false;
	}
	return type == PGM_SPM || type == PGM_RDATA;
}

/* One copy out of oif. A UDP checksum the sender left to the hardware (NFQA_SKB_CSUMNOTREADY:
   only the pseudo-header sum is in the field) is completed here, as the egress device would.
   Otherwise the copy goes from the caller's buffer, with only the TTL replaced. */
static void send_copy(
	int oif, const uint8_t *datagram, size_t len, uint8_t ttl, const struct pgm_ip *ip, bool csum)
{
	int rc;

	if ((csum && ip->udp) || A->capture != NULL) {
		if (len > sizeof(A->txbuf)) {
			A->stats.copies_failed++;
			return;
		}
		memcpy(A->txbuf, datagram, len);
		A->txbuf[8] = ttl;
		if (csum && ip->udp)
			pgm_ip_fix_udp_checksum(A->txbuf, ip);
		capture_packet(A->txbuf, len);
		rc = rawsock_send(A->raw, oif, A->txbuf, len);
	} else {
		rc = rawsock_send_ttl(A->raw, oif, datagram, len, ttl);
	}
	if (rc < 0) {
		A->stats.copies_failed++;
		A->stats.send_failed++;
		return;
	}
	A->stats.copies++; /* and among the packets sent: batched, counted when sent */
	if (!A->sends_batched)
		A->stats.originated++;
}

struct repl_copy {
	int oif;
	struct cp_result res;
};

/*
 * Returns the verdict for the original. CP_ACCEPT_REWRITTEN: accept it rewritten, A->rwbuf with
 * *rw_len bytes (the route's one copy).
 */
static enum cp_verdict replicate(
	const struct nfqueue_packet *np, unsigned flags, cp_time_t now, size_t *rw_len)
{
	const uint8_t *ip = np->payload;
	const struct mfc_route *r;
	struct in_addr src, grp;
	int in = (int)np->in_ifindex;
	uint8_t ttl = ip[8];
	bool assisted, csum = np->skb_info & NFQA_SKB_CSUMNOTREADY;
	struct pgm_ip pip;
	struct pgm_packet pkt;
	struct repl_copy copies[MFC_MAX_OIFS];
	bool oif_assisted[MFC_MAX_OIFS];
	unsigned ncopies = 0;
	bool all_unchanged = true;

	*rw_len = 0;
	/* Not parseable: handled once, not once per copy, so it is counted once. */
	if (pgm_parse_ip(ip, np->len, &A->udp_ports, &pip) != PGM_ERR_OK ||
		pgm_parse(ip + pip.pgm_offset, pip.pgm_len, flags, &pkt) != PGM_ERR_OK)
		return process_datagram(ip, np->len, flags, in, 0, now, rw_len);
	memcpy(&src, ip + 12, 4);
	memcpy(&grp, ip + 16, 4);
	r = mfc_lookup(A->mfc, src, grp);
	if (r == NULL || r->iif == 0) {
		A->stats.repl_no_route++;
		return CP_ACCEPT;
	}
	if (r->iif != in) {
		A->stats.repl_wrong_if++;
		return CP_ACCEPT;
	}
	assisted = cp_if_assisted(A->cp, in);
	for (unsigned i = 0; i < r->noifs; i++) {
		oif_assisted[i] = r->oif[i] != in && cp_if_assisted(A->cp, r->oif[i]);
		assisted = assisted || oif_assisted[i];
	}
	if (!assisted)
		return CP_ACCEPT; /* nothing of ours on this route: the kernel forwards it */
	/* In the kernel's order: ip_mr_forward walks the interfaces from the highest vif down,
	   rtnetlink lists them from the lowest up. */
	for (unsigned i = r->noifs; i-- > 0;) {
		struct repl_copy *c;

		if (r->oif[i] == in || ttl <= r->ttl[i])
			continue; /* as ip_mr_forward: TTL must exceed the interface's threshold */
		c = &copies[ncopies++];
		c->oif = r->oif[i];
		c->res.verdict = CP_ACCEPT;
		if (!oif_assisted[i])
			continue;
		process_copy(&pip, &pkt, in, c->oif, now, &c->res);
		all_unchanged = all_unchanged && c->res.verdict == CP_ACCEPT;
	}
	/* When every copy is unchanged (RDATA asked for on every interface of the route, or
	   interfaces without router assist), the kernel's own forwarding makes exactly them. */
	if (all_unchanged) {
		A->stats.repl_by_kernel++;
		return CP_ACCEPT;
	}
	if (ncopies == 1 && copies[0].res.verdict == CP_ACCEPT_REWRITTEN) {
		/* The route's one copy: the kernel forwards the rewritten original (TTL and all) */
		*rw_len = apply_rewrite(ip, np->len, &pip, &pkt, &copies[0].res.rewrite);
		if (*rw_len != 0) {
			A->stats.repl_single++;
			return CP_ACCEPT_REWRITTEN;
		}
		A->stats.rewrite_failed++; /* the copy goes unchanged, below */
		copies[0].res.verdict = CP_ACCEPT;
	}
	/* Rewritten copies go at once (the rewrite buffer is reused); unchanged ones after. */
	A->stats.replicated++;
	for (unsigned i = 0; i < ncopies; i++) {
		struct repl_copy *c = &copies[i];
		size_t len;

		if (c->res.verdict == CP_DROP) {
			A->stats.copies_held++;
		} else if (c->res.verdict == CP_ACCEPT_REWRITTEN) {
			len = apply_rewrite(ip, np->len, &pip, &pkt, &c->res.rewrite);
			if (len != 0) {
				A->stats.rewritten++;
				send_copy(c->oif, A->rwbuf, len, (uint8_t)(ttl - 1), &pip, false);
			} else {
				A->stats.rewrite_failed++;
				c->res.verdict = CP_ACCEPT; /* goes unchanged */
			}
		}
	}
	for (unsigned i = 0; i < ncopies; i++)
		if (copies[i].res.verdict == CP_ACCEPT)
			send_copy(copies[i].oif, ip, np->len, (uint8_t)(ttl - 1), &pip, csum);
	return CP_DROP;
}

/* The clock for the packets of one receive round: one reading per round, not one per packet
   (a round is at most one recvmmsg batch: well under a millisecond, the timers' grid). */
static cp_time_t packet_now(void)
{
	if (!A->pkt_now_fresh) {
		A->pkt_now = ev_time_now();
		A->pkt_now_fresh = true;
	}
	return A->pkt_now;
}

static void on_nfq_packet(void *ctx, struct nfqueue *q, const struct nfqueue_packet *np)
{
	unsigned flags = 0;
	size_t rw_len;
	enum cp_verdict v;
	int rc;

	(void)ctx;
	A->stats.packets++;
	A->stats.last_round_packets++;
	capture_packet(np->payload, np->len);
	if (np->skb_info & NFQA_SKB_CSUMNOTREADY)
		flags |= PGM_PARSE_NO_UDP_CHECKSUM;
	if (replicable(np))
		v = replicate(np, flags, packet_now(), &rw_len);
	else
		v = process_datagram(np->payload, np->len, flags, (int)np->in_ifindex,
			(int)np->out_ifindex, packet_now(), &rw_len);
	if (v == CP_ACCEPT_REWRITTEN) {
		A->stats.rewritten++;
		capture_packet(A->rwbuf, rw_len);
		rc = nfqueue_verdict_payload(q, np->id, A->rwbuf, rw_len);
	} else {
		rc = nfqueue_verdict(q, np->id, v == CP_DROP ? NFQUEUE_DROP : NFQUEUE_ACCEPT);
	}
	if (rc < 0)
		A->stats.verdict_errors++;
}

/*
 * The control plane's timers run on a grid of CP_TIMER_TICK_US: every expiry due within one tick
 * is handled by one timer run, one wakeup, instead of a wakeup each (under a NAK storm, thousands
 * a second). A timer fires at most one tick late; the shortest PGM interval is 50 ms. A build
 * with -DCP_TIMER_TICK_US=1 has exact timers (the A/B in tests/bench/README).
 */
#ifndef CP_TIMER_TICK_US
#define CP_TIMER_TICK_US 1000u
#endif

/* When the control plane's timers next need a run: on the grid, UINT64_MAX for never. */
static cp_time_t cp_timer_due(void)
{
	cp_time_t next = cp_next_deadline(A->cp);

	if (next != UINT64_MAX && next <= UINT64_MAX - CP_TIMER_TICK_US)
		next = (next + CP_TIMER_TICK_US - 1) / CP_TIMER_TICK_US * CP_TIMER_TICK_US;
	return next;
}

static void cp_timer_rearm(void)
{
	cp_time_t next = cp_timer_due();

	if (next == UINT64_MAX)
		ev_timer_stop(pgmrouterd.loop, A->cp_timer);
	else
		ev_timer_start(pgmrouterd.loop, A->cp_timer, next);
}

static void on_cp_timer(struct ev_loop *loop, void *arg)
{
	(void)loop;
	(void)arg;
	cp_log_mask_sync();
	A->stats.timer_runs++;
	sends_batch_begin();
	cp_timers(A->cp, ev_time_now());
	sends_batch_end();
	cp_timer_rearm();
	if (A->capture != NULL)
		pcap_writer_flush(A->capture);
}

/* Drop verdicts held since a round's end (at most HOLD_US ago) go to the kernel now. */
static void on_hold_timer(struct ev_loop *loop, void *arg)
{
	(void)loop;
	(void)arg;
	if (A->nfq != NULL)
		(void)nfqueue_flush(A->nfq);
}

static void on_nfq_readable(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	(void)fd;
	(void)events;
	(void)arg;
	cp_log_mask_sync();
	nfqueue_set_hold_drops(A->nfq, ev_now(loop) - A->nfq_idle < HOLD_BUSY_US ? HOLD_DROPS : 0);
	A->stats.last_round_packets = 0;
	/* The first packet reads the clock: not the loop's reading from before this wakeup's
	   other handlers (a timer run among them), so the control plane's time never goes back */
	A->pkt_now_fresh = false;
	/* A bounded number of receive calls per round keeps the CLI and timers responsive under
	   a flood; the rest is read on the next round. */
	sends_batch_begin();
	if (nfqueue_process(A->nfq, 16) < 0) {
		int e = errno;

		sends_batch_end();
		snprintf(A->nfq_error, sizeof(A->nfq_error), "%s", strerror(e));
		errno = e;
		log_warn("nfqueue");
	} else {
		/* Timers due by the last packet's time run now, their packets sent with the round's:
		   under a steady load the timer then seldom needs a wakeup of its own. */
		if (A->stats.last_round_packets != 0 && cp_timer_due() <= A->pkt_now) {
			A->stats.timer_runs++;
			cp_timers(A->cp, A->pkt_now);
		}
		sends_batch_end();
	}
	if (A->stats.last_round_packets > A->stats.max_round_packets)
		A->stats.max_round_packets = A->stats.last_round_packets;
	A->nfq_idle = ev_time_now();
	if (nfqueue_held(A->nfq) != 0 && !ev_timer_pending(A->hold_timer))
		ev_timer_start(pgmrouterd.loop, A->hold_timer, A->nfq_idle + HOLD_US);
	cp_timer_rearm();
	if (A->capture != NULL)
		pcap_writer_flush(A->capture);
}

/* A packet counted as sent on its interface that the kernel refused: the interface says so. */
static void on_send_failed(void *ctx, int ifindex, const uint8_t *datagram, size_t len, int err)
{
	(void)ctx;
	(void)datagram;
	(void)len;
	(void)err;
	if (A->cp != NULL)
		cp_count_send_failed(A->cp, ifindex);
}

/* ---- start and stop ---- */

static void dataplane_close(void)
{
	if (A->nfq_io != NULL)
		ev_io_del(pgmrouterd.loop, A->nfq_io);
	A->nfq_io = NULL;
	if (A->nfq != NULL)
		nfqueue_close(A->nfq);
	A->nfq = NULL;
}

static int dataplane_open(char *err, size_t errlen)
{
	struct nfqueue_config qc;
	struct rules_config rc;
	const char *names[CP_MAX_INTERFACES];
	size_t n;

	nfqueue_config_default(&qc);
	qc.queue_num = A->conf.queue_num;
	A->nfq = nfqueue_open(&qc, on_nfq_packet, NULL, err, errlen);
	if (A->nfq == NULL)
		return -1;
	nfqueue_set_before_verdicts(A->nfq, sends_flush, NULL);
	A->nfq_io = ev_io_add(pgmrouterd.loop, nfqueue_fd(A->nfq), EV_READ, on_nfq_readable, NULL);
	if (A->nfq_io == NULL) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		dataplane_close();
		return -1;
	}
	rules_config_from_conf(&rc);
	if (A->rules != NULL)
		rules_free(A->rules);
	A->rules = rules_new(&rc);
	if (A->rules == NULL) {
		snprintf(err, errlen, "out of memory");
		dataplane_close();
		return -1;
	}
	n = enabled_names(names, CP_MAX_INTERFACES);
	if (rules_install(A->rules, A->conf.backend, names, n, err, errlen) < 0) {
		dataplane_close();
		return -1;
	}
	log_info("interception rules installed (%s, queue %u, %zu interface%s)",
		rules_backend_name(rules_backend(A->rules)), A->conf.queue_num, n, n == 1 ? "" : "s");
	return 0;
}

/* Queue number, backend or UDP ports changed: rules and queue again. */
static int dataplane_restart(char *err, size_t errlen)
{
	char err2[256];

	if (A->rules != NULL && rules_installed(A->rules) &&
		rules_remove(A->rules, err2, sizeof(err2)) < 0)
		log_warnx("removing interception rules: %s", err2);
	dataplane_close();
	return dataplane_open(err, errlen);
}

int assist_start(char *err, size_t errlen)
{
	struct cp_config cfg;
	struct rawsock_config rsc;

	if (geteuid() != 0) {
		snprintf(err, errlen,
			"must run as root: intercepting packets needs CAP_NET_ADMIN and CAP_NET_RAW");
		return -1;
	}
	udp_ports_from_conf();
	cp_config_from_conf(&cfg);
	A->cp = cp_new(&cfg, on_action, NULL);
	A->cp_timer = ev_timer_new(pgmrouterd.loop, on_cp_timer, NULL);
	A->hold_timer = ev_timer_new(pgmrouterd.loop, on_hold_timer, NULL);
	A->rtnl = rtnl_new(on_rtnl_event, NULL);
	if (A->cp == NULL || A->cp_timer == NULL || A->hold_timer == NULL || A->rtnl == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	A->cp_log_mask = ~0u;
	cp_log_mask_sync();
	/* before the interfaces: each says whether its multicast can go by the link layer */
	rawsock_config_default(&rsc);
	A->raw = rawsock_open(&rsc, err, errlen);
	if (A->raw == NULL)
		goto fail;
	rawsock_set_failed_fn(A->raw, on_send_failed, NULL);
	if (!rawsock_set_link_output(A->raw, A->conf.link_output)) {
		struct rawsock_stats st;

		rawsock_get_stats(A->raw, &st);
		log_warnx("no packet socket (%s): multicast goes through the IP stack",
			strerror(st.link_errno));
	}
	if (rtnl_open(A->rtnl, err, errlen) < 0)
		goto fail;
	/* rtnl_open reported the existing interfaces before the control plane was reachable
	   from the callback's point of view only if A->cp was set: it was, so nothing to do,
	   but walk them again in case the callback ran before every address was known. */
	rtnl_foreach_if(A->rtnl, add_existing_if, NULL);
	A->rtnl_io = ev_io_add(pgmrouterd.loop, rtnl_fd(A->rtnl), EV_READ, on_rtnl_readable, NULL);
	A->mfc = mfc_new();
	if (A->mfc == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (mfc_open(A->mfc, err, errlen) < 0) {
		/* A kernel without multicast routing: nothing to replicate by, so SPM and RDATA
		   are left to the kernel (counted as without a route). */
		log_warnx("%s; SPM and RDATA to groups go unassisted", err);
		err[0] = '\0';
	} else {
		A->mfc_io = ev_io_add(
			pgmrouterd.loop, mfc_fd(A->mfc), EV_READ, on_mfc_readable, NULL);
		if (A->mfc_io == NULL) {
			snprintf(err, errlen, "event loop: %s", strerror(errno));
			goto fail;
		}
	}
	if (A->rtnl_io == NULL)
		goto fail;
	A->running = true;
	if (dataplane_open(err, errlen) < 0) {
		A->running = false;
		goto fail;
	}
	for (size_t i = 0; i < A->nifs; i++) {
		int ifindex = assist_ifindex(A->ifs[i].name);

		if (!A->ifs[i].enabled)
			continue;
		if (ifindex == 0)
			log_info("%s: router assist configured; the interface does not exist yet, "
				 "waiting for it",
				A->ifs[i].name);
		else
			log_info("%s: router assist active (ifindex %d)", A->ifs[i].name, ifindex);
	}
	return 0;
fail:
	assist_stop();
	return -1;
}

void assist_stop(void)
{
	char err[256];

	if (A == NULL)
		return;
	if (A->rules != NULL) {
		if (rules_installed(A->rules) && rules_remove(A->rules, err, sizeof(err)) < 0)
			log_warnx("removing interception rules: %s", err);
		rules_free(A->rules);
		A->rules = NULL;
	}
	dataplane_close();
	if (A->raw != NULL)
		rawsock_close(A->raw);
	A->raw = NULL;
	if (A->mfc_io != NULL)
		ev_io_del(pgmrouterd.loop, A->mfc_io);
	A->mfc_io = NULL;
	mfc_free(A->mfc);
	A->mfc = NULL;
	if (A->rtnl_io != NULL)
		ev_io_del(pgmrouterd.loop, A->rtnl_io);
	A->rtnl_io = NULL;
	if (A->rtnl != NULL)
		rtnl_free(A->rtnl);
	A->rtnl = NULL;
	if (A->cp_timer != NULL)
		ev_timer_free(pgmrouterd.loop, A->cp_timer);
	A->cp_timer = NULL;
	ev_timer_free(pgmrouterd.loop, A->hold_timer);
	A->hold_timer = NULL;
	assist_capture_stop();
	if (A->cp != NULL)
		cp_free(A->cp);
	A->cp = NULL;
	A->running = false;
	A->test = false;
}

/* ---- show ip pgm router dataplane ---- */

void assist_dataplane_report(assist_print_fn print, void *ctx, bool json)
{
	struct nfqueue_stats qs = {0};
	struct nfqueue_kernel_stats ks = {0};
	struct rawsock_stats rs = {0};
	struct rtnl_stats ts = {0};
	struct mfc_stats ms = {0};
	struct rules_counters rcnt = {0};
	struct assist_stats *as = &A->stats;
	const char *backend = A->rules != NULL ? rules_backend_name(rules_backend(A->rules)) : "none";
	const char *why = A->rules != NULL ? rules_nft_unavailable_reason(A->rules) : "";
	char err[256] = "", detail[400];
	bool have_counters = false;

	if (A->nfq != NULL) {
		nfqueue_get_stats(A->nfq, &qs);
		nfqueue_get_kernel_stats(A->nfq, &ks);
	}
	if (A->raw != NULL)
		rawsock_get_stats(A->raw, &rs);
	if (A->rtnl != NULL)
		rtnl_get_stats(A->rtnl, &ts);
	if (A->mfc != NULL)
		mfc_get_stats(A->mfc, &ms);
	if (A->rules != NULL && rules_installed(A->rules))
		have_counters = rules_read_counters(A->rules, &rcnt, err, sizeof(err)) == 0;

	if (json) {
		print(ctx,
			"{\"running\":%s,\"backend\":\"%s\",\"queue\":%u,\"udp\":%s,"
			"\"udp_ucast_port\":%u,\"udp_mcast_port\":%u,",
			A->running ? "true" : "false", backend, A->conf.queue_num,
			A->conf.udp ? "true" : "false", A->conf.udp_ucast_port,
			A->conf.udp_mcast_port);
		print(ctx,
			"\"queue_stats\":{\"packets\":%llu,\"bytes\":%llu,\"accepted\":%llu,"
			"\"dropped\":%llu,\"rewritten\":%llu,\"batches\":%llu,\"batched\":%llu,"
			"\"verdict_messages\":%llu,\"sends\":%llu,\"held_rounds\":%llu,\"held\":%u,"
			"\"enobufs\":%llu,\"id_gaps\":%llu,\"send_errors\":%llu,\"rcvbuf\":%u},",
			(unsigned long long)qs.packets, (unsigned long long)qs.bytes,
			(unsigned long long)qs.accepted, (unsigned long long)qs.dropped,
			(unsigned long long)qs.rewritten, (unsigned long long)qs.batches,
			(unsigned long long)qs.batched, (unsigned long long)qs.verdict_messages,
			(unsigned long long)qs.sends, (unsigned long long)qs.held_rounds, qs.held,
			(unsigned long long)qs.enobufs, (unsigned long long)qs.id_gaps,
			(unsigned long long)qs.send_errors, qs.rcvbuf_bytes);
		print(ctx,
			"\"kernel\":{\"valid\":%s,\"waiting\":%u,\"queue_dropped\":%u,"
			"\"user_dropped\":%u,\"socket_drops\":%u},",
			ks.valid ? "true" : "false", ks.queue_total, ks.queue_dropped,
			ks.user_dropped, ks.socket_drops);
		print(ctx,
			"\"rules_matched\":{\"prerouting\":%llu,\"input\":%llu},",
			(unsigned long long)rcnt.packets[RULES_IPT_PRE],
			(unsigned long long)rcnt.packets[RULES_IPT_IN]);
		print(ctx,
			"\"output\":{\"packets\":%llu,\"bytes\":%llu,\"link_layer\":%llu,"
			"\"link_layer_unicast\":%llu,\"link_layer_output\":%s,\"sndbuf\":%u,"
			"\"would_block\":%llu,\"unreachable\":%llu,\"errors\":%llu,",
			(unsigned long long)rs.packets, (unsigned long long)rs.bytes,
			(unsigned long long)rs.link_packets, (unsigned long long)rs.link_unicast,
			rs.link_output ? "true" : "false", rs.sndbuf_bytes,
			(unsigned long long)rs.would_block,
			(unsigned long long)rs.unreachable,
			(unsigned long long)(rs.too_big + rs.bad_input + rs.other_errors));
		print(ctx,
			"\"neighbours\":{\"available\":%s,\"queries\":%llu,\"usable\":%llu,"
			"\"unusable\":%llu,\"errors\":%llu,\"rate_limited\":%llu}},",
			rs.neigh_available ? "true" : "false", (unsigned long long)rs.neigh.queries,
			(unsigned long long)rs.neigh.usable, (unsigned long long)rs.neigh.unusable,
			(unsigned long long)rs.neigh.errors, (unsigned long long)rs.neigh.rate_limited);
		print(ctx,
			"\"path\":{\"packets\":%llu,\"not_pgm\":%llu,\"malformed\":%llu,"
			"\"rewritten\":%llu,\"rewrite_failed\":%llu,\"originated\":%llu,"
			"\"build_failed\":%llu,\"send_failed\":%llu,\"no_source_address\":%llu,"
			"\"timer_runs\":%llu,\"max_round_packets\":%llu},",
			(unsigned long long)as->packets, (unsigned long long)as->not_pgm,
			(unsigned long long)as->malformed, (unsigned long long)as->rewritten,
			(unsigned long long)as->rewrite_failed, (unsigned long long)as->originated,
			(unsigned long long)as->build_failed, (unsigned long long)as->send_failed,
			(unsigned long long)as->no_source_addr, (unsigned long long)as->timer_runs,
			(unsigned long long)as->max_round_packets);
		print(ctx,
			"\"replication\":{\"replicated\":%llu,\"copies\":%llu,\"copies_failed\":%llu,"
			"\"held\":%llu,\"by_kernel\":%llu,\"single_rewritten\":%llu,"
			"\"no_route\":%llu,\"wrong_interface\":%llu,"
			"\"routes\":%zu,\"route_messages\":%llu,\"route_resyncs\":%llu}}\n",
			(unsigned long long)as->replicated, (unsigned long long)as->copies,
			(unsigned long long)as->copies_failed, (unsigned long long)as->copies_held,
			(unsigned long long)as->repl_by_kernel, (unsigned long long)as->repl_single,
			(unsigned long long)as->repl_no_route, (unsigned long long)as->repl_wrong_if,
			A->mfc != NULL ? mfc_count(A->mfc) : 0, (unsigned long long)ms.messages,
			(unsigned long long)ms.resyncs);
		return;
	}
	print(ctx, "PGM router assist data plane: %s\n", A->running ? "running" : "not running");
	print(ctx, "  Interception backend %s, queue %u, bypass when the daemon is down\n", backend,
		A->conf.queue_num);
	if (A->rules != NULL && rules_backend_detail(A->rules, detail, sizeof(detail))[0] != '\0')
		print(ctx, "    queue rules use the %s\n", detail);
	if (why != NULL && why[0] != '\0')
		print(ctx, "  nftables not used: %s\n", why);
	if (A->conf.udp)
		print(ctx, "  PGM over UDP intercepted on ports %u (unicast) and %u (multicast)\n",
			A->conf.udp_ucast_port, A->conf.udp_mcast_port);
	else
		print(ctx, "  PGM over UDP not intercepted\n");
	print(ctx, "  Queue: %llu packets, %llu bytes; verdicts: %llu accept, %llu drop, "
		   "%llu rewritten\n",
		(unsigned long long)qs.packets, (unsigned long long)qs.bytes,
		(unsigned long long)qs.accepted, (unsigned long long)qs.dropped,
		(unsigned long long)qs.rewritten);
	print(ctx, "    %llu batch verdicts carrying %llu, %llu single verdicts, %llu sends\n",
		(unsigned long long)qs.batches, (unsigned long long)qs.batched,
		(unsigned long long)qs.verdict_messages, (unsigned long long)qs.sends);
	print(ctx,
		"    %llu receive rounds held their drop verdicts for a later send, %u held now\n",
		(unsigned long long)qs.held_rounds, qs.held);
	print(ctx, "    receive buffer %u bytes%s, ENOBUFS %llu, packets not delivered %llu, "
		   "send errors %llu\n",
		qs.rcvbuf_bytes, qs.rcvbuf_forced ? " (forced)" : "",
		(unsigned long long)qs.enobufs, (unsigned long long)qs.id_gaps,
		(unsigned long long)qs.send_errors);
	if (ks.valid)
		print(ctx, "  Kernel queue: %u waiting, %u dropped (full), %u user-dropped, "
			   "%u socket drops\n",
			ks.queue_total, ks.queue_dropped, ks.user_dropped, ks.socket_drops);
	if (have_counters)
		print(ctx, "  Rules matched: prerouting %llu, input %llu\n",
			(unsigned long long)rcnt.packets[RULES_IPT_PRE],
			(unsigned long long)rcnt.packets[RULES_IPT_IN]);
	else if (err[0] != '\0')
		print(ctx, "  Rules matched: unavailable (%s)\n", err);
	print(ctx, "  Output: %llu packets, %llu bytes; send buffer %u bytes, %llu would block, "
		   "%llu unreachable, %llu other errors\n",
		(unsigned long long)rs.packets, (unsigned long long)rs.bytes, rs.sndbuf_bytes,
		(unsigned long long)rs.would_block, (unsigned long long)rs.unreachable,
		(unsigned long long)(rs.too_big + rs.bad_input + rs.other_errors));
	print(ctx,
		"    %llu multicast and %llu unicast through the link layer (%s), the rest through "
		"the IP stack\n",
		(unsigned long long)(rs.link_packets - rs.link_unicast),
		(unsigned long long)rs.link_unicast,
		rs.link_output		 ? "on"
		: !rs.link_available && A->raw != NULL ? "unavailable: no packet socket"
							 : "off");
	if (rs.neigh_available)
		print(ctx,
			"    neighbour lookups: %llu asked, %llu confirmed, %llu not, %llu failed, "
			"%llu over the rate\n",
			(unsigned long long)rs.neigh.queries, (unsigned long long)rs.neigh.usable,
			(unsigned long long)rs.neigh.unusable, (unsigned long long)rs.neigh.errors,
			(unsigned long long)rs.neigh.rate_limited);
	else if (A->raw != NULL && rs.link_available)
		print(ctx, "    neighbour lookups unavailable (%s): unicast through the IP stack\n",
			strerror(rs.neigh_errno));
	print(ctx, "  Packet path: %llu packets, %llu not PGM, %llu malformed, %llu rewritten "
		   "(%llu rewrites failed)\n",
		(unsigned long long)as->packets, (unsigned long long)as->not_pgm,
		(unsigned long long)as->malformed, (unsigned long long)as->rewritten,
		(unsigned long long)as->rewrite_failed);
	print(ctx, "    %llu originated, %llu could not be built, %llu send failures, "
		   "%llu without a source address\n",
		(unsigned long long)as->originated, (unsigned long long)as->build_failed,
		(unsigned long long)as->send_failed, (unsigned long long)as->no_source_addr);
	print(ctx, "    %llu timer runs, largest receive round %llu packets\n",
		(unsigned long long)as->timer_runs, (unsigned long long)as->max_round_packets);
	print(ctx, "  Replication: %llu SPM/RDATA replicated, %llu copies sent (%llu failed), "
		   "%llu held back\n",
		(unsigned long long)as->replicated, (unsigned long long)as->copies,
		(unsigned long long)as->copies_failed, (unsigned long long)as->copies_held);
	print(ctx, "    left to the kernel: %llu with every copy unchanged, %llu with its one copy "
		   "rewritten, %llu without a route, %llu off its incoming interface\n",
		(unsigned long long)as->repl_by_kernel, (unsigned long long)as->repl_single,
		(unsigned long long)as->repl_no_route, (unsigned long long)as->repl_wrong_if);
	print(ctx, "    multicast routes: %zu known (rtnetlink: %llu messages, %llu resyncs)\n",
		A->mfc != NULL ? mfc_count(A->mfc) : 0, (unsigned long long)ms.messages,
		(unsigned long long)ms.resyncs);
	print(ctx, "  Interfaces: %zu known (rtnetlink: %llu messages, %llu resyncs)\n",
		A->rtnl != NULL ? rtnl_if_count(A->rtnl) : 0, (unsigned long long)ts.messages,
		(unsigned long long)ts.resyncs);
	if (A->capture != NULL) {
		struct pcap_writer_stats ps;

		pcap_writer_get_stats(A->capture, &ps);
		print(ctx, "  Capture: %s, %llu packets, %llu bytes%s\n", A->capture_path,
			(unsigned long long)ps.packets, (unsigned long long)ps.total_bytes,
			ps.stopped ? " (size limit reached, stopped)" : "");
	}
}

/* ---- offline replay ---- */

struct replay_if {
	char name[CP_IFNAME_LEN];
	struct pgm_nla addr;
	uint32_t prefix;
	int ifindex;
	bool assist;
};

static bool in_subnet(const struct pgm_nla *a, const struct replay_if *rif)
{
	uint32_t x, y, mask;

	if (a->afi != PGM_AFI_IP || rif->addr.afi != PGM_AFI_IP)
		return false;
	memcpy(&x, a->addr, 4);
	memcpy(&y, rif->addr.addr, 4);
	mask = rif->prefix == 0 ? 0 : htonl(~0u << (32 - rif->prefix));
	return (x & mask) == (y & mask);
}

static int parse_ifspec(const char *spec, struct replay_if *rif)
{
	const char *eq = strchr(spec, '='), *slash;
	char addr[64];
	size_t nlen;

	memset(rif, 0, sizeof(*rif));
	rif->prefix = 24;
	if (eq == NULL || (nlen = (size_t)(eq - spec)) == 0 || nlen >= sizeof(rif->name))
		return -1;
	memcpy(rif->name, spec, nlen);
	slash = strchr(eq + 1, '/');
	snprintf(addr, sizeof(addr), "%.*s", slash ? (int)(slash - eq - 1) : (int)strlen(eq + 1),
		eq + 1);
	if (!pgm_nla_parse(&rif->addr, addr) || rif->addr.afi != PGM_AFI_IP)
		return -1;
	if (slash != NULL) {
		char *end;
		long p = strtol(slash + 1, &end, 10);

		if (*end != '\0' || p < 0 || p > 32)
			return -1;
		rif->prefix = (uint32_t)p;
	}
	return 0;
}

static void replay_print_counters(void)
{
	struct cp_stats st;

	cp_get_stats(A->cp, &st);
	printf("replay: %zu session%s, %zu repair state%s at the end; %llu packets, %llu malformed, "
	       "%llu originated\n",
		st.sessions, st.sessions == 1 ? "" : "s", st.repair_states,
		st.repair_states == 1 ? "" : "s", (unsigned long long)A->stats.packets,
		(unsigned long long)A->stats.malformed, (unsigned long long)A->stats.originated);
}

static void replay_print_if(void *ctx, const struct cp_if_view *v)
{
	const struct cp_counters *c = v->counters;

	(void)ctx;
	if (c == NULL)
		return;
	printf("replay: %s:", v->name);
	for (unsigned t = 0; t < PGM_TYPE_COUNT; t++)
		if (c->in[t] || c->out[t])
			printf(" %s in %llu out %llu;", pgm_type_name(t), (unsigned long long)c->in[t],
				(unsigned long long)c->out[t]);
	for (unsigned e = 0; e < CP_C_COUNT; e++)
		if (c->ev[e])
			printf(" %s %llu", cp_counter_name(e), (unsigned long long)c->ev[e]);
	for (unsigned e = 1; e < PGM_ERR_COUNT; e++)
		if (c->err[e])
			printf(" %s %llu", pgm_err_name(e), (unsigned long long)c->err[e]);
	printf("\n");
}

int assist_replay(const char *pcap_path, const char *const *ifspecs, size_t nifspecs, bool quiet)
{
	struct replay_if *rifs;
	struct pcap_reader *r;
	struct pcap_datagram d;
	struct cp_config cfg;
	char err[256];
	cp_time_t t0 = 0, now = 0, first = 0;
	bool any_enabled = assist_if_enabled_count() > 0;
	int rc, status = 0;

	if (nifspecs == 0) {
		fprintf(stderr, "pgmrouterd: replay needs at least one -i NAME=ADDR/PREFIX\n");
		return 2;
	}
	rifs = calloc(nifspecs, sizeof(*rifs));
	if (rifs == NULL)
		return 1;
	A->replay = true;
	A->replay_quiet = quiet;
	udp_ports_from_conf();
	cp_config_from_conf(&cfg);
	A->cp = cp_new(&cfg, on_action, NULL);
	if (A->cp == NULL) {
		free(rifs);
		return 1;
	}
	cp_set_log(A->cp, on_cp_log, NULL, quiet ? 0 : (1u << CP_LOG_EVENT | 1u << CP_LOG_TIMER));
	for (size_t i = 0; i < nifspecs; i++) {
		const struct assist_if *ifc;

		if (parse_ifspec(ifspecs[i], &rifs[i]) < 0) {
			fprintf(stderr, "pgmrouterd: -i %s: expected NAME=A.B.C.D[/PREFIX]\n",
				ifspecs[i]);
			status = 2;
			goto out;
		}
		rifs[i].ifindex = (int)i + 1;
		ifc = if_find(rifs[i].name);
		rifs[i].assist = any_enabled ? (ifc != NULL && ifc->enabled) : true;
		cp_if_add(A->cp, rifs[i].ifindex, rifs[i].name);
		cp_if_set_addr(A->cp, rifs[i].ifindex, &rifs[i].addr);
		if (ifc != NULL)
			cp_if_set_config(A->cp, rifs[i].ifindex, &ifc->cfg);
		if (rifs[i].assist)
			cp_if_set_assist(A->cp, rifs[i].ifindex, true);
	}
	r = pcap_reader_open(pcap_path, err, sizeof(err));
	if (r == NULL) {
		fprintf(stderr, "pgmrouterd: %s\n", err);
		status = 1;
		goto out;
	}
	while ((rc = pcap_reader_next(r, &d, err, sizeof(err))) == 1) {
		struct pgm_ip ip;
		int in = 0;
		size_t rw_len;
		enum cp_verdict v;

		now = (cp_time_t)d.ts.tv_sec * 1000000u + (cp_time_t)d.ts.tv_usec;
		if (first == 0) {
			first = now;
			t0 = CP_SEC(1);
		}
		now = now - first + t0;
		cp_timers(A->cp, now);
		if (pgm_parse_ip(d.ip, d.len, &A->udp_ports, &ip) != PGM_ERR_OK)
			continue;
		for (size_t i = 0; i < nifspecs && in == 0; i++)
			if (in_subnet(&ip.src, &rifs[i]))
				in = rifs[i].ifindex;
		if (in == 0) {
			char src[64];

			if (!quiet)
				printf("%.6f: %s is on none of the interfaces: skipped\n",
					(double)(now - t0) / 1e6,
					pgm_nla_format(&ip.src, src, sizeof(src)));
			continue;
		}
		A->stats.packets++;
		if (!quiet)
			printf("%.6f:\n", (double)(now - t0) / 1e6);
		/* Multicast SPM and RDATA are forwarded copies: one per other interface.
		   Everything else (POLL and POLR included: dataplane/rules.h) is seen once. */
		if (pgm_ip_dst_is_multicast(&ip) && ip.pgm_len >= 5 &&
			((d.ip[ip.pgm_offset + 4] & 0x0f) == PGM_SPM ||
				(d.ip[ip.pgm_offset + 4] & 0x0f) == PGM_RDATA)) {
			for (size_t i = 0; i < nifspecs; i++) {
				if (rifs[i].ifindex == in || !rifs[i].assist)
					continue;
				v = process_datagram(d.ip, d.len, PGM_PARSE_NO_UDP_CHECKSUM, in,
					rifs[i].ifindex, now, &rw_len);
				(void)v;
			}
		} else {
			v = process_datagram(d.ip, d.len, PGM_PARSE_NO_UDP_CHECKSUM, in, 0, now,
				&rw_len);
			(void)v;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "pgmrouterd: %s: %s\n", pcap_path, err);
		status = 1;
	}
	pcap_reader_close(r);
	cp_foreach_if(A->cp, replay_print_if, NULL);
	replay_print_counters();
out:
	free(rifs);
	return status;
}

/* ---- a control plane for tests ---- */

int assist_test_start(const char *const *ifspecs, size_t nifspecs, char *err, size_t errlen)
{
	struct cp_config cfg;

	if (A->cp != NULL) {
		snprintf(err, errlen, "the control plane exists already");
		return -1;
	}
	A->replay = true;
	A->test = true;
	A->test_now = CP_SEC(1);
	udp_ports_from_conf();
	cp_config_from_conf(&cfg);
	A->cp = cp_new(&cfg, on_action, NULL);
	if (A->cp == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cp_set_log(A->cp, on_cp_log, NULL, 1u << CP_LOG_EVENT | 1u << CP_LOG_TIMER);
	for (size_t i = 0; i < nifspecs; i++) {
		struct replay_if rif;
		const struct assist_if *ifc;

		if (parse_ifspec(ifspecs[i], &rif) < 0) {
			snprintf(err, errlen, "%s: expected NAME=A.B.C.D[/PREFIX]", ifspecs[i]);
			return -1;
		}
		if (cp_if_add(A->cp, (int)i + 1, rif.name) < 0) {
			snprintf(err, errlen, "%s: the interface table is full", rif.name);
			return -1;
		}
		cp_if_set_addr(A->cp, (int)i + 1, &rif.addr);
		if ((ifc = if_find(rif.name)) != NULL)
			cp_sync_if(ifc);
	}
	return 0;
}

int assist_test_packet(const uint8_t *datagram, size_t len, const char *in_ifname,
	const char *out_ifname, char *err, size_t errlen)
{
	int in, out = 0;
	size_t rw_len;

	if (!A->test) {
		snprintf(err, errlen, "no test control plane");
		return -1;
	}
	if ((in = test_ifindex(in_ifname)) == 0 ||
		(out_ifname != NULL && (out = test_ifindex(out_ifname)) == 0)) {
		snprintf(err, errlen, "no interface %s", in == 0 ? in_ifname : out_ifname);
		return -1;
	}
	A->stats.packets++;
	(void)process_datagram(datagram, len, 0, in, out, A->test_now, &rw_len);
	return 0;
}

void assist_test_advance(uint64_t us)
{
	if (!A->test)
		return;
	A->test_now += us;
	cp_timers(A->cp, A->test_now);
}

uint64_t assist_now(void)
{
	return A != NULL && A->test ? A->test_now : ev_time_now();
}

/* ---- life cycle ---- */

void assist_init(void)
{
	A = calloc(1, sizeof(*A));
	if (A == NULL)
		fatal("router assist state");
	conf_default(&A->conf);
	udp_ports_from_conf();
}

void assist_free(void)
{
	if (A == NULL)
		return;
	assist_stop();
	free(A->ifs);
	free(A);
	A = NULL;
}

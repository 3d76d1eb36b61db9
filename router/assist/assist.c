/*
 * The router assist object: life cycle, the settings it runs on, the interfaces it knows, and
 * the core's debug lines. See assist.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/assist/assist_internal.h"
#include "router/assist/report.h"

/* ---- debug lines ---- */

void assist_line(struct assist *a, enum log_category cat, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	a->env.line(a->env.ctx, cat, line);
}

static void on_cp_log(void *ctx, enum cp_log_kind kind, const char *line)
{
	struct assist *a = ctx;

	a->env.line(a->env.ctx,
		kind == CP_LOG_TIMER	? LOG_CAT_TIMERS
		: kind == CP_LOG_PACKET ? LOG_CAT_PACKETS
					: LOG_CAT_EVENTS,
		line);
}

void assist_log_sync(struct assist *a)
{
	unsigned lines = a->env.lines_wanted(a->env.ctx), mask = 0;

	if (lines == a->lines && a->cp_log_mask != ~0u)
		return;
	a->lines = lines;
	if (assist_wants(a, LOG_CAT_EVENTS))
		mask |= 1u << CP_LOG_EVENT;
	if (assist_wants(a, LOG_CAT_TIMERS))
		mask |= 1u << CP_LOG_TIMER;
	if (assist_wants(a, LOG_CAT_PACKETS))
		mask |= 1u << CP_LOG_PACKET;
	/* the core formats debug lines only for the kinds asked for */
	a->cp_log_mask = mask;
	cp_set_log(a->cp, on_cp_log, a, mask);
}

/* ---- life cycle ---- */

/* The core asks where a session's (S,G) comes in when its SPM arrives elsewhere (7.1, 10). */
static int assist_rpf(void *ctx, const struct pgm_nla *src, const struct pgm_nla *group)
{
	struct assist *a = ctx;
	const struct mfc_route *r = a->env.route != NULL ? a->env.route(a->env.ctx, src, group, 0)
							  : NULL;

	return r != NULL ? r->iif : 0;
}

/* The core asks which sources send a group out by an interface when a NAK names a TSI it has
   no SPM of: it asks them for one (13.6). */
static unsigned assist_route_sources(void *ctx, const struct pgm_nla *group, int ifindex,
	struct pgm_nla *srcs, unsigned max)
{
	struct assist *a = ctx;

	return a->env.route_sources != NULL
		       ? a->env.route_sources(a->env.ctx, group, ifindex, srcs, max)
		       : 0;
}

struct assist *assist_new(const struct assist_env *env)
{
	struct assist *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->env = *env;
	{
		pthread_mutexattr_t attr;

		pthread_mutexattr_init(&attr);
		pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&a->lock, &attr);
		pthread_mutexattr_destroy(&attr);
	}
	cp_config_default(&a->conf.g.cp);
	a->cp = cp_new(&a->conf.g.cp, assist_on_action, a);
	if (a->cp == NULL) {
		pthread_mutex_destroy(&a->lock);
		free(a);
		return NULL;
	}
	cp_set_rpf(a->cp, assist_rpf, a);
	cp_set_route_sources(a->cp, assist_route_sources, a);
	a->cp_log_mask = ~0u;
	assist_log_sync(a);
	return a;
}

void assist_free(struct assist *a)
{
	if (a == NULL)
		return;
	cp_free(a->cp);
	assist_conf_free(&a->conf);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

struct cp *assist_cp(const struct assist *a)
{
	return a->cp;
}

const struct assist_conf *assist_conf(const struct assist *a)
{
	return &a->conf;
}

const struct assist_stats *assist_stats(const struct assist *a)
{
	return &a->stats;
}

cp_time_t assist_now(const struct assist *a)
{
	return a->env.now(a->env.ctx);
}

bool assist_running(const struct assist *a)
{
	return a->env.running != NULL && a->env.running(a->env.ctx);
}

int assist_capture(struct assist *a, const char *path, uint32_t max_mb, char *err, size_t errlen)
{
	if (a->env.capture == NULL) {
		if (path == NULL)
			return 0;
		snprintf(err, errlen, "PGM router assist is not running");
		return -1;
	}
	return a->env.capture(a->env.ctx, path, max_mb, err, errlen);
}

void assist_count_sent(struct assist *a, uint64_t sent, uint64_t failed)
{
	a->stats.originated += sent;
	a->stats.send_failed += failed;
	a->nak_went_first = false; /* what was queued has left: a new batch begins */
}

void assist_add_stats(struct assist *a, const struct assist_stats *st)
{
	uint64_t *to = (uint64_t *)&a->stats;
	const uint64_t *from = (const uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		to[i] += from[i];
}

/* ---- settings ---- */

static void shard_changed(struct assist *shard)
{
	if (shard->env.changed != NULL)
		shard->env.changed(shard->env.ctx);
}

void assist_conf_free(struct assist_conf *conf)
{
	free(conf->ifs);
	conf->ifs = NULL;
	conf->nifs = 0;
}

static int if_conf_cmp(const void *x, const void *y)
{
	return strcmp(
		((const struct assist_if_conf *)x)->name, ((const struct assist_if_conf *)y)->name);
}

static const struct assist_if_settings *conf_if(const struct assist_conf *conf, const char *name)
{
	struct assist_if_conf key;
	const struct assist_if_conf *found;

	snprintf(key.name, sizeof(key.name), "%s", name);
	found = conf->nifs != 0 ? bsearch(&key, conf->ifs, conf->nifs, sizeof(key), if_conf_cmp)
				: NULL;
	return found != NULL ? &found->s : NULL;
}

/* The core's view of one interface from the settings: its own values when configured, the
   global defaults (followed as they change) otherwise. */
static void sync_if(struct assist *a, int ifindex, const char *name)
{
	const struct assist_if_settings *s = conf_if(&a->conf, name);

	cp_if_set_config(a->cp, ifindex, s != NULL ? &s->cfg : NULL);
	if (cp_if_set_assist(a->cp, ifindex, s != NULL && s->assist) < 0)
		log_warnx("%s: router assist not enabled: more than %d interfaces with router "
			  "assist",
			name, CP_MAX_INTERFACES);
}

static bool if_settings_equal(
	const struct assist_if_settings *x, const struct assist_if_settings *y)
{
	if (x == NULL || y == NULL)
		return x == y;
	return x->assist == y->assist && memcmp(&x->cfg, &y->cfg, sizeof(x->cfg)) == 0;
}

struct resync {
	struct assist *a;
	const struct assist_conf *prev;
};

static void resync_if(void *ctx, const struct cp_if_view *v)
{
	struct resync *r = ctx;

	if (!if_settings_equal(conf_if(r->prev, v->name), conf_if(&r->a->conf, v->name)))
		sync_if(r->a, v->ifindex, v->name);
}

int assist_configure(
	struct assist *a, const struct assist_conf *next, unsigned how, char *err, size_t errlen)
{
	struct assist_conf prev = a->conf, copy = *next;
	struct resync r = {.a = a, .prev = &prev};

	copy.ifs = next->nifs != 0 ? malloc(next->nifs * sizeof(*copy.ifs)) : NULL;
	if (next->nifs != 0 && copy.ifs == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (copy.ifs != NULL) {
		memcpy(copy.ifs, next->ifs, next->nifs * sizeof(*copy.ifs));
		qsort(copy.ifs, copy.nifs, sizeof(*copy.ifs), if_conf_cmp);
	}
	if (a->env.apply != NULL && a->env.apply(a->env.ctx, &prev, &copy, how, err, errlen) < 0) {
		assist_conf_free(&copy);
		return -1;
	}
	a->conf = copy;
	assist_udp_ports(&copy.g, &a->udp_ports);
	if (memcmp(&prev.g.cp, &copy.g.cp, sizeof(copy.g.cp)) != 0)
		cp_set_config(a->cp, &copy.g.cp);
	cp_foreach_if(a->cp, resync_if, &r);
	assist_conf_free(&prev);
	for (unsigned i = 0; i < a->nshards; i++) {
		struct assist_conf shard = a->conf;
		char err2[256];

		assist_shard_conf(&shard.g, a->nshards);
		assist_lock(a->shards[i]);
		if (assist_configure(a->shards[i], &shard, 0, err2, sizeof(err2)) < 0)
			log_warnx("worker %u: configuration not applied: %s", i, err2);
		assist_unlock(a->shards[i]);
		shard_changed(a->shards[i]);
	}
	return 0;
}

/* ---- shards ---- */

void assist_lock(struct assist *a)
{
	pthread_mutex_lock(&a->lock);
}

void assist_unlock(struct assist *a)
{
	pthread_mutex_unlock(&a->lock);
}

void assist_set_shards(struct assist *a, struct assist *const *shards, unsigned n)
{
	if (n > RULES_WORKERS_MAX)
		n = RULES_WORKERS_MAX;
	for (unsigned i = 0; i < n; i++)
		a->shards[i] = shards[i];
	a->nshards = n;
}

unsigned assist_nshards(const struct assist *a)
{
	return a->nshards;
}

static uint32_t share(uint32_t v, unsigned n)
{
	return v == 0 ? 0 : (uint32_t)(((uint64_t)v + n - 1) / n);
}

void assist_shard_conf(struct assist_settings *g, unsigned n)
{
	if (n <= 1)
		return;
	g->cp.memory_budget_mb = share(g->cp.memory_budget_mb, n);
	g->cp.max_sessions = share(g->cp.max_sessions, n);
	g->cp.max_repair_states = share(g->cp.max_repair_states, n);
}

/* ---- a fresh core ---- */

struct reset_ctx {
	struct assist *a;
	struct cp *fresh;
};

static void reset_if(void *arg, const struct cp_if_view *v)
{
	struct reset_ctx *r = arg;

	if (cp_if_add(r->fresh, v->ifindex, v->name) < 0)
		return;
	cp_if_set_addr(r->fresh, v->ifindex, &v->addr);
	cp_if_set_addr6(r->fresh, v->ifindex, &v->addr6, &v->ll6);
	sync_if(r->a, v->ifindex, v->name); /* on a->cp: the fresh one */
}

int assist_reset_core(struct assist *a)
{
	struct cp *fresh = cp_new(&a->conf.g.cp, assist_on_action, a);
	struct reset_ctx r = {.a = a, .fresh = fresh};
	struct cp *old = a->cp;

	if (fresh == NULL)
		return -1;
	cp_set_rpf(fresh, assist_rpf, a);
	cp_set_route_sources(fresh, assist_route_sources, a);
	a->cp = fresh;
	cp_foreach_if(old, reset_if, &r);
	cp_free(old);
	a->cp_log_mask = ~0u;
	assist_log_sync(a);
	return 0;
}

/* ---- interfaces ---- */

void assist_if_added(struct assist *a, int ifindex, const char *name, const struct pgm_nla *addr)
{
	for (unsigned i = 0; i < a->nshards; i++) {
		assist_lock(a->shards[i]);
		assist_if_added(a->shards[i], ifindex, name, addr);
		assist_unlock(a->shards[i]);
		shard_changed(a->shards[i]);
	}
	if (cp_if_add(a->cp, ifindex, name) < 0) {
		log_warnx("%s: not tracked: the control plane's interface table is full", name);
		return;
	}
	cp_if_set_addr(a->cp, ifindex, addr);
	sync_if(a, ifindex, name);
}

void assist_if_removed(struct assist *a, int ifindex)
{
	for (unsigned i = 0; i < a->nshards; i++) {
		assist_lock(a->shards[i]);
		assist_if_removed(a->shards[i], ifindex);
		assist_unlock(a->shards[i]);
		shard_changed(a->shards[i]);
	}
	cp_if_remove(a->cp, ifindex);
}

void assist_if_address(struct assist *a, int ifindex, const struct pgm_nla *addr)
{
	for (unsigned i = 0; i < a->nshards; i++) {
		assist_lock(a->shards[i]);
		assist_if_address(a->shards[i], ifindex, addr);
		assist_unlock(a->shards[i]);
		shard_changed(a->shards[i]);
	}
	cp_if_set_addr(a->cp, ifindex, addr);
}

void assist_if_address6(
	struct assist *a, int ifindex, const struct pgm_nla *global, const struct pgm_nla *ll)
{
	for (unsigned i = 0; i < a->nshards; i++) {
		assist_lock(a->shards[i]);
		assist_if_address6(a->shards[i], ifindex, global, ll);
		assist_unlock(a->shards[i]);
		shard_changed(a->shards[i]);
	}
	cp_if_set_addr6(a->cp, ifindex, global, ll);
}

int assist_if_lookup(const struct assist *a, const char *name, bool *up, bool *running)
{
	return a->env.if_lookup(a->env.ctx, name, up, running);
}

void assist_routes(
	const struct assist *a, void (*fn)(void *arg, const struct mfc_route *r), void *arg)
{
	if (a->env.routes != NULL)
		a->env.routes(a->env.ctx, fn, arg);
}

const char *assist_ifname(const struct assist *a, int ifindex, char *buf, size_t len)
{
	struct cp_if_view v;

	if (cp_get_if(a->cp, ifindex, &v) && v.name[0] != '\0')
		snprintf(buf, len, "%s", v.name);
	else if (ifindex == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "if%d", ifindex);
	return buf;
}

/* ---- the data plane's report ---- */

void assist_dataplane_view(const struct assist *a, struct assist_dataplane_view *v)
{
	memset(v, 0, sizeof(*v));
	v->backend = "none";
	v->nft_unavailable = "";
	if (a->env.report != NULL)
		a->env.report(a->env.ctx, v);
	assist_path_stats(a, &v->path_sum);
	v->path = &v->path_sum;
}

void assist_dataplane_sum_queues(struct assist_dataplane_view *v)
{
	struct nfqueue_stats *q = &v->queue;
	struct nfqueue_kernel_stats *k = &v->kernel;

	if (v->nworkers == 0)
		return;
	*q = v->workers[0].queue;
	*k = v->workers[0].kernel;
	for (unsigned i = 1; i < v->nworkers; i++) {
		const struct nfqueue_stats *w = &v->workers[i].queue;
		const struct nfqueue_kernel_stats *wk = &v->workers[i].kernel;

		q->rounds += w->rounds;
		q->messages += w->messages;
		q->packets += w->packets;
		q->bytes += w->bytes;
		q->accepted += w->accepted;
		q->dropped += w->dropped;
		q->rewritten += w->rewritten;
		q->verdict_messages += w->verdict_messages;
		q->batches += w->batches;
		q->batched += w->batched;
		q->sends += w->sends;
		q->held_rounds += w->held_rounds;
		q->held += w->held;
		q->pending += w->pending;
		q->id_gaps += w->id_gaps;
		q->truncated += w->truncated;
		q->enobufs += w->enobufs;
		q->recv_errors += w->recv_errors;
		q->send_errors += w->send_errors;
		q->netlink_errors += w->netlink_errors;
		if (w->last_netlink_error != 0)
			q->last_netlink_error = w->last_netlink_error;
		q->malformed += w->malformed;
		q->bad_verdicts += w->bad_verdicts;
		k->valid = k->valid && wk->valid;
		k->queue_total += wk->queue_total;
		k->queue_dropped += wk->queue_dropped;
		k->user_dropped += wk->user_dropped;
		k->id_sequence += wk->id_sequence;
		k->socket_drops_valid = k->socket_drops_valid && wk->socket_drops_valid;
		k->socket_drops += wk->socket_drops;
	}
}

void assist_police(const struct assist_settings *g,
	struct rules_police police[RULES_POLICE_CLASS_COUNT][RULES_POLICE_KEY_COUNT])
{
	static const enum assist_police_row source_row[RULES_POLICE_CLASS_COUNT] = {
		[RULES_POLICE_NAK] = ASSIST_POLICE_NAK,
		[RULES_POLICE_NCF] = ASSIST_POLICE_NCF,
		[RULES_POLICE_SPM] = ASSIST_POLICE_SPM,
	};
	const struct assist_police *ifp = &g->police[ASSIST_POLICE_INTERFACE];

	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++) {
		const struct assist_police *p = &g->police[source_row[k]];

		police[k][RULES_POLICE_SOURCE] = p->on ? (struct rules_police){p->rate, p->burst}
						       : (struct rules_police){0, 0};
		police[k][RULES_POLICE_INTERFACE] =
			ifp->on ? (struct rules_police){ifp->rate, ifp->burst}
				: (struct rules_police){0, 0};
	}
}

void assist_udp_ports(const struct assist_settings *g, struct pgm_udp_ports *ports)
{
	char text[ASSIST_UDP_PORTS_LEN + 1], err[128];

	pgm_udp_ports_default(ports);
	ports->enabled = g->udp;
	memcpy(text, g->udp_ports, ASSIST_UDP_PORTS_LEN);
	text[ASSIST_UDP_PORTS_LEN] = '\0';
	if (pgm_port_set_parse(text, &ports->more, err, sizeof(err)) == 0)
		ports->ucast_port = ports->mcast_port = 0; /* the set says it all */
}

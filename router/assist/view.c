/*
 * Views across the workers' control planes (assist.h: workers): what the shows, the metrics and
 * the MIB read, added up over this object's core and its shards', each read under its lock.
 * Sessions live in exactly one core (the rules steer each to one queue); interfaces in all of
 * them, with their counters split.
 */
#include <stdlib.h>
#include <string.h>

#include "router/assist/assist_internal.h"

/* Every core the views cover: this object's, then its shards'. */
static unsigned ncores(const struct assist *a)
{
	return 1 + a->nshards;
}

static struct assist *core_owner(const struct assist *a, unsigned i)
{
	return i == 0 ? (struct assist *)a : a->shards[i - 1];
}

static void add_u64(uint64_t *to, const uint64_t *from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		to[i] += from[i];
}

static void add_counters(struct cp_counters *to, const struct cp_counters *from)
{
	add_u64((uint64_t *)to, (const uint64_t *)from, sizeof(*to) / sizeof(uint64_t));
}

/* A shard's interface slot as this object's core numbers it (-1: none). */
static int main_slot(const struct assist *a, const struct cp *shard, unsigned slot)
{
	int ifindex = cp_if_slot_ifindex(shard, slot);

	if (ifindex == 0)
		return -1;
	for (unsigned s = 0; s < 64; s++)
		if (cp_if_slot_ifindex(a->cp, s) == ifindex)
			return (int)s;
	return -1;
}

static uint64_t main_mask(const struct assist *a, const struct cp *shard, uint64_t mask)
{
	uint64_t out = 0;

	if (shard == a->cp)
		return mask;
	for (unsigned slot = 0; slot < 64; slot++) {
		int s;

		if (!(mask & 1ull << slot))
			continue;
		s = main_slot(a, shard, slot);
		if (s >= 0)
			out |= 1ull << s;
	}
	return out;
}

void assist_path_stats(const struct assist *a, struct assist_stats *st)
{
	*st = a->stats;
	for (unsigned i = 0; i < a->nshards; i++) {
		assist_lock(a->shards[i]);
		add_u64((uint64_t *)st, (const uint64_t *)&a->shards[i]->stats,
			sizeof(*st) / sizeof(uint64_t));
		assist_unlock(a->shards[i]);
	}
}

/* The repair states charged to ifindex in every core. */
static size_t if_states(const struct assist *a, int ifindex)
{
	size_t n = 0;

	for (unsigned i = 0; i < ncores(a); i++) {
		struct assist *o = core_owner(a, i);
		struct cp_if_view v;

		assist_lock(o);
		if (cp_get_if(o->cp, ifindex, &v))
			n += v.repair_states;
		assist_unlock(o);
	}
	return n;
}

struct most_ctx {
	const struct assist *a;
	struct cp_stats *st;
};

static void if_most(void *arg, const struct cp_if_view *v)
{
	struct most_ctx *c = arg;
	size_t n = if_states(c->a, v->ifindex);

	if (n > c->st->if_states_most) {
		c->st->if_states_most = n;
		c->st->if_states_most_ifindex = v->ifindex;
	}
}

void assist_get_stats(const struct assist *a, struct cp_stats *st)
{
	struct most_ctx c = {.a = a, .st = st};

	cp_get_stats(a->cp, st);
	if (a->nshards == 0)
		return;
	for (unsigned i = 0; i < a->nshards; i++) {
		struct cp_stats w;

		assist_lock(a->shards[i]);
		cp_get_stats(a->shards[i]->cp, &w);
		assist_unlock(a->shards[i]);
		st->sessions += w.sessions;
		st->repair_states += w.repair_states;
		st->bytes += w.bytes;
		st->session_bytes += w.session_bytes;
		st->repair_bytes += w.repair_bytes;
		add_u64(st->global_ev, w.global_ev, CP_C_COUNT);
		st->unexpected_events += w.unexpected_events;
		if (w.session_states_most > st->session_states_most)
			st->session_states_most = w.session_states_most;
	}
	/* an interface's repair states are charged in every core its NAKs' sessions live in */
	st->if_states_most = 0;
	st->if_states_most_ifindex = 0;
	cp_foreach_if(a->cp, if_most, &c);
}

bool assist_get_if(
	const struct assist *a, int ifindex, struct cp_if_view *v, struct cp_counters *sum)
{
	if (!cp_get_if(a->cp, ifindex, v))
		return false;
	if (a->nshards == 0)
		return true;
	*sum = *v->counters;
	v->counters = sum;
	for (unsigned i = 0; i < a->nshards; i++) {
		struct cp_if_view w;

		assist_lock(a->shards[i]);
		if (cp_get_if(a->shards[i]->cp, ifindex, &w)) {
			add_counters(sum, w.counters);
			v->repair_states += w.repair_states;
		}
		assist_unlock(a->shards[i]);
	}
	return true;
}

struct if_ctx {
	const struct assist *a;
	cp_if_cb cb;
	void *ctx;
};

static void if_summed(void *arg, const struct cp_if_view *v)
{
	struct if_ctx *c = arg;
	struct cp_if_view sv;
	struct cp_counters sum;

	if (assist_get_if(c->a, v->ifindex, &sv, &sum))
		c->cb(c->ctx, &sv);
}

void assist_foreach_if(const struct assist *a, cp_if_cb cb, void *ctx)
{
	struct if_ctx c = {.a = a, .cb = cb, .ctx = ctx};

	if (a->nshards == 0)
		cp_foreach_if(a->cp, cb, ctx);
	else
		cp_foreach_if(a->cp, if_summed, &c);
}

/* ---- sessions ---- */

/* A core's view of a session or repair state passed on, its interface masks in the numbering of
 * this object's core. */
struct translated {
	const struct assist *a;
	const struct cp *core;
	cp_session_cb session_cb;
	cp_repair_cb repair_cb;
	void *ctx;
};

static void session_translated(void *arg, const struct cp_session_view *v)
{
	struct translated *c = arg;
	struct cp_session_view t = *v;

	t.unreach_mask = main_mask(c->a, c->core, v->unreach_mask);
	t.transit_mask = main_mask(c->a, c->core, v->transit_mask);
	c->session_cb(c->ctx, &t);
}

static void repair_translated(void *arg, const struct cp_repair_view *v)
{
	struct translated *c = arg;
	struct cp_repair_view t = *v;

	t.if_mask = main_mask(c->a, c->core, v->if_mask);
	t.repaired_mask = main_mask(c->a, c->core, v->repaired_mask);
	c->repair_cb(c->ctx, &t);
}

/*
 * Every core in turn, under its lock: view(o, t, arg) with t translating core o's views, until
 * one returns true (the core held what was asked). Returns whether one did.
 */
static bool each_core_translated(const struct assist *a, struct translated t,
	bool (*view)(struct assist *o, struct translated *t, const void *arg), const void *arg)
{
	bool found = false;

	for (unsigned i = 0; i < ncores(a) && !found; i++) {
		struct assist *o = core_owner(a, i);

		t.core = o->cp;
		assist_lock(o);
		found = view(o, &t, arg);
		assist_unlock(o);
	}
	return found;
}

/* The session of key in core o: what its view's callback asks next goes to o (`viewing`). */
static bool session_in(struct assist *o, struct translated *t, const void *key)
{
	struct assist *a = (struct assist *)t->a;
	bool found;

	a->viewing = o;
	found = cp_session_view_key(o->cp, key, session_translated, t);
	a->viewing = NULL;
	return found;
}

bool assist_session_view_key(
	const struct assist *a, const struct cp_session_key *key, cp_session_cb cb, void *ctx)
{
	if (a->nshards == 0)
		return cp_session_view_key(a->cp, key, cb, ctx);
	return each_core_translated(
		a, (struct translated){.a = a, .session_cb = cb, .ctx = ctx}, session_in, key);
}

/* A key with what cp_foreach_session orders by. */
struct ordered_key {
	struct cp_session_key key;
	struct pgm_nla group, source;
};

static void order_fields(void *arg, const struct cp_session_view *v)
{
	struct ordered_key *k = arg;

	k->group = v->group;
	k->source = v->source;
}

static int nla_cmp(const struct pgm_nla *x, const struct pgm_nla *y)
{
	if (x->afi != y->afi)
		return x->afi < y->afi ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* control/view.c's order: group, source, TSI. */
static int ordered_cmp(const void *p, const void *q)
{
	const struct ordered_key *x = p, *y = q;
	int c;

	if ((c = nla_cmp(&x->group, &y->group)) != 0)
		return c;
	if ((c = nla_cmp(&x->source, &y->source)) != 0)
		return c;
	if ((c = memcmp(x->key.tsi.gsi, y->key.tsi.gsi, PGM_GSI_LEN)) != 0)
		return c;
	return (x->key.tsi.sport > y->key.tsi.sport) - (x->key.tsi.sport < y->key.tsi.sport);
}

struct cp_session_key *assist_session_keys(
	const struct assist *a, const struct pgm_nla *group, size_t *n)
{
	struct ordered_key *all = NULL;
	struct cp_session_key *keys;
	size_t total = 0;

	*n = 0;
	if (a->nshards == 0)
		return cp_session_keys(a->cp, group, n);
	for (unsigned i = 0; i < ncores(a); i++) {
		struct assist *o = core_owner(a, i);
		struct cp_session_key *part;
		struct ordered_key *grown;
		size_t m = 0;

		assist_lock(o);
		part = cp_session_keys(o->cp, group, &m);
		if (m == 0) {
			assist_unlock(o);
			continue;
		}
		grown = realloc(all, (total + m) * sizeof(*all));
		if (grown == NULL) {
			assist_unlock(o);
			free(part);
			free(all);
			return NULL;
		}
		all = grown;
		for (size_t j = 0; j < m; j++) {
			struct ordered_key *k = &all[total + j];

			memset(k, 0, sizeof(*k));
			k->key = part[j];
			cp_session_view_key(o->cp, &part[j], order_fields, k);
		}
		assist_unlock(o);
		total += m;
		free(part);
	}
	if (total == 0)
		return NULL;
	qsort(all, total, sizeof(*all), ordered_cmp);
	keys = malloc(total * sizeof(*keys));
	if (keys != NULL) {
		for (size_t i = 0; i < total; i++)
			keys[i] = all[i].key;
		*n = total;
	}
	free(all);
	return keys;
}

void assist_foreach_session(
	const struct assist *a, const struct pgm_nla *group, cp_session_cb cb, void *ctx)
{
	struct cp_session_key *keys;
	size_t n = 0;

	if (a->nshards == 0) {
		cp_foreach_session(a->cp, group, cb, ctx);
		return;
	}
	keys = assist_session_keys(a, group, &n);
	for (size_t i = 0; i < n; i++)
		assist_session_view_key(a, &keys[i], cb, ctx);
	free(keys);
}

/* A session's repair states: the TSI and address family asked. */
struct repairs_key {
	const struct pgm_tsi *tsi;
	uint16_t afi;
};

static bool repairs_in(struct assist *o, struct translated *t, const void *arg)
{
	const struct repairs_key *k = arg;

	cp_foreach_repair(o->cp, k->tsi, k->afi, repair_translated, t);
	return false; /* the session is in one core: the others have none of its states */
}

void assist_foreach_repair(
	const struct assist *a, const struct pgm_tsi *tsi, uint16_t afi, cp_repair_cb cb, void *ctx)
{
	struct translated t = {.a = a, .repair_cb = cb, .ctx = ctx};
	struct repairs_key k = {.tsi = tsi, .afi = afi};

	if (a->nshards == 0) {
		cp_foreach_repair(a->cp, tsi, afi, cb, ctx);
		return;
	}
	/* inside a session's view: the core that holds it, whose lock is held */
	if (a->viewing != NULL) {
		t.core = a->viewing->cp;
		repairs_in(a->viewing, &t, &k);
		return;
	}
	each_core_translated(a, t, repairs_in, &k);
}

/* ---- clear ---- */

void assist_clear_counters(struct assist *a, int ifindex)
{
	for (unsigned i = 0; i < ncores(a); i++) {
		struct assist *o = core_owner(a, i);

		assist_lock(o);
		cp_clear_counters(o->cp, ifindex);
		assist_unlock(o);
	}
}

/* clear(core, what) in every core under its lock: the entries cleared in all. */
static size_t clear_all(struct assist *a,
	size_t (*clear)(struct cp *cp, const struct pgm_nla *what), const struct pgm_nla *what)
{
	size_t n = 0;

	for (unsigned i = 0; i < ncores(a); i++) {
		struct assist *o = core_owner(a, i);

		assist_lock(o);
		n += clear(o->cp, what);
		assist_unlock(o);
	}
	return n;
}

size_t assist_clear_repair_states(struct assist *a, const struct pgm_nla *group)
{
	return clear_all(a, cp_clear_repair_states, group);
}

size_t assist_clear_dlrs(struct assist *a, const struct pgm_nla *dlr)
{
	return clear_all(a, cp_clear_dlrs, dlr);
}

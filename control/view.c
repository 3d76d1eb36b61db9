/*
 * State views for show commands, statistics and clear commands. Views come in a stable order
 * (interfaces by ifindex, sessions by group, source and TSI, repair states by SQN from the
 * trailing edge), whatever order the hash tables hold them in.
 */
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"

static void fill_if_view(const struct cp *cp, const struct cp_iface *ifp, struct cp_if_view *v)
{
	memset(v, 0, sizeof(*v));
	v->ifindex = ifp->ifindex;
	memcpy(v->name, ifp->name, sizeof(v->name));
	v->assist = ifp->assist;
	v->addr = ifp->addr;
	v->addr6 = ifp->addr6;
	v->ll6 = ifp->ll6;
	v->cfg = *cp_iface_config(cp, ifp);
	v->counters = &ifp->counters;
	if (ifp->slot >= 0)
		v->repair_states = cp->owner_states[ifp->slot];
}

static int if_cmp(const void *a, const void *b)
{
	const struct cp_iface *x = *(const struct cp_iface *const *)a;
	const struct cp_iface *y = *(const struct cp_iface *const *)b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

void cp_foreach_if(const struct cp *cp, cp_if_cb cb, void *ctx)
{
	struct cp_iface *sorted[CP_MAX_KNOWN_INTERFACES];
	struct cp_if_view v;

	memcpy(sorted, cp->ifs, cp->nifs * sizeof(*sorted));
	qsort(sorted, cp->nifs, sizeof(*sorted), if_cmp);
	for (unsigned i = 0; i < cp->nifs; i++) {
		fill_if_view(cp, sorted[i], &v);
		cb(ctx, &v);
	}
}

bool cp_get_if(const struct cp *cp, int ifindex, struct cp_if_view *v)
{
	const struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp == NULL)
		return false;
	fill_if_view(cp, ifp, v);
	return true;
}

bool cp_if_assisted(const struct cp *cp, int ifindex)
{
	const struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	return ifp != NULL && ifp->assist;
}

bool cp_if_addr(const struct cp *cp, int ifindex, struct pgm_nla *addr)
{
	const struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp == NULL)
		return false;
	*addr = ifp->addr;
	return true;
}

static int nla_cmp(const struct pgm_nla *a, const struct pgm_nla *b)
{
	if (a->afi != b->afi)
		return a->afi < b->afi ? -1 : 1;
	return memcmp(a->addr, b->addr, sizeof(a->addr));
}

static int session_cmp(const void *a, const void *b, void *arg)
{
	const struct cp *cp = arg;
	const struct cp_session *x = cp_session_at(cp, *(const uint32_t *)a);
	const struct cp_session *y = cp_session_at(cp, *(const uint32_t *)b);
	int c;

	if ((c = nla_cmp(&x->group, &y->group)) != 0)
		return c;
	if ((c = nla_cmp(&x->source, &y->source)) != 0)
		return c;
	if ((c = memcmp(x->tsi.gsi, y->tsi.gsi, PGM_GSI_LEN)) != 0)
		return c;
	return (x->tsi.sport > y->tsi.sport) - (x->tsi.sport < y->tsi.sport);
}

/* Session ids of `group` (NULL = all), sorted; *n gets the count. NULL when there are none. */
static uint32_t *sorted_sessions(const struct cp *cp, const struct pgm_nla *group, size_t *n)
{
	uint32_t *ids;

	*n = 0;
	if (cp->session_tab.count == 0)
		return NULL;
	ids = malloc((size_t)cp->session_tab.count * sizeof(*ids));
	if (ids == NULL)
		return NULL;
	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t id = cp_htab_head(&cp->session_tab, b); id != CP_NIL;) {
			const struct cp_session *s = cp_session_at(cp, id);

			if (group == NULL || pgm_nla_equal(&s->group, group))
				ids[(*n)++] = id;
			id = s->hash_next;
		}
	}
	qsort_r(ids, *n, sizeof(*ids), session_cmp, (void *)cp);
	return ids;
}

static void session_view(const struct cp *cp, const struct cp_session *s, cp_session_cb cb,
	void *ctx)
{
	struct cp_counters counters;
	struct cp_session_view v;

	memset(&v, 0, sizeof(v));
	v.tsi = s->tsi;
	v.afi = cp_session_afi(s);
	v.data_dport = s->data_dport;
	v.source = s->source;
	v.group = s->group;
	v.upstream = s->upstream;
	v.upstream_ifindex = s->upstream_ifindex;
	v.spm_sqn = s->spm_sqn;
	v.trail = s->trail;
	v.lead = s->lead;
	v.last_ttl = s->last_ttl;
	v.udp = (s->flags & CP_SESSION_UDP) != 0;
	v.created = s->created;
	v.last_spm = s->last_spm;
	v.expires = cp->cfg.session_lifetime_s != 0
			    ? s->last_spm + CP_SEC(cp->cfg.session_lifetime_s)
			    : 0;
	v.repair_states = s->repair_count;
	v.parity_tgs = s->parity_tgs;
	for (uint32_t id = s->repair_head; id != CP_NIL;
		id = cp_repair_at(cp, id)->sess_next)
		v.parity_states += (cp_repair_at(cp, id)->flags & CP_REPAIR_PARITY) != 0;
	v.naks_suspended = (s->flags & CP_SESSION_SUSPENDED) != 0;
	if (s->ext != NULL) {
		v.curr_tgsize = s->ext->curr_tgsize;
		v.dlr_upstream = s->ext->up.addr;
		v.dlr_upstream_parity = s->ext->up.parity;
		v.dlr_upstream_learned = s->ext->up.learned;
		v.dlr_offtree = s->ext->off.addr;
		v.dlr_offtree_ifindex = s->ext->off.ifindex;
		v.dlr_offtree_parity = s->ext->off.parity;
		v.dlr_offtree_learned = s->ext->off.learned;
		v.dlr_poll_sent = s->ext->dlr_poll_sent;
		v.unreach_mask = s->ext->unreach_mask;
		v.transit_mask = s->ext->transit_mask;
		v.polr_pending = cp_tnode_scheduled(&s->ext->polr_timer);
		v.polr_due = v.polr_pending ? s->ext->polr_timer.deadline : 0;
	}
	cp_tsi_counters_expand(&s->counters, &counters);
	v.counters = &counters;
	cb(ctx, &v);
}

void cp_foreach_session(
	const struct cp *cp, const struct pgm_nla *group, cp_session_cb cb, void *ctx)
{
	size_t n;
	uint32_t *ids = sorted_sessions(cp, group, &n);

	for (size_t i = 0; i < n; i++)
		session_view(cp, cp_session_at(cp, ids[i]), cb, ctx);
	free(ids);
}

struct cp_session_key *cp_session_keys(
	const struct cp *cp, const struct pgm_nla *group, size_t *n)
{
	uint32_t *ids = sorted_sessions(cp, group, n);
	struct cp_session_key *keys = *n > 0 ? malloc(*n * sizeof(*keys)) : NULL;

	if (keys == NULL)
		*n = 0;
	for (size_t i = 0; keys != NULL && i < *n; i++) {
		keys[i].tsi = cp_session_at(cp, ids[i])->tsi;
		keys[i].afi = cp_session_afi(cp_session_at(cp, ids[i]));
	}
	free(ids);
	return keys;
}

bool cp_session_view_key(
	const struct cp *cp, const struct cp_session_key *key, cp_session_cb cb, void *ctx)
{
	uint32_t sid = cp_session_find(cp, &key->tsi, key->afi);

	if (sid == CP_NIL)
		return false;
	session_view(cp, cp_session_at(cp, sid), cb, ctx);
	return true;
}

static int repair_cmp(const void *a, const void *b)
{
	const struct cp_repeat *x = a, *y = b;

	return (x->order > y->order) - (x->order < y->order);
}

void cp_foreach_repair(const struct cp *cp, const struct pgm_tsi *tsi, uint16_t afi,
	cp_repair_cb cb, void *ctx)
{
	uint32_t sid = cp_session_find(cp, tsi, afi);
	const struct cp_session *s;
	struct cp_repeat *list;
	struct cp_repair_view v;
	size_t n = 0;

	if (sid == CP_NIL)
		return;
	s = cp_session_at(cp, sid);
	if (s->repair_count == 0)
		return;
	list = malloc(s->repair_count * sizeof(*list));
	if (list == NULL)
		return;
	for (uint32_t id = s->repair_head; id != CP_NIL; id = cp_repair_at(cp, id)->sess_next) {
		const struct cp_repair *r = cp_repair_at(cp, id);

		list[n++] = (struct cp_repeat){
			.session = id, .sqn = r->sqn, .order = r->sqn - s->trail};
	}
	qsort(list, n, sizeof(*list), repair_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct cp_repair *r = cp_repair_at(cp, list[i].session);

		memset(&v, 0, sizeof(v));
		v.sqn = r->sqn;
		v.phase = (enum cp_repair_phase)r->phase;
		v.anticipated = (r->flags & CP_REPAIR_ANTICIPATED) != 0;
		v.nnak_created = (r->flags & CP_REPAIR_NNAK) != 0;
		v.parity = (r->flags & CP_REPAIR_PARITY) != 0;
		v.pkt_cnt = v.parity ? cp_parity_at(cp, cp_repair_parity_id(r))->largest : 0;
		v.dlr = (r->flags & CP_REPAIR_DLR_UP) ? 1 : (r->flags & CP_REPAIR_DLR_OFF) ? 2 : 0;
		v.eliminating = cp_repair_eliminating(r, cp->latest);
		v.if_mask = r->if_mask;
		v.repaired_mask = r->repaired_mask;
		v.rpt_next = r->rpt_next;
		v.rpt_end = r->rpt_end;
		v.rdata_end = r->rdata_end;
		v.elim_end = r->elim_end;
		v.created = r->created;
		cb(ctx, &v);
	}
	free(list);
}

void cp_get_stats(const struct cp *cp, struct cp_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->sessions = cp->sessions.live;
	st->repair_states = cp->repairs.live;
	st->session_size = sizeof(struct cp_session);
	st->repair_size = sizeof(struct cp_repair);
	st->session_bytes = cp_pool_bytes(&cp->sessions) + cp_htab_bytes(&cp->session_tab);
	st->repair_bytes = cp_pool_bytes(&cp->repairs) + cp_htab_bytes(&cp->repair_tab) +
			   cp->repeat_cap * sizeof(*cp->repeats) + cp_pool_bytes(&cp->parities);
	st->bytes = sizeof(*cp) + st->session_bytes + st->repair_bytes +
		    (size_t)cp->nifs * sizeof(struct cp_iface);
	memcpy(st->global_ev, cp->global_ev, sizeof(st->global_ev));
	st->unexpected_events = cp->fsm_unexpected;
	st->limits = cp->lim;
	for (unsigned i = 0; i < cp->nifs; i++) {
		const struct cp_iface *ifp = cp->ifs[i];

		if (ifp->slot >= 0 && cp->owner_states[ifp->slot] > st->if_states_most) {
			st->if_states_most = cp->owner_states[ifp->slot];
			st->if_states_most_ifindex = ifp->ifindex;
		}
	}
	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t id = cp_htab_head(&cp->session_tab, b); id != CP_NIL;) {
			const struct cp_session *s = cp_session_at(cp, id);

			if (s->repair_count > st->session_states_most)
				st->session_states_most = s->repair_count;
			id = s->hash_next;
		}
	}
}

static void clear_session_counters(struct cp *cp, uint32_t id, void *arg)
{
	(void)arg;
	memset(&cp_session_at(cp, id)->counters, 0, sizeof(struct cp_tsi_counters));
}

void cp_clear_counters(struct cp *cp, int ifindex)
{
	if (ifindex != 0) {
		struct cp_iface *ifp = cp_iface_find(cp, ifindex);

		if (ifp != NULL)
			memset(&ifp->counters, 0, sizeof(ifp->counters));
		return;
	}
	for (unsigned i = 0; i < cp->nifs; i++)
		memset(&cp->ifs[i]->counters, 0, sizeof(cp->ifs[i]->counters));
	memset(cp->global_ev, 0, sizeof(cp->global_ev));
	cp_sessions_walk(cp, clear_session_counters, NULL);
}

size_t cp_clear_repair_states(struct cp *cp, const struct pgm_nla *group)
{
	size_t n = 0, count;
	uint32_t *ids = sorted_sessions(cp, group, &count);

	for (size_t i = 0; i < count; i++)
		n += cp_session_clear_repairs(cp, ids[i], CP_C_REPAIR_CLEARED);
	free(ids);
	if (n != 0)
		cp_logf(cp, CP_LOG_EVENT, "%zu repair states cleared", n);
	return n;
}

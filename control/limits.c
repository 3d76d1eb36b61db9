/*
 * Bounded memory, shared fairly.
 *
 * The state tables stay within a memory budget: max-sessions and max-rexmit-states, unless
 * configured, are what the budget allows at the worst-case bytes of an entry. Of the repair
 * states, one arrival interface (a LAN) and one session may hold a share each. A state is
 * charged to the interface whose packet created it (an NCF's anticipation to the upstream
 * interface, a NAK's to the receivers' LAN) until it is deleted.
 *
 * When the limit is reached, a NAK that needs state evicts one: first a state nobody NAKed for
 * (anticipated by an NCF, or NNAK-created), oldest first; else the oldest state of the
 * interface holding the most, when that is not the NAK's own. A NAK whose session holds its
 * share evicts the session's oldest state nobody NAKed for. NCFs and NNAKs never evict.
 * Whatever is refused, a NAK is still confirmed and forwarded, without state (nak.c): at any
 * limit router assist degrades to plain PGM, never below it.
 *
 * New sessions per arrival interface are paced by a token bucket (GCRA: one time per bucket):
 * session-rate per second, bursts of a second's worth.
 */
#include <string.h>

#include "control/cp_internal.h"

/* Of the budget, kept for the rest of the daemon (its buffers, the kernel tables it mirrors,
   the CLI): its resident size idles at a few MB. */
#define CP_BUDGET_RESERVE (32u << 20)
#define CP_MALLOC_OVERHEAD 16 /* a session's extension is malloc'd on its own */

void cp_limits(const struct cp_config *cfg, struct cp_limits *out)
{
	size_t table, reserve;

	memset(out, 0, sizeof(*out));
	/* hash buckets: up to two per entry after a doubling, one more in the old array while
	   it migrates; walks and shows collect one id per session */
	out->session_cost = sizeof(struct cp_session) + sizeof(struct cp_session_ext) +
			    CP_MALLOC_OVERHEAD + 4 * sizeof(uint32_t);
	/* parity state's counts, and a NAK repeat queued per state at worst */
	out->repair_cost = sizeof(struct cp_repair) + sizeof(struct cp_parity) +
			   3 * sizeof(uint32_t) + sizeof(struct cp_repeat);
	out->budget = (size_t)cfg->memory_budget_mb << 20;
	reserve = out->budget / 2 < CP_BUDGET_RESERVE ? out->budget / 2 : CP_BUDGET_RESERVE;
	out->reserve = reserve;
	table = out->budget - reserve;
	out->max_sessions = cfg->max_sessions;
	if (out->max_sessions == 0 && out->budget != 0) {
		size_t n = table / 4 / out->session_cost; /* a quarter for sessions */

		out->max_sessions = n > CP_POOL_MAX_ID ? CP_POOL_MAX_ID : (uint32_t)(n ? n : 1);
		out->sessions_derived = true;
	}
	out->max_repair_states = cfg->max_repair_states;
	if (out->max_repair_states == 0 && out->budget != 0) {
		size_t n = table / 4 * 3 / out->repair_cost;

		out->max_repair_states =
			n > CP_POOL_MAX_ID ? CP_POOL_MAX_ID : (uint32_t)(n ? n : 1);
		out->repair_states_derived = true;
	}
	if (out->max_repair_states != 0) {
		uint64_t max = out->max_repair_states;

		if (cfg->repair_if_share != 0 && cfg->repair_if_share < 100)
			out->if_quota = (uint32_t)(max * cfg->repair_if_share / 100);
		if (cfg->repair_session_share != 0 && cfg->repair_session_share < 100)
			out->session_quota = (uint32_t)(max * cfg->repair_session_share / 100);
		/* a share is at least one state: 0 would mean no quota at all */
		if (cfg->repair_if_share != 0 && cfg->repair_if_share < 100 && out->if_quota == 0)
			out->if_quota = 1;
		if (cfg->repair_session_share != 0 && cfg->repair_session_share < 100 &&
			out->session_quota == 0)
			out->session_quota = 1;
	}
}

void cp_limits_init(struct cp *cp)
{
	cp->evictable.head = cp->evictable.tail = CP_NIL;
	for (unsigned o = 0; o <= CP_OWNER_NONE; o++)
		cp->live[o].head = cp->live[o].tail = CP_NIL;
	cp_limits(&cp->cfg, &cp->lim);
}

bool cp_session_rate_ok(struct cp *cp, struct cp_iface *ifp, cp_time_t now)
{
	uint32_t rate = cp_iface_config(cp, ifp)->session_rate;
	cp_time_t *tat = ifp != NULL ? &ifp->session_tat : &cp->session_tat;
	cp_time_t period;

	if (rate == 0 || (period = CP_SEC(1) / rate) == 0)
		return true;
	/* a second's worth may come at once: refused while the bucket is a second ahead */
	if (*tat > now + CP_SEC(1) - period) {
		cp_count(cp, ifp, NULL, CP_C_SESSION_RATE_LIMITED, 1);
		return false;
	}
	*tat = (*tat > now ? *tat : now) + period;
	return true;
}

/* ---- the eviction lists: doubly linked through the entries, oldest at the head ---- */

static void list_append(struct cp *cp, struct cp_evict_list *l, uint32_t id)
{
	struct cp_repair *r = cp_repair_at(cp, id);

	r->evict_next = CP_NIL;
	r->evict_prev = l->tail;
	if (l->tail != CP_NIL)
		cp_repair_at(cp, l->tail)->evict_next = id;
	else
		l->head = id;
	l->tail = id;
}

static void list_remove(struct cp *cp, struct cp_evict_list *l, uint32_t id)
{
	struct cp_repair *r = cp_repair_at(cp, id);

	if (r->evict_prev != CP_NIL)
		cp_repair_at(cp, r->evict_prev)->evict_next = r->evict_next;
	else
		l->head = r->evict_next;
	if (r->evict_next != CP_NIL)
		cp_repair_at(cp, r->evict_next)->evict_prev = r->evict_prev;
	else
		l->tail = r->evict_prev;
}

static struct cp_evict_list *list_of(struct cp *cp, const struct cp_repair *r)
{
	return r->evictable ? &cp->evictable : &cp->live[r->owner];
}

void cp_repair_listed(struct cp *cp, uint32_t id, bool nak)
{
	struct cp_repair *r = cp_repair_at(cp, id);

	r->evictable = !nak;
	list_append(cp, list_of(cp, r), id);
	cp->owner_states[r->owner]++;
}

void cp_repair_unlisted(struct cp *cp, uint32_t id)
{
	struct cp_repair *r = cp_repair_at(cp, id);

	list_remove(cp, list_of(cp, r), id);
	cp->owner_states[r->owner]--;
}

void cp_limits_drop_slot(struct cp *cp, int slot)
{
	struct cp_evict_list *from = &cp->live[slot], *to = &cp->live[CP_OWNER_NONE];

	if (from->head != CP_NIL) {
		if (to->tail != CP_NIL)
			cp_repair_at(cp, to->tail)->evict_next = from->head;
		else
			to->head = from->head;
		cp_repair_at(cp, from->head)->evict_prev = to->tail;
		to->tail = from->tail;
		from->head = from->tail = CP_NIL;
	}
	cp->owner_states[CP_OWNER_NONE] += cp->owner_states[slot];
	cp->owner_states[slot] = 0;
}

/*
 * Make room for a NAK's state in `session`, charged to `owner`. States nobody NAKed go first,
 * oldest first; one NAKed since it was listed joins its owner's live states on the way. Then
 * the owner holding the most gives up its oldest state, unless that is the NAK's own owner, and
 * never one of the NAK's own session: the NAK's other SQNs may have just made or used it.
 */
static bool evict(struct cp *cp, uint32_t session, unsigned owner)
{
	unsigned most = owner;
	uint32_t id;

	while ((id = cp->evictable.head) != CP_NIL) {
		struct cp_repair *r = cp_repair_at(cp, id);

		if (r->if_mask == 0) {
			cp_repair_delete(cp, id, CP_C_REPAIR_EVICTED);
			return true;
		}
		list_remove(cp, &cp->evictable, id);
		r->evictable = false;
		list_append(cp, &cp->live[r->owner], id);
	}
	for (unsigned o = 0; o <= CP_OWNER_NONE; o++) {
		if (cp->owner_states[o] > cp->owner_states[most])
			most = o;
	}
	if (most == owner)
		return false;
	id = cp->live[most].head;
	for (unsigned n = 0; id != CP_NIL && n < 16; n++) {
		const struct cp_repair *r = cp_repair_at(cp, id);

		if (r->session != session) {
			cp_repair_delete(cp, id, CP_C_REPAIR_EVICTED_LIVE);
			return true;
		}
		id = r->evict_next;
	}
	return false;
}

/* A session at its share: its oldest state nobody NAKed makes room for a NAK (an NCF flood
 * for the session must not cost its receivers their NAK elimination). */
static bool evict_in_session(struct cp *cp, const struct cp_session *s)
{
	uint32_t id = s->repair_tail;

	for (unsigned n = 0; id != CP_NIL && n < 16; n++) {
		const struct cp_repair *r = cp_repair_at(cp, id);

		if (r->if_mask == 0) {
			cp_repair_delete(cp, id, CP_C_REPAIR_EVICTED);
			return true;
		}
		id = r->sess_prev;
	}
	return false;
}

bool cp_repair_room(
	struct cp *cp, uint32_t session, struct cp_iface *in_if, unsigned owner, bool nak)
{
	struct cp_session *s = cp_session_at(cp, session);
	enum cp_counter why;

	if (cp->lim.session_quota != 0 && s->repair_count >= cp->lim.session_quota &&
		!(nak && evict_in_session(cp, s)))
		why = CP_C_REPAIR_SESSION_QUOTA;
	else if (cp->lim.if_quota != 0 && cp->owner_states[owner] >= cp->lim.if_quota)
		why = CP_C_REPAIR_IF_QUOTA;
	else if (cp->lim.max_repair_states == 0 || cp->repairs.live < cp->lim.max_repair_states)
		return true;
	else if (nak && evict(cp, session, owner))
		return true;
	else
		why = CP_C_REPAIR_LIMIT;
	cp_count(cp, in_if, s, why, 1);
	return false;
}

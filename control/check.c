/*
 * Consistency of the core's tables, for the tests and the fuzzers: every link is walked with a
 * bound, so a corrupted table is reported, not looped on. Costs a pass over everything held.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"

struct check {
	const struct cp *cp;
	char *why;
	size_t len;
	bool failed;
	uint8_t *session_live, *repair_live, *parity_used; /* one byte per id below `fresh` */
	uint64_t slots;					    /* slots held by assisted interfaces */
};

static bool fail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(struct check *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->failed && c->len > 0) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->len, fmt, ap);
		va_end(ap);
	}
	c->failed = true;
	return false;
}

static uint32_t *pool_link(const struct cp_pool *pool, uint32_t id)
{
	return (uint32_t *)((unsigned char *)cp_pool_at(pool, id) + pool->link_offset);
}

/* The free list: ids handed out before, each once, and with the live ones every id. `mark`
 * gets 1 for each free id. */
static bool check_pool(struct check *c, const char *name, const struct cp_pool *pool, uint8_t *mark)
{
	uint32_t n = 0;

	if (pool->live > pool->fresh)
		return fail(c, "%s pool: %u live of %u ids", name, pool->live, pool->fresh);
	if (pool->nchunks != (pool->fresh + (1u << pool->chunk_shift) - 1) >> pool->chunk_shift)
		return fail(c, "%s pool: %u chunks for %u ids", name, pool->nchunks, pool->fresh);
	for (uint32_t id = pool->free_head; id != CP_NIL; id = *pool_link(pool, id)) {
		if (id >= pool->fresh)
			return fail(c, "%s pool: free id %u never handed out", name, id);
		if (mark[id] != 0)
			return fail(c, "%s pool: id %u free twice (the free list loops)", name, id);
		mark[id] = 1;
		n++;
	}
	if (n + pool->live != pool->fresh)
		return fail(c, "%s pool: %u free + %u live != %u ids", name, n, pool->live,
			pool->fresh);
	return true;
}

static bool check_ifaces(struct check *c)
{
	const struct cp *cp = c->cp;

	for (unsigned i = 0; i < cp->nifs; i++) {
		const struct cp_iface *ifp = cp->ifs[i];

		if (cp_iface_find(cp, ifp->ifindex) != ifp)
			return fail(c, "interface %d not found by its ifindex", ifp->ifindex);
		if (ifp->slot >= 0 && (!ifp->assist || cp->slot_if[ifp->slot] != ifp))
			return fail(c, "interface %d holds slot %d wrongly", ifp->ifindex, ifp->slot);
		if (ifp->assist && ifp->slot < 0)
			return fail(c, "interface %d assisted without a slot", ifp->ifindex);
	}
	for (unsigned slot = 0; slot < CP_MAX_INTERFACES; slot++) {
		const struct cp_iface *ifp = cp->slot_if[slot];

		if (ifp == NULL)
			continue;
		if (ifp->slot != (int)slot || cp_iface_find(cp, ifp->ifindex) != ifp)
			return fail(c, "slot %u held by a dead or other interface", slot);
		c->slots |= (uint64_t)1 << slot;
	}
	return true;
}

static bool check_masks(struct check *c, const char *what, uint32_t sqn, uint64_t mask)
{
	if ((mask & ~c->slots) != 0)
		return fail(c, "%s (sqn %u) names slots %#llx no interface holds", what, sqn,
			(unsigned long long)(mask & ~c->slots));
	return true;
}

static bool check_repair(struct check *c, uint32_t sid, uint32_t id, size_t *parities)
{
	const struct cp *cp = c->cp;
	struct cp_repair *r = cp_repair_at(cp, id);

	if (r->session != sid)
		return fail(c, "repair state %u of session %u says session %u", id, sid, r->session);
	if (r->phase > CP_PHASE_FORWARDING)
		return fail(c, "repair state %u in phase %u", id, r->phase);
	if ((r->flags & CP_REPAIR_HELD) != 0 && r->phase != CP_PHASE_FORWARDING)
		return fail(c, "repair state sqn %u held for the crossing window in phase %u",
			r->sqn, r->phase);
	if (!check_masks(c, "repair if_mask", r->sqn, r->if_mask) ||
		!check_masks(c, "repair repaired_mask", r->sqn, r->repaired_mask))
		return false;
	if ((r->repaired_mask & ~r->if_mask) != 0)
		return fail(c, "repair state sqn %u repaired an interface it does not list", r->sqn);
	if (!cp_tnode_scheduled(&r->timer))
		return fail(c, "repair state sqn %u without a timer: it never ends", r->sqn);
	if ((r->flags & CP_REPAIR_PARITY) != 0) {
		uint32_t pid = r->kind_.parity_id;
		const struct cp_parity *p;

		if (pid >= cp->parities.fresh || c->parity_used[pid] != 0)
			return fail(c, "parity state sqn %u: counts id %u free, unknown or shared",
				r->sqn, pid);
		c->parity_used[pid] = 2;
		p = cp_parity_at(cp, pid);
		for (unsigned slot = 0; slot < CP_MAX_INTERFACES; slot++)
			if (p->count[slot] != 0 && (c->slots & (uint64_t)1 << slot) == 0)
				return fail(c, "parity state sqn %u: count for free slot %u", r->sqn,
					slot);
		(*parities)++;
	} else if (!check_masks(c, "repair ncf mask", r->sqn, r->kind_.ncf.mask)) {
		return false;
	}
	return true;
}

static bool check_sessions(struct check *c, size_t *parities)
{
	const struct cp *cp = c->cp;
	uint32_t sessions = 0, repairs = 0;

	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t sid = cp_htab_head(&cp->session_tab, b); sid != CP_NIL;) {
			struct cp_session *s;
			uint32_t n = 0, prev = CP_NIL;

			if (sid >= cp->sessions.fresh || c->session_live[sid] != 0)
				return fail(c, "session id %u in the table is free, unknown or twice",
					sid);
			c->session_live[sid] = 2;
			if (++sessions > cp->sessions.live)
				return fail(c, "session table holds more than %u live sessions",
					cp->sessions.live);
			s = cp_session_at(cp, sid);
			if (!check_masks(c, "session spm_copy_mask", s->spm_sqn, s->spm_copy_mask))
				return false;
			if (s->ext != NULL &&
				!check_masks(c, "session unreach_mask", s->spm_sqn, s->ext->unreach_mask))
				return false;
			for (uint32_t id = s->repair_head; id != CP_NIL;) {
				struct cp_repair *r;

				if (id >= cp->repairs.fresh || c->repair_live[id] != 0)
					return fail(c, "repair id %u of session %u free, unknown or "
						       "twice", id, sid);
				c->repair_live[id] = 2;
				r = cp_repair_at(cp, id);
				if (r->sess_prev != prev)
					return fail(c, "repair id %u: back link %u, not %u", id,
						r->sess_prev, prev);
				if (!check_repair(c, sid, id, parities))
					return false;
				if (++n > s->repair_count)
					return fail(c, "session %u: more than its %u repair states",
						sid, s->repair_count);
				prev = id;
				id = r->sess_next;
			}
			if (n != s->repair_count)
				return fail(c, "session %u: %u repair states listed, %u counted", sid,
					n, s->repair_count);
			repairs += n;
			sid = s->hash_next;
		}
	}
	if (sessions != cp->sessions.live || sessions != cp->session_tab.count)
		return fail(c, "%u sessions in the table, pool %u live, table counts %u", sessions,
			cp->sessions.live, cp->session_tab.count);
	if (repairs != cp->repairs.live || repairs != cp->repair_tab.count)
		return fail(c, "%u repair states listed, pool %u live, table counts %u", repairs,
			cp->repairs.live, cp->repair_tab.count);
	return true;
}

/* Every repair state in the table is one listed by its session. */
static bool check_repair_table(struct check *c)
{
	const struct cp *cp = c->cp;
	uint32_t n = 0;

	for (uint32_t b = 0; b < cp_htab_heads(&cp->repair_tab); b++) {
		for (uint32_t id = cp_htab_head(&cp->repair_tab, b); id != CP_NIL;) {
			if (id >= cp->repairs.fresh || c->repair_live[id] != 2)
				return fail(c, "repair id %u in the table but in no session", id);
			if (++n > cp->repairs.live)
				return fail(c, "repair table chains hold more than the live states");
			id = cp_repair_at(cp, id)->hash_next;
		}
	}
	return n == cp->repairs.live ||
	       fail(c, "repair table chains hold %u of %u states", n, cp->repairs.live);
}

/* One list of a wheel: its entries live (live[id] == 2), linked both ways, and in a slot list
 * (index < levels * slots) due in that slot: the digit of their deadline at that level is the
 * slot's, and the higher digits are the wheel's time's. */
static bool check_wheel_list(struct check *c, const char *name, const struct cp_wheel *w,
	unsigned index, const uint8_t *live, uint32_t fresh, size_t *n)
{
	uint32_t head = CP_WHEEL_SENTINEL_BASE + index, prev = head;
	unsigned level = index / CP_WHEEL_SLOTS, shift = level * CP_WHEEL_BITS;
	bool slot = index < CP_WHEEL_LEVELS * CP_WHEEL_SLOTS;

	for (uint32_t id = w->sentinel[index].next; id != head;) {
		struct cp_tnode *node;

		if (id >= fresh || live[id] != 2)
			return fail(c, "%s wheel: timer of dead entry %u", name, id);
		if (++*n > w->count)
			return fail(c, "%s wheel: lists hold more than its %zu timers", name,
				w->count);
		node = w->node(w->ctx, id);
		if (node->prev != prev)
			return fail(c, "%s wheel: entry %u back link broken", name, id);
		if (slot && (node->deadline <= w->now ||
				    ((node->deadline >> shift) & (CP_WHEEL_SLOTS - 1)) !=
					    index % CP_WHEEL_SLOTS ||
				    (shift + CP_WHEEL_BITS < 64 &&
					    (node->deadline ^ w->now) >> (shift + CP_WHEEL_BITS) != 0)))
			return fail(c, "%s wheel: entry %u due at %llu in level %u slot %u at %llu",
				name, id, (unsigned long long)node->deadline, level,
				index % CP_WHEEL_SLOTS, (unsigned long long)w->now);
		prev = id;
		id = node->next;
	}
	return true;
}

/* Every scheduled entry of a wheel is live and scheduled, in the lists of the slots the
 * occupancy bitmaps name (each of them holding one at least) or the expired and scratch lists:
 * those hold exactly `count` entries, so none hides in a slot the wheel would never look at.
 * A pass over what is scheduled, not over every slot. */
static bool check_wheel(struct check *c, const char *name, const struct cp_wheel *w,
	const uint8_t *live, uint32_t fresh, size_t scheduled)
{
	const unsigned other = CP_WHEEL_LEVELS * CP_WHEEL_SLOTS;
	size_t n = 0;

	for (unsigned level = 0; level < CP_WHEEL_LEVELS; level++) {
		for (uint64_t bits = w->pending[level]; bits != 0; bits &= bits - 1) {
			unsigned index = level * CP_WHEEL_SLOTS + (unsigned)__builtin_ctzll(bits);

			if (w->sentinel[index].next == CP_WHEEL_SENTINEL_BASE + index)
				return fail(c, "%s wheel: level %u slot %u marked but empty", name,
					level, index % CP_WHEEL_SLOTS);
			if (!check_wheel_list(c, name, w, index, live, fresh, &n))
				return false;
		}
	}
	if (!check_wheel_list(c, name, w, other, live, fresh, &n) ||
		!check_wheel_list(c, name, w, other + 1, live, fresh, &n))
		return false;
	if (n != w->count || n != scheduled)
		return fail(c, "%s wheel: %zu timers listed, %zu counted, %zu entries scheduled",
			name, n, w->count, scheduled);
	return true;
}

static bool check_timers(struct check *c)
{
	const struct cp *cp = c->cp;
	size_t sessions = 0, polrs = 0, repairs = 0;

	for (uint32_t id = 0; id < cp->sessions.fresh; id++) {
		const struct cp_session *s;

		if (c->session_live[id] != 2)
			continue;
		s = cp_session_at(cp, id);
		sessions += cp_tnode_scheduled(&s->timer);
		polrs += s->ext != NULL && cp_tnode_scheduled(&s->ext->polr_timer);
	}
	for (uint32_t id = 0; id < cp->repairs.fresh; id++)
		if (c->repair_live[id] == 2)
			repairs += cp_tnode_scheduled(&cp_repair_at(cp, id)->timer);
	return check_wheel(c, "session", &cp->session_wheel, c->session_live, cp->sessions.fresh,
		       sessions) &&
	       check_wheel(c, "repair", &cp->repair_wheel, c->repair_live, cp->repairs.fresh,
		       repairs) &&
	       check_wheel(c, "POLR", &cp->polr_wheel, c->session_live, cp->sessions.fresh, polrs);
}

bool cp_check(const struct cp *cp, char *why, size_t len)
{
	struct check c = {.cp = cp, .why = why, .len = len};
	size_t parities = 0;

	if (len > 0)
		why[0] = '\0';
	c.session_live = calloc((size_t)cp->sessions.fresh + 1, 1);
	c.repair_live = calloc((size_t)cp->repairs.fresh + 1, 1);
	c.parity_used = calloc((size_t)cp->parities.fresh + 1, 1);
	if (c.session_live == NULL || c.repair_live == NULL || c.parity_used == NULL) {
		fail(&c, "no memory to check");
		goto out;
	}
	if (check_ifaces(&c) && check_pool(&c, "session", &cp->sessions, c.session_live) &&
		check_pool(&c, "repair", &cp->repairs, c.repair_live) &&
		check_pool(&c, "parity", &cp->parities, c.parity_used) &&
		check_sessions(&c, &parities) && check_repair_table(&c) && check_timers(&c)) {
		if (parities != cp->parities.live)
			fail(&c, "%zu parity states, %u parity counts live", parities,
				cp->parities.live);
		else if (cp->repeat_count > cp->repeat_cap)
			fail(&c, "%zu NAK repeats queued in %zu", cp->repeat_count, cp->repeat_cap);
	}
out:
	free(c.session_live);
	free(c.repair_live);
	free(c.parity_used);
	return !c.failed;
}

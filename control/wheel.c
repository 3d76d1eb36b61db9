/*
 * Hierarchical timing wheel (Varghese and Lauck, scheme 7) over a 64-bit microsecond clock.
 *
 * Level l holds entries whose deadline first differs from the wheel's time in 6-bit digit l; the
 * slot is that digit of the deadline. So level 0 is exact, and every entry of level l is due
 * before any entry of level l + 1. Lists are circular and doubly linked through ids; every slot
 * has a sentinel node with an id of its own, so unlinking needs no slot lookup. A cascade goes
 * through a backlog list, a bounded part of it per advance (cp_internal.h).
 */
#include <string.h>

#include "control/cp_internal.h"

#define EXPIRED_LIST (CP_WHEEL_LEVELS * CP_WHEEL_SLOTS)
#define BACKLOG_LIST CP_WHEEL_BACKLOG

static inline uint32_t sentinel_id(unsigned index)
{
	return CP_WHEEL_SENTINEL_BASE + index;
}

static inline struct cp_tnode *node_of(struct cp_wheel *w, uint32_t id)
{
	if (id >= CP_WHEEL_SENTINEL_BASE)
		return &w->sentinel[id - CP_WHEEL_SENTINEL_BASE];
	return w->node(w->ctx, id);
}

static void list_init(struct cp_wheel *w, unsigned index)
{
	w->sentinel[index].next = w->sentinel[index].prev = sentinel_id(index);
}

static bool list_empty(const struct cp_wheel *w, unsigned index)
{
	return w->sentinel[index].next == sentinel_id(index);
}

static void list_append(struct cp_wheel *w, unsigned index, uint32_t id, struct cp_tnode *n)
{
	uint32_t head = sentinel_id(index);
	struct cp_tnode *h = &w->sentinel[index];

	n->next = head;
	n->prev = h->prev;
	node_of(w, h->prev)->next = id;
	h->prev = id;
}

/*
 * Unlinks n; if that empties a slot list, clears the slot's pending bit. An emptied slot or
 * expired list may have been the earliest: the cached next deadline is recomputed when asked.
 */
static void unlink_node(struct cp_wheel *w, struct cp_tnode *n)
{
	struct cp_tnode *prev = node_of(w, n->prev), *next = node_of(w, n->next);

	prev->next = n->next;
	next->prev = n->prev;
	if (n->prev == n->next && n->prev >= CP_WHEEL_SENTINEL_BASE) {
		unsigned index = n->prev - CP_WHEEL_SENTINEL_BASE;

		if (index < EXPIRED_LIST)
			w->pending[index / CP_WHEEL_SLOTS] &=
				~((uint64_t)1 << (index % CP_WHEEL_SLOTS));
		if (index <= BACKLOG_LIST)
			w->next_valid = false;
	}
	n->next = n->prev = CP_NIL;
}

/* The time slot `slot` of `level` starts at, relative to the wheel's time. */
static inline cp_time_t slot_start(const struct cp_wheel *w, unsigned level, unsigned slot)
{
	unsigned shift = level * CP_WHEEL_BITS, upper = shift + CP_WHEEL_BITS;
	cp_time_t base = upper < 64 ? (w->now >> upper) << upper : 0;

	return base | ((cp_time_t)slot << shift);
}

void cp_wheel_init(struct cp_wheel *w, struct cp_tnode *(*node)(void *ctx, uint32_t id), void *ctx)
{
	memset(w, 0, sizeof(*w));
	for (unsigned i = 0; i < CP_WHEEL_SENTINELS; i++)
		list_init(w, i);
	w->next = UINT64_MAX;
	w->next_valid = true;
	w->node = node;
	w->ctx = ctx;
	w->cascade_budget = CP_WHEEL_CASCADE_BUDGET;
}

/* Places a node that is not on any list, relative to the wheel's current time. */
static void place(struct cp_wheel *w, uint32_t id, struct cp_tnode *n)
{
	uint64_t diff;
	unsigned level, slot;

	if (n->deadline <= w->now) {
		list_append(w, EXPIRED_LIST, id, n);
		w->next = w->now;
		return;
	}
	diff = n->deadline ^ w->now;
	level = (unsigned)(63 - __builtin_clzll(diff)) / CP_WHEEL_BITS;
	slot = (unsigned)(n->deadline >> (level * CP_WHEEL_BITS)) & (CP_WHEEL_SLOTS - 1);
	list_append(w, level * CP_WHEEL_SLOTS + slot, id, n);
	w->pending[level] |= (uint64_t)1 << slot;
	if (w->next_valid && slot_start(w, level, slot) < w->next)
		w->next = slot_start(w, level, slot);
}

void cp_wheel_schedule(struct cp_wheel *w, uint32_t id, cp_time_t deadline)
{
	struct cp_tnode *n = node_of(w, id);

	if (cp_tnode_scheduled(n))
		unlink_node(w, n);
	else
		w->count++;
	n->deadline = deadline;
	place(w, id, n);
}

void cp_wheel_cancel(struct cp_wheel *w, uint32_t id)
{
	struct cp_tnode *n = node_of(w, id);

	if (!cp_tnode_scheduled(n))
		return;
	unlink_node(w, n);
	w->count--;
}

/* Moves the whole list `from` to the end of list `to`. */
static void list_splice(struct cp_wheel *w, unsigned from, unsigned to)
{
	struct cp_tnode *f = &w->sentinel[from], *t = &w->sentinel[to];
	uint32_t first = f->next, last = f->prev;

	if (first == sentinel_id(from))
		return;
	node_of(w, first)->prev = t->prev;
	node_of(w, t->prev)->next = first;
	node_of(w, last)->next = sentinel_id(to);
	t->prev = last;
	list_init(w, from);
}

/* Bits (from, to] of a 64-bit mask, for 0 <= from < to <= 63. */
static inline uint64_t slot_range(unsigned from, unsigned to)
{
	uint64_t upto = to == 63 ? ~(uint64_t)0 : ((uint64_t)1 << (to + 1)) - 1;

	return upto & ~(((uint64_t)1 << (from + 1)) - 1);
}

/* Moves the entries of every slot passed from the wheel's time to `now` onto the backlog. */
static void pass_slots(struct cp_wheel *w, cp_time_t now)
{
	cp_time_t old = w->now;

	for (unsigned level = 0; level < CP_WHEEL_LEVELS; level++) {
		unsigned shift = level * CP_WHEEL_BITS, upper = shift + CP_WHEEL_BITS;
		unsigned old_digit = (unsigned)(old >> shift) & (CP_WHEEL_SLOTS - 1);
		unsigned new_digit = (unsigned)(now >> shift) & (CP_WHEEL_SLOTS - 1);
		bool upper_changed = upper < 64 && (old >> upper) != (now >> upper);
		uint64_t passed;

		if (!upper_changed && old_digit == new_digit)
			break; /* nothing passed here, nor at any higher level */
		if (w->pending[level] == 0)
			continue;
		/*
		 * Entries of this level sit in slots after old_digit. When a higher digit changed,
		 * all of them are passed; otherwise those up to new_digit.
		 */
		passed = upper_changed ? ~(uint64_t)0 : slot_range(old_digit, new_digit);
		passed &= w->pending[level];
		w->pending[level] &= ~passed;
		while (passed != 0) {
			unsigned slot = (unsigned)__builtin_ctzll(passed);

			passed &= passed - 1;
			list_splice(w, level * CP_WHEEL_SLOTS + slot, BACKLOG_LIST);
		}
	}
	w->now = now;
	w->next_valid = false;
}

/*
 * The backlog is re-placed relative to the wheel's time whenever its turn comes: place() puts an
 * entry at the level its deadline's first differing digit from that time says, or on the
 * expired list once due, so entries left from an earlier call are right after the clock moved.
 * A later pass's entries go behind what is left (FIFO): an entry waits for the entries ahead of
 * it, cascade_budget per call, and so is late by at most the time those calls take.
 */
void cp_wheel_advance(struct cp_wheel *w, cp_time_t now)
{
	if (now > w->now)
		pass_slots(w, now);
	for (uint32_t left = w->cascade_budget; left != 0 && !list_empty(w, BACKLOG_LIST); left--) {
		uint32_t id = w->sentinel[BACKLOG_LIST].next;
		struct cp_tnode *n = node_of(w, id);

		unlink_node(w, n);
		place(w, id, n);
	}
}

uint32_t cp_wheel_pop_expired(struct cp_wheel *w)
{
	uint32_t id;

	if (list_empty(w, EXPIRED_LIST))
		return CP_NIL;
	id = w->sentinel[EXPIRED_LIST].next;
	unlink_node(w, node_of(w, id));
	w->count--;
	return id;
}

/* The answer without the cache. */
static cp_time_t wheel_next(const struct cp_wheel *w)
{
	if (!list_empty(w, EXPIRED_LIST) || !list_empty(w, BACKLOG_LIST))
		return w->now;
	for (unsigned level = 0; level < CP_WHEEL_LEVELS; level++) {
		/* the lowest occupied slot; all are after the current digit */
		if (w->pending[level] != 0)
			return slot_start(w, level, (unsigned)__builtin_ctzll(w->pending[level]));
	}
	return UINT64_MAX;
}

/*
 * Asked after every receive round, and most rounds only add entries: the cached answer is
 * lowered as they are placed (place()) and recomputed only when it may have gone up.
 */
cp_time_t cp_wheel_next(struct cp_wheel *w)
{
	if (!w->next_valid) {
		w->next = wheel_next(w);
		w->next_valid = true;
	}
	return w->next;
}

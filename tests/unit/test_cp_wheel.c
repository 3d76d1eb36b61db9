/*
 * The control plane's building blocks: the timing wheel (against a plain reference model), the
 * entry pools, the hash tables and SipHash-1-3.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"
#include "tests/unit/check_run.h"

/* ---- timing wheel ---- */

#define NODES 2000

static struct cp_tnode nodes[NODES];
static bool ref_scheduled[NODES];
static cp_time_t ref_deadline[NODES];

static struct cp_tnode *test_node(void *ctx, uint32_t id)
{
	(void)ctx;
	return &nodes[id < NODES ? id : 0];
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Delays from a microsecond to days, as timers here are. */
static cp_time_t random_delay(void)
{
	unsigned bits = (unsigned)(rng() % 38);

	return rng() & ((1ull << bits) - 1);
}

/* Plain tests in the loops: Check's assertions are costly when called millions of times. */
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* The next deadline as cp_wheel_next() defines it, from the wheel's bitmaps (nothing expired). */
static cp_time_t next_from_bitmaps(const struct cp_wheel *w)
{
	if (cp_wheel_cascading(w))
		return w->now;
	for (unsigned level = 0; level < CP_WHEEL_LEVELS; level++) {
		unsigned shift = level * CP_WHEEL_BITS, upper = shift + CP_WHEEL_BITS;

		if (w->pending[level] != 0)
			return (upper < 64 ? (w->now >> upper) << upper : 0) |
			       (cp_time_t)__builtin_ctzll(w->pending[level]) << shift;
	}
	return UINT64_MAX;
}

static bool on_backlog[NODES];

/* Marks the entries on the cascade's backlog in on_backlog; returns how many. */
static size_t mark_backlog(const struct cp_wheel *w)
{
	const uint32_t head = CP_WHEEL_SENTINEL_BASE + CP_WHEEL_BACKLOG;
	size_t n = 0;

	memset(on_backlog, 0, sizeof(on_backlog));
	for (uint32_t id = w->sentinel[CP_WHEEL_BACKLOG].next; id != head; id = nodes[id].next) {
		REQUIRE(id < NODES && !on_backlog[id], "backlog list broken at %u", id);
		on_backlog[id] = true;
		n++;
	}
	return n;
}

static void check_against_reference(struct cp_wheel *w)
{
	cp_time_t min = UINT64_MAX;
	size_t count = 0;
	uint32_t id;

	mark_backlog(w);

	/* everything due has been popped, in any order, and nothing else */
	while ((id = cp_wheel_pop_expired(w)) != CP_NIL) {
		REQUIRE(ref_scheduled[id], "node %u popped but not scheduled", id);
		REQUIRE(ref_deadline[id] <= w->now, "node %u popped early", id);
		REQUIRE(!cp_tnode_scheduled(&nodes[id]), "node %u still linked", id);
		ref_scheduled[id] = false;
	}
	for (unsigned i = 0; i < NODES; i++) {
		if (!ref_scheduled[i])
			continue;
		/* a due entry not popped yet waits on the cascade's backlog */
		REQUIRE(ref_deadline[i] > w->now || on_backlog[i],
			"node %u due at %llu, wheel at %llu", i,
			(unsigned long long)ref_deadline[i], (unsigned long long)w->now);
		REQUIRE(cp_tnode_scheduled(&nodes[i]), "node %u lost", i);
		count++;
		if (ref_deadline[i] < min)
			min = ref_deadline[i];
	}
	REQUIRE(w->count == count, "count %zu, expected %zu", w->count, count);
	/* the cached answer is the one computed afresh */
	REQUIRE(cp_wheel_next(w) == next_from_bitmaps(w), "next %llu, from the bitmaps %llu",
		(unsigned long long)cp_wheel_next(w), (unsigned long long)next_from_bitmaps(w));
	if (count == 0)
		REQUIRE(cp_wheel_next(w) == UINT64_MAX, "next deadline of an empty wheel");
	else
		REQUIRE((cp_wheel_next(w) <= min || cp_wheel_next(w) == w->now) &&
				cp_wheel_next(w) >= w->now,
			"next %llu, earliest %llu, now %llu", (unsigned long long)cp_wheel_next(w),
			(unsigned long long)min, (unsigned long long)w->now);
}

START_TEST(test_wheel_matches_reference)
{
	static struct cp_wheel w;
	cp_time_t now = 1000000;

	rng_state = 88172645463325252ull + (uint64_t)_i;
	for (unsigned i = 0; i < NODES; i++) {
		cp_tnode_init(&nodes[i]);
		ref_scheduled[i] = false;
	}
	cp_wheel_init(&w, test_node, NULL);
	cp_wheel_advance(&w, now);
	for (unsigned round = 0; round < 3000; round++) {
		for (unsigned k = 0; k < 20; k++) {
			uint32_t id = (uint32_t)(rng() % NODES);

			if (rng() % 8 == 0) {
				cp_wheel_cancel(&w, id);
				ref_scheduled[id] = false;
			} else {
				/* sometimes in the past or exactly now */
				cp_time_t d =
					rng() % 16 == 0 ? now - (rng() % 3) : now + random_delay();

				cp_wheel_schedule(&w, id, d);
				ref_scheduled[id] = true;
				ref_deadline[id] = d;
			}
		}
		check_against_reference(&w);
		now += random_delay() >> (rng() % 20);
		cp_wheel_advance(&w, now);
		check_against_reference(&w);
	}
	/* drain: following cp_wheel_next reaches every entry */
	for (unsigned guard = 0; w.count != 0; guard++) {
		REQUIRE(guard < 100000, "the wheel does not drain");
		cp_wheel_advance(&w, cp_wheel_next(&w) > w.now ? cp_wheel_next(&w) : w.now + 1);
		check_against_reference(&w);
	}
}
END_TEST

static size_t list_length(const struct cp_wheel *w, unsigned index)
{
	size_t n = 0;

	for (uint32_t id = w->sentinel[index].next; id != CP_WHEEL_SENTINEL_BASE + index;
		id = nodes[id].next)
		n++;
	return n;
}

/*
 * Advances the wheel; no advance re-places more entries than its budget. Counted from outside:
 * the entries of the slots the advance passes (those starting at or before `now`) and those on
 * the backlog before it, less those on the backlog after it.
 */
static void advance_bounded(struct cp_wheel *w, cp_time_t now)
{
	size_t moving = list_length(w, CP_WHEEL_BACKLOG), placed;

	for (unsigned level = 0; level < CP_WHEEL_LEVELS && now > w->now; level++) {
		unsigned shift = level * CP_WHEEL_BITS, upper = shift + CP_WHEEL_BITS;
		cp_time_t base = upper < 64 ? (w->now >> upper) << upper : 0;

		for (unsigned slot = 0; slot < CP_WHEEL_SLOTS; slot++)
			if ((base | (cp_time_t)slot << shift) <= now)
				moving += list_length(w, level * CP_WHEEL_SLOTS + slot);
	}
	cp_wheel_advance(w, now);
	placed = moving - list_length(w, CP_WHEEL_BACKLOG);
	REQUIRE(placed <= w->cascade_budget, "one advance placed %zu, budget %u", placed,
		w->cascade_budget);
}

/*
 * Bounded cascades against the reference model: bunches of entries whose deadlines fall in one
 * slot of levels 2 to 4, a small budget, the clock crossing those slots' boundaries so that the
 * backlog outlasts many advances, and entries rescheduled or cancelled while on the backlog.
 * Every entry fires once (a second pop finds it unscheduled in the model), never before its
 * deadline, and each advance places at most the budget.
 */
START_TEST(test_wheel_backlog_matches_reference)
{
	static struct cp_wheel w;
	cp_time_t now = ((cp_time_t)3 << 24) + 12345;
	size_t max_backlog = 0;
	unsigned backlog_touched = 0;

	rng_state = 0x5DEECE66Dull + (uint64_t)_i * 7919u;
	for (unsigned i = 0; i < NODES; i++) {
		cp_tnode_init(&nodes[i]);
		ref_scheduled[i] = false;
	}
	cp_wheel_init(&w, test_node, NULL);
	w.cascade_budget = 1 + (uint32_t)(rng() % 24);
	cp_wheel_advance(&w, now);
	for (unsigned round = 0; round < 400; round++) {
		unsigned k, n;

		if (round % 40 == 0) {
			/* a bunch in one slot of level 2, 3 or 4 ahead of the clock */
			unsigned level = 2 + (unsigned)(rng() % 3), shift = level * CP_WHEEL_BITS;
			cp_time_t slot = ((now >> shift) + 1 + rng() % 2) << shift;

			for (k = 0; k < 600; k++) {
				uint32_t id = (uint32_t)(rng() % NODES);
				cp_time_t d = slot + (rng() & (((cp_time_t)1 << shift) - 1));

				cp_wheel_schedule(&w, id, d);
				ref_scheduled[id] = true;
				ref_deadline[id] = d;
			}
		}
		/* schedule, reschedule and cancel, mostly of entries on the backlog */
		n = (unsigned)mark_backlog(&w);
		if (n > max_backlog)
			max_backlog = n;
		for (k = 0; k < 20; k++) {
			uint32_t id = (uint32_t)(rng() % NODES);

			for (unsigned tries = 0; n != 0 && !on_backlog[id] && tries < 50; tries++)
				id = (uint32_t)(rng() % NODES);
			if (on_backlog[id])
				backlog_touched++;
			if (rng() % 4 == 0) {
				cp_wheel_cancel(&w, id);
				ref_scheduled[id] = false;
			} else {
				cp_time_t d = rng() % 8 == 0 ? now - (rng() % 3)
							     : now + random_delay() % CP_SEC(40);

				cp_wheel_schedule(&w, id, d);
				ref_scheduled[id] = true;
				ref_deadline[id] = d;
			}
			on_backlog[id] = false;
		}
		check_against_reference(&w);
		/* small steps, and now and then across a level-3 or level-4 boundary */
		if (round % 40 == 20)
			now = ((now >> 24) + 1) << 24;
		else if (round % 10 == 5)
			now = ((now >> 18) + 1) << 18;
		else
			now += rng() % 3 == 0 ? 0 : rng() % 5000;
		advance_bounded(&w, now);
		check_against_reference(&w);
	}
	/* the test did what it says: long backlogs, touched while there */
	ck_assert_uint_gt(max_backlog, 10 * w.cascade_budget);
	ck_assert_uint_gt(backlog_touched, 1000);
	/* drain: following cp_wheel_next reaches every entry */
	for (unsigned guard = 0; w.count != 0; guard++) {
		REQUIRE(guard < 1000000, "the wheel does not drain");
		advance_bounded(&w, cp_wheel_next(&w) > w.now ? cp_wheel_next(&w) : w.now + 1);
		check_against_reference(&w);
	}
	ck_assert(!cp_wheel_cascading(&w));
}
END_TEST

/*
 * A thousand entries in one level-4 slot and a budget of 16: crossing the slot's boundary places
 * 16 per advance, cp_wheel_next() answers the wheel's time until all are placed, and the entries
 * due then fire on the following calls without the clock moving.
 */
START_TEST(test_wheel_cascade_budget)
{
	static struct cp_wheel w;
	const cp_time_t slot = (cp_time_t)5 << 24;
	unsigned calls = 0, fired = 0;
	uint32_t id;

	for (unsigned i = 0; i < NODES; i++)
		cp_tnode_init(&nodes[i]);
	cp_wheel_init(&w, test_node, NULL);
	ck_assert_uint_eq(w.cascade_budget, CP_WHEEL_CASCADE_BUDGET);
	w.cascade_budget = 16;
	cp_wheel_advance(&w, slot - CP_SEC(1));
	for (unsigned i = 0; i < 1000; i++)
		cp_wheel_schedule(&w, i, slot + (i % 10 == 0 ? 0 : CP_SEC(1) + i * 1000));
	ck_assert_uint_eq(cp_wheel_next(&w), slot);
	advance_bounded(&w, slot);
	ck_assert(cp_wheel_cascading(&w));
	ck_assert_uint_eq(cp_wheel_next(&w), slot);
	for (calls = 1; cp_wheel_cascading(&w); calls++) {
		ck_assert_uint_eq(cp_wheel_next(&w), slot);
		while ((id = cp_wheel_pop_expired(&w)) != CP_NIL) {
			ck_assert_uint_eq(id % 10, 0);
			fired++;
		}
		advance_bounded(&w, slot);
	}
	while ((id = cp_wheel_pop_expired(&w)) != CP_NIL)
		fired++;
	ck_assert_uint_eq(calls, (1000 + 15) / 16);
	ck_assert_uint_eq(fired, 100);
	ck_assert_uint_eq(w.count, 900);
	ck_assert_uint_gt(cp_wheel_next(&w), slot);
	ck_assert_uint_le(cp_wheel_next(&w), slot + CP_SEC(1) + 1000);
}
END_TEST

START_TEST(test_wheel_exact_edges)
{
	static struct cp_wheel w;
	static const cp_time_t deadlines[] = {
		1, 63, 64, 65, 4095, 4096, 1ull << 30, (1ull << 62) + 5};

	for (unsigned i = 0; i < NODES; i++)
		cp_tnode_init(&nodes[i]);
	cp_wheel_init(&w, test_node, NULL);
	for (unsigned i = 0; i < sizeof(deadlines) / sizeof(deadlines[0]); i++)
		cp_wheel_schedule(&w, i, deadlines[i]);
	for (unsigned i = 0; i < sizeof(deadlines) / sizeof(deadlines[0]); i++) {
		cp_wheel_advance(&w, deadlines[i] - 1);
		ck_assert_uint_eq(cp_wheel_pop_expired(&w), CP_NIL);
		cp_wheel_advance(&w, deadlines[i]);
		ck_assert_uint_eq(cp_wheel_pop_expired(&w), i);
		ck_assert_uint_eq(cp_wheel_pop_expired(&w), CP_NIL);
	}
	ck_assert_uint_eq(w.count, 0);
	/* going back in time changes nothing */
	cp_wheel_advance(&w, 5);
	ck_assert_uint_eq(w.now, deadlines[7]);
	/* rescheduling an expired-but-not-popped entry moves it */
	cp_wheel_schedule(&w, 1, w.now);
	cp_wheel_schedule(&w, 1, w.now + 10);
	ck_assert_uint_eq(cp_wheel_pop_expired(&w), CP_NIL);
	ck_assert_uint_eq(cp_wheel_next(&w), w.now + 10);
	cp_wheel_cancel(&w, 1);
	cp_wheel_cancel(&w, 1);
	ck_assert_uint_eq(w.count, 0);
	ck_assert_uint_eq(cp_wheel_next(&w), UINT64_MAX);
	/* the far end of the clock */
	cp_wheel_schedule(&w, 2, UINT64_MAX - 1);
	cp_wheel_advance(&w, UINT64_MAX - 2);
	ck_assert_uint_eq(cp_wheel_pop_expired(&w), CP_NIL);
	cp_wheel_advance(&w, UINT64_MAX - 1);
	ck_assert_uint_eq(cp_wheel_pop_expired(&w), 2);
}
END_TEST

/* ---- pools and hash tables ---- */

struct item {
	uint32_t link;
	uint32_t key;
	uint64_t payload;
};

static struct cp_pool pool;
static struct cp_hash_key key = {1, 2};

static uint32_t *item_link(void *ctx, uint32_t id)
{
	(void)ctx;
	return &((struct item *)cp_pool_at(&pool, id))->link;
}

static uint64_t item_hash(void *ctx, uint32_t id)
{
	(void)ctx;
	return cp_hash64(&key, ((struct item *)cp_pool_at(&pool, id))->key);
}

static uint32_t find(const struct cp_htab *tab, uint32_t k)
{
	for (uint32_t id = cp_htab_first(tab, cp_hash64(&key, k)); id != CP_NIL;) {
		const struct item *it = cp_pool_at(&pool, id);

		if (it->key == k)
			return id;
		id = it->link;
	}
	return CP_NIL;
}

START_TEST(test_pool_and_table)
{
	struct cp_htab tab;
	struct cp_htab_ops ops = {item_link, item_hash, NULL};
	enum { N = 100000 };
	static uint32_t ids[N];

	cp_pool_init(&pool, sizeof(struct item), offsetof(struct item, link));
	ck_assert_int_eq(cp_htab_init(&tab, 3), 0);
	ck_assert_uint_eq(tab.mask, 3);
	for (uint32_t i = 0; i < N; i++) {
		struct item *it;

		ids[i] = cp_pool_alloc(&pool);
		REQUIRE(ids[i] != CP_NIL, "allocation %u failed", i);
		it = cp_pool_at(&pool, ids[i]);
		REQUIRE(it->payload == 0, "entry %u not zeroed", i);
		it->key = i * 7919u;
		it->payload = i;
		cp_htab_insert(&tab, &ops, ids[i], cp_hash64(&key, it->key));
	}
	ck_assert_uint_eq(tab.count, N);
	ck_assert_uint_ge(tab.mask + 1, N);
	ck_assert_uint_eq(pool.live, N);
	ck_assert_uint_ge(cp_pool_bytes(&pool), (size_t)N * sizeof(struct item));
	ck_assert_uint_le(
		cp_pool_bytes(&pool), (size_t)(N + CP_POOL_CHUNK) * sizeof(struct item) + 4096);
	for (uint32_t i = 0; i < N; i++)
		REQUIRE(find(&tab, i * 7919u) == ids[i], "key %u not found", i);
	ck_assert_uint_eq(find(&tab, 3), CP_NIL);
	/* remove every other one; freed ids are reused */
	for (uint32_t i = 0; i < N; i += 2) {
		cp_htab_remove(&tab, &ops, ids[i], item_hash(NULL, ids[i]));
		cp_pool_free(&pool, ids[i]);
	}
	cp_htab_remove(&tab, &ops, ids[1], cp_hash64(&key, 12345)); /* wrong bucket: no-op */
	ck_assert_uint_eq(tab.count, N / 2);
	for (uint32_t i = 0; i < N; i++)
		REQUIRE(find(&tab, i * 7919u) == (i % 2 ? ids[i] : CP_NIL), "key %u", i);
	{
		uint32_t again = cp_pool_alloc(&pool);

		ck_assert_uint_eq(again, ids[N - 2]);
		cp_pool_free(&pool, again);
	}
	for (uint32_t i = 1; i < N; i += 2) {
		cp_htab_remove(&tab, &ops, ids[i], item_hash(NULL, ids[i]));
		cp_pool_free(&pool, ids[i]);
	}
	/* the last free gives the chunks back */
	ck_assert_uint_eq(pool.live, 0);
	ck_assert_uint_eq(cp_pool_bytes(&pool), 0);
	ck_assert_uint_eq(cp_pool_alloc(&pool), 0);
	cp_pool_destroy(&pool);
	cp_htab_destroy(&tab);
	ck_assert_uint_eq(cp_htab_bytes(&tab), 0);
}
END_TEST

static uint32_t walk_count(const struct cp_htab *tab)
{
	uint32_t n = 0;

	for (uint32_t b = 0; b < cp_htab_heads(tab); b++) {
		for (uint32_t id = cp_htab_head(tab, b); id != CP_NIL;
			id = ((struct item *)cp_pool_at(&pool, id))->link)
			n++;
	}
	return n;
}

START_TEST(test_table_grows_incrementally)
{
	struct cp_htab tab;
	struct cp_htab_ops ops = {item_link, item_hash, NULL};
	static uint32_t ids[4096];
	uint32_t inserts_while_moving = 0, extra;

	cp_pool_init(&pool, sizeof(struct item), offsetof(struct item, link));
	ck_assert_int_eq(cp_htab_init(&tab, 1024), 0);
	for (uint32_t i = 0; i < 4096; i++) {
		ids[i] = cp_pool_alloc(&pool);
		((struct item *)cp_pool_at(&pool, ids[i]))->key = i;
		cp_htab_insert(&tab, &ops, ids[i], cp_hash64(&key, i));
		if (tab.old != NULL) {
			inserts_while_moving++;
			/* halfway through a move every key is still found, and walks see all */
			for (uint32_t j = 0; j <= i; j++)
				REQUIRE(find(&tab, j) == ids[j], "key %u lost while moving", j);
			REQUIRE(walk_count(&tab) == i + 1, "walk misses entries");
			ck_assert_uint_eq(
				cp_htab_bytes(&tab), (tab.mask + 1 + tab.old_mask + 1) * 4);
		}
	}
	/* each doubling took a bounded number of inserts: old buckets / 8 */
	ck_assert_uint_eq(inserts_while_moving, 1024 / 8 + 2048 / 8);
	ck_assert_ptr_eq(tab.old, NULL);
	ck_assert_uint_eq(tab.mask + 1, 4096);
	/* removals during a move help it along and find their entries */
	extra = cp_pool_alloc(&pool);
	((struct item *)cp_pool_at(&pool, extra))->key = 5000;
	cp_htab_insert(&tab, &ops, extra, cp_hash64(&key, 5000));
	ck_assert_ptr_nonnull(tab.old);
	for (uint32_t i = 0; i < 4096; i++) {
		cp_htab_remove(&tab, &ops, ids[i], cp_hash64(&key, i));
		REQUIRE(find(&tab, i) == CP_NIL, "key %u still there", i);
	}
	ck_assert_ptr_eq(tab.old, NULL);
	ck_assert_uint_eq(tab.count, 1);
	ck_assert_uint_eq(find(&tab, 5000), extra);
	cp_htab_destroy(&tab);
	cp_pool_destroy(&pool);
}
END_TEST

START_TEST(test_siphash13)
{
	/* SipHash-1-3 of the 8 little-endian bytes of the word, checked against an independent
	 * implementation of the reference algorithm */
	struct cp_hash_key k = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
	struct cp_hash_key zero = {0, 0};

	ck_assert_uint_eq(cp_hash64(&k, 0x0123456789abcdefull), 0x0782a12a072f7a64ull);
	ck_assert_uint_eq(cp_hash64(&zero, 0), 0xbd60acb658c79e45ull);
	/* consecutive keys spread over buckets */
	{
		unsigned buckets[64] = {0};

		for (uint32_t i = 0; i < 64 * 1000; i++)
			buckets[cp_hash64(&k, i) & 63]++;
		for (unsigned b = 0; b < 64; b++) {
			ck_assert_uint_gt(buckets[b], 800);
			ck_assert_uint_lt(buckets[b], 1200);
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: wheel, pools, hash tables");
	TCase *tc = tcase_create("structures");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_wheel_matches_reference, 0, 4);
	tcase_add_loop_test(tc, test_wheel_backlog_matches_reference, 0, 4);
	tcase_add_test(tc, test_wheel_cascade_budget);
	tcase_add_test(tc, test_wheel_exact_edges);
	tcase_add_test(tc, test_pool_and_table);
	tcase_add_test(tc, test_table_grows_incrementally);
	tcase_add_test(tc, test_siphash13);
	suite_add_tcase(s, tc);
	return check_run(s);
}

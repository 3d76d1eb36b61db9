/*
 * The event loop's timers: deadline order, re-arming, stopping, a deadline already past, and the
 * timerfd read once per run (a run that found it drained must not stall the loop).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "router/lib/event.h"
#include "tests/unit/check_run.h"

struct record {
	int order[8];
	int n;
	struct ev_timer *stop_after; /* stop the loop once this timer has fired */
	struct ev_timer *self[8];
};

static struct record rec;

static void fired(struct ev_loop *loop, void *arg)
{
	int id = (int)(intptr_t)arg;

	if (rec.n < 8)
		rec.order[rec.n++] = id;
	if (rec.self[id] == rec.stop_after)
		ev_loop_break(loop);
}

static struct ev_timer *timer(struct ev_loop *loop, int id)
{
	struct ev_timer *t = ev_timer_new(loop, fired, (void *)(intptr_t)id);

	ck_assert_ptr_nonnull(t);
	rec.self[id] = t;
	return t;
}

START_TEST(timers_fire_in_deadline_order)
{
	struct ev_loop *loop = ev_loop_new();
	uint64_t now = ev_time_now();
	struct ev_timer *a, *b, *c, *d;

	rec = (struct record){0};
	a = timer(loop, 0);
	b = timer(loop, 1);
	c = timer(loop, 2);
	d = timer(loop, 3);
	ev_timer_start(loop, a, now + 30000);
	ev_timer_start(loop, b, now + 10000);
	ev_timer_start(loop, c, now + 20000);
	ev_timer_start(loop, d, now + 5000);
	ck_assert(ev_timer_pending(b));
	ck_assert_uint_eq(ev_timer_when(b), now + 10000);
	/* Re-armed later: fires after c now. */
	ev_timer_start(loop, b, now + 25000);
	ck_assert_uint_eq(ev_timer_when(b), now + 25000);
	ev_timer_stop(loop, d);
	ck_assert(!ev_timer_pending(d));
	ev_timer_stop(loop, d); /* stopping a stopped timer is a no-op */
	rec.stop_after = a;
	ck_assert_int_eq(ev_loop_run(loop), 0);
	ck_assert_int_eq(rec.n, 3);
	ck_assert_int_eq(rec.order[0], 2);
	ck_assert_int_eq(rec.order[1], 1);
	ck_assert_int_eq(rec.order[2], 0);
	ck_assert(!ev_timer_pending(a));
	ck_assert_uint_ge(ev_time_now(), now + 30000);
	ev_timer_free(loop, a);
	ev_timer_free(loop, b);
	ev_timer_free(loop, c);
	ev_timer_free(loop, d);
	ev_loop_free(loop);
}
END_TEST

START_TEST(timers_past_deadline_and_repeated_runs)
{
	struct ev_loop *loop = ev_loop_new();
	struct ev_timer *t;

	rec = (struct record){0};
	t = timer(loop, 0);
	rec.stop_after = t;
	/* Five runs in a row, the first with a deadline already past: each fires once and the
	   loop returns; none waits on a timerfd that was read empty. */
	for (int i = 0; i < 5; i++) {
		ev_timer_start(loop, t, i == 0 ? 1 : ev_time_now() + 1000);
		ck_assert_int_eq(ev_loop_run(loop), 0);
		ck_assert_int_eq(rec.n, i + 1);
	}
	ev_timer_free(loop, t);
	ev_loop_free(loop);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("event");
	TCase *tc = tcase_create("timers");

	tcase_add_test(tc, timers_fire_in_deadline_order);
	tcase_add_test(tc, timers_past_deadline_and_repeated_runs);
	suite_add_tcase(s, tc);
	return check_run(s);
}

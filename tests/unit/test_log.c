/*
 * The log's in-memory ring (`show logging`): lines kept oldest first, the oldest overwritten
 * once it is full, long lines cut, every line counted, stamped by the clock given.
 */
#include <check.h>
#include <fcntl.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "router/lib/log.h"
#include "tests/unit/check_run.h"

static void fixed_clock(struct timespec *ts)
{
	ts->tv_sec = 1000;
	ts->tv_nsec = 5;
}

START_TEST(ring_wraps_and_cuts)
{
	char long_line[LOG_RING_LINE_LEN * 2];
	struct log_line l;
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	/* the lines go to stderr too: not into the test's output */
	ck_assert(saved >= 0 && null >= 0);
	dup2(null, 2);
	close(null);
	log_init("test", true, false);
	log_set_clock(fixed_clock);
	ck_assert_uint_eq(log_ring_held(), 0);
	ck_assert(!log_ring_line(0, &l));
	log_info("first %d", 1);
	ck_assert_uint_eq(log_ring_held(), 1);
	ck_assert(log_ring_line(0, &l));
	ck_assert_str_eq(l.text, "first 1");
	ck_assert_int_eq(l.priority, LOG_INFO);
	ck_assert_int_eq(l.when.tv_sec, 1000);
	ck_assert_str_eq(log_priority_name(l.priority), "info");

	/* debug lines go in only when their category is on */
	log_debug(LOG_CAT_EVENTS, "not kept");
	ck_assert_uint_eq(log_ring_logged(), 1);
	log_debug_enable(LOG_CAT_EVENTS, true);
	log_debug(LOG_CAT_EVENTS, "kept");
	log_debug_enable(LOG_CAT_EVENTS, false);
	ck_assert(log_ring_line(1, &l));
	ck_assert_str_eq(l.text, "kept");
	ck_assert_str_eq(log_priority_name(l.priority), "debug");

	for (int i = 0; i < LOG_RING_LINES; i++)
		log_warnx("line %d", i);
	ck_assert_uint_eq(log_ring_logged(), LOG_RING_LINES + 2);
	ck_assert_uint_eq(log_ring_held(), LOG_RING_LINES);
	ck_assert(log_ring_line(0, &l));
	ck_assert_str_eq(l.text, "line 0"); /* "first 1" and "kept" overwritten */
	ck_assert(log_ring_line(LOG_RING_LINES - 1, &l));
	ck_assert_str_eq(l.text, "line 255");
	ck_assert(!log_ring_line(LOG_RING_LINES, &l));

	memset(long_line, 'x', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	log_info("%s", long_line);
	ck_assert(log_ring_line(LOG_RING_LINES - 1, &l));
	ck_assert_uint_eq(strlen(l.text), LOG_RING_LINE_LEN - 1);
	ck_assert_str_eq(log_priority_name(LOG_WARNING), "warning");
	log_set_clock(NULL);
	dup2(saved, 2);
	close(saved);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("ring");

	tcase_add_test(tc, ring_wraps_and_cuts);
	suite_add_tcase(s, tc);
	return check_run(s);
}

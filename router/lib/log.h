/*
 * Logging in the OpenBSD daemons' style: log_warn adds strerror(errno), log_warnx does not,
 * fatal/fatalx exit. Bad input from outside is logged (rate-limited by the caller) and counted; a
 * broken internal invariant is fatalx.
 *
 * Debug output is switched per category; every debug line also goes to the log hooks (CLI
 * sessions with `terminal monitor`).
 */
#ifndef PGMROUTER_LOG_H
#define PGMROUTER_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

enum log_category {
	LOG_CAT_PACKETS = 0, /* debug ip pgm router packets */
	LOG_CAT_EVENTS,	     /* debug ip pgm router events */
	LOG_CAT_TIMERS,	     /* debug ip pgm router timers */
	LOG_CAT_DATAPLANE,   /* debug ip pgm router dataplane */
	LOG_CAT_COUNT
};

/* to_stderr: foreground (-d); otherwise syslog. verbose (-v): every debug category on. */
void log_init(const char *progname, bool to_stderr, bool verbose);
void log_set_verbose(bool verbose);
void log_debug_enable(enum log_category cat, bool on);
bool log_debug_enabled(enum log_category cat);
unsigned log_debug_mask(void); /* bit (1 << category) per category switched on */
const char *log_category_name(enum log_category cat);

/* A hook receives every line logged (after filtering), e.g. CLI sessions in monitor mode. It
   runs on the thread that set it: a line logged by another thread reaches it when that thread
   calls log_hook_drain(), which it does when log_hook_fd() is readable (an eventfd; -1 before
   a hook was set). Lines the ring dropped before the hook had them do not reach it. */
typedef void (*log_hook_fn)(void *ctx, int priority, enum log_category cat, const char *line);
void log_set_hook(log_hook_fn fn, void *ctx);
int log_hook_fd(void);
void log_hook_drain(void);

/* The last lines logged, debug lines included, kept in memory for `show logging`: a ring of
   LOG_RING_LINES lines of at most LOG_RING_LINE_LEN - 1 characters (longer ones are cut). */
#define LOG_RING_LINES	  256
#define LOG_RING_LINE_LEN 240
struct log_line {
	struct timespec when; /* CLOCK_REALTIME */
	int priority;	      /* syslog's LOG_* */
	char text[LOG_RING_LINE_LEN];
};
size_t log_ring_held(void);
unsigned long long log_ring_logged(void); /* every line since start */
/* The i-th oldest line held, copied (any thread may log meanwhile); false past the last. */
bool log_ring_line(size_t i, struct log_line *out);
const char *log_priority_name(int priority);
/* Tests: the time lines are stamped with (NULL: the real clock). */
void log_set_clock(void (*now)(struct timespec *ts));

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(enum log_category cat, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* PGMROUTER_LOG_H */

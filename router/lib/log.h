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

/* A hook receives every line logged (after filtering), e.g. CLI sessions in monitor mode. */
typedef void (*log_hook_fn)(void *ctx, int priority, enum log_category cat, const char *line);
void log_set_hook(log_hook_fn fn, void *ctx);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(enum log_category cat, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* PGMROUTER_LOG_H */

/*
 * Logging: stderr in the foreground, syslog otherwise; per-category debug switches; a hook that
 * copies every line to CLI sessions in monitor mode.
 */
#include "router/lib/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static bool log_to_stderr = true;
static unsigned debug_mask; /* bit per enum log_category switched on */
static log_hook_fn hook_fn;
static void *hook_ctx;

static const char *const category_names[LOG_CAT_COUNT] = {
	[LOG_CAT_PACKETS] = "packets",
	[LOG_CAT_EVENTS] = "events",
	[LOG_CAT_TIMERS] = "timers",
	[LOG_CAT_DATAPLANE] = "dataplane",
};

void log_init(const char *progname, bool to_stderr, bool verbose)
{
	log_to_stderr = to_stderr;
	log_set_verbose(verbose);
	if (!to_stderr)
		openlog(progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_set_verbose(bool verbose)
{
	/* -v: every debug category on, as the OpenBSD daemons' -v raises verbosity. */
	debug_mask = verbose ? (1u << LOG_CAT_COUNT) - 1 : 0;
}

void log_debug_enable(enum log_category cat, bool on)
{
	if (cat < LOG_CAT_COUNT)
		debug_mask = on ? debug_mask | 1u << cat : debug_mask & ~(1u << cat);
}

bool log_debug_enabled(enum log_category cat)
{
	return cat < LOG_CAT_COUNT && (debug_mask & 1u << cat) != 0;
}

unsigned log_debug_mask(void)
{
	return debug_mask;
}

const char *log_category_name(enum log_category cat)
{
	return cat < LOG_CAT_COUNT ? category_names[cat] : "?";
}

void log_set_hook(log_hook_fn fn, void *ctx)
{
	hook_fn = fn;
	hook_ctx = ctx;
}

/* ---- the ring ---- */

struct ring_entry {
	struct timespec when;
	int priority;
	char text[LOG_RING_LINE_LEN];
};

static struct ring_entry ring[LOG_RING_LINES];
static unsigned long long ring_logged; /* ring[ring_logged % LOG_RING_LINES] is the next */
static void (*clock_fn)(struct timespec *ts);

void log_set_clock(void (*now)(struct timespec *ts))
{
	clock_fn = now;
}

static void ring_add(const struct timespec *when, int priority, const char *line)
{
	struct ring_entry *e = &ring[ring_logged++ % LOG_RING_LINES];
	size_t n = strnlen(line, sizeof(e->text) - 1); /* cut, as the header says */

	e->when = *when;
	e->priority = priority;
	memcpy(e->text, line, n);
	e->text[n] = '\0';
}

size_t log_ring_held(void)
{
	return ring_logged < LOG_RING_LINES ? (size_t)ring_logged : LOG_RING_LINES;
}

unsigned long long log_ring_logged(void)
{
	return ring_logged;
}

bool log_ring_line(size_t i, struct log_line *out)
{
	const struct ring_entry *e;

	if (i >= log_ring_held())
		return false;
	e = &ring[(ring_logged - log_ring_held() + i) % LOG_RING_LINES];
	out->when = e->when;
	out->priority = e->priority;
	out->text = e->text;
	return true;
}

const char *log_priority_name(int priority)
{
	switch (priority) {
	case LOG_CRIT:
		return "critical";
	case LOG_WARNING:
		return "warning";
	case LOG_INFO:
		return "info";
	case LOG_DEBUG:
		return "debug";
	default:
		return "notice";
	}
}

static void emit(int priority, enum log_category cat, const char *line)
{
	struct timespec ts;

	if (clock_fn != NULL)
		clock_fn(&ts);
	else
		clock_gettime(CLOCK_REALTIME, &ts);
	ring_add(&ts, priority, line);
	if (log_to_stderr) {
		struct tm tm;
		char stamp[32];

		localtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld %s\n", stamp, ts.tv_nsec / 1000000, line);
	} else {
		syslog(priority, "%s", line);
	}
	if (hook_fn != NULL)
		hook_fn(hook_ctx, priority, cat, line);
}

static void vlog(int priority, enum log_category cat, int errnum, const char *fmt, va_list ap)
{
	char line[1024];
	int n = vsnprintf(line, sizeof(line), fmt, ap);

	if (n < 0)
		return;
	if (errnum != 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, ": %s", strerror(errnum));
	emit(priority, cat, line);
}

void log_warn(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, LOG_CAT_COUNT, errnum, fmt, ap);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, LOG_CAT_COUNT, 0, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, LOG_CAT_COUNT, 0, fmt, ap);
	va_end(ap);
}

void log_debug(enum log_category cat, const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_enabled(cat))
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, cat, 0, fmt, ap);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, LOG_CAT_COUNT, errnum, fmt, ap);
	va_end(ap);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, LOG_CAT_COUNT, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

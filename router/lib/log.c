/*
 * Logging: stderr in the foreground, syslog otherwise; per-category debug switches; a hook that
 * copies every line to CLI sessions in monitor mode.
 *
 * Any thread may log (the workers' packet paths do): the ring is under a mutex, the debug mask is
 * an atomic word, and the hook runs only on the thread that set it (the CLI's): a line from
 * another thread waits in the ring, and log_hook_fd() becomes readable until that thread calls
 * log_hook_drain().
 */
#include "router/lib/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static bool log_to_stderr = true;
static unsigned debug_mask; /* bit per enum log_category switched on; atomic */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER; /* the ring and the hook's place */
static log_hook_fn hook_fn;
static void *hook_ctx;
static pthread_t hook_thread;
static int hook_fd = -1;	     /* eventfd: lines of other threads wait for the hook */
static unsigned long long hook_next; /* the first line of the ring the hook has not had */
static __thread bool in_hook;	     /* the hook runs on this thread now */

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
	__atomic_store_n(&debug_mask, verbose ? (1u << LOG_CAT_COUNT) - 1 : 0, __ATOMIC_RELAXED);
}

void log_debug_enable(enum log_category cat, bool on)
{
	if (cat >= LOG_CAT_COUNT)
		return;
	if (on)
		__atomic_fetch_or(&debug_mask, 1u << cat, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&debug_mask, ~(1u << cat), __ATOMIC_RELAXED);
}

bool log_debug_enabled(enum log_category cat)
{
	return cat < LOG_CAT_COUNT && (log_debug_mask() & 1u << cat) != 0;
}

unsigned log_debug_mask(void)
{
	return __atomic_load_n(&debug_mask, __ATOMIC_RELAXED);
}

const char *log_category_name(enum log_category cat)
{
	return cat < LOG_CAT_COUNT ? category_names[cat] : "?";
}

/* ---- the ring ---- */

struct ring_entry {
	struct timespec when;
	int priority;
	enum log_category cat;
	char text[LOG_RING_LINE_LEN];
};

static struct ring_entry ring[LOG_RING_LINES];
static unsigned long long ring_logged; /* ring[ring_logged % LOG_RING_LINES] is the next */
static void (*clock_fn)(struct timespec *ts);

void log_set_clock(void (*now)(struct timespec *ts))
{
	clock_fn = now;
}

/* Under ring_lock. */
static void ring_add(
	const struct timespec *when, int priority, enum log_category cat, const char *line)
{
	struct ring_entry *e = &ring[ring_logged++ % LOG_RING_LINES];
	size_t n = strnlen(line, sizeof(e->text) - 1); /* cut, as the header says */

	e->when = *when;
	e->priority = priority;
	e->cat = cat;
	memcpy(e->text, line, n);
	e->text[n] = '\0';
}

static size_t ring_held(void)
{
	return ring_logged < LOG_RING_LINES ? (size_t)ring_logged : LOG_RING_LINES;
}

size_t log_ring_held(void)
{
	size_t n;

	pthread_mutex_lock(&ring_lock);
	n = ring_held();
	pthread_mutex_unlock(&ring_lock);
	return n;
}

unsigned long long log_ring_logged(void)
{
	unsigned long long n;

	pthread_mutex_lock(&ring_lock);
	n = ring_logged;
	pthread_mutex_unlock(&ring_lock);
	return n;
}

bool log_ring_line(size_t i, struct log_line *out)
{
	const struct ring_entry *e;
	bool ok;

	pthread_mutex_lock(&ring_lock);
	ok = i < ring_held();
	if (ok) {
		e = &ring[(ring_logged - ring_held() + i) % LOG_RING_LINES];
		out->when = e->when;
		out->priority = e->priority;
		memcpy(out->text, e->text, sizeof(out->text));
	}
	pthread_mutex_unlock(&ring_lock);
	return ok;
}

/* ---- the hook, on its own thread ---- */

void log_set_hook(log_hook_fn fn, void *ctx)
{
	pthread_mutex_lock(&ring_lock);
	hook_fn = fn;
	hook_ctx = ctx;
	hook_thread = pthread_self();
	hook_next = ring_logged;
	if (fn != NULL && hook_fd < 0)
		hook_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_unlock(&ring_lock);
}

int log_hook_fd(void)
{
	int fd;

	pthread_mutex_lock(&ring_lock);
	fd = hook_fd;
	pthread_mutex_unlock(&ring_lock);
	return fd;
}

/* Lines the hook has not had, to it, in order; on the hook's thread, with ring_lock held (it is
   released around each call: the hook may log). */
static void hook_catch_up(void)
{
	while (hook_fn != NULL && hook_next < ring_logged) {
		struct ring_entry e;
		log_hook_fn fn = hook_fn;
		void *ctx = hook_ctx;

		if (ring_logged - hook_next > LOG_RING_LINES)
			hook_next = ring_logged - LOG_RING_LINES; /* the older ones are gone */
		e = ring[hook_next++ % LOG_RING_LINES];
		pthread_mutex_unlock(&ring_lock);
		in_hook = true;
		fn(ctx, e.priority, e.cat, e.text);
		in_hook = false;
		pthread_mutex_lock(&ring_lock);
	}
}

void log_hook_drain(void)
{
	uint64_t v;

	if (hook_fd >= 0 && read(hook_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&ring_lock);
	if (pthread_equal(hook_thread, pthread_self()) && !in_hook)
		hook_catch_up();
	pthread_mutex_unlock(&ring_lock);
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

	bool wake = false;

	if (clock_fn != NULL)
		clock_fn(&ts);
	else
		clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&ring_lock);
	ring_add(&ts, priority, cat, line);
	if (hook_fn != NULL) {
		if (!pthread_equal(hook_thread, pthread_self()))
			wake = true; /* the hook's thread delivers it (log_hook_drain) */
		else if (!in_hook)
			hook_catch_up(); /* what waited first, then this line */
		/* a line the hook itself logs reaches it after the hook returns */
	}
	pthread_mutex_unlock(&ring_lock);
	if (wake && hook_fd >= 0) {
		uint64_t one = 1;

		if (write(hook_fd, &one, sizeof(one)) < 0) {
			/* the counter is full: the hook's thread has a wakeup pending anyway */
		}
	}
	if (log_to_stderr) {
		struct tm tm;
		char stamp[32];

		localtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld %s\n", stamp, ts.tv_nsec / 1000000, line);
	} else {
		syslog(priority, "%s", line);
	}
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

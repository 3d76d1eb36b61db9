/*
 * Event loop: epoll + one timerfd + signalfd.
 *
 * Timers sit in a binary min-heap keyed by deadline; the timerfd is armed to the earliest one.
 * The daemon has few loop timers (the control plane runs its own timer wheel behind a single
 * loop timer), so a heap is plenty.
 */
#include "router/lib/event.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "router/lib/log.h"

struct ev_io {
	int fd;
	unsigned events;
	ev_io_fn fn;
	void *arg;
	bool deleted;
	struct ev_io *next_deleted;
};

struct ev_timer {
	uint64_t when;
	ev_timer_fn fn;
	void *arg;
	size_t heap_index; /* SIZE_MAX when not pending */
};

struct ev_signal {
	int signo;
	ev_signal_fn fn;
	void *arg;
};

struct ev_loop {
	int epfd;
	int timerfd;
	int sigfd;
	bool running;
	uint64_t now;
	struct ev_timer **heap;
	size_t heap_len, heap_cap;
	struct ev_signal *signals;
	size_t nsignals;
	sigset_t sigmask;
	struct ev_io *deleted; /* freed after the current dispatch round */
	uint64_t timerfd_armed;
};

/* Markers stored in epoll data for the loop's own descriptors. */
static char timerfd_marker, sigfd_marker;

uint64_t ev_time_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t ev_now(struct ev_loop *loop)
{
	return loop->now;
}

struct ev_loop *ev_loop_new(void)
{
	struct ev_loop *loop = calloc(1, sizeof(*loop));
	struct epoll_event ev = {.events = EPOLLIN};

	if (loop == NULL)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	loop->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	loop->sigfd = -1;
	sigemptyset(&loop->sigmask);
	if (loop->epfd < 0 || loop->timerfd < 0)
		goto fail;
	ev.data.ptr = &timerfd_marker;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->timerfd, &ev) < 0)
		goto fail;
	loop->now = ev_time_now();
	return loop;
fail:
	if (loop->epfd >= 0)
		close(loop->epfd);
	if (loop->timerfd >= 0)
		close(loop->timerfd);
	free(loop);
	return NULL;
}

static void free_deleted(struct ev_loop *loop)
{
	while (loop->deleted != NULL) {
		struct ev_io *io = loop->deleted;

		loop->deleted = io->next_deleted;
		free(io);
	}
}

void ev_loop_free(struct ev_loop *loop)
{
	if (loop == NULL)
		return;
	free_deleted(loop);
	close(loop->epfd);
	close(loop->timerfd);
	if (loop->sigfd >= 0) {
		close(loop->sigfd);
		sigprocmask(SIG_UNBLOCK, &loop->sigmask, NULL);
	}
	free(loop->heap);
	free(loop->signals);
	free(loop);
}

void ev_loop_break(struct ev_loop *loop)
{
	loop->running = false;
}

static uint32_t to_epoll(unsigned events)
{
	return ((events & EV_READ) ? EPOLLIN : 0) | ((events & EV_WRITE) ? EPOLLOUT : 0);
}

struct ev_io *ev_io_add(struct ev_loop *loop, int fd, unsigned events, ev_io_fn fn, void *arg)
{
	struct ev_io *io = calloc(1, sizeof(*io));
	struct epoll_event ev;

	if (io == NULL)
		return NULL;
	io->fd = fd;
	io->events = events;
	io->fn = fn;
	io->arg = arg;
	ev.events = to_epoll(events);
	ev.data.ptr = io;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(io);
		return NULL;
	}
	return io;
}

int ev_io_modify(struct ev_loop *loop, struct ev_io *io, unsigned events)
{
	struct epoll_event ev = {.events = to_epoll(events), .data.ptr = io};

	if (io->events == events)
		return 0;
	io->events = events;
	return epoll_ctl(loop->epfd, EPOLL_CTL_MOD, io->fd, &ev);
}

void ev_io_del(struct ev_loop *loop, struct ev_io *io)
{
	if (io == NULL || io->deleted)
		return;
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, io->fd, NULL);
	io->deleted = true;
	io->next_deleted = loop->deleted;
	loop->deleted = io;
}

/* ---- timers: binary heap ---- */

static void heap_swap(struct ev_loop *loop, size_t a, size_t b)
{
	struct ev_timer *t = loop->heap[a];

	loop->heap[a] = loop->heap[b];
	loop->heap[b] = t;
	loop->heap[a]->heap_index = a;
	loop->heap[b]->heap_index = b;
}

static void heap_up(struct ev_loop *loop, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (loop->heap[parent]->when <= loop->heap[i]->when)
			break;
		heap_swap(loop, i, parent);
		i = parent;
	}
}

static void heap_down(struct ev_loop *loop, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < loop->heap_len && loop->heap[l]->when < loop->heap[m]->when)
			m = l;
		if (r < loop->heap_len && loop->heap[r]->when < loop->heap[m]->when)
			m = r;
		if (m == i)
			break;
		heap_swap(loop, i, m);
		i = m;
	}
}

static void heap_remove(struct ev_loop *loop, struct ev_timer *t)
{
	size_t i = t->heap_index;

	t->heap_index = SIZE_MAX;
	loop->heap_len--;
	if (i == loop->heap_len)
		return;
	loop->heap[i] = loop->heap[loop->heap_len];
	loop->heap[i]->heap_index = i;
	heap_up(loop, i);
	heap_down(loop, loop->heap[i]->heap_index);
}

static void arm_timerfd(struct ev_loop *loop)
{
	struct itimerspec its = {0};
	uint64_t when = loop->heap_len ? loop->heap[0]->when : 0;

	if (when == loop->timerfd_armed)
		return;
	loop->timerfd_armed = when;
	if (when != 0) {
		/* An absolute time in the past fires at once; a zero it_value would disarm. */
		its.it_value.tv_sec = (time_t)(when / 1000000u);
		its.it_value.tv_nsec = (long)(when % 1000000u) * 1000;
	}
	if (timerfd_settime(loop->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		fatal("timerfd_settime");
}

struct ev_timer *ev_timer_new(struct ev_loop *loop, ev_timer_fn fn, void *arg)
{
	struct ev_timer *t = calloc(1, sizeof(*t));

	(void)loop;
	if (t == NULL)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	t->heap_index = SIZE_MAX;
	return t;
}

bool ev_timer_pending(const struct ev_timer *t)
{
	return t->heap_index != SIZE_MAX;
}

uint64_t ev_timer_when(const struct ev_timer *t)
{
	return t->when;
}

void ev_timer_stop(struct ev_loop *loop, struct ev_timer *t)
{
	if (t == NULL || !ev_timer_pending(t))
		return;
	heap_remove(loop, t);
	arm_timerfd(loop);
}

void ev_timer_start(struct ev_loop *loop, struct ev_timer *t, uint64_t when_us)
{
	if (ev_timer_pending(t)) {
		if (t->when == (when_us ? when_us : 1))
			return; /* already due then */
		heap_remove(loop, t);
	}
	if (loop->heap_len == loop->heap_cap) {
		size_t cap = loop->heap_cap ? loop->heap_cap * 2 : 16;
		struct ev_timer **h = realloc(loop->heap, cap * sizeof(*h));

		if (h == NULL)
			fatal("timer heap");
		loop->heap = h;
		loop->heap_cap = cap;
	}
	t->when = when_us ? when_us : 1;
	t->heap_index = loop->heap_len;
	loop->heap[loop->heap_len++] = t;
	heap_up(loop, t->heap_index);
	arm_timerfd(loop);
}

void ev_timer_free(struct ev_loop *loop, struct ev_timer *t)
{
	if (t == NULL)
		return;
	ev_timer_stop(loop, t);
	free(t);
}

static void run_timers(struct ev_loop *loop)
{
	uint64_t expirations;

	/* One read takes every expiration (the count); the timer is re-armed below anyway. */
	(void)!read(loop->timerfd, &expirations, sizeof(expirations));
	loop->timerfd_armed = 0;
	loop->now = ev_time_now();
	while (loop->heap_len > 0 && loop->heap[0]->when <= loop->now) {
		struct ev_timer *t = loop->heap[0];

		heap_remove(loop, t);
		t->fn(loop, t->arg);
	}
	arm_timerfd(loop);
}

/* ---- signals ---- */

int ev_signal_add(struct ev_loop *loop, int signo, ev_signal_fn fn, void *arg)
{
	struct ev_signal *s = realloc(loop->signals, (loop->nsignals + 1) * sizeof(*s));
	struct epoll_event ev = {.events = EPOLLIN};
	int fd;

	if (s == NULL)
		return -1;
	loop->signals = s;
	s[loop->nsignals++] = (struct ev_signal){signo, fn, arg};
	sigaddset(&loop->sigmask, signo);
	if (sigprocmask(SIG_BLOCK, &loop->sigmask, NULL) < 0)
		return -1;
	fd = signalfd(loop->sigfd, &loop->sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (loop->sigfd < 0) {
		loop->sigfd = fd;
		ev.data.ptr = &sigfd_marker;
		if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			return -1;
	}
	return 0;
}

static void run_signals(struct ev_loop *loop)
{
	struct signalfd_siginfo si;

	while (read(loop->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		for (size_t i = 0; i < loop->nsignals; i++)
			if (loop->signals[i].signo == (int)si.ssi_signo)
				loop->signals[i].fn(loop, (int)si.ssi_signo, loop->signals[i].arg);
	}
}

int ev_loop_run(struct ev_loop *loop)
{
	struct epoll_event events[64];

	loop->running = true;
	while (loop->running) {
		int n = epoll_wait(loop->epfd, events, 64, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("epoll_wait");
			return -1;
		}
		loop->now = ev_time_now();
		for (int i = 0; i < n && loop->running; i++) {
			void *p = events[i].data.ptr;
			struct ev_io *io;
			unsigned ev = 0;

			if (p == &timerfd_marker) {
				run_timers(loop);
				continue;
			}
			if (p == &sigfd_marker) {
				run_signals(loop);
				continue;
			}
			io = p;
			if (io->deleted)
				continue;
			if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				ev |= EV_READ;
			if (events[i].events & (EPOLLOUT | EPOLLERR))
				ev |= EV_WRITE;
			io->fn(loop, io->fd, ev & (io->events | EV_READ), io->arg);
		}
		free_deleted(loop);
	}
	return 0;
}

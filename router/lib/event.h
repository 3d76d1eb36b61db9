/*
 * The daemon's single event loop: epoll for file descriptors, one timerfd for every timer, and a
 * signalfd for signals. Nothing blocks: every socket is non-blocking and handled when readable.
 */
#ifndef PGMROUTER_EVENT_H
#define PGMROUTER_EVENT_H

#include <stdbool.h>
#include <stdint.h>

struct ev_loop;
struct ev_io;
struct ev_timer;

#define EV_READ 0x1
#define EV_WRITE 0x2

typedef void (*ev_io_fn)(struct ev_loop *loop, int fd, unsigned events, void *arg);
typedef void (*ev_timer_fn)(struct ev_loop *loop, void *arg);
typedef void (*ev_signal_fn)(struct ev_loop *loop, int signo, void *arg);

struct ev_loop *ev_loop_new(void);
void ev_loop_free(struct ev_loop *loop);
/* Runs until ev_loop_break(); returns 0, or -1 on an epoll failure. */
int ev_loop_run(struct ev_loop *loop);
void ev_loop_break(struct ev_loop *loop);
/* Monotonic time in microseconds, read once per loop iteration (and on demand). */
uint64_t ev_now(struct ev_loop *loop);
uint64_t ev_time_now(void);

/* File descriptors. `events` is EV_READ and/or EV_WRITE. */
struct ev_io *ev_io_add(struct ev_loop *loop, int fd, unsigned events, ev_io_fn fn, void *arg);
int ev_io_modify(struct ev_loop *loop, struct ev_io *io, unsigned events);
void ev_io_del(struct ev_loop *loop, struct ev_io *io); /* safe inside its own callback */

/* One-shot timers at an absolute monotonic time (µs). Stopping a stopped timer is a no-op. */
struct ev_timer *ev_timer_new(struct ev_loop *loop, ev_timer_fn fn, void *arg);
/* Starting a pending timer moves it; at the deadline it already has, nothing happens. */
void ev_timer_start(struct ev_loop *loop, struct ev_timer *t, uint64_t when_us);
void ev_timer_stop(struct ev_loop *loop, struct ev_timer *t);
bool ev_timer_pending(const struct ev_timer *t);
uint64_t ev_timer_when(const struct ev_timer *t); /* its deadline, when pending */
void ev_timer_free(struct ev_loop *loop, struct ev_timer *t);

/* Signals are blocked and delivered through a signalfd. */
int ev_signal_add(struct ev_loop *loop, int signo, ev_signal_fn fn, void *arg);

#endif /* PGMROUTER_EVENT_H */

/*
 * What the test tools (tests/peers, tests/bench) share: a flag their signal handler sets to end
 * their loops, and the clocks they time themselves with, in seconds or microseconds.
 */
#ifndef PGMROUTER_TESTS_TOOL_H
#define PGMROUTER_TESTS_TOOL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_requested;

/* SIGINT, SIGTERM (as the tool installs it): the loops end, the summary is still printed. */
static inline void on_signal(int signo)
{
	(void)signo;
	stop_requested = 1;
}

/* on_signal for SIGINT and SIGTERM, without SA_RESTART: a blocking call the signal interrupts
 * returns EINTR, so a loop waiting in it sees stop_requested at once. */
static inline void stop_on_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The tool is ready (its socket or queue open): creates the empty file `path` a script waits for;
 * nothing when path is NULL. */
static inline void touch_ready(const char *path)
{
	FILE *f = path != NULL ? fopen(path, "w") : NULL;

	if (f != NULL)
		fclose(f);
}

static inline uint64_t now_microseconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this process. It includes the kernel's work done in its context: on veth links
 * the forwarding of what it sends (softirq), when the kernel does not count IRQ time apart. */
static inline double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif /* PGMROUTER_TESTS_TOOL_H */

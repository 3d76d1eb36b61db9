/*
 * For the unit tests that need a network namespace of their own (raw sockets, netlink): entering
 * one, and an interface's IFF_UP flag. Static inline: each runner is one program.
 */
#ifndef PGMROUTER_TESTS_NETNS_TEST_H
#define PGMROUTER_TESTS_NETNS_TEST_H

#include <check.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* A new network namespace for this process (lo in it down), or false with a line saying that
 * `what` of `runner` was not run: unshare needs root. */
static inline bool unit_netns_enter(const char *runner, const char *what)
{
	if (unshare(CLONE_NEWNET) == 0)
		return true;
	fprintf(stderr, "%s: cannot create a network namespace (%s): needs root, %s not run\n",
		runner, strerror(errno), what);
	return false;
}

/* Interface `name` up (true) or down; returns whether it was up before. */
static inline bool unit_link_set_up(const char *name, bool up)
{
	struct ifreq ifr;
	bool was;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	ck_assert_int_ge(fd, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	was = (ifr.ifr_flags & IFF_UP) != 0;
	if (up != was) {
		ifr.ifr_flags ^= IFF_UP;
		ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	}
	close(fd);
	return was;
}

#endif /* PGMROUTER_TESTS_NETNS_TEST_H */

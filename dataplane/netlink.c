/*
 * Netlink sockets and the clock of the data plane (netlink.h).
 */
#include "dataplane/netlink.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* SO_xxxBUFFORCE passes the net.core limits (far below what a queue or a batch needs); it needs
   CAP_NET_ADMIN, which the daemon has. Without it take what the plain option grants. */
static bool set_buffer(int fd, int force, int plain, uint32_t bytes)
{
	int val = bytes > (uint32_t)(1 << 30) ? 1 << 30 : (int)bytes;

	if (setsockopt(fd, SOL_SOCKET, force, &val, sizeof(val)) == 0)
		return true;
	(void)setsockopt(fd, SOL_SOCKET, plain, &val, sizeof(val));
	return false;
}

struct mnl_socket *netlink_open(
	const struct netlink_socket_config *cfg, bool *rcvbuf_forced, char *err, size_t errlen)
{
	struct mnl_socket *nl = mnl_socket_open2(cfg->bus, SOCK_CLOEXEC | cfg->flags);
	bool forced = false;
	int fd;

	if (nl == NULL) {
		snprintf(err, errlen, "%s: cannot open a netlink socket: %s", cfg->what,
			strerror(errno));
		return NULL;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "%s: cannot bind the netlink socket: %s", cfg->what,
			strerror(errno));
		mnl_socket_close(nl);
		return NULL;
	}
	fd = mnl_socket_get_fd(nl);
	if (cfg->sndbuf != 0)
		(void)set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, cfg->sndbuf);
	if (cfg->rcvbuf != 0)
		forced = set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, cfg->rcvbuf);
	if (rcvbuf_forced != NULL)
		*rcvbuf_forced = forced;
	return nl;
}

uint64_t netlink_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int64_t netlink_now_ms(void)
{
	return (int64_t)(netlink_now_us() / 1000u);
}

uint64_t netlink_now_coarse_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

size_t netlink_msgs_len(const void *buf, size_t len)
{
	int remaining = len > INT_MAX ? INT_MAX : (int)len;
	const struct nlmsghdr *nlh = buf;

	while (netlink_msg_ok(nlh, remaining))
		nlh = mnl_nlmsg_next(nlh, &remaining);
	return (size_t)((const char *)nlh - (const char *)buf);
}

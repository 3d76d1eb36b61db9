/*
 * What every netlink user of the data plane needs alike (nfq.c, nlmirror.c, neigh.c,
 * rules_nft.c): a libmnl socket opened and bound to an automatic port id, with its buffers
 * raised past the system's limits where CAP_NET_ADMIN allows; and the monotonic clock their
 * deadlines use.
 */
#ifndef PGMROUTER_NETLINK_H
#define PGMROUTER_NETLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

struct mnl_socket;

struct netlink_socket_config {
	int bus;	  /* NETLINK_ROUTE, NETLINK_NETFILTER */
	int flags;	  /* SOCK_NONBLOCK; SOCK_CLOEXEC is always set */
	uint32_t rcvbuf;  /* bytes, 0: the system's */
	uint32_t sndbuf;  /* bytes, 0: the system's */
	const char *what; /* for the message: "nfqueue" */
};

/* Returns the socket, or NULL with one sentence in err. With *rcvbuf_forced (may be NULL):
   whether SO_RCVBUFFORCE took the size (else SO_RCVBUF, capped by net.core.rmem_max). */
struct mnl_socket *netlink_open(
	const struct netlink_socket_config *cfg, bool *rcvbuf_forced, char *err, size_t errlen);

/* CLOCK_MONOTONIC in milliseconds and microseconds; the coarse one (a few ms behind, cheaper)
   for what ages in seconds, on the packet path. */
int64_t netlink_now_ms(void);
uint64_t netlink_now_us(void);
uint64_t netlink_now_coarse_us(void);

/*
 * Whether a whole message starts at nlh with len bytes left: libmnl's mnl_nlmsg_ok() compares
 * the message length as an int, so one above INT_MAX passes and mnl_nlmsg_next() steps
 * gigabytes on. Every walk over received messages uses this one.
 */
static inline bool netlink_msg_ok(const struct nlmsghdr *nlh, int len)
{
	return len >= (int)sizeof(*nlh) && nlh->nlmsg_len >= sizeof(*nlh) &&
	       nlh->nlmsg_len <= (unsigned)len;
}
/* The bytes of the whole messages buf starts with: what mnl_cb_run() (which walks with
   mnl_nlmsg_ok()) may be given. */
size_t netlink_msgs_len(const void *buf, size_t len);

#endif /* PGMROUTER_NETLINK_H */

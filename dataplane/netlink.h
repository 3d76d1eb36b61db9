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

#endif /* PGMROUTER_NETLINK_H */

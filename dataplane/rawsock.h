/*
 * Packet output: one raw socket per family (IPPROTO_RAW, so the header is the caller's) that
 * sends complete datagrams built by the caller (pgm_build_ip): NCFs and POLLs multicast with the
 * data source's address as IP source and Router Alert in the header, NAKs unicast upstream from
 * the router's own address; and one packet socket for multicast onto Ethernet links (below).
 * The family is the datagram's IP version.
 *
 * The egress interface is chosen per packet with an IP_PKTINFO control message (ipi_ifindex;
 * IPv6: IPV6_PKTINFO, and the destination's scope for link-local ones):
 * one descriptor serves every interface, nothing has to follow interfaces that come, go or get
 * renamed, and the choice is made by the kernel's route lookup for exactly that packet. For a
 * multicast destination the kernel sends out of that interface only; for unicast it restricts
 * the route lookup to it (ifindex 0 lets the routing table decide).
 *
 * The kernel keeps the caller's header as given (source address included: IP_HDRINCL sockets may
 * use any source) except that it fills the total length, an IP id of 0 and the header checksum.
 * Multicast loopback is off, so the router's own multicast never re-enters its multicast routing.
 * IPv6 datagrams go exactly as given (no checksum there; the hop limit replaced as the TTL is).
 * The sockets are non-blocking: a full send buffer drops the packet and counts it. Without
 * IPv6 in the kernel its datagrams are refused and counted (other_errors, EAFNOSUPPORT).
 *
 * Multicast out of an Ethernet interface (rawsock_set_link) goes through a packet socket instead,
 * as a frame to the group's MAC address (RFC 1112 6.4; 33:33 and the group's low 32 bits for
 * IPv6, RFC 2464 7), with the header completed as the IP stack
 * would (the checksum, an id where the caller left 0): the same frame, without the route lookup
 * (for multicast, a route entry allocated and freed per datagram) and the IP output path. Such
 * frames skip netfilter's output and postrouting hooks, which the raw socket's datagrams pass;
 * rawsock_set_link_output(rs, false) sends everything through the IP stack. Queueing disciplines
 * and capture taps still see them. Unicast out of an Ethernet interface (NAKs upstream, POLRs)
 * goes the same way to a next hop the kernel has confirmed (neigh.h, ARP or NDP: REACHABLE or PERMANENT,
 * asked again every second); to any other, through the IP stack, which resolves or confirms it.
 * Interfaces of other link layers and multicast loopback always use the IP stack.
 *
 * Batches: the packets a burst of input makes (an NCF and a NAK per NAK received, a timer run's
 * repeats) can go in one sendmmsg() instead of a sendmsg() each. Between rawsock_batch_begin()
 * and rawsock_batch_end(), rawsock_send() checks and copies the datagram and returns 0;
 * rawsock_batch_send(), the end, or a full batch send them in the order given (those through the
 * link layer first) and count every outcome as a send of its own would.
 */
#ifndef PGMROUTER_RAWSOCK_H
#define PGMROUTER_RAWSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/neigh.h"

#define RAWSOCK_BATCH_MAX   64u		  /* datagrams per sendmmsg() */
#define RAWSOCK_BATCH_BYTES (128u * 1024) /* their copies; any datagram fits an empty batch */
/* The default send buffer. A frame stays charged to its socket until the device (or a veth
   peer) lets go of it, so the buffer bounds what one receive round may send at once: up to 512
   queued packets, two packets out for each, a full-size one about 2.3 KB of buffer. The system
   default (about 200 KB) refuses part of a burst the kernel's own forwarding would pass. */
#define RAWSOCK_DEFAULT_SNDBUF (4u * 1024 * 1024)

struct rawsock_config {
	int ttl; /* 1..255: overrides the TTL of every datagram; 0 = keep the caller's */
	bool multicast_loop; /* default false */
	uint32_t sndbuf;     /* send buffer (default RAWSOCK_DEFAULT_SNDBUF), 0 = the system's */
};
void rawsock_config_default(struct rawsock_config *cfg);

struct rawsock_stats {
	uint64_t packets, bytes;
	uint64_t would_block; /* send buffer full (EAGAIN, ENOBUFS) */
	uint64_t too_big;     /* EMSGSIZE: larger than the interface MTU */
	uint64_t fragmented;  /* IPv4 datagrams larger than their interface's MTU, split */
	uint64_t fragments;   /* the fragments made of them */
	uint64_t frag_refused; /* of too_big: larger than the MTU with DF set (or the MTU < 68) */
	uint64_t unreachable; /* ENETUNREACH, EHOSTUNREACH, ENODEV, ENXIO (interface gone) */
	uint64_t bad_input;   /* not a well-formed IPv4 or IPv6 datagram, or ifindex invalid */
	uint64_t other_errors;
	uint64_t link_packets; /* of packets: sent through the link layer */
	uint64_t link_unicast; /* of those: unicast, to a neighbour's address */
	struct neigh_stats neigh; /* the neighbour lookups for unicast (neigh.h) */
	int neigh_errno;	  /* why they are not available */
	bool neigh_available;
	int last_errno;
	int link_errno;	     /* why the packet socket did not open */
	int ipv6_errno;	     /* why the IPv6 raw socket did not open (0: open) */
	bool link_available; /* the packet socket is open */
	bool link_output;    /* and in use */
	uint32_t sndbuf_bytes; /* the raw socket's send buffer as the kernel has it */
};

struct rawsock;
/* NULL with one sentence in err (CAP_NET_RAW is needed). */
struct rawsock *rawsock_open(const struct rawsock_config *cfg, char *err, size_t errlen);
void rawsock_close(struct rawsock *rs);
/*
 * Sends one IPv4 or IPv6 datagram (header included, any options or extension headers in it
 * kept) out of ifindex (0 = by route). Returns 0, or -1 with errno set; every failure is counted.
 */
int rawsock_send(struct rawsock *rs, int ifindex, const void *datagram, size_t len);
/*
 * The same with the TTL (IPv6: hop limit) given (1..255) in place of the datagram's and of the configured one: a
 * forwarded copy, sent from the caller's buffer, which is left unchanged.
 */
int rawsock_send_ttl(struct rawsock *rs, int ifindex, const void *datagram, size_t len, uint8_t ttl);
/*
 * rawsock_send() queues from here on (a malformed datagram is still refused at once, and
 * counted); returns 0 then means queued.
 */
void rawsock_batch_begin(struct rawsock *rs);
/*
 * Sends what is queued and says how many datagrams went and how many the kernel refused since the
 * last call (a full batch sends before either is called); _end also ends the batch.
 */
void rawsock_batch_send(struct rawsock *rs, uint64_t *sent, uint64_t *failed);
void rawsock_batch_end(struct rawsock *rs, uint64_t *sent, uint64_t *failed);
/*
 * rawsock_send() (ttl 0) or rawsock_send_ttl() that sends now even in a batch, ahead of what is
 * queued, which stays queued: an NCF leaves before the NAKs upstream of its receive round. 0 or
 * -1 as those.
 */
int rawsock_send_first(
	struct rawsock *rs, int ifindex, const void *datagram, size_t len, uint8_t ttl);
void rawsock_get_stats(const struct rawsock *rs, struct rawsock_stats *st);
/*
 * Called for every datagram the kernel refused, sent alone or in a batch, with the interface it
 * was for, its bytes and the errno (the statistics count it too). NULL: no call.
 */
typedef void (*rawsock_failed_fn)(
	void *ctx, int ifindex, const uint8_t *datagram, size_t len, int err);
void rawsock_set_failed_fn(struct rawsock *rs, rawsock_failed_fn fn, void *ctx);
/*
 * Records whether ifindex is an Ethernet link (ARPHRD_ETHER: Ethernet, veth, VLAN, bridge, bond),
 * where multicast can go through the link layer: a bit per ifindex, up to
 * RAWSOCK_LINK_MAX_IFINDEX (128 KiB). Returns 0, or -1 with errno ENOMEM, or ERANGE for an
 * ifindex outside 1..RAWSOCK_LINK_MAX_IFINDEX; that interface then stays with the IP stack.
 */
#define RAWSOCK_LINK_MAX_IFINDEX (1 << 20)
int rawsock_set_link(struct rawsock *rs, int ifindex, bool ethernet);
/*
 * Records ifindex's MTU (0: unknown). An IPv4 datagram larger than its interface's MTU leaves as
 * the kernel's fragments would (dataplane/wire/ipfrag.h: same id, 8-byte offsets, MF), through
 * the link layer or the IP stack alike, each counted as a datagram sent; with DF set it is
 * refused (EMSGSIZE, too_big and frag_refused). IPv6 datagrams are never fragmented here: larger
 * than the MTU, the kernel refuses them (too_big). Returns 0, or -1 with errno ERANGE (ifindex
 * outside 1..RAWSOCK_LINK_MAX_IFINDEX) or ENOMEM; that interface then is not fragmented for.
 */
int rawsock_set_mtu(struct rawsock *rs, int ifindex, uint32_t mtu);
/* Link-layer output on or off (on when the packet socket opened); false when it cannot be on. */
bool rawsock_set_link_output(struct rawsock *rs, bool enabled);
/*
 * The IPv6 source address the kernel would give a datagram to dst out of ifindex (the scope of
 * a link-local dst): a datagram socket connected to it, nothing sent. False when there is none
 * (no route, no address of the scope).
 */
bool rawsock_source6(struct rawsock *rs, int ifindex, const uint8_t dst[16], uint8_t src[16]);

#endif /* PGMROUTER_RAWSOCK_H */

/*
 * Packet output through one IP_HDRINCL raw socket per family, egress chosen per packet with
 * IP_PKTINFO or IPV6_PKTINFO, and multicast onto Ethernet links through one packet socket (see
 * rawsock.h).
 */
#include "dataplane/rawsock.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/neigh.h"
#include "dataplane/netlink.h"
#include "dataplane/wire/ipfrag.h"
#include "dataplane/wire/pgm_wire.h"

#define IPV4_MAX_HEADER 60
#define IPV6_HEADER	40
/* Room for the IP_PKTINFO or IPV6_PKTINFO control message: at least CMSG_SPACE of the larger,
 * which not every compiler takes as a constant in a struct member's size. */
#define PKTINFO_CONTROL_ROOM                                                                      \
	(sizeof(struct cmsghdr) + sizeof(struct in6_pktinfo) + sizeof(size_t))

/* One queued datagram: its destination and egress, the datagram itself in the arena. */
struct rawsock_slot {
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} dst; /* through the IP stack */
	struct sockaddr_ll ll;	/* through the link layer */
	struct {
		/* aligned as a cmsghdr; not a union with one, whose flexible array member would
		   make this slot a variable-sized type in the middle of struct rawsock */
		_Alignas(struct cmsghdr) char buf[PKTINFO_CONTROL_ROOM];
	} control;
	struct iovec iov;
	int ifindex; /* the interface it is for */
};

struct rawsock {
	int fd;	     /* the raw socket */
	int fd6;     /* the IPv6 one, -1 without (a kernel without IPv6) */
	int probe6;  /* a UDP socket that asks the kernel for a source address, -1 until needed */
	int link_fd; /* the packet socket (sends only), -1 without one */
	bool link_output;
	uint8_t *ether; /* bit per ifindex: an Ethernet link layer */
	size_t ether_bytes;
	uint32_t *mtu; /* per ifindex, 0: unknown (no fragmenting) */
	size_t mtu_count;
	uint16_t next_id;	   /* IP id for datagrams that come without one (link layer only) */
	struct neigh_cache *neigh; /* unicast next hops; NULL: unicast goes by the IP stack */
	struct rawsock_config cfg;
	struct rawsock_stats st;

	/* rawsock_batch_begin() .. rawsock_batch_flush(): datagrams queued for sendmmsg(), one
	   call per socket (queued and queued6 through the IP stack, link_queued through the link
	   layer) */
	bool batching;
	unsigned queued, queued6, link_queued;
	size_t arena_used;
	uint64_t batch_sent, batch_failed; /* outcomes since the batch began */
	rawsock_failed_fn failed_fn;	   /* each refused datagram, with failed_ctx */
	void *failed_ctx;
	struct rawsock_slot slots[RAWSOCK_BATCH_MAX];
	struct mmsghdr msgs[RAWSOCK_BATCH_MAX];
	struct mmsghdr msgs6[RAWSOCK_BATCH_MAX];
	struct mmsghdr link_msgs[RAWSOCK_BATCH_MAX];
	uint8_t arena[RAWSOCK_BATCH_BYTES];
	uint8_t frag[0xffff]; /* one fragment being made */
};

void rawsock_config_default(struct rawsock_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sndbuf = RAWSOCK_DEFAULT_SNDBUF;
}

/* The configured send buffer (0: the system's), beyond the system limit where allowed; returns
   the size the kernel has (0 when unknown). */
static uint32_t set_sndbuf(int fd, uint32_t bytes)
{
	int val = (int)bytes;
	socklen_t len = sizeof(val);

	if (bytes != 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &val, sizeof(val)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &val, sizeof(val));
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &val, &len) < 0 || val < 0)
		return 0;
	return (uint32_t)val;
}

struct rawsock *rawsock_open(const struct rawsock_config *cfg, char *err, size_t errlen)
{
	struct rawsock *rs = calloc(1, sizeof(*rs));
	int off = 0;
	unsigned char loop;

	if (rs == NULL) {
		snprintf(err, errlen, "rawsock: out of memory");
		return NULL;
	}
	if (cfg != NULL)
		rs->cfg = *cfg;
	if (rs->cfg.ttl < 0 || rs->cfg.ttl > 255) {
		snprintf(err, errlen, "rawsock: TTL %d out of range 1..255", rs->cfg.ttl);
		free(rs);
		return NULL;
	}
	rs->link_fd = -1;
	rs->fd6 = -1;
	rs->probe6 = -1;
	rs->fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_RAW);
	if (rs->fd < 0) {
		if (errno == EPERM || errno == EACCES)
			snprintf(err, errlen, "rawsock: a raw socket needs root (CAP_NET_RAW)");
		else
			snprintf(err, errlen, "rawsock: cannot open a raw socket: %s",
				strerror(errno));
		free(rs);
		return NULL;
	}
	loop = rs->cfg.multicast_loop ? 1 : 0;
	if (setsockopt(rs->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) < 0) {
		snprintf(err, errlen, "rawsock: cannot set IP_MULTICAST_LOOP: %s", strerror(errno));
		rawsock_close(rs);
		return NULL;
	}
	/* IPPROTO_RAW implies IP_HDRINCL; say so anyway, it is the point of this socket. */
	off = 1;
	(void)setsockopt(rs->fd, IPPROTO_IP, IP_HDRINCL, &off, sizeof(off));
	rs->st.sndbuf_bytes = set_sndbuf(rs->fd, rs->cfg.sndbuf);
	/* IPv6: IPPROTO_RAW means the header is the caller's too (the kernel sets hdrincl). A
	   kernel without IPv6 leaves IPv6 output off, counted per datagram, IPv4 unaffected. */
	rs->fd6 = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_RAW);
	if (rs->fd6 < 0) {
		rs->st.ipv6_errno = errno;
	} else {
		int loop6 = rs->cfg.multicast_loop ? 1 : 0;

		if (setsockopt(rs->fd6, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &loop6,
			    sizeof(loop6)) < 0) {
			snprintf(err, errlen, "rawsock: cannot set IPV6_MULTICAST_LOOP: %s",
				strerror(errno));
			rawsock_close(rs);
			return NULL;
		}
		(void)set_sndbuf(rs->fd6, rs->cfg.sndbuf);
	}
	/* Protocol 0: the socket receives nothing. Without it, everything goes by the IP stack. */
	rs->link_fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (rs->link_fd < 0)
		rs->st.link_errno = errno;
	else
		(void)set_sndbuf(rs->link_fd, rs->cfg.sndbuf);
	rs->link_output = rs->link_fd >= 0;
	if (rs->link_fd >= 0) {
		char nerr[128];

		rs->neigh = neigh_cache_open(nerr, sizeof(nerr));
		if (rs->neigh == NULL)
			rs->st.neigh_errno = errno != 0 ? errno : EIO;
	}
	rs->next_id = (uint16_t)getpid();
	return rs;
}

bool rawsock_set_link_output(struct rawsock *rs, bool enabled)
{
	rs->link_output = enabled && rs->link_fd >= 0;
	return rs->link_output == enabled;
}

int rawsock_set_link(struct rawsock *rs, int ifindex, bool ethernet)
{
	size_t byte;
	uint8_t bit;

	if (ifindex <= 0) {
		errno = ERANGE;
		return -1;
	}
	byte = (size_t)ifindex / 8;
	bit = (uint8_t)(1u << (ifindex % 8));
	if (!ethernet) {
		if (byte < rs->ether_bytes)
			rs->ether[byte] &= (uint8_t)~bit;
		if (rs->neigh != NULL)
			neigh_cache_flush(rs->neigh); /* the interface went or changed */
		return 0; /* beyond the table: nothing recorded, nothing to forget */
	}
	if (ifindex > RAWSOCK_LINK_MAX_IFINDEX) {
		errno = ERANGE;
		return -1;
	}
	if (byte >= rs->ether_bytes) {
		size_t cap = RAWSOCK_LINK_MAX_IFINDEX / 8 + 1, n = 2 * rs->ether_bytes;
		uint8_t *e;

		if (n < byte + 1)
			n = byte + 1;
		if (n > cap)
			n = cap;
		e = realloc(rs->ether, n);
		if (e == NULL) {
			errno = ENOMEM;
			return -1; /* that interface's multicast goes by the IP stack */
		}
		memset(e + rs->ether_bytes, 0, n - rs->ether_bytes);
		rs->ether = e;
		rs->ether_bytes = n;
	}
	rs->ether[byte] |= bit;
	return 0;
}

int rawsock_set_mtu(struct rawsock *rs, int ifindex, uint32_t mtu)
{
	size_t i = (size_t)ifindex;

	if (ifindex <= 0 || ifindex > RAWSOCK_LINK_MAX_IFINDEX) {
		errno = ERANGE;
		return -1;
	}
	if (i >= rs->mtu_count) {
		size_t n = 2 * rs->mtu_count;
		uint32_t *m;

		if (mtu == 0)
			return 0; /* nothing recorded beyond the table */
		if (n < i + 1)
			n = i + 1;
		if (n > RAWSOCK_LINK_MAX_IFINDEX + 1)
			n = RAWSOCK_LINK_MAX_IFINDEX + 1;
		m = realloc(rs->mtu, n * sizeof(*m));
		if (m == NULL) {
			errno = ENOMEM;
			return -1;
		}
		memset(m + rs->mtu_count, 0, (n - rs->mtu_count) * sizeof(*m));
		rs->mtu = m;
		rs->mtu_count = n;
	}
	rs->mtu[i] = mtu;
	return 0;
}

void rawsock_close(struct rawsock *rs)
{
	if (rs == NULL)
		return;
	if (rs->fd >= 0)
		close(rs->fd);
	if (rs->fd6 >= 0)
		close(rs->fd6);
	if (rs->probe6 >= 0)
		close(rs->probe6);
	if (rs->link_fd >= 0)
		close(rs->link_fd);
	neigh_cache_close(rs->neigh);
	free(rs->ether);
	free(rs->mtu);
	free(rs);
}

static int rawsock_bad_input(struct rawsock *rs)
{
	rs->st.bad_input++;
	rs->st.last_errno = EINVAL;
	errno = EINVAL;
	return -1;
}

/* Checks a datagram; returns the length of the header this module may change (IPv4's with its
   options, IPv6's fixed one), or 0 after counting it as bad input, or as an error without an
   IPv6 socket. */
static size_t rawsock_check(struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len)
{
	size_t ihl;

	if (ip != NULL && len >= IPV6_HEADER && ifindex >= 0 && (ip[0] >> 4) == 6) {
		if ((size_t)(ip[4] << 8 | ip[5]) + IPV6_HEADER != len) {
			(void)rawsock_bad_input(rs);
			return 0;
		}
		if (rs->fd6 < 0) {
			rs->st.other_errors++;
			rs->st.last_errno = EAFNOSUPPORT;
			errno = EAFNOSUPPORT;
			return 0;
		}
		return IPV6_HEADER;
	}
	if (ip == NULL || len < 20 || len > 0xffff || ifindex < 0 || (ip[0] >> 4) != 4) {
		(void)rawsock_bad_input(rs);
		return 0;
	}
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > len || (size_t)(ip[2] << 8 | ip[3]) != len) {
		(void)rawsock_bad_input(rs);
		return 0;
	}
	return ihl;
}

/* The same for IPv6: IPV6_PKTINFO, and the interface as the scope of a link-local or
   link-scope multicast destination (the kernel takes it only for those). */
static void rawsock_address6(struct msghdr *msg, struct sockaddr_in6 *dst, void *control,
	size_t control_len, const uint8_t *ip, int ifindex)
{
	memset(dst, 0, sizeof(*dst));
	dst->sin6_family = AF_INET6;
	memcpy(&dst->sin6_addr, ip + 24, 16);
	dst->sin6_scope_id = ifindex > 0 ? (uint32_t)ifindex : 0;
	msg->msg_name = dst;
	msg->msg_namelen = sizeof(*dst);
	if (ifindex > 0) {
		struct cmsghdr *cm;
		struct in6_pktinfo pi = {.ipi6_ifindex = (unsigned)ifindex};

		(void)control_len;
		assert(control_len >= CMSG_SPACE(sizeof(pi)));
		memset(control, 0, CMSG_SPACE(sizeof(pi)));
		msg->msg_control = control;
		msg->msg_controllen = CMSG_SPACE(sizeof(pi));
		cm = CMSG_FIRSTHDR(msg);
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
	} else {
		msg->msg_control = NULL;
		msg->msg_controllen = 0;
	}
}

/* Destination and egress of a message: the address from the header, IP_PKTINFO for ifindex. */
static void rawsock_address(struct msghdr *msg, struct sockaddr_in *dst, void *control,
	size_t control_len, const uint8_t *ip, int ifindex)
{
	memset(dst, 0, sizeof(*dst));
	dst->sin_family = AF_INET;
	memcpy(&dst->sin_addr, ip + 16, 4);
	msg->msg_name = dst;
	msg->msg_namelen = sizeof(*dst);
	if (ifindex > 0) {
		struct cmsghdr *cm;
		struct in_pktinfo pi = {.ipi_ifindex = ifindex};

		/* Exactly one message: trailing room would read as a malformed second one. */
		(void)control_len; /* checked only in debug builds */
		assert(control_len >= CMSG_SPACE(sizeof(pi)));
		memset(control, 0, CMSG_SPACE(sizeof(pi)));
		msg->msg_control = control;
		msg->msg_controllen = CMSG_SPACE(sizeof(pi));
		cm = CMSG_FIRSTHDR(msg);
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
	} else {
		msg->msg_control = NULL;
		msg->msg_controllen = 0;
	}
}

/*
 * Whether a datagram goes through the link layer, and to which MAC address: out of a given
 * Ethernet interface, multicast to the group's own address (RFC 1112 6.4; IPv6: 33:33 and the
 * group's low 32 bits, RFC 2464 7), unicast to a next hop the kernel has confirmed (neigh.h:
 * ARP, NDP) when the destination is on the interface's link; the IP stack would add nothing but
 * a route lookup. Multicast loopback needs the IP stack.
 */
static bool rawsock_link_dest(struct rawsock *rs, int ifindex, const uint8_t *ip, uint8_t mac[6])
{
	size_t byte = (size_t)ifindex / 8;

	if (!rs->link_output || rs->cfg.multicast_loop || ifindex <= 0 || byte >= rs->ether_bytes ||
		(rs->ether[byte] & (1u << (ifindex % 8))) == 0)
		return false;
	if ((ip[0] >> 4) == 6) {
		if (ip[24] == 0xff) {
			mac[0] = mac[1] = 0x33;
			memcpy(mac + 2, ip + 36, 4);
			return true;
		}
		return rs->neigh != NULL && neigh_cache_lookup(rs->neigh, ifindex, AF_INET6,
						    ip + 24, netlink_now_coarse_us(), mac);
	}
	if ((ip[16] & 0xf0) == 0xe0) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = ip[17] & 0x7f;
		mac[4] = ip[18];
		mac[5] = ip[19];
		return true;
	}
	/* unicast: not the limited broadcast nor class E, and only with a neighbour answer */
	if (rs->neigh == NULL || ip[16] >= 0xf0 || ip[16] == 0)
		return false;
	return neigh_cache_lookup(
		rs->neigh, ifindex, AF_INET, ip + 16, netlink_now_coarse_us(), mac);
}

/* The frame's destination: ifindex and mac, the EtherType from the IP version. */
static void rawsock_link_address(
	struct sockaddr_ll *ll, int ifindex, const uint8_t mac[6], bool ipv6)
{
	memset(ll, 0, sizeof(*ll));
	ll->sll_family = AF_PACKET;
	ll->sll_protocol = htons(ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	ll->sll_ifindex = ifindex;
	ll->sll_halen = ETH_ALEN;
	memcpy(ll->sll_addr, mac, ETH_ALEN);
}

/*
 * What the IP stack does to a header it is given (IP_HDRINCL), done here for the link layer: the
 * TTL replaced unless 0, an id where there is none, the header checksum.
 */
static void rawsock_link_header(struct rawsock *rs, uint8_t *h, size_t ihl, uint8_t ttl)
{
	if (ttl > 0)
		h[8] = ttl;
	if (h[4] == 0 && h[5] == 0) {
		if (++rs->next_id == 0)
			rs->next_id = 1;
		h[4] = (uint8_t)(rs->next_id >> 8);
		h[5] = (uint8_t)rs->next_id;
	}
	h[10] = h[11] = 0;
	{
		uint16_t c = pgm_ip_header_checksum(h, ihl);

		h[10] = (uint8_t)(c >> 8);
		h[11] = (uint8_t)c;
	}
}

/*
 * A message's destination (msg zeroed by the caller), through the link layer or the IP stack,
 * into slot; h is the header that goes (a copy of the caller's, changed here as that path needs).
 */
static void rawsock_destination(struct rawsock *rs, const uint8_t *mac, struct msghdr *msg,
	struct rawsock_slot *slot, uint8_t *h, int ifindex, uint8_t ttl)
{
	bool ipv6 = (h[0] >> 4) == 6;

	/* IPv6 has no header checksum and no id outside a fragment header: the hop limit is all
	   the IP stack would change */
	if (ipv6 && ttl > 0)
		h[7] = ttl;
	if (mac != NULL) {
		if (!ipv6)
			rawsock_link_header(rs, h, (size_t)(h[0] & 0x0f) * 4, ttl);
		rawsock_link_address(&slot->ll, ifindex, mac, ipv6);
		msg->msg_name = &slot->ll;
		msg->msg_namelen = sizeof(slot->ll);
		return;
	}
	if (ipv6) {
		rawsock_address6(msg, &slot->dst.v6, slot->control.buf, sizeof(slot->control.buf), h,
			ifindex);
		return;
	}
	if (ttl > 0)
		h[8] = ttl;
	rawsock_address(
		msg, &slot->dst.v4, slot->control.buf, sizeof(slot->control.buf), h, ifindex);
}

/* Counts a frame the link layer sent, to the MAC address dst. */
static void rawsock_count_link(struct rawsock *rs, const uint8_t *dst)
{
	rs->st.link_packets++;
	if ((dst[0] & 1) == 0)
		rs->st.link_unicast++;
}

/* Counts one datagram's outcome: n bytes sent, or the send's errno e. */
static void rawsock_count(struct rawsock *rs, ssize_t n, int e)
{
	if (n < 0) {
		rs->st.last_errno = e;
		switch (e) {
		case EAGAIN:
		case ENOBUFS:
			rs->st.would_block++;
			break;
		case EMSGSIZE:
			rs->st.too_big++;
			break;
		case ENETUNREACH:
		case EHOSTUNREACH:
		case ENODEV:
		case ENXIO:
		case ENETDOWN:
			rs->st.unreachable++;
			break;
		default:
			rs->st.other_errors++;
			break;
		}
		return;
	}
	rs->st.packets++;
	rs->st.bytes += (uint64_t)n;
}

/* Tells the owner about a datagram the kernel refused (counted already). */
static void rawsock_failed(
	struct rawsock *rs, int ifindex, const uint8_t *datagram, size_t len, int e)
{
	if (rs->failed_fn != NULL)
		rs->failed_fn(rs->failed_ctx, ifindex, datagram, len, e);
}

static ssize_t rawsock_sendmsg(int fd, const struct msghdr *msg)
{
	ssize_t n;

	do {
		n = sendmsg(fd, msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n;
}

static void rawsock_send_queued(struct rawsock *rs);

/* Queues a checked datagram (a copy, TTL overridden in it unless 0) for the next flush. */
static void rawsock_queue(
	struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len, uint8_t ttl)
{
	struct rawsock_slot *slot;
	struct msghdr *msg;
	uint8_t *copy, mac[ETH_ALEN];
	bool by_link = rawsock_link_dest(rs, ifindex, ip, mac);
	struct mmsghdr *m;

	if (rs->queued + rs->queued6 + rs->link_queued == RAWSOCK_BATCH_MAX ||
		rs->arena_used + len > sizeof(rs->arena))
		rawsock_send_queued(rs);
	slot = &rs->slots[rs->queued + rs->queued6 + rs->link_queued];
	if (by_link)
		m = &rs->link_msgs[rs->link_queued++];
	else if ((ip[0] >> 4) == 6)
		m = &rs->msgs6[rs->queued6++];
	else
		m = &rs->msgs[rs->queued++];
	m->msg_len = 0; /* until sent */
	msg = &m->msg_hdr;
	copy = rs->arena + rs->arena_used;
	rs->arena_used += len;
	memcpy(copy, ip, len);
	memset(msg, 0, sizeof(*msg));
	rawsock_destination(rs, by_link ? mac : NULL, msg, slot, copy, ifindex, ttl);
	slot->iov.iov_base = copy;
	slot->iov.iov_len = len;
	slot->ifindex = ifindex;
	msg->msg_iov = &slot->iov;
	msg->msg_iovlen = 1;
}

/*
 * Sends count queued datagrams of one socket in order, as few sendmmsg() calls as the kernel
 * allows, and counts each outcome as a sendmsg() of its own would. sendmmsg() reports an error
 * only when nothing went, so after a partial send the call starts again at the datagram it
 * stopped at: that one's error is then known (a transient refusal, a full buffer, may go
 * through the second time). A datagram sent has its msg_len set.
 */
static void rawsock_send_msgs(struct rawsock *rs, int fd, struct mmsghdr *msgs, unsigned count)
{
	unsigned done = 0;

	while (done < count) {
		int n = sendmmsg(fd, msgs + done, count - done, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			/* the message's iovec is its slot's */
			const struct rawsock_slot *slot =
				(const struct rawsock_slot *)((const char *)msgs[done]
								      .msg_hdr.msg_iov -
							      offsetof(struct rawsock_slot, iov));

			rawsock_count(rs, -1, e);
			rawsock_failed(rs, slot->ifindex, slot->iov.iov_base, slot->iov.iov_len, e);
			rs->batch_failed++;
			done++;
			continue;
		}
		for (int i = 0; i < n; i++)
			rawsock_count(rs, (ssize_t)msgs[done + (unsigned)i].msg_len, 0);
		rs->batch_sent += (unsigned)n;
		done += (unsigned)n;
	}
}

/* The link layer's datagrams first (multicast onto LANs), then the IP stack's, IPv4 then IPv6. */
static void rawsock_send_queued(struct rawsock *rs)
{
	rawsock_send_msgs(rs, rs->link_fd, rs->link_msgs, rs->link_queued);
	for (unsigned i = 0; i < rs->link_queued; i++) {
		const struct sockaddr_ll *ll = rs->link_msgs[i].msg_hdr.msg_name;

		if (rs->link_msgs[i].msg_len != 0)
			rawsock_count_link(rs, ll->sll_addr);
	}
	rawsock_send_msgs(rs, rs->fd, rs->msgs, rs->queued);
	rawsock_send_msgs(rs, rs->fd6, rs->msgs6, rs->queued6);
	rs->queued = rs->queued6 = rs->link_queued = 0;
	rs->arena_used = 0;
}

static int rawsock_send_common(
	struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len, uint8_t ttl);

/*
 * An IPv4 datagram larger than its interface's MTU: sent (or queued) as the kernel's fragments
 * (ipfrag.h), an id given where it has none; with DF set, or an MTU too small for any fragment,
 * refused as the kernel refuses it (EMSGSIZE). Returns 0 when every fragment went (or was
 * queued), else -1 with the last error.
 */
static int rawsock_send_fragments(
	struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len, uint8_t ttl)
{
	size_t mtu = rs->mtu[ifindex];
	unsigned count;
	uint16_t id = (uint16_t)(ip[4] << 8 | ip[5]);
	int rc = 0, e = 0;

	switch (ipfrag_plan(ip, len, mtu, &count)) {
	case IPFRAG_SPLIT:
		break;
	case IPFRAG_DF:
	case IPFRAG_MTU_SMALL:
		rawsock_count(rs, -1, EMSGSIZE);
		rs->st.frag_refused++;
		rawsock_failed(rs, ifindex, ip, len, EMSGSIZE);
		errno = EMSGSIZE;
		return -1;
	default:
		return rawsock_bad_input(rs); /* checked already: not reached */
	}
	if (id == 0) {
		if (++rs->next_id == 0)
			rs->next_id = 1;
		id = rs->next_id;
	}
	rs->st.fragmented++;
	for (unsigned i = 0; i < count; i++) {
		size_t n = ipfrag_build(ip, len, mtu, i, id, rs->frag);

		rs->st.fragments++;
		if (rawsock_send_common(rs, ifindex, rs->frag, n, ttl) < 0) {
			rc = -1;
			e = errno;
		}
	}
	if (rc < 0)
		errno = e;
	return rc;
}

/* Sends (or queues) one datagram with its TTL replaced by ttl, unless 0. */
static int rawsock_send_common(
	struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len, uint8_t ttl)
{
	uint8_t header[IPV4_MAX_HEADER];
	struct rawsock_slot slot; /* its destination and control room; iov is the two below */
	struct iovec iov[2];
	struct msghdr msg = {0};
	size_t ihl;
	ssize_t n;
	uint8_t mac[ETH_ALEN];
	bool by_link;
	int e;

	if ((ihl = rawsock_check(rs, ifindex, ip, len)) == 0)
		return -1;
	if (ifindex > 0 && (size_t)ifindex < rs->mtu_count && rs->mtu[ifindex] != 0 &&
		len > rs->mtu[ifindex] && (ip[0] >> 4) == 4)
		return rawsock_send_fragments(rs, ifindex, ip, len, ttl);
	if (rs->batching) {
		rawsock_queue(rs, ifindex, ip, len, ttl);
		return 0;
	}
	/* The header is copied so it can be changed (TTL, id, checksum) without touching the
	 * caller's buffer. */
	memcpy(header, ip, ihl);
	iov[0].iov_base = header;
	iov[0].iov_len = ihl;
	iov[1].iov_base = (void *)(ip + ihl);
	iov[1].iov_len = len - ihl;
	msg.msg_iov = iov;
	msg.msg_iovlen = len > ihl ? 2 : 1;
	by_link = rawsock_link_dest(rs, ifindex, ip, mac);
	rawsock_destination(rs, by_link ? mac : NULL, &msg, &slot, header, ifindex, ttl);
	n = rawsock_sendmsg(by_link ? rs->link_fd : (ip[0] >> 4) == 6 ? rs->fd6 : rs->fd, &msg);
	e = errno;
	rawsock_count(rs, n, e);
	if (n < 0) {
		rawsock_failed(rs, ifindex, ip, len, e);
		errno = e;
		return -1;
	}
	if (by_link)
		rawsock_count_link(rs, mac);
	return 0;
}

int rawsock_send(struct rawsock *rs, int ifindex, const void *datagram, size_t len)
{
	return rawsock_send_common(rs, ifindex, datagram, len, (uint8_t)rs->cfg.ttl);
}

int rawsock_send_ttl(struct rawsock *rs, int ifindex, const void *datagram, size_t len, uint8_t ttl)
{
	if (ttl == 0)
		return rawsock_bad_input(rs);
	return rawsock_send_common(rs, ifindex, datagram, len, ttl);
}

void rawsock_batch_begin(struct rawsock *rs)
{
	rs->batching = true;
}

void rawsock_batch_send(struct rawsock *rs, uint64_t *sent, uint64_t *failed)
{
	rawsock_send_queued(rs);
	*sent = rs->batch_sent;
	*failed = rs->batch_failed;
	rs->batch_sent = rs->batch_failed = 0;
}

void rawsock_batch_end(struct rawsock *rs, uint64_t *sent, uint64_t *failed)
{
	rawsock_batch_send(rs, sent, failed);
	rs->batching = false;
}

int rawsock_send_first(
	struct rawsock *rs, int ifindex, const void *datagram, size_t len, uint8_t ttl)
{
	bool batching = rs->batching;
	int rc;

	rs->batching = false;
	rc = rawsock_send_common(rs, ifindex, datagram, len, ttl != 0 ? ttl : (uint8_t)rs->cfg.ttl);
	rs->batching = batching;
	return rc;
}

void rawsock_set_failed_fn(struct rawsock *rs, rawsock_failed_fn fn, void *ctx)
{
	rs->failed_fn = fn;
	rs->failed_ctx = ctx;
}

void rawsock_get_stats(const struct rawsock *rs, struct rawsock_stats *st)
{
	*st = rs->st;
	if (rs->neigh != NULL)
		neigh_cache_get_stats(rs->neigh, &st->neigh);
	st->neigh_available = rs->neigh != NULL;
	st->link_available = rs->link_fd >= 0;
	st->link_output = rs->link_output;
}

bool rawsock_source6(struct rawsock *rs, int ifindex, const uint8_t dst[16], uint8_t src[16])
{
	struct sockaddr_in6 to = {.sin6_family = AF_INET6,
		.sin6_port = htons(9), /* any: nothing is sent */
		.sin6_scope_id = ifindex > 0 ? (uint32_t)ifindex : 0};
	struct sockaddr_in6 from;
	socklen_t len = sizeof(from);

	if (rs->probe6 < 0)
		rs->probe6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rs->probe6 < 0)
		return false;
	memcpy(&to.sin6_addr, dst, 16);
	/* connect() on a datagram socket only routes and picks the source (RFC 6724); connecting
	   again replaces the last one */
	if (connect(rs->probe6, (const struct sockaddr *)&to, sizeof(to)) < 0 ||
		getsockname(rs->probe6, (struct sockaddr *)&from, &len) < 0 ||
		from.sin6_family != AF_INET6 || IN6_IS_ADDR_UNSPECIFIED(&from.sin6_addr))
		return false;
	memcpy(src, &from.sin6_addr, 16);
	return true;
}

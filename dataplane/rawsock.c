/*
 * Packet output through one IP_HDRINCL raw socket, egress chosen per packet with IP_PKTINFO.
 */
#include "dataplane/rawsock.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define IPV4_MAX_HEADER 60
/* Room for the IP_PKTINFO control message: at least CMSG_SPACE(sizeof(struct in_pktinfo)),
 * which not every compiler takes as a constant in a struct member's size. */
#define PKTINFO_CONTROL_ROOM (sizeof(struct cmsghdr) + sizeof(struct in_pktinfo) + sizeof(size_t))

/* One queued datagram: its destination and egress, the datagram itself in the arena. */
struct rawsock_slot {
	struct sockaddr_in dst;
	struct {
		/* aligned as a cmsghdr; not a union with one, whose flexible array member would
		   make this slot a variable-sized type in the middle of struct rawsock */
		_Alignas(struct cmsghdr) char buf[PKTINFO_CONTROL_ROOM];
	} control;
	struct iovec iov;
};

struct rawsock {
	int fd;
	struct rawsock_config cfg;
	struct rawsock_stats st;

	/* rawsock_batch_begin() .. rawsock_batch_flush(): datagrams queued for one sendmmsg() */
	bool batching;
	unsigned queued;
	size_t arena_used;
	uint64_t batch_sent, batch_failed; /* outcomes since the batch began */
	struct rawsock_slot slots[RAWSOCK_BATCH_MAX];
	struct mmsghdr msgs[RAWSOCK_BATCH_MAX];
	uint8_t arena[RAWSOCK_BATCH_BYTES];
};

void rawsock_config_default(struct rawsock_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
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
	if (rs->cfg.sndbuf != 0) {
		int val = (int)rs->cfg.sndbuf;

		if (setsockopt(rs->fd, SOL_SOCKET, SO_SNDBUFFORCE, &val, sizeof(val)) < 0)
			(void)setsockopt(rs->fd, SOL_SOCKET, SO_SNDBUF, &val, sizeof(val));
	}
	return rs;
}

void rawsock_close(struct rawsock *rs)
{
	if (rs == NULL)
		return;
	if (rs->fd >= 0)
		close(rs->fd);
	free(rs);
}

int rawsock_fd(const struct rawsock *rs)
{
	return rs->fd;
}

static int rawsock_bad_input(struct rawsock *rs)
{
	rs->st.bad_input++;
	rs->st.last_errno = EINVAL;
	errno = EINVAL;
	return -1;
}

/* Checks a datagram; returns its header length, or 0 after counting it as bad input. */
static size_t rawsock_check(struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len)
{
	size_t ihl;

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

static ssize_t rawsock_sendmsg(struct rawsock *rs, const struct msghdr *msg)
{
	ssize_t n;

	do {
		n = sendmsg(rs->fd, msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n;
}

static void rawsock_send_queued(struct rawsock *rs);

/* Queues a checked datagram (a copy, TTL overridden in it unless 0) for the next flush. */
static void rawsock_queue(struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len, uint8_t ttl)
{
	struct rawsock_slot *slot;
	struct msghdr *msg;
	uint8_t *copy;

	if (rs->queued == RAWSOCK_BATCH_MAX || rs->arena_used + len > sizeof(rs->arena))
		rawsock_send_queued(rs);
	slot = &rs->slots[rs->queued];
	msg = &rs->msgs[rs->queued].msg_hdr;
	copy = rs->arena + rs->arena_used;
	rs->arena_used += len;
	memcpy(copy, ip, len);
	if (ttl > 0)
		copy[8] = ttl;
	memset(msg, 0, sizeof(*msg));
	rawsock_address(
		msg, &slot->dst, slot->control.buf, sizeof(slot->control.buf), copy, ifindex);
	slot->iov.iov_base = copy;
	slot->iov.iov_len = len;
	msg->msg_iov = &slot->iov;
	msg->msg_iovlen = 1;
	rs->queued++;
}

/*
 * Sends the queued datagrams in order, as few sendmmsg() calls as the kernel allows, and counts
 * each outcome as a sendmsg() of its own would. sendmmsg() reports an error only when nothing
 * went, so after a partial send the call starts again at the datagram it stopped at: that one's
 * error is then known (a transient refusal, a full buffer, may go through the second time).
 */
static void rawsock_send_queued(struct rawsock *rs)
{
	unsigned done = 0;

	while (done < rs->queued) {
		int n = sendmmsg(
			rs->fd, rs->msgs + done, rs->queued - done, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rawsock_count(rs, -1, n < 0 ? errno : EIO);
			rs->batch_failed++;
			done++;
			continue;
		}
		for (int i = 0; i < n; i++)
			rawsock_count(rs, (ssize_t)rs->msgs[done + (unsigned)i].msg_len, 0);
		rs->batch_sent += (unsigned)n;
		done += (unsigned)n;
	}
	rs->queued = 0;
	rs->arena_used = 0;
}

/* Sends (or queues) one datagram with its TTL replaced by ttl, unless 0. */
static int rawsock_send_common(
	struct rawsock *rs, int ifindex, const uint8_t *ip, size_t len, uint8_t ttl)
{
	uint8_t header[IPV4_MAX_HEADER];
	_Alignas(struct cmsghdr) char control[PKTINFO_CONTROL_ROOM];
	struct sockaddr_in dst;
	struct iovec iov[2];
	struct msghdr msg = {0};
	size_t ihl;
	ssize_t n;
	int e;

	if ((ihl = rawsock_check(rs, ifindex, ip, len)) == 0)
		return -1;
	if (rs->batching) {
		rawsock_queue(rs, ifindex, ip, len, ttl);
		return 0;
	}
	/* The header is copied so the TTL can be overridden without touching the caller's
	 * buffer; the kernel recomputes the checksum of HDRINCL datagrams. */
	memcpy(header, ip, ihl);
	if (ttl > 0)
		header[8] = ttl;
	iov[0].iov_base = header;
	iov[0].iov_len = ihl;
	iov[1].iov_base = (void *)(ip + ihl);
	iov[1].iov_len = len - ihl;
	msg.msg_iov = iov;
	msg.msg_iovlen = len > ihl ? 2 : 1;
	rawsock_address(&msg, &dst, control, sizeof(control), ip, ifindex);
	n = rawsock_sendmsg(rs, &msg);
	e = errno;
	rawsock_count(rs, n, e);
	if (n < 0) {
		errno = e;
		return -1;
	}
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

void rawsock_get_stats(const struct rawsock *rs, struct rawsock_stats *st)
{
	*st = rs->st;
}

/*
 * Packet output through one IP_HDRINCL raw socket, egress chosen per packet with IP_PKTINFO.
 */
#include "dataplane/rawsock.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define IPV4_MAX_HEADER 60

struct rawsock {
	int fd;
	struct rawsock_config cfg;
	struct rawsock_stats st;
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

int rawsock_send(struct rawsock *rs, int ifindex, const void *datagram, size_t len)
{
	const uint8_t *ip = datagram;
	uint8_t header[IPV4_MAX_HEADER];
	struct sockaddr_in dst = {.sin_family = AF_INET};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	} control;
	struct iovec iov[2];
	struct msghdr msg = {0};
	size_t ihl;
	ssize_t n;

	if (ip == NULL || len < 20 || len > 0xffff || ifindex < 0 || (ip[0] >> 4) != 4)
		return rawsock_bad_input(rs);
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > len || (size_t)(ip[2] << 8 | ip[3]) != len)
		return rawsock_bad_input(rs);
	/* The header is copied so the TTL can be overridden without touching the caller's
	 * buffer; the kernel recomputes the checksum of HDRINCL datagrams. */
	memcpy(header, ip, ihl);
	if (rs->cfg.ttl > 0)
		header[8] = (uint8_t)rs->cfg.ttl;
	memcpy(&dst.sin_addr, ip + 16, 4);
	iov[0].iov_base = header;
	iov[0].iov_len = ihl;
	iov[1].iov_base = (void *)(ip + ihl);
	iov[1].iov_len = len - ihl;
	msg.msg_name = &dst;
	msg.msg_namelen = sizeof(dst);
	msg.msg_iov = iov;
	msg.msg_iovlen = len > ihl ? 2 : 1;
	if (ifindex > 0) {
		struct cmsghdr *cm;
		struct in_pktinfo pi = {.ipi_ifindex = ifindex};

		memset(&control, 0, sizeof(control));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
	}
	do {
		n = sendmsg(rs->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;

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
		errno = e;
		return -1;
	}
	rs->st.packets++;
	rs->st.bytes += (uint64_t)n;
	return 0;
}

void rawsock_get_stats(const struct rawsock *rs, struct rawsock_stats *st)
{
	*st = rs->st;
}

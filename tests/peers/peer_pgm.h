/*
 * Shared by the OpenPGM peers (pgm-send, pgm-recv): the options both ends of a session take
 * alike, opening the socket up to pgm_connect, the library's timers and waiting on its
 * descriptors. Define PEER_NAME (it prefixes the messages) before including this.
 *
 * OpenPGM facts built in here: every socket option, PGM_NOBLOCK included, must be set before
 * pgm_connect; the library tells how long it wants to be left alone (PGM_TIME_REMAIN,
 * PGM_RATE_REMAIN) and which descriptors to poll (pgm_poll_info).
 */
#ifndef PEER_PGM_H
#define PEER_PGM_H

#ifndef PEER_NAME
#error "define PEER_NAME before including peer_pgm.h"
#endif

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pgm/pgm.h>

#include "peer_common.h"

struct peer_pgm_options {
	const char *network; /* OpenPGM network string, interface address first */
	uint64_t dport;
	struct peer_udp_ports udp; /* 0: PGM over IP */
	uint64_t hops;		   /* multicast TTL */
	bool router_alert;
	uint64_t fec_group; /* on-demand parity with this transmission group size, 0 = none */
	bool multicast_loop;
	uint64_t tpdu; /* PGM_MTU: the largest TPDU (IP datagram) the socket builds or takes */
};

#define PEER_PGM_DEFAULTS                                                                          \
	{                                                                                          \
		.dport = DEFAULT_DATA_DESTINATION_PORT, .hops = 16, .tpdu = 1500                   \
	}

#define PEER_PGM_OPTIONS(p)                                                                        \
	PEER_OPT_REQUIRED("network", 'n', &(p)->network),                                          \
		PEER_OPT_U64("port", 's', &(p)->dport, 1, 65535),                                  \
		PEER_OPT_UDP_PORTS("udp", 'u', &(p)->udp),                                         \
		PEER_OPT_U64("hops", 0, &(p)->hops, 1, 255),                                       \
		PEER_OPT_FLAG("router-alert", 'A', &(p)->router_alert),                            \
		PEER_OPT_POW2("fec", 0, &(p)->fec_group, 2, 128),                                  \
		PEER_OPT_FLAG("loop", 0, &(p)->multicast_loop),                                    \
		PEER_OPT_U64("tpdu", 0, &(p)->tpdu, 576, 65535)

static inline bool peer_pgm_set_int(
	pgm_sock_t *sock, int level, int name, int value, const char *what)
{
	if (!pgm_setsockopt(sock, level, name, &value, sizeof(value))) {
		fprintf(stderr, PEER_NAME ": setting %s to %d failed\n", what, value);
		return false;
	}
	return true;
}

/* Reports a failed library call and frees its error. */
static inline void peer_pgm_report(const char *what, pgm_error_t *err)
{
	fprintf(stderr, PEER_NAME ": %s: %s\n", what,
		err != NULL && err->message != NULL ? err->message : "unknown error");
	if (err != NULL)
		pgm_error_free(err);
}

/* The options both ends set alike before their role's own: encapsulation, Router Alert, FEC. */
static inline bool peer_pgm_set_shared(pgm_sock_t *sock, const struct peer_pgm_options *o)
{
	bool ok = true;

	if (o->udp.ucast) {
		ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_UDP_ENCAP_UCAST_PORT,
			(int)o->udp.ucast, "PGM_UDP_ENCAP_UCAST_PORT");
		ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_UDP_ENCAP_MCAST_PORT,
			(int)o->udp.mcast, "PGM_UDP_ENCAP_MCAST_PORT");
	}
	/* off by default; OpenPGM refuses the option on an IPv6 socket, even to switch it off */
	if (o->router_alert)
		ok &= peer_pgm_set_int(
			sock, IPPROTO_PGM, PGM_IP_ROUTER_ALERT, 1, "PGM_IP_ROUTER_ALERT");
	/* above the link MTU, the kernel fragments the datagrams (IP fragments) */
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_MTU, (int)o->tpdu, "PGM_MTU");
	if (o->fec_group != 0) {
		/* Reed-Solomon (255, k): parity RDATA on demand only (RFC 3208 11.3.3); both ends
		 * must agree on the group size */
		struct pgm_fecinfo_t fec = {
			.block_size = 255,
			.proactive_packets = 0,
			.group_size = (uint8_t)o->fec_group,
			.ondemand_parity_enabled = true,
			.var_pktlen_enabled = false,
		};

		if (!pgm_setsockopt(sock, IPPROTO_PGM, PGM_USE_FEC, &fec, sizeof(fec))) {
			fprintf(stderr, PEER_NAME ": setting PGM_USE_FEC failed\n");
			ok = false;
		}
	}
	return ok;
}

/*
 * Creates the socket, sets the options both ends share and then the role's own (configure, with
 * arg), binds with data-source port sport (part of the TSI), joins the groups and connects. NULL
 * on failure (reported).
 */
static inline pgm_sock_t *peer_pgm_open(const struct peer_pgm_options *o, uint16_t sport,
	bool (*configure)(pgm_sock_t *sock, const void *arg), const void *arg)
{
	struct pgm_addrinfo_t *res = NULL;
	pgm_error_t *err = NULL;
	pgm_sock_t *sock = NULL;
	struct pgm_sockaddr_t addr;
	struct pgm_interface_req_t if_req;
	char gsi_seed[256];
	bool ok = true;

	if (!pgm_getaddrinfo(o->network, NULL, &res, &err)) {
		peer_pgm_report("parsing the network string", err);
		return NULL;
	}
	/* IPv4 or IPv6: the family of the group ("198.18.2.2;239.192.0.1",
	   "2001:db8:2::11;ff0e::8000:1") */
	if (res->ai_send_addrs_len < 1 || res->ai_recv_addrs_len < 1 ||
		(res->ai_send_addrs[0].gsr_group.ss_family != AF_INET &&
			res->ai_send_addrs[0].gsr_group.ss_family != AF_INET6)) {
		fprintf(stderr,
			PEER_NAME ": the network string must name one IPv4 or IPv6 group\n");
		goto fail;
	}
	if (!pgm_socket(&sock, res->ai_send_addrs[0].gsr_group.ss_family, SOCK_SEQPACKET,
		    o->udp.ucast ? IPPROTO_UDP : IPPROTO_PGM, &err)) {
		peer_pgm_report("creating the PGM socket", err);
		goto fail;
	}
	ok &= peer_pgm_set_shared(sock, o);
	ok &= configure(sock, arg);
	if (!ok)
		goto fail;

	/*
	 * The GSI must differ between hosts. Namespaces share the host name, so the usual
	 * pgm_gsi_create_from_hostname would give every lab host the same GSI.
	 */
	memset(&addr, 0, sizeof(addr));
	addr.sa_port = (uint16_t)o->dport;
	addr.sa_addr.sport = sport;
	snprintf(gsi_seed, sizeof(gsi_seed), "%s/%ld/%" PRIu64, o->network, (long)getpid(),
		now_microseconds());
	pgm_gsi_create_from_data(&addr.sa_addr.gsi, (const uint8_t *)gsi_seed, strlen(gsi_seed));

	memset(&if_req, 0, sizeof(if_req));
	if_req.ir_interface = res->ai_recv_addrs[0].gsr_interface;
	memcpy(&if_req.ir_address, &res->ai_send_addrs[0].gsr_addr, sizeof(if_req.ir_address));
	if (!pgm_bind3(sock, &addr, sizeof(addr), &if_req, sizeof(if_req), &if_req, sizeof(if_req),
		    &err)) {
		peer_pgm_report("binding the PGM socket", err);
		goto fail;
	}
	for (uint32_t i = 0; i < res->ai_recv_addrs_len; i++) {
		if (!pgm_setsockopt(sock, IPPROTO_PGM, PGM_JOIN_GROUP, &res->ai_recv_addrs[i],
			    sizeof(struct group_req))) {
			fprintf(stderr, PEER_NAME ": joining the group failed\n");
			goto fail;
		}
	}
	if (!pgm_setsockopt(sock, IPPROTO_PGM, PGM_SEND_GROUP, &res->ai_send_addrs[0],
		    sizeof(struct group_req))) {
		fprintf(stderr, PEER_NAME ": setting the send group failed\n");
		goto fail;
	}
	ok &= peer_pgm_set_int(
		sock, IPPROTO_PGM, PGM_MULTICAST_LOOP, o->multicast_loop, "PGM_MULTICAST_LOOP");
	ok &= peer_pgm_set_int(
		sock, IPPROTO_PGM, PGM_MULTICAST_HOPS, (int)o->hops, "PGM_MULTICAST_HOPS");
	ok &= peer_pgm_set_int(sock, IPPROTO_PGM, PGM_NOBLOCK, 1, "PGM_NOBLOCK");
	if (!ok)
		goto fail;
	if (!pgm_connect(sock, &err)) {
		peer_pgm_report("connecting the PGM socket", err);
		goto fail;
	}
	pgm_freeaddrinfo(res);
	return sock;
fail:
	if (sock != NULL)
		pgm_close(sock, false);
	pgm_freeaddrinfo(res);
	return NULL;
}

/* How long the library wants to be left alone after a non-normal status, in microseconds. */
static inline uint64_t peer_pgm_wait_us(pgm_sock_t *sock, int status)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (status == PGM_IO_STATUS_TIMER_PENDING &&
		pgm_getsockopt(sock, IPPROTO_PGM, PGM_TIME_REMAIN, &tv, &len))
		return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	if (status == PGM_IO_STATUS_RATE_LIMITED &&
		pgm_getsockopt(sock, IPPROTO_PGM, PGM_RATE_REMAIN, &tv, &len))
		return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	return UINT64_MAX;
}

/*
 * Sleeps on the library's descriptors for `events` (POLLIN, with POLLOUT while a send would
 * block) for at most wait_us; *writable (if not NULL) tells whether one became writable. False
 * when the library cannot list its descriptors (reported).
 */
static inline bool peer_pgm_poll(pgm_sock_t *sock, short events, uint64_t wait_us, bool *writable)
{
	struct pollfd fds[8];
	int nfds = (int)(sizeof(fds) / sizeof(fds[0]));
	struct timespec ts;

	if (writable != NULL)
		*writable = false;
	memset(fds, 0, sizeof(fds));
	if (pgm_poll_info(sock, fds, &nfds, events) < 0) {
		fprintf(stderr, PEER_NAME ": pgm_poll_info failed\n");
		return false;
	}
	ts.tv_sec = (time_t)(wait_us / 1000000u);
	ts.tv_nsec = (long)(wait_us % 1000000u) * 1000;
	if (ppoll(fds, (nfds_t)nfds, &ts, NULL) > 0 && writable != NULL) {
		for (int i = 0; i < nfds; i++)
			if (fds[i].revents & POLLOUT)
				*writable = true;
	}
	return true;
}

#endif /* PEER_PGM_H */

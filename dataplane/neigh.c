/*
 * IPv4 (ARP) and IPv6 (NDP) neighbour lookups through rtnetlink (see neigh.h).
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "dataplane/neigh.h"
#include "dataplane/netlink.h"

struct neigh_slot {
	int ifindex; /* 0: empty */
	int family;
	uint8_t addr[16]; /* 4 bytes for AF_INET */
	uint8_t mac[6];
	bool usable;
	uint64_t asked_us;
};

struct neigh_cache {
	struct mnl_socket *nl;
	uint32_t seq, portid;
	uint64_t window_us; /* the second the query budget counts */
	unsigned window_queries;
	struct neigh_slot slot[NEIGH_CACHE_SLOTS];
	struct neigh_stats st;
};

struct neigh_cache *neigh_cache_open(char *err, size_t errlen)
{
	struct neigh_cache *nc = calloc(1, sizeof(*nc));

	if (nc == NULL) {
		snprintf(err, errlen, "neighbour cache: out of memory");
		return NULL;
	}
	nc->nl = netlink_open(
		&(struct netlink_socket_config){
			.bus = NETLINK_ROUTE, .flags = SOCK_NONBLOCK, .what = "neighbour lookups"},
		NULL, err, errlen);
	if (nc->nl == NULL) {
		neigh_cache_close(nc);
		return NULL;
	}
	nc->portid = mnl_socket_get_portid(nc->nl);
	return nc;
}

void neigh_cache_close(struct neigh_cache *nc)
{
	if (nc == NULL)
		return;
	if (nc->nl != NULL)
		mnl_socket_close(nc->nl);
	free(nc);
}

void neigh_cache_flush(struct neigh_cache *nc)
{
	memset(nc->slot, 0, sizeof(nc->slot));
}

void neigh_cache_get_stats(const struct neigh_cache *nc, struct neigh_stats *st)
{
	*st = nc->st;
}

static int on_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, NDA_MAX) < 0)
		return MNL_CB_OK; /* newer than these headers: not needed */
	tb[type] = attr;
	return MNL_CB_OK;
}

static int on_reply(const struct nlmsghdr *nlh, void *data)
{
	struct neigh_answer *a = data;
	const struct nlattr *tb[NDA_MAX + 1] = {0};
	const struct ndmsg *ndm;

	if (nlh->nlmsg_type != RTM_NEWNEIGH || nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)))
		return MNL_CB_OK;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*ndm), on_attr, tb) < 0)
		return MNL_CB_ERROR;
	a->done = true;
	if ((ndm->ndm_state & (NUD_REACHABLE | NUD_PERMANENT)) != 0 && tb[NDA_LLADDR] != NULL &&
		mnl_attr_get_payload_len(tb[NDA_LLADDR]) == 6) {
		memcpy(a->mac, mnl_attr_get_payload(tb[NDA_LLADDR]), 6);
		a->usable = true;
	}
	return MNL_CB_STOP;
}

int neigh_parse_reply(const void *buf, size_t len, uint32_t portid, struct neigh_answer *a)
{
	return mnl_cb_run(buf, netlink_msgs_len(buf, len), a->seq, portid, on_reply, a);
}

static size_t addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

/* One question to the kernel; false when it did not answer. */
static bool ask(struct neigh_cache *nc, int ifindex, int family, const uint8_t *addr,
	struct neigh_answer *a)
{
	uint8_t buf[4096]; /* an answer is under 200 bytes */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = a->seq = ++nc->seq;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (uint8_t)family;
	ndm->ndm_ifindex = ifindex;
	mnl_attr_put(nlh, NDA_DST, addr_len(family), addr);
	if (mnl_socket_sendto(nc->nl, nlh, nlh->nlmsg_len) < 0)
		return false;
	/* The kernel answers while the request is sent; a late answer to an earlier question
	   (none is expected) is read past by its sequence number. */
	for (unsigned tries = 0; tries < 4; tries++) {
		ssize_t n = mnl_socket_recvfrom(nc->nl, buf, sizeof(buf));
		int rc;

		if (n < 0)
			return false;
		rc = neigh_parse_reply(buf, (size_t)n, nc->portid, a);
		if (rc == MNL_CB_ERROR) {
			if (errno == ESRCH) /* the answer of an earlier question */
				continue;
			/* ENOENT: no entry; EOPNOTSUPP, EINVAL: a kernel without single lookups */
			a->done = true;
			return errno == ENOENT;
		}
		if (a->done)
			return true;
	}
	return false;
}

/* Asks the kernel again about slot s's address; false when over the question budget. */
static bool refresh(struct neigh_cache *nc, struct neigh_slot *s, int ifindex, int family,
	const uint8_t *addr, uint64_t now_us)
{
	struct neigh_answer a = {0};

	if (now_us - nc->window_us >= 1000000u) {
		nc->window_us = now_us;
		nc->window_queries = 0;
	}
	if (nc->window_queries >= NEIGH_CACHE_QUERIES_PER_S) {
		nc->st.rate_limited++;
		return false;
	}
	nc->window_queries++;
	nc->st.queries++;
	if (!ask(nc, ifindex, family, addr, &a)) {
		nc->st.errors++;
		a.usable = false; /* remembered as unusable for the cache time */
	} else if (a.usable) {
		nc->st.usable++;
	} else {
		nc->st.unusable++;
	}
	s->ifindex = ifindex;
	s->family = family;
	memset(s->addr, 0, sizeof(s->addr));
	memcpy(s->addr, addr, addr_len(family));
	memcpy(s->mac, a.mac, 6);
	s->usable = a.usable;
	s->asked_us = now_us;
	return true;
}

bool neigh_cache_lookup(struct neigh_cache *nc, int ifindex, int family, const uint8_t *addr,
	uint64_t now_us, uint8_t mac[6])
{
	size_t len = addr_len(family);
	/* the address's last 4 bytes: an IPv4 address, an IPv6 interface identifier's end */
	const uint8_t *k = addr + len - 4;
	uint32_t key = ((uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3]) ^
		       (uint32_t)ifindex * 0x9e3779b9u;
	struct neigh_slot *s = &nc->slot[(key * 0x9e3779b9u) >> 26 & (NEIGH_CACHE_SLOTS - 1)];

	if (family != AF_INET && family != AF_INET6)
		return false;
	if ((s->ifindex != ifindex || s->family != family || memcmp(s->addr, addr, len) != 0 ||
		    now_us - s->asked_us >= NEIGH_CACHE_TTL_US) &&
		!refresh(nc, s, ifindex, family, addr, now_us))
		return false;
	if (s->usable)
		memcpy(mac, s->mac, 6);
	return s->usable;
}

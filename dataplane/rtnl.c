/*
 * Interfaces and addresses from rtnetlink. See rtnl.h.
 */
#include "dataplane/rtnl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#define RTNL_RXBUF	     (64u * 1024)
#define RTNL_SOCKET_RCVBUF   (4 * 1024 * 1024)
#define RTNL_DUMP_TIMEOUT_MS 5000
#define RTNL_DUMP_RETRIES    5

struct rtnl {
	struct mnl_socket *nl;
	int fd;
	uint32_t portid;
	uint32_t seq;
	rtnl_event_fn fn;
	void *ctx;
	struct rtnl_if **ifs; /* sorted by ifindex */
	size_t nifs, cap;
	unsigned generation; /* of the dump in progress */
	bool dump_interrupted;
	uint8_t *rxbuf;
	struct rtnl_stats st;
};

struct rtnl *rtnl_new(rtnl_event_fn fn, void *ctx)
{
	struct rtnl *rt = calloc(1, sizeof(*rt));

	if (rt == NULL)
		return NULL;
	rt->fd = -1;
	rt->fn = fn;
	rt->ctx = ctx;
	return rt;
}

static void rtnl_if_free(struct rtnl_if *ifp)
{
	free(ifp->addrs);
	free(ifp);
}

void rtnl_free(struct rtnl *rt)
{
	if (rt == NULL)
		return;
	for (size_t i = 0; i < rt->nifs; i++)
		rtnl_if_free(rt->ifs[i]);
	free(rt->ifs);
	if (rt->nl != NULL)
		mnl_socket_close(rt->nl);
	free(rt->rxbuf);
	free(rt);
}

static void emit(struct rtnl *rt, enum rtnl_event_type type, const struct rtnl_if *ifp,
	unsigned changes, const char *old_name, const struct rtnl_addr *addr)
{
	struct rtnl_event ev = {
		.type = type, .ifp = ifp, .changes = changes, .old_name = old_name, .addr = addr};

	rt->st.events++;
	if (rt->fn != NULL)
		rt->fn(rt->ctx, &ev);
}

/* ---- the table ---- */

static size_t find_pos(const struct rtnl *rt, int ifindex, bool *found)
{
	size_t lo = 0, hi = rt->nifs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rt->ifs[mid]->ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < rt->nifs && rt->ifs[lo]->ifindex == ifindex;
	return lo;
}

const struct rtnl_if *rtnl_if_by_index(const struct rtnl *rt, int ifindex)
{
	bool found;
	size_t pos = find_pos(rt, ifindex, &found);

	return found ? rt->ifs[pos] : NULL;
}

static struct rtnl_if *if_by_index(struct rtnl *rt, int ifindex)
{
	return (struct rtnl_if *)rtnl_if_by_index(rt, ifindex);
}

const struct rtnl_if *rtnl_if_by_name(const struct rtnl *rt, const char *name)
{
	for (size_t i = 0; i < rt->nifs; i++)
		if (strcmp(rt->ifs[i]->name, name) == 0)
			return rt->ifs[i];
	return NULL;
}

size_t rtnl_if_count(const struct rtnl *rt)
{
	return rt->nifs;
}

void rtnl_foreach_if(
	const struct rtnl *rt, void (*fn)(void *ctx, const struct rtnl_if *ifp), void *ctx)
{
	for (size_t i = 0; i < rt->nifs; i++)
		fn(ctx, rt->ifs[i]);
}

void rtnl_get_stats(const struct rtnl *rt, struct rtnl_stats *st)
{
	*st = rt->st;
}

char *rtnl_addr_format(const struct rtnl_addr *a, char *buf, size_t len)
{
	char text[INET6_ADDRSTRLEN];

	if (inet_ntop(a->family, a->addr, text, sizeof(text)) == NULL)
		snprintf(text, sizeof(text), "?");
	snprintf(buf, len, "%s/%u", text, a->prefixlen);
	return buf;
}

static struct rtnl_if *if_insert(struct rtnl *rt, int ifindex)
{
	bool found;
	size_t pos = find_pos(rt, ifindex, &found);
	struct rtnl_if *ifp;

	if (found)
		return rt->ifs[pos];
	if (rt->nifs == rt->cap) {
		size_t ncap = rt->cap ? rt->cap * 2 : 16;
		struct rtnl_if **n = realloc(rt->ifs, ncap * sizeof(*n));

		if (n == NULL)
			return NULL;
		rt->ifs = n;
		rt->cap = ncap;
	}
	ifp = calloc(1, sizeof(*ifp));
	if (ifp == NULL)
		return NULL;
	ifp->ifindex = ifindex;
	memmove(&rt->ifs[pos + 1], &rt->ifs[pos], (rt->nifs - pos) * sizeof(*rt->ifs));
	rt->ifs[pos] = ifp;
	rt->nifs++;
	return ifp;
}

static void if_remove(struct rtnl *rt, int ifindex)
{
	bool found;
	size_t pos = find_pos(rt, ifindex, &found);
	struct rtnl_if *ifp;

	if (!found)
		return;
	ifp = rt->ifs[pos];
	/* Addresses go first, so a consumer tracking them never keeps a stale one. */
	while (ifp->naddrs > 0) {
		struct rtnl_addr a = ifp->addrs[ifp->naddrs - 1];

		ifp->naddrs--;
		emit(rt, RTNL_ADDR_REMOVED, ifp, 0, NULL, &a);
	}
	ifp->has_primary4 = false;
	emit(rt, RTNL_IF_REMOVED, ifp, 0, NULL, NULL);
	memmove(&rt->ifs[pos], &rt->ifs[pos + 1], (rt->nifs - pos - 1) * sizeof(*rt->ifs));
	rt->nifs--;
	rtnl_if_free(ifp);
}

/* Recomputes the primary IPv4 address; true when it changed. */
static bool update_primary4(struct rtnl_if *ifp)
{
	bool had = ifp->has_primary4;
	struct in_addr old = ifp->primary4;

	ifp->has_primary4 = false;
	for (size_t i = 0; i < ifp->naddrs; i++) {
		const struct rtnl_addr *a = &ifp->addrs[i];

		if (a->family == AF_INET && !(a->flags & IFA_F_SECONDARY)) {
			ifp->has_primary4 = true;
			memcpy(&ifp->primary4, a->addr, 4);
			break;
		}
	}
	return had != ifp->has_primary4 || (had && old.s_addr != ifp->primary4.s_addr);
}

/* ---- message parsing ---- */

struct attr_table {
	const struct nlattr *tb[IFLA_MAX > IFA_MAX ? IFLA_MAX + 1 : IFA_MAX + 1];
	int max;
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct attr_table *t = data;
	int type = mnl_attr_get_type(attr);

	if (type <= t->max)
		t->tb[type] = attr;
	return MNL_CB_OK;
}

static void handle_link(struct rtnl *rt, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi;
	struct attr_table t = {.max = IFLA_MAX};
	struct rtnl_if *ifp;
	char name[IF_NAMESIZE], old_name[IF_NAMESIZE];
	unsigned changes = 0;
	bool is_new;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi))) {
		rt->st.malformed++;
		return;
	}
	ifi = mnl_nlmsg_get_payload(nlh);
	/* Bridge port notifications (AF_BRIDGE) share the group; they say nothing about the
	 * interface itself. */
	if (ifi->ifi_family != AF_UNSPEC || ifi->ifi_index <= 0) {
		rt->st.ignored++;
		return;
	}
	if (nlh->nlmsg_type == RTM_DELLINK) {
		if (rtnl_if_by_index(rt, ifi->ifi_index) == NULL)
			rt->st.ignored++;
		if_remove(rt, ifi->ifi_index);
		return;
	}
	if (mnl_attr_parse(nlh, sizeof(*ifi), attr_cb, &t) != MNL_CB_OK ||
		t.tb[IFLA_IFNAME] == NULL ||
		mnl_attr_validate(t.tb[IFLA_IFNAME], MNL_TYPE_STRING) < 0) {
		rt->st.malformed++;
		return;
	}
	snprintf(name, sizeof(name), "%s", mnl_attr_get_str(t.tb[IFLA_IFNAME]));
	is_new = rtnl_if_by_index(rt, ifi->ifi_index) == NULL;
	ifp = if_insert(rt, ifi->ifi_index);
	if (ifp == NULL) {
		rt->st.errors++;
		return;
	}
	ifp->seen_generation = rt->generation;
	snprintf(old_name, sizeof(old_name), "%s", ifp->name);
	if (!is_new && strcmp(old_name, name) != 0)
		changes |= RTNL_CHANGE_NAME;
	snprintf(ifp->name, sizeof(ifp->name), "%s", name);
	if (!is_new && ((ifp->flags ^ ifi->ifi_flags) & IFF_UP))
		changes |= RTNL_CHANGE_UP;
	if (!is_new && ((ifp->flags ^ ifi->ifi_flags) & IFF_RUNNING))
		changes |= RTNL_CHANGE_RUNNING;
	if (!is_new && ((ifp->flags ^ ifi->ifi_flags) & ~(unsigned)(IFF_UP | IFF_RUNNING)))
		changes |= RTNL_CHANGE_FLAGS;
	ifp->flags = ifi->ifi_flags;
	ifp->up = (ifi->ifi_flags & IFF_UP) != 0;
	ifp->running = (ifi->ifi_flags & IFF_RUNNING) != 0;
	if (t.tb[IFLA_MTU] != NULL && mnl_attr_validate(t.tb[IFLA_MTU], MNL_TYPE_U32) == 0) {
		uint32_t mtu = mnl_attr_get_u32(t.tb[IFLA_MTU]);

		if (!is_new && mtu != ifp->mtu)
			changes |= RTNL_CHANGE_MTU;
		ifp->mtu = mtu;
	}
	if (is_new)
		emit(rt, RTNL_IF_ADDED, ifp, 0, NULL, NULL);
	else if (changes)
		emit(rt, RTNL_IF_CHANGED, ifp, changes,
			(changes & RTNL_CHANGE_NAME) ? old_name : NULL, NULL);
}

static bool addr_same(const struct rtnl_addr *a, const struct rtnl_addr *b)
{
	size_t n = a->family == AF_INET ? 4 : 16;

	return a->family == b->family && a->prefixlen == b->prefixlen &&
	       memcmp(a->addr, b->addr, n) == 0;
}

static void handle_addr(struct rtnl *rt, const struct nlmsghdr *nlh)
{
	const struct ifaddrmsg *ifa;
	struct attr_table t = {.max = IFA_MAX};
	const struct nlattr *addr_attr;
	struct rtnl_addr a;
	struct rtnl_if *ifp;
	size_t alen, i;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifa))) {
		rt->st.malformed++;
		return;
	}
	ifa = mnl_nlmsg_get_payload(nlh);
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) {
		rt->st.ignored++;
		return;
	}
	if (mnl_attr_parse(nlh, sizeof(*ifa), attr_cb, &t) != MNL_CB_OK) {
		rt->st.malformed++;
		return;
	}
	alen = ifa->ifa_family == AF_INET ? 4 : 16;
	/* IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer's on point-to-point
	 * links and the same as IFA_LOCAL otherwise (IPv6 sends IFA_ADDRESS only). */
	addr_attr = t.tb[IFA_LOCAL] ? t.tb[IFA_LOCAL] : t.tb[IFA_ADDRESS];
	if (addr_attr == NULL || mnl_attr_get_payload_len(addr_attr) < alen ||
		(ifa->ifa_family == AF_INET && ifa->ifa_prefixlen > 32) ||
		ifa->ifa_prefixlen > 128) {
		rt->st.malformed++;
		return;
	}
	memset(&a, 0, sizeof(a));
	a.family = ifa->ifa_family;
	a.prefixlen = ifa->ifa_prefixlen;
	a.scope = ifa->ifa_scope;
	a.flags = ifa->ifa_flags;
	if (t.tb[IFA_FLAGS] != NULL && mnl_attr_get_payload_len(t.tb[IFA_FLAGS]) >= 4)
		a.flags = mnl_attr_get_u32(t.tb[IFA_FLAGS]);
	a.seen_generation = rt->generation;
	memcpy(a.addr, mnl_attr_get_payload(addr_attr), alen);

	ifp = if_by_index(rt, (int)ifa->ifa_index);
	if (ifp == NULL) {
		rt->st.ignored++;
		return;
	}
	for (i = 0; i < ifp->naddrs; i++)
		if (addr_same(&ifp->addrs[i], &a))
			break;
	if (nlh->nlmsg_type == RTM_DELADDR) {
		struct rtnl_addr gone;

		if (i == ifp->naddrs) {
			rt->st.ignored++;
			return;
		}
		gone = ifp->addrs[i];
		memmove(&ifp->addrs[i], &ifp->addrs[i + 1], (ifp->naddrs - i - 1) * sizeof(a));
		ifp->naddrs--;
		emit(rt, RTNL_ADDR_REMOVED, ifp, 0, NULL, &gone);
	} else if (i < ifp->naddrs) {
		/* A known address: flags may change (a secondary promoted to primary). */
		ifp->addrs[i].flags = a.flags;
		ifp->addrs[i].scope = a.scope;
		ifp->addrs[i].seen_generation = rt->generation;
	} else {
		struct rtnl_addr *n = realloc(ifp->addrs, (ifp->naddrs + 1) * sizeof(a));

		if (n == NULL) {
			rt->st.errors++;
			return;
		}
		ifp->addrs = n;
		ifp->addrs[ifp->naddrs] = a;
		ifp->naddrs++;
		emit(rt, RTNL_ADDR_ADDED, ifp, 0, NULL, &a);
	}
	if (update_primary4(ifp))
		emit(rt, RTNL_IF_CHANGED, ifp, RTNL_CHANGE_PRIMARY4, NULL, NULL);
}

/* Handles a buffer of messages; returns messages handled and sets *done on NLMSG_DONE of seq. */
static int handle_buffer(
	struct rtnl *rt, const void *buf, size_t len, uint32_t dump_seq, bool *done)
{
	int remaining = (int)len, handled = 0;

	for (const struct nlmsghdr *nlh = buf; mnl_nlmsg_ok(nlh, remaining);
		nlh = mnl_nlmsg_next(nlh, &remaining)) {
		handled++;
		rt->st.messages++;
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
			rt->dump_interrupted = true;
		switch (nlh->nlmsg_type) {
		case RTM_NEWLINK:
		case RTM_DELLINK:
			handle_link(rt, nlh);
			break;
		case RTM_NEWADDR:
		case RTM_DELADDR:
			handle_addr(rt, nlh);
			break;
		case NLMSG_DONE:
			if (done != NULL && nlh->nlmsg_seq == dump_seq)
				*done = true;
			break;
		case NLMSG_ERROR:
			if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct nlmsgerr))) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				if (e->error != 0)
					rt->st.errors++;
				if (done != NULL && nlh->nlmsg_seq == dump_seq)
					*done = true;
			}
			break;
		default:
			rt->st.ignored++;
			break;
		}
	}
	return handled;
}

int rtnl_input(struct rtnl *rt, const void *buf, size_t len)
{
	return handle_buffer(rt, buf, len, 0, NULL);
}

/* ---- socket ---- */

static int monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* One dump request (RTM_GETLINK or RTM_GETADDR), read to its end. */
static int dump_one(struct rtnl *rt, uint16_t type)
{
	_Alignas(8) char req[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct rtgenmsg *g;
	int deadline = monotonic_ms() + RTNL_DUMP_TIMEOUT_MS;
	bool done = false;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++rt->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	if (mnl_socket_sendto(rt->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while (!done) {
		struct pollfd pfd = {.fd = rt->fd, .events = POLLIN};
		int left = deadline - monotonic_ms();
		ssize_t n;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -1;
		n = recv(rt->fd, rt->rxbuf, RTNL_RXBUF, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == ENOBUFS)
				continue; /* notifications lost: this dump is being redone anyway */
			return -1;
		}
		handle_buffer(rt, rt->rxbuf, (size_t)n, nlh->nlmsg_seq, &done);
	}
	return 0;
}

/*
 * A full dump: links, then addresses. Interfaces and addresses not seen in it are gone (missed
 * notifications) and are reported removed.
 */
static int full_dump(struct rtnl *rt)
{
	for (int attempt = 0; attempt < RTNL_DUMP_RETRIES; attempt++) {
		rt->generation++;
		rt->dump_interrupted = false;
		rt->st.dumps++;
		if (dump_one(rt, RTM_GETLINK) < 0 || dump_one(rt, RTM_GETADDR) < 0)
			return -1;
		if (rt->dump_interrupted)
			continue; /* the kernel's tables changed mid-dump: NLM_F_DUMP_INTR */
		/* Sweep what the dump did not show. */
		for (size_t i = rt->nifs; i-- > 0;) {
			struct rtnl_if *ifp = rt->ifs[i];

			if (ifp->seen_generation != rt->generation) {
				if_remove(rt, ifp->ifindex);
				continue;
			}
			for (size_t j = ifp->naddrs; j-- > 0;) {
				if (ifp->addrs[j].seen_generation != rt->generation) {
					struct rtnl_addr gone = ifp->addrs[j];

					memmove(&ifp->addrs[j], &ifp->addrs[j + 1],
						(ifp->naddrs - j - 1) * sizeof(gone));
					ifp->naddrs--;
					emit(rt, RTNL_ADDR_REMOVED, ifp, 0, NULL, &gone);
				}
			}
			if (update_primary4(ifp))
				emit(rt, RTNL_IF_CHANGED, ifp, RTNL_CHANGE_PRIMARY4, NULL, NULL);
		}
		return 0;
	}
	errno = EAGAIN;
	return -1;
}

int rtnl_open(struct rtnl *rt, char *err, size_t errlen)
{
	int rcvbuf = RTNL_SOCKET_RCVBUF;
	unsigned groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;

	if (rt->nl != NULL) {
		snprintf(err, errlen, "rtnl: already open");
		return -1;
	}
	rt->rxbuf = malloc(RTNL_RXBUF);
	if (rt->rxbuf == NULL) {
		snprintf(err, errlen, "rtnl: out of memory");
		return -1;
	}
	rt->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (rt->nl == NULL) {
		snprintf(err, errlen, "rtnl: cannot open a route netlink socket: %s",
			strerror(errno));
		return -1;
	}
	if (mnl_socket_bind(rt->nl, groups, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "rtnl: cannot subscribe to link and address changes: %s",
			strerror(errno));
		mnl_socket_close(rt->nl);
		rt->nl = NULL;
		return -1;
	}
	rt->fd = mnl_socket_get_fd(rt->nl);
	rt->portid = mnl_socket_get_portid(rt->nl);
	if (setsockopt(rt->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		(void)setsockopt(rt->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (full_dump(rt) < 0) {
		snprintf(err, errlen, "rtnl: cannot dump interfaces and addresses: %s",
			strerror(errno));
		mnl_socket_close(rt->nl);
		rt->nl = NULL;
		rt->fd = -1;
		return -1;
	}
	return 0;
}

int rtnl_fd(const struct rtnl *rt)
{
	return rt->fd;
}

int rtnl_process(struct rtnl *rt)
{
	int handled = 0;
	bool resync = false;

	if (rt->nl == NULL) {
		errno = EBADF;
		return -1;
	}
	for (;;) {
		ssize_t n = recv(rt->fd, rt->rxbuf, RTNL_RXBUF, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				/* The kernel dropped notifications: only a dump tells what changed.
				 */
				resync = true;
				continue;
			}
			rt->st.errors++;
			return -1;
		}
		handled += handle_buffer(rt, rt->rxbuf, (size_t)n, 0, NULL);
	}
	if (resync) {
		rt->st.resyncs++;
		if (full_dump(rt) < 0) {
			rt->st.errors++;
			return -1;
		}
	}
	return handled;
}

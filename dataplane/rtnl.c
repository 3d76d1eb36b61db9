/*
 * Interfaces and addresses from rtnetlink. See rtnl.h.
 */
#include "dataplane/rtnl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "dataplane/nlmirror.h"

#define RTNL_DUMP_RETRIES 5

struct rtnl {
	struct nlmirror *nm;
	rtnl_event_fn fn;
	void *ctx;
	struct rtnl_if **ifs; /* sorted by ifindex */
	size_t nifs, cap;
	unsigned generation; /* of the dump in progress */
	/* messages and resyncs are counted by nm, and some of errors and ignored */
	struct rtnl_stats st;
};

static const struct nlmirror_ops rtnl_mirror_ops;

struct rtnl *rtnl_new(rtnl_event_fn fn, void *ctx)
{
	struct rtnl *rt = calloc(1, sizeof(*rt));

	if (rt == NULL)
		return NULL;
	rt->nm = nlmirror_new(&rtnl_mirror_ops, rt);
	if (rt->nm == NULL) {
		free(rt);
		return NULL;
	}
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
	nlmirror_free(rt->nm);
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
	struct nlmirror_stats ns;

	nlmirror_get_stats(rt->nm, &ns);
	*st = rt->st;
	st->messages = ns.messages;
	st->resyncs = ns.resyncs;
	st->ignored += ns.ignored;
	st->errors += ns.errors;
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

static void handle_link(void *ctx, const struct nlmsghdr *nlh)
{
	struct rtnl *rt = ctx;
	const struct ifinfomsg *ifi;
	const struct nlattr *tb[IFLA_MAX + 1] = {0};
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
	if (!nlmirror_attrs(nlh, sizeof(*ifi), tb, IFLA_MAX) || tb[IFLA_IFNAME] == NULL ||
		mnl_attr_validate(tb[IFLA_IFNAME], MNL_TYPE_STRING) < 0) {
		rt->st.malformed++;
		return;
	}
	snprintf(name, sizeof(name), "%s", mnl_attr_get_str(tb[IFLA_IFNAME]));
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
	if (!is_new && ifp->type != ifi->ifi_type)
		changes |= RTNL_CHANGE_TYPE;
	ifp->type = ifi->ifi_type;
	ifp->flags = ifi->ifi_flags;
	ifp->up = (ifi->ifi_flags & IFF_UP) != 0;
	ifp->running = (ifi->ifi_flags & IFF_RUNNING) != 0;
	if (tb[IFLA_MTU] != NULL && mnl_attr_validate(tb[IFLA_MTU], MNL_TYPE_U32) == 0) {
		uint32_t mtu = mnl_attr_get_u32(tb[IFLA_MTU]);

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

static void handle_addr(void *ctx, const struct nlmsghdr *nlh)
{
	struct rtnl *rt = ctx;
	const struct ifaddrmsg *ifa;
	const struct nlattr *tb[IFA_MAX + 1] = {0};
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
	if (!nlmirror_attrs(nlh, sizeof(*ifa), tb, IFA_MAX)) {
		rt->st.malformed++;
		return;
	}
	alen = ifa->ifa_family == AF_INET ? 4 : 16;
	/* IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer's on point-to-point
	 * links and the same as IFA_LOCAL otherwise (IPv6 sends IFA_ADDRESS only). */
	addr_attr = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
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
	if (tb[IFA_FLAGS] != NULL && mnl_attr_get_payload_len(tb[IFA_FLAGS]) >= 4)
		a.flags = mnl_attr_get_u32(tb[IFA_FLAGS]);
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

int rtnl_input(struct rtnl *rt, const void *buf, size_t len)
{
	return nlmirror_input(rt->nm, buf, len);
}

/* ---- socket ---- */

/*
 * A full dump: links, then addresses. Interfaces and addresses not seen in it are gone (missed
 * notifications) and are reported removed.
 */
static int full_dump(void *ctx)
{
	struct rtnl *rt = ctx;
	const struct rtgenmsg g = {.rtgen_family = AF_UNSPEC};

	for (int attempt = 0; attempt < RTNL_DUMP_RETRIES; attempt++) {
		bool links_interrupted, addrs_interrupted;

		rt->generation++;
		rt->st.dumps++;
		if (nlmirror_dump(rt->nm, RTM_GETLINK, &g, sizeof(g), &links_interrupted) < 0 ||
			nlmirror_dump(rt->nm, RTM_GETADDR, &g, sizeof(g), &addrs_interrupted) < 0)
			return -1;
		if (links_interrupted || addrs_interrupted)
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

static const unsigned rtnl_groups[] = {RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR};

static const struct nlmirror_handler rtnl_handlers[] = {
	{RTM_NEWLINK, handle_link},
	{RTM_DELLINK, handle_link},
	{RTM_NEWADDR, handle_addr},
	{RTM_DELADDR, handle_addr},
};

static const struct nlmirror_ops rtnl_mirror_ops = {
	.name = "rtnl",
	.changes = "link and address changes",
	.table = "interfaces and addresses",
	.groups = rtnl_groups,
	.ngroups = sizeof(rtnl_groups) / sizeof(rtnl_groups[0]),
	.handlers = rtnl_handlers,
	.nhandlers = sizeof(rtnl_handlers) / sizeof(rtnl_handlers[0]),
	.full_dump = full_dump,
};

int rtnl_open(struct rtnl *rt, char *err, size_t errlen)
{
	return nlmirror_open(rt->nm, err, errlen);
}

int rtnl_fd(const struct rtnl *rt)
{
	return nlmirror_fd(rt->nm);
}

int rtnl_process(struct rtnl *rt)
{
	return nlmirror_process(rt->nm);
}

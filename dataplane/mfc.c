/* The kernel's multicast forwarding cache, mirrored from rtnetlink: see mfc.h. */
#include "dataplane/mfc.h"

#include <libmnl/libmnl.h>
#include <linux/mroute.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/nlmirror.h"

#define MFC_MIN_BUCKETS 64u

struct mfc_node {
	struct mfc_node *next;
	struct mfc_route r;
};

struct mfc {
	struct nlmirror *nm;
	struct mfc_node **buckets;
	size_t nbuckets, count;
	/* messages and resyncs are counted by nm, and some of errors and ignored */
	struct mfc_stats st;
};

static const struct nlmirror_ops mfc_mirror_ops;

struct mfc *mfc_new(void)
{
	struct mfc *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->nm = nlmirror_new(&mfc_mirror_ops, m);
	m->buckets = calloc(MFC_MIN_BUCKETS, sizeof(*m->buckets));
	if (m->nm == NULL || m->buckets == NULL) {
		nlmirror_free(m->nm);
		free(m->buckets);
		free(m);
		return NULL;
	}
	m->nbuckets = MFC_MIN_BUCKETS;
	return m;
}

static void clear_all(struct mfc *m)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		while (m->buckets[i] != NULL) {
			struct mfc_node *n = m->buckets[i];

			m->buckets[i] = n->next;
			free(n);
		}
	}
	m->count = 0;
}

void mfc_free(struct mfc *m)
{
	if (m == NULL)
		return;
	clear_all(m);
	free(m->buckets);
	nlmirror_free(m->nm);
	free(m);
}

/* ---- the table ---- */

static size_t bucket_of(const struct mfc *m, struct in_addr src, struct in_addr grp)
{
	uint64_t k = ((uint64_t)src.s_addr << 32) | grp.s_addr;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (m->nbuckets - 1);
}

static struct mfc_node **find_slot(struct mfc *m, struct in_addr src, struct in_addr grp)
{
	struct mfc_node **p = &m->buckets[bucket_of(m, src, grp)];

	while (*p != NULL && ((*p)->r.src.s_addr != src.s_addr || (*p)->r.grp.s_addr != grp.s_addr))
		p = &(*p)->next;
	return p;
}

static void grow(struct mfc *m)
{
	size_t n = m->nbuckets * 2;
	struct mfc_node **b = calloc(n, sizeof(*b));
	struct mfc_node **old = m->buckets;
	size_t oldn = m->nbuckets;

	if (b == NULL)
		return; /* longer chains, still correct */
	m->buckets = b;
	m->nbuckets = n;
	for (size_t i = 0; i < oldn; i++) {
		while (old[i] != NULL) {
			struct mfc_node *x = old[i];
			size_t k = bucket_of(m, x->r.src, x->r.grp);

			old[i] = x->next;
			x->next = b[k];
			b[k] = x;
		}
	}
	free(old);
}

static struct mfc_route *upsert(struct mfc *m, const struct mfc_route *r)
{
	struct mfc_node **p = find_slot(m, r->src, r->grp);
	struct mfc_node *n;

	if (*p != NULL) {
		uint64_t replicated = (*p)->r.replicated, by_kernel = (*p)->r.by_kernel;

		(*p)->r = *r;
		(*p)->r.replicated = replicated;
		(*p)->r.by_kernel = by_kernel;
		return &(*p)->r;
	}
	n = malloc(sizeof(*n));
	if (n == NULL) {
		m->st.errors++;
		return NULL;
	}
	n->next = NULL;
	n->r = *r;
	n->r.replicated = 0;
	n->r.by_kernel = 0;
	*p = n;
	m->count++;
	if (m->count > m->nbuckets)
		grow(m);
	return &n->r; /* grow() moves the node, not its memory */
}

static void erase(struct mfc *m, struct in_addr src, struct in_addr grp)
{
	struct mfc_node **p = find_slot(m, src, grp);
	struct mfc_node *n = *p;

	if (n == NULL)
		return;
	*p = n->next;
	free(n);
	m->count--;
}

static struct mfc_node *lookup_node(const struct mfc *m, struct in_addr src, struct in_addr grp)
{
	struct in_addr any = {0};
	struct mfc_node *n;

	for (n = m->buckets[bucket_of(m, src, grp)]; n != NULL; n = n->next)
		if (n->r.src.s_addr == src.s_addr && n->r.grp.s_addr == grp.s_addr)
			return n;
	for (n = m->buckets[bucket_of(m, any, grp)]; n != NULL; n = n->next)
		if (n->r.src.s_addr == 0 && n->r.grp.s_addr == grp.s_addr)
			return n;
	return NULL;
}

size_t mfc_sources(const struct mfc *m, struct in_addr grp, int oif, struct in_addr *srcs,
	size_t max)
{
	size_t n = 0;

	for (size_t b = 0; b < m->nbuckets && n < max; b++) {
		for (const struct mfc_node *e = m->buckets[b]; e != NULL && n < max; e = e->next) {
			const struct mfc_route *r = &e->r;
			unsigned i;

			if (r->src.s_addr == 0 || r->grp.s_addr != grp.s_addr || r->iif == 0 ||
				r->iif == oif)
				continue;
			for (i = 0; i < r->noifs && r->oif[i] != oif; i++)
				;
			if (i < r->noifs)
				srcs[n++] = r->src;
		}
	}
	return n;
}

const struct mfc_route *mfc_lookup(const struct mfc *m, struct in_addr src, struct in_addr grp)
{
	struct mfc_node *n = lookup_node(m, src, grp);

	return n != NULL ? &n->r : NULL;
}

struct mfc_route *mfc_find(struct mfc *m, struct in_addr src, struct in_addr grp)
{
	struct mfc_node *n = lookup_node(m, src, grp);

	return n != NULL ? &n->r : NULL;
}

static struct mfc_node *exact_node(const struct mfc *m, struct in_addr src, struct in_addr grp)
{
	struct mfc_node *n;

	for (n = m->buckets[bucket_of(m, src, grp)]; n != NULL; n = n->next)
		if (n->r.src.s_addr == src.s_addr && n->r.grp.s_addr == grp.s_addr)
			return n;
	return NULL;
}

/*
 * As ip_mr_input: a resolved (S,G) (ipmr_cache_find), else a (*,G) that lists the arrival
 * interface among its outgoing ones (mr_mfc_find_any, ttls[vif] < 255), else none.
 * Unresolved entries (no incoming interface) sit in the kernel's unresolved queue, never in
 * the table a lookup searches. (*,*) proxy entries are not mirrored: see dataplane/README.
 */
struct mfc_route *mfc_match(struct mfc *m, struct in_addr src, struct in_addr grp, int iif)
{
	struct in_addr any = {0};
	struct mfc_node *n = exact_node(m, src, grp);

	if (n != NULL && n->r.iif != 0)
		return &n->r;
	n = exact_node(m, any, grp);
	if (n == NULL || n->r.iif == 0)
		return NULL;
	if (iif == 0)
		return &n->r;
	for (unsigned i = 0; i < n->r.noifs; i++)
		if (n->r.oif[i] == iif)
			return &n->r;
	return NULL;
}

struct mfc_route *mfc_add(struct mfc *m, const struct mfc_route *r)
{
	return upsert(m, r);
}

void mfc_foreach(const struct mfc *m, void (*fn)(void *arg, const struct mfc_route *r), void *arg)
{
	for (size_t i = 0; i < m->nbuckets; i++)
		for (const struct mfc_node *n = m->buckets[i]; n != NULL; n = n->next)
			fn(arg, &n->r);
}

size_t mfc_count(const struct mfc *m)
{
	return m->count;
}

void mfc_get_stats(const struct mfc *m, struct mfc_stats *st)
{
	struct nlmirror_stats ns;

	nlmirror_get_stats(m->nm, &ns);
	*st = m->st;
	st->messages = ns.messages;
	st->resyncs = ns.resyncs;
	st->ignored += ns.ignored;
	st->errors += ns.errors;
}

/* ---- messages ---- */

static bool attr_in4(const struct nlattr *a, struct in_addr *out)
{
	if (a == NULL || mnl_attr_get_payload_len(a) != 4)
		return false;
	memcpy(out, mnl_attr_get_payload(a), 4);
	return true;
}

/* RTA_MULTIPATH: one rtnexthop per outgoing interface, rtnh_hops the TTL threshold. */
static bool parse_oifs(const struct nlattr *a, struct mfc_route *r)
{
	const uint8_t *p = mnl_attr_get_payload(a);
	size_t left = mnl_attr_get_payload_len(a);

	while (left > 0) {
		struct rtnexthop nh;
		size_t step;

		if (left < sizeof(nh))
			return false;
		memcpy(&nh, p, sizeof(nh));
		if (nh.rtnh_len < sizeof(nh) || nh.rtnh_len > left || r->noifs == MFC_MAX_OIFS)
			return false;
		r->oif[r->noifs] = nh.rtnh_ifindex;
		r->ttl[r->noifs] = nh.rtnh_hops;
		r->noifs++;
		step = RTNH_ALIGN(nh.rtnh_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	return true;
}

static void handle_route(void *ctx, const struct nlmsghdr *nlh)
{
	struct mfc *m = ctx;
	const struct nlattr *tb[RTA_MAX + 1] = {0};
	const struct rtmsg *rtm;
	struct mfc_route r;
	uint32_t table;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*rtm))) {
		m->st.invalid++;
		return;
	}
	rtm = mnl_nlmsg_get_payload(nlh);
	if (rtm->rtm_family != RTNL_FAMILY_IPMR) {
		m->st.ignored++;
		return;
	}
	if (!nlmirror_attrs(nlh, sizeof(*rtm), tb, RTA_MAX)) {
		m->st.invalid++;
		return;
	}
	table = rtm->rtm_table;
	if (tb[RTA_TABLE] != NULL && mnl_attr_get_payload_len(tb[RTA_TABLE]) == 4)
		table = mnl_attr_get_u32(tb[RTA_TABLE]);
	if (table != RT_TABLE_DEFAULT) {
		m->st.ignored++;
		return;
	}
	memset(&r, 0, sizeof(r));
	if (!attr_in4(tb[RTA_DST], &r.grp) ||
		(tb[RTA_SRC] != NULL && !attr_in4(tb[RTA_SRC], &r.src))) {
		m->st.invalid++;
		return;
	}
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		erase(m, r.src, r.grp);
		return;
	}
	if (tb[RTA_IIF] != NULL && mnl_attr_get_payload_len(tb[RTA_IIF]) == 4)
		r.iif = (int)mnl_attr_get_u32(tb[RTA_IIF]);
	if (tb[RTA_MULTIPATH] != NULL && !parse_oifs(tb[RTA_MULTIPATH], &r)) {
		m->st.invalid++;
		return;
	}
	(void)upsert(m, &r);
}

int mfc_input(struct mfc *m, const void *buf, size_t len)
{
	return nlmirror_input(m->nm, buf, len);
}

/* ---- socket ---- */

/* The whole cache again: the old copy is dropped first, so entries gone meanwhile go too. */
static int full_dump(void *ctx)
{
	struct mfc *m = ctx;
	const struct rtmsg rtm = {.rtm_family = RTNL_FAMILY_IPMR};

	m->st.dumps++;
	clear_all(m);
	return nlmirror_dump(m->nm, RTM_GETROUTE, &rtm, sizeof(rtm), NULL);
}

static const unsigned mfc_groups[] = {RTNLGRP_IPV4_MROUTE};

static const struct nlmirror_handler mfc_handlers[] = {
	{RTM_NEWROUTE, handle_route},
	{RTM_DELROUTE, handle_route},
};

static const struct nlmirror_ops mfc_mirror_ops = {
	.name = "mfc",
	.changes = "multicast route changes",
	.table = "the multicast forwarding cache",
	.groups = mfc_groups,
	.ngroups = sizeof(mfc_groups) / sizeof(mfc_groups[0]),
	.handlers = mfc_handlers,
	.nhandlers = sizeof(mfc_handlers) / sizeof(mfc_handlers[0]),
	.full_dump = full_dump,
};

int mfc_open(struct mfc *m, char *err, size_t errlen)
{
	return nlmirror_open(m->nm, err, errlen);
}

int mfc_fd(const struct mfc *m)
{
	return nlmirror_fd(m->nm);
}

int mfc_process(struct mfc *m)
{
	return nlmirror_process(m->nm) < 0 ? -1 : 0;
}

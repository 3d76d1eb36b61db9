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

/* The key as stored: the family and its address bytes, the rest zero (a parsed NLA may carry
   anything past its length). False for a family other than the two. */
static bool mfc_key(struct pgm_nla *key, const struct pgm_nla *addr)
{
	size_t len = pgm_nla_len(addr);

	if (len == 0)
		return false;
	memset(key, 0, sizeof(*key));
	key->afi = addr->afi;
	memcpy(key->addr, addr->addr, len);
	return true;
}

static bool key_equal(const struct pgm_nla *a, const struct pgm_nla *b)
{
	return a->afi == b->afi && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static bool key_zero(const struct pgm_nla *a)
{
	static const uint8_t zero[sizeof(a->addr)];

	return memcmp(a->addr, zero, sizeof(zero)) == 0;
}

static size_t bucket_of(const struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp)
{
	uint64_t k = src->afi;

	/* FNV-1a over both addresses, then the same finaliser as before */
	for (size_t i = 0; i < sizeof(src->addr); i++)
		k = (k ^ src->addr[i]) * 0x100000001b3ULL;
	for (size_t i = 0; i < sizeof(grp->addr); i++)
		k = (k ^ grp->addr[i]) * 0x100000001b3ULL;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (m->nbuckets - 1);
}

static struct mfc_node **find_slot(
	struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp)
{
	struct mfc_node **p = &m->buckets[bucket_of(m, src, grp)];

	while (*p != NULL && (!key_equal(&(*p)->r.src, src) || !key_equal(&(*p)->r.grp, grp)))
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
			size_t k = bucket_of(m, &x->r.src, &x->r.grp);

			old[i] = x->next;
			x->next = b[k];
			b[k] = x;
		}
	}
	free(old);
}

/* r's src and grp are keys (mfc_key). */
static struct mfc_route *upsert(struct mfc *m, const struct mfc_route *r)
{
	struct mfc_node **p = find_slot(m, &r->src, &r->grp);
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

static void erase(struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp)
{
	struct mfc_node **p = find_slot(m, src, grp);
	struct mfc_node *n = *p;

	if (n == NULL)
		return;
	*p = n->next;
	free(n);
	m->count--;
}

bool mfc_route_any_source(const struct mfc_route *r)
{
	return key_zero(&r->src);
}

static struct mfc_node *lookup_node(
	const struct mfc *m, const struct pgm_nla *src_addr, const struct pgm_nla *grp_addr)
{
	struct pgm_nla src, grp, any;
	struct mfc_node *n;

	if (!mfc_key(&src, src_addr) || !mfc_key(&grp, grp_addr) || src.afi != grp.afi)
		return NULL;
	memset(&any, 0, sizeof(any));
	any.afi = grp.afi;
	for (n = m->buckets[bucket_of(m, &src, &grp)]; n != NULL; n = n->next)
		if (key_equal(&n->r.src, &src) && key_equal(&n->r.grp, &grp))
			return n;
	for (n = m->buckets[bucket_of(m, &any, &grp)]; n != NULL; n = n->next)
		if (key_equal(&n->r.src, &any) && key_equal(&n->r.grp, &grp))
			return n;
	return NULL;
}

size_t mfc_sources(const struct mfc *m, const struct pgm_nla *grp_addr, int oif,
	struct pgm_nla *srcs, size_t max)
{
	struct pgm_nla grp;
	size_t n = 0;

	if (!mfc_key(&grp, grp_addr))
		return 0;
	for (size_t b = 0; b < m->nbuckets && n < max; b++) {
		for (const struct mfc_node *e = m->buckets[b]; e != NULL && n < max; e = e->next) {
			const struct mfc_route *r = &e->r;
			unsigned i;

			if (mfc_route_any_source(r) || !key_equal(&r->grp, &grp) || r->iif == 0 ||
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

const struct mfc_route *mfc_lookup(
	const struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp)
{
	struct mfc_node *n = lookup_node(m, src, grp);

	return n != NULL ? &n->r : NULL;
}

struct mfc_route *mfc_find(struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp)
{
	struct mfc_node *n = lookup_node(m, src, grp);

	return n != NULL ? &n->r : NULL;
}

static struct mfc_node *exact_node(
	const struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp)
{
	struct mfc_node *n;

	for (n = m->buckets[bucket_of(m, src, grp)]; n != NULL; n = n->next)
		if (key_equal(&n->r.src, src) && key_equal(&n->r.grp, grp))
			return n;
	return NULL;
}

/*
 * As ip_mr_input and ip6_mr_input: a resolved (S,G) (ipmr_cache_find), else a (*,G) that lists
 * the arrival interface among its outgoing ones (mr_mfc_find_any, ttls[vif] < 255), else none.
 * Unresolved entries (no incoming interface) sit in the kernel's unresolved queue, never in
 * the table a lookup searches. (*,*) proxy entries are not mirrored: see dataplane/README.
 */
struct mfc_route *mfc_match(
	struct mfc *m, const struct pgm_nla *src_addr, const struct pgm_nla *grp_addr, int iif)
{
	struct pgm_nla src, grp, any;
	struct mfc_node *n;

	if (!mfc_key(&src, src_addr) || !mfc_key(&grp, grp_addr) || src.afi != grp.afi)
		return NULL;
	n = exact_node(m, &src, &grp);
	if (n != NULL && n->r.iif != 0)
		return &n->r;
	memset(&any, 0, sizeof(any));
	any.afi = grp.afi;
	n = exact_node(m, &any, &grp);
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
	struct mfc_route k = *r;

	if (!mfc_key(&k.src, &r->src) || !mfc_key(&k.grp, &r->grp) || k.src.afi != k.grp.afi)
		return NULL;
	return upsert(m, &k);
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

/* An address attribute of the family's length into an NLA key. */
static bool attr_addr(const struct nlattr *a, uint16_t afi, struct pgm_nla *out)
{
	size_t len = afi == PGM_AFI_IP ? 4 : 16;

	if (a == NULL || mnl_attr_get_payload_len(a) != len)
		return false;
	memset(out, 0, sizeof(*out));
	out->afi = afi;
	memcpy(out->addr, mnl_attr_get_payload(a), len);
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
	uint32_t table, default_table;
	uint16_t afi;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*rtm))) {
		m->st.invalid++;
		return;
	}
	rtm = mnl_nlmsg_get_payload(nlh);
	/* ip6mr's default table is RT6_TABLE_DFLT, which the kernel defines as RT_TABLE_MAIN */
	if (rtm->rtm_family == RTNL_FAMILY_IPMR) {
		afi = PGM_AFI_IP;
		default_table = RT_TABLE_DEFAULT;
	} else if (rtm->rtm_family == RTNL_FAMILY_IP6MR) {
		afi = PGM_AFI_IP6;
		default_table = RT_TABLE_MAIN;
	} else {
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
	if (table != default_table) {
		m->st.ignored++;
		return;
	}
	memset(&r, 0, sizeof(r));
	r.src.afi = afi; /* no RTA_SRC: (*,G) */
	if (!attr_addr(tb[RTA_DST], afi, &r.grp) ||
		(tb[RTA_SRC] != NULL && !attr_addr(tb[RTA_SRC], afi, &r.src))) {
		m->st.invalid++;
		return;
	}
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		erase(m, &r.src, &r.grp);
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

/* Both caches again: the old copy is dropped first, so entries gone meanwhile go too. A kernel
   without IPv6 multicast routing answers the IPv6 request with an error or with routes of
   other families, counted and ignored. */
static int full_dump(void *ctx)
{
	struct mfc *m = ctx;
	const struct rtmsg rtm4 = {.rtm_family = RTNL_FAMILY_IPMR};
	const struct rtmsg rtm6 = {.rtm_family = RTNL_FAMILY_IP6MR};

	m->st.dumps++;
	clear_all(m);
	if (nlmirror_dump(m->nm, RTM_GETROUTE, &rtm4, sizeof(rtm4), NULL) < 0)
		return -1;
	return nlmirror_dump(m->nm, RTM_GETROUTE, &rtm6, sizeof(rtm6), NULL);
}

static const unsigned mfc_groups[] = {RTNLGRP_IPV4_MROUTE, RTNLGRP_IPV6_MROUTE};

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

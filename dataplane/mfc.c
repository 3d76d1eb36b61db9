/* The kernel's multicast forwarding cache, mirrored from rtnetlink: see mfc.h. */
#include "dataplane/mfc.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/mroute.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define MFC_RXBUF	    (64u * 1024)
#define MFC_SOCKET_RCVBUF   (4 * 1024 * 1024)
#define MFC_DUMP_TIMEOUT_MS 5000
#define MFC_MIN_BUCKETS	    64u

struct mfc_node {
	struct mfc_node *next;
	struct mfc_route r;
};

struct mfc {
	struct mnl_socket *nl;
	int fd;
	uint32_t seq;
	struct mfc_node **buckets;
	size_t nbuckets, count;
	uint8_t *rxbuf;
	struct mfc_stats st;
};

struct mfc *mfc_new(void)
{
	struct mfc *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->fd = -1;
	m->buckets = calloc(MFC_MIN_BUCKETS, sizeof(*m->buckets));
	if (m->buckets == NULL) {
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
	if (m->nl != NULL)
		mnl_socket_close(m->nl);
	free(m->rxbuf);
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

static void upsert(struct mfc *m, const struct mfc_route *r)
{
	struct mfc_node **p = find_slot(m, r->src, r->grp);
	struct mfc_node *n;

	if (*p != NULL) {
		(*p)->r = *r;
		return;
	}
	n = malloc(sizeof(*n));
	if (n == NULL) {
		m->st.errors++;
		return;
	}
	n->next = NULL;
	n->r = *r;
	*p = n;
	m->count++;
	if (m->count > m->nbuckets)
		grow(m);
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

const struct mfc_route *mfc_lookup(const struct mfc *m, struct in_addr src, struct in_addr grp)
{
	struct in_addr any = {0};
	const struct mfc_node *n;

	for (n = m->buckets[bucket_of(m, src, grp)]; n != NULL; n = n->next)
		if (n->r.src.s_addr == src.s_addr && n->r.grp.s_addr == grp.s_addr)
			return &n->r;
	for (n = m->buckets[bucket_of(m, any, grp)]; n != NULL; n = n->next)
		if (n->r.src.s_addr == 0 && n->r.grp.s_addr == grp.s_addr)
			return &n->r;
	return NULL;
}

size_t mfc_count(const struct mfc *m)
{
	return m->count;
}

void mfc_get_stats(const struct mfc *m, struct mfc_stats *st)
{
	*st = m->st;
}

/* ---- messages ---- */

static int attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, RTA_MAX) > 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

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

static void handle_route(struct mfc *m, const struct nlmsghdr *nlh)
{
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
	if (mnl_attr_parse(nlh, sizeof(*rtm), attr_cb, tb) != MNL_CB_OK) {
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
	upsert(m, &r);
}

static int handle_buffer(struct mfc *m, const void *buf, size_t len, uint32_t dump_seq, bool *done)
{
	int remaining = (int)len, handled = 0;

	for (const struct nlmsghdr *nlh = buf; mnl_nlmsg_ok(nlh, remaining);
		nlh = mnl_nlmsg_next(nlh, &remaining)) {
		handled++;
		m->st.messages++;
		switch (nlh->nlmsg_type) {
		case RTM_NEWROUTE:
		case RTM_DELROUTE:
			handle_route(m, nlh);
			break;
		case NLMSG_DONE:
			if (done != NULL && nlh->nlmsg_seq == dump_seq)
				*done = true;
			break;
		case NLMSG_ERROR:
			if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct nlmsgerr))) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				if (e->error != 0)
					m->st.errors++;
			}
			if (done != NULL && nlh->nlmsg_seq == dump_seq)
				*done = true;
			break;
		default:
			m->st.ignored++;
			break;
		}
	}
	return handled;
}

int mfc_input(struct mfc *m, const void *buf, size_t len)
{
	return handle_buffer(m, buf, len, 0, NULL);
}

/* ---- socket ---- */

static int monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* The whole cache again: the old copy is dropped first, so entries gone meanwhile go too. */
static int dump(struct mfc *m)
{
	_Alignas(8) char req[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct rtmsg *rtm;
	int deadline = monotonic_ms() + MFC_DUMP_TIMEOUT_MS;
	bool done = false;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++m->seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = RTNL_FAMILY_IPMR;
	m->st.dumps++;
	clear_all(m);
	if (mnl_socket_sendto(m->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while (!done) {
		struct pollfd pfd = {.fd = m->fd, .events = POLLIN};
		int left = deadline - monotonic_ms();
		ssize_t n;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return -1;
		n = recv(m->fd, m->rxbuf, MFC_RXBUF, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)
				continue;
			return -1;
		}
		handle_buffer(m, m->rxbuf, (size_t)n, nlh->nlmsg_seq, &done);
	}
	return 0;
}

int mfc_open(struct mfc *m, char *err, size_t errlen)
{
	int rcvbuf = MFC_SOCKET_RCVBUF;
	unsigned group = RTNLGRP_IPV4_MROUTE;

	if (m->nl != NULL) {
		snprintf(err, errlen, "mfc: already open");
		return -1;
	}
	if (m->rxbuf == NULL && (m->rxbuf = malloc(MFC_RXBUF)) == NULL) {
		snprintf(err, errlen, "mfc: out of memory");
		return -1;
	}
	m->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (m->nl == NULL) {
		snprintf(err, errlen, "mfc: cannot open a route netlink socket: %s",
			strerror(errno));
		return -1;
	}
	if (mnl_socket_bind(m->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
		mnl_socket_setsockopt(m->nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		snprintf(err, errlen,
			"mfc: cannot subscribe to multicast route changes: %s", strerror(errno));
		goto fail;
	}
	m->fd = mnl_socket_get_fd(m->nl);
	if (setsockopt(m->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		(void)setsockopt(m->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (dump(m) < 0) {
		snprintf(err, errlen, "mfc: cannot dump the multicast forwarding cache: %s",
			strerror(errno));
		goto fail;
	}
	return 0;
fail:
	mnl_socket_close(m->nl);
	m->nl = NULL;
	m->fd = -1;
	return -1;
}

int mfc_fd(const struct mfc *m)
{
	return m->fd;
}

int mfc_process(struct mfc *m)
{
	bool resync = false;

	if (m->nl == NULL) {
		errno = EBADF;
		return -1;
	}
	for (;;) {
		ssize_t n = recv(m->fd, m->rxbuf, MFC_RXBUF, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				resync = true; /* notifications lost: only a dump tells */
				continue;
			}
			m->st.errors++;
			return -1;
		}
		handle_buffer(m, m->rxbuf, (size_t)n, 0, NULL);
	}
	if (resync) {
		m->st.resyncs++;
		if (dump(m) < 0) {
			m->st.errors++;
			return -1;
		}
	}
	return 0;
}

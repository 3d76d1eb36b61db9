/*
 * The route netlink socket behind a mirror of a kernel table. See nlmirror.h.
 */
#include "dataplane/nlmirror.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "dataplane/netlink.h"

#define NLMIRROR_RXBUF		 (64u * 1024)
#define NLMIRROR_SOCKET_RCVBUF	 (4 * 1024 * 1024)
#define NLMIRROR_DUMP_TIMEOUT_MS 5000
#define NLMIRROR_DUMP_TRIES	 3 /* full dumps in a row while notifications keep being lost */

struct nlmirror {
	const struct nlmirror_ops *ops;
	void *ctx;
	struct mnl_socket *nl;
	int fd;
	uint32_t seq;
	uint8_t *rxbuf;
	struct nlmirror_stats st;
	bool lost_in_dump; /* ENOBUFS while a dump was read: notifications lost during it */
};

/* The dump being read, if any. */
struct dump_progress {
	uint32_t seq;
	bool done;
	bool interrupted;
};

struct nlmirror *nlmirror_new(const struct nlmirror_ops *ops, void *ctx)
{
	struct nlmirror *nm = calloc(1, sizeof(*nm));

	if (nm == NULL)
		return NULL;
	nm->ops = ops;
	nm->ctx = ctx;
	nm->fd = -1;
	return nm;
}

static void close_socket(struct nlmirror *nm)
{
	if (nm->nl != NULL)
		mnl_socket_close(nm->nl);
	nm->nl = NULL;
	nm->fd = -1;
}

void nlmirror_free(struct nlmirror *nm)
{
	if (nm == NULL)
		return;
	close_socket(nm);
	free(nm->rxbuf);
	free(nm);
}

int nlmirror_fd(const struct nlmirror *nm)
{
	return nm->fd;
}

void nlmirror_get_stats(const struct nlmirror *nm, struct nlmirror_stats *st)
{
	*st = nm->st;
}

static void dispatch(struct nlmirror *nm, const struct nlmsghdr *nlh)
{
	const struct nlmirror_ops *ops = nm->ops;

	for (size_t i = 0; i < ops->nhandlers; i++) {
		if (ops->handlers[i].type == nlh->nlmsg_type) {
			ops->handlers[i].fn(nm->ctx, nlh);
			return;
		}
	}
	nm->st.ignored++;
}

/* Handles a buffer of messages; returns how many. dump is NULL outside a dump. */
static int handle_buffer(
	struct nlmirror *nm, const void *buf, size_t len, struct dump_progress *dump)
{
	int remaining = (int)len, handled = 0;

	for (const struct nlmsghdr *nlh = buf; netlink_msg_ok(nlh, remaining);
		nlh = mnl_nlmsg_next(nlh, &remaining)) {
		handled++;
		nm->st.messages++;
		if (dump != NULL && (nlh->nlmsg_flags & NLM_F_DUMP_INTR))
			dump->interrupted = true;
		switch (nlh->nlmsg_type) {
		case NLMSG_DONE:
			if (dump != NULL && nlh->nlmsg_seq == dump->seq)
				dump->done = true;
			break;
		case NLMSG_ERROR:
			if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(struct nlmsgerr))) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				if (e->error != 0)
					nm->st.errors++;
			}
			if (dump != NULL && nlh->nlmsg_seq == dump->seq)
				dump->done = true;
			break;
		default:
			dispatch(nm, nlh);
			break;
		}
	}
	return handled;
}

int nlmirror_input(struct nlmirror *nm, const void *buf, size_t len)
{
	return handle_buffer(nm, buf, len, NULL);
}

struct attr_table {
	const struct nlattr **tb;
	unsigned max;
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	const struct attr_table *t = data;
	unsigned type = mnl_attr_get_type(attr);

	if (type <= t->max)
		t->tb[type] = attr;
	return MNL_CB_OK;
}

bool nlmirror_attrs(const struct nlmsghdr *nlh, size_t len, const struct nlattr **tb, unsigned max)
{
	struct attr_table t = {tb, max};

	return mnl_attr_parse(nlh, (unsigned)len, attr_cb, &t) == MNL_CB_OK;
}

int nlmirror_dump(struct nlmirror *nm, uint16_t type, const void *family_header, size_t len,
	bool *interrupted)
{
	_Alignas(8) char req[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct dump_progress dump = {.seq = ++nm->seq};
	int64_t deadline = netlink_now_ms() + NLMIRROR_DUMP_TIMEOUT_MS;

	if (nm->nl == NULL) {
		errno = EBADF;
		return -1;
	}
	if (mnl_nlmsg_size(len) > sizeof(req)) {
		errno = EMSGSIZE;
		return -1;
	}
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = dump.seq;
	memcpy(mnl_nlmsg_put_extra_header(nlh, len), family_header, len);
	if (mnl_socket_sendto(nm->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while (!dump.done) {
		struct pollfd pfd = {.fd = nm->fd, .events = POLLIN};
		int64_t left = deadline - netlink_now_ms();
		ssize_t n;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -1;
		n = recv(nm->fd, nm->rxbuf, NLMIRROR_RXBUF, MSG_DONTWAIT);
		if (n < 0) {
			/* ENOBUFS: notifications were dropped (dump replies never are); read on,
			   and dump again after this one (dump_until_clean). */
			if (errno == ENOBUFS)
				nm->lost_in_dump = true;
			if (errno == EINTR || errno == EAGAIN || errno == ENOBUFS)
				continue;
			return -1;
		}
		handle_buffer(nm, nm->rxbuf, (size_t)n, &dump);
	}
	if (interrupted != NULL)
		*interrupted = dump.interrupted;
	return 0;
}

/*
 * The mirror's full dump, again while notifications were lost during it: a change after the
 * dump passed its entry, with its notification dropped, is in neither. A few tries; if
 * notifications are still being lost, the flag stays and the next nlmirror_process dumps.
 */
static int dump_until_clean(struct nlmirror *nm)
{
	for (int i = 0; i < NLMIRROR_DUMP_TRIES; i++) {
		if (i > 0)
			nm->st.resyncs++;
		nm->lost_in_dump = false;
		if (nm->ops->full_dump(nm->ctx) < 0)
			return -1;
		if (!nm->lost_in_dump)
			break;
	}
	return 0;
}

static int subscribe(struct nlmirror *nm)
{
	const struct nlmirror_ops *ops = nm->ops;

	for (size_t i = 0; i < ops->ngroups; i++)
		if (setsockopt(nm->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &ops->groups[i],
			    sizeof(ops->groups[i])) < 0)
			return -1;
	return 0;
}

int nlmirror_open(struct nlmirror *nm, char *err, size_t errlen)
{
	const struct nlmirror_ops *ops = nm->ops;

	if (nm->nl != NULL) {
		snprintf(err, errlen, "%s: already open", ops->name);
		return -1;
	}
	if (nm->rxbuf == NULL && (nm->rxbuf = malloc(NLMIRROR_RXBUF)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", ops->name);
		return -1;
	}
	nm->nl = netlink_open(&(struct netlink_socket_config){.bus = NETLINK_ROUTE,
				      .flags = SOCK_NONBLOCK,
				      .rcvbuf = NLMIRROR_SOCKET_RCVBUF,
				      .what = ops->name},
		NULL, err, errlen);
	if (nm->nl == NULL)
		return -1;
	nm->fd = mnl_socket_get_fd(nm->nl);
	if (subscribe(nm) < 0) {
		snprintf(err, errlen, "%s: cannot subscribe to %s: %s", ops->name, ops->changes,
			strerror(errno));
		close_socket(nm);
		return -1;
	}
	if (dump_until_clean(nm) < 0) {
		snprintf(err, errlen, "%s: cannot dump %s: %s", ops->name, ops->table,
			strerror(errno));
		close_socket(nm);
		return -1;
	}
	return 0;
}

int nlmirror_process(struct nlmirror *nm)
{
	int handled = 0;
	bool resync = nm->lost_in_dump;

	if (nm->nl == NULL) {
		errno = EBADF;
		return -1;
	}
	for (;;) {
		ssize_t n = recv(nm->fd, nm->rxbuf, NLMIRROR_RXBUF, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				/* Notifications were dropped: only a dump tells what changed. */
				resync = true;
				continue;
			}
			nm->st.errors++;
			return -1;
		}
		handled += handle_buffer(nm, nm->rxbuf, (size_t)n, NULL);
	}
	if (resync) {
		nm->st.resyncs++;
		if (dump_until_clean(nm) < 0) {
			nm->st.errors++;
			return -1;
		}
	}
	return handled;
}

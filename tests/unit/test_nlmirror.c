/*
 * The route netlink socket behind the mirrors: which messages reach the mirror's handlers, which
 * the module keeps (NLMSG_DONE, NLMSG_ERROR) or ignores, what is counted, the calls that need an
 * open socket, and a real open: subscription, a link dump read to its end, a second open refused;
 * in a network namespace of its own, notifications lost while the first dump is read (ENOBUFS)
 * make a second dump.
 */
#include <check.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dataplane/nlmirror.h"
#include "tests/unit/check_run.h"
#include "tests/unit/netns_test.h"

struct seen {
	int links;
	int full_dumps;
	bool interrupted;
	bool overrun; /* the first full dump starts with notifications lost (overrun_socket) */
	struct nlmirror *nm; /* for full_dump */
};

static void overrun_socket(struct seen *s);

static void on_link(void *ctx, const struct nlmsghdr *nlh)
{
	struct seen *s = ctx;

	ck_assert_uint_eq(nlh->nlmsg_type, RTM_NEWLINK);
	s->links++;
}

static int dump_links(void *ctx)
{
	struct seen *s = ctx;
	const struct rtgenmsg g = {.rtgen_family = AF_UNSPEC};

	if (s->overrun && s->full_dumps == 0)
		overrun_socket(s);
	s->full_dumps++;
	return nlmirror_dump(s->nm, RTM_GETLINK, &g, sizeof(g), &s->interrupted);
}

static const unsigned groups[] = {RTNLGRP_LINK};
static const struct nlmirror_handler handlers[] = {{RTM_NEWLINK, on_link}};

static const struct nlmirror_ops ops = {
	.name = "test",
	.changes = "link changes",
	.table = "links",
	.groups = groups,
	.ngroups = 1,
	.handlers = handlers,
	.nhandlers = 1,
	.full_dump = dump_links,
};

static _Alignas(8) uint8_t buf[1024];
static size_t buflen;

static struct nlmsghdr *put(uint16_t type, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + buflen);

	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = seq;
	return nlh;
}

static void put_error(int error, bool truncated)
{
	struct nlmsghdr *nlh = put(NLMSG_ERROR, 0);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	e->error = error;
	if (truncated)
		nlh->nlmsg_len = mnl_nlmsg_size(sizeof(e->error));
	buflen += NLMSG_ALIGN(nlh->nlmsg_len);
}

START_TEST(control_messages_kept)
{
	struct seen s = {0};
	struct nlmirror *nm = nlmirror_new(&ops, &s);
	struct nlmirror_stats st;
	struct nlmsghdr *nlh;

	ck_assert_ptr_nonnull(nm);
	buflen = 0;
	nlh = put(RTM_NEWLINK, 0);
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	buflen += NLMSG_ALIGN(nlh->nlmsg_len);
	nlh = put(NLMSG_NOOP, 0);
	buflen += NLMSG_ALIGN(nlh->nlmsg_len);
	nlh = put(NLMSG_DONE, 0);
	mnl_nlmsg_put_extra_header(nlh, sizeof(int));
	buflen += NLMSG_ALIGN(nlh->nlmsg_len);
	put_error(-EPERM, false);
	put_error(0, false);	 /* an acknowledgement */
	put_error(-EPERM, true); /* too short to say */
	ck_assert_int_eq(nlmirror_input(nm, buf, buflen), 6);
	/* Only the link has a handler; the NOOP is ignored. */
	ck_assert_int_eq(s.links, 1);
	nlmirror_get_stats(nm, &st);
	ck_assert_uint_eq(st.messages, 6);
	ck_assert_uint_eq(st.ignored, 1);
	ck_assert_uint_eq(st.errors, 1);
	ck_assert_uint_eq(st.resyncs, 0);
	/* A truncated buffer: only the whole messages. */
	ck_assert_int_eq(nlmirror_input(nm, buf, buflen - 1), 5);
	ck_assert_int_eq(s.full_dumps, 0);
	nlmirror_free(nm);
}
END_TEST

START_TEST(closed_socket)
{
	struct seen s = {0};
	struct nlmirror *nm = nlmirror_new(&ops, &s);
	const struct rtgenmsg g = {.rtgen_family = AF_UNSPEC};

	ck_assert_ptr_nonnull(nm);
	ck_assert_int_eq(nlmirror_fd(nm), -1);
	errno = 0;
	ck_assert_int_eq(nlmirror_process(nm), -1);
	ck_assert_int_eq(errno, EBADF);
	errno = 0;
	ck_assert_int_eq(nlmirror_dump(nm, RTM_GETLINK, &g, sizeof(g), NULL), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(s.full_dumps, 0);
	nlmirror_free(nm);
	nlmirror_free(NULL);
}
END_TEST

START_TEST(open_dumps)
{
	struct seen s = {0};
	struct nlmirror *nm = nlmirror_new(&ops, &s);
	struct nlmirror_stats st;
	char err[256] = "";

	ck_assert_ptr_nonnull(nm);
	s.nm = nm;
	ck_assert_msg(nlmirror_open(nm, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_ge(nlmirror_fd(nm), 0);
	ck_assert_int_eq(s.full_dumps, 1);
	ck_assert_int_ge(s.links, 1); /* lo at least */
	nlmirror_get_stats(nm, &st);
	ck_assert_uint_gt(st.messages, (uint64_t)s.links); /* NLMSG_DONE too */
	ck_assert_uint_eq(st.errors, 0);
	ck_assert_int_ge(nlmirror_process(nm), 0);
	ck_assert_int_eq(nlmirror_open(nm, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "test: already open");
	ck_assert_int_eq(s.full_dumps, 1);
	nlmirror_free(nm);
}
END_TEST

/* lo up and down, n times: a link notification each time. */
static void toggle_lo(int n)
{
	bool up = unit_link_set_up("lo", false); /* reads the state; a change if it was up */

	if (up)
		n--;
	up = false;
	for (int i = 0; i < n; i++) {
		up = !up;
		unit_link_set_up("lo", up);
	}
}

/* The socket's receive buffer overrun by link notifications (shrunk to its minimum, lo toggled,
   then restored): they are lost during the dump that follows. */
static void overrun_socket(struct seen *s)
{
	int tiny = 1, normal = 1 << 20;

	ck_assert_int_eq(
		setsockopt(nlmirror_fd(s->nm), SOL_SOCKET, SO_RCVBUFFORCE, &tiny, sizeof(tiny)), 0);
	toggle_lo(64);
	ck_assert_int_eq(
		setsockopt(nlmirror_fd(s->nm), SOL_SOCKET, SO_RCVBUFFORCE, &normal, sizeof(normal)),
		0);
}

START_TEST(lost_during_dump)
{
	struct seen s = {.overrun = true};
	struct nlmirror *nm;
	struct nlmirror_stats st;
	char err[256] = "";

	if (!unit_netns_enter("test_nlmirror", "lost_during_dump"))
		return;
	nm = nlmirror_new(&ops, &s);
	ck_assert_ptr_nonnull(nm);
	s.nm = nm;
	ck_assert_msg(nlmirror_open(nm, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(s.full_dumps, 2); /* the second after the lost notifications */
	nlmirror_get_stats(nm, &st);
	ck_assert_uint_eq(st.resyncs, 1);
	ck_assert_uint_eq(st.errors, 0);
	/* nothing pending: the next read dumps nothing more */
	ck_assert_int_ge(nlmirror_process(nm), 0);
	ck_assert_int_eq(s.full_dumps, 2);
	nlmirror_free(nm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nlmirror");
	TCase *tc = tcase_create("nlmirror");

	tcase_add_test(tc, control_messages_kept);
	tcase_add_test(tc, closed_socket);
	tcase_add_test(tc, open_dumps);
	tcase_add_test(tc, lost_during_dump);
	suite_add_tcase(s, tc);
	return check_run(s);
}

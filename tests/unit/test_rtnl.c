/*
 * rtnetlink table: link and address messages built here, fed through rtnl_input() without a
 * socket. Checks the table, the events and the handling of malformed or foreign messages.
 */
#include <arpa/inet.h>
#include <check.h>
#include <net/if_arp.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "dataplane/rtnl.h"
#include "tests/unit/check_run.h"

#define MAX_EVENTS 64

struct recorded {
	enum rtnl_event_type type;
	int ifindex;
	char name[IF_NAMESIZE];
	unsigned changes;
	char old_name[IF_NAMESIZE];
	char addr[64];
};

static struct recorded events[MAX_EVENTS];
static int nevents;

static void record(void *ctx, const struct rtnl_event *ev)
{
	struct recorded *r;

	(void)ctx;
	ck_assert_int_lt(nevents, MAX_EVENTS);
	r = &events[nevents++];
	memset(r, 0, sizeof(*r));
	r->type = ev->type;
	r->ifindex = ev->ifp->ifindex;
	strcpy(r->name, ev->ifp->name);
	r->changes = ev->changes;
	if (ev->old_name)
		strcpy(r->old_name, ev->old_name);
	if (ev->addr)
		rtnl_addr_format(ev->addr, r->addr, sizeof(r->addr));
}

static _Alignas(8) char buf[16384];
static size_t buflen;

static void reset(void)
{
	nevents = 0;
	buflen = 0;
}

static struct nlmsghdr *put_header(uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + buflen);

	nlh->nlmsg_type = type;
	return nlh;
}

static void commit(struct nlmsghdr *nlh)
{
	buflen += NLMSG_ALIGN(nlh->nlmsg_len);
}

static unsigned short link_type; /* ifi_type of the links put_link() makes (ARPHRD_*) */

static void put_link(
	uint16_t type, int family, int ifindex, const char *name, unsigned flags, uint32_t mtu)
{
	struct nlmsghdr *nlh = put_header(type);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = (unsigned char)family;
	ifi->ifi_type = link_type;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	commit(nlh);
}

static void put_addr(
	uint16_t type, int family, int ifindex, const char *text, uint8_t plen, uint32_t flags)
{
	struct nlmsghdr *nlh = put_header(type);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	uint8_t a[16];

	ifa->ifa_family = (unsigned char)family;
	ifa->ifa_index = (unsigned)ifindex;
	ifa->ifa_prefixlen = plen;
	ifa->ifa_flags = (unsigned char)flags;
	ck_assert_int_eq(inet_pton(family, text, a), 1);
	if (family == AF_INET) {
		mnl_attr_put(nlh, IFA_LOCAL, 4, a);
		mnl_attr_put(nlh, IFA_ADDRESS, 4, a);
	} else {
		mnl_attr_put(nlh, IFA_ADDRESS, 16, a);
	}
	if (flags > 0xff)
		mnl_attr_put_u32(nlh, IFA_FLAGS, flags);
	commit(nlh);
}

static int feed(struct rtnl *rt)
{
	int n = rtnl_input(rt, buf, buflen);

	buflen = 0;
	return n;
}

static const char *primary(const struct rtnl_if *ifp, char *b)
{
	if (!ifp->has_primary4)
		return "-";
	return inet_ntop(AF_INET, &ifp->primary4, b, INET_ADDRSTRLEN);
}

START_TEST(test_links_and_lookup)
{
	struct rtnl *rt = rtnl_new(record, NULL);
	const struct rtnl_if *ifp;

	reset();
	put_link(RTM_NEWLINK, AF_UNSPEC, 7, "eth1", IFF_UP | IFF_RUNNING, 1500);
	put_link(RTM_NEWLINK, AF_UNSPEC, 2, "eth0", IFF_UP, 9000);
	ck_assert_int_eq(feed(rt), 2);
	ck_assert_uint_eq(rtnl_if_count(rt), 2);
	ck_assert_int_eq(nevents, 2);
	ck_assert_int_eq(events[0].type, RTNL_IF_ADDED);
	ifp = rtnl_if_by_name(rt, "eth0");
	ck_assert_ptr_nonnull(ifp);
	ck_assert_int_eq(ifp->ifindex, 2);
	ck_assert(ifp->up);
	ck_assert(!ifp->running);
	ck_assert_uint_eq(ifp->mtu, 9000);
	ifp = rtnl_if_by_index(rt, 7);
	ck_assert_str_eq(ifp->name, "eth1");
	ck_assert(ifp->running);
	ck_assert_ptr_null(rtnl_if_by_index(rt, 3));
	ck_assert_ptr_null(rtnl_if_by_name(rt, "eth2"));
	/* the same message again: no event */
	put_link(RTM_NEWLINK, AF_UNSPEC, 2, "eth0", IFF_UP, 9000);
	feed(rt);
	ck_assert_int_eq(nevents, 2);
	rtnl_free(rt);
}
END_TEST

START_TEST(test_link_changes_and_rename)
{
	struct rtnl *rt = rtnl_new(record, NULL);

	reset();
	put_link(RTM_NEWLINK, AF_UNSPEC, 4, "d1", 0, 1500);
	feed(rt);
	put_link(RTM_NEWLINK, AF_UNSPEC, 4, "d1", IFF_UP | IFF_RUNNING, 1500);
	put_link(RTM_NEWLINK, AF_UNSPEC, 4, "down1", IFF_UP | IFF_RUNNING, 1400);
	feed(rt);
	ck_assert_int_eq(nevents, 3);
	ck_assert_int_eq(events[1].type, RTNL_IF_CHANGED);
	ck_assert_uint_eq(events[1].changes, RTNL_CHANGE_UP | RTNL_CHANGE_RUNNING);
	ck_assert_int_eq(events[2].type, RTNL_IF_CHANGED);
	ck_assert_uint_eq(events[2].changes, RTNL_CHANGE_NAME | RTNL_CHANGE_MTU);
	ck_assert_str_eq(events[2].old_name, "d1");
	ck_assert_str_eq(events[2].name, "down1");
	ck_assert_ptr_null(rtnl_if_by_name(rt, "d1"));
	ck_assert_int_eq(rtnl_if_by_name(rt, "down1")->ifindex, 4);
	put_link(RTM_NEWLINK, AF_UNSPEC, 4, "down1", IFF_UP | IFF_RUNNING | IFF_PROMISC, 1400);
	feed(rt);
	ck_assert_uint_eq(events[3].changes, RTNL_CHANGE_FLAGS);
	/* the link layer is kept and its change reported (the output path depends on it) */
	ck_assert_uint_eq(rtnl_if_by_index(rt, 4)->type, 0);
	link_type = ARPHRD_ETHER;
	put_link(RTM_NEWLINK, AF_UNSPEC, 4, "down1", IFF_UP | IFF_RUNNING | IFF_PROMISC, 1400);
	feed(rt);
	link_type = 0;
	ck_assert_int_eq(nevents, 5);
	ck_assert_uint_eq(events[4].changes, RTNL_CHANGE_TYPE);
	ck_assert_uint_eq(rtnl_if_by_index(rt, 4)->type, ARPHRD_ETHER);
	rtnl_free(rt);
}
END_TEST

START_TEST(test_addresses_and_primary)
{
	struct rtnl *rt = rtnl_new(record, NULL);
	const struct rtnl_if *ifp;
	char b[INET_ADDRSTRLEN];

	reset();
	put_link(RTM_NEWLINK, AF_UNSPEC, 3, "up0", IFF_UP, 1500);
	put_addr(RTM_NEWADDR, AF_INET, 3, "198.18.1.1", 24, 0);
	put_addr(RTM_NEWADDR, AF_INET, 3, "198.18.1.9", 24, IFA_F_SECONDARY);
	put_addr(RTM_NEWADDR, AF_INET6, 3, "2001:db8::1", 64, IFA_F_PERMANENT);
	feed(rt);
	ifp = rtnl_if_by_index(rt, 3);
	ck_assert_uint_eq(ifp->naddrs, 3);
	ck_assert_str_eq(primary(ifp, b), "198.18.1.1");
	/* added, addr, primary change, addr, addr */
	ck_assert_int_eq(nevents, 5);
	ck_assert_int_eq(events[1].type, RTNL_ADDR_ADDED);
	ck_assert_str_eq(events[1].addr, "198.18.1.1/24");
	ck_assert_int_eq(events[2].type, RTNL_IF_CHANGED);
	ck_assert_uint_eq(events[2].changes, RTNL_CHANGE_PRIMARY4);
	ck_assert_str_eq(events[3].addr, "198.18.1.9/24");
	ck_assert_str_eq(events[4].addr, "2001:db8::1/64");

	/* the primary goes; the kernel promotes the secondary with a NEWADDR without the flag */
	nevents = 0;
	put_addr(RTM_DELADDR, AF_INET, 3, "198.18.1.1", 24, 0);
	feed(rt);
	ck_assert_str_eq(primary(ifp, b), "-");
	put_addr(RTM_NEWADDR, AF_INET, 3, "198.18.1.9", 24, 0);
	feed(rt);
	ck_assert_str_eq(primary(ifp, b), "198.18.1.9");
	ck_assert_int_eq(nevents, 3); /* removed + primary gone, primary promoted */
	ck_assert_int_eq(events[0].type, RTNL_ADDR_REMOVED);
	ck_assert_uint_eq(events[1].changes, RTNL_CHANGE_PRIMARY4);
	ck_assert_uint_eq(events[2].changes, RTNL_CHANGE_PRIMARY4);
	ck_assert_uint_eq(ifp->naddrs, 2);

	/* extended flags (IFA_FLAGS) win over the 8-bit field */
	put_addr(RTM_NEWADDR, AF_INET6, 3, "2001:db8::2", 64, IFA_F_MANAGETEMPADDR | IFA_F_NODAD);
	feed(rt);
	ck_assert_uint_eq(ifp->addrs[2].flags, IFA_F_MANAGETEMPADDR | IFA_F_NODAD);
	/* deleting an unknown address is ignored */
	nevents = 0;
	put_addr(RTM_DELADDR, AF_INET, 3, "198.18.7.7", 24, 0);
	feed(rt);
	ck_assert_int_eq(nevents, 0);
	rtnl_free(rt);
}
END_TEST

START_TEST(test_link_removal_removes_addresses_first)
{
	struct rtnl *rt = rtnl_new(record, NULL);

	reset();
	put_link(RTM_NEWLINK, AF_UNSPEC, 5, "x", IFF_UP, 1500);
	put_addr(RTM_NEWADDR, AF_INET, 5, "198.18.5.1", 24, 0);
	feed(rt);
	nevents = 0;
	put_link(RTM_DELLINK, AF_UNSPEC, 5, "x", 0, 0);
	feed(rt);
	ck_assert_int_eq(nevents, 2);
	ck_assert_int_eq(events[0].type, RTNL_ADDR_REMOVED);
	ck_assert_str_eq(events[0].addr, "198.18.5.1/24");
	ck_assert_int_eq(events[1].type, RTNL_IF_REMOVED);
	ck_assert_str_eq(events[1].name, "x");
	ck_assert_uint_eq(rtnl_if_count(rt), 0);
	rtnl_free(rt);
}
END_TEST

START_TEST(test_foreign_and_malformed)
{
	struct rtnl *rt = rtnl_new(record, NULL);
	struct rtnl_stats st;
	struct nlmsghdr *nlh;

	reset();
	/* a bridge port notification shares the group: ignored */
	put_link(RTM_NEWLINK, AF_BRIDGE, 9, "br-port", IFF_UP, 1500);
	/* a link without a name */
	put_link(RTM_NEWLINK, AF_UNSPEC, 10, NULL, IFF_UP, 1500);
	/* an address of an unknown interface */
	put_addr(RTM_NEWADDR, AF_INET, 11, "198.18.9.9", 24, 0);
	/* a link message cut short */
	nlh = put_header(RTM_NEWLINK);
	nlh->nlmsg_len = NLMSG_HDRLEN + 4;
	commit(nlh);
	/* an unrelated message type */
	nlh = put_header(RTM_NEWROUTE);
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct rtmsg));
	commit(nlh);
	ck_assert_int_eq(feed(rt), 5);
	ck_assert_int_eq(nevents, 0);
	ck_assert_uint_eq(rtnl_if_count(rt), 0);
	rtnl_get_stats(rt, &st);
	ck_assert_uint_eq(st.malformed, 2);
	ck_assert_uint_eq(st.ignored, 3);
	/* a buffer whose length lies: nothing is read past it */
	reset();
	put_link(RTM_NEWLINK, AF_UNSPEC, 12, "ok", IFF_UP, 1500);
	ck_assert_int_eq(rtnl_input(rt, buf, buflen - 1), 0);
	ck_assert_int_eq(rtnl_input(rt, buf, 0), 0);
	rtnl_free(rt);
}
END_TEST

/* A message length above INT_MAX passes libmnl's mnl_nlmsg_ok() (it compares as int) and its
 * aligned size steps the walk gigabytes on: the messages before it are taken, it is not. */
START_TEST(test_message_length_beyond_int)
{
	static const uint32_t lies[] = {0xffffff80u, 0xfffffffdu, 0x80000000u};
	struct rtnl *rt = rtnl_new(record, NULL);

	for (unsigned i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		struct nlmsghdr *nlh;

		reset();
		put_link(RTM_NEWLINK, AF_UNSPEC, 12, "ok", IFF_UP, 1500);
		nlh = put_header(RTM_NEWLINK);
		mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
		commit(nlh);
		nlh->nlmsg_len = lies[i];
		ck_assert_int_eq(feed(rt), 1);
	}
	ck_assert_uint_eq(rtnl_if_count(rt), 1);
	rtnl_free(rt);
}
END_TEST

static void collect(void *ctx, const struct rtnl_if *ifp)
{
	int *n = ctx;

	*n = *n * 100 + ifp->ifindex;
}

START_TEST(test_foreach_in_ifindex_order)
{
	struct rtnl *rt = rtnl_new(NULL, NULL);
	int n = 0;

	reset();
	put_link(RTM_NEWLINK, AF_UNSPEC, 30, "c", 0, 0);
	put_link(RTM_NEWLINK, AF_UNSPEC, 1, "lo", 0, 0);
	put_link(RTM_NEWLINK, AF_UNSPEC, 20, "b", 0, 0);
	put_link(RTM_NEWLINK, AF_UNSPEC, 25, "bb", 0, 0);
	feed(rt);
	rtnl_foreach_if(rt, collect, &n);
	ck_assert_int_eq(n, 1 * 1000000 + 20 * 10000 + 25 * 100 + 30);
	rtnl_free(rt);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rtnl");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_links_and_lookup);
	tcase_add_test(tc, test_link_changes_and_rename);
	tcase_add_test(tc, test_addresses_and_primary);
	tcase_add_test(tc, test_link_removal_removes_addresses_first);
	tcase_add_test(tc, test_foreign_and_malformed);
	tcase_add_test(tc, test_foreach_in_ifindex_order);
	tcase_add_test(tc, test_message_length_beyond_int);
	suite_add_tcase(s, tc);
	return check_run(s);
}

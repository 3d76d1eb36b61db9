/*
 * The multicast forwarding cache mirror: rtnetlink route messages of RTNL_FAMILY_IPMR and
 * RTNL_FAMILY_IP6MR as the kernel sends them (RTA_TABLE, RTA_SRC, RTA_DST, RTA_IIF,
 * RTA_MULTIPATH with the TTL or hop-limit threshold in rtnh_hops), (S,G) before (*,G), removal,
 * other tables, the two families kept apart, malformed messages counted, and a table large
 * enough to grow; the kernel's rules for which entry a datagram meets, and the copies the
 * daemon makes along an (S,G) entry that lists its own incoming interface.
 */
#include <arpa/inet.h>
#include <check.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "cli/config.h"
#include "cli/settings.h"
#include "dataplane/mfc.h"
#include "router/assist/assist_internal.h"
#include "router/assist/offline.h"
#include "router/vty/pgm_vty.h"
#include "tests/unit/check_run.h"

struct oif {
	int ifindex;
	uint8_t ttl;
};

/* One RTM_NEWROUTE/RTM_DELROUTE into buf, the family from the group's address; returns its
   length. src NULL: no RTA_SRC. */
static size_t route_msg(uint8_t *buf, uint16_t type, uint32_t table, const char *src,
	const char *grp, int iif, const struct oif *oifs, unsigned n)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	struct pgm_nla a;

	nlh->nlmsg_type = type;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	ck_assert(pgm_nla_parse(&a, grp));
	rtm->rtm_family = a.afi == PGM_AFI_IP ? RTNL_FAMILY_IPMR : RTNL_FAMILY_IP6MR;
	rtm->rtm_table = table < 256 ? (uint8_t)table : RT_TABLE_COMPAT;
	mnl_attr_put_u32(nlh, RTA_TABLE, table);
	if (src != NULL) {
		ck_assert(pgm_nla_parse(&a, src));
		mnl_attr_put(nlh, RTA_SRC, pgm_nla_len(&a), a.addr);
	}
	ck_assert(pgm_nla_parse(&a, grp));
	mnl_attr_put(nlh, RTA_DST, pgm_nla_len(&a), a.addr);
	if (iif)
		mnl_attr_put_u32(nlh, RTA_IIF, (uint32_t)iif);
	if (n > 0) {
		struct nlattr *mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);

		for (unsigned i = 0; i < n; i++) {
			struct rtnexthop nh = {.rtnh_len = sizeof(nh),
				.rtnh_hops = oifs[i].ttl,
				.rtnh_ifindex = oifs[i].ifindex};

			memcpy((uint8_t *)mnl_nlmsg_get_payload_tail(nlh), &nh, sizeof(nh));
			nlh->nlmsg_len += RTNH_ALIGN(sizeof(nh));
		}
		mnl_attr_nest_end(nlh, mp);
	}
	return nlh->nlmsg_len;
}

static struct pgm_nla nla(const char *text)
{
	struct pgm_nla a;

	ck_assert(pgm_nla_parse(&a, text));
	return a;
}

static const struct mfc_route *lookup(const struct mfc *m, const char *src, const char *grp)
{
	struct pgm_nla s = nla(src), g = nla(grp);

	return mfc_lookup(m, &s, &g);
}

START_TEST(add_lookup_remove)
{
	struct mfc *m = mfc_new();
	uint8_t buf[1024];
	const struct oif oifs[] = {{3, 1}, {4, 16}};
	const struct mfc_route *r;
	struct mfc_stats st;
	size_t len;

	ck_assert_ptr_nonnull(m);
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, oifs, 2);
	ck_assert_int_eq(mfc_input(m, buf, len), 1);
	r = lookup(m, "10.0.0.2", "239.1.2.3");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->iif, 2);
	ck_assert_uint_eq(r->noifs, 2);
	ck_assert_int_eq(r->oif[0], 3);
	ck_assert_uint_eq(r->ttl[0], 1);
	ck_assert_int_eq(r->oif[1], 4);
	ck_assert_uint_eq(r->ttl[1], 16);
	ck_assert_ptr_null(lookup(m, "10.0.0.3", "239.1.2.3"));
	ck_assert_ptr_null(lookup(m, "10.0.0.2", "239.1.2.4"));

	/* a change replaces the entry: one oif now */
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, oifs, 1);
	mfc_input(m, buf, len);
	ck_assert_uint_eq(mfc_count(m), 1);
	ck_assert_uint_eq(lookup(m, "10.0.0.2", "239.1.2.3")->noifs, 1);

	/* unresolved: an incoming interface, no oifs */
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.9", "239.1.2.3", 0, NULL, 0);
	mfc_input(m, buf, len);
	r = lookup(m, "10.0.0.9", "239.1.2.3");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->iif, 0);
	ck_assert_uint_eq(r->noifs, 0);

	len = route_msg(buf, RTM_DELROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, NULL, 0);
	mfc_input(m, buf, len);
	ck_assert_ptr_null(lookup(m, "10.0.0.2", "239.1.2.3"));
	ck_assert_uint_eq(mfc_count(m), 1);
	mfc_get_stats(m, &st);
	ck_assert_uint_eq(st.messages, 4);
	ck_assert_uint_eq(st.invalid + st.ignored, 0);
	mfc_free(m);
}
END_TEST

START_TEST(star_g_and_tables)
{
	struct mfc *m = mfc_new();
	uint8_t buf[2048];
	const struct oif oifs[] = {{5, 1}};
	struct mfc_stats st;
	size_t len = 0;

	/* several messages in one buffer, as a dump delivers them */
	len += route_msg(buf + len, RTM_NEWROUTE, RT_TABLE_DEFAULT, NULL, "239.9.9.9", 7, oifs, 1);
	len += route_msg(buf + len, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.9.9.9", 8,
		oifs, 1);
	len += route_msg(buf + len, RTM_NEWROUTE, 100, "10.0.0.3", "239.9.9.9", 9, oifs, 1);
	ck_assert_int_eq(mfc_input(m, buf, len), 3);
	/* (S,G) first, else (*,G); another table's entry is not ours */
	ck_assert_int_eq(lookup(m, "10.0.0.2", "239.9.9.9")->iif, 8);
	ck_assert_int_eq(lookup(m, "10.0.0.3", "239.9.9.9")->iif, 7);
	ck_assert_ptr_null(lookup(m, "10.0.0.3", "239.9.9.8"));
	mfc_get_stats(m, &st);
	ck_assert_uint_eq(st.ignored, 1);
	mfc_free(m);
}
END_TEST

START_TEST(malformed_counted)
{
	struct mfc *m = mfc_new();
	uint8_t buf[1024];
	const struct oif oifs[] = {{3, 1}};
	struct nlmsghdr *nlh;
	struct mfc_stats st;
	size_t len;

	/* no group */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWROUTE;
	((struct rtmsg *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct rtmsg)))->rtm_family =
		RTNL_FAMILY_IPMR;
	mnl_attr_put_u32(nlh, RTA_TABLE, RT_TABLE_DEFAULT);
	mfc_input(m, buf, nlh->nlmsg_len);
	/* a header cut short */
	nlh->nlmsg_len = sizeof(*nlh) + 4;
	mfc_input(m, buf, nlh->nlmsg_len);
	/* a next hop whose length runs past its attribute */
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, oifs, 1);
	nlh = (struct nlmsghdr *)buf;
	((struct rtnexthop *)((uint8_t *)buf + len - sizeof(struct rtnexthop)))->rtnh_len = 64;
	mfc_input(m, buf, len);
	/* an RTA_SRC of the wrong size */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWROUTE;
	((struct rtmsg *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct rtmsg)))->rtm_family =
		RTNL_FAMILY_IPMR;
	mnl_attr_put_u32(nlh, RTA_TABLE, RT_TABLE_DEFAULT);
	mnl_attr_put_u16(nlh, RTA_SRC, 1);
	mnl_attr_put_u32(nlh, RTA_DST, htonl(0xef010203));
	mfc_input(m, buf, nlh->nlmsg_len);
	mfc_get_stats(m, &st);
	ck_assert_uint_eq(st.invalid, 4);
	ck_assert_uint_eq(mfc_count(m), 0);
	mfc_free(m);
}
END_TEST

/* The sources of a group's (S,G) entries that leave by an interface, in by another: what the
 * core asks SPMs of after a restart. (*,G) entries name no source. */
START_TEST(sources_by_group_and_oif)
{
	struct mfc *m = mfc_new();
	uint8_t buf[1024];
	const struct oif oifs[] = {{3, 1}, {4, 1}};
	struct pgm_nla g, srcs[4];
	char text[INET6_ADDRSTRLEN];
	size_t len;

	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, oifs, 2);
	ck_assert_int_eq(mfc_input(m, buf, len), 1);
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.3", "239.1.2.3", 2, oifs, 1);
	ck_assert_int_eq(mfc_input(m, buf, len), 1);
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.4", "239.1.2.4", 2, oifs, 2);
	ck_assert_int_eq(mfc_input(m, buf, len), 1);
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, NULL, "239.1.2.3", 2, oifs, 2);
	ck_assert_int_eq(mfc_input(m, buf, len), 1);
	g = nla("239.1.2.3");
	ck_assert_uint_eq(mfc_sources(m, &g, 4, srcs, 4), 1);
	ck_assert_str_eq(pgm_nla_format(&srcs[0], text, sizeof(text)), "10.0.0.2");
	ck_assert_uint_eq(mfc_sources(m, &g, 3, srcs, 4), 2);
	ck_assert_uint_eq(mfc_sources(m, &g, 3, srcs, 1), 1);
	ck_assert_uint_eq(mfc_sources(m, &g, 2, srcs, 4), 0); /* the incoming interface */
	ck_assert_uint_eq(mfc_sources(m, &g, 9, srcs, 4), 0);
	mfc_free(m);
}
END_TEST

START_TEST(many_entries)
{
	struct mfc *m = mfc_new();
	uint8_t buf[512];
	const struct oif oifs[] = {{3, 1}};
	char grp[32];
	unsigned n = 5000;

	for (unsigned i = 0; i < n; i++) {
		size_t len;

		snprintf(grp, sizeof(grp), "239.%u.%u.%u", i >> 16, (i >> 8) & 0xff, i & 0xff);
		len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", grp, (int)i + 1,
			oifs, 1);
		mfc_input(m, buf, len);
	}
	ck_assert_uint_eq(mfc_count(m), n);
	for (unsigned i = 0; i < n; i++) {
		snprintf(grp, sizeof(grp), "239.%u.%u.%u", i >> 16, (i >> 8) & 0xff, i & 0xff);
		ck_assert_int_eq(lookup(m, "10.0.0.2", grp)->iif, (int)i + 1);
	}
	mfc_free(m);
}
END_TEST

static void count_route(void *arg, const struct mfc_route *r)
{
	(*(uint64_t *)arg) += r->replicated;
}

/* The packet path's counters belong to the route, not to one notification of it: an update
   keeps them, a removal and a new entry start again; every entry is visited once. */
START_TEST(counters_kept_across_updates)
{
	struct mfc *m = mfc_new();
	uint8_t buf[1024];
	const struct oif oifs[] = {{3, 1}, {4, 16}};
	struct mfc_route given = {.iif = 7, .noifs = 1, .oif = {8}, .ttl = {2}}, *r;
	struct pgm_nla s = nla("10.0.0.2"), g = nla("239.1.2.3");
	uint64_t total = 0;
	size_t len;

	ck_assert_ptr_nonnull(m);
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, oifs, 2);
	mfc_input(m, buf, len);
	r = mfc_find(m, &s, &g);
	ck_assert_ptr_nonnull(r);
	r->replicated = 5;
	r->by_kernel = 2;
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, oifs, 1);
	mfc_input(m, buf, len);
	r = mfc_find(m, &s, &g);
	ck_assert_uint_eq(r->noifs, 1);
	ck_assert_uint_eq(r->replicated, 5);
	ck_assert_uint_eq(r->by_kernel, 2);

	/* added by hand (the offline environment): counters from zero whatever the copy says */
	given.grp = nla("239.9.9.9");
	given.src.afi = PGM_AFI_IP; /* (*,G) */
	given.replicated = 99;
	r = mfc_add(m, &given);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->replicated, 0);
	r->replicated = 3;
	ck_assert_ptr_eq(mfc_add(m, &given), r);
	ck_assert_uint_eq(r->replicated, 3);
	ck_assert_ptr_eq(mfc_find(m, &s, &given.grp), r); /* (*,G) for any source */
	mfc_foreach(m, count_route, &total);
	ck_assert_uint_eq(total, 8);

	len = route_msg(buf, RTM_DELROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, NULL, 0);
	mfc_input(m, buf, len);
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, "10.0.0.2", "239.1.2.3", 2, oifs, 2);
	mfc_input(m, buf, len);
	ck_assert_uint_eq(mfc_find(m, &s, &g)->replicated, 0);
	mfc_free(m);
}
END_TEST

/* IPv6 (RTNL_FAMILY_IP6MR): the kernel's default table for it is RT_TABLE_MAIN; (S,G) before
   (*,G); the hop-limit threshold per interface; ifindexes as for IPv4; removal. */
START_TEST(ipv6_routes)
{
	struct mfc *m = mfc_new();
	uint8_t buf[2048];
	const struct oif oifs[] = {{3, 1}, {4, 8}};
	const struct mfc_route *r;
	struct pgm_nla g = nla("ff3e::8000:1"), srcs[4];
	struct mfc_stats st;
	size_t len = 0;

	len += route_msg(buf + len, RTM_NEWROUTE, RT_TABLE_MAIN, "2001:db8:1::2", "ff3e::8000:1",
		2, oifs, 2);
	len += route_msg(buf + len, RTM_NEWROUTE, RT_TABLE_MAIN, NULL, "ff3e::8000:1", 5, oifs, 1);
	len += route_msg(buf + len, RTM_NEWROUTE, RT_TABLE_DEFAULT, "2001:db8:1::9", "ff3e::8000:1",
		6, oifs, 1); /* not IPv6's default table */
	ck_assert_int_eq(mfc_input(m, buf, len), 3);
	ck_assert_uint_eq(mfc_count(m), 2);
	r = lookup(m, "2001:db8:1::2", "ff3e::8000:1");
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->grp.afi, PGM_AFI_IP6);
	ck_assert(!mfc_route_any_source(r));
	ck_assert_int_eq(r->iif, 2);
	ck_assert_uint_eq(r->noifs, 2);
	ck_assert_int_eq(r->oif[1], 4);
	ck_assert_uint_eq(r->ttl[1], 8);
	r = lookup(m, "2001:db8:1::3", "ff3e::8000:1"); /* another source: (*,G) */
	ck_assert_ptr_nonnull(r);
	ck_assert(mfc_route_any_source(r));
	ck_assert_int_eq(r->iif, 5);
	/* the other table's (S,G) was not taken: its source finds the (*,G) */
	ck_assert_int_eq(lookup(m, "2001:db8:1::9", "ff3e::8000:1")->iif, 5);
	ck_assert_uint_eq(mfc_sources(m, &g, 3, srcs, 4), 1);
	ck_assert_uint_eq(srcs[0].afi, PGM_AFI_IP6);
	mfc_get_stats(m, &st);
	ck_assert_uint_eq(st.ignored, 1);
	ck_assert_uint_eq(st.invalid, 0);

	len = route_msg(buf, RTM_DELROUTE, RT_TABLE_MAIN, "2001:db8:1::2", "ff3e::8000:1", 2, NULL,
		0);
	mfc_input(m, buf, len);
	ck_assert_int_eq(lookup(m, "2001:db8:1::2", "ff3e::8000:1")->iif, 5); /* the (*,G) now */
	ck_assert_uint_eq(mfc_count(m), 1);
	mfc_free(m);
}
END_TEST

/* The families are apart: an IPv4 entry never answers an IPv6 lookup, an IPv4-mapped source
   included, nor a mixed one; an IPv6 message with 4-byte addresses is malformed. */
START_TEST(families_apart)
{
	struct mfc *m = mfc_new();
	uint8_t buf[1024];
	const struct oif oifs[] = {{3, 1}};
	struct nlmsghdr *nlh;
	struct mfc_stats st;
	size_t len;

	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, NULL, "239.1.2.3", 2, oifs, 1);
	mfc_input(m, buf, len);
	ck_assert_ptr_nonnull(lookup(m, "10.0.0.1", "239.1.2.3"));
	ck_assert_ptr_null(lookup(m, "::ffff:10.0.0.1", "::ffff:239.1.2.3"));
	ck_assert_ptr_null(lookup(m, "2001:db8::1", "239.1.2.3"));
	len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_MAIN, NULL, "ff3e::1", 4, oifs, 1);
	mfc_input(m, buf, len);
	ck_assert_ptr_null(lookup(m, "10.0.0.1", "ff3e::1"));
	ck_assert_int_eq(lookup(m, "2001:db8::1", "ff3e::1")->iif, 4);

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWROUTE;
	((struct rtmsg *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct rtmsg)))->rtm_family =
		RTNL_FAMILY_IP6MR;
	mnl_attr_put_u32(nlh, RTA_TABLE, RT_TABLE_MAIN);
	mnl_attr_put_u32(nlh, RTA_DST, htonl(0xef010203));
	mfc_input(m, buf, nlh->nlmsg_len);
	mfc_get_stats(m, &st);
	ck_assert_uint_eq(st.invalid, 1);
	ck_assert_uint_eq(mfc_count(m), 2);
	mfc_free(m);
}
END_TEST

/* ---- the kernel's rules (net/ipv4/ipmr.c ip_mr_input, ip_mr_forward; dataplane/README) ---- */

static void add_route(struct mfc *m, const char *src, const char *grp, int iif,
	const struct oif *oifs, unsigned n)
{
	uint8_t buf[1024];
	size_t len = route_msg(buf, RTM_NEWROUTE, RT_TABLE_DEFAULT, src, grp, iif, oifs, n);

	ck_assert_int_eq(mfc_input(m, buf, len), 1);
}

static void del_route(struct mfc *m, const char *src, const char *grp)
{
	uint8_t buf[1024];
	size_t len = route_msg(buf, RTM_DELROUTE, RT_TABLE_DEFAULT, src, grp, 0, NULL, 0);

	ck_assert_int_eq(mfc_input(m, buf, len), 1);
}

static const struct mfc_route *match(struct mfc *m, const char *src, const char *grp, int iif)
{
	struct pgm_nla s = nla(src), g = nla(grp);

	return mfc_match(m, &s, &g, iif);
}

static bool src_is(const struct mfc_route *r, const char *src)
{
	struct pgm_nla s = nla(src);

	return r->src.afi == s.afi && memcmp(r->src.addr, s.addr, pgm_nla_len(&s)) == 0;
}

/* The interfaces: 2 upstream (the RPF interface), 3 and 4 receiver LANs, 5 elsewhere. */

/* ipmr_cache_find: a resolved (S,G) wins whatever the arrival interface; off its incoming
   interface the kernel drops the datagram (wrong_if), it never falls back to the (*,G). */
START_TEST(kernel_sg_hit)
{
	struct mfc *m = mfc_new();
	const struct oif star[] = {{2, 1}, {3, 1}, {4, 1}}, sg[] = {{3, 1}};
	const struct mfc_route *r;

	add_route(m, NULL, "239.192.0.1", 2, star, 3);
	add_route(m, "198.18.1.2", "239.192.0.1", 2, sg, 1);
	r = match(m, "198.18.1.2", "239.192.0.1", 2);
	ck_assert_ptr_nonnull(r);
	ck_assert(src_is(r, "198.18.1.2"));
	ck_assert_uint_eq(r->noifs, 1);
	/* arriving on a LAN the (*,G) would accept: still the (S,G), so the wrong interface */
	r = match(m, "198.18.1.2", "239.192.0.1", 3);
	ck_assert_ptr_nonnull(r);
	ck_assert(src_is(r, "198.18.1.2"));
	ck_assert_int_ne(r->iif, 3);
	mfc_free(m);
}
END_TEST

/* mr_mfc_find_any: a (*,G) serves a datagram only when its arrival interface is among the
   entry's outgoing ones (ttls[vif] < 255); FRR's pimd lists the incoming interface there for
   that reason. A (*,G) whose incoming interface is not among them serves nothing: the kernel
   queues the datagram to the routing daemon as having no entry. */
START_TEST(kernel_star_g_matching_iif)
{
	struct mfc *m = mfc_new();
	const struct oif frr[] = {{2, 1}, {3, 1}, {4, 1}}, bare[] = {{3, 1}, {4, 1}};
	const struct mfc_route *r;

	add_route(m, NULL, "239.192.0.1", 2, frr, 3);
	r = match(m, "198.18.1.2", "239.192.0.1", 2);
	ck_assert_ptr_nonnull(r);
	ck_assert(mfc_route_any_source(r));
	ck_assert_int_eq(r->iif, 2);
	/* where the route comes in (iif 0): the (*,G)'s incoming interface */
	ck_assert_int_eq(match(m, "198.18.1.2", "239.192.0.1", 0)->iif, 2);

	add_route(m, NULL, "239.192.0.2", 2, bare, 2);
	ck_assert_ptr_null(match(m, "198.18.1.2", "239.192.0.2", 2));
	mfc_free(m);
}
END_TEST

/* A datagram arriving on one of a (*,G)'s outgoing interfaces finds the entry (the lookup
   only asks that), and ip_mr_forward then drops it as off the incoming interface (and
   reports IGMPMSG_WRONGVIF to pimd). Arriving on an interface the entry does not list at
   all, it finds nothing: queued to the daemon. */
START_TEST(kernel_star_g_on_oif)
{
	struct mfc *m = mfc_new();
	const struct oif frr[] = {{2, 1}, {3, 1}, {4, 1}};
	const struct mfc_route *r;

	add_route(m, NULL, "239.192.0.1", 2, frr, 3);
	r = match(m, "198.18.3.2", "239.192.0.1", 3);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->iif, 2); /* the caller sees the wrong interface */
	ck_assert_ptr_null(match(m, "198.18.5.2", "239.192.0.1", 5));
	mfc_free(m);
}
END_TEST

/* No entry: the kernel queues the datagram (at most four) on an unresolved (S,G) and asks
   the daemon (IGMPMSG_NOCACHE); rtnetlink announces that entry without an incoming
   interface. Unresolved entries live outside the kernel's hash, so they never serve a
   lookup: a (*,G) that matches carries the datagram meanwhile. That is how PIM-SM's steps
   meet packets: (*,G), then (S,G) unresolved, then resolved, then the (*,G) pruned. */
START_TEST(kernel_no_entry_and_steps)
{
	struct mfc *m = mfc_new();
	const struct oif frr[] = {{2, 1}, {3, 1}}, sg[] = {{3, 1}, {4, 1}};
	const struct mfc_route *r;

	ck_assert_ptr_null(match(m, "198.18.1.2", "239.192.0.1", 2));
	add_route(m, "198.18.1.2", "239.192.0.1", 0, NULL, 0); /* unresolved */
	ck_assert_ptr_null(match(m, "198.18.1.2", "239.192.0.1", 2));
	ck_assert_ptr_null(match(m, "198.18.1.2", "239.192.0.1", 0));

	add_route(m, NULL, "239.192.0.1", 2, frr, 2);
	r = match(m, "198.18.1.2", "239.192.0.1", 2);
	ck_assert_ptr_nonnull(r);
	ck_assert(mfc_route_any_source(r)); /* the (*,G), past the unresolved (S,G) */

	add_route(m, "198.18.1.2", "239.192.0.1", 2, sg, 2); /* resolved */
	r = match(m, "198.18.1.2", "239.192.0.1", 2);
	ck_assert_ptr_nonnull(r);
	ck_assert(src_is(r, "198.18.1.2"));
	ck_assert_uint_eq(r->noifs, 2);

	del_route(m, NULL, "239.192.0.1");
	ck_assert_uint_eq(match(m, "198.18.1.2", "239.192.0.1", 2)->noifs, 2);
	del_route(m, "198.18.1.2", "239.192.0.1");
	ck_assert_ptr_null(match(m, "198.18.1.2", "239.192.0.1", 2));
	mfc_free(m);
}
END_TEST

/* An (S,G) entry may list its own incoming interface among the outgoing ones (smcroute takes
   `mroute from eth0 ... to eth0 eth1` as written; FRR's pimd leaves it out of an (S,G)).
   rtnetlink reports it as the kernel holds it (mr_fill_mroute: every vif with ttls < 255), and
   the entry serves datagrams arriving on that interface like any (S,G). ip_mr_forward skips
   the arrival interface for (*,G) entries only ("For (*,G) entry, don't forward to the
   incoming interface"): an (S,G) copy goes back out of it. */
START_TEST(kernel_sg_lists_own_iif)
{
	struct mfc *m = mfc_new();
	const struct oif sg[] = {{2, 1}, {3, 1}};
	const struct mfc_route *r;

	add_route(m, "198.18.1.2", "239.192.0.1", 2, sg, 2);
	r = match(m, "198.18.1.2", "239.192.0.1", 2);
	ck_assert_ptr_nonnull(r);
	ck_assert(src_is(r, "198.18.1.2"));
	ck_assert_int_eq(r->iif, 2);
	ck_assert_uint_eq(r->noifs, 2);
	ck_assert_int_eq(r->oif[0], 2); /* mirrored as the kernel reports it, iif included */
	ck_assert_int_eq(r->oif[1], 3);
	/* arriving on the other outgoing interface: off the incoming one */
	ck_assert_int_eq(match(m, "198.18.1.2", "239.192.0.1", 3)->iif, 2);
	mfc_free(m);
}
END_TEST

/* ---- the copies along such an entry (router/assist/packet.c replicate) ---- */

/* Router assist on up (ifindex 1, the source's LAN), a (2) and b (3), offline. */
static struct offline *repl_open(void)
{
	static const char *const ifs[] = {"up=198.18.1.1/24", "a=198.18.2.1/24", "b=198.18.3.1/24"};
	struct assist_conf conf;
	struct offline *o;
	char err[256];

	cmd_engine_init();
	pgm_vty_init();
	ck_assert_int_eq(pgm_conf_from_cfg(cfg_running(), &conf), 0);
	o = offline_replay_open(&conf, ifs, 3, true, err, sizeof(err));
	assist_conf_free(&conf);
	ck_assert_msg(o != NULL, "%s", err);
	return o;
}

static void repl_close(struct offline *o)
{
	offline_free(o);
	cfg_free();
	cmd_engine_free();
	settings_free();
}

/* An SPM of 198.18.1.10 to 239.192.0.1, TTL 16, arriving on up before routing. */
static void repl_spm(struct offline *o, uint32_t sqn)
{
	struct pgm_header_params h = {.sport = 1234, .dport = 7500, .gsi = {1, 2, 3, 4, 5, 6}};
	struct pgm_ip_params ip = {.src = nla("198.18.1.10"),
		.dst = nla("239.192.0.1"),
		.ttl = 16,
		.router_alert = true};
	struct pgm_nla path = nla("198.18.1.10");
	uint8_t tpdu[256], datagram[512];
	size_t len;
	char err[128];

	len = pgm_build_spm(tpdu, sizeof(tpdu), &h, sqn, 1, sqn, &path, NULL);
	ck_assert_uint_gt(len, 0);
	len = pgm_build_ip(datagram, sizeof(datagram), &ip, tpdu, len);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(offline_packet(o, datagram, len, "up", "*", err, sizeof(err)), 0);
}

/* The SPM sent out of ifname last: its path NLA and TTL (0, "-" when none was sent). */
static unsigned repl_sent_spm(struct offline *o, const char *ifname, char *path, size_t cap)
{
	const uint8_t *d;
	size_t len;
	struct pgm_udp_ports ports;
	struct pgm_ip ip;
	struct pgm_packet pkt;

	snprintf(path, cap, "-");
	if (offline_sent(o, ifname, &d, &len) == 0)
		return 0;
	pgm_udp_ports_default(&ports);
	ck_assert_int_eq(pgm_parse_ip(d, len, &ports, &ip), PGM_ERR_OK);
	ck_assert_int_eq(pgm_parse(d + ip.pgm_offset, ip.pgm_len, 0, &pkt), PGM_ERR_OK);
	ck_assert_int_eq(pkt.type, PGM_SPM);
	ck_assert(inet_ntop(AF_INET, pkt.path.addr, path, (socklen_t)cap) != NULL);
	return ip.ttl;
}

/* A route to 239.192.0.1 from src (NULL: a (*,G)) coming in on up, out of oifs. */
static void repl_route(struct offline *o, const char *src, const int *oifs, unsigned n)
{
	struct mfc_route r = {.grp = nla("239.192.0.1"), .iif = 1};

	if (src != NULL)
		r.src = nla(src);
	else
		r.src.afi = PGM_AFI_IP; /* 0.0.0.0 */

	for (unsigned i = 0; i < n; i++) {
		r.oif[r.noifs] = oifs[i];
		r.ttl[r.noifs++] = 1;
	}
	ck_assert_int_eq(offline_route_add(o, &r), 0);
}

/* The kernel would send an (S,G) copy back out of the incoming interface: the daemon makes it,
   unchanged but for the TTL (the source's own path: the hosts there are upstream of this
   router), beside the assisted copies with their own paths. */
START_TEST(repl_sg_own_iif_copy_unchanged)
{
	struct offline *o = repl_open();
	const int oifs[] = {1, 2, 3};
	char path[64];

	repl_route(o, "198.18.1.10", oifs, 3);
	repl_spm(o, 1);
	ck_assert_uint_eq(repl_sent_spm(o, "a", path, sizeof(path)), 15);
	ck_assert_str_eq(path, "198.18.2.1");
	ck_assert_uint_eq(repl_sent_spm(o, "b", path, sizeof(path)), 15);
	ck_assert_str_eq(path, "198.18.3.1");
	ck_assert_uint_eq(repl_sent_spm(o, "up", path, sizeof(path)), 15);
	ck_assert_str_eq(path, "198.18.1.10");
	ck_assert_uint_eq(offline_sent(o, "up", NULL, NULL), 1);
	ck_assert_uint_eq(assist_stats(offline_assist(o))->copies, 3);
	repl_close(o);
}
END_TEST

/* One assisted copy and the incoming interface: handing the rewritten original to the kernel
   (the one-copy shortcut) would send a's path back out of up too. The copies are made here. */
START_TEST(repl_sg_own_iif_no_single_shortcut)
{
	struct offline *o = repl_open();
	const int oifs[] = {1, 2};
	char path[64];

	repl_route(o, "198.18.1.10", oifs, 2);
	repl_spm(o, 1);
	ck_assert_uint_eq(assist_stats(offline_assist(o))->repl_single, 0);
	ck_assert_uint_eq(assist_stats(offline_assist(o))->replicated, 1);
	ck_assert_uint_eq(repl_sent_spm(o, "a", path, sizeof(path)), 15);
	ck_assert_str_eq(path, "198.18.2.1");
	ck_assert_uint_eq(repl_sent_spm(o, "up", path, sizeof(path)), 15);
	ck_assert_str_eq(path, "198.18.1.10");
	ck_assert_uint_eq(offline_sent(o, "b", NULL, NULL), 0);
	repl_close(o);
}
END_TEST

/* A (*,G) carries a datagram only when it lists the arrival interface (FRR's pimd lists the
   (*,G)'s incoming interface for this; the source host's own IGMP join does it too), and
   ip_mr_forward never sends a (*,G) copy back out of it. Neither does the daemon: the copies go
   out of a and b with their own paths, none out of up. */
START_TEST(repl_star_g_no_copy_back)
{
	struct offline *o = repl_open();
	const int oifs[] = {1, 2, 3};
	char path[64];

	repl_route(o, NULL, oifs, 3);
	repl_spm(o, 1);
	ck_assert_uint_eq(repl_sent_spm(o, "a", path, sizeof(path)), 15);
	ck_assert_str_eq(path, "198.18.2.1");
	ck_assert_uint_eq(repl_sent_spm(o, "b", path, sizeof(path)), 15);
	ck_assert_str_eq(path, "198.18.3.1");
	ck_assert_uint_eq(offline_sent(o, "up", NULL, NULL), 0);
	ck_assert_uint_eq(assist_stats(offline_assist(o))->copies, 2);
	repl_close(o);
}
END_TEST

/* A (*,G) out of up (the arrival interface) and a: the route's one copy is a's, and the kernel
   forwards the rewritten original by the same (*,G), out of a only (the one-copy shortcut). */
START_TEST(repl_star_g_single_shortcut)
{
	struct offline *o = repl_open();
	const int oifs[] = {1, 2};

	repl_route(o, NULL, oifs, 2);
	repl_spm(o, 1);
	ck_assert_uint_eq(assist_stats(offline_assist(o))->repl_single, 1);
	ck_assert_uint_eq(assist_stats(offline_assist(o))->replicated, 0);
	ck_assert_uint_eq(offline_sent(o, "up", NULL, NULL), 0);
	ck_assert_uint_eq(offline_sent(o, "a", NULL, NULL), 0);
	repl_close(o);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mfc");
	TCase *tc = tcase_create("mfc");

	tcase_add_test(tc, add_lookup_remove);
	tcase_add_test(tc, star_g_and_tables);
	tcase_add_test(tc, malformed_counted);
	tcase_add_test(tc, sources_by_group_and_oif);
	tcase_add_test(tc, many_entries);
	tcase_add_test(tc, counters_kept_across_updates);
	tcase_add_test(tc, kernel_sg_hit);
	tcase_add_test(tc, kernel_star_g_matching_iif);
	tcase_add_test(tc, kernel_star_g_on_oif);
	tcase_add_test(tc, kernel_sg_lists_own_iif);
	tcase_add_test(tc, repl_sg_own_iif_copy_unchanged);
	tcase_add_test(tc, repl_sg_own_iif_no_single_shortcut);
	tcase_add_test(tc, repl_star_g_no_copy_back);
	tcase_add_test(tc, repl_star_g_single_shortcut);
	tcase_add_test(tc, kernel_no_entry_and_steps);
	tcase_add_test(tc, ipv6_routes);
	tcase_add_test(tc, families_apart);
	suite_add_tcase(s, tc);
	return check_run(s);
}

/*
 * libFuzzer target for the netlink parsers of the data plane: the first byte picks the reader,
 * the rest is a buffer of netlink messages as the kernel would send them:
 *  0  rtnetlink links and addresses into the interface table (dataplane/rtnl.c), in up to four
 *     reads separated by the byte sequence "\xff\xfe" (a stateful table across reads);
 *  1  rtnetlink multicast routes into the forwarding cache mirror (dataplane/mfc.c), likewise;
 *  2  a neighbour answer (dataplane/neigh.c, neigh_parse_reply);
 *  3  NFQUEUE packet messages with every attribute (dataplane/nfq.c, nfqueue_parse_packet),
 *     walked as nfqueue_process() walks a datagram.
 * What the tables then hold is checked against their own lookups; a parsed packet's payload lies
 * within the message.
 *
 * Seed mode (tests/fuzz/run.sh): with PGM_FUZZ_SEED_DIR set, writes messages of each kind.
 */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/mfc.h"
#include "dataplane/neigh.h"
#include "dataplane/netlink.h"
#include "dataplane/nfq.h"
#include "dataplane/rtnl.h"
#include "tests/fuzz/fuzz.h"


static const struct rtnl *table;

static void check_if(void *ctx, const struct rtnl_if *ifp)
{
	char text[128];

	(void)ctx;
	CHECK(strnlen(ifp->name, sizeof(ifp->name)) < sizeof(ifp->name));
	CHECK(rtnl_if_by_index(table, ifp->ifindex) == ifp);
	CHECK(ifp->naddrs == 0 || ifp->addrs != NULL);
	for (size_t i = 0; i < ifp->naddrs; i++)
		CHECK(strlen(rtnl_addr_format(&ifp->addrs[i], text, sizeof(text))) < sizeof(text));
}

static void on_event(void *ctx, const struct rtnl_event *ev)
{
	(void)ctx;
	CHECK(ev->ifp != NULL);
	if (ev->type == RTNL_ADDR_ADDED || ev->type == RTNL_ADDR_REMOVED)
		CHECK(ev->addr != NULL);
}

/* Up to four reads of the rest, cut at "\xff\xfe". */
static void reads(const uint8_t *p, size_t len, void (*fn)(void *obj, const void *b, size_t n),
	void *obj)
{
	static uint8_t copy[65536] __attribute__((aligned(4)));

	for (unsigned k = 0; k < 4 && len > 0; k++) {
		const uint8_t *cut = k < 3 ? memmem(p, len, "\xff\xfe", 2) : NULL;
		size_t n = cut != NULL ? (size_t)(cut - p) : len;

		/* the kernel's buffers are aligned: so is the copy */
		if (n > sizeof(copy))
			n = sizeof(copy);
		memcpy(copy, p, n);
		fn(obj, copy, n);
		if (cut == NULL)
			break;
		len -= n + 2;
		p += n + 2;
	}
}

static void rtnl_read(void *obj, const void *b, size_t n)
{
	CHECK(rtnl_input(obj, b, n) >= 0);
}

static void mfc_read(void *obj, const void *b, size_t n)
{
	CHECK(mfc_input(obj, b, n) >= 0);
}

static void fuzz_rtnl(const uint8_t *p, size_t len)
{
	struct rtnl *rt = rtnl_new(on_event, NULL);
	struct rtnl_stats st;

	CHECK(rt != NULL);
	table = rt;
	reads(p, len, rtnl_read, rt);
	rtnl_foreach_if(rt, check_if, NULL);
	rtnl_get_stats(rt, &st);
	CHECK(rtnl_if_count(rt) <= st.messages);
	rtnl_free(rt);
}

static void fuzz_mfc(const uint8_t *p, size_t len)
{
	struct mfc *m = mfc_new();
	struct mfc_stats st;

	CHECK(m != NULL);
	reads(p, len, mfc_read, m);
	mfc_get_stats(m, &st);
	CHECK(mfc_count(m) <= st.messages);
	mfc_free(m);
}

static void fuzz_neigh(const uint8_t *p, size_t len)
{
	static uint8_t copy[65536] __attribute__((aligned(4)));
	struct neigh_answer a = {.seq = 7};

	if (len > sizeof(copy))
		len = sizeof(copy);
	memcpy(copy, p, len);
	(void)neigh_parse_reply(copy, len, 0, &a);
	CHECK(!a.usable || a.done);
}

static void fuzz_nfq(const uint8_t *p, size_t len)
{
	static uint8_t copy[65536] __attribute__((aligned(4)));
	int remaining;

	if (len > sizeof(copy))
		len = sizeof(copy);
	memcpy(copy, p, len);
	remaining = (int)len;
	for (const struct nlmsghdr *nlh = (const void *)copy; netlink_msg_ok(nlh, remaining);
		nlh = mnl_nlmsg_next(nlh, &remaining)) {
		struct nfqueue_packet pkt;
		int rc = nfqueue_parse_packet(nlh, &pkt);

		CHECK(rc >= -1 && rc <= 1);
		if (rc == 0) {
			const uint8_t *end = (const uint8_t *)nlh + nlh->nlmsg_len;

			CHECK(pkt.payload >= (const uint8_t *)nlh && pkt.payload + pkt.len <= end);
		} else {
			CHECK(pkt.payload == NULL);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		fuzz_rtnl(data + 1, size - 1);
		break;
	case 1:
		fuzz_mfc(data + 1, size - 1);
		break;
	case 2:
		fuzz_neigh(data + 1, size - 1);
		break;
	default:
		fuzz_nfq(data + 1, size - 1);
		break;
	}
	return 0;
}

/* ---- seed mode ---- */

static uint8_t buf[8192] __attribute__((aligned(4)));
static size_t buflen;

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

static void put_link(uint16_t type, int ifindex, const char *name, unsigned flags)
{
	struct nlmsghdr *nlh = put_header(type);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_type = 1; /* ARPHRD_ETHER */
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_MTU, 1500);
	commit(nlh);
}

static void put_addr(uint16_t type, int family, int ifindex, const char *text, uint8_t plen)
{
	struct nlmsghdr *nlh = put_header(type);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	uint8_t a[16];

	ifa->ifa_family = (unsigned char)family;
	ifa->ifa_index = (unsigned)ifindex;
	ifa->ifa_prefixlen = plen;
	inet_pton(family, text, a);
	if (family == AF_INET) {
		mnl_attr_put(nlh, IFA_LOCAL, 4, a);
		mnl_attr_put(nlh, IFA_ADDRESS, 4, a);
	} else {
		mnl_attr_put(nlh, IFA_ADDRESS, 16, a);
	}
	commit(nlh);
}

/* An IPv4 route (RTNL_FAMILY_IPMR, table RT_TABLE_DEFAULT) or, for an IPv6 group, an IPv6 one
   (RTNL_FAMILY_IP6MR, table RT_TABLE_MAIN), as the kernel reports them. */
static void put_route(uint16_t type, const char *src, const char *grp, int iif, int oif1, int oif2)
{
	struct nlmsghdr *nlh = put_header(type);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	struct nlattr *mp;
	uint8_t a[16];
	int oifs[2] = {oif1, oif2};
	int family = strchr(grp, ':') != NULL ? AF_INET6 : AF_INET;
	size_t alen = family == AF_INET ? 4 : 16;
	uint32_t route_table = family == AF_INET ? RT_TABLE_DEFAULT : RT_TABLE_MAIN;

	rtm->rtm_family = family == AF_INET ? RTNL_FAMILY_IPMR : RTNL_FAMILY_IP6MR;
	rtm->rtm_table = (unsigned char)route_table;
	mnl_attr_put_u32(nlh, RTA_TABLE, route_table);
	if (src != NULL) {
		inet_pton(family, src, a);
		mnl_attr_put(nlh, RTA_SRC, alen, a);
	}
	inet_pton(family, grp, a);
	mnl_attr_put(nlh, RTA_DST, alen, a);
	mnl_attr_put_u32(nlh, RTA_IIF, (uint32_t)iif);
	mp = mnl_attr_nest_start(nlh, RTA_MULTIPATH);
	for (int i = 0; i < 2; i++) {
		struct rtnexthop nh = {
			.rtnh_len = sizeof(nh), .rtnh_hops = (uint8_t)(1 + i), .rtnh_ifindex = oifs[i]};

		memcpy((uint8_t *)mnl_nlmsg_get_payload_tail(nlh), &nh, sizeof(nh));
		nlh->nlmsg_len += RTNH_ALIGN(sizeof(nh));
	}
	mnl_attr_nest_end(nlh, mp);
	commit(nlh);
}

static void put_neigh(uint16_t state)
{
	struct nlmsghdr *nlh = put_header(RTM_NEWNEIGH);
	struct ndmsg *ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 1}, dst[4] = {198, 18, 1, 2};

	nlh->nlmsg_seq = 7;
	ndm->ndm_family = AF_INET;
	ndm->ndm_ifindex = 2;
	ndm->ndm_state = state;
	mnl_attr_put(nlh, NDA_DST, 4, dst);
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	commit(nlh);
}

static void put_nfq_packet(uint32_t id, bool all)
{
	struct nlmsghdr *nlh = put_header((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET);
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nfqnl_msg_packet_hdr ph = {.packet_id = htonl(id), .hw_protocol = htons(0x0800),
		.hook = 0};
	/* an SPM in IPv4, as far as the attributes care */
	static const uint8_t ip[28] = {0x45, 0, 0, 28, 0, 0, 0, 0, 8, 113, 0, 0, 198, 18, 1, 10,
		239, 192, 0, 1};

	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(113);
	mnl_attr_put(nlh, NFQA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put_u32(nlh, NFQA_IFINDEX_INDEV, htonl(2));
	if (all) {
		struct nfqnl_msg_packet_timestamp ts = {.sec = htobe64(1), .usec = htobe64(2)};

		mnl_attr_put_u32(nlh, NFQA_IFINDEX_OUTDEV, htonl(3));
		mnl_attr_put_u32(nlh, NFQA_MARK, htonl(0x113));
		mnl_attr_put_u32(nlh, NFQA_SKB_INFO, htonl(NFQA_SKB_CSUMNOTREADY));
		mnl_attr_put_u32(nlh, NFQA_CAP_LEN, htonl(1500));
		mnl_attr_put(nlh, NFQA_TIMESTAMP, sizeof(ts), &ts);
	}
	mnl_attr_put(nlh, NFQA_PAYLOAD, sizeof(ip), ip);
	commit(nlh);
}

static void write_seed(const char *dir, const char *name, uint8_t kind)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (fp == NULL || fwrite(&kind, 1, 1, fp) != 1 || fwrite(buf, 1, buflen, fp) != buflen) {
		perror(path);
		exit(1);
	}
	fclose(fp);
	buflen = 0;
}

static void separator(void)
{
	buf[buflen++] = 0xff;
	buf[buflen++] = 0xfe;
	buf[buflen++] = 0;
	buf[buflen++] = 0; /* keeps the next message aligned */
}

static void write_seeds(const char *dir)
{
	put_link(RTM_NEWLINK, 2, "eth1", IFF_UP | IFF_RUNNING | IFF_MULTICAST);
	put_addr(RTM_NEWADDR, AF_INET, 2, "198.18.1.1", 24);
	put_addr(RTM_NEWADDR, AF_INET6, 2, "2001:db8:1::1", 64);
	put_link(RTM_NEWLINK, 3, "eth2", IFF_UP);
	separator();
	put_link(RTM_NEWLINK, 2, "wan0", IFF_UP | IFF_RUNNING);
	put_addr(RTM_DELADDR, AF_INET, 2, "198.18.1.1", 24);
	put_link(RTM_DELLINK, 3, "eth2", 0);
	write_seed(dir, "rtnl-links-addrs", 0);

	put_route(RTM_NEWROUTE, "198.18.1.10", "239.192.0.1", 2, 3, 4);
	put_route(RTM_NEWROUTE, NULL, "239.192.0.2", 2, 3, 5);
	separator();
	put_route(RTM_DELROUTE, "198.18.1.10", "239.192.0.1", 2, 3, 4);
	write_seed(dir, "mfc-routes", 1);

	put_route(RTM_NEWROUTE, "2001:db8:1::10", "ff3e::8000:1", 2, 3, 4);
	put_route(RTM_NEWROUTE, NULL, "ff3e::8000:2", 2, 3, 5);
	put_route(RTM_NEWROUTE, "198.18.1.10", "239.192.0.1", 2, 3, 4);
	separator();
	put_route(RTM_DELROUTE, "2001:db8:1::10", "ff3e::8000:1", 2, 3, 4);
	write_seed(dir, "mfc-routes-ipv6", 1);

	put_neigh(NUD_REACHABLE);
	write_seed(dir, "neigh-reachable", 2);
	put_neigh(NUD_STALE);
	write_seed(dir, "neigh-stale", 2);

	put_nfq_packet(1, true);
	put_nfq_packet(2, false);
	write_seed(dir, "nfq-packets", 3);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("PGM_FUZZ_SEED_DIR");

	(void)argc;
	(void)argv;
	if (dir == NULL)
		return 0;
	write_seeds(dir);
	exit(0);
}

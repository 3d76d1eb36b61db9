/*
 * The output side of router assist (router/assist/output.c): the IP header follows the
 * family of the action's destination. An NCF to an IPv6 group leaves as IPv6 from the data
 * source, hop limit the NCF TTL, the hop-by-hop Router Alert; over UDP with its checksum. A NAK
 * to an IPv6 neighbour leaves from the address the environment's source gives (the kernel's
 * choice: link-local towards link-local), and without one it is counted, not sent. IPv4 stays
 * as it was.
 */
#include <check.h>
#include <string.h>

#include "router/assist/assist_internal.h"
#include "tests/unit/assist_test_env.h"
#include "tests/unit/check_run.h"

static uint8_t sent[4][2048];
static size_t sent_len[4];
static int sent_if[4];
static unsigned nsent;
static bool have_source;

static cp_time_t fake_now(void *ctx)
{
	(void)ctx;
	return CP_SEC(10);
}

static int fake_send(void *ctx, int ifindex, const uint8_t *d, size_t len, uint8_t ttl)
{
	(void)ctx;
	(void)ttl;
	ck_assert_uint_lt(nsent, 4);
	ck_assert_uint_le(len, sizeof(sent[0]));
	memcpy(sent[nsent], d, len);
	sent_len[nsent] = len;
	sent_if[nsent++] = ifindex;
	return 1;
}

static bool fake_source(void *ctx, int ifindex, const struct pgm_nla *dst, struct pgm_nla *src)
{
	(void)ctx;
	(void)ifindex;
	if (!have_source)
		return false;
	/* as the kernel: link-local towards link-local */
	ck_assert(pgm_nla_parse(src, dst->addr[0] == 0xfe ? "fe80::1" : "2001:db8:1::1"));
	return true;
}

static struct pgm_nla nla(const char *text)
{
	struct pgm_nla a;

	ck_assert(pgm_nla_parse(&a, text));
	return a;
}

static struct assist *setup(void)
{
	static const struct assist_env env = {.now = fake_now,
		.send = fake_send,
		.source = fake_source,
		.lines_wanted = no_lines,
		.line = no_line,
		.if_lookup = no_if};
	struct assist *a = assist_new(&env);
	struct pgm_nla v4 = nla("198.18.1.1");

	ck_assert_ptr_nonnull(a);
	assist_if_added(a, 2, "up0", &v4);
	a->conf.g.ncf_ttl = 200; /* the settings table's value (ip pgm router ncf-ttl) */
	nsent = 0;
	have_source = true;
	return a;
}

static struct cp_action action(enum cp_action_type type, const char *src, const char *dst)
{
	struct cp_action act;

	memset(&act, 0, sizeof(act));
	act.type = type;
	act.ifindex = 2;
	if (src != NULL)
		act.ip_src = nla(src);
	act.ip_dst = nla(dst);
	act.router_alert = type == CP_ACT_NCF;
	memcpy(act.tsi.gsi, "\x01\x02\x03\x04\x05\x06", 6);
	act.tsi.sport = 1234;
	act.data_dport = 7500;
	act.sqn = 17;
	act.nak_src = nla("2001:db8:1::2");
	act.nak_grp = nla("ff3e::8000:1");
	return act;
}

static const struct pgm_udp_ports ports = {.enabled = true,
	.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT,
	.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT};

START_TEST(ncf_ipv6_from_data_source_with_router_alert)
{
	struct assist *a = setup();
	struct cp_action act = action(CP_ACT_NCF, "2001:db8:1::2", "ff3e::8000:1");
	struct pgm_packet pkt;
	struct pgm_ip ip;

	assist_on_action(a, &act);
	ck_assert_uint_eq(nsent, 1);
	ck_assert_int_eq(sent_if[0], 2);
	ck_assert_int_eq(pgm_parse_datagram(sent[0], sent_len[0], &ports, 0, &ip, &pkt),
		PGM_ERR_OK);
	ck_assert_uint_eq(ip.version, 6);
	ck_assert(pgm_nla_equal(&ip.src, &act.ip_src));
	ck_assert(pgm_nla_equal(&ip.dst, &act.ip_dst));
	ck_assert_uint_eq(ip.ttl, 200); /* the NCF TTL, as hop limit */
	ck_assert(ip.router_alert);
	ck_assert_uint_eq(pkt.type, PGM_NCF);
	ck_assert(pgm_nla_equal(&pkt.nak_src, &act.nak_src));
	ck_assert_uint_eq(assist_stats(a)->originated, 1);

	/* over UDP: the checksum IPv6 makes mandatory, verified by the parse */
	act.udp = true;
	act.udp_sport = act.udp_dport = PGM_DEFAULT_UDP_MCAST_PORT;
	assist_on_action(a, &act);
	ck_assert_uint_eq(nsent, 2);
	ck_assert_int_eq(pgm_parse_datagram(sent[1], sent_len[1], &ports, 0, &ip, &pkt),
		PGM_ERR_OK);
	ck_assert(ip.udp && ip.router_alert);
	ck_assert_uint_ne(ip.udp_checksum, 0);
	ck_assert_uint_eq(assist_stats(a)->build_failed, 0);
	assist_free(a);
}
END_TEST

START_TEST(nak_ipv6_from_the_kernels_source)
{
	struct assist *a = setup();
	struct cp_action act = action(CP_ACT_NAK, NULL, "fe80::2");
	struct pgm_packet pkt;
	struct pgm_ip ip;

	assist_on_action(a, &act);
	ck_assert_uint_eq(nsent, 1);
	ck_assert_int_eq(pgm_parse_datagram(sent[0], sent_len[0], &ports, 0, &ip, &pkt),
		PGM_ERR_OK);
	ck_assert_uint_eq(ip.version, 6);
	ck_assert(pgm_nla_equal(&ip.src, &(const struct pgm_nla){.afi = PGM_AFI_IP6,
						 .addr = {0xfe, 0x80, [15] = 1}}));
	ck_assert_uint_eq(ip.ttl, ASSIST_UNICAST_TTL);
	ck_assert(!ip.router_alert);
	ck_assert_uint_eq(pkt.type, PGM_NAK);

	/* a global neighbour: a global source */
	act.ip_dst = nla("2001:db8:1::2");
	assist_on_action(a, &act);
	ck_assert_uint_eq(nsent, 2);
	ck_assert_int_eq(pgm_parse_datagram(sent[1], sent_len[1], &ports, 0, &ip, &pkt),
		PGM_ERR_OK);
	ck_assert(pgm_nla_equal(&ip.src, &(const struct pgm_nla){.afi = PGM_AFI_IP6,
						 .addr = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1}}));

	/* no IPv6 address to send from (the interface's is IPv4): counted, nothing sent */
	have_source = false;
	assist_on_action(a, &act);
	ck_assert_uint_eq(nsent, 2);
	ck_assert_uint_eq(assist_stats(a)->no_source_addr, 1);
	assist_free(a);
}
END_TEST

START_TEST(ipv4_unchanged)
{
	struct assist *a = setup();
	struct cp_action act = action(CP_ACT_NAK, NULL, "198.18.1.2");
	struct pgm_packet pkt;
	struct pgm_ip ip;

	act.nak_src = nla("198.18.1.2");
	act.nak_grp = nla("239.192.0.1");
	assist_on_action(a, &act);
	ck_assert_uint_eq(nsent, 1);
	ck_assert_int_eq(pgm_parse_datagram(sent[0], sent_len[0], &ports, 0, &ip, &pkt),
		PGM_ERR_OK);
	ck_assert_uint_eq(ip.version, 4);
	ck_assert(pgm_nla_equal(&ip.src, &(struct pgm_nla){.afi = PGM_AFI_IP,
						 .addr = {198, 18, 1, 1}}));
	act = action(CP_ACT_NCF, "198.18.1.2", "239.192.0.1");
	act.nak_src = nla("198.18.1.2");
	act.nak_grp = nla("239.192.0.1");
	assist_on_action(a, &act);
	ck_assert_int_eq(pgm_parse_datagram(sent[1], sent_len[1], &ports, 0, &ip, &pkt),
		PGM_ERR_OK);
	ck_assert_uint_eq(ip.version, 4);
	ck_assert_uint_eq(ip.ttl, 200);
	ck_assert(ip.router_alert);
	assist_free(a);
}
END_TEST

/* What leaves at once (issue 27): the first NAK upstream forwarded for a received NAK since the
 * environment last sent its queue, then its NCF; a second NAK upstream of the same batch and the
 * timers' repeats queue for the batch's end; every NCF at once. */
static char order[16];
static unsigned norder;

static int order_send(void *ctx, int ifindex, const uint8_t *d, size_t len, uint8_t ttl)
{
	(void)ctx;
	(void)ifindex;
	(void)d;
	(void)len;
	(void)ttl;
	ck_assert_uint_lt(norder, sizeof(order) - 1);
	order[norder++] = 'q'; /* queued */
	return 0;
}

static int order_send_first(void *ctx, int ifindex, const uint8_t *d, size_t len, uint8_t ttl)
{
	struct pgm_packet pkt;
	struct pgm_ip ip;

	(void)ctx;
	(void)ifindex;
	(void)ttl;
	ck_assert_uint_lt(norder, sizeof(order) - 1);
	ck_assert_int_eq(pgm_parse_datagram(d, len, &ports, 0, &ip, &pkt), PGM_ERR_OK);
	order[norder++] = pkt.type == PGM_NCF ? 'C' : pkt.type == PGM_NAK ? 'N' : '?';
	return 1;
}

START_TEST(nak_upstream_first_once_per_batch)
{
	static const struct assist_env env = {.now = fake_now,
		.send = order_send,
		.send_first = order_send_first,
		.lines_wanted = no_lines,
		.line = no_line,
		.if_lookup = no_if};
	struct assist *a = assist_new(&env);
	struct pgm_nla v4 = nla("198.18.1.1");
	struct pgm_packet received; /* stands for the NAK the actions answer */
	struct cp_action nak = action(CP_ACT_NAK, NULL, "198.18.1.2");
	struct cp_action ncf = action(CP_ACT_NCF, "198.18.1.2", "239.192.0.1");
	struct cp_action repeat;

	ck_assert_ptr_nonnull(a);
	assist_if_added(a, 2, "up0", &v4);
	memset(&received, 0, sizeof(received));
	nak.nak_src = ncf.nak_src = nla("198.18.1.2");
	nak.nak_grp = ncf.nak_grp = nla("239.192.0.1");
	repeat = nak;
	nak.packet = &received; /* forwarded for a NAK received (built from the fields) */
	norder = 0;
	memset(order, 0, sizeof(order));
	/* a batch: two NAKs, each forwarded and confirmed, and a timer's repeat */
	assist_on_action(a, &nak);
	assist_on_action(a, &ncf);
	assist_on_action(a, &nak);
	assist_on_action(a, &ncf);
	assist_on_action(a, &repeat);
	/* the environment sent its queue: the next batch */
	assist_count_sent(a, 2, 0);
	assist_on_action(a, &nak);
	assist_on_action(a, &ncf);
	ck_assert_str_eq(order, "NCqCqNC");
	assist_free(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("assist_output");
	TCase *tc = tcase_create("output");

	tcase_add_test(tc, ncf_ipv6_from_data_source_with_router_alert);
	tcase_add_test(tc, nak_ipv6_from_the_kernels_source);
	tcase_add_test(tc, ipv4_unchanged);
	tcase_add_test(tc, nak_upstream_first_once_per_batch);
	suite_add_tcase(s, tc);
	return check_run(s);
}

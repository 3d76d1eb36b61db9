/*
 * Interception rules: the generated nftables and iptables scripts (the exact text is the
 * contract: what is queued where), the nftables netlink batch that carries the same table,
 * the parsers of iptables-save output and of an nftables rule dump, name validation.
 * None of this needs root.
 */
#include <arpa/inet.h>
#include <check.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "dataplane/rules.h"
#include "dataplane/rules_layout.h"
#include "dataplane/wire/pgm_wire.h"
#include "tests/unit/check_run.h"

static const char *const one_if[] = {"eth0"};
static const char *const two_ifs[] = {"eth0", "vlan.10"};
static const char *const bad_names[] = {"eth 0"};

static const char expected_nft[] =
	"# pgmrouter interception rules, generated. One transaction: the table of an\n"
	"# earlier run is replaced (or removed) as a whole.\n"
	"add table ip pgmrouter\n"
	"delete table ip pgmrouter\n"
	"table ip pgmrouter {\n"
	"\tchain prerouting {\n"
	"\t\ttype filter hook prerouting priority mangle - 1; policy accept;\n"
	"\t\tip protocol 113 @th,32,8 & 0xf == 0x4 ip length >= 36 accept\n"
	"\t\tip protocol 113 goto pgm-prerouting\n"
	"\t\tudp dport 3055-3056 @th,96,8 & 0xf == 0x4 ip length >= 44 accept\n"
	"\t\tudp dport 3055-3056 goto udp-prerouting\n"
	"\t}\n"
	"\n"
	"\tchain pgm-prerouting {\n"
	"\t\tip length < 36 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x1 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x2 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0xa goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x8 ip daddr 224.0.0.0/4 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x9 ip daddr 224.0.0.0/4 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x8 fib daddr type != local goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x0 ip daddr 224.0.0.0/4 counter queue num 3 bypass\n"
	"\t\t@th,32,8 & 0xf == 0x5 ip daddr 224.0.0.0/4 counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain udp-prerouting {\n"
	"\t\tip length < 44 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x1 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x2 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0xa goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x8 ip daddr 224.0.0.0/4 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x9 ip daddr 224.0.0.0/4 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x8 fib daddr type != local goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x0 ip daddr 224.0.0.0/4 counter queue num 3 bypass\n"
	"\t\t@th,96,8 & 0xf == 0x5 ip daddr 224.0.0.0/4 counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain queue-prerouting {\n"
	"\t\tiifname \"eth0\" counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain input {\n"
	"\t\ttype filter hook input priority mangle - 1; policy accept;\n"
	"\t\tip protocol 113 @th,32,8 & 0xf == 0x4 ip length >= 36 accept\n"
	"\t\tip protocol 113 goto pgm-input\n"
	"\t\tudp dport 3055-3056 @th,96,8 & 0xf == 0x4 ip length >= 44 accept\n"
	"\t\tudp dport 3055-3056 goto udp-input\n"
	"\t}\n"
	"\n"
	"\tchain pgm-input {\n"
	"\t\tip length < 36 goto queue-input\n"
	"\t\t@th,32,8 & 0xf == 0x5 goto queue-input\n"
	"\t\t@th,32,8 & 0xf == 0x8 goto queue-input\n"
	"\t\t@th,32,8 & 0xf == 0x9 goto queue-input\n"
	"\t}\n"
	"\n"
	"\tchain udp-input {\n"
	"\t\tip length < 44 goto queue-input\n"
	"\t\t@th,96,8 & 0xf == 0x5 goto queue-input\n"
	"\t\t@th,96,8 & 0xf == 0x8 goto queue-input\n"
	"\t\t@th,96,8 & 0xf == 0x9 goto queue-input\n"
	"\t}\n"
	"\n"
	"\tchain queue-input {\n"
	"\t\tfib daddr type != local accept\n"
	"\t\tiifname \"eth0\" counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain defrag {\n"
	"\t\tmeta l4proto tcp tproxy to :9\n"
	"\t}\n"
	"}\n";

static const char expected_ipt[] =
	"# pgmrouter interception rules, generated; one commit of the mangle table.\n"
	"*mangle\n"
	":PGMROUTER-PRE - [0:0]\n"
	":PGMROUTER-IN - [0:0]\n"
	"-A PGMROUTER-PRE -p 113 -m u32 --u32 \"0&0xFFFF=36:65535&&4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x4\" -j RETURN\n"
	"-A PGMROUTER-PRE -p udp -m multiport --dports 3055,3056 -m u32 --u32 \"0&0xFFFF=44:65535&&4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x4\" -j RETURN\n"
	"-A PGMROUTER-PRE -i eth0 -p 113 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x1,0x2,0xA\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p 113 -d 224.0.0.0/4 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x8,0x9\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p 113 ! -d 224.0.0.0/4 -m addrtype ! --dst-type LOCAL -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x8\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p 113 -m length --length 0:35 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p udp -m multiport --dports 3055,3056 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x1,0x2,0xA\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p udp -m multiport --dports 3055,3056 -d 224.0.0.0/4 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x8,0x9\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p udp -m multiport --dports 3055,3056 ! -d 224.0.0.0/4 -m addrtype ! --dst-type LOCAL -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x8\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p udp -m multiport --dports 3055,3056 -m length --length 0:43 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -p 113 -d 224.0.0.0/4 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x0,0x5\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -p udp -m multiport --dports 3055,3056 -d 224.0.0.0/4 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x0,0x5\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -p 113 -m u32 --u32 \"0&0xFFFF=36:65535&&4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x4\" -j RETURN\n"
	"-A PGMROUTER-IN -p udp -m multiport --dports 3055,3056 -m u32 --u32 \"0&0xFFFF=44:65535&&4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x4\" -j RETURN\n"
	"-A PGMROUTER-IN -i eth0 -p 113 -m addrtype --dst-type LOCAL -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x5,0x8,0x9\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -i eth0 -p 113 -m addrtype --dst-type LOCAL -m length --length 0:35 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -i eth0 -p udp -m multiport --dports 3055,3056 -m addrtype --dst-type LOCAL -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x5,0x8,0x9\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -i eth0 -p udp -m multiport --dports 3055,3056 -m addrtype --dst-type LOCAL -m length --length 0:43 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-I PREROUTING 1 -j PGMROUTER-PRE\n"
	"-I INPUT 1 -j PGMROUTER-IN\n"
	"COMMIT\n";

/* The ip6 table: the same layout, PGM as the upper layer after any extension headers
   (meta l4proto), the payload length, ff00::/8. */
static const char expected_nft6[] =
	"# pgmrouter interception rules, generated. One transaction: the table of an\n"
	"# earlier run is replaced (or removed) as a whole.\n"
	"add table ip6 pgmrouter\n"
	"delete table ip6 pgmrouter\n"
	"table ip6 pgmrouter {\n"
	"\tchain prerouting {\n"
	"\t\ttype filter hook prerouting priority mangle - 1; policy accept;\n"
	"\t\tmeta l4proto 113-113 @th,32,8 & 0xf == 0x4 ip6 length >= 16 accept\n"
	"\t\tmeta l4proto 113-113 goto pgm-prerouting\n"
	"\t\tudp dport 3055-3056 @th,96,8 & 0xf == 0x4 ip6 length >= 24 accept\n"
	"\t\tudp dport 3055-3056 goto udp-prerouting\n"
	"\t}\n"
	"\n"
	"\tchain pgm-prerouting {\n"
	"\t\tip6 length < 16 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x1 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x2 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0xa goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x8 ip6 daddr ff00::/8 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x9 ip6 daddr ff00::/8 goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x8 fib daddr type != local goto queue-prerouting\n"
	"\t\t@th,32,8 & 0xf == 0x0 ip6 daddr ff00::/8 counter queue num 3 bypass\n"
	"\t\t@th,32,8 & 0xf == 0x5 ip6 daddr ff00::/8 counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain udp-prerouting {\n"
	"\t\tip6 length < 24 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x1 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x2 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0xa goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x8 ip6 daddr ff00::/8 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x9 ip6 daddr ff00::/8 goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x8 fib daddr type != local goto queue-prerouting\n"
	"\t\t@th,96,8 & 0xf == 0x0 ip6 daddr ff00::/8 counter queue num 3 bypass\n"
	"\t\t@th,96,8 & 0xf == 0x5 ip6 daddr ff00::/8 counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain queue-prerouting {\n"
	"\t\tiifname \"eth0\" counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain input {\n"
	"\t\ttype filter hook input priority mangle - 1; policy accept;\n"
	"\t\tmeta l4proto 113-113 @th,32,8 & 0xf == 0x4 ip6 length >= 16 accept\n"
	"\t\tmeta l4proto 113-113 goto pgm-input\n"
	"\t\tudp dport 3055-3056 @th,96,8 & 0xf == 0x4 ip6 length >= 24 accept\n"
	"\t\tudp dport 3055-3056 goto udp-input\n"
	"\t}\n"
	"\n"
	"\tchain pgm-input {\n"
	"\t\tip6 length < 16 goto queue-input\n"
	"\t\t@th,32,8 & 0xf == 0x5 goto queue-input\n"
	"\t\t@th,32,8 & 0xf == 0x8 goto queue-input\n"
	"\t\t@th,32,8 & 0xf == 0x9 goto queue-input\n"
	"\t}\n"
	"\n"
	"\tchain udp-input {\n"
	"\t\tip6 length < 24 goto queue-input\n"
	"\t\t@th,96,8 & 0xf == 0x5 goto queue-input\n"
	"\t\t@th,96,8 & 0xf == 0x8 goto queue-input\n"
	"\t\t@th,96,8 & 0xf == 0x9 goto queue-input\n"
	"\t}\n"
	"\n"
	"\tchain queue-input {\n"
	"\t\tfib daddr type != local accept\n"
	"\t\tiifname \"eth0\" counter queue num 3 bypass\n"
	"\t}\n"
	"\n"
	"\tchain defrag {\n"
	"\t\tmeta l4proto tcp tproxy to :9\n"
	"\t}\n"
	"}\n";

/* The layout without policing (test_police_* check what policing adds to it). */
static struct rules_config config(uint16_t queue)
{
	struct rules_config cfg;

	rules_config_default(&cfg);
	cfg.queue_num = queue;
	memset(cfg.police, 0, sizeof(cfg.police));
	return cfg;
}

static struct rules_config police_config(uint16_t queue)
{
	struct rules_config cfg;

	rules_config_default(&cfg);
	cfg.queue_num = queue;
	return cfg;
}

static unsigned count(const char *text, const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

START_TEST(test_nft_script_exact)
{
	struct rules_config cfg = config(3);
	char *s = rules_nft_script(&cfg, one_if, 1, true);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, expected_nft);
	free(s);
}
END_TEST

START_TEST(test_nft6_script_exact)
{
	struct rules_config cfg = config(3);
	char *s = rules_nft_script_family(&cfg, RULES_IPV6, one_if, 1, true);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, expected_nft6);
	free(s);
	/* the ip script is the same as before */
	s = rules_nft_script_family(&cfg, RULES_IPV4, one_if, 1, true);
	ck_assert_str_eq(s, expected_nft);
	free(s);
	s = rules_nft_script_family(&cfg, RULES_IPV6, NULL, 0, false);
	ck_assert_ptr_nonnull(strstr(s, "add table ip6 pgmrouter\ndelete table ip6 pgmrouter\n"));
	ck_assert_ptr_null(strstr(s, "table ip6 pgmrouter {"));
	free(s);
}
END_TEST

START_TEST(test_ipt_script_exact)
{
	struct rules_config cfg = config(3);
	struct rules_ipt_state none = {0};
	char *s = rules_ipt_script(&cfg, &none, one_if, 1, true);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, expected_ipt);
	free(s);
}
END_TEST

/* Every line of text holding `needle` also holds `also`. */
static bool lines_with_also(const char *text, const char *needle, const char *also)
{
	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle)) {
		const char *start = p, *end = strchr(p, '\n');
		char line[512];

		while (start > text && start[-1] != '\n')
			start--;
		snprintf(line, sizeof(line), "%.*s", (int)((end ? end : p + strlen(p)) - start),
			start);
		if (strstr(line, also) == NULL)
			return false;
	}
	return true;
}

/* The ip6tables script: the same chains, the PGM type read right behind the IPv6 header and
   behind one extension header, ODATA returning first in either place and never queued. */
START_TEST(test_ipt6_script)
{
	struct rules_config cfg = police_config(3);
	struct rules_ipt_state none = {0};
	char *s = rules_ipt_script_family(&cfg, RULES_IPV6, &none, one_if, 1, true);
	const char *odata[] = {
		"-p 113 -m u32 --u32 \"4>>16=16:65535&&4>>8&0xFF=113&&44>>24&0x0F=0x4\" -j "
		"RETURN\n",
		"-p 113 -m u32 --u32 "
		"\"4>>8&0xFF=0,43,60&&40>>24=113&&40>>13&0x7F8@52>>24&0x0F=0x4\" -j RETURN\n",
		"--dports 3055,3056 -m u32 --u32 \"4>>16=24:65535&&4>>8&0xFF=17&&52>>24&0x0F=0x4\" "
		"-j RETURN\n",
		"--dports 3055,3056 -m u32 --u32 "
		"\"4>>8&0xFF=0,43,60&&40>>24=17&&40>>13&0x7F8@60>>24&0x0F=0x4\" -j RETURN\n",
	};
	const char *pre, *in;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(s, "(ip6tables)"));
	ck_assert_ptr_null(strstr(s, "224.0.0.0/4"));
	ck_assert_ptr_null(strstr(s, "0x1FFF")); /* no IPv4 fragment test */
	/* each chain starts with the four ODATA returns: IP and UDP, each shape */
	pre = strstr(s, "-A PGMROUTER-PRE ");
	in = strstr(s, "-A PGMROUTER-IN ");
	ck_assert_ptr_nonnull(pre);
	ck_assert_ptr_nonnull(in);
	for (unsigned k = 0; k < 4; k++) {
		const char *p = strstr(pre, odata[k]), *q = strstr(in, odata[k]);

		ck_assert_ptr_nonnull(p);
		ck_assert_ptr_nonnull(q);
		ck_assert_uint_eq(count(pre, "\n") - count(p, "\n"), k);
		ck_assert_uint_eq(count(in, "\n") - count(q, "\n"), k);
	}
	ck_assert_uint_eq(count(s, "-j RETURN"), 8);
	/* ODATA is never queued nor policed: no type list with 4 outside the returns */
	ck_assert(lines_with_also(s, "=0x4", "-j RETURN"));
	ck_assert(lines_with_also(s, ",0x4", "-j RETURN"));
	/* every queue and police rule reads the type in one of the two shapes */
	ck_assert(lines_with_also(s, "NFQUEUE", "-A PGMROUTER-"));
	ck_assert_uint_eq(
		count(s, "-d ff00::/8 -m u32 --u32 \"4>>8&0xFF=113&&44>>24&0x0F=0x8,0x9\""), 3);
	ck_assert_uint_eq(
		count(s, "-d ff00::/8 -m u32 --u32 "
			 "\"4>>8&0xFF=0,43,60&&40>>24=113&&40>>13&0x7F8@52>>24&0x0F=0x8,0x9\""),
		3);
	ck_assert_uint_eq(count(s, "! -d ff00::/8 -m addrtype ! --dst-type LOCAL"), 3 * 2 * 2);
	/* too short for a PGM header in any shape: 40 + 16 (+ 8) bytes */
	ck_assert_uint_eq(count(s, "-p 113 -m length --length 0:55 -j NFQUEUE"), 1);
	ck_assert_uint_eq(count(s, "-m length --length 0:63 -j NFQUEUE"), 2);
	ck_assert_uint_eq(
		count(s, "-m addrtype --dst-type LOCAL -m length --length 0:55 -j NFQUEUE"), 1);
	/* the replicated SPM and RDATA from any interface, each shape and encapsulation */
	ck_assert_uint_eq(count(s, "-A PGMROUTER-PRE -p 113 -d ff00::/8 -m u32"), 4);
	ck_assert_uint_eq(count(s, "-A PGMROUTER-PRE -p udp -m multiport --dports 3055,3056 -d "
				   "ff00::/8 -m u32"),
		4);
	/* policing by source address, in front of the queue rules, same table names as IPv4 */
	ck_assert(lines_with_also(s, "hashlimit", "-j DROP"));
	ck_assert_uint_gt(count(s, "--hashlimit-mode srcip --hashlimit-name pgmrout-nak-s"), 0);
	ck_assert_uint_gt(count(s, "--hashlimit-name pgmrout-nak0 "), 0);
	/* one jump per hook */
	ck_assert_uint_eq(count(s, "-I PREROUTING 1 -j PGMROUTER-PRE\n"), 1);
	ck_assert_uint_eq(count(s, "-I INPUT 1 -j PGMROUTER-IN\n"), 1);
	free(s);

	/* the probe checks the widest test; removal is the IPv4 one's */
	s = rules_ipt_probe_script_family(&cfg, RULES_IPV6);
	ck_assert_ptr_nonnull(strstr(s, "40>>13&0x7F8@52>>24&0x0F=0x0\" -m addrtype"));
	ck_assert_ptr_nonnull(strstr(s, "-X PGMROUTER-PRE-PROBE\nCOMMIT\n"));
	free(s);
	{
		struct rules_ipt_state st = {0};
		char *a, *b;

		st.chain_present[RULES_IPT_PRE] = st.chain_present[RULES_IPT_IN] = true;
		st.jumps[RULES_IPT_PRE] = st.jumps[RULES_IPT_IN] = 1;
		a = rules_ipt_script_family(&cfg, RULES_IPV6, &st, NULL, 0, false);
		b = rules_ipt_script(&cfg, &st, NULL, 0, false);
		ck_assert_str_eq(strchr(a, '\n'), strchr(b, '\n'));
		free(a);
		free(b);
	}
}
END_TEST

START_TEST(test_every_rule_has_bypass_and_no_odata)
{
	struct rules_config cfg = config(9);
	struct rules_ipt_state none = {0};
	char *n = rules_nft_script(&cfg, two_ifs, 2, true);
	char *i = rules_ipt_script(&cfg, &none, two_ifs, 2, true);

	/* nftables: one queue rule per hook and interface, behind the classifying chains, and
	   the multicast SPM and RDATA (replicated by the daemon) from any interface, IP and UDP */
	ck_assert_uint_eq(count(n, "counter queue num 9 bypass\n"), 4 + 4);
	ck_assert_uint_eq(count(n, "queue num"), 8);
	ck_assert_uint_eq(count(n, "\"vlan.10\""), 2);
	ck_assert_uint_eq(count(n, "ip daddr 224.0.0.0/4 counter queue num 9 bypass\n"), 4);
	/* iptables: per interface (IP, UDP) x (prerouting 4: by type, multicast NAK/NNAK,
	   unicast NAKs past us, too short; input 2), and one SPM/RDATA rule each for IP and UDP */
	ck_assert_uint_eq(count(i, "-j NFQUEUE --queue-num 9 --queue-bypass\n"), 24 + 2);
	ck_assert_uint_eq(count(i, "NFQUEUE"), 26);
	ck_assert_uint_eq(count(i, " vlan.10 "), 12);
	/* no forward hook: the kernel forwards every copy of ODATA without a rule */
	ck_assert_ptr_null(strstr(n, "forward"));
	ck_assert_ptr_null(strstr(i, "FORWARD"));
	ck_assert_ptr_null(strstr(i, "-FWD"));
	/* the short-datagram rules cannot take a valid PGM packet (the smallest is 16 bytes) */
	ck_assert_uint_eq(count(n, "ip length < 36 goto queue-"), 2);
	ck_assert_uint_eq(count(n, "ip length < 44 goto queue-"), 2);
	ck_assert_uint_eq(count(i, "--length 0:35 "), 4);
	ck_assert_uint_eq(count(i, "--length 0:43 "), 4);
	/* ODATA (type 4) only ever in the rules that let it pass, first in every hook, and only
	   when long enough (a short one is queued as malformed) */
	ck_assert_uint_eq(count(n, "== 0x4 "), 4);
	ck_assert(lines_with_also(n, "== 0x4 ", " accept"));
	ck_assert(lines_with_also(n, "@th,32,8 & 0xf == 0x4 ", "ip length >= 36 accept"));
	ck_assert(lines_with_also(n, "@th,96,8 & 0xf == 0x4 ", "ip length >= 44 accept"));
	ck_assert_uint_eq(count(i, "=0x4\""), 4);
	ck_assert(lines_with_also(i, "=0x4\"", " -j RETURN"));
	ck_assert_uint_eq(count(i, " -i ") + count(i, " -o "), 24); /* only queue rules name one */
	ck_assert(!strstr(i, ",0x4"));
	ck_assert(lines_with_also(i, "0x4", "RETURN"));
	/* multicast NAKs and NNAKs at prerouting only, over IP and UDP, from the interfaces;
	   multicast SPM and RDATA from any */
	ck_assert_uint_eq(count(n, "ip daddr 224.0.0.0/4 goto queue-prerouting\n"), 4);
	ck_assert_uint_eq(count(n, "224.0.0.0/4"), 8);
	ck_assert(lines_with_also(n, "== 0x0 ", "ip daddr 224.0.0.0/4 counter queue"));
	ck_assert(lines_with_also(n, "== 0x5 ip", "ip daddr 224.0.0.0/4 counter queue"));
	ck_assert_uint_eq(count(i, "-A PGMROUTER-PRE -i vlan.10 -p 113 -d 224.0.0.0/4 "), 1);
	ck_assert_uint_eq(count(i, "-A PGMROUTER-PRE -p 113 -d 224.0.0.0/4 "), 1);
	ck_assert_uint_eq(count(i, "! -d 224.0.0.0/4 "), 4);
	ck_assert_uint_eq(count(i, "-d 224.0.0.0/4 "), 6 + 4);
	/* unicast NAKs past the router (to the source): prerouting, from the interfaces */
	ck_assert_uint_eq(count(n, "== 0x8 fib daddr type != local goto queue-prerouting\n"), 2);
	ck_assert_uint_eq(count(i, "-m addrtype ! --dst-type LOCAL "), 4);
	ck_assert(lines_with_also(i, "! --dst-type LOCAL ", "=0x8\" -j NFQUEUE"));
	ck_assert_uint_eq(count(i, "=0x8,0x9\" -j NFQUEUE"), 4);
	ck_assert_uint_eq(count(i, "=0x0,0x5\" -j NFQUEUE"), 2);
	ck_assert(lines_with_also(i, "=0x0,0x5\"", "-d 224.0.0.0/4 "));
	free(n);
	free(i);
}
END_TEST

START_TEST(test_udp_off_and_single_port)
{
	char err[128];
	uint8_t *buf;
	size_t len;
	struct rules_config cfg = config(0);
	struct rules_ipt_state none = {0};
	char *n, *i;

	cfg.udp = false;
	n = rules_nft_script(&cfg, one_if, 1, true);
	i = rules_ipt_script(&cfg, &none, one_if, 1, true);
	ck_assert_ptr_null(strstr(n, "udp"));
	ck_assert_ptr_null(strstr(i, "udp"));
	ck_assert_uint_eq(count(n, "queue num"), 2 + 2);
	ck_assert_uint_eq(count(i, "NFQUEUE"), 6 + 1);
	free(n);
	free(i);

	cfg.udp = true;
	cfg.udp_ports = (struct pgm_port_set){.n = 1, .r = {{7500, 7500}}};
	n = rules_nft_script(&cfg, one_if, 1, true);
	i = rules_ipt_script(&cfg, &none, one_if, 1, true);
	ck_assert_uint_eq(count(n, "udp dport 7500 @th,96,8 & 0xf == 0x4 ip length >= 44 accept\n"), 2);
	ck_assert_uint_eq(count(n, "udp dport 7500 goto udp-"), 2);
	ck_assert_uint_eq(count(i, "-p udp --dport 7500 "), 2 + 6 + 1);
	ck_assert_ptr_null(strstr(i, "multiport"));
	ck_assert_ptr_null(strstr(n, "set udp_ports"));
	free(n);
	free(i);

	/* several ranges: one set, looked up by one rule per hook and verdict */
	ck_assert_int_eq(pgm_port_set_parse("5555,3056 7000-7010 3055", &cfg.udp_ports, err,
				 sizeof(err)),
		0);
	n = rules_nft_script(&cfg, one_if, 1, true);
	i = rules_ipt_script(&cfg, &none, one_if, 1, true);
	ck_assert_ptr_nonnull(strstr(n, "\tset udp_ports {\n\t\ttype inet_service\n"
					"\t\tflags constant,interval\n"
					"\t\telements = { 3055-3056, 5555, 7000-7010 }\n\t}\n"));
	ck_assert_uint_eq(count(n, "udp dport @udp_ports @th,96,8 & 0xf == 0x4 "), 2);
	ck_assert_uint_eq(count(n, "udp dport @udp_ports goto udp-input\n"), 1);
	ck_assert_uint_eq(count(n, "udp dport @udp_ports"), 4);
	ck_assert_uint_eq(count(i, "-p udp -m multiport --dports 3055,3056,5555,7000:7010 "),
		2 + 6 + 1);
	free(n);
	free(i);
	/* the netlink batch: the set and its elements after the table */
	ck_assert_int_gt(rules_nft_encode(&cfg, RULES_IPV4, one_if, 1, true, RULES_NFT_QUEUE_STATEMENT, &buf,
				 &len),
		0);
	free(buf);
}
END_TEST

START_TEST(test_port_set_parse)
{
	struct pgm_port_set set;
	char err[128], text[96];

	ck_assert_int_eq(pgm_port_set_parse("3056 3055", &set, err, sizeof(err)), 0);
	ck_assert_str_eq(pgm_port_set_format(&set, text, sizeof(text)), "3055 3056");
	ck_assert_uint_eq(set.n, 1);
	ck_assert_int_eq(pgm_port_set_parse("5555", &set, err, sizeof(err)), 0);
	ck_assert_str_eq(pgm_port_set_format(&set, text, sizeof(text)), "5555");
	ck_assert_int_eq(pgm_port_set_parse("7000-7010, 7005 7011 1-2", &set, err, sizeof(err)), 0);
	ck_assert_str_eq(pgm_port_set_format(&set, text, sizeof(text)), "1 2 7000-7011");
	ck_assert(pgm_port_set_has(&set, 7011) && !pgm_port_set_has(&set, 7012));
	ck_assert_int_eq(pgm_port_set_parse("0", &set, err, sizeof(err)), -1);
	ck_assert_int_eq(pgm_port_set_parse("65536", &set, err, sizeof(err)), -1);
	ck_assert_int_eq(pgm_port_set_parse("10-5", &set, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "backwards"));
	ck_assert_int_eq(pgm_port_set_parse("3055x", &set, err, sizeof(err)), -1);
	ck_assert_int_eq(pgm_port_set_parse("", &set, err, sizeof(err)), -1);
	/* 15 ports fit the multiport match, a range counting two; 16 do not */
	ck_assert_int_eq(pgm_port_set_parse("1 3 5 7 9 11 13 15 17 19 21 23 25 27 29", &set, err,
				 sizeof(err)),
		0);
	ck_assert_int_eq(pgm_port_set_parse("1 3 5 7 9 11 13 15 17 19 21 23 25 27 29 31", &set,
				 err, sizeof(err)),
		-1);
	ck_assert_int_eq(
		pgm_port_set_parse("1-3 5-7 9-11 13-15 17-19 21-23 25-27 29-31", &set, err, sizeof(err)),
		-1);
	ck_assert_ptr_nonnull(strstr(err, "more than 15"));
}
END_TEST

START_TEST(test_empty_interface_set)
{
	struct rules_config cfg = config(0);
	struct rules_ipt_state none = {0};
	char *n = rules_nft_script(&cfg, NULL, 0, true);
	char *i = rules_ipt_script(&cfg, &none, NULL, 0, true);

	/* chains and jumps exist, nothing is queued */
	ck_assert_uint_eq(count(n, "type filter hook"), 2);
	ck_assert_ptr_null(strstr(n, "queue num"));
	ck_assert_uint_eq(count(i, "-I "), 2);
	ck_assert_ptr_null(strstr(i, "NFQUEUE"));
	free(n);
	free(i);
}
END_TEST

START_TEST(test_removal_scripts)
{
	struct rules_config cfg = config(0);
	struct rules_ipt_state st = {0};
	char *n = rules_nft_script(&cfg, NULL, 0, false);
	char *i;

	ck_assert_str_eq(n,
		"# pgmrouter interception rules, generated. One transaction: the table of an\n"
		"# earlier run is replaced (or removed) as a whole.\n"
		"add table ip pgmrouter\ndelete table ip pgmrouter\n");
	free(n);
	/* a crashed run left two jumps in FORWARD and all three chains */
	st.jumps[RULES_IPT_FWD] = 2;
	st.jumps[RULES_IPT_PRE] = 1;
	st.chain_present[RULES_IPT_PRE] = st.chain_present[RULES_IPT_IN] =
		st.chain_present[RULES_IPT_FWD] = true;
	i = rules_ipt_script(&cfg, &st, NULL, 0, false);
	ck_assert_str_eq(i,
		"# pgmrouter interception rules, generated; one commit of the mangle table.\n"
		"*mangle\n"
		"-D PREROUTING -j PGMROUTER-PRE\n"
		"-D FORWARD -j PGMROUTER-FWD\n"
		"-D FORWARD -j PGMROUTER-FWD\n"
		"-F PGMROUTER-PRE\n-X PGMROUTER-PRE\n"
		"-F PGMROUTER-IN\n-X PGMROUTER-IN\n"
		"-F PGMROUTER-FWD\n-X PGMROUTER-FWD\n"
		"COMMIT\n");
	free(i);
}
END_TEST

START_TEST(test_reinstall_replaces_old_jumps)
{
	struct rules_config cfg = config(0);
	struct rules_ipt_state st = {0};
	char *i;
	const char *del, *ins;

	st.jumps[RULES_IPT_IN] = 3;
	i = rules_ipt_script(&cfg, &st, one_if, 1, true);
	ck_assert_uint_eq(count(i, "-D INPUT -j PGMROUTER-IN\n"), 3);
	ck_assert_uint_eq(count(i, "-I INPUT 1 -j PGMROUTER-IN\n"), 1);
	del = strstr(i, "-D INPUT");
	ins = strstr(i, "-I INPUT");
	ck_assert(del < ins); /* old ones go before the new one is inserted */
	ck_assert_ptr_nonnull(strstr(i, ":PGMROUTER-IN - [0:0]\n")); /* flushes the old chain */
	free(i);
}
END_TEST

START_TEST(test_probe_scripts_leave_nothing)
{
	struct rules_config cfg = config(5);
	char *i = rules_ipt_probe_script(&cfg);

	ck_assert_ptr_nonnull(strstr(i, ":PGMROUTER-PRE-PROBE - [0:0]\n"));
	ck_assert_ptr_nonnull(strstr(i, "--queue-num 5 --queue-bypass\n"));
	ck_assert_ptr_nonnull(
		strstr(i, "-F PGMROUTER-PRE-PROBE\n-X PGMROUTER-PRE-PROBE\nCOMMIT\n"));
	free(i);
}
END_TEST

/* What one netlink batch holds. */
struct batch_view {
	unsigned msgs, begins, ends, newtable, deltable, chains, base_chains, rules;
	unsigned queue_exprs, target_exprs, counter_exprs, compat_matches, goto_rules;
	unsigned dynset_exprs, sets, timeout_sets;
	unsigned ip_msgs, ip6_msgs, addr6_sets; /* by nfgen_family; sets keyed on IPv6 addresses */
	bool acked; /* every nf_tables message asks for an acknowledgement */
};

static void view_rule(const struct nlmsghdr *nlh, struct batch_view *v)
{
	const struct nlattr *attr, *exprs = NULL, *e, *a;

	mnl_attr_for_each(attr, nlh, sizeof(struct nfgenmsg))
	{
		if (mnl_attr_get_type(attr) == NFTA_RULE_EXPRESSIONS)
			exprs = attr;
	}
	ck_assert_ptr_nonnull(exprs);
	mnl_attr_for_each_nested(e, exprs)
	{
		mnl_attr_for_each_nested(a, e)
		{
			const char *name;

			if (mnl_attr_get_type(a) != NFTA_EXPR_NAME)
				continue;
			name = mnl_attr_get_str(a);
			v->queue_exprs += strcmp(name, "queue") == 0;
			v->target_exprs += strcmp(name, "target") == 0;
			v->counter_exprs += strcmp(name, "counter") == 0;
			v->compat_matches += strcmp(name, "match") == 0;
			v->dynset_exprs += strcmp(name, "dynset") == 0;
		}
	}
}

static struct batch_view view_batch(const uint8_t *buf, size_t len)
{
	struct batch_view v = {.acked = true};
	int remaining = (int)len;

	for (const struct nlmsghdr *nlh = (const void *)buf; mnl_nlmsg_ok(nlh, remaining);
		nlh = mnl_nlmsg_next(nlh, &remaining)) {
		const struct nlattr *attr;

		v.msgs++;
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN) {
			v.begins++;
			continue;
		}
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_END) {
			v.ends++;
			continue;
		}
		ck_assert_uint_eq(nlh->nlmsg_type >> 8, NFNL_SUBSYS_NFTABLES);
		v.ip_msgs += ((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->nfgen_family ==
			     NFPROTO_IPV4;
		v.ip6_msgs += ((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->nfgen_family ==
			      NFPROTO_IPV6;
		if (!(nlh->nlmsg_flags & NLM_F_ACK))
			v.acked = false;
		switch (nlh->nlmsg_type & 0xff) {
		case NFT_MSG_NEWTABLE:
			v.newtable++;
			break;
		case NFT_MSG_DELTABLE:
			v.deltable++;
			break;
		case NFT_MSG_NEWCHAIN:
			v.chains++;
			mnl_attr_for_each(attr, nlh, sizeof(struct nfgenmsg))
			{
				if (mnl_attr_get_type(attr) == NFTA_CHAIN_HOOK)
					v.base_chains++;
			}
			break;
		case NFT_MSG_NEWSET:
			v.sets++;
			mnl_attr_for_each(attr, nlh, sizeof(struct nfgenmsg))
			{
				if (mnl_attr_get_type(attr) == NFTA_SET_FLAGS &&
					(ntohl(mnl_attr_get_u32(attr)) &
						(NFT_SET_TIMEOUT | NFT_SET_EVAL)) ==
						(NFT_SET_TIMEOUT | NFT_SET_EVAL))
					v.timeout_sets++;
				if (mnl_attr_get_type(attr) == NFTA_SET_KEY_LEN &&
					ntohl(mnl_attr_get_u32(attr)) == 16)
					v.addr6_sets++;
			}
			break;
		case NFT_MSG_NEWRULE:
			v.rules++;
			view_rule(nlh, &v);
			break;
		default:
			ck_abort_msg("unexpected message type %u", nlh->nlmsg_type);
		}
	}
	ck_assert_int_eq(remaining, 0);
	return v;
}

START_TEST(test_nft_batch)
{
	struct rules_config cfg = config(7);
	struct batch_view v;
	uint8_t *buf;
	size_t len;
	char *text;
	int n;

	/* The batch carries the script's table: the same chains and rules, one message each,
	   between the removal of an earlier run's table and the batch's end. */
	n = rules_nft_encode(&cfg, RULES_IPV4, two_ifs, 2, true, RULES_NFT_QUEUE_XT, &buf, &len);
	ck_assert_int_gt(n, 0);
	v = view_batch(buf, len);
	ck_assert_uint_eq(v.msgs, (unsigned)n);
	ck_assert_uint_eq(v.begins, 1);
	ck_assert_uint_eq(v.ends, 1);
	ck_assert_uint_eq(v.newtable, 2); /* "new, delete, new": replaces what exists */
	ck_assert_uint_eq(v.deltable, 1);
	text = rules_nft_script(&cfg, two_ifs, 2, true);
	ck_assert_uint_eq(v.chains, count(text, "\tchain "));
	ck_assert_uint_eq(v.base_chains, 2);
	ck_assert_uint_eq(v.rules, count(text, "\t\t") - count(text, "\t\ttype filter"));
	ck_assert_uint_eq(v.target_exprs, 8); /* one per hook and interface; SPM, RDATA x IP, UDP */
	ck_assert_uint_eq(v.queue_exprs, 0);
	ck_assert_uint_eq(v.counter_exprs, 8);
	ck_assert_uint_eq(v.compat_matches, 0); /* every match is native */
	ck_assert(v.acked);
	free(buf);
	free(text);

	n = rules_nft_encode(&cfg, RULES_IPV4, two_ifs, 2, true, RULES_NFT_QUEUE_STATEMENT, &buf, &len);
	v = view_batch(buf, len);
	ck_assert_uint_eq(v.queue_exprs, 8);
	ck_assert_uint_eq(v.target_exprs, 0);
	free(buf);

	/* removal: the table goes whether or not it exists */
	n = rules_nft_encode(&cfg, RULES_IPV4, NULL, 0, false, RULES_NFT_QUEUE_XT, &buf, &len);
	v = view_batch(buf, len);
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(v.newtable, 1);
	ck_assert_uint_eq(v.deltable, 1);
	ck_assert_uint_eq(v.chains + v.rules, 0);
	free(buf);

	strcpy(cfg.name, "bad name");
	ck_assert_int_eq(rules_nft_encode(&cfg, RULES_IPV4, one_if, 1, true, RULES_NFT_QUEUE_XT, &buf, &len), -1);
	ck_assert_ptr_null(buf);
}
END_TEST

/* Policing in the ip6 table: per source keyed on ip6 saddr, sets of IPv6 addresses; every
   message of the batch is of family ip6, none of ip. */
START_TEST(test_nft6_police_and_batch)
{
	struct rules_config cfg = police_config(7);
	char *text = rules_nft_script_family(&cfg, RULES_IPV6, two_ifs, 2, true);
	struct batch_view v;
	uint8_t *buf;
	size_t len;
	int n;

	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(count(text, "type ipv6_addr"), 3);
	ck_assert_uint_eq(count(text, "type ipv4_addr"), 0);
	/* NAK at prerouting and input, NCF; SPM on the interfaces and from any (IP, UDP) */
	ck_assert_uint_eq(count(text, "{ ip6 saddr limit rate over 500/second burst 100 packets }"),
		3);
	ck_assert_uint_eq(count(text, "{ ip6 saddr limit rate over 1000/second burst 200 packets }"),
		3);
	ck_assert_uint_eq(count(text, "ip saddr"), 0);
	ck_assert_uint_eq(count(text, "ip daddr"), 0);
	ck_assert_uint_eq(count(text, "ip protocol"), 0);
	ck_assert_uint_eq(count(text, "== 0x4 goto"), 0); /* ODATA never queued */

	n = rules_nft_encode(
		&cfg, RULES_IPV6, two_ifs, 2, true, RULES_NFT_QUEUE_STATEMENT, &buf, &len);
	ck_assert_int_gt(n, 0);
	v = view_batch(buf, len);
	ck_assert_uint_eq(v.msgs, (unsigned)n);
	ck_assert_uint_eq(v.ip_msgs, 0);
	ck_assert_uint_eq(v.ip6_msgs, (unsigned)n - 2); /* all but the batch's begin and end */
	ck_assert_uint_eq(v.sets, 6);
	ck_assert_uint_eq(v.addr6_sets, 3);
	ck_assert_uint_eq(v.dynset_exprs, count(text, "update @"));
	ck_assert_uint_eq(v.chains, count(text, "\tchain "));
	ck_assert_uint_eq(v.counter_exprs, count(text, "counter "));
	ck_assert_uint_eq(v.compat_matches, 0);
	free(buf);
	free(text);

	/* the ip table's batch is all ip */
	n = rules_nft_encode(
		&cfg, RULES_IPV4, two_ifs, 2, true, RULES_NFT_QUEUE_STATEMENT, &buf, &len);
	v = view_batch(buf, len);
	ck_assert_uint_eq(v.ip6_msgs, 0);
	ck_assert_uint_eq(v.ip_msgs, (unsigned)n - 2);
	ck_assert_uint_eq(v.addr6_sets, 0);
	free(buf);
}
END_TEST

START_TEST(test_parse_save)
{
	static const char save[] =
		"# Generated by iptables-save v1.8.9 (nf_tables) on Mon Jan  1 00:00:00 2024\n"
		"*filter\n"
		":INPUT ACCEPT [0:0]\n"
		"-A INPUT -j PGMROUTER-IN\n" /* not the mangle table: not ours */
		"COMMIT\n"
		"*mangle\n"
		":PREROUTING ACCEPT [10:600]\n"
		":INPUT ACCEPT [0:0]\n"
		":FORWARD ACCEPT [0:0]\n"
		":OUTPUT ACCEPT [0:0]\n"
		":POSTROUTING ACCEPT [0:0]\n"
		":PGMROUTER-FWD - [0:0]\n"
		":PGMROUTER-PRE - [0:0]\n"
		":PGMROUTER-PRE2 - [0:0]\n" /* a prefix of ours is someone else's chain */
		"-A PREROUTING -j PGMROUTER-PRE\n"
		"-A FORWARD -j PGMROUTER-FWD\n"
		"-A FORWARD -j PGMROUTER-FWD\n"
		"-A FORWARD -i x -j PGMROUTER-FWD\n" /* not our jump */
		"-A PGMROUTER-FWD -o d1 -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"-A PGMROUTER-FWD -o d2 -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"COMMIT\n";
	struct rules_config cfg = config(0);
	struct rules_ipt_state st;

	rules_ipt_parse_save(&cfg, save, &st);
	ck_assert(st.nf_tables);
	ck_assert(st.table_present);
	ck_assert(st.chain_present[RULES_IPT_PRE]);
	ck_assert(!st.chain_present[RULES_IPT_IN]);
	ck_assert(st.chain_present[RULES_IPT_FWD]);
	ck_assert_uint_eq(st.jumps[RULES_IPT_PRE], 1);
	ck_assert_uint_eq(st.jumps[RULES_IPT_IN], 0);
	ck_assert_uint_eq(st.jumps[RULES_IPT_FWD], 2);
	ck_assert_uint_eq(st.rules[RULES_IPT_FWD], 2);
	ck_assert(st.foreign_content); /* PGMROUTER-PRE2 and the -i x jump */

	rules_ipt_parse_save(&cfg,
		"*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n"
		":OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n",
		&st);
	ck_assert(!st.foreign_content);
	ck_assert(!st.nf_tables);
	rules_ipt_parse_save(&cfg, "*mangle\n:FORWARD DROP [0:0]\nCOMMIT\n", &st);
	ck_assert(st.foreign_content); /* a policy someone set */
	rules_ipt_parse_save(&cfg, "", &st);
	ck_assert(!st.table_present);
}
END_TEST

START_TEST(test_custom_name)
{
	struct rules_config cfg = config(0);
	struct rules_ipt_state none = {0};
	char buf[32];
	char *i, *n;

	strcpy(cfg.name, "pgm_b");
	ck_assert_str_eq(rules_ipt_chain_name(&cfg, RULES_IPT_FWD, buf, sizeof(buf)), "PGM_B-FWD");
	i = rules_ipt_script(&cfg, &none, one_if, 1, true);
	n = rules_nft_script(&cfg, one_if, 1, true);
	ck_assert_ptr_nonnull(strstr(i, "-I PREROUTING 1 -j PGM_B-PRE\n"));
	ck_assert_ptr_null(strstr(i, "-I FORWARD")); /* the retired hook */
	free(i);
	/* what an earlier version left at the forward hook goes */
	{
		struct rules_ipt_state old = {0};

		old.jumps[RULES_IPT_FWD] = 1;
		old.chain_present[RULES_IPT_FWD] = true;
		i = rules_ipt_script(&cfg, &old, one_if, 1, true);
		ck_assert_ptr_nonnull(strstr(i, "-D FORWARD -j PGM_B-FWD\n-F PGM_B-FWD\n-X PGM_B-FWD\n"));
	}
	ck_assert_ptr_nonnull(strstr(n, "table ip pgm_b {\n"));
	free(i);
	free(n);
	strcpy(cfg.name, "bad name");
	ck_assert_ptr_null(rules_nft_script(&cfg, one_if, 1, true));
	ck_assert_ptr_null(rules_ipt_script(&cfg, &none, one_if, 1, true));
}
END_TEST

START_TEST(test_interface_names)
{
	struct rules_config cfg = config(0);
	struct rules_ipt_state none = {0};
	const char *const bad[] = {"eth*"};

	ck_assert(rules_ifname_valid("eth0"));
	ck_assert(rules_ifname_valid("br-lan.100"));
	ck_assert(rules_ifname_valid("veth_a@x"));
	ck_assert(rules_ifname_valid("abcdefghijklmno")); /* 15 */
	ck_assert(!rules_ifname_valid("abcdefghijklmnop"));
	ck_assert(!rules_ifname_valid(""));
	ck_assert(!rules_ifname_valid(NULL));
	ck_assert(!rules_ifname_valid("eth+"));
	ck_assert(!rules_ifname_valid("eth*"));
	ck_assert(!rules_ifname_valid("a\"b"));
	ck_assert(!rules_ifname_valid("a b"));
	ck_assert(!rules_ifname_valid("a\nb"));
	ck_assert(!rules_ifname_valid(".."));
	ck_assert(!rules_ifname_valid("a/b"));
	ck_assert_ptr_null(rules_nft_script(&cfg, bad, 1, true));
	ck_assert_ptr_null(rules_ipt_script(&cfg, &none, bad, 1, true));
}
END_TEST

START_TEST(test_backend_names)
{
	enum rules_backend b;

	ck_assert(rules_backend_parse("nft", &b) && b == RULES_BACKEND_NFT);
	ck_assert(rules_backend_parse("nftables", &b) && b == RULES_BACKEND_NFT);
	ck_assert(rules_backend_parse("iptables", &b) && b == RULES_BACKEND_IPTABLES);
	ck_assert(rules_backend_parse("auto", &b) && b == RULES_BACKEND_AUTO);
	ck_assert(!rules_backend_parse("ebtables", &b));
	ck_assert_str_eq(rules_backend_name(RULES_BACKEND_NFT), "nftables");
	ck_assert_str_eq(rules_backend_name(RULES_BACKEND_IPTABLES), "iptables");
}
END_TEST

START_TEST(test_handle_before_install)
{
	struct rules *r = rules_new(NULL);
	const char *const *names;
	char err[128];

	ck_assert(!rules_installed(r));
	ck_assert_int_eq(rules_backend(r), RULES_BACKEND_AUTO);
	ck_assert_uint_eq(rules_interfaces(r, &names), 0);
	ck_assert_int_eq(rules_update(r, one_if, 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "rules: not installed");
	ck_assert_int_eq(rules_install(r, RULES_BACKEND_AUTO, bad_names, 1, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot be used in a rule"));
	rules_free(r);
}
END_TEST


/* The line of text holding `needle` (first), into buf. */
static const char *line_of(const char *text, const char *needle, char *buf, size_t len)
{
	const char *p = strstr(text, needle), *start, *end;

	ck_assert_ptr_nonnull(p);
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(p, '\n');
	snprintf(buf, len, "%.*s", (int)((end ? end : p + strlen(p)) - start), start);
	return buf;
}

START_TEST(test_police_nft_script)
{
	struct rules_config cfg = police_config(3);
	char *n = rules_nft_script(&cfg, two_ifs, 2, true), line[512];
	const char *odata, *first_police;

	ck_assert_ptr_nonnull(n);
	/* a dynamic set per class and key, entries expiring */
	ck_assert_uint_eq(count(n, "\tset police_"), 6);
	ck_assert_ptr_nonnull(strstr(n, "\tset police_nak_src {\n\t\ttype ipv4_addr\n\t\tsize 65536\n"
					"\t\tflags dynamic,timeout\n\t\ttimeout 10s\n\t}\n"));
	ck_assert_ptr_nonnull(strstr(n, "\tset police_ncf_if {\n\t\ttype iface_index\n"));
	/* NAKs and NNAKs (multicast, and unicast past us at prerouting; to us at input) go
	   through their class's chain, which lets only the interfaces with assist on to the
	   buckets and then to the queue */
	ck_assert_uint_eq(count(n, "goto nak-prerouting\n"), 6);
	ck_assert_uint_eq(count(n, "goto nak-input\n"), 4);
	ck_assert_uint_eq(count(n, "goto ncf-prerouting\n"), 2);
	ck_assert_uint_eq(count(n, "goto spm-prerouting\n"), 4); /* POLL, POLR */
	ck_assert_ptr_nonnull(strstr(n, "\tchain nak-input {\n"
					"\t\tiifname \"eth0\" goto police-nak-input\n"
					"\t\tiifname \"vlan.10\" goto police-nak-input\n\t}\n"));
	ck_assert_ptr_nonnull(strstr(n,
		"\tchain police-nak-input {\n"
		"\t\tupdate @police_nak_src { ip saddr limit rate over 500/second burst 100 packets } "
		"counter drop\n"
		"\t\tupdate @police_nak_if { iif limit rate over 2000/second burst 400 packets } "
		"counter drop\n"
		"\t\tgoto queue-input\n\t}\n"));
	ck_assert_ptr_nonnull(strstr(n, "\tchain police-ncf-prerouting {\n"
					"\t\tupdate @police_ncf_src { ip saddr limit rate over "
					"500/second burst 100 packets } counter drop\n"));
	/* SPMs to a group come from any interface: policed in front of their queue rule */
	ck_assert_ptr_nonnull(strstr(n,
		"\t\t@th,32,8 & 0xf == 0x0 ip daddr 224.0.0.0/4 update @police_spm_src { ip saddr "
		"limit rate over 1000/second burst 200 packets } counter drop\n"
		"\t\t@th,32,8 & 0xf == 0x0 ip daddr 224.0.0.0/4 update @police_spm_if { iif limit "
		"rate over 2000/second burst 400 packets } counter drop\n"
		"\t\t@th,32,8 & 0xf == 0x0 ip daddr 224.0.0.0/4 counter queue num 3 bypass\n"));
	/* 2 per police chain (NAK at both hooks, NCF, SPM), 2 per encapsulation for SPMs */
	ck_assert_uint_eq(count(n, "counter drop\n"), 8 + 4);
	ck_assert(lines_with_also(n, "update @", " counter drop"));
	/* never ODATA, RDATA or the short datagrams */
	ck_assert(!lines_with_also(n, "== 0x5 ", "update @"));
	ck_assert_uint_eq(count(n, "== 0x5 ip daddr 224.0.0.0/4 counter queue"), 2);
	ck_assert_uint_eq(count(n, "ip length < 36 goto queue-"), 2);
	/* ODATA still leaves by the first rule of each hook */
	odata = strstr(n, "ip protocol 113 @th,32,8 & 0xf == 0x4 ip length >= 36 accept\n");
	first_police = strstr(n, "update @");
	ck_assert_ptr_nonnull(odata);
	ck_assert(odata < first_police);
	ck_assert_str_eq(line_of(n, "chain prerouting {", line, sizeof(line)),
		"\tchain prerouting {");
	free(n);

	/* one class off, the interface buckets off: nothing of them left */
	cfg.police[RULES_POLICE_NCF][RULES_POLICE_SOURCE].rate = 0;
	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++)
		cfg.police[k][RULES_POLICE_INTERFACE].rate = 0;
	n = rules_nft_script(&cfg, two_ifs, 2, true);
	ck_assert_uint_eq(count(n, "\tset police_"), 2);
	ck_assert_ptr_null(strstr(n, "ncf-prerouting"));
	ck_assert_ptr_null(strstr(n, "iif limit"));
	ck_assert_uint_eq(count(n, "@th,32,8 & 0xf == 0xa goto queue-prerouting\n"), 1);
	free(n);

	/* no interfaces: no policing (nothing is queued but SPM and RDATA from nowhere) */
	cfg = police_config(3);
	n = rules_nft_script(&cfg, NULL, 0, true);
	ck_assert_ptr_null(strstr(n, "police"));
	free(n);
}
END_TEST

START_TEST(test_police_nft_batch)
{
	struct rules_config cfg = police_config(7);
	struct batch_view v;
	uint8_t *buf;
	size_t len;
	char *text;
	int n;

	n = rules_nft_encode(&cfg, RULES_IPV4, two_ifs, 2, true, RULES_NFT_QUEUE_STATEMENT, &buf, &len);
	ck_assert_int_gt(n, 0);
	v = view_batch(buf, len);
	text = rules_nft_script(&cfg, two_ifs, 2, true);
	ck_assert_uint_eq(v.msgs, (unsigned)n);
	ck_assert_uint_eq(v.sets, 6);
	ck_assert_uint_eq(v.timeout_sets, 6); /* dynamic (NFT_SET_EVAL), entries time out */
	ck_assert_uint_eq(v.dynset_exprs, count(text, "update @"));
	ck_assert_uint_eq(v.chains, count(text, "\tchain "));
	ck_assert_uint_eq(v.rules, count(text, "\t\t") - count(text, "\t\ttype") -
					   count(text, "\t\tsize") - count(text, "\t\tflags") -
					   count(text, "\t\ttimeout"));
	ck_assert_uint_eq(v.counter_exprs, count(text, "counter "));
	ck_assert_uint_eq(v.compat_matches, 0);
	ck_assert(v.acked);
	free(buf);
	free(text);
}
END_TEST

START_TEST(test_police_ipt_script)
{
	struct rules_config cfg = police_config(3);
	struct rules_ipt_state none = {0};
	char *i = rules_ipt_script(&cfg, &none, two_ifs, 2, true);
	const char *p;

	ck_assert_ptr_nonnull(i);
	/* every drop is a hashlimit over its limit, and hashlimit drops nothing else */
	ck_assert(lines_with_also(i, "-m hashlimit", " -j DROP"));
	ck_assert_uint_eq(count(i, "-j DROP"), count(i, "-m hashlimit"));
	/* per source: one table per class for the whole router */
	ck_assert(lines_with_also(i, "--hashlimit-mode srcip ", "--hashlimit-name pgmrout-"));
	ck_assert_ptr_nonnull(strstr(i,
		"-A PGMROUTER-IN -i vlan.10 -p 113 -m addrtype --dst-type LOCAL -m u32 --u32 "
		"\"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x8,0x9\" -m hashlimit --hashlimit-above "
		"500/sec --hashlimit-burst 100 --hashlimit-mode srcip --hashlimit-name "
		"pgmrout-nak-s --hashlimit-htable-max 65536 --hashlimit-htable-expire 10000 -j "
		"DROP\n"));
	/* per interface: one bucket each, named by its place in the list */
	ck_assert_ptr_nonnull(strstr(i, "--hashlimit-name pgmrout-nak1 --hashlimit-htable-max 1 "));
	ck_assert_ptr_nonnull(strstr(i, "--hashlimit-name pgmrout-spm0 "));
	/* in front of the interface's queue rule, for the types it queues */
	p = strstr(i, "-A PGMROUTER-PRE -i eth0 -p 113 -m u32 --u32 "
		      "\"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x1,0x2\" -m hashlimit");
	ck_assert_ptr_nonnull(p);
	ck_assert(p < strstr(i, "-A PGMROUTER-PRE -i eth0 -p 113 -m u32 --u32 "
				      "\"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x1,0x2,0xA\" -j NFQUEUE"));
	ck_assert_ptr_nonnull(strstr(i, "=0xA\" -m hashlimit --hashlimit-above 500/sec "));
	/* SPMs from anywhere per source, on the interfaces per interface */
	ck_assert_ptr_nonnull(strstr(i, "-A PGMROUTER-PRE -p 113 -d 224.0.0.0/4 -m u32 --u32 "
					"\"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x0\" -m hashlimit "
					"--hashlimit-above 1000/sec "));
	ck_assert_ptr_nonnull(strstr(i, "-A PGMROUTER-PRE -i vlan.10 -p 113 -d 224.0.0.0/4 -m u32 "
					"--u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x0\" -m "
					"hashlimit --hashlimit-above 2000/sec "));
	/* never RDATA, ODATA or the short datagrams */
	ck_assert(!lines_with_also(i, "0x5", "hashlimit"));
	ck_assert(!lines_with_also(i, "--length", "hashlimit"));
	/* (IP, UDP) x 2 interfaces x (prerouting: POLL/POLR, NCF, multicast NAK/NNAK,
	   NAK past us, SPM on the interface = 9; input: NAK/NNAK = 2) + SPM per source 2 */
	ck_assert_uint_eq(count(i, "-m hashlimit"), 2 * 2 * (9 + 2) + 2);
	free(i);
}
END_TEST

/* The start of a rule message of a dump, in chain; *exprs the open expression list. */
static struct nlmsghdr *dump_rule_begin(uint8_t *buf, const char *chain, struct nlattr **exprs)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);

	nlh->nlmsg_type = NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWRULE;
	nlh->nlmsg_flags = NLM_F_MULTI;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nfgenmsg));
	mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, "pgmrouter");
	mnl_attr_put_strz(nlh, NFTA_RULE_CHAIN, chain);
	*exprs = mnl_attr_nest_start(nlh, NFTA_RULE_EXPRESSIONS);
	return nlh;
}

static void put_counter(struct nlmsghdr *nlh, uint64_t packets, uint64_t bytes)
{
	struct nlattr *elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM), *data;

	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "counter");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_u64(nlh, NFTA_COUNTER_BYTES, htobe64(bytes));
	mnl_attr_put_u64(nlh, NFTA_COUNTER_PACKETS, htobe64(packets));
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
}

/* A policing rule of a dump: dynset on SET, its counter. */
static size_t put_police_rule(uint8_t *buf, const char *chain, const char *set, uint64_t packets)
{
	struct nlattr *exprs, *elem, *data;
	struct nlmsghdr *nlh = dump_rule_begin(buf, chain, &exprs);

	elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, "dynset");
	data = mnl_attr_nest_start(nlh, NFTA_EXPR_DATA);
	mnl_attr_put_strz(nlh, NFTA_DYNSET_SET_NAME, set);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, elem);
	put_counter(nlh, packets, packets * 300);
	mnl_attr_nest_end(nlh, exprs);
	return NLMSG_ALIGN(nlh->nlmsg_len);
}

/* A rule of a dump: chain, and a counter and a queue expression when asked for. */
static size_t put_dump_rule(uint8_t *buf, const char *chain, bool counter, const char *queue,
	uint64_t packets, uint64_t bytes)
{
	struct nlattr *exprs, *elem;
	struct nlmsghdr *nlh = dump_rule_begin(buf, chain, &exprs);

	if (counter)
		put_counter(nlh, packets, bytes);
	if (queue != NULL) {
		elem = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
		mnl_attr_put_strz(nlh, NFTA_EXPR_NAME, queue);
		mnl_attr_nest_end(nlh, elem);
	}
	mnl_attr_nest_end(nlh, exprs);
	return NLMSG_ALIGN(nlh->nlmsg_len);
}

START_TEST(test_counter_parsers)
{
	/* policing: the drops of each class and key, both hooks together */
	static const char ipt_police[] =
		"*mangle\n"
		"[7:700] -A PGMROUTER-IN -i a -p 113 -m u32 --u32 \"x=0x8,0x9\" -m hashlimit "
		"--hashlimit-above 500/sec --hashlimit-burst 100 --hashlimit-mode srcip "
		"--hashlimit-name pgmrout-nak-s --hashlimit-htable-max 65536 -j DROP\n"
		"[5:500] -A PGMROUTER-PRE -i a -p 113 -m u32 --u32 \"x=0x8\" -m hashlimit "
		"--hashlimit-above 500/sec --hashlimit-mode srcip --hashlimit-name pgmrout-nak-s "
		"-j DROP\n"
		"[3:300] -A PGMROUTER-IN -i a -p 113 -m hashlimit --hashlimit-name pgmrout-nak12 "
		"-j DROP\n"
		"[2:200] -A PGMROUTER-PRE -p 113 -m hashlimit --hashlimit-name pgmrout-spm-s -j DROP\n"
		"[9:900] -A PGMROUTER-PRE -p 113 -m hashlimit --hashlimit-name other-nak-s -j DROP\n"
		"[4:400] -A OTHER -p 113 -m hashlimit --hashlimit-name pgmrout-ncf-s -j DROP\n"
		"[1:100] -A PGMROUTER-IN -i a -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"COMMIT\n";
	static const char ipt[] =
		"*mangle\n"
		":PREROUTING ACCEPT [5:300]\n"
		":PGMROUTER-FWD - [0:0]\n"
		"[9:900] -A PREROUTING -j PGMROUTER-PRE\n" /* the jump: not a queue rule */
		"[3:168] -A PGMROUTER-PRE -i a -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"[50:3000] -A PGMROUTER-PRE -p 113 -m u32 --u32 \"x\" -j RETURN\n"
		"[10:560] -A PGMROUTER-FWD -o a -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"[6:336] -A PGMROUTER-FWD -o b -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"[100:1] -A OTHER -j NFQUEUE --queue-num 0\n"
		"COMMIT\n";
	_Alignas(8) uint8_t dump[4096] = {0};
	struct rules_config cfg = config(0);
	struct rules_counters c;
	size_t len = 0;

	rules_parse_ipt_counters(&cfg, ipt, &c);
	ck_assert_uint_eq(c.packets[RULES_IPT_PRE], 3);
	ck_assert_uint_eq(c.packets[RULES_IPT_IN], 0);
	ck_assert_uint_eq(c.packets[RULES_IPT_FWD], 16);
	ck_assert_uint_eq(c.bytes[RULES_IPT_FWD], 896);

	len += put_dump_rule(dump + len, "queue-prerouting", true, "target", 2, 112);
	len += put_dump_rule(dump + len, "queue-input", true, "queue", 4, 224);
	len += put_dump_rule(dump + len, "queue-forward", true, "target", 7, 392);
	len += put_dump_rule(dump + len, "queue-forward", true, "target", 1, 56);
	len += put_dump_rule(dump + len, "forward", true, NULL, 1000, 1); /* no queue: skipped */
	len += put_dump_rule(dump + len, "queue-forward", false, "target", 0, 0);
	len += put_dump_rule(dump + len, "elsewhere", true, "target", 1000, 1); /* not ours */
	rules_nft_parse_dump(dump, len, &c);
	ck_assert_uint_eq(c.packets[RULES_IPT_PRE], 2);
	ck_assert_uint_eq(c.packets[RULES_IPT_IN], 4);
	ck_assert_uint_eq(c.packets[RULES_IPT_FWD], 8);
	ck_assert_uint_eq(c.bytes[RULES_IPT_IN], 224);
	ck_assert_uint_eq(c.bytes[RULES_IPT_FWD], 448);
	rules_nft_parse_dump(dump, 0, &c);
	ck_assert_uint_eq(c.packets[RULES_IPT_FWD], 0);
	/* a truncated dump is read as far as it goes */
	rules_nft_parse_dump(dump, 10, &c);
	ck_assert_uint_eq(c.packets[RULES_IPT_PRE], 0);

	/* policing */
	len = 0;
	memset(dump, 0, sizeof(dump));
	rules_parse_ipt_counters(&cfg, ipt_police, &c);
	ck_assert_uint_eq(c.policed[RULES_POLICE_NAK][RULES_POLICE_SOURCE], 12);
	ck_assert_uint_eq(c.policed[RULES_POLICE_NAK][RULES_POLICE_INTERFACE], 3);
	ck_assert_uint_eq(c.policed[RULES_POLICE_SPM][RULES_POLICE_SOURCE], 2);
	ck_assert_uint_eq(c.policed[RULES_POLICE_NCF][RULES_POLICE_SOURCE], 0); /* not ours */
	ck_assert_uint_eq(c.packets[RULES_IPT_IN], 1); /* drops are not queued packets */

	len += put_police_rule(dump + len, "police-nak-input", "police_nak_src", 40);
	len += put_police_rule(dump + len, "police-nak-prerouting", "police_nak_src", 2);
	len += put_police_rule(dump + len, "police-nak-input", "police_nak_if", 5);
	len += put_police_rule(dump + len, "pgm-prerouting", "police_spm_if", 6);
	len += put_police_rule(dump + len, "police-ncf-prerouting", "udp_ports", 1000);
	len += put_dump_rule(dump + len, "queue-input", true, "queue", 4, 224);
	rules_nft_parse_dump(dump, len, &c);
	ck_assert_uint_eq(c.policed[RULES_POLICE_NAK][RULES_POLICE_SOURCE], 42);
	ck_assert_uint_eq(c.policed[RULES_POLICE_NAK][RULES_POLICE_INTERFACE], 5);
	ck_assert_uint_eq(c.policed[RULES_POLICE_SPM][RULES_POLICE_INTERFACE], 6);
	ck_assert_uint_eq(c.policed[RULES_POLICE_NCF][RULES_POLICE_SOURCE], 0);
	ck_assert_uint_eq(c.packets[RULES_IPT_IN], 4);
	ck_assert_uint_eq(c.packets[RULES_IPT_PRE], 0);

	/* the ip6 table's counters add to the totals and are kept apart as IPv6's */
	{
		struct rules_counters sum = {0};

		rules_counters_add(&sum, &c, RULES_IPV4);
		rules_counters_add(&sum, &c, RULES_IPV6);
		ck_assert_uint_eq(sum.packets[RULES_IPT_IN], 8);
		ck_assert_uint_eq(sum.packets_ipv6[RULES_IPT_IN], 4);
		ck_assert_uint_eq(sum.bytes[RULES_IPT_IN], 448);
		ck_assert_uint_eq(sum.policed[RULES_POLICE_NAK][RULES_POLICE_SOURCE], 84);
	}
}
END_TEST

/* ---- steering by session (several workers) ---- */

/* Every GSI byte belongs to exactly one worker, the ranges in order and none empty. */
START_TEST(test_worker_ranges)
{
	for (unsigned n = 1; n <= RULES_WORKERS_MAX; n++) {
		unsigned next = 0;

		for (unsigned k = 0; k < n; k++) {
			uint8_t lo, hi;

			rules_worker_range(k, n, &lo, &hi);
			ck_assert_uint_eq(lo, next);
			ck_assert_uint_ge(hi, lo);
			for (unsigned b = lo; b <= hi; b++) {
				uint8_t gsi[PGM_GSI_LEN] = {1, 2, 3, 4, 5, (uint8_t)b};

				ck_assert_uint_eq(rules_worker_of_gsi(gsi, n), k);
			}
			next = hi + 1u;
		}
		ck_assert_uint_eq(next, 256);
	}
}
END_TEST

struct steer_case {
	unsigned type;
	bool upstream; /* a receiver's or a router's towards the source: ports swapped */
	bool to_group;
};

/* A datagram of the type, built by the codec, around the TSI (gsi, sport 7500 -> dport 7501). */
static size_t steer_datagram(uint8_t *out, size_t cap, const struct steer_case *c,
	const uint8_t *gsi, bool v6, bool udp, bool ra)
{
	struct pgm_header_params h = {.sport = c->upstream ? 7501 : 7500,
		.dport = c->upstream ? 7500 : 7501};
	struct pgm_ip_params ip = {.ttl = 8, .router_alert = ra, .udp = udp};
	struct pgm_nla src, grp, rcv;
	uint8_t tpdu[256];
	size_t len = 0;

	memcpy(h.gsi, gsi, PGM_GSI_LEN);
	if (v6) {
		uint8_t a[16] = {0x20, 0x01, 0xd, 0xb8, [15] = 1}, g[16] = {0xff, 0x0e, [15] = 9},
			r[16] = {0x20, 0x01, 0xd, 0xb8, 0, 2, [15] = 2};

		src = (struct pgm_nla){.afi = PGM_AFI_IP6};
		memcpy(src.addr, a, 16);
		grp = (struct pgm_nla){.afi = PGM_AFI_IP6};
		memcpy(grp.addr, g, 16);
		rcv = (struct pgm_nla){.afi = PGM_AFI_IP6};
		memcpy(rcv.addr, r, 16);
	} else {
		struct in_addr a = {htonl(0xc6120101)}, g = {htonl(0xefc00001)},
			       r = {htonl(0xc6120202)};

		pgm_nla_from_ip4(&src, &a);
		pgm_nla_from_ip4(&grp, &g);
		pgm_nla_from_ip4(&rcv, &r);
	}
	switch (c->type) {
	case PGM_SPM:
		len = pgm_build_spm(tpdu, sizeof(tpdu), &h, 1, 1, 2, &src, NULL);
		break;
	case PGM_ODATA:
	case PGM_RDATA:
		len = pgm_build_data(tpdu, sizeof(tpdu), c->type, &h, 2, 1, "x", 1, NULL);
		break;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		len = pgm_build_nak(tpdu, sizeof(tpdu), c->type, &h, 2, &src, &grp, NULL);
		break;
	case PGM_POLL:
		len = pgm_build_poll(tpdu, sizeof(tpdu), &h, 1, 0, 0, &src, 0, 0, 0, NULL);
		break;
	case PGM_POLR:
		len = pgm_build_polr(tpdu, sizeof(tpdu), &h, 1, 0, NULL);
		break;
	case PGM_SPMR:
		len = pgm_build_spmr(tpdu, sizeof(tpdu), &h, NULL);
		break;
	case PGM_ACK:
		len = pgm_build_ack(tpdu, sizeof(tpdu), &h, 2, 0, NULL);
		break;
	}
	ck_assert_uint_gt(len, 0);
	ip.src = c->upstream ? rcv : src;
	ip.dst = c->to_group ? grp : c->upstream ? src : rcv;
	ip.udp_sport = h.sport;
	ip.udp_dport = 3055;
	len = pgm_build_ip(out, cap, &ip, tpdu, len);
	ck_assert_uint_gt(len, 0);
	return len;
}

/* A session's packets and the replies to them reach one worker, whatever their type and
   direction, over IPv4 and IPv6 (with a hop-by-hop header or none), PGM over IP or UDP. */
START_TEST(test_worker_steering_session)
{
	static const struct steer_case cases[] = {
		{PGM_SPM, false, true},
		{PGM_ODATA, false, true},
		{PGM_RDATA, false, true},
		{PGM_RDATA, false, false}, /* to a receiver or DLR, unicast */
		{PGM_NAK, true, false},	   /* receiver to router or source */
		{PGM_NNAK, true, false},
		{PGM_NAK, true, true}, /* Microsoft's multicast copy */
		{PGM_NCF, false, true},	/* router down to the group */
		{PGM_NCF, false, false},
		{PGM_POLL, false, true},
		{PGM_POLR, true, false},
		{PGM_SPMR, true, false},
		{PGM_ACK, true, false},
	};
	static const unsigned ns[] = {1, 2, 3, 4, 5, 7, 8, 16, 63, 64};
	uint8_t d[512];

	for (unsigned b = 0; b < 256; b++) {
		uint8_t gsi[PGM_GSI_LEN] = {0x4d, 0x81, 0xc2, (uint8_t)(b * 7), 0x34, (uint8_t)b};

		for (unsigned v = 0; v < 8; v++) {
			bool v6 = v & 1, udp = v & 2, ra = v & 4;

			for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
				size_t len = steer_datagram(d, sizeof(d), &cases[ci], gsi, v6, udp, ra);

				for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
					unsigned w = rules_worker_of_gsi(gsi, ns[ni]);

					ck_assert_uint_lt(w, ns[ni]);
					ck_assert_msg(rules_worker_of_datagram(d, len, udp, ns[ni]) == w,
						"type %u v6 %d udp %d ra %d gsi byte %u, %u workers: "
						"worker %u, the session's %u",
						cases[ci].type, v6, udp, ra, b, ns[ni],
						rules_worker_of_datagram(d, len, udp, ns[ni]), w);
				}
			}
		}
	}
	/* too short for the GSI: the last rule, the first worker */
	ck_assert_uint_eq(rules_worker_of_datagram(d, 20 + 13, false, 4), 0);
}
END_TEST

/* One worker: the table of before, byte for byte (no steering chain); more: one steering chain
   per hook, each worker's range for PGM over IP and over UDP, then the first queue. */
START_TEST(test_worker_nft_script)
{
	struct rules_config cfg;
	char *one, *two;

	rules_config_default(&cfg);
	cfg.queue_num = 113;
	one = rules_nft_script(&cfg, one_if, 1, true);
	ck_assert_ptr_nonnull(one);
	ck_assert_ptr_null(strstr(one, "steer"));
	cfg.workers = 2;
	two = rules_nft_script(&cfg, one_if, 1, true);
	ck_assert_ptr_nonnull(two);
	ck_assert_ptr_nonnull(strstr(two,
		"\tchain steer-prerouting {\n"
		"\t\tip protocol 113 @th,104,8 0x80-0xff counter queue num 114 bypass\n"
		"\t\tip protocol 113 counter queue num 113 bypass\n"
		"\t\t@th,168,8 0x80-0xff counter queue num 114 bypass\n"
		"\t\tcounter queue num 113 bypass\n"
		"\t}\n"));
	ck_assert_ptr_nonnull(strstr(two, "\tchain steer-input {\n"));
	ck_assert_ptr_nonnull(strstr(two, "\t\tiifname \"eth0\" goto steer-prerouting\n"));
	ck_assert_ptr_nonnull(
		strstr(two, "\t\t@th,32,8 & 0xf == 0x0 ip daddr 224.0.0.0/4 goto steer-prerouting\n"));
	/* every queue rule is in a steering chain */
	for (const char *p = strstr(two, "queue num"); p != NULL; p = strstr(p + 1, "queue num")) {
		const char *chain = p;

		while (chain > two && strncmp(chain, "\tchain ", 7) != 0)
			chain--;
		ck_assert_msg(strncmp(chain, "\tchain steer-", 13) == 0, "%.60s", chain);
	}
	free(two);
	cfg.udp = false;
	two = rules_nft_script(&cfg, one_if, 1, true);
	ck_assert_ptr_nonnull(strstr(two,
		"\t\tip protocol 113 @th,104,8 0x80-0xff counter queue num 114 bypass\n"
		"\t\tcounter queue num 113 bypass\n\t}\n"));
	free(two);
	cfg.udp = true;
	cfg.workers = RULES_WORKERS_MAX + 1;
	ck_assert_ptr_null(rules_nft_script(&cfg, one_if, 1, true));
	cfg.workers = 2;
	cfg.queue_num = 65535;
	ck_assert_ptr_null(rules_nft_script(&cfg, one_if, 1, true));
	cfg.workers = 1;
	two = rules_nft_script(&cfg, one_if, 1, true);
	ck_assert_ptr_nonnull(two);
	free(two);
	free(one);
}
END_TEST


int main(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("scripts");

	tcase_add_test(tc, test_nft_script_exact);
	tcase_add_test(tc, test_nft6_script_exact);
	tcase_add_test(tc, test_nft6_police_and_batch);
	tcase_add_test(tc, test_ipt_script_exact);
	tcase_add_test(tc, test_ipt6_script);
	tcase_add_test(tc, test_every_rule_has_bypass_and_no_odata);
	tcase_add_test(tc, test_udp_off_and_single_port);
	tcase_add_test(tc, test_port_set_parse);
	tcase_add_test(tc, test_empty_interface_set);
	tcase_add_test(tc, test_removal_scripts);
	tcase_add_test(tc, test_reinstall_replaces_old_jumps);
	tcase_add_test(tc, test_probe_scripts_leave_nothing);
	tcase_add_test(tc, test_nft_batch);
	tcase_add_test(tc, test_parse_save);
	tcase_add_test(tc, test_custom_name);
	tcase_add_test(tc, test_interface_names);
	tcase_add_test(tc, test_backend_names);
	tcase_add_test(tc, test_handle_before_install);
	tcase_add_test(tc, test_counter_parsers);
	tcase_add_test(tc, test_police_nft_script);
	tcase_add_test(tc, test_police_nft_batch);
	tcase_add_test(tc, test_police_ipt_script);
	tcase_add_test(tc, test_worker_ranges);
	tcase_add_test(tc, test_worker_steering_session);
	tcase_add_test(tc, test_worker_nft_script);
	suite_add_tcase(s, tc);
	return check_run(s);
}
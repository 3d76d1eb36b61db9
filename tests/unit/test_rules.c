/*
 * Interception rules: the generated nftables and iptables scripts (the exact text is the
 * contract: what is queued where), the parser of iptables-save output, name validation.
 * None of this needs root.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/rules.h"

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
	"\t\ttype filter hook prerouting priority mangle; policy accept;\n"
	"\t\tiifname \"eth0\" ip protocol 113 @th,32,8 & 0x0f == 0x0a counter queue num 3 bypass\n"
	"\t\tiifname \"eth0\" ip protocol 113 meta length < 36 counter queue num 3 bypass\n"
	"\t\tiifname \"eth0\" udp dport { 3055, 3056 } @th,96,8 & 0x0f == 0x0a counter queue num 3 bypass\n"
	"\t\tiifname \"eth0\" udp dport { 3055, 3056 } meta length < 44 counter queue num 3 bypass\n"
	"\t}\n"
	"\tchain input {\n"
	"\t\ttype filter hook input priority mangle; policy accept;\n"
	"\t\tiifname \"eth0\" fib daddr type local ip protocol 113 @th,32,8 & 0x0f { 0x02, 0x05, 0x08, 0x09 } counter queue num 3 bypass\n"
	"\t\tiifname \"eth0\" fib daddr type local ip protocol 113 meta length < 36 counter queue num 3 bypass\n"
	"\t\tiifname \"eth0\" fib daddr type local udp dport { 3055, 3056 } @th,96,8 & 0x0f { 0x02, 0x05, 0x08, 0x09 } counter queue num 3 bypass\n"
	"\t\tiifname \"eth0\" fib daddr type local udp dport { 3055, 3056 } meta length < 44 counter queue num 3 bypass\n"
	"\t}\n"
	"\tchain forward {\n"
	"\t\ttype filter hook forward priority mangle; policy accept;\n"
	"\t\toifname \"eth0\" ip protocol 113 @th,32,8 & 0x0f { 0x00, 0x01, 0x05 } counter queue num 3 bypass\n"
	"\t\toifname \"eth0\" ip protocol 113 meta length < 36 counter queue num 3 bypass\n"
	"\t\toifname \"eth0\" udp dport { 3055, 3056 } @th,96,8 & 0x0f { 0x00, 0x01, 0x05 } counter queue num 3 bypass\n"
	"\t\toifname \"eth0\" udp dport { 3055, 3056 } meta length < 44 counter queue num 3 bypass\n"
	"\t}\n"
	"}\n";

static const char expected_ipt[] =
	"# pgmrouter interception rules, generated; one commit of the mangle table.\n"
	"*mangle\n"
	":PGMROUTER-PRE - [0:0]\n"
	":PGMROUTER-IN - [0:0]\n"
	":PGMROUTER-FWD - [0:0]\n"
	"-A PGMROUTER-PRE -i eth0 -p 113 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0xA\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p 113 -m length --length 0:35 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p udp -m multiport --dports 3055,3056 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0xA\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-PRE -i eth0 -p udp -m multiport --dports 3055,3056 -m length --length 0:43 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -i eth0 -p 113 -m addrtype --dst-type LOCAL -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x2,0x5,0x8,0x9\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -i eth0 -p 113 -m addrtype --dst-type LOCAL -m length --length 0:35 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -i eth0 -p udp -m multiport --dports 3055,3056 -m addrtype --dst-type LOCAL -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x2,0x5,0x8,0x9\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-IN -i eth0 -p udp -m multiport --dports 3055,3056 -m addrtype --dst-type LOCAL -m length --length 0:43 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-FWD -o eth0 -p 113 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@4>>24&0x0F=0x0,0x1,0x5\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-FWD -o eth0 -p 113 -m length --length 0:35 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-FWD -o eth0 -p udp -m multiport --dports 3055,3056 -m u32 --u32 \"4&0x1FFF=0&&0>>22&0x3C@12>>24&0x0F=0x0,0x1,0x5\" -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-A PGMROUTER-FWD -o eth0 -p udp -m multiport --dports 3055,3056 -m length --length 0:43 -j NFQUEUE --queue-num 3 --queue-bypass\n"
	"-I PREROUTING 1 -j PGMROUTER-PRE\n"
	"-I INPUT 1 -j PGMROUTER-IN\n"
	"-I FORWARD 1 -j PGMROUTER-FWD\n"
	"COMMIT\n";

static struct rules_config config(uint16_t queue)
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

START_TEST(test_every_rule_has_bypass_and_no_odata)
{
	struct rules_config cfg = config(9);
	struct rules_ipt_state none = {0};
	char *n = rules_nft_script(&cfg, two_ifs, 2, true);
	char *i = rules_ipt_script(&cfg, &none, two_ifs, 2, true);

	/* 3 hooks x 2 interfaces x (IP, UDP) x (by type, too short for a header) */
	ck_assert_uint_eq(count(n, "queue num 9 bypass\n"), 24);
	ck_assert_uint_eq(count(n, "queue num"), 24);
	ck_assert_uint_eq(count(i, "-j NFQUEUE --queue-num 9 --queue-bypass\n"), 24);
	ck_assert_uint_eq(count(i, "NFQUEUE"), 24);
	/* the short-datagram rules cannot take a valid PGM packet (the smallest is 16 bytes) */
	ck_assert_uint_eq(count(n, "meta length < 36 "), 6);
	ck_assert_uint_eq(count(i, "--length 0:35 "), 6);
	/* ODATA (type 4) appears in no type list */
	ck_assert_ptr_null(strstr(n, "0x04"));
	ck_assert_ptr_null(strstr(i, "=0x4"));
	ck_assert_ptr_null(strstr(i, ",0x4"));
	ck_assert_uint_eq(count(n, "\"vlan.10\""), 12);
	ck_assert_uint_eq(count(i, " vlan.10 "), 12);
	free(n);
	free(i);
}
END_TEST

START_TEST(test_udp_off_and_single_port)
{
	struct rules_config cfg = config(0);
	struct rules_ipt_state none = {0};
	char *n, *i;

	cfg.udp = false;
	n = rules_nft_script(&cfg, one_if, 1, true);
	i = rules_ipt_script(&cfg, &none, one_if, 1, true);
	ck_assert_ptr_null(strstr(n, "udp"));
	ck_assert_ptr_null(strstr(i, "udp"));
	ck_assert_uint_eq(count(n, "queue num"), 6);
	free(n);
	free(i);

	cfg.udp = true;
	cfg.udp_ucast_port = cfg.udp_mcast_port = 7500;
	n = rules_nft_script(&cfg, one_if, 1, true);
	i = rules_ipt_script(&cfg, &none, one_if, 1, true);
	ck_assert_uint_eq(count(n, "udp dport 7500 @th,96,8"), 3);
	ck_assert_uint_eq(count(i, "-p udp --dport 7500 "), 6);
	ck_assert_ptr_null(strstr(i, "multiport"));
	free(n);
	free(i);
}
END_TEST

START_TEST(test_empty_interface_set)
{
	struct rules_config cfg = config(0);
	struct rules_ipt_state none = {0};
	char *n = rules_nft_script(&cfg, NULL, 0, true);
	char *i = rules_ipt_script(&cfg, &none, NULL, 0, true);

	/* chains and jumps exist, nothing is queued */
	ck_assert_uint_eq(count(n, "type filter hook"), 3);
	ck_assert_ptr_null(strstr(n, "queue"));
	ck_assert_uint_eq(count(i, "-I "), 3);
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
	char *n = rules_nft_probe_script(&cfg);
	char *i = rules_ipt_probe_script(&cfg);

	ck_assert_str_eq(n, "add table ip pgmrouter-probe\n"
			    "add chain ip pgmrouter-probe probe\n"
			    "add rule ip pgmrouter-probe probe ip protocol 113 queue num 5 bypass\n"
			    "delete table ip pgmrouter-probe\n");
	ck_assert_ptr_nonnull(strstr(i, ":PGMROUTER-PRE-PROBE - [0:0]\n"));
	ck_assert_ptr_nonnull(strstr(i, "--queue-num 5 --queue-bypass\n"));
	ck_assert_ptr_nonnull(
		strstr(i, "-F PGMROUTER-PRE-PROBE\n-X PGMROUTER-PRE-PROBE\nCOMMIT\n"));
	free(n);
	free(i);
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
	ck_assert_ptr_nonnull(strstr(i, "-I FORWARD 1 -j PGM_B-FWD\n"));
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

START_TEST(test_counter_parsers)
{
	static const char ipt[] =
		"*mangle\n"
		":PREROUTING ACCEPT [5:300]\n"
		":PGMROUTER-FWD - [0:0]\n"
		"[9:900] -A PREROUTING -j PGMROUTER-PRE\n" /* the jump: not a queue rule */
		"[3:168] -A PGMROUTER-PRE -i a -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"[10:560] -A PGMROUTER-FWD -o a -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"[6:336] -A PGMROUTER-FWD -o b -p 113 -j NFQUEUE --queue-num 0 --queue-bypass\n"
		"[100:1] -A OTHER -j NFQUEUE --queue-num 0\n"
		"COMMIT\n";
	static const char nft[] =
		"table ip pgmrouter {\n"
		"\tchain prerouting {\n"
		"\t\ttype filter hook prerouting priority mangle; policy accept;\n"
		"\t\tiifname \"a\" ip protocol 113 @th,32,8 & 0xf == 0xa counter packets 2 bytes "
		"112 "
		"queue num 0 bypass\n"
		"\t}\n"
		"\tchain input {\n"
		"\t\tiifname \"a\" fib daddr type local ip protocol 113 counter packets 4 bytes "
		"224 "
		"queue num 0 bypass\n"
		"\t}\n"
		"\tchain forward {\n"
		"\t\toifname \"a\" ip protocol 113 counter packets 7 bytes 392 queue num 0 bypass\n"
		"\t\toifname \"b\" ip protocol 113 counter packets 1 bytes 56 queue num 0 bypass\n"
		"\t}\n"
		"}\n";
	struct rules_config cfg = config(0);
	struct rules_counters c;

	rules_parse_ipt_counters(&cfg, ipt, &c);
	ck_assert_uint_eq(c.packets[RULES_IPT_PRE], 3);
	ck_assert_uint_eq(c.packets[RULES_IPT_IN], 0);
	ck_assert_uint_eq(c.packets[RULES_IPT_FWD], 16);
	ck_assert_uint_eq(c.bytes[RULES_IPT_FWD], 896);
	rules_parse_nft_counters(nft, &c);
	ck_assert_uint_eq(c.packets[RULES_IPT_PRE], 2);
	ck_assert_uint_eq(c.packets[RULES_IPT_IN], 4);
	ck_assert_uint_eq(c.packets[RULES_IPT_FWD], 8);
	ck_assert_uint_eq(c.bytes[RULES_IPT_IN], 224);
	rules_parse_nft_counters("", &c);
	ck_assert_uint_eq(c.packets[RULES_IPT_FWD], 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("scripts");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_nft_script_exact);
	tcase_add_test(tc, test_ipt_script_exact);
	tcase_add_test(tc, test_every_rule_has_bypass_and_no_odata);
	tcase_add_test(tc, test_udp_off_and_single_port);
	tcase_add_test(tc, test_empty_interface_set);
	tcase_add_test(tc, test_removal_scripts);
	tcase_add_test(tc, test_reinstall_replaces_old_jumps);
	tcase_add_test(tc, test_probe_scripts_leave_nothing);
	tcase_add_test(tc, test_parse_save);
	tcase_add_test(tc, test_custom_name);
	tcase_add_test(tc, test_interface_names);
	tcase_add_test(tc, test_backend_names);
	tcase_add_test(tc, test_handle_before_install);
	tcase_add_test(tc, test_counter_parsers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

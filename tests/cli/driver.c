/*
 * Golden-transcript driver: feeds a script to the command engine in-process and prints what an
 * IOS terminal would show. In the script, a literal '?' asks for help at that point (the line is
 * then echoed again, as IOS does) and a TAB completes the current word as readline would.
 *
 * A line that ends in '?' is not executed (as if abandoned after reading the help).
 * Lines starting with "%%" are driver directives:
 *	%% load FILE		load FILE as the startup config and print its errors
 *	%% roundtrip		running config -> file -> empty config -> load file -> compare
 *	%% readonly on|off	make the session read-only (a pgmrouter group member) or not
 *	%% startup FILE		the file `write memory` writes and `show startup-config` reads
 *	%% cat FILE		print FILE
 *	%% reset		a new session in exec mode
 *	%% pgm start NAME=A.B.C.D/LEN ...
 *				router assist without a data plane on these interfaces
 *				(router/assist/offline.h), so that show and clear have live state
 *	%% pgm packet IN[>OUT] TYPE SRC DST [key=value ...]
 *				one packet through it, arriving on IN (and for a forwarded
 *				copy leaving on OUT); its decisions are printed. TYPE: spm,
 *				odata, rdata, nak, nnak, ncf; keys: sqn, trail, lead, path
 *				(SPM), source and group (the NAK/NCF NLAs), list (a,b,...),
 *				sport (the source's port, of its TSI: default 1234)
 *				OUT "*": before the routing decision, SPM and RDATA to a
 *				group replicated along its route
 *	%% pgm mroute SRC|* GROUP IIF OIF[:TTL] ...
 *				a multicast route for the group, in place of the one made
 *				from the interfaces (router/assist/offline.h)
 *	%% pgm advance MSEC	move its clock forward and run the timers due
 * Lines starting with "##" are comments, copied to the transcript.
 *
 * With --fuzz ROUNDS SEED, random lines go through execute, `?` and TAB in random modes instead
 * (to be run with ASan), with the PGM commands on a test control plane.
 *
 * Next to the real commands (generic and PGM), the test-only commands below, under `test`,
 * exercise every token type and the engine's corners (a failing handler, long output); the
 * configurable ones are a settings table of their own (cli/settings.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/base_vty.h"
#include "cli/command.h"
#include "cli/config.h"
#include "cli/filter.h"
#include "cli/settings.h"
#include "dataplane/wire/pgm_wire.h"
#include "router/assist/offline.h"
#include "router/lib/log.h"
#include "router/vty/daemon_vty.h"
#include "router/vty/pgm_vty.h"

static struct cmd_session session;
static char startup_tmp[] = "/tmp/cli-driver-startupXXXXXX";
static struct offline *offline; /* %% pgm start */

static struct out_filter *filter; /* of the running command, applied here as the client does */

static void emit_stdout(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	fwrite(data, 1, len, stdout);
}

static void out_write(struct cmd_session *s, const char *data, size_t len)
{
	(void)s;
	if (filter != NULL)
		out_filter_write(filter, data, len, emit_stdout, NULL);
	else
		fwrite(data, 1, len, stdout);
}

static int set_filter(struct cmd_session *s, enum cmd_filter_kind kind, const char *pattern)
{
	char err[256];

	out_filter_free(filter);
	if ((filter = out_filter_new(kind, pattern, err, sizeof(err))) == NULL) {
		cmd_out(s, "%s\n", err);
		return CMD_ERR_FAILED;
	}
	return CMD_OK;
}

static void filter_done(void)
{
	if (filter != NULL)
		out_filter_end(filter, emit_stdout, NULL);
	out_filter_free(filter);
	filter = NULL;
}

static void session_new(void)
{
	cmd_session_init(&session, CMD_NODE_EXEC, out_write, NULL);
	session.filter = set_filter;
}

/* ---- test-only commands ---- */

/* The configurable ones: a settings table over these structs. */
struct test_global {
	uint32_t max_sessions;
};
struct test_if {
	bool assist;
	uint32_t nak_rpt_ivl, nak_rdata_ivl;
};

static int refuse_unlucky(
	const struct cfg *c, const char *ifname, uint32_t value, char *err, size_t errlen)
{
	(void)c;
	(void)ifname;
	if (value != 13)
		return 0;
	snprintf(err, errlen, "Unlucky limit %u refused", value);
	return -1;
}

static const struct setting test_settings[] = {
	{.keyword = "max-sessions",
		.kind = SETTING_NUMBER,
		.min = 0,
		.max = 1000000,
		.help = "Limit the number of sessions tracked\n",
		.value_help = "Sessions (0: no limit)\n",
		.global_offset = offsetof(struct test_global, max_sessions),
		.if_offset = SETTING_NOWHERE,
		.check = refuse_unlucky},
	{.keyword = "assist",
		.kind = SETTING_FLAG,
		.help = "Switch something on\n",
		.global_offset = SETTING_NOWHERE,
		.if_offset = offsetof(struct test_if, assist)},
	{.keyword = "nak-rpt-ivl",
		.kind = SETTING_NUMBER,
		.min = 10,
		.max = 60000,
		.dflt = 10,
		.help = "NAK repeat interval\n",
		.value_help = "Milliseconds\n",
		.global_offset = SETTING_NOWHERE,
		.if_offset = offsetof(struct test_if, nak_rpt_ivl)},
	{.keyword = "nak-rdata-ivl",
		.kind = SETTING_NUMBER,
		.min = 10,
		.max = 60000,
		.dflt = 10,
		.help = "Wait for RDATA interval\n",
		.value_help = "Milliseconds\n",
		.global_offset = SETTING_NOWHERE,
		.if_offset = offsetof(struct test_if, nak_rdata_ivl)},
};

static struct cfg_module test_module = {
	.name = "test",
	.prefix = "test",
	.prefix_help = "Test-only commands\n",
	.rows = test_settings,
	.nrows = sizeof(test_settings) / sizeof(test_settings[0]),
	.global_size = sizeof(struct test_global),
	.if_size = sizeof(struct test_if),
	.write_order = 100,
	.if_write_order = 10,
};

static void print_args(struct cmd_session *s, const char *what, const struct cmd_args *a)
{
	cmd_out(s, "[%s%s", a->negate ? "no " : "", what);
	for (int i = 0; i < a->argc; i++)
		if (!a->argv[i].keyword)
			cmd_out(s, " %s=%s", a->argv[i].name, a->argv[i].value);
		else
			cmd_out(s, " %s", a->argv[i].name);
	cmd_out(s, "]\n");
}

static int test_show_traffic(struct cmd_session *s, const struct cmd_args *a)
{
	print_args(s, "traffic", a);
	return CMD_OK;
}

static int test_show_sessions(struct cmd_session *s, const struct cmd_args *a)
{
	print_args(s, "sessions", a);
	return CMD_OK;
}

static int test_clear(struct cmd_session *s, const struct cmd_args *a)
{
	print_args(s, "clear", a);
	return CMD_OK;
}

static int test_token(struct cmd_session *s, const struct cmd_args *a)
{
	print_args(s, "token", a);
	return CMD_OK;
}

struct big_state {
	long long next, count;
};

static int big_next(struct cmd_session *s, void *arg)
{
	struct big_state *b = arg;

	for (int i = 0; i < 100 && b->next < b->count; i++, b->next++)
		cmd_out(s, "line %lld of %lld\n", b->next + 1, b->count);
	return b->next < b->count ? CMD_MORE : CMD_OK;
}

static int test_show_big(struct cmd_session *s, const struct cmd_args *a)
{
	struct big_state *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return CMD_ERR_FAILED;
	b->count = cmd_arg_int(a, "count", 0);
	cmd_set_continuation(s, big_next, b, free);
	return CMD_MORE;
}

#define TEST_STR "Test-only commands\n"

static const struct cmd_def test_cmds[] = {
	{.spec = "show test traffic [IFNAME] [json]",
		.help = SHOW_STR TEST_STR "Traffic counters\n" IFNAME_STR "JSON output\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_show_traffic},
	{.spec = "show test sessions [A.B.C.D$group]",
		.help = SHOW_STR TEST_STR "Source path state\nMulticast group\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_show_sessions},
	{.spec = "show test big <1-100000>$count",
		.help = SHOW_STR TEST_STR "Many lines\nHow many\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_show_big},
	{.spec = "clear test (traffic|sessions) [IFNAME]",
		.help = "Reset functions\n" TEST_STR
			"Traffic counters\nSource path state\n" IFNAME_STR,
		.modes = CMD_MODES_SHOW, /* in exec mode too, to show a read-only session denied */
		.priv = CMD_PRIV_ADMIN,
		.handler = test_clear},
	{.spec = "test-token (A.B.C.D|<-5-100>|IFNAME|WORD)",
		.help = "Which token type wins\nAn address\nA number\nAn interface\nA word\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_token,
		.flags = CMD_F_HIDDEN},
};

/* ---- packets for the PGM control plane ---- */

static bool parse_u32(const char *text, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno != 0 || end == text || *end != '\0' || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool parse_addr(const char *text, struct pgm_nla *out)
{
	return pgm_nla_parse(out, text) && out->afi == PGM_AFI_IP;
}

/* "IN[>OUT] TYPE SRC DST [key=value ...]": builds the datagram with the wire codec. */
static void pgm_packet(char *args)
{
	static const struct {
		const char *name;
		unsigned type;
	} types[] = {{"spm", PGM_SPM}, {"odata", PGM_ODATA}, {"rdata", PGM_RDATA}, {"nak", PGM_NAK},
		{"nnak", PGM_NNAK}, {"ncf", PGM_NCF}, {"polr", PGM_POLR}};
	static const uint8_t gsi[PGM_GSI_LEN] = {1, 2, 3, 4, 5, 6};
	char *words[16], *save = NULL, *out_if, err[256];
	int nwords = 0;
	unsigned type = ~0u; /* PGM_SPM is 0 */
	uint32_t sqn = 1, trail = 0, lead = 0, list[PGM_MAX_NAK_LIST];
	bool have_lead = false;
	struct pgm_nla path, source, group, redirect;
	struct pgm_build_options o = {0};
	struct pgm_header_params h = {.sport = 1234, .dport = 7500};
	struct pgm_ip_params ip = {.ttl = 16};
	uint8_t tpdu[2048], datagram[2200];
	size_t len = 0;

	for (char *w = strtok_r(args, " ", &save); w != NULL && nwords < 16;
		w = strtok_r(NULL, " ", &save))
		words[nwords++] = w;
	if (nwords < 4)
		goto usage;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(words[1], types[i].name) == 0)
			type = types[i].type;
	if (type == ~0u || !parse_addr(words[2], &ip.src) || !parse_addr(words[3], &ip.dst))
		goto usage;
	memcpy(h.gsi, gsi, sizeof(gsi));
	path = ip.src;
	/* NAKs go to the router, so their NLAs cannot default to the IP addresses */
	source = type == PGM_NCF ? ip.src : ip.dst;
	group = ip.dst;
	if (ip.dst.addr[0] < 224 || ip.dst.addr[0] > 239)
		pgm_nla_parse(&group, "239.192.0.1");
	for (int i = 4; i < nwords; i++) {
		char *v = strchr(words[i], '=');
		bool ok;

		if (v == NULL)
			goto usage;
		*v++ = '\0';
		if (strcmp(words[i], "sqn") == 0)
			ok = parse_u32(v, &sqn);
		else if (strcmp(words[i], "trail") == 0)
			ok = parse_u32(v, &trail);
		else if (strcmp(words[i], "lead") == 0)
			ok = have_lead = parse_u32(v, &lead);
		else if (strcmp(words[i], "path") == 0)
			ok = parse_addr(v, &path);
		else if (strcmp(words[i], "sport") == 0) {
			uint32_t port;

			ok = parse_u32(v, &port) && port <= 65535;
			h.sport = (uint16_t)port;
		} else if (strcmp(words[i], "source") == 0)
			ok = parse_addr(v, &source);
		else if (strcmp(words[i], "group") == 0)
			ok = parse_addr(v, &group);
		else if (strcmp(words[i], "redirect") == 0) {
			ok = parse_addr(v, &redirect);
			o.redirect = &redirect;
		} else if (strcmp(words[i], "parity") == 0) {
			ok = true;
			o.extra_header_flags |= PGM_OPT_PARITY;
		} else if (strcmp(words[i], "list") == 0) {
			ok = true;
			o.nak_list = list;
			for (char *l = strtok_r(v, ",", &save); ok && l != NULL;
				l = strtok_r(NULL, ",", &save))
				ok = o.nak_list_count < PGM_MAX_NAK_LIST &&
				     parse_u32(l, &list[o.nak_list_count++]);
		} else
			ok = false;
		if (!ok)
			goto usage;
	}
	if (pgm_type_is_upstream(type)) {
		h.dport = h.sport; /* the source's port, to which NAKs go */
		h.sport = 7500;
	}
	switch (type) {
	case PGM_SPM:
		ip.router_alert = true;
		len = pgm_build_spm(
			tpdu, sizeof(tpdu), &h, sqn, trail, have_lead ? lead : sqn, &path, NULL);
		break;
	case PGM_POLR:
		/* a redirecting POLR goes down the tree like data: the source's address, RA */
		ip.router_alert = true;
		len = pgm_build_polr(tpdu, sizeof(tpdu), &h, sqn, 0, &o);
		break;
	case PGM_ODATA:
	case PGM_RDATA:
		ip.router_alert = type == PGM_RDATA;
		len = pgm_build_data(tpdu, sizeof(tpdu), type, &h, sqn, trail, "payload", 7, NULL);
		break;
	default:
		ip.router_alert = type == PGM_NCF;
		len = pgm_build_nak(tpdu, sizeof(tpdu), type, &h, sqn, &source, &group,
			o.nak_list_count ? &o : NULL);
		break;
	}
	if (len == 0 || (len = pgm_build_ip(datagram, sizeof(datagram), &ip, tpdu, len)) == 0) {
		printf("driver: pgm packet: cannot build it\n");
		exit(2);
	}
	if ((out_if = strchr(words[0], '>')) != NULL)
		*out_if++ = '\0';
	if (offline == NULL) {
		printf("driver: pgm packet: no pgm start\n");
		exit(2);
	}
	if (offline_packet(offline, datagram, len, words[0], out_if, err, sizeof(err)) < 0) {
		printf("driver: pgm packet: %s\n", err);
		exit(2);
	}
	return;
usage:
	printf("driver: pgm packet IN[>OUT] TYPE SRC DST "
	       "[sqn|trail|lead|path|source|group|list|sport=V]\n");
	exit(2);
}

static int driver_ifindex(const char *name)
{
	bool up, running;

	return assist_if_lookup(offline_assist(offline), name, &up, &running);
}

static void pgm_mroute(char *args)
{
	struct mfc_route r = {0};
	char *words[2 + 1 + MFC_MAX_OIFS], *save = NULL, *ttl;
	int nwords = 0;

	for (char *w = strtok_r(args, " ", &save);
		w != NULL && nwords < (int)(sizeof(words) / sizeof(words[0]));
		w = strtok_r(NULL, " ", &save))
		words[nwords++] = w;
	if (offline == NULL || nwords < 3 || !pgm_nla_parse(&r.grp, words[1]) ||
		(r.iif = driver_ifindex(words[2])) == 0)
		goto usage;
	if (strcmp(words[0], "*") == 0)
		r.src.afi = r.grp.afi; /* (*,G): the family's zero address */
	else if (!pgm_nla_parse(&r.src, words[0]))
		goto usage;
	for (int i = 3; i < nwords; i++) {
		if ((ttl = strchr(words[i], ':')) != NULL)
			*ttl++ = '\0';
		r.ttl[r.noifs] = ttl != NULL ? (uint8_t)atoi(ttl) : 0;
		if ((r.oif[r.noifs++] = driver_ifindex(words[i])) == 0)
			goto usage;
	}
	if (offline_route_add(offline, &r) == 0)
		return;
usage:
	printf("driver: pgm mroute SRC|* GROUP IIF OIF[:TTL] ... (after pgm start)\n");
	exit(2);
}

static void pgm_directive(char *args)
{
	char err[256];
	uint32_t ms;

	if (strncmp(args, "start ", 6) == 0) {
		const char *specs[16];
		size_t n = 0;
		char *save = NULL;

		for (char *w = strtok_r(args + 6, " ", &save); w != NULL && n < 16;
			w = strtok_r(NULL, " ", &save))
			specs[n++] = w;
		if (offline != NULL ||
			(offline = offline_new(specs, n, false, err, sizeof(err))) == NULL ||
			pgm_vty_attach(offline_assist(offline), err, sizeof(err)) < 0) {
			printf("driver: pgm start: %s\n", offline != NULL ? err : "twice");
			exit(2);
		}
	} else if (strncmp(args, "packet ", 7) == 0) {
		pgm_packet(args + 7);
	} else if (strncmp(args, "mroute ", 7) == 0) {
		pgm_mroute(args + 7);
	} else if (sscanf(args, "advance %u", &ms) == 1 && offline != NULL) {
		offline_advance(offline, (uint64_t)ms * 1000u);
	} else {
		printf("driver: unknown pgm directive \"%s\"\n", args);
		exit(2);
	}
}

/* ---- the terminal emulation ---- */

static void print_prompt_line(const char *buf, const char *suffix)
{
	char prompt[128];

	cmd_prompt(&session, prompt, sizeof(prompt));
	printf("%s%s%s\n", prompt, buf, suffix);
}

struct completions {
	char words[64][64];
	int n;
};

static void add_completion(void *ctx, const char *word)
{
	struct completions *c = ctx;

	if (c->n < 64)
		snprintf(c->words[c->n++], sizeof(c->words[0]), "%s", word);
}

static void complete(char *buf, size_t cap)
{
	struct completions c = {0};
	size_t len = strlen(buf), start = len, common;

	cmd_complete(&session, buf, add_completion, &c);
	while (start > 0 && buf[start - 1] != ' ' && buf[start - 1] != '\t')
		start--;
	if (c.n == 0)
		return;
	common = strlen(c.words[0]);
	for (int i = 1; i < c.n; i++) {
		size_t k = 0;

		while (k < common && c.words[i][k] == c.words[0][k])
			k++;
		common = k;
	}
	if (common >= len - start && start + common + 2 < cap) {
		memcpy(buf + start, c.words[0], common);
		buf[start + common] = '\0';
		if (c.n == 1)
			strcat(buf, " ");
	}
	if (c.n > 1) {
		/* readline lists the choices on a second TAB */
		print_prompt_line(buf, "");
		for (int i = 0; i < c.n; i++)
			printf("%s%s", i ? "  " : "", c.words[i]);
		printf("\n");
	}
}

static void report(void *ctx, const char *message)
{
	(void)ctx;
	printf("%s\n", message);
}

static void run_to_end(const char *line)
{
	int rc = cmd_execute(&session, line);

	while (rc == CMD_MORE)
		rc = cmd_continue(&session);
	filter_done();
	if (rc == CMD_CLOSE) {
		printf("[session closed]\n");
		cmd_session_release(&session);
		session_new();
	}
}

static void roundtrip(void)
{
	struct cfg_buf a = {0}, b = {0};
	char tmp[] = "/tmp/cli-driver-rtXXXXXX", empty[] = "/tmp/cli-driver-emptyXXXXXX";
	int fd = mkstemp(tmp), efd = mkstemp(empty);

	if (fd < 0 || efd < 0) {
		printf("roundtrip: mkstemp: %s\n", strerror(errno));
		exit(2);
	}
	close(fd);
	close(efd);
	cfg_write(cfg_running(), &a);
	if (cfg_write_file(tmp, a.data, a.len) < 0) {
		printf("roundtrip: write: %s\n", strerror(errno));
		exit(2);
	}
	cfg_reload_file(empty, report, NULL);
	cfg_write(cfg_running(), &b);
	printf("roundtrip: after loading an empty file: %s", b.data);
	cfg_buf_free(&b);
	printf("roundtrip: reload errors: %d\n", cfg_reload_file(tmp, report, NULL));
	cfg_write(cfg_running(), &b);
	printf("roundtrip: %s\n",
		a.len == b.len && memcmp(a.data, b.data, a.len) == 0 ? "identical" : "DIFFERENT");
	if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
		printf("--- before\n%s--- after\n%s", a.data, b.data);
	unlink(tmp);
	unlink(empty);
	cfg_buf_free(&a);
	cfg_buf_free(&b);
}

static void directive(const char *d)
{
	char arg[512];

	if (sscanf(d, "load %511s", arg) == 1) {
		int n = cfg_merge_file(arg, report, NULL);

		if (n < 0)
			printf("load %s: %s\n", arg, strerror(errno));
		else
			printf("load: %d bad line%s\n", n, n == 1 ? "" : "s");
	} else if (strcmp(d, "roundtrip") == 0) {
		roundtrip();
	} else if (sscanf(d, "readonly %511s", arg) == 1) {
		session.read_only = strcmp(arg, "on") == 0;
	} else if (sscanf(d, "startup %511s", arg) == 1) {
		cfg_set_startup_path(arg);
	} else if (sscanf(d, "cat %511s", arg) == 1) {
		FILE *f = fopen(arg, "r");
		int c;

		if (f == NULL) {
			printf("cat %s: %s\n", arg, strerror(errno));
			return;
		}
		while ((c = fgetc(f)) != EOF)
			putchar(c);
		fclose(f);
	} else if (strcmp(d, "reset") == 0) {
		cmd_session_release(&session);
		session_new();
	} else if (strncmp(d, "pgm ", 4) == 0) {
		snprintf(arg, sizeof(arg), "%s", d + 4);
		pgm_directive(arg);
	} else {
		printf("driver: unknown directive \"%s\"\n", d);
		exit(2);
	}
}

/* ---- random lines through every entry point (run under ASan) ---- */

static void null_write(struct cmd_session *s, const char *data, size_t len)
{
	(void)s;
	(void)data;
	(void)len;
}

/* the fuzz session's filters: compiled and dropped, as a client would */
static int null_filter(struct cmd_session *s, enum cmd_filter_kind kind, const char *pattern)
{
	char err[256];
	struct out_filter *f = out_filter_new(kind, pattern, err, sizeof(err));

	int rc = f != NULL ? CMD_OK : CMD_ERR_FAILED;

	(void)s;
	out_filter_free(f);
	return rc;
}

static void null_complete(void *ctx, const char *word)
{
	(*(unsigned *)ctx)++;
	(void)word;
}

static int fuzz(unsigned rounds, unsigned seed)
{
	static const char *const vocabulary[] = {"show", "sh", "s", "ip", "pgm", "router", "r",
		"traffic", "tr", "json", "sessions", "big", "7", "|", "include", "exclude", "begin",
		"(", "[a-z]+", "do", "no", "interface", "int", "eth0", "eth0/1", "1.2.3.4",
		"256.0.0.1", "-5", "-", "99999999999999999999999", "<1-10>", "[", "]",
		"description", "hostname", "h", "configure", "terminal", "t", "exit", "end",
		"enable", "disable", "debug", "undebug", "all", "nak-rpt-ivl", "nak-r", "10",
		"60000", "clear", "copy", "write", "memory", "running-config", "startup-config",
		"test-token", "history", "\t", "a|b", "", " ", "\x01", "?", "max-sessions", "13",
		"test", "assist", "nak-rdata-ivl", "state", "verbose", "dataplane", "rtx-state",
		"capture", "max-size", "undebug", "queue", "backend", "nftables", "auto",
		"udp-encapsulation", "ports", "ncf-ttl", "session-lifetime", "max-rexmit-states",
		"nak-repeat-interval", "nak-repeat-rate", "nak-rdata-interval",
		"nak-eliminate-interval", "ncf-interval", "nak-backoff-interval", "239.192.0.1",
		"0", "65535", "4294967296", "eth1"};
	const size_t nvocab = sizeof(vocabulary) / sizeof(vocabulary[0]);
	static const char *const prefixes[] = {"show ip pgm router ", "show ip pgm router state ",
		"show ip pgm router traffic ", "show ip pgm router interface ",
		"show ip pgm router dataplane ", "clear ip pgm router traffic ",
		"clear ip pgm router rtx-state ", "debug ip pgm router ",
		"debug ip pgm router capture ", "no debug ip pgm router ", "undebug ",
		"ip pgm router ", "no ip pgm router ", "ip pgm router udp-encapsulation ports ",
		"interface ", "show test ", "test ", "no test ", "do show ip pgm router "};
	const size_t nprefixes = sizeof(prefixes) / sizeof(prefixes[0]);
	struct cmd_session s;
	unsigned completions = 0, statuses[CMD_STATUS_COUNT] = {0};

	char spm[] = "eth0>eth1 spm 198.18.1.10 239.192.0.1 sqn=1 lead=20";
	char nak[] = "eth1 nak 198.18.2.20 198.18.2.1 sqn=7 source=198.18.1.10 list=8,9";
	const char *ifs[] = {"eth0=198.18.1.1/24", "eth1=198.18.2.1/24"};
	char err[256];

	/* the PGM show and clear commands on live state: a session with repair state */
	cmd_session_init(&s, CMD_NODE_CONFIG, null_write, NULL);
	cmd_execute(&s, "interface eth0");
	cmd_execute(&s, "ip pgm router");
	cmd_execute(&s, "interface eth1");
	cmd_execute(&s, "ip pgm router");
	cmd_session_release(&s);
	if ((offline = offline_new(ifs, 2, true, err, sizeof(err))) == NULL ||
		pgm_vty_attach(offline_assist(offline), err, sizeof(err)) < 0) {
		printf("fuzz: %s\n", err);
		return 1;
	}
	pgm_packet(spm);
	pgm_packet(nak);
	srandom(seed);
	cmd_session_init(&s, CMD_NODE_EXEC, null_write, NULL);
	s.filter = null_filter;
	for (unsigned r = 0; r < rounds; r++) {
		char line[CMD_LINE_MAX + 64];
		size_t len = 0;
		unsigned words = (unsigned)(random() % 9);
		int rc;

		/* half the lines start like a real command: handlers see random arguments */
		if (random() % 2 == 0) {
			const char *p = prefixes[random() % nprefixes];

			len = strlen(p);
			memcpy(line, p, len);
			words = (unsigned)(random() % 4);
		}
		for (unsigned w = 0; w < words; w++) {
			const char *v = vocabulary[random() % nvocab];
			size_t vl = strlen(v);

			if (len + vl + 2 >= sizeof(line))
				break;
			memcpy(line + len, v, vl);
			len += vl;
			if (random() % 8 != 0)
				line[len++] = ' ';
		}
		if (random() % 50 == 0) { /* now and then an overlong line */
			memset(line + len, 'x', sizeof(line) - len - 1);
			len = sizeof(line) - 1;
		}
		line[len] = '\0';
		s.node = (int)(random() % CMD_NODE_FILTER);
		s.read_only = random() % 4 == 0;
		snprintf(s.ifname, sizeof(s.ifname), "eth%ld", random() % 3);
		switch (random() % 3) {
		case 0:
			rc = cmd_execute(&s, line);
			/* no endless output: a few pieces of a continuation, then abandoned */
			for (int i = 0; rc == CMD_MORE && i < 5; i++)
				rc = cmd_continue(&s);
			if (rc == CMD_MORE) {
				cmd_abort(&s);
				rc = CMD_OK;
			}
			break;
		case 1:
			rc = cmd_describe(&s, line);
			break;
		default:
			rc = cmd_complete(&s, line, null_complete, &completions);
			break;
		}
		if (rc >= 0 && rc < CMD_STATUS_COUNT)
			statuses[rc]++;
	}
	cmd_session_release(&s);
	printf("fuzz: %u lines, %u completions;", rounds, completions);
	for (int i = 0; i < CMD_STATUS_COUNT; i++)
		if (statuses[i] != 0)
			printf(" %s %u", cmd_status_name(i), statuses[i]);
	printf("\n");
	return 0;
}

static void finish(void)
{
	pgm_vty_attach(NULL, NULL, 0);
	offline_free(offline);
	cfg_free();
	cmd_engine_free();
	settings_free();
}

/* Log lines stamped with one fixed time, in UTC, so that `show logging` has a transcript. */
static void fixed_clock(struct timespec *ts)
{
	ts->tv_sec = 1796177700; /* 2026-12-02 02:15:00 UTC */
	ts->tv_nsec = 250000000;
}

int main(int argc, char **argv)
{
	FILE *in;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int fd;

	if (argc != 2 && !(argc == 4 && strcmp(argv[1], "--fuzz") == 0)) {
		fprintf(stderr, "usage: cli-driver SCRIPT.in | --fuzz ROUNDS SEED\n");
		return 2;
	}
	if (argc == 2 && (in = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "cli-driver: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	log_init("cli-driver", true, false);
	setenv("TZ", "UTC", 1);
	tzset();
	log_set_clock(fixed_clock);
	cmd_engine_init();
	base_vty_init("pgmrouter");
	daemon_vty_init(0);
	pgm_vty_init();
	settings_install(&test_module);
	cmd_install(test_cmds, CMD_COUNT(test_cmds));
	/* a name of its own, configured as the transcripts were recorded with */
	cmd_set_system_hostname("router");
	{
		struct cfg *c = cfg_dup(cfg_running());
		char err[256];

		if (c == NULL || cfg_set_hostname(c, "router", err, sizeof(err)) < 0 ||
			cfg_commit(c, err, sizeof(err)) < 0)
			return 2;
	}
	/* a private startup file, so `write memory` in a script never touches the system's */
	if ((fd = mkstemp(startup_tmp)) < 0)
		return 2;
	close(fd);
	unlink(startup_tmp);
	cfg_set_startup_path(startup_tmp);
	if (argc == 4) {
		int rc = fuzz((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));

		unlink(startup_tmp);
		finish();
		return rc;
	}
	session_new();

	while ((n = getline(&line, &cap, in)) >= 0) {
		char buf[CMD_LINE_MAX + 64];
		size_t len = 0;

		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, "##", 2) == 0) {
			printf("%s\n", line);
			continue;
		}
		if (strncmp(line, "%% ", 3) == 0) {
			fflush(stdout);
			directive(line + 3);
			continue;
		}
		buf[0] = '\0';
		for (ssize_t i = 0; i < n; i++) {
			char c = line[i];

			if (c == '?') {
				print_prompt_line(buf, "?");
				cmd_describe(&session, buf);
			} else if (c == '\t') {
				complete(buf, sizeof(buf));
				len = strlen(buf);
			} else if (len + 1 < sizeof(buf)) {
				buf[len++] = c;
				buf[len] = '\0';
			}
			len = strlen(buf);
		}
		if (n > 0 && line[n - 1] == '?')
			continue; /* help only: the line is abandoned, like Ctrl-U after `?` */
		print_prompt_line(buf, "");
		run_to_end(buf);
	}
	fflush(stdout);
	free(line);
	fclose(in);
	unlink(startup_tmp);
	cmd_session_release(&session);
	finish();
	return 0;
}

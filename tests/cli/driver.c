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
 * Lines starting with "##" are comments, copied to the transcript.
 *
 * With --fuzz ROUNDS SEED, random lines go through execute, `?` and TAB in random modes instead
 * (to be run with ASan).
 *
 * The test-only commands below stand in for the PGM commands to exercise every token type.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/config.h"
#include "cli/generic_vty.h"
#include "router/log.h"

static struct cmd_session session;
static char startup_tmp[] = "/tmp/cli-driver-startupXXXXXX";

static void out_write(struct cmd_session *s, const char *data, size_t len)
{
	(void)s;
	fwrite(data, 1, len, stdout);
}

/* ---- test-only PGM-like commands ---- */

struct test_if {
	char name[CMD_IFNAME_MAX];
	bool assist;
	long long nak_rpt_ivl; /* 0 = default */
	long long nak_rdata_ivl;
};
static struct test_if test_ifs[64];
static size_t ntest_ifs;
static long long max_sessions; /* 0 = unlimited (default) */

static struct test_if *test_if_get(const char *name, bool create)
{
	for (size_t i = 0; i < ntest_ifs; i++)
		if (strcmp(test_ifs[i].name, name) == 0)
			return &test_ifs[i];
	if (!create || ntest_ifs == sizeof(test_ifs) / sizeof(test_ifs[0]))
		return NULL;
	memset(&test_ifs[ntest_ifs], 0, sizeof(test_ifs[0]));
	snprintf(test_ifs[ntest_ifs].name, sizeof(test_ifs[0].name), "%s", name);
	return &test_ifs[ntest_ifs++];
}

static void test_if_deleted(const char *name)
{
	struct test_if *t = test_if_get(name, false);

	if (t != NULL)
		*t = test_ifs[--ntest_ifs];
}

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
	b->count = cmd_arg_int(a, "<1-100000>", 0);
	cmd_set_continuation(s, big_next, b, free);
	return CMD_MORE;
}

static int test_if_assist(struct cmd_session *s, const struct cmd_args *a)
{
	struct test_if *t = test_if_get(s->ifname, true);

	if (t == NULL)
		return CMD_ERR_FAILED;
	t->assist = !a->negate;
	return CMD_OK;
}

static int test_if_timer(struct cmd_session *s, const struct cmd_args *a)
{
	struct test_if *t = test_if_get(s->ifname, true);
	long long v = a->negate ? 0 : cmd_arg_int(a, "msec", 0);

	if (t == NULL)
		return CMD_ERR_FAILED;
	if (cmd_arg_has(a, "nak-rpt-ivl"))
		t->nak_rpt_ivl = v;
	else
		t->nak_rdata_ivl = v;
	return CMD_OK;
}

static int test_max_sessions(struct cmd_session *s, const struct cmd_args *a)
{
	long long v = a->negate ? 0 : cmd_arg_int(a, "<0-1000000>", 0);

	if (v == 13) {
		cmd_out(s, "%% Unlucky limit %lld refused\n", v);
		return CMD_ERR_FAILED;
	}
	max_sessions = v;
	return CMD_OK;
}

static void test_write_global(struct cfg_buf *b)
{
	if (max_sessions != 0)
		cfg_printf(b, "ip pgm router max-sessions %lld\n", max_sessions);
}

static void test_write_if(struct cfg_buf *b, const char *ifname)
{
	struct test_if *t = test_if_get(ifname, false);

	if (t == NULL)
		return;
	if (t->assist)
		cfg_printf(b, " ip pgm router\n");
	if (t->nak_rpt_ivl != 0)
		cfg_printf(b, " ip pgm router nak-rpt-ivl %lld\n", t->nak_rpt_ivl);
	if (t->nak_rdata_ivl != 0)
		cfg_printf(b, " ip pgm router nak-rdata-ivl %lld\n", t->nak_rdata_ivl);
}

static void test_reload_begin(void)
{
	max_sessions = 0;
	ntest_ifs = 0;
}

#define PGM_ROUTER_HELP IP_STR PGM_STR ROUTER_ASSIST_STR

static const struct cmd_def test_cmds[] = {
	{.spec = "show ip pgm router traffic [IFNAME] [json]",
		.help = SHOW_STR PGM_ROUTER_HELP "Traffic counters\n" IFNAME_STR "JSON output\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_show_traffic},
	{.spec = "show ip pgm router sessions [A.B.C.D$group]",
		.help = SHOW_STR PGM_ROUTER_HELP "Source path state\nMulticast group\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_show_sessions},
	{.spec = "show ip pgm router big <1-100000>",
		.help = SHOW_STR PGM_ROUTER_HELP "Many lines\nHow many\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_show_big},
	{.spec = "clear ip pgm router (traffic|sessions) [IFNAME]",
		.help = "Reset functions\n" PGM_ROUTER_HELP
			"Traffic counters\nSource path state\n" IFNAME_STR,
		.modes = CMD_MODES_SHOW, /* in exec mode too, to show a read-only session denied */
		.priv = CMD_PRIV_ADMIN,
		.handler = test_clear},
	{.spec = "test-token (A.B.C.D|<-5-100>|IFNAME|WORD)",
		.help = "Which token type wins\nAn address\nA number\nAn interface\nA word\n",
		.modes = CMD_MODES_SHOW,
		.handler = test_token,
		.flags = CMD_F_HIDDEN},
	{.spec = "ip pgm router",
		.help = PGM_ROUTER_HELP,
		.modes = CMD_MODE(CMD_NODE_CONFIG_IF),
		.priv = CMD_PRIV_ADMIN,
		.handler = test_if_assist,
		.no_spec = CMD_NO_SAME},
	{.spec = "ip pgm router (nak-rpt-ivl|nak-rdata-ivl) <10-60000>$msec",
		.help = PGM_ROUTER_HELP
		"NAK repeat interval\nWait for RDATA interval\nMilliseconds\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG_IF),
		.priv = CMD_PRIV_ADMIN,
		.handler = test_if_timer,
		.no_spec = "ip pgm router (nak-rpt-ivl|nak-rdata-ivl) [<10-60000>$msec]",
		.no_help = PGM_ROUTER_HELP
		"NAK repeat interval\nWait for RDATA interval\nMilliseconds\n"},
	{.spec = "ip pgm router max-sessions <0-1000000>",
		.help = PGM_ROUTER_HELP
		"Limit the number of sessions tracked\nSessions (0: no limit)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = test_max_sessions,
		.no_spec = "ip pgm router max-sessions [<0-1000000>]",
		.no_help = PGM_ROUTER_HELP
		"Limit the number of sessions tracked\nSessions (0: no limit)\n"},
};

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
	if (rc == CMD_CLOSE) {
		printf("[session closed]\n");
		cmd_session_release(&session);
		cmd_session_init(&session, CMD_NODE_EXEC, out_write, NULL);
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
	cfg_running(&a);
	if (cfg_write_file(tmp, a.data, a.len) < 0) {
		printf("roundtrip: write: %s\n", strerror(errno));
		exit(2);
	}
	cfg_reload_file(empty, report, NULL);
	cfg_running(&b);
	printf("roundtrip: after loading an empty file: %s", b.data);
	cfg_buf_free(&b);
	printf("roundtrip: reload errors: %d\n", cfg_reload_file(tmp, report, NULL));
	cfg_running(&b);
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
		int n = cfg_load_file(arg, report, NULL);

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
		cmd_session_init(&session, CMD_NODE_EXEC, out_write, NULL);
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

static void null_complete(void *ctx, const char *word)
{
	(*(unsigned *)ctx)++;
	(void)word;
}

static int fuzz(unsigned rounds, unsigned seed)
{
	static const char *const vocabulary[] = {"show", "sh", "s", "ip", "pgm", "router", "r",
		"traffic", "tr", "json", "sessions", "big", "7", "|", "include", "exclude", "begin",
		"(", "[a-z]+", "do", "no", "interface", "int", "eth0", "eth0/1", "1.2.3.4", "256.0.0.1",
		"-5", "-", "99999999999999999999999", "<1-10>", "[", "]", "description", "hostname",
		"h", "configure", "terminal", "t", "exit", "end", "enable", "disable", "debug", "undebug",
		"all", "nak-rpt-ivl", "nak-r", "10", "60000", "clear", "copy", "write", "memory",
		"running-config", "startup-config", "test-token", "history", "\t", "a|b", "", " ",
		"\x01", "?", "max-sessions", "13"};
	const size_t nvocab = sizeof(vocabulary) / sizeof(vocabulary[0]);
	struct cmd_session s;
	unsigned completions = 0, statuses[CMD_STATUS_COUNT] = {0};

	srandom(seed);
	cmd_session_init(&s, CMD_NODE_EXEC, null_write, NULL);
	for (unsigned r = 0; r < rounds; r++) {
		char line[CMD_LINE_MAX + 64];
		size_t len = 0;
		unsigned words = (unsigned)(random() % 9);
		int rc;

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
	cmd_engine_init();
	generic_vty_init();
	cmd_install(test_cmds, CMD_COUNT(test_cmds));
	cfg_register_writer(CFG_ORDER_GLOBAL, test_write_global);
	cfg_register_interface_writer(10, test_write_if);
	cfg_register_interface_delete_hook(test_if_deleted);
	cfg_register_reload_hooks(test_reload_begin, NULL);
	cmd_set_hostname("router");
	/* a private startup file, so `write memory` in a script never touches the system's */
	if ((fd = mkstemp(startup_tmp)) < 0)
		return 2;
	close(fd);
	unlink(startup_tmp);
	cfg_set_startup_path(startup_tmp);
	if (argc == 4) {
		int rc = fuzz((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));

		unlink(startup_tmp);
		cmd_engine_free();
		cfg_free();
		generic_vty_free();
		return rc;
	}
	cmd_session_init(&session, CMD_NODE_EXEC, out_write, NULL);

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
	cmd_engine_free();
	cfg_free();
	generic_vty_free();
	return 0;
}

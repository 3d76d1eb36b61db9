/*
 * libFuzzer target for the CLI line parser over the daemon's real command tree: the first byte
 * picks the session's mode (its value mod 4: "0" exec, "1" enable, "2" config, "3"
 * config-if), whether it is read-only (bit 7) and its interface (bit 4); then each line is typed
 * as in the golden transcripts: a '?' asks for help at that point, a TAB completes the word
 * (a single candidate is taken), and a line not ending in '?' is executed (long output: a few
 * pieces, then abandoned). Shows and clears run on live state (router assist offline, a
 * session with repair state). Statuses stay in range, the mode stays a real one, the prompt
 * fits. The configuration returns to the start after each input.
 *
 * Seed mode (tests/fuzz/run.sh): with PGM_FUZZ_SEED_DIR set, writes the seeds below and exits.
 */
#include "tests/fuzz/fuzz_router.h"

struct completion {
	unsigned n;
	char word[256];
};

static void on_candidate(void *ctx, const char *word)
{
	struct completion *c = ctx;

	CHECK(word != NULL);
	if (c->n++ == 0)
		snprintf(c->word, sizeof(c->word), "%s", word);
}

/* TAB at the end of buf: a single candidate replaces the word being typed. */
static void complete(struct cmd_session *s, char *buf, size_t cap)
{
	struct completion c = {0};
	size_t len = strlen(buf), start = len;
	int rc = cmd_complete(s, buf, on_candidate, &c);

	CHECK(rc >= 0 && rc < CMD_STATUS_COUNT);
	if (c.n != 1)
		return;
	while (start > 0 && buf[start - 1] != ' ')
		start--;
	snprintf(buf + start, cap - start, "%s ", c.word);
}

static void run_line(struct cmd_session *s, const char *text)
{
	char buf[CMD_LINE_MAX + 64];
	size_t len = 0;
	char prompt[512];
	int rc;

	buf[0] = '\0';
	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '?') {
			rc = cmd_describe(s, buf);
			CHECK(rc >= 0 && rc < CMD_STATUS_COUNT);
		} else if (*p == '\t') {
			complete(s, buf, sizeof(buf));
		} else if (len + 1 < sizeof(buf)) {
			buf[len++] = *p;
			buf[len] = '\0';
		}
		len = strlen(buf);
	}
	if (len > 0 && text[strlen(text) - 1] == '?')
		return;
	rc = cmd_execute(s, buf);
	for (int i = 0; rc == CMD_MORE && i < 5; i++)
		rc = cmd_continue(s);
	if (rc == CMD_MORE) {
		cmd_abort(s);
		rc = CMD_OK;
	}
	CHECK(rc >= 0 && rc < CMD_STATUS_COUNT);
	CHECK(s->node >= 0 && cmd_node_get(s->node) != NULL);
	CHECK(cmd_prompt(s, prompt, sizeof(prompt)) < sizeof(prompt));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cmd_session s;
	char line[CMD_LINE_MAX + 64];

	if (size == 0)
		return 0;
	cmd_session_init(&s, data[0] % CMD_NODE_FILTER, fuzz_null_write, NULL);
	s.read_only = (data[0] & 0x80) != 0;
	snprintf(s.ifname, sizeof(s.ifname), "eth%d", (data[0] >> 4) & 1);
	data++;
	size--;
	for (unsigned n = 0; size > 0 && n < 64; n++) {
		size_t used = fuzz_line(data, size, line, sizeof(line));

		run_line(&s, line);
		data += used;
		size -= used;
	}
	cmd_session_release(&s);
	fuzz_router_reset();
	return 0;
}

static const struct fuzz_seed seeds[] = {
	{.name = "show", .text = "1show ip pgm router verbose\nsh ip pgm ro state\nshow ip pgm router "
		 "traffic eth0 json\nshow running-config | include pgm\n"},
	{.name = "help", .text = "0sh ?\nshow ip ?\nshow ip pgm router ?\nsh\tip\tpgm\tro\tst\t?\n"},
	{.name = "config", .text = "2interface eth1\n ip pgm router nak-repeat-interval 500\n ip pgm router "
		   "?\nexit\nip pgm router max-rexmit-states 10\nno ip pgm router\nend\nwrite "
		   "memory\ncopy startup-config running-config\n"},
	{.name = "clear", .text = "1clear ip pgm router traffic\nclear ip pgm router rtx-state 239.192.0.1\n"
		  "clear ip pgm router dlr\ndebug ip pgm router events\nundebug all\n"},
	{.name = "interface", .text = "3ip pgm router ncf-interval 100\ndefault ip pgm router ncf-interval\n"
		      "description lan\nno interface eth0\ndo show ip pgm router interface\n"},
	{.name = "readonly", .text = "\261configure terminal\nshow ip pgm router dataplane\nterminal length 0\n"},
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_seed_mode(seeds, sizeof(seeds) / sizeof(seeds[0]));
	fuzz_router_init(true);
	return 0;
}

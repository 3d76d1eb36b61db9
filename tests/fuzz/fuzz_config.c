/*
 * libFuzzer target for the configuration loader: the input is two files separated by a line
 * "%%". The first is checked as `pgmrouterd -n` does (loaded into a fresh configuration, not
 * applied), then loaded as the startup configuration, then the second replaces it as a reload
 * (SIGHUP) does; router assist runs offline, so each commit applies its difference. After each
 * load the running configuration, written out and loaded again, writes out the same (load ->
 * show -> load is a fixed point), and a file that loads without errors once does so again.
 *
 * Seed mode (tests/fuzz/run.sh): with PGM_FUZZ_SEED_DIR set, writes the seeds below and exits.
 */
#include "tests/fuzz/fuzz_router.h"

static unsigned reports;

static void count_report(void *ctx, const char *message)
{
	(void)ctx;
	CHECK(message != NULL && strchr(message, '\n') == NULL);
	reports++;
}

static void write_file(const char *path, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	CHECK(fwrite(data, 1, len, f) == len);
	fclose(f);
}

/* The running configuration as text, sanitized as the input was (no '/' ever got in). */
static void running_text(struct cfg_buf *b)
{
	memset(b, 0, sizeof(*b));
	cfg_write(cfg_running(), b);
	CHECK(b->data != NULL);
}

static void roundtrip(void)
{
	struct cfg_buf a, b;
	char path[4096];

	running_text(&a);
	fuzz_path(path, sizeof(path), "roundtrip.conf");
	write_file(path, (const uint8_t *)a.data, a.len);
	reports = 0;
	CHECK(cfg_reload_file(path, count_report, NULL) == 0);
	CHECK(reports == 0);
	running_text(&b);
	if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
		fprintf(stderr, "--- written\n%s--- loaded again\n%s", a.data, b.data);
		CHECK(!"the running configuration loads back to itself");
	}
	cfg_buf_free(&a);
	cfg_buf_free(&b);
}

/* Lines as fuzz_line() gives them, rejoined: the file the loader reads. */
static size_t file_text(const uint8_t *data, size_t size, uint8_t *out, size_t cap, size_t *used)
{
	char line[CMD_LINE_MAX + 64];
	size_t n = 0, pos = 0;

	while (pos < size) {
		size_t step = fuzz_line(data + pos, size - pos, line, sizeof(line));
		size_t len = strlen(line);

		if (strcmp(line, "%%") == 0) {
			pos += step;
			break;
		}
		if (n + len + 1 <= cap) {
			memcpy(out + n, line, len);
			n += len;
			out[n++] = '\n';
		}
		pos += step;
	}
	*used = pos;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t text[2][65536];
	char path[2][4096];
	size_t len[2], used;
	struct cfg *check;
	int errors;

	len[0] = file_text(data, size, text[0], sizeof(text[0]), &used);
	len[1] = file_text(data + used, size - used, text[1], sizeof(text[1]), &used);
	fuzz_path(path[0], sizeof(path[0]), "a.conf");
	fuzz_path(path[1], sizeof(path[1]), "b.conf");
	write_file(path[0], text[0], len[0]);
	write_file(path[1], text[1], len[1]);

	/* pgmrouterd -n: nothing applied */
	check = cfg_new();
	CHECK(check != NULL);
	reports = 0;
	errors = cfg_load_file(path[0], check, count_report, NULL);
	CHECK(errors >= 0 && (unsigned)errors <= reports);
	cfg_destroy(check);

	for (int i = 0; i < 2; i++) {
		reports = 0;
		errors = cfg_reload_file(path[i], count_report, NULL);
		CHECK(errors >= 0);
		if (errors == 0) {
			/* a file without errors loads so again */
			CHECK(cfg_reload_file(path[i], count_report, NULL) == 0);
		}
		roundtrip();
	}
	fuzz_router_reset();
	return 0;
}

static const struct fuzz_seed seeds[] = {
	{.name = "example",
		.text = "hostname r1\n!\nip pgm router max-rexmit-states 1000000\n!\ninterface "
			"eth0\n description towards the sources\n ip pgm router\n!\ninterface eth1\n "
			"ip pgm router\n ip pgm router nak-eliminate-interval 500\n!\n%%\nhostname "
			"r2\ninterface eth1\n ip pgm router\n ip pgm router ncf-interval 10\n"},
	{.name = "settings",
		.text = "ip pgm router queue 114\nip pgm router backend nftables\nip pgm router "
			"udp-encapsulation ports 4000 4001\nip pgm router session-lifetime 60\nip "
			"pgm router dlr-discovery\nno ip pgm router poll-response\ninterface eth0\n "
			"ip pgm router\n ip pgm router nak-backoff-probe 4\n ip pgm router "
			"nak-backoff-minimum 10\n ip pgm router nak-backoff-maximum 200\n no ip pgm "
			"router router-alert\n%%\nno ip pgm router udp-encapsulation\n"},
	{.name = "errors",
		.text = "ip pgm router max-sessions -1\ninterface\n ip pgm router bogus 3\nshow "
			"version\n\tinterface eth9\n  description  two  spaces\n%%\n"},
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_seed_mode(seeds, sizeof(seeds) / sizeof(seeds[0]));
	fuzz_router_init(true);
	return 0;
}

/*
 * What the fuzzers of the daemon's inputs share (fuzz_cli, fuzz_config, fuzz_pcap): the command
 * engine with the daemon's command tree as pgmrouterd installs it, the configuration database,
 * a private startup file, and router assist without a data plane (router/assist/offline.h) on
 * two interfaces, so that shows and clears have live state. Everything the router prints goes
 * to /dev/null. For inclusion by one fuzzer each: everything here is static.
 */
#ifndef PGMROUTER_FUZZ_ROUTER_H
#define PGMROUTER_FUZZ_ROUTER_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/base_vty.h"
#include "cli/command.h"
#include "cli/config.h"
#include "cli/settings.h"
#include "router/assist/offline.h"
#include "router/lib/log.h"
#include "router/vty/daemon_vty.h"
#include "router/vty/pgm_vty.h"
#include "tests/fuzz/fuzz.h"


/* The private directory: in memory where there is a tmpfs, since every input writes files
   there (a file system with a journal made a tenth of fuzz_config's time) */
static char fuzz_dir[] = "/dev/shm/pgm-fuzz-routerXXXXXX";
static char fuzz_startup[sizeof(fuzz_dir) + 16];
static struct offline *fuzz_offline;
static struct cfg *fuzz_base; /* the configuration every input starts from */

static void fuzz_null_write(struct cmd_session *s, const char *data, size_t len)
{
	(void)s;
	(void)data;
	(void)len;
}

/* A path in the private directory, for files the fuzzer writes. */
static void fuzz_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", fuzz_dir, name);
}

/* Input text as lines the engine may run: no '/' (no capture file or other path reaches
 * outside the private directory: they are refused as relative), NUL ends a line. */
static inline size_t fuzz_line(const uint8_t *data, size_t size, char *line, size_t cap)
{
	size_t i, n = 0;

	for (i = 0; i < size && data[i] != '\n' && data[i] != '\0'; i++)
		if (n + 1 < cap)
			line[n++] = data[i] == '/' ? '_' : (char)data[i];
	line[n] = '\0';
	return i < size ? i + 1 : i;
}

/* At exit: the private directory and what is in it. */
static void fuzz_cleanup(void)
{
	DIR *d = opendir(fuzz_dir);
	struct dirent *e;
	char path[4096];

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		fuzz_path(path, sizeof(path), e->d_name);
		unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(fuzz_dir);
}

static void fuzz_router_init(bool with_assist)
{
	freopen("/dev/null", "w", stdout);
	log_init("fuzz", false, false);
	cmd_engine_init();
	base_vty_init("pgmrouter");
	daemon_vty_init(0);
	pgm_vty_init();
	cmd_set_system_hostname("router");
	if (mkdtemp(fuzz_dir) == NULL) {
		snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/pgm-fuzz-routerXXXXXX");
		if (mkdtemp(fuzz_dir) == NULL) {
			perror("mkdtemp");
			exit(1);
		}
	}
	atexit(fuzz_cleanup);
	fuzz_path(fuzz_startup, sizeof(fuzz_startup), "startup.conf");
	cfg_set_startup_path(fuzz_startup);
	if (with_assist) {
		const char *ifs[] = {"eth0=198.18.1.1/24", "eth1=198.18.2.1/24"};
		struct cmd_session s;
		char err[256];

		cmd_session_init(&s, CMD_NODE_CONFIG, fuzz_null_write, NULL);
		cmd_execute(&s, "interface eth0");
		cmd_execute(&s, "ip pgm router");
		cmd_execute(&s, "interface eth1");
		cmd_execute(&s, "ip pgm router");
		cmd_session_release(&s);
		fuzz_offline = offline_new(ifs, 2, true, err, sizeof(err));
		if (fuzz_offline == NULL ||
			pgm_vty_attach(offline_assist(fuzz_offline), err, sizeof(err)) < 0) {
			fprintf(stderr, "fuzz: %s\n", err);
			exit(1);
		}
	}
	fuzz_base = cfg_dup(cfg_running());
	CHECK(fuzz_base != NULL);
}

/* Back to the configuration fuzz_router_init() made, for the next input. */
static inline void fuzz_router_reset(void)
{
	struct cfg *c = cfg_dup(fuzz_base);
	char err[256];

	CHECK(c != NULL);
	CHECK(cfg_commit(c, err, sizeof(err)) == 0);
	unlink(fuzz_startup);
}

/* Seed mode: writes `n` seeds (name, text) into PGM_FUZZ_SEED_DIR and exits; else returns. */
struct fuzz_seed {
	const char *name;
	const char *text;
	size_t len; /* 0: strlen(text) */
};

static void fuzz_seed_mode(const struct fuzz_seed *seeds, size_t n)
{
	const char *dir = getenv("PGM_FUZZ_SEED_DIR");

	if (dir == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		size_t len = seeds[i].len != 0 ? seeds[i].len : strlen(seeds[i].text);
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, seeds[i].name);
		f = fopen(path, "wb");
		if (f == NULL || fwrite(seeds[i].text, 1, len, f) != len) {
			perror(path);
			exit(1);
		}
		fclose(f);
	}
	exit(0);
}

#endif /* PGMROUTER_FUZZ_ROUTER_H */

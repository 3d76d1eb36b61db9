/*
 * pgm-rules: installs or removes the daemon's interception rules (dataplane/rules.h, default
 * configuration: the daemon's table/chain names, queue 0, PGM over IP and UDP) without the
 * daemon, so the baseline consumer of the benchmarks (nfq-acceptall) sees exactly the packets
 * pgmrouterd would.
 *
 *   pgm-rules install [-q QUEUE] [-b auto|nft|iptables] [-P] IFNAME...
 *   pgm-rules remove
 *
 * -P: no policing (the daemon's `no ip pgm router police-...`), for benchmarks that offer one
 * source's NAKs faster than the default limits.
 *
 * The rules stay after install (the namespace's lifetime bounds them). Exit 0 or 1 with the
 * module's one-sentence error on stderr; 64 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/rules.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: pgm-rules install [-q QUEUE] [-b auto|nft|iptables] [-P] IFNAME...\n"
		"       pgm-rules remove\n");
	exit(64);
}

int main(int argc, char **argv)
{
	enum rules_backend backend = RULES_BACKEND_AUTO;
	struct rules_config cfg;
	struct rules *r;
	const char *cmd;
	char err[512];
	int c, rc = 0;

	if (argc < 2)
		usage();
	cmd = argv[1];
	rules_config_default(&cfg);
	optind = 2;
	while ((c = getopt(argc, argv, "q:b:P")) != -1) {
		switch (c) {
		case 'q':
			cfg.queue_num = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			if (!rules_backend_parse(optarg, &backend))
				usage();
			break;
		case 'P':
			memset(cfg.police, 0, sizeof(cfg.police));
			break;
		default:
			usage();
		}
	}
	r = rules_new(&cfg);
	if (r == NULL) {
		fprintf(stderr, "pgm-rules: out of memory\n");
		return 1;
	}
	if (strcmp(cmd, "install") == 0) {
		if (optind >= argc)
			usage();
		if (rules_install(r, backend, (const char *const *)(argv + optind),
			    (size_t)(argc - optind), err, sizeof(err)) != 0) {
			fprintf(stderr, "pgm-rules: %s\n", err);
			rc = 1;
		} else {
			printf("backend=%s interfaces=%d queue=%u\n",
				rules_backend_name(rules_backend(r)), argc - optind, cfg.queue_num);
		}
	} else if (strcmp(cmd, "remove") == 0) {
		if (rules_remove(r, err, sizeof(err)) != 0) {
			fprintf(stderr, "pgm-rules: %s\n", err);
			rc = 1;
		}
	} else {
		usage();
	}
	rules_free(r);
	return rc;
}

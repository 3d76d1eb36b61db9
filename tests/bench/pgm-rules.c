/*
 * pgm-rules: installs or removes the daemon's interception rules (dataplane/rules.h, default
 * configuration: the daemon's table/chain names, queue 0, PGM over IP and UDP) without the
 * daemon, so the baseline consumer of the benchmarks (nfq-acceptall) sees exactly the packets
 * pgmrouterd would.
 *
 *   pgm-rules install [-q QUEUE] [-b auto|nft|iptables] [-F] IFNAME...
 *   pgm-rules remove
 *
 * -F: also the SPM fan-out's forward chain, with the daemon's default mark, for each named
 * interface that has an IPv4 address (the first one getifaddrs lists), as pgmrouterd installs it.
 *
 * The rules stay after install (the namespace's lifetime bounds them). Exit 0 or 1 with the
 * module's one-sentence error on stderr; 64 usage.
 */
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/rules.h"
#include "router/assist.h"

/* The fan-out paths of the named interfaces: each one's first IPv4 address. */
static unsigned fanout_paths(char **names, int count, struct rules_fanout_path *p)
{
	struct ifaddrs *ifa, *i;
	unsigned n = 0;

	if (getifaddrs(&ifa) != 0)
		return 0;
	for (int k = 0; k < count && n < RULES_MAX_FANOUT; k++) {
		for (i = ifa; i != NULL; i = i->ifa_next) {
			if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
				strcmp(i->ifa_name, names[k]) != 0)
				continue;
			snprintf(p[n].ifname, sizeof(p[n].ifname), "%s", names[k]);
			memcpy(p[n].addr, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, 4);
			n++;
			break;
		}
	}
	freeifaddrs(ifa);
	return n;
}

static void usage(void)
{
	fprintf(stderr, "usage: pgm-rules install [-q QUEUE] [-b auto|nft|iptables] [-F] IFNAME...\n"
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
	bool fanout = false;

	if (argc < 2)
		usage();
	cmd = argv[1];
	rules_config_default(&cfg);
	optind = 2;
	while ((c = getopt(argc, argv, "q:b:F")) != -1) {
		switch (c) {
		case 'q':
			cfg.queue_num = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			if (!rules_backend_parse(optarg, &backend))
				usage();
			break;
		case 'F':
			fanout = true;
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
		if (fanout) {
			struct rules_fanout_path p[RULES_MAX_FANOUT];
			unsigned n = fanout_paths(argv + optind, argc - optind, p);

			(void)rules_set_fanout(r, 1u << ASSIST_DEFAULT_FANOUT_BIT, p, n);
		}
		if (rules_install(r, backend, (const char *const *)(argv + optind),
			    (size_t)(argc - optind), err, sizeof(err)) != 0) {
			fprintf(stderr, "pgm-rules: %s\n", err);
			rc = 1;
		} else {
			unsigned nf = 0;

			(void)rules_fanout_active(r, NULL, &nf, NULL);
			printf("backend=%s interfaces=%d queue=%u fanout=%u\n",
				rules_backend_name(rules_backend(r)), argc - optind, cfg.queue_num, nf);
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

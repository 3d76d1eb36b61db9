/*
 * `show ip pgm router dataplane` as data: what the environment reports of its data plane
 * (queue, interception rules, output, the kernel's tables, the capture) beside the packet
 * path's counters, collected once and rendered as text and as JSON by the show command.
 */
#ifndef PGMROUTER_ASSIST_REPORT_H
#define PGMROUTER_ASSIST_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/mfc.h"
#include "dataplane/nfq.h"
#include "dataplane/pcapio.h"
#include "dataplane/rawsock.h"
#include "dataplane/rtnl.h"
#include "dataplane/rules.h"
#include "router/assist/assist.h"

/* One worker's queue (dataplane/rules.h: steering by session). */
struct assist_worker_view {
	uint32_t queue_num;
	int tid; /* the thread that handles it */
	bool cpu_valid;
	uint64_t cpu_ns; /* that thread's time on a CPU (/proc/self/task/TID/schedstat) */
	struct nfqueue_stats queue;
	struct nfqueue_kernel_stats kernel;
};

struct assist_dataplane_view {
	bool running;		     /* the data plane is up */
	const char *backend;	     /* "nftables", "iptables", "none" */
	char backend_detail[400];    /* how the queue rules queue, "" */
	const char *nft_unavailable; /* why nftables was not used, "" */
	bool families[RULES_FAMILY_COUNT]; /* intercepted: the family's rules are in place */
	const char *ipv6_unavailable;	    /* why IPv6 is not intercepted, "" */
	uint64_t ipv6_failures;		    /* installs and updates of the ip6 rules that failed */
	bool rules_counters_valid;
	char rules_counters_error[256]; /* when they could not be read, "" */
	struct rules_counters rules;
	struct nfqueue_stats queue;	    /* every worker's queue together */
	struct nfqueue_kernel_stats kernel; /* the same */
	unsigned nworkers;
	struct assist_worker_view workers[RULES_WORKERS_MAX];
	bool output_open; /* the output sockets exist */
	struct rawsock_stats output;
	struct rtnl_stats interfaces;
	size_t interfaces_known;
	struct mfc_stats routes;
	size_t routes_known;
	uint64_t max_round_packets; /* the largest receive round */
	const char *capture_path;   /* NULL: no capture running */
	struct pcap_writer_stats capture;
	const struct assist_stats *path; /* the packet path's counters: path_sum */
	struct assist_stats path_sum;	 /* every worker's */
};

/* The view now: the environment's part (all zero and "none" without a data plane) and the
   packet path's counters. */
void assist_dataplane_view(const struct assist *a, struct assist_dataplane_view *v);
/* queue and kernel: the sums of the workers' (the environment's report calls it). */
void assist_dataplane_sum_queues(struct assist_dataplane_view *v);

#endif /* PGMROUTER_ASSIST_REPORT_H */

/*
 * Router assist without a data plane: the environment of the capture replay (pgmrouterd -R)
 * and of the tests (the CLI transcripts). No root, no socket: interfaces are given as
 * "NAME=ADDR/PREFIX" (ifindex: position + 1, up), the clock is the caller's, every packet the
 * router would send is counted and, with its decisions, printed to stdout.
 *
 * SPM and RDATA to a group are replicated as the live daemon replicates them, along a route
 * from the arrival interface to every other interface with router assist.
 */
#ifndef PGMROUTER_ASSIST_OFFLINE_H
#define PGMROUTER_ASSIST_OFFLINE_H

#include <stdbool.h>
#include <stddef.h>

#include "router/assist/assist.h"

struct offline;

/* `quiet`: print nothing but the replay's summary. The clock starts at 1 s. Returns NULL with
   one sentence in err. */
struct offline *offline_new(
	const char *const *ifspecs, size_t n, bool quiet, char *err, size_t errlen);
void offline_free(struct offline *o);
struct assist *offline_assist(struct offline *o);

/* One datagram arriving on `in` (seen once), or as a copy forwarded from `in` to `out`; out
   "*": taken before the routing decision, SPM and RDATA to a group replicated along its route. */
int offline_packet(struct offline *o, const uint8_t *datagram, size_t len, const char *in,
	const char *out, char *err, size_t errlen);
/* A multicast route that replaces, for its group (and source unless 0.0.0.0), the one made
   from the interfaces. 0, or -1 without memory. */
int offline_route_add(struct offline *o, const struct mfc_route *r);
/* The datagrams the router sent out of the interface named ifname, and the last of them (its
   first 1500 bytes, the TTL as sent) in *last, *last_len (either may be NULL). */
uint64_t offline_sent(
	const struct offline *o, const char *ifname, const uint8_t **last, size_t *last_len);
/* Moves the clock forward and runs the timers due. */
void offline_advance(struct offline *o, uint64_t us);

/* The replay in steps: router assist on `ifspecs` configured with `conf` (when it enables
   router assist on none of them, every one gets it), a capture through it, its counters
   printed. */
struct offline *offline_replay_open(const struct assist_conf *conf, const char *const *ifspecs,
	size_t n, bool quiet, char *err, size_t errlen);
int offline_replay_file(struct offline *o, const char *pcap_path, char *err, size_t errlen);
void offline_replay_report(struct offline *o);

/*
 * Replays a capture (pcap or pcapng) through router assist configured with `conf` and prints
 * every decision: a packet arrives on the interface whose subnet holds its IP source, at the
 * capture's time; multicast SPM and RDATA are replicated. When `conf` enables router assist on
 * none of the interfaces, every interface gets it. Returns the exit status for main().
 */
int offline_replay(const char *pcap_path, const struct assist_conf *conf,
	const char *const *ifspecs, size_t n, bool quiet);

#endif /* PGMROUTER_ASSIST_OFFLINE_H */

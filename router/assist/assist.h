/*
 * Router assist: the control plane (control/control.h) between a packet source and an output,
 * as an object with an environment. The object holds the core, the settings it runs on and its
 * counters, and does what every mode does alike:
 *
 *   packet path (packet.c)   datagram -> parse (codec) -> cp_packet() -> verdict and rewrite;
 *                            SPM and RDATA to a group, seen before routing, replicated along the
 *                            route the environment gives, each copy through the core for its
 *                            egress interface
 *   output (output.c)        the core's actions -> TPDU (cp_action_tpdu) -> IP datagram ->
 *                            the environment's send
 *   settings (assist.c)      assist_configure(): the difference from what runs, applied
 *   interfaces (assist.c)    the interfaces the environment reports, named in the settings
 *
 * The environment supplies what differs between the live daemon (router/assist/live.c:
 * NFQUEUE, raw and packet sockets, rtnetlink, the event loop), the offline replay of a capture
 * and the tests (router/assist/offline.c): the clock, the sink for datagrams, the multicast
 * routes, interface lookup, where debug lines go, and the data plane behind the settings. No
 * function of the object asks which of them it runs in.
 */
#ifndef PGMROUTER_ASSIST_H
#define PGMROUTER_ASSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/control.h"
#include "dataplane/mfc.h"
#include "dataplane/rules.h"
#include "router/lib/log.h"

/* ---- settings ---- */

#define ASSIST_UDP_PORTS_LEN 96 /* the settings table's text arguments (SETTING_TEXT_LEN) */

/* Policing before the queue (dataplane/rules.h): one row of the settings table. */
enum assist_police_row {
	ASSIST_POLICE_NAK,	 /* per source: NAK, NNAK */
	ASSIST_POLICE_NCF,	 /* per source: NCF */
	ASSIST_POLICE_SPM,	 /* per source: SPM, POLL, POLR */
	ASSIST_POLICE_INTERFACE, /* per interface, each of the three */
	ASSIST_POLICE_ROWS,
};
struct assist_police {
	bool on;
	uint32_t rate;	/* packets per second */
	uint32_t burst; /* packets */
};

/* What router assist runs on, globally: the PGM configuration module's global values. */
struct assist_settings {
	struct cp_config cp; /* cp.if_defaults: what interfaces inherit */
	uint32_t queue;	     /* netfilter queue number */
	uint32_t workers;    /* queues queue .. queue + workers - 1, sessions steered by GSI */
	uint32_t backend;    /* enum rules_backend */
	uint32_t ncf_ttl;    /* IP TTL of what goes down one hop to a group */
	bool udp;	     /* PGM over UDP intercepted on the ports */
	bool link_output; /* Ethernet output through the packet socket (dataplane/rawsock.h) */
	/* The encapsulation ports, a set as pgm_port_set_format writes it ("3055 3056") */
	char udp_ports[ASSIST_UDP_PORTS_LEN];
	struct assist_police police[ASSIST_POLICE_ROWS];
};

/* The encapsulation ports of the settings (a set that does not parse: the defaults). */
void assist_udp_ports(const struct assist_settings *g, struct pgm_udp_ports *ports);

/* The policing the settings ask for, as the interception rules take it (rate 0: off). */
void assist_police(const struct assist_settings *g,
	struct rules_police police[RULES_POLICE_CLASS_COUNT][RULES_POLICE_KEY_COUNT]);

/* One interface's values: the PGM module's interface values (own or inherited). */
struct assist_if_settings {
	bool assist; /* ip pgm router */
	struct cp_if_config cfg;
};

struct assist_if_conf {
	char name[CP_IFNAME_LEN];
	struct assist_if_settings s;
};

/* The whole of it: the interfaces named in the configuration, by name. */
struct assist_conf {
	struct assist_settings g;
	size_t nifs;
	struct assist_if_conf *ifs;
};

#define ASSIST_UNICAST_TTL 64

/* ---- the environment ---- */

struct assist;

struct assist_dataplane_view; /* router/assist/report.h */

struct assist_env {
	void *ctx;
	/* The clock (µs, monotonic): what shows compute ages and timers from. */
	cp_time_t (*now)(void *ctx);
	/* Sends an IP datagram out of ifindex, with its TTL replaced by `ttl` unless 0 (a
	   forwarded copy goes from the packet's own buffer): 1 sent, 0 queued (the environment
	   reports the outcome later with assist_count_sent), -1 refused. */
	int (*send)(void *ctx, int ifindex, const uint8_t *datagram, size_t len, uint8_t ttl);
	/* Sends what send queued, now (an NCF without send_first). NULL: send never queues. */
	void (*send_now)(void *ctx);
	/* send, but now, ahead of what send queued, which stays queued: a batch's first NAK
	   upstream (the repair waits for it) and every NCF leave before the rest of a receive
	   round and anything that can wait. 1 sent, -1 refused. NULL: send, then send_now. */
	int (*send_first)(void *ctx, int ifindex, const uint8_t *datagram, size_t len, uint8_t ttl);
	/* The multicast route a datagram from src to group arriving on in_ifindex follows by the
	   kernel's rules (replication), or NULL; in_ifindex 0: any (where the route comes in).
	   Writable for its counters. */
	struct mfc_route *(*route)(void *ctx, const struct pgm_nla *src,
		const struct pgm_nla *group, int in_ifindex);
	/* The sources of the (S,G) routes of group leaving by ifindex, in by another: at most max
	   in srcs, how many returned (cp_set_route_sources). NULL: none known. */
	unsigned (*route_sources)(void *ctx, const struct pgm_nla *group, int ifindex,
		struct pgm_nla *srcs, unsigned max);
	/* `show ip pgm router mroute`: every multicast route, to fn. NULL: none. */
	void (*routes)(void *ctx, void (*fn)(void *arg, const struct mfc_route *r), void *arg);
	/* The router's IPv6 address to send to dst from, out of ifindex: the kernel's choice
	   (RFC 6724), link-local for a link-local dst. False: none. NULL: the core's interface
	   address (cp_if_addr) when it is IPv6. */
	bool (*source)(void *ctx, int ifindex, const struct pgm_nla *dst, struct pgm_nla *src);
	/* An interface by name: its ifindex (0: none) and link state. */
	int (*if_lookup)(void *ctx, const char *name, bool *up, bool *running);
	/* Debug lines: the categories wanted (bit 1 << category; asked again by assist_log_sync:
	   formatting a line costs more than the decision), and a line of one of them. */
	unsigned (*lines_wanted)(void *ctx);
	void (*line)(void *ctx, enum log_category cat, const char *text);
	/* The data plane behind the settings (queue, interception rules, output): called by
	   assist_configure with what runs, what is wanted and `how` (ASSIST_RESTART_QUEUE); 0, or
	   -1 with one sentence in err having changed nothing. NULL: no data plane. */
	int (*apply)(void *ctx, const struct assist_conf *prev, const struct assist_conf *next,
		unsigned how, char *err, size_t errlen);
	/* `show ip pgm router dataplane`: the environment's part. NULL: none. */
	void (*report)(void *ctx, struct assist_dataplane_view *v);
	/* Whether the data plane is up. NULL: never. */
	bool (*running)(void *ctx);
	/* Writes every packet received and sent to a pcap file of at most max_mb; path NULL
	   stops. 0, or -1 with one sentence in err. NULL: no capture. */
	int (*capture)(void *ctx, const char *path, uint32_t max_mb, char *err, size_t errlen);
	/* A shard's (assist_set_shards): another thread changed the object (settings,
	   interfaces); its timers may be due sooner. NULL: nothing to do. */
	void (*changed)(void *ctx);
};

/* ---- the object ---- */

struct assist_stats {
	uint64_t packets;	 /* handed to the packet path */
	uint64_t not_pgm;	 /* not PGM we can parse at the IP layer: accepted */
	uint64_t malformed;	 /* dropped for a PGM parse error */
	uint64_t udp_not_pgm;	 /* UDP on the ports that is not PGM: accepted unchanged */
	uint64_t rewritten;	 /* accepted with a rewritten payload */
	uint64_t rewrite_failed; /* rewrite did not apply: accepted unchanged */
	/* SPM and RDATA to a group, taken before routing, and the copies made of them */
	uint64_t replicated;	 /* datagrams replicated here (their originals dropped) */
	uint64_t copies;	 /* copies sent, one per outgoing interface */
	uint64_t copies_failed;	 /* of those, refused by the output */
	uint64_t copies_held;	 /* copies the control plane dropped (RDATA nobody asked for) */
	uint64_t repl_by_kernel; /* every copy unchanged: accepted, the kernel forwards them */
	uint64_t repl_single;	 /* the route's one copy rewritten: accepted so */
	uint64_t repl_no_route;	 /* no multicast route (yet): left to the kernel */
	uint64_t repl_wrong_if; /* arrived off the route's incoming interface: left to the kernel */
	uint64_t originated;	/* packets built and sent */
	uint64_t build_failed;	/* actions that could not be built */
	uint64_t send_failed;	/* the output refused */
	uint64_t no_source_addr; /* to send on an interface without an address of the family */
	uint64_t timer_runs;
};

/* A new object running on `env`, with the built-in settings and no interface; NULL without
   memory. */
struct assist *assist_new(const struct assist_env *env);
void assist_free(struct assist *a);

struct cp *assist_cp(const struct assist *a);
const struct assist_conf *assist_conf(const struct assist *a);
const struct assist_stats *assist_stats(const struct assist *a);
cp_time_t assist_now(const struct assist *a);

/* A change of settings the configuration marks as the queue's (queue number, backend, UDP
   ports): the data plane opens its queue and installs its rules again. */
#define ASSIST_RESTART_QUEUE 0x1

/* Makes `next` what runs: the data plane first (the environment's apply, told `how`), then the
   core's settings and the interfaces whose settings changed. 0, or -1 with one sentence in err
   and nothing changed. The object keeps its own copy. */
int assist_configure(
	struct assist *a, const struct assist_conf *next, unsigned how, char *err, size_t errlen);
void assist_conf_free(struct assist_conf *conf);

/* Interfaces as the environment has them; the configuration applies to them by name. */
void assist_if_added(struct assist *a, int ifindex, const char *name, const struct pgm_nla *addr);
void assist_if_removed(struct assist *a, int ifindex);
void assist_if_address(struct assist *a, int ifindex, const struct pgm_nla *addr);
/* Its IPv6 addresses, global and link-local (afi 0: none). */
void assist_if_address6(
	struct assist *a, int ifindex, const struct pgm_nla *global, const struct pgm_nla *ll);
/* An interface's ifindex (0: none) and link state, from the environment. */
int assist_if_lookup(const struct assist *a, const char *name, bool *up, bool *running);
/* "eth0", "-" for 0, "ifN" for one the core does not know. */
const char *assist_ifname(const struct assist *a, int ifindex, char *buf, size_t len);
/* Every multicast route the environment knows (none without the hook). */
void assist_routes(
	const struct assist *a, void (*fn)(void *arg, const struct mfc_route *r), void *arg);

/* Whether the environment's data plane is up. */
bool assist_running(const struct assist *a);
/* The debug capture (assist_env.capture): path NULL stops it. */
int assist_capture(struct assist *a, const char *path, uint32_t max_mb, char *err, size_t errlen);

/* The debug categories wanted, asked of the environment again (once per receive round or
   timer run: they change with `debug` commands). */
void assist_log_sync(struct assist *a);

/* ---- workers: several control planes (view.c) ---- */

/*
 * With workers on threads of their own (live.c), each worker has an object of its own (its core,
 * its counters, the sessions steered to its queue), and the object the configuration and the CLI
 * see, on the main thread, has them as shards: the configuration it is given and the interfaces
 * it is told of go to each shard, under the shard's lock, with the table limits shared out
 * (assist_shard_conf); the views below add them up, its own core included. A worker holds its
 * object's lock while it handles a receive round or a timer run. Without shards the views are
 * the core's own (cp_*). The shards are the caller's: it frees them after assist_set_shards(a,
 * NULL, 0).
 */
void assist_set_shards(struct assist *a, struct assist *const *shards, unsigned n);
/* A new core in place of the object's, with its settings and interfaces and none of its
   sessions, repair states or counters: when the workers change, a session's state moves to
   the worker its queue now is (it learns it again from the next SPM). 0, or -1 without
   memory (the old core kept). */
int assist_reset_core(struct assist *a);
unsigned assist_nshards(const struct assist *a);
void assist_lock(struct assist *a);
void assist_unlock(struct assist *a);
/* What a shard of n runs: conf with the memory budget and the table limits divided by n (rounded
   up), the rest unchanged. */
void assist_shard_conf(struct assist_settings *g, unsigned n);

void assist_get_stats(const struct assist *a, struct cp_stats *st);
/* The packet path's counters, the shards' added. */
void assist_path_stats(const struct assist *a, struct assist_stats *st);
/* One interface, its counters the sum of every core's (in *sum, which v->counters points to). */
bool assist_get_if(
	const struct assist *a, int ifindex, struct cp_if_view *v, struct cp_counters *sum);
void assist_foreach_if(const struct assist *a, cp_if_cb cb, void *ctx);
/* Sessions across the cores in cp_foreach_session's order; the masks of interface slots in
   the views (cp_if_slot_ifindex) are this object's core's slots. */
void assist_foreach_session(
	const struct assist *a, const struct pgm_nla *group, cp_session_cb cb, void *ctx);
struct cp_session_key *assist_session_keys(
	const struct assist *a, const struct pgm_nla *group, size_t *n);
bool assist_session_view_key(
	const struct assist *a, const struct cp_session_key *key, cp_session_cb cb, void *ctx);
void assist_foreach_repair(const struct assist *a, const struct pgm_tsi *tsi, uint16_t afi,
	cp_repair_cb cb, void *ctx);
void assist_clear_counters(struct assist *a, int ifindex /* 0 = all */);
size_t assist_clear_repair_states(struct assist *a, const struct pgm_nla *group);
size_t assist_clear_dlrs(struct assist *a, const struct pgm_nla *dlr);

/* ---- the packet path (packet.c) ---- */

struct assist_packet {
	const uint8_t *datagram; /* from the IP header */
	size_t len;
	int in_ifindex;
	int out_ifindex;     /* a forwarded copy's egress; 0: seen once */
	bool before_routing; /* SPM and RDATA to a group are replicated here */
	bool udp_csum_unset; /* the UDP checksum was left to the hardware: not verified */
	cp_time_t now;
};

/* One datagram through router assist. Returns the verdict; CP_ACCEPT_REWRITTEN: accept
 *rewritten (rewritten_len bytes, valid until the next call). */
enum cp_verdict assist_packet(struct assist *a, const struct assist_packet *p,
	const uint8_t **rewritten, size_t *rewritten_len);
/* Runs the core's timers due at `now`. */
void assist_timers(struct assist *a, cp_time_t now);
/* Batched output: packets the environment reported later (send returned 0). */
void assist_count_sent(struct assist *a, uint64_t sent, uint64_t failed);
/* Counters of a shard that goes away, kept by the object the shows see. */
void assist_add_stats(struct assist *a, const struct assist_stats *st);

#endif /* PGMROUTER_ASSIST_H */

/*
 * PGM router assist inside pgmrouterd: its configuration, and the wiring of the control plane
 * (control/control.h) to the data plane (NFQUEUE in, raw socket out, interception rules,
 * rtnetlink interfaces, debug capture).
 *
 * The configuration exists before and without the packet path (pgmrouterd -n only parses it);
 * assist_start() brings the packet path up and from then on every configuration change is
 * applied at once.
 *
 * The packet path, for every packet the kernel queues:
 *   parse (codec) -> malformed: counted by error name on the arrival interface, dropped
 *                 -> cp_packet(): verdict for this copy, rewrites applied to a copy of the
 *                    payload (SPM path NLA, NAK_BO_IVL, OPT_INVALID; checksums fixed),
 *                    originated packets built with the codec and sent by the raw socket.
 * Timers: one loop timer armed to the control plane's next deadline.
 */
#ifndef PGMROUTER_ASSIST_H
#define PGMROUTER_ASSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/control.h"
#include "dataplane/rules.h"

#define ASSIST_DEFAULT_QUEUE 113 /* the PGM protocol number: easy to recognise in iptables -L */
#define ASSIST_DEFAULT_NCF_TTL 255
#define ASSIST_DEFAULT_UNICAST_TTL 64
#define ASSIST_DEFAULT_CAPTURE_MB 64

/* Per-interface settings that can be configured; a bit per field of struct cp_if_config. */
enum assist_timer {
	ASSIST_T_NAK_RPT_IVL,
	ASSIST_T_NAK_RPT_RATE,
	ASSIST_T_NAK_RDATA_IVL,
	ASSIST_T_NAK_ELIM_IVL,
	ASSIST_T_NCF_IVL,
	ASSIST_T_NAK_BO_IVL,
	ASSIST_T_NAK_BO_PROBE,
	ASSIST_T_NAK_BO_MIN,
	ASSIST_T_NAK_BO_MAX,
	ASSIST_T_DUP_NAK_MAX,
	ASSIST_T_COUNT
};

struct assist_timer_def {
	const char *keyword; /* "nak-repeat-interval" */
	const char *unit;    /* "ms" */
	uint32_t min, max;
	const char *help;
};
const struct assist_timer_def *assist_timer_def(enum assist_timer t);
uint32_t assist_timer_get(const struct cp_if_config *cfg, enum assist_timer t);
void assist_timer_set(struct cp_if_config *cfg, enum assist_timer t, uint32_t value);

/* An interface named in the configuration (it need not exist). */
struct assist_if {
	char name[CP_IFNAME_LEN];
	bool enabled;	     /* ip pgm router */
	uint32_t timers_set; /* bit per enum assist_timer configured here */
	struct cp_if_config cfg; /* effective: own values, the rest from the global defaults */
};

struct assist_conf {
	uint16_t queue_num;
	enum rules_backend backend;
	uint8_t ncf_ttl;
	bool udp;
	uint16_t udp_ucast_port, udp_mcast_port;
	bool link_output; /* multicast onto Ethernet through the link layer (rawsock.h) */
	uint32_t session_lifetime_s, max_sessions, max_repair_states;
	/* DLRs and polls (struct cp_config) */
	bool dlr_redirect, dlr_discovery, poll_reply;
	uint32_t dlr_poll_ivl_ms, dlr_poll_bo_ivl_ms;
	uint32_t defaults_set; /* bit per enum assist_timer set globally */
	struct cp_if_config if_defaults;
};

/* Creates the configuration with its defaults and registers the PGM commands. */
void assist_init(void);
void assist_free(void);
/* Brings the packet path up; returns 0, or -1 with one sentence in err. */
int assist_start(char *err, size_t errlen);
/* Removes the interception rules and closes everything (clean exit). */
void assist_stop(void);
bool assist_running(void);

const struct assist_conf *assist_conf(void);
/* Configuration changes; each returns 0, or -1 with a message for the CLI in err. */
int assist_set_queue(uint16_t queue_num, char *err, size_t errlen);
int assist_set_backend(enum rules_backend backend, char *err, size_t errlen);
void assist_set_ncf_ttl(uint8_t ttl);
int assist_set_udp(bool enabled, uint16_t ucast_port, uint16_t mcast_port, char *err,
	size_t errlen);
int assist_set_link_output(bool enabled, char *err, size_t errlen);
void assist_set_session_lifetime(uint32_t seconds);
void assist_set_dlr(bool redirect, bool discovery, uint32_t poll_ivl_ms, uint32_t poll_bo_ivl_ms);
void assist_set_poll_reply(bool enabled);
void assist_set_limits(uint32_t max_sessions, uint32_t max_repair_states);
void assist_set_max_sessions(uint32_t max_sessions);
void assist_set_max_repair_states(uint32_t max_repair_states);
/* Global default of a per-interface timer; `set` false returns it to the built-in default. */
void assist_set_default_timer(enum assist_timer t, bool set, uint32_t value);

/* Interfaces. */
const struct assist_if *assist_if_find(const char *name);
int assist_if_enable(const char *name, bool enabled, char *err, size_t errlen);
void assist_if_set_timer(const char *name, enum assist_timer t, bool set, uint32_t value);
void assist_if_forget(const char *name); /* `no interface NAME` */
size_t assist_if_count(void);
const struct assist_if *assist_if_at(size_t i);
size_t assist_if_enabled_count(void);

/* Live state for show and clear commands; NULL / zero before assist_start. */
struct cp *assist_cp(void);
int assist_ifindex(const char *name); /* 0 when the interface does not exist */
/* Link state from rtnetlink: returns the ifindex (0: no such interface). */
int assist_if_link(const char *name, bool *up, bool *running);
const char *assist_ifname(int ifindex, char *buf, size_t len);

struct assist_stats {
	uint64_t packets;	 /* from the queue */
	uint64_t not_pgm;	 /* queued but not PGM we can parse at the IP layer: accepted */
	uint64_t malformed;	 /* dropped for a PGM parse error */
	uint64_t rewritten;	 /* accepted with a rewritten payload */
	uint64_t rewrite_failed; /* rewrite did not apply: accepted unchanged */
	/* SPM and RDATA to a group, taken before routing, and the copies made of them */
	uint64_t replicated;	  /* datagrams replicated here (their originals dropped) */
	uint64_t copies;	  /* copies sent, one per outgoing interface */
	uint64_t copies_failed;	  /* of those, refused by the raw socket */
	uint64_t copies_held;	  /* copies the control plane dropped (RDATA nobody asked for) */
	uint64_t repl_by_kernel;  /* every copy unchanged: accepted, the kernel forwards them */
	uint64_t repl_single;	  /* the route's one copy rewritten: accepted so, the kernel forwards it */
	uint64_t repl_no_route;	  /* no multicast route (yet): left to the kernel */
	uint64_t repl_wrong_if;	  /* arrived off the route's incoming interface: left to the kernel */
	uint64_t originated;	 /* packets built and sent */
	uint64_t build_failed;	 /* actions that could not be built */
	uint64_t send_failed;	 /* raw socket refused */
	uint64_t no_source_addr; /* NAK to send on an interface without an IPv4 address */
	uint64_t timer_runs;
	uint64_t verdict_errors;
	uint64_t rules_updates;
	uint64_t last_round_packets; /* packets in the last receive round */
	uint64_t max_round_packets;
};
void assist_get_stats(struct assist_stats *st);

/* `show ip pgm router dataplane`: a text report (appended with fn). */
typedef void (*assist_print_fn)(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void assist_dataplane_report(assist_print_fn print, void *ctx, bool json);

/* Debug capture: every packet from the queue and every packet originated, to a pcap file. */
int assist_capture_start(const char *path, uint32_t max_mb, char *err, size_t errlen);
void assist_capture_stop(void);
bool assist_capture_active(const char **path);

/*
 * Offline replay of a capture through the control plane (pgmrouterd -R): no root, no sockets.
 * Interfaces come from `ifspecs` ("NAME=ADDR/PREFIX", e.g. "eth0=198.18.1.1/24"): a packet
 * arrives on the interface whose subnet holds its IP source (NCF, SPM, RDATA and ODATA from the
 * data source, NAKs from receivers); SPM, RDATA and POLL are then "forwarded" to every other
 * interface with router assist, one copy each. Every decision is printed. Returns the exit
 * status for main().
 */
int assist_replay(const char *pcap_path, const char *const *ifspecs, size_t nifspecs, bool quiet);

/*
 * Tests (the CLI transcripts): a control plane without packet path, sockets or event loop, so
 * that the show and clear commands have live state to report. Interfaces as for the replay
 * (ifindex: position + 1); they stand in for rtnetlink and take the configuration as it
 * changes. assist_running() stays false. Packets go in with assist_test_packet() (decisions
 * printed to stdout as in the replay) at a clock that starts at 1 s and moves only with
 * assist_test_advance(), which also runs the timers due.
 */
int assist_test_start(const char *const *ifspecs, size_t nifspecs, char *err, size_t errlen);
int assist_test_packet(const uint8_t *datagram, size_t len, const char *in_ifname,
	const char *out_ifname, char *err, size_t errlen);
void assist_test_advance(uint64_t us);
/* The control plane's clock: the loop's monotonic time, or the test clock. */
uint64_t assist_now(void);

#endif /* PGMROUTER_ASSIST_H */

/*
 * Helpers for the control-plane tests: a core with a fake clock and a fixed set of interfaces,
 * parsed packets built directly as structs, captured actions and log lines, and a small
 * table-driven runner for scripted scenarios.
 *
 * Interfaces (all with router assist unless said otherwise):
 *   up  ifindex 1, 198.18.0.1    the upstream interface of the test session
 *   d1  ifindex 2, 198.18.1.1    downstream
 *   d2  ifindex 3, 198.18.2.1    downstream
 *   d3  ifindex 4, 198.18.3.1    downstream
 *   na  ifindex 5, 198.18.4.1    without router assist
 *   xx  ifindex 99               never added
 * The test session: GSI 0a0b0c0d0e0f, source port 1234, destination port 7500, source
 * 198.18.0.10, group 239.192.0.1, upstream neighbour 198.18.0.100.
 */
#ifndef CP_TEST_UTIL_H
#define CP_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "control/control.h"

#define CP_TEST_UP 1
#define CP_TEST_D1 2
#define CP_TEST_D2 3
#define CP_TEST_D3 4
#define CP_TEST_NA 5
#define CP_TEST_XX 99

#define CP_TEST_SOURCE	 "198.18.0.10"
#define CP_TEST_GROUP	 "239.192.0.1"
#define CP_TEST_UPSTREAM "198.18.0.100"
#define CP_TEST_SPORT	 1234
#define CP_TEST_DPORT	 7500

#define CP_TEST_MAX_ACTIONS 512
#define CP_TEST_MAX_LOG	    256

struct cp_test_env {
	struct cp *cp;
	cp_time_t now;
	struct cp_action actions[CP_TEST_MAX_ACTIONS];
	size_t nactions;
	size_t dropped_actions; /* beyond CP_TEST_MAX_ACTIONS */
	char *log[CP_TEST_MAX_LOG];
	size_t nlog;
	struct cp_result res;
	int rpf_ifindex; /* the route's incoming interface the core is told, 0: no route known */
	/* the sources of the routes by group (cp_set_route_sources): every group's routes come
	   in by route_iif and leave by every other interface; none by default */
	struct pgm_nla route_srcs[4];
	unsigned nroute_srcs;
	int route_iif;
	unsigned route_walks; /* how often the core asked for them */
};

/* A parsed packet; option bytes and NAK lists live in tpdu[], so do not copy one. */
struct cp_test_pkt {
	struct pgm_ip ip;
	struct pgm_packet pkt;
	uint8_t tpdu[512];
};

void cp_test_env_init(struct cp_test_env *env, const struct cp_config *cfg);
void cp_test_env_free(struct cp_test_env *env);
void cp_test_clear(struct cp_test_env *env); /* forget captured actions and log lines */
/*
 * Where most control-plane tests start: cp_test_env_init with cfg (NULL: the defaults), the
 * random generator seeded with `seed` unless it is 0, the test session learnt from SPM 1 on up
 * and forwarded to d1, then cp_test_clear. Returns the start time.
 */
cp_time_t cp_test_start(struct cp_test_env *env, const struct cp_config *cfg, uint64_t seed);
/* cp_test_env_free, then cp_test_start. */
cp_time_t cp_test_restart(struct cp_test_env *env, const struct cp_config *cfg, uint64_t seed);

struct pgm_nla cp_test_nla(const char *text);
int cp_test_ifindex(const char *name);
const char *cp_test_ifname(int ifindex);

/* Builders: the test session's TSI and addresses; change the fields afterwards as needed. */
void cp_test_spm(struct cp_test_pkt *p, uint32_t sqn, uint32_t trail, uint32_t lead);
/* NAK, NNAK or NCF for sqn, with `nlist` more SQNs in OPT_NAK_LIST. */
void cp_test_nak(
	struct cp_test_pkt *p, unsigned type, uint32_t sqn, const uint32_t *list, unsigned nlist);
void cp_test_data(struct cp_test_pkt *p, unsigned type, uint32_t sqn);
void cp_test_simple(struct cp_test_pkt *p, unsigned type, uint32_t sqn);
/* Appends an option of `type` (its OPX bits given) to the packet's option table. */
void cp_test_add_option(struct cp_test_pkt *p, unsigned type, unsigned opx);

/* Hands the packet to the core at env->now; returns the verdict (also in env->res). */
enum cp_verdict cp_test_send(
	struct cp_test_env *env, const struct cp_test_pkt *p, int in_ifindex, int out_ifindex);
/* At time t, from the builders above: a NAK, NNAK or NCF arriving on `in`, and a data packet. */
enum cp_verdict cp_test_nak_at(struct cp_test_env *env, cp_time_t t, unsigned type, uint32_t sqn,
	const uint32_t *list, unsigned nlist, int in);
enum cp_verdict cp_test_data_at(
	struct cp_test_env *env, cp_time_t t, unsigned type, uint32_t sqn, int in, int out);
/* Sets the clock and runs the timers. */
cp_time_t cp_test_timers(struct cp_test_env *env, cp_time_t now);

/* Actions captured so far as "NCF d1 17; NAK up 17,18 rpt" (rpt: built from state). */
const char *cp_test_actions(const struct cp_test_env *env, char *buf, size_t len);
size_t cp_test_count_actions(const struct cp_test_env *env, enum cp_action_type type);
/* Whether some captured log line contains `text`. */
int cp_test_logged(const struct cp_test_env *env, const char *text);

uint64_t cp_test_if_ev(const struct cp_test_env *env, int ifindex, enum cp_counter c);
uint64_t cp_test_if_in(const struct cp_test_env *env, int ifindex, unsigned type);
uint64_t cp_test_if_out(const struct cp_test_env *env, int ifindex, unsigned type);
uint64_t cp_test_global_ev(const struct cp_test_env *env, enum cp_counter c);
/* Summed over interfaces and the global counters. */
uint64_t cp_test_total_ev(const struct cp_test_env *env, enum cp_counter c);
/* Counters of the test session (0 when it does not exist). */
uint64_t cp_test_tsi_ev(const struct cp_test_env *env, enum cp_counter c);

/* The test session's view; returns 0 when it does not exist. */
int cp_test_session(const struct cp_test_env *env, struct cp_session_view *v);
/* The test session's view; the test fails when it does not exist. */
struct cp_session_view cp_test_session_view(const struct cp_test_env *env);
/* The repair state for sqn in the test session; returns 0 when there is none. */
int cp_test_repair(const struct cp_test_env *env, uint32_t sqn, struct cp_repair_view *v);
size_t cp_test_repair_count(const struct cp_test_env *env);
uint64_t cp_test_mask(int ifindex); /* the slot bit of a test interface */

/*
 * Scripted scenarios. `what` is a packet ("SPM 5", "NAK 17", "NAK 17,18,19", "NCF 17",
 * "RDATA 17", "NNAK 17", "POLL 1", "ODATA 3") with optional words after it: "mcast" (NAK to the
 * group), "udp", "path=ADDR", "src=ADDR", "grp=ADDR", "trail=N", "lead=N"; or "timers".
 * "route IF" sets the incoming interface of the multicast route the core is told (rpf_ifindex).
 * `verdict` is "accept", "drop" or "rewrite" (ignored for timers and routes); `actions` what must be
 * emitted by this step, in cp_test_actions form ("" for none).
 */
struct cp_test_step {
	cp_time_t t;
	const char *what;
	const char *in;
	const char *out;
	const char *verdict;
	const char *actions;
};
void cp_test_run(struct cp_test_env *env, const struct cp_test_step *steps, size_t n);

#endif /* CP_TEST_UTIL_H */

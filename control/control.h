/*
 * The PGM network-element control plane (RFC 3208 section 7): a functional core.
 *
 * Given a parsed packet, the interface it arrived on, for a forwarded copy the interface it
 * leaves by, and the current time, cp_packet() returns a verdict for that copy and emits the
 * packets to originate as actions. cp_timers() runs the timers that are due and emits their
 * actions. The core performs no I/O and reads the time only from its arguments, so tests drive it
 * with a fake clock and captures can be replayed through it.
 *
 * How packets reach the core (the data plane's contract, see dataplane/rules.c):
 *  - SPM and RDATA are forwarded multicast: the data plane hands over one copy per egress
 *    interface (out_ifindex set; router/assist/packet.c makes the copies from the kernel's
 *    multicast route, taken at prerouting). POLLs are seen once, at prerouting. SPM state is
 *    updated once per SPM and every copy gets its own path NLA; RDATA repair state is consumed
 *    once every listed interface had its copy.
 *  - NCFs are seen once, before routing (out_ifindex 0). NCFs of sessions the core knows are
 *    consumed here and never forwarded; NCFs of unknown sessions are accepted, so PGM keeps
 *    working unassisted.
 *  - NAK, NNAK, POLR (and unicast RDATA/NCF from an off-tree DLR) addressed to the router are
 *    seen once (out_ifindex 0) and consumed; the core originates what goes upstream.
 *  - Multicast NAKs (Microsoft receivers send a TTL-1 copy of every NAK) are accepted unchanged,
 *    neither confirmed nor forwarded.
 *
 * Interfaces are identified by kernel ifindex. At most CP_MAX_INTERFACES interfaces can have
 * router assist enabled at once (repair states keep their interface sets as bitmasks).
 */
#ifndef PGMROUTER_CONTROL_H
#define PGMROUTER_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/wire/pgm_wire.h"

#define CP_MAX_INTERFACES 64	    /* interfaces with router assist (repair-state mask bits) */
#define CP_MAX_KNOWN_INTERFACES 1024 /* interfaces known to the core, assisted or not */
#define CP_IFNAME_LEN 16

typedef uint64_t cp_time_t; /* monotonic time in microseconds */
#define CP_MS(ms) ((cp_time_t)(ms) * 1000u)
#define CP_SEC(s) ((cp_time_t)(s) * 1000000u)

/*
 * Session identity (7.1, 10): an SPM more than CP_SPM_SQN_JUMP_MAX ahead of the session's SPM_SQN
 * is refused, and without route information the upstream interface moves only after the
 * session had no SPM for CP_SPM_SILENCE_S; either is accepted after such a silence (a source
 * restarted with the same TSI). Why these values: session.c.
 */
#define CP_SPM_SQN_JUMP_MAX (1u << 20)
#define CP_SPM_SILENCE_S    60

/* Per-interface timers and rates; see the README for why these defaults. */
struct cp_if_config {
	uint32_t nak_rpt_ivl_ms;   /* NAK_RPT_IVL: how long an unconfirmed NAK is repeated */
	uint32_t nak_rpt_rate;	   /* NAK_RPT_RTE: repeats per second while unconfirmed */
	uint32_t nak_rdata_ivl_ms; /* NAK_RDATA_IVL: wait for RDATA after a confirmation */
	uint32_t nak_elim_ivl_ms;  /* NAK_ELIM_IVL: duplicates discarded after a confirmation */
	uint32_t ncf_ivl_ms;	   /* identical NCFs on one interface at most once per interval */
	uint32_t nak_bo_ivl_us;	   /* NAK_BO_IVL written into forwarded SPMs (15.2.1); 0 = leave */
	/* 15.2 tuning: NAK_BO_IVL doubles on the first duplicate NAK of a repair state on this
	   interface and halves after nak_probe_num new states without one, within [min, max];
	   0 = off (nak_bo_ivl_us is advertised as configured) */
	uint32_t nak_probe_num;
	uint32_t nak_bo_ivl_min_us, nak_bo_ivl_max_us;
	/* 15.3.1: duplicate NAKs of one repair state on this interface at which a failure of the
	   multicast path below is assumed (unicast NCFs with OPT_NBR_UNREACH); 0 = never */
	uint32_t dup_nak_max;
	/* Router Alert (RFC 2113) on what the router originates out of this interface as if from
	   the source (NCFs, POLLs, re-sourced RDATA, special SPMs), so the next PGM router takes
	   them (1.2.5); off for links whose equipment drops IP options */
	bool router_alert;
	/* new sessions per second created by SPMs arriving here, bursts of as many (a token
	   bucket); 0 = no cap */
	uint32_t session_rate;
	/* the crossing window: repaired state is kept this long after its RDATA went by, and a
	   first NAK from a new source on an interface that had its copy is eliminated (a NAK that
	   crossed the repair); at most nak_elim_ivl_ms, 0 = off (RFC 3208 7.8 exactly) */
	uint32_t nak_cross_ivl_ms;
};
void cp_if_config_default(struct cp_if_config *cfg);

/* Global settings. */
struct cp_config {
	uint32_t session_lifetime_s; /* a TSI without SPMs expires after this; 0 = never */
	/* The state tables' memory is bounded by memory_budget_mb (0 = no budget): max_sessions
	   and max_repair_states, when 0, are derived from it (cp_limits). A share of the repair
	   states (percent) is the most one arrival interface, or one session, can hold. */
	uint32_t memory_budget_mb;
	uint32_t max_sessions;	    /* 0 = from the budget */
	uint32_t max_repair_states; /* 0 = from the budget */
	uint32_t repair_if_share, repair_session_share;
	uint32_t rdata_linger_ms;    /* repair state kept after its first RDATA copy, for the
					other listed interfaces' copies */
	bool nak_window_check;	     /* drop NAKs behind SPM_TRAIL or far beyond SPM_LEAD */
	/* DLRs (9.5.3): send NAKs to DLRs learned from redirecting POLRs */
	bool dlr_redirect;
	/* search for off-tree DLRs with POLLs of sub-type DLR when a NAK finds none (9.5.3.1) */
	bool dlr_discovery;
	uint32_t dlr_poll_ivl_ms;   /* at most one DLR poll per TSI in this interval */
	uint32_t dlr_poll_bo_ivl_ms; /* POLL_BO_IVL of our DLR polls; POLRs accepted 2x as long */
	/* POLL child role (14.5): answer GENERAL polls of our upstream neighbour */
	bool poll_reply;
	struct cp_if_config if_defaults; /* for interfaces without their own settings */
};
void cp_config_default(struct cp_config *cfg);

/*
 * The limits in force under a configuration: those configured, else those the memory budget
 * allows at the worst-case bytes per entry (the entry, its share of the hash table while it
 * doubles, what may hang off it). 0 = no limit (no budget and none configured).
 */
struct cp_limits {
	uint32_t max_sessions, max_repair_states;
	bool sessions_derived, repair_states_derived; /* from the budget */
	uint32_t if_quota, session_quota;	       /* repair states; 0 = no limit */
	size_t budget;				       /* bytes; 0 = none */
	size_t reserve; /* of the budget, kept for the rest of the daemon */
	size_t session_cost, repair_cost; /* worst-case bytes per entry */
};
void cp_limits(const struct cp_config *cfg, struct cp_limits *out);

/* ---- counters (modelled on the PGM MIB's network-element tables) ---- */

#define CP_COUNTERS(X)                                                                             \
	X(SESSIONS_CREATED, "sessions-created", "TSI states created by an SPM")                    \
	X(SESSIONS_EXPIRED, "sessions-expired", "TSI states expired without SPMs")                 \
	X(SESSIONS_REMOVED, "sessions-removed",                                                    \
		"TSI states removed with their upstream interface")                                \
	X(SESSION_LIMIT, "session-limit", "SPMs not tracked: max-sessions reached")                \
	X(SPM_FORWARDED, "spm-forwarded", "SPM copies forwarded with this interface's path NLA")   \
	X(SPM_BAD_SQN, "spm-bad-sqn", "SPMs dropped as out of sequence")                           \
	X(SPM_DUPLICATE_COPY, "spm-duplicate",                                                     \
		"SPM copies dropped: same SQN already forwarded here")                             \
	X(SPM_UPSTREAM_CHANGED, "spm-upstream-changed", "upstream neighbour or interface changed") \
	X(SPM_FOREIGN, "spm-foreign",                                                              \
		"SPMs with a session's TSI from another source or group: dropped")                 \
	X(SPM_NOT_RPF, "spm-not-rpf",                                                              \
		"SPMs of a session off its upstream interface and not the route's: dropped")       \
	X(SPM_SQN_JUMP, "spm-sqn-jump", "SPMs too far ahead of the session's SPM_SQN: dropped")    \
	X(SPM_BAD_PATH, "spm-bad-path",                                                            \
		"SPMs whose path NLA cannot take NAKs (ours, multicast, loopback...): dropped")    \
	X(SPM_NO_ADDRESS, "spm-no-address",                                                        \
		"SPM copies passed unchanged: no usable egress address")                           \
	X(COPY_NOT_ASSISTED, "copy-not-assisted",                                                  \
		"copies leaving by interfaces without assist, passed")                             \
	X(NAK_RECEIVED, "nak-received", "unicast NAKs received, list entries counted singly")      \
	X(NAK_UNIQUE, "nak-unique", "NAK SQNs that created repair state")                          \
	X(NAK_FORWARDED, "nak-forwarded", "NAK packets forwarded upstream")                        \
	X(NAK_RETRANSMITTED, "nak-retransmitted", "NAK SQNs repeated upstream while unconfirmed")  \
	X(NAK_ELIMINATED, "nak-eliminated", "duplicate NAK SQNs discarded")                        \
	X(NAK_CROSSED_REPAIR, "nak-crossed-repair",                                                \
		"NAK SQNs discarded: they crossed the repair on the wire (in nak-eliminated too)") \
	X(NAK_RETRY_EXPIRED, "nak-retry-expired", "NAKs never confirmed within NAK_RPT_IVL")       \
	X(NAK_NO_SESSION, "nak-no-session", "NAKs for a TSI without source-path state")            \
	X(SPMR_SENT, "spmr-sent",                                                                  \
		"SPMRs sent to a source for a TSI NAKed without source-path state (13.6)")         \
	X(SPMR_RATE_LIMITED, "spmr-rate-limited",                                                  \
		"NAKs for unknown TSIs soliciting no SPM: the interface's 10 per second")          \
	X(SPMR_NO_ROUTE, "spmr-no-route",                                                          \
		"NAKs for unknown TSIs whose source no multicast route sends out by this interface")   \
	X(NAK_OUT_OF_WINDOW, "nak-out-of-window", "NAKs outside the source's transmit window")     \
	X(NAK_UPSTREAM_INTERFACE, "nak-upstream-interface",                                        \
		"NAKs arriving on the upstream interface")                                         \
	X(NAK_NOT_ASSISTED, "nak-not-assisted",                                                    \
		"NAKs on interfaces without router assist, dropped")                               \
	X(NAK_MULTICAST, "nak-multicast", "multicast NAKs, neither confirmed nor forwarded")       \
	X(NAK_TRANSIT, "nak-transit",                                                              \
		"unicast NAKs or NNAKs routed through to the source, not for the router")           \
	X(NAK_SRC_PATH, "nak-src-path",                                                            \
		"NAKs naming this router as NAK_SRC (OpenPGM), forwarded naming the source")         \
	X(NAK_LIST_UNORDERED, "nak-list-unordered",                                                \
		"NAK lists not in SQN order (OpenPGM), processed entry by entry")                  \
	X(NAK_ADDRESS_MISMATCH, "nak-address-mismatch",                                            \
		"NAK source or group NLA not the session's")                                       \
	X(NNAK_RECEIVED, "nnak-received", "NNAKs received, list entries counted singly")           \
	X(NNAK_FORWARDED, "nnak-forwarded", "NNAK packets forwarded upstream")                     \
	X(NNAK_ELIMINATED, "nnak-eliminated", "NNAKs discarded: repair state exists")              \
	X(NNAK_NO_SESSION, "nnak-no-session", "NNAKs for a TSI without source-path state")         \
	X(NCF_SENT, "ncf-sent", "NCFs sent")                                                       \
	X(NCF_RATE_LIMITED, "ncf-rate-limited", "NCFs withheld: identical NCF sent just before")   \
	X(NCF_RECEIVED, "ncf-received", "NCFs received, list entries counted singly")              \
	X(NCF_CONFIRMED, "ncf-confirmed", "NCF SQNs confirming a pending NAK")                     \
	X(NCF_ANTICIPATED, "ncf-anticipated", "NCF SQNs creating or refreshing anticipated state") \
	X(NCF_DISCARDED, "ncf-discarded", "NCF SQNs off the upstream interface, discarded")        \
	X(NCF_NO_SESSION, "ncf-no-session", "NCFs for unknown TSIs, passed through")               \
	X(NCF_ADDRESS_MISMATCH, "ncf-address-mismatch",                                            \
		"NCFs whose NAK_SRC or NAK_GRP is not the session's: discarded")                   \
	X(NCF_OUT_OF_WINDOW, "ncf-out-of-window",                                                  \
		"NCF SQNs outside the session's window: no anticipated state")                     \
	X(RDATA_FORWARDED, "rdata-forwarded", "RDATA copies forwarded on a requesting interface")  \
	X(RDATA_NO_STATE, "rdata-no-state", "RDATA copies dropped: no repair state (lack of SQN)") \
	X(RDATA_NO_INTERFACE, "rdata-no-interface",                                                \
		"RDATA copies dropped: interface not requesting")                                  \
	X(RDATA_DUPLICATE, "rdata-duplicate", "RDATA copies dropped: interface already repaired")  \
	X(RDATA_NOT_UPSTREAM, "rdata-not-upstream",                                                \
		"RDATA dropped: not from the upstream interface")                                  \
	X(RDATA_NO_SESSION, "rdata-no-session",                                                    \
		"RDATA for a TSI without source-path state, passed")                               \
	X(OFFTREE_DLR, "offtree-dlr", "unicast RDATA or NCF (off-tree DLR), dropped")              \
	X(PARITY_PASSTHROUGH, "parity-passthrough",                                                \
		"parity NAKs, NCFs, RDATA handled statelessly")                                    \
	X(REPAIR_LIMIT, "repair-state-limit",                                                      \
		"SQNs without state: max-rexmit-states reached, nothing to evict")                 \
	X(REPAIR_IF_QUOTA, "repair-state-interface-quota",                                         \
		"SQNs without state: the arrival interface holds its share of the repair states")  \
	X(REPAIR_SESSION_QUOTA, "repair-state-session-quota",                                      \
		"SQNs without state: the session holds its share of the repair states")            \
	X(REPAIR_EVICTED, "repair-state-evicted",                                                  \
		"anticipated or NNAK-created states evicted for a NAK at max-rexmit-states")       \
	X(REPAIR_EVICTED_LIVE, "repair-state-evicted-live",                                        \
		"NAKed states of the interface holding the most evicted for another's NAK")        \
	X(NAK_STATELESS, "nak-stateless",                                                          \
		"NAK SQNs confirmed and forwarded without state at a limit (not eliminated)")      \
	X(SESSION_RATE_LIMITED, "session-rate-limited",                                            \
		"SPMs of new TSIs not tracked: the arrival interface's session-rate reached")      \
	X(REPAIR_EXPIRED, "repair-state-expired", "repair states expired without RDATA")           \
	X(REPAIR_COMPLETED, "repair-state-completed",                                              \
		"repair states done: every interface repaired")                                    \
	X(REPAIR_LINGER_EXPIRED, "repair-state-linger",                                            \
		"repair states ended with interfaces unrepaired")                                  \
	X(REPAIR_CLEARED, "repair-state-cleared", "repair states removed by clear commands")       \
	X(POLL_RECEIVED, "poll-received", "POLLs received (never forwarded)")                      \
	X(POLL_NOT_UPSTREAM, "poll-not-upstream",                                                  \
		"POLLs not from the TSI's upstream interface, or for an unknown TSI: no reply")   \
	X(POLL_NO_MATCH, "poll-no-match", "POLLs whose POLL_RAND does not match our node id")   \
	X(POLL_ROUND_UNSEEN, "poll-round-unseen",                                                  \
		"POLLs of a later round without its round 0: discarded")                          \
	X(POLL_NO_REPLY, "poll-no-reply", "POLLs of sub-type DLR or unknown: no reply (not a DLR)") \
	X(POLR_SCHEDULED, "polr-scheduled", "POLRs scheduled within POLL_BO_IVL")                 \
	X(POLR_CANCELLED, "polr-cancelled", "scheduled POLRs cancelled by a new POLL_SQN")        \
	X(POLR_SENT, "polr-sent", "POLRs sent to the polling parent")                              \
	X(POLR_RECEIVED, "polr-received", "POLRs received")                                        \
	X(POLR_UNUSED, "polr-unused",                                                              \
		"POLRs to the router or redirecting POLRs not usable (no session, no poll, no "  \
		"OPT_REDIRECT, wrong interface)")                                                  \
	X(POLR_NOT_UPSTREAM, "polr-not-upstream",                                                  \
		"redirecting POLRs not from the upstream interface for the session: unused")       \
	X(DLR_BAD_ADDRESS, "dlr-bad-address",                                                      \
		"redirecting POLRs naming a DLR that cannot take NAKs (ours, multicast...): unused")\
	X(DLR_POLL_SENT, "dlr-poll-sent", "POLLs of sub-type DLR sent (off-tree DLR discovery)") \
	X(DLR_UPSTREAM_LEARNED, "dlr-upstream-learned",                                            \
		"upstream DLRs learned from multicast redirecting POLRs")                         \
	X(DLR_OFFTREE_LEARNED, "dlr-offtree-learned",                                              \
		"off-tree DLRs learned from unicast POLRs to our DLR polls")                       \
	X(NAK_REDIRECTED, "nak-redirected", "NAK packets sent to a DLR instead of upstream")      \
	X(DLR_OWN_INTERFACE, "dlr-own-interface",                                                  \
		"NAK SQNs kept from an off-tree DLR: NAKed on its own interface")                 \
	X(DLR_NCF, "dlr-ncf", "SQNs an off-tree DLR confirmed with a unicast NCF")                 \
	X(DLR_TIMEOUT, "dlr-timeout",                                                              \
		"redirected NAKs unconfirmed within NAK_RPT_IVL: DLR dropped, NAK sent upstream")\
	X(DLR_NAK_FALLBACK, "dlr-nak-fallback",                                                    \
		"SQNs the DLR NAKed itself: redirect dropped for them, NAK sent upstream")       \
	X(DLR_NNAK, "dlr-nnak", "NNAKs from an off-tree DLR, forwarded regardless of state")      \
	X(DLR_RDATA, "dlr-rdata", "off-tree DLR RDATA re-sourced onto requesting interfaces")    \
	X(DLR_CLEARED, "dlr-cleared", "learned DLRs removed by clear commands")                   \
	X(PARITY_NAK_UNIQUE, "parity-nak-unique", "parity NAK entries creating group state")      \
	X(PARITY_NAK_FORWARDED, "parity-nak-forwarded",                                            \
		"parity NAKs forwarded with the largest known packet count")                      \
	X(PARITY_NAK_ELIMINATED, "parity-nak-eliminated",                                          \
		"parity NAK entries eliminated: count covered while NAK_ELIM_IVL runs")           \
	X(PARITY_NCF, "parity-ncf", "parity NCF entries confirming or anticipating group state")  \
	X(PARITY_RDATA_FORWARDED, "parity-rdata-forwarded",                                        \
		"parity RDATA copies forwarded on an interface still owed packets")               \
	X(PARITY_RDATA_DROPPED, "parity-rdata-dropped",                                            \
		"parity RDATA copies dropped: no group state or interface owed nothing")          \
	X(NAK_SUSPENDED, "nak-suspended",                                                          \
		"NAKs not forwarded: neighbour unreachable upstream until a regular SPM")         \
	X(UNREACH_ASSUMED, "unreach-assumed",                                                      \
		"failures assumed below an interface: DUP_NAK_MAX duplicate NAKs")               \
	X(UNREACH_NCF_SENT, "unreach-ncf-sent", "unicast NCFs with OPT_NBR_UNREACH sent")         \
	X(UNREACH_RECEIVED, "unreach-received",                                                    \
		"NCFs or SPMs with OPT_NBR_UNREACH from our upstream neighbour: NAKs suspended")  \
	X(UNREACH_IGNORED, "unreach-ignored",                                                      \
		"NCFs or SPMs with OPT_NBR_UNREACH naming another neighbour, ignored")            \
	X(UNREACH_NOT_UPSTREAM, "unreach-not-upstream",                                            \
		"NCFs or SPMs with OPT_NBR_UNREACH not from the upstream neighbour on the upstream "\
		"interface: ignored")                                                              \
	X(UNREACH_SPM_SENT, "unreach-spm-sent", "special SPMs with OPT_NBR_UNREACH sent")         \
	X(NAK_BO_IVL_RAISED, "nak-bo-ivl-raised", "advertised NAK_BO_IVL doubled (duplicate NAK)")\
	X(NAK_BO_IVL_LOWERED, "nak-bo-ivl-lowered",                                                \
		"advertised NAK_BO_IVL halved (NAK_PROBE_NUM states without duplicates)")        \
	X(OPX_INVALIDATED, "opx-invalidated", "unknown options renamed to OPT_INVALID (OPX 01)")   \
	X(OPX_DISCARDED, "opx-discarded", "packets discarded for an unknown option (OPX 10)")      \
	X(OPX_RESERVED, "opx-reserved", "unknown options with reserved OPX 11, ignored")           \
	X(SEND_FAILED, "send-failed",                                                              \
		"packets the router sent out of this interface that the kernel refused (send "     \
		"buffer full, device or next hop dropping): never left")                           \
	X(UNKNOWN_TYPE, "unknown-type", "packets of types without NE processing, passed through")

enum cp_counter {
#define CP_COUNTER_ENUM(sym, name, desc) CP_C_##sym,
	CP_COUNTERS(CP_COUNTER_ENUM)
#undef CP_COUNTER_ENUM
	CP_C_COUNT
};
const char *cp_counter_name(enum cp_counter c);
const char *cp_counter_description(enum cp_counter c);

/*
 * Per-interface counters: packets in and out by type, events, and malformed packets by error.
 * in[] counts what the core is handed, so a forwarded type (SPM, RDATA, POLL) counts once per
 * copy; out[] counts copies accepted on an egress interface and packets the core originates.
 * Events are counted where they happen: on the arrival interface, on the egress interface for
 * per-copy decisions, and in cp_stats.global_ev for timers and limits.
 */
struct cp_counters {
	uint64_t in[PGM_TYPE_COUNT];
	uint64_t out[PGM_TYPE_COUNT];
	uint64_t ev[CP_C_COUNT];
	uint64_t err[PGM_ERR_COUNT];
};

/* ---- input ---- */

struct cp_packet {
	const struct pgm_ip *ip;
	const struct pgm_packet *pkt;
	int in_ifindex;
	int out_ifindex; /* forwarded copy: its egress interface; 0 = seen once (to the router) */
	cp_time_t now;
	/* Unicast, addressed beyond the router, seen before routing: a NAK a receiver sends its
	   source directly, which the kernel routes (counted, never assisted) */
	bool transit;
};

/* ---- output ---- */

enum cp_verdict {
	CP_ACCEPT,	     /* let the kernel continue with the packet unchanged */
	CP_DROP,	     /* consumed or refused */
	CP_ACCEPT_REWRITTEN, /* accept after applying struct cp_rewrite to this copy */
};

struct cp_rewrite {
	bool spm_path; /* set SPM_PATH to `path` (this copy's egress interface address) */
	struct pgm_nla path;
	bool nak_bo_ivl; /* overwrite OPT_NAK_BO_IVL (15.2.1) */
	uint32_t nak_bo_ivl_us, nak_bo_ivl_sqn;
	bool nak_bo_ivl_remove; /* or remove it: the interface advertises no value (15.2.1) */
	uint16_t opt_invalid_mask; /* bit i: option i (pgm_options order) becomes OPT_INVALID */
};

enum cp_action_type {
	CP_ACT_NCF,	    /* multicast an NCF on ifindex (IP source = the data source) */
	CP_ACT_NAK,	    /* unicast a NAK upstream from our address on ifindex */
	CP_ACT_NNAK,	    /* unicast an NNAK upstream */
	CP_ACT_POLR,	    /* unicast a POLR (issue: POLL child role) */
	CP_ACT_RDATA,	    /* re-sourced RDATA of an off-tree DLR, multicast on ifindex */
	CP_ACT_SPM,	    /* a special SPM (NBR_UNREACH) multicast on ifindex */
	CP_ACT_POLL,	    /* a POLL (sub-type DLR) multicast on ifindex, IP source = data source */
	CP_ACT_SPMR,	    /* unicast an SPMR to a source (ip_dst) from our address on ifindex */
};

/*
 * A packet to originate. When `from_packet` is set the TPDU is made from `packet`, the packet
 * being processed (a NAK forwarded intact, an NCF built from the NAK it answers, an off-tree
 * DLR's RDATA re-sourced); otherwise it is built from the fields (timer-driven repeats). The
 * action is self-contained: cp_action_tpdu() encodes it, during the emit call that hands it
 * over (`packet` points into the caller's datagram). Addresses: `ip_src` unset means the
 * router's own address on `ifindex`.
 */
struct cp_action {
	enum cp_action_type type;
	int ifindex;
	struct pgm_nla ip_src;
	struct pgm_nla ip_dst;
	bool router_alert;
	bool from_packet;
	const struct pgm_packet *packet; /* from_packet: what the TPDU is made from */
	/* UDP encapsulation, copied from the session or the NAK */
	bool udp;
	uint16_t udp_sport, udp_dport;
	/* the TPDU's fields when built */
	struct pgm_tsi tsi;
	uint16_t data_dport;
	uint32_t sqn;
	unsigned list_count;
	uint32_t list[PGM_MAX_NAK_LIST];
	struct pgm_nla nak_src, nak_grp;
	bool parity;
	uint32_t pkt_cnt;
	/* NCF options */
	bool nak_bo_ivl;
	uint32_t nak_bo_ivl_us, nak_bo_ivl_sqn;
	/* from_packet NAK/NNAK forwarded: unknown OPX-01 options to rename (as cp_rewrite) */
	uint16_t opt_invalid_mask;
	/* from_packet NAK/NNAK forwarded: write nak_src (the session's source) into NAK_SRC */
	bool nak_src_rewrite;
	/* from_packet parity NAK forwarded: NAK_PKT_CNT becomes pkt_cnt under group size tgs */
	bool pkt_cnt_rewrite;
	uint32_t tgs;
	/* NCF: OPT_NBR_UNREACH and OPT_PATH_NLA = path (15.3); SPM: OPT_NBR_UNREACH */
	bool nbr_unreach;
	/* SPM: SPM_PATH; POLL: POLL_PATH; NCF with nbr_unreach: OPT_PATH_NLA */
	struct pgm_nla path;
	/* SPM */
	uint32_t trail, lead;
	/* POLL (sqn = POLL_SQN) and POLR (sqn = POLR_SQN, poll_round) */
	uint16_t poll_round, poll_s_type;
	uint32_t poll_bo_ivl_us, poll_rand, poll_mask;
};

/* The caller's sink for originated packets; called during cp_packet and cp_timers. It must not
 * call back into the core. */
typedef void (*cp_emit_fn)(void *ctx, const struct cp_action *action);

/* Debug events (state transitions), one line each, for `debug ip pgm router events|timers`. */
enum cp_log_kind { CP_LOG_EVENT, CP_LOG_TIMER, CP_LOG_PACKET };
typedef void (*cp_log_fn)(void *ctx, enum cp_log_kind kind, const char *line);

struct cp_result {
	enum cp_verdict verdict;
	struct cp_rewrite rewrite;
};

struct cp;

struct cp *cp_new(const struct cp_config *cfg, cp_emit_fn emit, void *emit_ctx);
void cp_free(struct cp *cp);
void cp_set_log(struct cp *cp, cp_log_fn log, void *ctx, unsigned kinds_mask /* 1 << kind */);
void cp_set_config(struct cp *cp, const struct cp_config *cfg);
/*
 * Routes (7.1, 10): the incoming (RPF) interface of the multicast route a datagram from src to
 * group follows, as the data plane mirrors it, or 0 when none is known. The core asks only when
 * a session's SPM arrives off its upstream interface: the answer says whether the path moved.
 * Without it (NULL) the upstream interface moves only after the session's SPMs fell silent.
 */
typedef int (*cp_rpf_fn)(void *ctx, const struct pgm_nla *src, const struct pgm_nla *group);
void cp_set_rpf(struct cp *cp, cp_rpf_fn rpf, void *ctx);
/*
 * The sources of the mirrored multicast routes to group that leave by ifindex and come in by
 * another interface: at most max of them in srcs, how many returned. The core asks when a NAK
 * names a TSI it has no SPM of (a restarted daemon): it solicits that SPM from those sources
 * with an SPMR (13.6). NULL: nothing is solicited, the NAK waits for the next SPM.
 */
typedef unsigned (*cp_route_sources_fn)(void *ctx, const struct pgm_nla *group, int ifindex,
	struct pgm_nla *srcs, unsigned max);
void cp_set_route_sources(struct cp *cp, cp_route_sources_fn fn, void *ctx);
/* Reseed the core's random source (POLR back-off, POLL_RAND) and draw a new RAND_NODE_ID; the
   core seeds itself from the kernel, tests seed it to be deterministic. */
void cp_set_random_seed(struct cp *cp, uint64_t seed);
uint32_t cp_node_id(const struct cp *cp); /* RAND_NODE_ID (14.5) */
const struct cp_config *cp_get_config(const struct cp *cp);

/* Interfaces. An interface is known once added; router assist is enabled per interface. */
int cp_if_add(struct cp *cp, int ifindex, const char *name); /* 0, or -1 when the table is full */
void cp_if_remove(struct cp *cp, int ifindex);
/* The interface's IPv4 address (an IPv6 one: its global IPv6 address); afi 0 or NULL = no IPv4. */
void cp_if_set_addr(struct cp *cp, int ifindex, const struct pgm_nla *addr);
/* Its IPv6 addresses: a global (or unique local) one and a link-local one, NULL or afi 0 for
   none. Which names the router to whom: cp_if_addr_for (control/cp_internal.h). */
void cp_if_set_addr6(
	struct cp *cp, int ifindex, const struct pgm_nla *global, const struct pgm_nla *link_local);
int cp_if_set_assist(struct cp *cp, int ifindex, bool enabled); /* -1: more than 64 enabled */
/* cfg NULL: back to the global defaults (cp_config.if_defaults). */
void cp_if_set_config(struct cp *cp, int ifindex, const struct cp_if_config *cfg);

/* Process one packet (or one forwarded copy of it). */
void cp_packet(struct cp *cp, const struct cp_packet *in, struct cp_result *out);
/* Count a malformed packet received on ifindex (the data plane's parse errors). */
void cp_count_error(struct cp *cp, int ifindex, enum pgm_err err);
/* A packet the router sent out of ifindex that the kernel refused (Sent counted it). */
void cp_count_send_failed(struct cp *cp, int ifindex);
/*
 * Run every timer due at `now` (deadline <= now); returns cp_next_deadline(). The deadline is a
 * time at or before the earliest pending timer: exact when that timer is due within the wheel's
 * current 64 µs block, otherwise the start of the timing-wheel slot holding it, so a far timer
 * may take a few early (harmless) cp_timers calls, each costing a bounded amount of work.
 * UINT64_MAX when nothing is pending.
 * When the clock crosses a boundary of a far wheel level holding many timers (a million repair
 * states in one 16.8 s slot), one call moves a bounded number of them (CP_WHEEL_CASCADE_BUDGET
 * per wheel) and the deadline returned is the time of this run (not after `now`): call again at
 * once, with the same time or a later one. Timers due meanwhile run late by at most the time
 * those calls take; nothing else on the thread waits for the whole move.
 */
cp_time_t cp_timers(struct cp *cp, cp_time_t now);
cp_time_t cp_next_deadline(struct cp *cp);

/* Clear operations. `group` NULL = all. */
void cp_clear_counters(struct cp *cp, int ifindex /* 0 = all */);
size_t cp_clear_repair_states(struct cp *cp, const struct pgm_nla *group);
/* Forget learned DLRs whose address is `dlr` (NULL = all); returns how many. */
size_t cp_clear_dlrs(struct cp *cp, const struct pgm_nla *dlr);

/* ---- state views for show commands ---- */

struct cp_if_view {
	int ifindex;
	char name[CP_IFNAME_LEN];
	bool assist;
	struct pgm_nla addr;	   /* IPv4 */
	struct pgm_nla addr6, ll6; /* IPv6: global, link-local */
	struct cp_if_config cfg;
	const struct cp_counters *counters;
	size_t repair_states; /* charged to it: created by its NAKs, NNAKs or NCFs */
};
/* A session's key: an IPv4 and an IPv6 session may share a TSI (GSI and source port). */
struct cp_session_key {
	struct pgm_tsi tsi;
	uint16_t afi; /* PGM_AFI_IP or PGM_AFI_IP6: its datagrams' family */
};

struct cp_session_view {
	struct pgm_tsi tsi;
	uint16_t afi; /* PGM_AFI_IP or PGM_AFI_IP6 */
	uint16_t data_dport;
	struct pgm_nla source, group;
	struct pgm_nla upstream;   /* SPM_PATH of the last in-sequence SPM */
	int upstream_ifindex;
	uint32_t spm_sqn, trail, lead;
	uint8_t last_ttl;
	bool udp;
	cp_time_t created, last_spm;
	cp_time_t expires; /* 0 = never */
	size_t repair_states;
	uint32_t parity_tgs; /* OPT_PARITY_PRM transmission group size, 0 = none seen */
	uint32_t curr_tgsize; /* OPT_CURR_TGSIZE last seen, 0 = none */
	size_t parity_states; /* of repair_states, per transmission group (11.6) */
	/* DLRs (9.5.3); afi 0 = none known */
	struct pgm_nla dlr_upstream, dlr_offtree;
	int dlr_offtree_ifindex;
	bool dlr_upstream_parity, dlr_offtree_parity;
	cp_time_t dlr_upstream_learned, dlr_offtree_learned;
	cp_time_t dlr_poll_sent; /* our last DLR poll, 0 = none */
	/* neighbour unreachable (15.3) */
	bool naks_suspended;	 /* OPT_NBR_UNREACH from upstream: NAKs not forwarded */
	uint64_t unreach_mask;	 /* interface slots answered with unicast NCFs */
	uint64_t transit_mask;	 /* interface slots NAKs to the source crossed us from */
	bool polr_pending;	 /* child role: a POLR is scheduled */
	cp_time_t polr_due;
	/* Per-TSI counters (err[] unused; valid only during the callback). */
	const struct cp_counters *counters;
};
enum cp_repair_phase {
	CP_PHASE_PENDING,     /* forwarded upstream, waiting for an NCF */
	CP_PHASE_OUTSTANDING, /* confirmed, waiting for RDATA */
	CP_PHASE_FORWARDING,  /* RDATA copies being forwarded */
};
/* Times in views are absolute, on the clock the caller passes in (remaining = time - now). */
struct cp_repair_view {
	uint32_t sqn;
	enum cp_repair_phase phase;
	bool eliminating; /* a duplicate NAK arriving now would be discarded */
	bool anticipated, nnak_created;
	bool parity;	       /* per transmission group: sqn is the TG_SQN (11.6) */
	uint32_t pkt_cnt;      /* parity: the largest known packet count (1 = one packet) */
	int dlr;	       /* NAK sent to: 0 upstream, 1 the upstream DLR, 2 the off-tree DLR */
	uint64_t if_mask;	  /* bit per interface slot, see cp_if_slot_ifindex */
	uint64_t repaired_mask;	  /* FORWARDING: interfaces that had their RDATA copy */
	cp_time_t rpt_next;	  /* next NAK repeat, 0 = none */
	cp_time_t rpt_end;	  /* NAK_RPT_IVL end, 0 = none */
	cp_time_t rdata_end;	  /* NAK_RDATA_IVL end (FORWARDING: linger end), 0 = none */
	cp_time_t elim_end;	  /* NAK_ELIM_IVL end, 0 = none */
	cp_time_t created;
};

typedef void (*cp_if_cb)(void *ctx, const struct cp_if_view *v);
typedef void (*cp_session_cb)(void *ctx, const struct cp_session_view *v);
typedef void (*cp_repair_cb)(void *ctx, const struct cp_repair_view *v);

void cp_foreach_if(const struct cp *cp, cp_if_cb cb, void *ctx);
bool cp_get_if(const struct cp *cp, int ifindex, struct cp_if_view *v);
/* Whether router assist is enabled on ifindex: cp_get_if()'s `assist`, without the view. */
bool cp_if_assisted(const struct cp *cp, int ifindex);
/* The address cp_if_set_addr() gave ifindex: cp_get_if()'s `addr`, without the view. */
bool cp_if_addr(const struct cp *cp, int ifindex, struct pgm_nla *addr);
int cp_if_slot_ifindex(const struct cp *cp, unsigned slot);
/* Sessions in a stable order (group, source, TSI); `group` NULL = all. */
void cp_foreach_session(const struct cp *cp, const struct pgm_nla *group, cp_session_cb cb,
	void *ctx);
/* For output in slices: the keys of cp_foreach_session's sessions in its order (malloc'ed; NULL
   when there are none or no memory, *n 0), then each one's view while it still exists. */
struct cp_session_key *cp_session_keys(
	const struct cp *cp, const struct pgm_nla *group, size_t *n);
bool cp_session_view_key(
	const struct cp *cp, const struct cp_session_key *key, cp_session_cb cb, void *ctx);
/* Repair states of one session in SQN order (serial arithmetic from the trailing edge). */
void cp_foreach_repair(const struct cp *cp, const struct pgm_tsi *tsi, uint16_t afi,
	cp_repair_cb cb, void *ctx);

struct cp_stats {
	size_t sessions, repair_states;
	size_t bytes; /* memory held by tables and entries */
	size_t session_bytes, repair_bytes; /* the parts held for sessions and for repair states */
	size_t session_size, repair_size;   /* sizeof one entry */
	uint64_t global_ev[CP_C_COUNT]; /* events not tied to an interface (timers, limits) */
	uint64_t unexpected_events; /* repair state events no transition expected: ignored */
	struct cp_limits limits;    /* in force */
	/* the most repair states charged to one interface (ifindex, 0 = none) and held by one
	   session, against limits.if_quota and limits.session_quota */
	size_t if_states_most, session_states_most;
	int if_states_most_ifindex;
};
void cp_get_stats(const struct cp *cp, struct cp_stats *st);

const char *cp_phase_name(enum cp_repair_phase p);

/*
 * For tests and fuzzers (control/check.c): whether the tables hold together: pools' free lists
 * and live counts against the hash tables and the sessions' lists, every timer on a wheel owned
 * by a live entry, no state naming a slot no interface holds, each parity state its own counts.
 * false with the first violation in `why`. A pass over everything held: not for the packet path.
 */
bool cp_check(const struct cp *cp, char *why, size_t len);

/* ---- encoding actions (control/encode.c) ---- */

/*
 * The TPDU of an action, built with the codec: from its packet when from_packet (a NAK copied
 * with its rewrites, an NCF made from the NAK), else from its fields. Returns the length, or 0
 * when it cannot be built (cap too small, a from_packet action without its packet).
 */
size_t cp_action_tpdu(const struct cp_action *a, uint8_t *tpdu, size_t cap);
/* "NCF", "NAK", ... for debug lines. */
const char *cp_action_name(enum cp_action_type type);

#endif /* PGMROUTER_CONTROL_H */

/*
 * Internals of the control plane, shared by its files:
 *  - table.c    chunked entry pools indexed by 32-bit ids, and seeded hash tables over them;
 *  - wheel.c    the hierarchical timing wheel (one node per entry, holding its earliest deadline);
 *  - control.c  the object, configuration, counters, logging and the packet dispatch;
 *  - fsm.c      the repair state machine: one table of the transitions of repair state;
 *  - interface.c, session.c (SPM, 7.1), repair.c (repair state and its timers), nak.c (7.2-7.4,
 *    9.3.3, NNAK 9.5.3.2), ncf.c (7.3, 7.5), rdata.c (7.8), dlr.c (POLL child role 14.5, DLRs
 *    9.5.3), parity.c (11.6), unreach.c (NAK_BO_IVL 15.2, NBR_UNREACH 15.3), view.c (show and
 *    clear), limits.c (the memory budget, shares, eviction, the new-session rate).
 *
 * Entries refer to each other by 32-bit pool ids, not pointers: a repair state is 128 bytes with
 * its hash link, session link, eviction link, timer node and all its timers.
 */
#ifndef PGMROUTER_CP_INTERNAL_H
#define PGMROUTER_CP_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/control.h"

#define CP_NIL UINT32_MAX

struct cp_repair;
/* A repair state used as the other kind (repair.c): a broken invariant, aborts. */
void cp_repair_kind_broken(const struct cp_repair *r, const char *what)
	__attribute__((noreturn, cold));

/* ---- pools: entries of one size in chunks, addressed by id ---- */

/* A chunk holds up to CP_POOL_CHUNK entries and at most CP_POOL_CHUNK_BYTES: small enough for
   malloc's heap (not an mmap of its own, unmapped again when the pool empties) and for a router
   with a few sessions to hold a few KB, not the 630 KB of 1024 sessions. */
#define CP_POOL_CHUNK_SHIFT 10
#define CP_POOL_CHUNK	    (1u << CP_POOL_CHUNK_SHIFT)
#define CP_POOL_CHUNK_BYTES (64u << 10)
#define CP_POOL_MAX_ID	    0x7fffffffu /* ids stay below the wheel's sentinel ids */

struct cp_pool {
	size_t elem_size;
	size_t link_offset;   /* a uint32_t in the entry that links free entries */
	unsigned chunk_shift; /* a chunk holds 1 << chunk_shift entries */
	unsigned char **chunks;
	uint32_t nchunks, chunk_cap;
	uint32_t fresh;	    /* ids below this have been handed out at least once */
	uint32_t free_head; /* freed ids, reused first */
	uint32_t live;
};

void cp_pool_init(struct cp_pool *pool, size_t elem_size, size_t link_offset);
void cp_pool_destroy(struct cp_pool *pool);
/* A zeroed entry, or CP_NIL when memory runs out. */
uint32_t cp_pool_alloc(struct cp_pool *pool);
void cp_pool_free(struct cp_pool *pool, uint32_t id);
size_t cp_pool_bytes(const struct cp_pool *pool);

static inline void *cp_pool_at(const struct cp_pool *pool, uint32_t id)
{
	return pool->chunks[id >> pool->chunk_shift] +
	       (size_t)(id & ((1u << pool->chunk_shift) - 1)) * pool->elem_size;
}

/* ---- hashing: SipHash-1-3 over one 64-bit word, keyed at random per core ---- */

struct cp_hash_key {
	uint64_t k0, k1;
};
uint64_t cp_hash64(const struct cp_hash_key *key, uint64_t word);

/*
 * Chained hash table of pool ids: buckets hold the first id, entries hold the next; the callbacks
 * give an entry's link and hash. When it holds more entries than buckets it doubles, moving the
 * old buckets' chains a few at a time with each insert and remove, so no single packet pays for
 * rehashing a million entries. While it moves, a key lives in the old array if its old bucket
 * has not been moved yet, else in the new one.
 */
struct cp_htab {
	uint32_t *buckets;
	uint32_t mask;
	uint32_t *old; /* the previous array while migrating, else NULL */
	uint32_t old_mask;
	uint32_t migrated; /* old buckets below this have been moved */
	uint32_t count;
};
struct cp_htab_ops {
	uint32_t *(*link)(void *ctx, uint32_t id);
	uint64_t (*hash)(void *ctx, uint32_t id);
	void *ctx;
};
int cp_htab_init(struct cp_htab *tab, uint32_t nbuckets);
void cp_htab_destroy(struct cp_htab *tab);
void cp_htab_insert(struct cp_htab *tab, const struct cp_htab_ops *ops, uint32_t id, uint64_t hash);
void cp_htab_remove(struct cp_htab *tab, const struct cp_htab_ops *ops, uint32_t id, uint64_t hash);
size_t cp_htab_bytes(const struct cp_htab *tab);

static inline uint32_t *cp_htab_slot(const struct cp_htab *tab, uint64_t hash)
{
	if (tab->old != NULL && (hash & tab->old_mask) >= tab->migrated)
		return &tab->old[hash & tab->old_mask];
	return &tab->buckets[hash & tab->mask];
}

static inline uint32_t cp_htab_first(const struct cp_htab *tab, uint64_t hash)
{
	return *cp_htab_slot(tab, hash);
}

/* Every chain: for (i = 0; i < cp_htab_heads(t); i++) walk from cp_htab_head(t, i). */
static inline uint32_t cp_htab_heads(const struct cp_htab *tab)
{
	return tab->mask + 1 + (tab->old != NULL ? tab->old_mask + 1 : 0);
}

static inline uint32_t cp_htab_head(const struct cp_htab *tab, uint32_t i)
{
	if (i > tab->mask)
		return tab->old[i - tab->mask - 1];
	if (tab->old != NULL && (i & tab->old_mask) >= tab->migrated)
		return CP_NIL; /* not in use (nor cleared) before its old bucket moves */
	return tab->buckets[i];
}

/* ---- hierarchical timing wheel ---- */

/*
 * 11 levels of 64 slots over the 64-bit microsecond clock. An entry sits at the level of the
 * highest 6-bit digit in which its deadline differs from the wheel's time, so level 0 is exact
 * to the microsecond. Advancing the wheel moves the passed slots' entries down a level or onto
 * the expired list; an entry moves at most once per level, so the cost per expiring entry does
 * not depend on how many entries the wheel holds. Occupancy bitmaps skip empty slots.
 *
 * The move (the cascade) is bounded per call: the passed slots' lists go onto a backlog list
 * (lower levels first: due sooner) and one cp_wheel_advance() re-places at most cascade_budget
 * of its entries, the rest on the next calls; while the backlog is not empty cp_wheel_next()
 * answers the wheel's time, so the caller comes back at once. A million entries in one level-4
 * slot (2^24 us) are then a few hundred short calls instead of one of tens of ms. An entry due
 * while the backlog drains fires late by at most the drain time (the calls it takes to reach it);
 * an entry on the backlog can be rescheduled or cancelled as on any list.
 */
#define CP_WHEEL_BITS	       6
#define CP_WHEEL_SLOTS	       64
#define CP_WHEEL_LEVELS	       11
#define CP_WHEEL_SENTINELS     (CP_WHEEL_LEVELS * CP_WHEEL_SLOTS + 2)
#define CP_WHEEL_SENTINEL_BASE 0xffff0000u
#define CP_WHEEL_BACKLOG       (CP_WHEEL_LEVELS * CP_WHEEL_SLOTS + 1) /* its sentinel's index */
/*
 * Entries re-placed per cp_wheel_advance() at most. A million entries moved in one call took
 * 23 ms (23 ns each); 4096 per call, about 0.1 ms at that cost, measured 0.2 ms at most per
 * cp_timers call (bench_control --cascade, tests/bench/README section 4). A build may override it.
 */
#ifndef CP_WHEEL_CASCADE_BUDGET
#define CP_WHEEL_CASCADE_BUDGET 4096
#endif

struct cp_tnode {
	uint32_t next, prev; /* CP_NIL when not scheduled */
	cp_time_t deadline;
};

struct cp_wheel {
	cp_time_t now;
	uint64_t pending[CP_WHEEL_LEVELS];
	struct cp_tnode sentinel[CP_WHEEL_SENTINELS]; /* slot lists, expired list, scratch */
	struct cp_tnode *(*node)(void *ctx, uint32_t id);
	void *ctx;
	size_t count; /* scheduled entries, expired ones included */
	/* cp_wheel_next()'s answer while next_valid: lowered as entries are placed, recomputed
	   after the wheel advances or a list it may have come from empties */
	cp_time_t next;
	bool next_valid;
	uint32_t cascade_budget; /* CP_WHEEL_CASCADE_BUDGET; UINT32_MAX: unbounded (benchmarks) */
};

void cp_wheel_init(
	struct cp_wheel *wheel, struct cp_tnode *(*node)(void *ctx, uint32_t id), void *ctx);
/* (Re)schedules id at deadline; a deadline not after the wheel's time expires at once. */
void cp_wheel_schedule(struct cp_wheel *wheel, uint32_t id, cp_time_t deadline);
void cp_wheel_cancel(struct cp_wheel *wheel, uint32_t id); /* no-op when not scheduled */
/*
 * Moves every entry with deadline <= now to the expired list, but re-places at most
 * cascade_budget entries of the cascade's backlog per call: while cp_wheel_cascading(), entries
 * due may still sit on the backlog, and further calls (at now or later) take them on.
 */
void cp_wheel_advance(struct cp_wheel *wheel, cp_time_t now);
/* Takes the next expired entry off the wheel, or CP_NIL. */
uint32_t cp_wheel_pop_expired(struct cp_wheel *wheel);
/* A time at or before the earliest deadline (the wheel's time while cascading); UINT64_MAX
   when empty. */
cp_time_t cp_wheel_next(struct cp_wheel *wheel);

/* A cascade's backlog is waiting for the next cp_wheel_advance(). */
static inline bool cp_wheel_cascading(const struct cp_wheel *w)
{
	return w->sentinel[CP_WHEEL_BACKLOG].next != CP_WHEEL_SENTINEL_BASE + CP_WHEEL_BACKLOG;
}

static inline void cp_tnode_init(struct cp_tnode *n)
{
	n->next = n->prev = CP_NIL;
	n->deadline = 0;
}

static inline bool cp_tnode_scheduled(const struct cp_tnode *n)
{
	return n->next != CP_NIL;
}

/* ---- counters kept per TSI: a subset, expanded into struct cp_counters for views ---- */

#define CP_TSI_TYPES(X) X(SPM) X(POLL) X(POLR) X(ODATA) X(RDATA) X(NAK) X(NNAK) X(NCF)
#define CP_TSI_EVENTS(X)                                                                           \
	X(SPM_FORWARDED)                                                                           \
	X(SPM_BAD_SQN)                                                                             \
	X(SPM_DUPLICATE_COPY)                                                                      \
	X(SPM_UPSTREAM_CHANGED)                                                                    \
	X(NAK_RECEIVED)                                                                            \
	X(NAK_UNIQUE)                                                                              \
	X(NAK_FORWARDED)                                                                           \
	X(NAK_RETRANSMITTED)                                                                       \
	X(NAK_ELIMINATED)                                                                          \
	X(NAK_CROSSED_REPAIR)                                                                      \
	X(NAK_RETRY_EXPIRED)                                                                       \
	X(NAK_OUT_OF_WINDOW)                                                                       \
	X(NAK_UPSTREAM_INTERFACE)                                                                  \
	X(NAK_ADDRESS_MISMATCH)                                                                    \
	X(NNAK_RECEIVED)                                                                           \
	X(NNAK_FORWARDED)                                                                          \
	X(NNAK_ELIMINATED)                                                                         \
	X(NCF_SENT)                                                                                \
	X(NCF_RATE_LIMITED)                                                                        \
	X(NCF_RECEIVED)                                                                            \
	X(NCF_CONFIRMED)                                                                           \
	X(NCF_ANTICIPATED)                                                                         \
	X(NCF_DISCARDED)                                                                           \
	X(RDATA_FORWARDED)                                                                         \
	X(RDATA_NO_STATE)                                                                          \
	X(RDATA_NO_INTERFACE)                                                                      \
	X(RDATA_DUPLICATE)                                                                         \
	X(RDATA_NOT_UPSTREAM)                                                                      \
	X(PARITY_PASSTHROUGH)                                                                      \
	X(REPAIR_LIMIT)                                                                            \
	X(REPAIR_EXPIRED)                                                                          \
	X(REPAIR_COMPLETED)                                                                        \
	X(REPAIR_LINGER_EXPIRED)                                                                   \
	X(REPAIR_CLEARED)                                                                          \
	X(POLL_RECEIVED)                                                                           \
	X(POLR_RECEIVED)                                                                           \
	X(NAK_REDIRECTED)                                                                          \
	X(DLR_TIMEOUT)                                                                             \
	X(PARITY_NAK_FORWARDED)                                                                    \
	X(NAK_SUSPENDED)                                                                           \
	X(NAK_TRANSIT)

/* clang-format off: the X-macro lists confuse its enum indentation */
enum cp_tsi_type {
#define CP_TSI_TYPE_ENUM(t) CP_TSI_T_##t,
	CP_TSI_TYPES(CP_TSI_TYPE_ENUM)
#undef CP_TSI_TYPE_ENUM
		CP_TSI_TYPE_COUNT
};
enum cp_tsi_event {
#define CP_TSI_EVENT_ENUM(sym) CP_TSI_E_##sym,
	CP_TSI_EVENTS(CP_TSI_EVENT_ENUM)
#undef CP_TSI_EVENT_ENUM
		CP_TSI_EVENT_COUNT
};
/* clang-format on */
struct cp_tsi_counters {
	uint64_t in[CP_TSI_TYPE_COUNT];
	uint64_t out[CP_TSI_TYPE_COUNT];
	uint64_t ev[CP_TSI_EVENT_COUNT];
};
/* 1 + index into the per-TSI arrays, or 0 when not kept per TSI. */
extern const uint8_t cp_tsi_type_slot[PGM_TYPE_COUNT];
extern const uint8_t cp_tsi_event_slot[CP_C_COUNT];
void cp_tsi_counters_expand(const struct cp_tsi_counters *tc, struct cp_counters *out);

/* ---- interfaces ---- */

struct cp_iface {
	int ifindex;
	char name[CP_IFNAME_LEN];
	bool assist;
	bool has_cfg; /* cfg is its own; otherwise the global if_defaults apply */
	int slot;     /* 0..63 while assisted, -1 otherwise */
	struct pgm_nla addr;	   /* IPv4 */
	struct pgm_nla addr6, ll6; /* IPv6: global (or unique local), link-local */
	struct cp_if_config cfg;
	struct cp_counters counters;
	/* 15.2 tuning: the NAK_BO_IVL advertised now (0 = the configured one) and the new repair
	   states since the last duplicate NAK here */
	uint32_t bo_ivl_cur;
	uint32_t bo_probe;
	cp_time_t session_tat; /* limits.c: the new-session bucket (its theoretical arrival) */
	cp_time_t spmr_tat;    /* nak.c: the bucket of SPMRs for unknown TSIs */
};

/* ---- sessions (per-TSI source-path state, 7.1) ---- */

#define CP_SESSION_UDP	     0x01 /* SPMs arrive UDP-encapsulated */
#define CP_SESSION_NAK_UDP   0x02 /* the last NAK came UDP-encapsulated (ports below) */
#define CP_SESSION_SUSPENDED 0x04 /* OPT_NBR_UNREACH from upstream: NAKs not forwarded (15.3) */
#define CP_SESSION_IPV6	     0x08 /* an IPv6 session: part of the key (cp_session_afi) */

/* A DLR learned for a TSI (9.5.3); afi 0 = none. */
struct cp_dlr {
	struct pgm_nla addr;
	int ifindex; /* where it answered (off-tree) or the upstream interface */
	bool parity; /* OPT_PARITY in its POLR: it can send FEC repairs (9.5.2) */
	cp_time_t learned;
};

/* What few sessions need: DLRs, the poll child role, failure containment. Allocated on first
 * use, freed with the session. */
struct cp_session_ext {
	struct cp_dlr up, off;
	uint32_t dlr_poll_sqn;
	cp_time_t dlr_poll_sent; /* 0 = never */
	/* child role (14.5): the last POLL of our parent and the POLR it scheduled */
	struct cp_tnode polr_timer;
	uint32_t poll_sqn;
	uint16_t poll_round;
	bool poll_seen, poll_round0_seen;
	struct pgm_nla polr_dst;
	int polr_ifindex;
	bool polr_udp;
	uint16_t polr_udp_sport, polr_udp_dport;
	/* 15.3: interface slots whose NAKs get unicast NCFs with OPT_NBR_UNREACH */
	uint64_t unreach_mask;
	/* interface slots with receivers that NAK the source directly, past this router */
	uint64_t transit_mask;
	uint32_t curr_tgsize; /* OPT_CURR_TGSIZE (11.6), 0 = the full group */
};

struct cp_session {
	uint32_t hash_next;
	uint32_t repair_head; /* repair states of this TSI, linked by sess_next/sess_prev */
	uint32_t repair_count;
	uint8_t flags;
	uint8_t last_ttl;
	uint16_t data_dport;
	struct cp_tnode timer; /* expiry; set lazily, checked against last_spm when due */
	uint64_t tsi_key;      /* the TSI packed in one word: the hash key */
	struct pgm_tsi tsi;
	uint32_t spm_sqn, trail, lead;
	uint32_t parity_tgs;
	int upstream_ifindex;
	uint16_t udp_sport, udp_dport;	       /* of the SPMs: group traffic */
	uint16_t nak_udp_sport, nak_udp_dport; /* of the last encapsulated NAK */
	uint32_t repair_tail;		       /* the oldest of its repair states */
	uint64_t spm_copy_mask;		       /* egress slots that had a copy of spm_sqn */
	struct pgm_nla source, group, upstream;
	cp_time_t created, last_spm;
	struct cp_session_ext *ext;
	struct cp_tsi_counters counters;
};

/* ---- repair state, per (TSI, SQN) (7.2-7.8) ---- */

#define CP_REPAIR_ANTICIPATED 0x01 /* created by an unsolicited NCF */
#define CP_REPAIR_NNAK	      0x02 /* created by an NNAK: never eliminates a real NAK */
#define CP_REPAIR_DLR_UP      0x04 /* the NAK went to the TSI's upstream DLR (9.5.3.2) */
#define CP_REPAIR_DLR_OFF     0x08 /* the NAK went to the TSI's off-tree DLR */
#define CP_REPAIR_NO_DLR      0x10 /* a DLR failed this SQN: upstream only from now on */
#define CP_REPAIR_PARITY      0x20 /* per transmission group (11.6): sqn is the TG_SQN */
#define CP_REPAIR_HELD	      0x40 /* repaired, kept for the crossing window (nak.c) */
#define CP_REPAIR_DLR	      (CP_REPAIR_DLR_UP | CP_REPAIR_DLR_OFF)

/* 7.2: the interfaces that had an NCF for the state since `stamp` (ncf.c's storm window) */
struct cp_repair_ncf {
	uint64_t mask;
	cp_time_t stamp;
};

struct cp_repair {
	uint32_t hash_next;
	uint32_t session;
	uint32_t sqn;
	uint8_t phase; /* enum cp_repair_phase */
	uint8_t flags;
	uint8_t dup_slot;  /* 15.2/15.3: the interface whose duplicate NAKs dup_count counts */
	uint8_t dup_count; /* (one interface per state keeps the state small) */
	uint32_t sess_next, sess_prev;
	struct cp_tnode timer;	/* the earliest of the deadlines below */
	uint64_t if_mask;	/* interfaces that NAKed (slots) */
	uint64_t repaired_mask; /* interfaces that had their RDATA copy */
	/* 128 bytes keep the hash-chain fields of every entry in one cache line; parity state,
	 * which does not rate-limit its NCFs, keeps its counts' pool id where NCF marks are. Only
	 * through cp_repair_ncf() and cp_repair_parity_id(), which check the kind: an interface
	 * leaving once cleared its bit in parity ids taken for NCF masks. */
	union {
		struct cp_repair_ncf ncf; /* not CP_REPAIR_PARITY */
		uint32_t parity_id;	  /* CP_REPAIR_PARITY: its struct cp_parity */
	} kind_;
	cp_time_t rpt_next, rpt_end; /* PENDING */
	cp_time_t rdata_end;	     /* OUTSTANDING: NAK_RDATA_IVL; FORWARDING: linger */
	cp_time_t elim_end;	     /* OUTSTANDING: NAK_ELIM_IVL (0 once it ran out) */
	cp_time_t created;
	/* limits.c: on cp->evictable (nobody NAKed it: anticipated, NNAK-created) or its owner's
	   live list, oldest first; the owner is the interface slot whose packet created it */
	uint32_t evict_next, evict_prev;
	uint8_t owner; /* slot, CP_OWNER_NONE for none */
	bool evictable;
	/* nak.c: the IP sources that NAKed this SQN here, a 32-bit Bloom filter (two bits a
	   source, keyed hash): in the padding, so the entry stays 128 bytes */
	uint32_t nak_srcs;
};
#define CP_OWNER_NONE CP_MAX_INTERFACES
_Static_assert(sizeof(struct cp_repair) == 128,
	"repair state: 128 bytes (the hash-chain fields in one cache line)");

/* The NCF marks of non-parity state, the counts' id of parity state: the wrong kind is a broken
 * invariant, caught here rather than as another state's corrupted counts. */
static inline struct cp_repair_ncf *cp_repair_ncf(struct cp_repair *r)
{
	if ((r->flags & CP_REPAIR_PARITY) != 0)
		cp_repair_kind_broken(r, "NCF marks of parity state");
	return &r->kind_.ncf;
}

static inline uint32_t cp_repair_parity_id(const struct cp_repair *r)
{
	if ((r->flags & CP_REPAIR_PARITY) == 0)
		cp_repair_kind_broken(r, "parity counts of non-parity state");
	return r->kind_.parity_id;
}

static inline void cp_repair_set_parity_id(struct cp_repair *r, uint32_t id)
{
	r->flags |= CP_REPAIR_PARITY;
	r->kind_.parity_id = id;
}

/* Parity repair state's counts (11.6), its own allocation: counts are packets owed (the NAK's
 * 0-based PKT_CNT + 1), per interface slot. */
struct cp_parity {
	uint32_t link;
	uint32_t last_rdata_sqn; /* the parity RDATA whose copies are being counted */
	uint8_t largest;	 /* the largest known packet count */
	bool have_rdata;
	uint8_t count[CP_MAX_INTERFACES];
};

/* ---- the repair state machine (fsm.c) ---- */

/*
 * Its phases: the three of enum cp_repair_phase, NNAK (OUTSTANDING state an NNAK created,
 * flagged CP_REPAIR_NNAK: it eliminates no NAK and lives NAK_ELIM_IVL, 9.5.3.2), REPAIRED
 * (FORWARDING state whose every interface had its copy, flagged CP_REPAIR_HELD: kept for the
 * crossing window, it eliminates only NAKs that crossed the repair, nak.c) and NONE (no
 * state). Rows name the phases they apply in as a mask of CP_FSM_IN(phase).
 */
enum cp_fsm_phase {
	CP_FSM_PENDING = CP_PHASE_PENDING,
	CP_FSM_OUTSTANDING = CP_PHASE_OUTSTANDING,
	CP_FSM_FORWARDING = CP_PHASE_FORWARDING,
	CP_FSM_NNAK,
	CP_FSM_REPAIRED,
	CP_FSM_NONE,
	CP_FSM_PHASES,
	CP_FSM_SAME = CP_FSM_PHASES, /* as a row's next phase: the one it was in */
};
#define CP_FSM_IN(phase) (1u << (phase))

static inline unsigned cp_fsm_phase(const struct cp_repair *r)
{
	if (r->phase == CP_PHASE_OUTSTANDING && (r->flags & CP_REPAIR_NNAK) != 0)
		return CP_FSM_NNAK;
	if (r->phase == CP_PHASE_FORWARDING && (r->flags & CP_REPAIR_HELD) != 0)
		return CP_FSM_REPAIRED;
	return r->phase;
}

/*
 * The events: X(symbol, name for warnings, debug category of its rows' lines, whether the
 * caller writes those lines: cp_nak, once the NAK's fate is known). Callers tell events apart
 * where the phase alone does not: a NAK the state eliminates (7.4), an RDATA nobody here asked
 * for, which of a state's deadlines passed.
 */
#define CP_REPAIR_EVENTS(X)                                                                        \
	X(NAK, "NAK", CP_LOG_EVENT, true)                                                          \
	X(NAK_DUPLICATE, "duplicate NAK", CP_LOG_EVENT, true)                                      \
	X(NAK_CROSSED, "NAK that crossed the repair", CP_LOG_EVENT, true)                          \
	X(NAK_FROM_DLR, "NAK from the off-tree DLR", CP_LOG_EVENT, true)                           \
	X(NNAK, "NNAK", CP_LOG_EVENT, false)                                                       \
	X(NCF, "NCF", CP_LOG_EVENT, false)                                                         \
	X(RDATA, "RDATA", CP_LOG_EVENT, false)                                                     \
	X(RDATA_UNREQUESTED, "RDATA nobody here asked for", CP_LOG_EVENT, false)                   \
	X(RDATA_REPAIRED, "RDATA copy that left no interface waiting", CP_LOG_EVENT, false)        \
	X(RDATA_REPAIRED_HOLD, "RDATA copy that left no interface waiting, crossing window on",    \
		CP_LOG_EVENT, false)                                                               \
	X(NAK_RPT_RTE, "NAK_RPT_RTE timer", CP_LOG_TIMER, false)                                   \
	X(NAK_RPT_IVL, "NAK_RPT_IVL timer", CP_LOG_TIMER, false)                                   \
	X(NAK_ELIM_IVL, "NAK_ELIM_IVL timer", CP_LOG_TIMER, false)                                 \
	X(NAK_RDATA_IVL, "NAK_RDATA_IVL timer", CP_LOG_TIMER, false)                               \
	X(LINGER, "linger timer", CP_LOG_TIMER, false)                                             \
	X(CROSSING_OVER, "crossing window timer", CP_LOG_TIMER, false)                             \
	X(DLR_NCF, "unicast NCF from the off-tree DLR", CP_LOG_EVENT, false)                       \
	X(DLR_RDATA, "RDATA from the off-tree DLR", CP_LOG_EVENT, false)                           \
	X(DLR_TIMEOUT, "NAK_RPT_IVL timer of a redirected NAK", CP_LOG_TIMER, false)               \
	X(PARITY_NAK, "parity NAK", CP_LOG_EVENT, false)                                           \
	X(PARITY_NAK_DUPLICATE, "parity NAK the largest count covers", CP_LOG_EVENT, false)        \
	X(PARITY_NAK_FROM_DLR, "parity NAK from the off-tree DLR", CP_LOG_EVENT, false)            \
	X(PARITY_NNAK, "parity NNAK", CP_LOG_EVENT, false)                                         \
	X(PARITY_NCF, "parity NCF", CP_LOG_EVENT, false)                                           \
	X(PARITY_NCF_SHORT, "parity NCF below the largest count", CP_LOG_EVENT, false)             \
	X(PARITY_RDATA_REPAIRED, "parity RDATA that left no interface owed", CP_LOG_EVENT, false)  \
	X(DLR_PARITY_REPAIRED, "off-tree DLR parity RDATA that left none owed", CP_LOG_EVENT, false)

/* clang-format off: the X-macro list confuses its enum indentation */
enum cp_repair_event {
#define CP_REPAIR_EVENT_ENUM(sym, name, kind, caller_logs) CP_EV_##sym,
	CP_REPAIR_EVENTS(CP_REPAIR_EVENT_ENUM)
#undef CP_REPAIR_EVENT_ENUM
		CP_EV_COUNT
};
/* clang-format on */

/* An event for one repair state: what the machine and the row's action work on. */
struct cp_fsm {
	struct cp_session *s;
	uint32_t sid;
	uint32_t id;	     /* the state; CP_NIL in NONE, until the action makes one */
	struct cp_repair *r; /* its entry, NULL in NONE */
	uint32_t sqn;	     /* its SQN (parity state: the TG_SQN), for the log line */
	cp_time_t now;
	struct cp_iface *in_if, *out_if; /* a packet's arrival interface; an RDATA copy's egress */
	void *run;			 /* the caller's packet-wide state, for its actions */
	const char *const *arg; /* what the %s of the row's line print, in order, or NULL */
	bool nak;		/* a NAK's: the state it makes is asked for (limits.c) */
};

/* The transition's work. false: it could make no state (the repair limit, no memory); then
 * nothing changed and nothing is logged. */
typedef bool (*cp_fsm_action)(struct cp *cp, struct cp_fsm *x);

struct cp_fsm_row {
	uint8_t phases;	      /* CP_FSM_IN() of each phase it applies in */
	uint8_t event;	      /* enum cp_repair_event */
	cp_fsm_action action; /* NULL: nothing to do */
	uint8_t next;	      /* enum cp_fsm_phase after the action, or CP_FSM_SAME */
	const char *text;     /* the debug line after "tsi T sqn N: ", or NULL */
};
extern const struct cp_fsm_row cp_fsm_table[];
extern const unsigned cp_fsm_rows;
#define CP_FSM_NO_ROW 0xff /* in struct cp's index */

/* A deadline `ms` after `now`. 0 means "no timer" in repair states, so never 0. */
static inline cp_time_t cp_deadline(cp_time_t now, uint32_t ms)
{
	cp_time_t t = now + CP_MS(ms);

	return t != 0 ? t : 1;
}

/* A NAK repeat due, collected during cp_timers and sent as NAK lists per TSI. */
enum cp_nak_dest { CP_DEST_UPSTREAM, CP_DEST_DLR_UP, CP_DEST_DLR_OFF };

/*
 * One SQN of a NAK or NNAK being handled (9.3.3): the SQN as it goes on (a parity NAK's carries
 * the largest known count, 11.6), where to, and for cp_nak what became of its repair state.
 */
struct cp_nak_step {
	uint32_t sqn;
	uint32_t id;  /* its repair state; CP_NIL: none (yet) */
	uint8_t dest; /* enum cp_nak_dest */
	/* cp_nak's, for the log line once the NAK's fate is known */
	bool untracked;		      /* no memory for state: forwarded all the same */
	const struct cp_fsm_row *row; /* the transition, NULL: none */
};

struct cp_repeat {
	uint32_t session;
	uint32_t sqn;
	uint32_t order; /* serial distance from the session's trailing edge, for sorting */
	uint8_t dest;	/* enum cp_nak_dest */
	uint8_t parity;
};

/* ---- the core ---- */

struct cp {
	struct cp_config cfg;
	cp_emit_fn emit;
	void *emit_ctx;
	cp_log_fn log;
	void *log_ctx;
	unsigned log_mask;
	cp_rpf_fn rpf; /* the data plane's multicast routes, NULL: none (cp_set_rpf) */
	void *rpf_ctx;
	cp_route_sources_fn route_sources; /* the same routes by group (cp_set_route_sources) */
	void *route_sources_ctx;
	struct cp_hash_key hash_key;

	/* interfaces: ifmap is an open-addressed index by ifindex over ifs[] */
	struct cp_iface *ifs[CP_MAX_KNOWN_INTERFACES];
	unsigned nifs;
	struct cp_ifmap_entry {
		int ifindex; /* 0 = empty */
		struct cp_iface *ifp;
	} ifmap[2 * CP_MAX_KNOWN_INTERFACES];
	struct cp_iface *slot_if[CP_MAX_INTERFACES];

	struct cp_pool sessions;
	struct cp_htab session_tab;
	uint32_t last_session; /* cp_session_lookup()'s last hit, CP_NIL after its deletion */
	struct cp_wheel session_wheel;

	struct cp_pool repairs;
	struct cp_htab repair_tab;
	uint32_t last_repair; /* cp_repair_find_live()'s last hit, CP_NIL after its deletion */
	/* the keyed hash of the last SQN block looked up (repair.c, repair_block_hash) */
	struct {
		uint64_t word, hash;
		bool valid;
	} repair_memo;
	struct cp_wheel repair_wheel;

	struct cp_repeat *repeats;
	size_t repeat_count, repeat_cap;

	struct cp_pool parities;    /* struct cp_parity */
	struct cp_wheel polr_wheel; /* sessions with a POLR scheduled (child role) */
	uint64_t rng;		    /* xorshift64* state */
	uint32_t node_id;	    /* RAND_NODE_ID (14.5) */

	uint64_t global_ev[CP_C_COUNT];
	cp_time_t latest; /* the latest time seen in packets or timer runs, for views */

	/* the row of cp_fsm_table for each event and phase, CP_FSM_NO_ROW for none (a byte each:
	   the core's size is part of the memory `show` reports) */
	uint8_t fsm_index[CP_EV_COUNT][CP_FSM_PHASES];
	uint64_t fsm_unexpected; /* events no row expected (cp_stats) */

	/* limits.c: the limits in force, the repair states charged to each owner slot, the states
	   nobody asked for and each owner's others, oldest first */
	struct cp_limits lim;
	uint32_t owner_states[CP_OWNER_NONE + 1];
	struct cp_evict_list {
		uint32_t head, tail;
	} evictable, live[CP_OWNER_NONE + 1];
	cp_time_t session_tat; /* the new-session bucket of SPMs from unknown interfaces */
};

/* control.c */
void cp_count(
	struct cp *cp, struct cp_iface *ifp, struct cp_session *s, enum cp_counter c, uint64_t n);
void cp_count_in(struct cp_iface *ifp, struct cp_session *s, unsigned type);
void cp_count_out(struct cp_iface *ifp, struct cp_session *s, unsigned type);
bool cp_log_enabled(const struct cp *cp, enum cp_log_kind kind);
void cp_logf(struct cp *cp, enum cp_log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cp_emit(struct cp *cp, const struct cp_action *act);
/* A packet of the session sent as if from its source: zeroed, then type, egress interface, IP
 * source = the source, destination = the group, Router Alert as the interface says (so the next
 * router intercepts it), the session's UDP encapsulation, TSI and data port. */
void cp_action_as_source(const struct cp *cp, struct cp_action *act, enum cp_action_type type,
	const struct cp_session *s, const struct cp_iface *ifp);
const char *cp_if_label(const struct cp *cp, int ifindex, char *buf, size_t len);
/* The config that governs a session's repair timers: its upstream interface's, else defaults. */
const struct cp_if_config *cp_repair_config(const struct cp *cp, const struct cp_session *s);
const struct cp_if_config *cp_iface_config(const struct cp *cp, const struct cp_iface *ifp);
uint16_t cp_opx_invalid_mask(const struct pgm_packet *pkt);

/* interface.c */
struct cp_iface *cp_iface_find(const struct cp *cp, int ifindex);
void cp_ifaces_free(struct cp *cp);
static inline uint64_t cp_iface_bit(const struct cp_iface *ifp)
{
	return ifp != NULL && ifp->slot >= 0 ? (uint64_t)1 << ifp->slot : 0;
}
bool cp_is_local_address(const struct cp *cp, const struct pgm_nla *addr);
/* Whether NAKs may be sent to addr (an SPM's path NLA, a DLR, 7.7, 10): unicast, not ours, not
   loopback, broadcast or unspecified. The core knows no prefixes: subnet broadcasts pass. */
bool cp_nak_dest_usable(const struct cp *cp, const struct pgm_nla *addr);

/* session.c */
void cp_sessions_init(struct cp *cp);
void cp_sessions_free(struct cp *cp);
static inline struct cp_session *cp_session_at(const struct cp *cp, uint32_t id)
{
	return (struct cp_session *)cp_pool_at(&cp->sessions, id);
}
/*
 * The interface's address of a family, the one that names this router to a peer: IPv4's; for
 * IPv6 the global one (an SPM_PATH or a NAK_SRC must work beyond the link's scope, and an
 * NLA has no zone), the link-local one when the interface has no other or when the peer is
 * link-local itself (an upstream neighbour known by its link-local address). afi 0 when it
 * has none.
 */
const struct pgm_nla *cp_if_addr_for(
	const struct cp_iface *ifp, uint16_t afi, const struct pgm_nla *peer);

/* A session's family, PGM_AFI_IP or PGM_AFI_IP6: its datagrams'. */
static inline uint16_t cp_session_afi(const struct cp_session *s)
{
	return (s->flags & CP_SESSION_IPV6) != 0 ? PGM_AFI_IP6 : PGM_AFI_IP;
}

/* A packet's session family: its datagram's (an IPv4 and an IPv6 session with the same TSI
   are two sessions). */
static inline uint16_t cp_packet_afi(const struct cp_packet *in)
{
	return in->ip != NULL && in->ip->version == 6 ? PGM_AFI_IP6 : PGM_AFI_IP;
}
uint32_t cp_session_find(const struct cp *cp, const struct pgm_tsi *tsi, uint16_t afi);
/* The same, remembering the hit, for the packet path: the copies of one datagram, and a run of
   packets of one TSI (a NAK storm, the NCFs answering it), look it up once. */
uint32_t cp_session_lookup(struct cp *cp, const struct pgm_tsi *tsi, uint16_t afi);
void cp_session_delete(struct cp *cp, uint32_t id, enum cp_counter why);
void cp_session_timer(struct cp *cp, uint32_t id, cp_time_t now);
void cp_sessions_reschedule(struct cp *cp);
void cp_sessions_upstream_removed(struct cp *cp, int ifindex);
char *cp_session_label(const struct cp_session *s, char *buf, size_t len);
/* Calls fn for every live session id (hash order). */
void cp_sessions_walk(
	const struct cp *cp, void (*fn)(struct cp *cp, uint32_t id, void *arg), void *arg);
void cp_spm(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, struct cp_result *out);
/* A forwarded SPM copy: SPM_PATH = out_if's address, NAK_BO_IVL rewritten. */
void cp_spm_copy(struct cp *cp, const struct cp_packet *in, struct cp_session *s,
	struct cp_iface *out_if, struct cp_result *out);

/* repair.c */
void cp_repairs_init(struct cp *cp);
void cp_repairs_free(struct cp *cp);
static inline struct cp_repair *cp_repair_at(const struct cp *cp, uint32_t id)
{
	return (struct cp_repair *)cp_pool_at(&cp->repairs, id);
}
uint32_t cp_repair_find(struct cp *cp, uint32_t session, uint32_t sqn);
/* The state for (session, sqn) unless its deadlines say it is over at `now` (then deleted).
   For the packet path: it remembers its last hit, so the copies of one RDATA, and a run of NAKs
   for one SQN with the NCF answering them, look the state up once. */
uint32_t cp_repair_find_live(struct cp *cp, uint32_t session, uint32_t sqn, cp_time_t now);
/* id unless its deadlines say it is over at `now` (then deleted: CP_NIL); CP_NIL stays CP_NIL. */
uint32_t cp_repair_live(struct cp *cp, uint32_t id, cp_time_t now);
void cp_repair_delete(struct cp *cp, uint32_t id, enum cp_counter why);
void cp_repair_schedule(struct cp *cp, uint32_t id);
void cp_repair_timer(struct cp *cp, uint32_t id, cp_time_t now);
void cp_repair_start_pending(
	struct cp *cp, struct cp_repair *r, const struct cp_session *s, cp_time_t now);
void cp_repair_confirm(
	struct cp *cp, struct cp_repair *r, const struct cp_session *s, cp_time_t now);
bool cp_repair_eliminating(const struct cp_repair *r, cp_time_t now);
/* The crossing window of a session's repaired states (0: off): the upstream interface's
   setting, at most its NAK_ELIM_IVL. */
uint32_t cp_crossing_ms(const struct cp *cp, const struct cp_session *s);
void cp_repairs_flush_repeats(struct cp *cp);
void cp_repairs_drop_slot(struct cp *cp, int slot);
/* New zeroed state; only the machine's rows in NONE make it (cp_fsm_create), and set its phase. */
uint32_t cp_repair_create_kind(struct cp *cp, uint32_t session, uint32_t sqn, cp_time_t now,
	bool parity, struct cp_iface *in_if, bool nak);
void cp_queue_repeat(struct cp *cp, struct cp_session *s, struct cp_repair *r);
size_t cp_session_clear_repairs(struct cp *cp, uint32_t session, enum cp_counter why);
void cp_log_repair(struct cp *cp, enum cp_log_kind kind, const struct cp_session *s, uint32_t sqn,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* limits.c */
void cp_limits_init(struct cp *cp); /* and after a configuration change */
/* May an SPM arriving on ifp (NULL: unknown) create a session now? Counts a refusal. */
bool cp_session_rate_ok(struct cp *cp, struct cp_iface *ifp, cp_time_t now);
/* Room for one more repair state of session s charged to owner, evicting if the rules allow
 * (a state a NAK asks for: `nak`); false (counted on in_if) when there is none. */
bool cp_repair_room(
	struct cp *cp, uint32_t session, struct cp_iface *in_if, unsigned owner, bool nak);
void cp_repair_listed(struct cp *cp, uint32_t id, bool nak);
void cp_repair_unlisted(struct cp *cp, uint32_t id);
/* States charged to a slot that is given up are charged to none. */
void cp_limits_drop_slot(struct cp *cp, int slot);

/* fsm.c */
void cp_fsm_init(struct cp *cp);
const struct cp_fsm_row *cp_fsm_unexpected(
	struct cp *cp, const struct cp_fsm *x, enum cp_repair_event ev, unsigned phase);
void cp_fsm_logged(struct cp *cp, const struct cp_fsm *x, const struct cp_fsm_row *row);
void cp_fsm_log(struct cp *cp, const struct cp_session *s, uint32_t sqn,
	const struct cp_fsm_row *row, const char *const *arg);
const char *cp_fsm_phase_name(unsigned phase);
const char *cp_fsm_event_name(enum cp_repair_event ev);
/* For the actions of the rows in NONE: makes x's state (parity: per transmission group, 11.6),
 * charged to x->in_if; false when a limit or memory says no (counted). */
bool cp_fsm_create(struct cp *cp, struct cp_fsm *x, bool parity);

/*
 * Runs event `ev` on x's state: the row for its phase, the row's action, the next phase, the
 * row's line. Returns the row, or NULL when the action made no state or the event is unexpected
 * in this phase (warned about, counted, the state left as it was). Inline: the packet paths run
 * it for each state they touch, and what is out of line (warning, logging) is rare.
 */
static inline const struct cp_fsm_row *cp_repair_fsm(
	struct cp *cp, struct cp_fsm *x, enum cp_repair_event ev)
{
	unsigned phase = x->r != NULL ? cp_fsm_phase(x->r) : CP_FSM_NONE;
	unsigned i = cp->fsm_index[ev][phase];
	const struct cp_fsm_row *row;
	unsigned next;

	if (i == CP_FSM_NO_ROW)
		return cp_fsm_unexpected(cp, x, ev, phase);
	row = &cp_fsm_table[i];
	next = row->next;
	if (row->action != NULL && !row->action(cp, x))
		return NULL;
	if (next < CP_FSM_NONE)
		x->r->phase = next == CP_FSM_NNAK	? CP_PHASE_OUTSTANDING
			      : next == CP_FSM_REPAIRED ? CP_PHASE_FORWARDING
							: (uint8_t)next;
	if (cp->log_mask != 0)
		cp_fsm_logged(cp, x, row);
	return row;
}

/* x's state: the entry of id (CP_NIL: none, NONE). */
static inline void cp_fsm_state(const struct cp *cp, struct cp_fsm *x, uint32_t id)
{
	x->id = id;
	x->r = id != CP_NIL ? cp_repair_at(cp, id) : NULL;
}

/* The rows' actions, each in the file of its RFC section. repair.c: timers (7.2-7.8) */
bool cp_fsm_nak_repeat(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_elimination_over(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_retry_expired(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_repair_expired(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_linger_expired(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_repair_completed(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_repair_held(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_crossing_over(struct cp *cp, struct cp_fsm *x);
/* ncf.c (7.3, 7.5) */
bool cp_fsm_ncf_anticipate(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_ncf_confirm(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_ncf_restart(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_ncf_after_nnak(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_ncf_after_repair(struct cp *cp, struct cp_fsm *x);
/* nak.c (7.2-7.4, 9.5.3.2) */
bool cp_fsm_nak_first(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nak_after_repair(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nak_again(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nak_after_nnak(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nak_duplicate(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nak_crossed(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nak_dlr_fallback(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nnak_first(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_nnak_known(struct cp *cp, struct cp_fsm *x);
/* dlr.c (9.5.3.2) */
bool cp_fsm_dlr_confirm(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_dlr_rdata(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_dlr_timeout(struct cp *cp, struct cp_fsm *x);
/* parity.c (11.6) */
bool cp_fsm_parity_nak_first(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_parity_nak(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_parity_nak_dlr_fallback(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_parity_nak_duplicate(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_parity_nnak(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_parity_ncf_anticipate(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_parity_ncf(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_parity_ncf_short(struct cp *cp, struct cp_fsm *x);
/* rdata.c (7.8) */
bool cp_fsm_rdata_forward(struct cp *cp, struct cp_fsm *x);
bool cp_fsm_rdata_unrequested(struct cp *cp, struct cp_fsm *x);

/* nak.c, ncf.c, rdata.c */
void cp_nak(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out);
void cp_nnak(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out);
void cp_ncf(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out);
void cp_rdata(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, struct cp_result *out);
/* The NCF answering the NAK being processed: its SQNs, parity_cnt as NAK_PKT_CNT (11.6). */
void cp_send_ncf(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, uint32_t parity_cnt);
/* Forward the NAK/NNAK being processed: each step's SQN to its dest; one packet per
 * destination, the TPDU intact when it all goes to one. */
void cp_forward_naks(struct cp *cp, const struct cp_packet *in, struct cp_session *s,
	const struct cp_nak_step *steps, unsigned n);
/* Whether sqn is in the session's window as its SPMs tell it, leniently at the leading edge
   (SPMs lag the data); true without window information or with nak_window_check off. */
bool cp_sqn_in_window(const struct cp *cp, const struct cp_session *s, uint32_t sqn);
/* The SQNs a NAK, NNAK or NCF names: the header SQN, then its OPT_NAK_LIST. */
unsigned cp_packet_sqns(const struct pgm_packet *pkt, uint32_t sqns[1 + PGM_MAX_NAK_LIST]);
/* The same as steps of a NAK or NNAK: no state yet, all upstream. */
unsigned cp_nak_steps(const struct pgm_packet *pkt, struct cp_nak_step steps[1 + PGM_MAX_NAK_LIST]);
/* The bits of a NAK's IP source in a repair state's filter of its NAKers (nak_srcs). */
uint32_t cp_nak_src_bits(const struct cp *cp, const struct pgm_nla *src);

/* session.c */
struct cp_session_ext *cp_session_ext(struct cp_session *s); /* allocates; NULL without memory */

/* dlr.c: random source, POLL child role (14.5), DLR discovery and redirection (9.5.3) */
uint32_t cp_random32(struct cp *cp);
void cp_poll(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out);
void cp_polr(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out);
void cp_polr_timer(struct cp *cp, uint32_t session, cp_time_t now);
struct cp_tnode *cp_polr_tnode(void *ctx, uint32_t id);
void cp_offtree_dlr(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out);
/* Where the NAK for state r goes now (r NULL: untracked SQN); sets r's DLR flags to match. */
enum cp_nak_dest cp_nak_dest(struct cp *cp, struct cp_session *s, struct cp_repair *r);
/* The interface and address a NAK to dest leaves by. */
bool cp_nak_dest_addr(
	const struct cp_session *s, enum cp_nak_dest dest, int *ifindex, struct pgm_nla *addr);
bool cp_from_offtree_dlr(const struct cp_session *s, const struct cp_packet *in);
void cp_dlr_discover(struct cp *cp, struct cp_session *s, cp_time_t now);
/* The address of the DLR state r's NAK went to (CP_REPAIR_DLR_UP or _OFF), as text. */
const char *cp_dlr_name(
	const struct cp_session *s, const struct cp_repair *r, char *buf, size_t len);

/* parity.c (11.6) */
void cp_parity_nak(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out);
void cp_parity_ncf(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out);
void cp_parity_rdata(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, struct cp_session *s, struct cp_result *out);
/* Off-tree DLR parity RDATA: re-sourced onto every interface still owed packets. */
void cp_parity_offtree_rdata(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_session *s);
uint32_t cp_parity_find(struct cp *cp, uint32_t session, uint32_t tg_sqn);
static inline struct cp_parity *cp_parity_at(const struct cp *cp, uint32_t id)
{
	return (struct cp_parity *)cp_pool_at(&cp->parities, id);
}
uint32_t cp_parity_tgs(const struct cp_session *s); /* usable group size, or 0 */

/* unreach.c: failure containment (15.3) and NAK_BO_IVL advertisement and tuning (15.2) */
void cp_spm_nbr_unreach(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, uint32_t sid, struct cp_result *out);
void cp_ncf_nbr_unreach(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_session *s);
void cp_ncf_advertise(const struct cp *cp, const struct cp_session *s, const struct cp_iface *ifp,
	struct cp_action *ncf);
uint32_t cp_advertised_nak_bo_ivl(const struct cp *cp, const struct cp_iface *ifp);
/* A NAK on ifp for state r: `added` when ifp was not yet in its interface set. */
void cp_nak_seen(
	struct cp *cp, struct cp_session *s, struct cp_repair *r, struct cp_iface *ifp, bool added);

#endif /* PGMROUTER_CP_INTERNAL_H */

/*
 * The parts of pgm-dlr (a PGM designated local repairer, RFC 3208 9.5) that do no I/O, so that
 * unit tests drive them directly (tests/unit/test_dlr.c):
 *  - the repair cache: the last N data packets of one TSI, by SQN;
 *  - the POLL decision of a child (14.5) and the random reply delay in [0, POLL_BO_IVL];
 *  - the split of a NAK (header SQN and OPT_NAK_LIST) into SQNs the DLR repairs and SQNs it
 *    must NAK upstream itself (9.5.2.1, 9.5.2.2);
 *  - how a NAK is answered: off-tree (it came from the parent, 9.5.2.3) or upstream;
 *  - the SQNs the DLR NAKed itself, whose NCFs must not draw a redirecting POLR (9.5.2.1).
 * Everything is static inline: each program that includes it is one .c file.
 */
#ifndef DLR_CORE_H
#define DLR_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/wire/pgm_wire.h"

#define PGM_POLL_GENERAL 0 /* 14.6 */
#define PGM_POLL_DLR	 1

/* Serial-number arithmetic on 32-bit SQNs (RFC 1982 style, as PGM windows need). */
static inline bool dlr_sqn_after(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

/* ---- repair cache ---- */

struct dlr_cache_entry {
	uint8_t *tpdu; /* a copy of the data packet's TPDU, NULL when the slot is empty */
	uint16_t len;
	uint32_t sqn;
};

/*
 * A ring of `capacity` slots indexed by SQN modulo capacity. The window is the `capacity` SQNs
 * ending at `lead`, the highest SQN stored; a packet older than that is refused, and a slot
 * holding an SQN that fell out of the window reads as empty until it is overwritten.
 */
struct dlr_cache {
	struct dlr_cache_entry *slots;
	uint32_t capacity;
	uint32_t lead;
	bool empty;
	uint64_t stored;     /* packets stored */
	uint64_t duplicates; /* the SQN was already held */
	uint64_t too_old;    /* below the window */
	uint64_t evicted;    /* packets overwritten by a newer SQN */
};

enum dlr_cache_result {
	DLR_CACHE_STORED,
	DLR_CACHE_DUPLICATE,
	DLR_CACHE_TOO_OLD,
	DLR_CACHE_BAD_LENGTH,
	DLR_CACHE_NO_MEMORY,
};

static inline bool dlr_cache_init(struct dlr_cache *c, uint32_t capacity)
{
	memset(c, 0, sizeof(*c));
	if (capacity == 0)
		return false;
	c->slots = calloc(capacity, sizeof(*c->slots));
	if (c->slots == NULL)
		return false;
	c->capacity = capacity;
	c->empty = true;
	return true;
}

static inline void dlr_cache_free(struct dlr_cache *c)
{
	if (c->slots != NULL)
		for (uint32_t i = 0; i < c->capacity; i++)
			free(c->slots[i].tpdu);
	free(c->slots);
	c->slots = NULL;
}

static inline bool dlr_cache_in_window(const struct dlr_cache *c, uint32_t sqn)
{
	/* lead - sqn wraps to a huge value when sqn is after lead */
	return !c->empty && (uint32_t)(c->lead - sqn) < c->capacity;
}

static inline enum dlr_cache_result dlr_cache_put(
	struct dlr_cache *c, uint32_t sqn, const uint8_t *tpdu, size_t len)
{
	struct dlr_cache_entry *e;
	uint8_t *copy;

	if (len == 0 || len > UINT16_MAX)
		return DLR_CACHE_BAD_LENGTH;
	if (!c->empty && !dlr_sqn_after(sqn, c->lead) && !dlr_cache_in_window(c, sqn)) {
		c->too_old++;
		return DLR_CACHE_TOO_OLD;
	}
	e = &c->slots[sqn % c->capacity];
	if (e->tpdu != NULL && e->sqn == sqn && dlr_cache_in_window(c, sqn)) {
		c->duplicates++;
		return DLR_CACHE_DUPLICATE;
	}
	copy = malloc(len);
	if (copy == NULL)
		return DLR_CACHE_NO_MEMORY;
	memcpy(copy, tpdu, len);
	if (e->tpdu != NULL) {
		free(e->tpdu);
		c->evicted++;
	}
	e->tpdu = copy;
	e->len = (uint16_t)len;
	e->sqn = sqn;
	if (c->empty || dlr_sqn_after(sqn, c->lead))
		c->lead = sqn;
	c->empty = false;
	c->stored++;
	return DLR_CACHE_STORED;
}

/* The packet with this SQN, or NULL. */
static inline const struct dlr_cache_entry *dlr_cache_get(const struct dlr_cache *c, uint32_t sqn)
{
	const struct dlr_cache_entry *e;

	if (!dlr_cache_in_window(c, sqn))
		return NULL;
	e = &c->slots[sqn % c->capacity];
	return e->tpdu != NULL && e->sqn == sqn ? e : NULL;
}

/* Packets currently held inside the window. */
static inline uint32_t dlr_cache_held(const struct dlr_cache *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->capacity; i++)
		if (c->slots[i].tpdu != NULL && dlr_cache_in_window(c, c->slots[i].sqn))
			n++;
	return n;
}

/* ---- POLL (14.5) ---- */

enum dlr_poll_verdict {
	DLR_POLL_REPLY_REDIRECT, /* PGM_POLL_DLR: a unicast redirecting POLR (9.5.2.2) */
	DLR_POLL_REPLY_PLAIN,	 /* PGM_POLL_GENERAL: a POLR without options (14.5) */
	DLR_POLL_MASK_MISMATCH,	 /* RAND_NODE_ID does not match POLL_RAND under POLL_MASK */
	DLR_POLL_ROUND_UNSEEN,	 /* POLL_ROUND > 0 without round 0 of the same POLL_SQN */
	DLR_POLL_UNKNOWN_TYPE,	 /* 14.5: MUST NOT reply */
	DLR_POLL_NOT_OFFERED,	 /* a sub-type this DLR was told not to answer */
	DLR_POLL_NO_SERVICE,	 /* a DLR poll for a session it holds no data of */
	DLR_POLL_VERDICTS
};

static inline const char *dlr_poll_verdict_name(enum dlr_poll_verdict v)
{
	static const char *const names[DLR_POLL_VERDICTS] = {"reply-redirect", "reply-plain",
		"mask-mismatch", "round-unseen", "unknown-type", "not-offered", "no-service"};

	return (unsigned)v < DLR_POLL_VERDICTS ? names[v] : "?";
}

/* What a child remembers of the polls of one session: 14.2.1 scopes POLL_SQN by TSI and
 * POLL_PATH. */
struct dlr_poll_memory {
	bool round0_seen;
	uint32_t round0_sqn;
	struct pgm_nla round0_path;
};

struct dlr_poll_policy {
	uint32_t node_id;    /* RAND_NODE_ID (14.5) */
	bool answer_dlr;     /* off-tree service offered and not failed */
	bool answer_general; /* general polls answered (14.5 says MUST; a switch turns it off) */
	bool has_data;	     /* the DLR holds data of the polled session */
};

/*
 * The decision on one POLL. Receipt of a round-0 poll is recorded before the mask is matched:
 * rounds "freeze" the population present at round 0 (14.3.1), and a later round with a wider
 * mask must reach the children that round 0's narrower mask left out.
 */
static inline enum dlr_poll_verdict dlr_poll_decide(const struct dlr_poll_policy *policy,
	struct dlr_poll_memory *mem, uint32_t sqn, uint16_t round, uint16_t s_type,
	const struct pgm_nla *path, uint32_t rand, uint32_t mask)
{
	if (round == 0) {
		mem->round0_seen = true;
		mem->round0_sqn = sqn;
		mem->round0_path = *path;
	}
	/* 14.5: an all-zero mask always matches (deterministic poll) */
	if ((policy->node_id & mask) != (rand & mask))
		return DLR_POLL_MASK_MISMATCH;
	if (round != 0 && !(mem->round0_seen && mem->round0_sqn == sqn &&
				  pgm_nla_equal(&mem->round0_path, path)))
		return DLR_POLL_ROUND_UNSEEN;
	switch (s_type) {
	case PGM_POLL_GENERAL:
		return policy->answer_general ? DLR_POLL_REPLY_PLAIN : DLR_POLL_NOT_OFFERED;
	case PGM_POLL_DLR:
		if (!policy->answer_dlr)
			return DLR_POLL_NOT_OFFERED;
		return policy->has_data ? DLR_POLL_REPLY_REDIRECT : DLR_POLL_NO_SERVICE;
	default:
		return DLR_POLL_UNKNOWN_TYPE;
	}
}

/* The reply delay, uniform in [0, bo_ivl] µs, from a 32-bit random number (14.5). */
static inline uint32_t dlr_poll_delay_us(uint32_t bo_ivl, uint32_t random32)
{
	return (uint32_t)(((uint64_t)random32 * ((uint64_t)bo_ivl + 1)) >> 32);
}

/* ---- NAKs ---- */

/* The SQNs of one NAK (header SQN, then OPT_NAK_LIST in wire order, which the codec checks is
 * increasing), split into those the DLR repairs and those it NAKs upstream. */
struct dlr_nak_split {
	uint32_t repair[1 + PGM_MAX_NAK_LIST];
	unsigned repair_count;
	uint32_t missing[1 + PGM_MAX_NAK_LIST];
	unsigned missing_count;
};

/*
 * cache may be NULL (unknown session). A parity NAK asks for parity packets, which this DLR
 * cannot make: all of it is missing. At most max_repairs SQNs are repaired (what is left of
 * --fail-after); the rest count as missing.
 */
static inline void dlr_nak_split(const struct dlr_cache *cache, const struct pgm_packet *nak,
	uint64_t max_repairs, struct dlr_nak_split *out)
{
	bool parity = pgm_packet_is_parity(nak);

	out->repair_count = out->missing_count = 0;
	for (unsigned i = 0; i <= nak->opt.nak_list_count; i++) {
		uint32_t sqn = i == 0 ? nak->sqn : pgm_opt_nak_list_sqn(&nak->opt, i - 1);

		if (!parity && cache != NULL && out->repair_count < max_repairs &&
			dlr_cache_get(cache, sqn) != NULL)
			out->repair[out->repair_count++] = sqn;
		else
			out->missing[out->missing_count++] = sqn;
	}
}

enum dlr_role {
	DLR_ROLE_UPSTREAM = 1, /* redirecting POLRs on the parent's NCFs (9.5.2.1) */
	DLR_ROLE_OFF_TREE = 2, /* redirecting POLRs to DLR polls (9.5.2.2) */
	DLR_ROLE_BOTH = 3,
};

enum dlr_answer {
	DLR_ANSWER_UPSTREAM, /* NCF and RDATA multicast with the source's address and RA */
	DLR_ANSWER_OFF_TREE, /* NCF and RDATA unicast to the parent that sent the NAK */
};

/*
 * 9.5.2.3: a NAK from the DLR's upstream PGM parent (the SPM path) asks for off-tree service;
 * any other NAK comes from a network element below an upstream DLR. Without a known parent (no
 * SPM yet) an off-tree-only DLR assumes off-tree, any other upstream.
 */
static inline enum dlr_answer dlr_nak_answer(
	const struct pgm_nla *nak_ip_src, const struct pgm_nla *parent, enum dlr_role role)
{
	if (parent != NULL && parent->afi != 0)
		return pgm_nla_equal(nak_ip_src, parent) ? DLR_ANSWER_OFF_TREE
							 : DLR_ANSWER_UPSTREAM;
	return role == DLR_ROLE_OFF_TREE ? DLR_ANSWER_OFF_TREE : DLR_ANSWER_UPSTREAM;
}

/* ---- SQNs the DLR NAKed itself (9.5.2.1: their NCF must not draw a redirecting POLR) ---- */

#define DLR_OWN_NAKS 256

struct dlr_own_naks {
	uint32_t sqn[DLR_OWN_NAKS];
	uint64_t until_us[DLR_OWN_NAKS]; /* 0: free */
	unsigned next;			 /* the oldest entry, overwritten first */
};

static inline void dlr_own_naks_add(struct dlr_own_naks *m, uint32_t sqn, uint64_t until_us)
{
	for (unsigned i = 0; i < DLR_OWN_NAKS; i++) {
		if (m->until_us[i] != 0 && m->sqn[i] == sqn) {
			m->until_us[i] = until_us;
			return;
		}
	}
	m->sqn[m->next] = sqn;
	m->until_us[m->next] = until_us;
	m->next = (m->next + 1) % DLR_OWN_NAKS;
}

static inline bool dlr_own_naks_has(const struct dlr_own_naks *m, uint32_t sqn, uint64_t now_us)
{
	for (unsigned i = 0; i < DLR_OWN_NAKS; i++)
		if (m->until_us[i] != 0 && m->sqn[i] == sqn && now_us < m->until_us[i])
			return true;
	return false;
}

#endif /* DLR_CORE_H */

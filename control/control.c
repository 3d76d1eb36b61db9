/*
 * The control plane object: configuration, counters, debug logging, and the dispatch of each
 * packet (or forwarded copy) to the procedure for its type.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "control/cp_internal.h"

/*
 * Defaults, argued in the README:
 *  - NAK_RPT_IVL 2000 ms at NAK_RPT_RTE 5/s: a NAK is repeated every 200 ms, 9 times, before the
 *    state is given up; a lost NCF costs 200 ms, what ZeroMQ's receivers wait before their own
 *    repeat.
 *  - NAK_RDATA_IVL 10000 ms (the MIB's default): the repair state outlives every receiver's own
 *    NAK_RDATA_IVL (ZeroMQ 200 ms, OpenPGM's examples, MS-PGM and SmartPGM 2-4 s) so their
 *    re-NAKs are still constrained by it.
 *  - NAK_ELIM_IVL 100 ms: it must stay below the shortest re-NAK interval in the field, ZeroMQ's
 *    200 ms, less the source's round trip, or it swallows re-NAKs for a repair lost upstream and
 *    that repair waits for the interval instead of the receiver (e2e zmq-repair: 1000 ms put the
 *    repair latency's p50 at 528 ms against 102 ms without router assist).
 *  - identical NCFs at most once per 50 ms per interface: a LAN of receivers NAKing the same SQN
 *    within their back-off gets one NCF, not one per receiver.
 *  - 100 new sessions per second per interface: a restart learns a thousand sources behind one
 *    interface within their SPM interval's few rounds; a flood of fresh TSIs fills the session
 *    table no faster than its lifetime empties it (30,000 per interface per 300 s).
 *  - memory: 256 MB, half an interface, a quarter a session (limits.c, the README's budget).
 */
void cp_if_config_default(struct cp_if_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nak_rpt_ivl_ms = 2000;
	cfg->nak_rpt_rate = 5;
	cfg->nak_rdata_ivl_ms = 10000;
	cfg->nak_elim_ivl_ms = 100;
	cfg->ncf_ivl_ms = 50;
	cfg->nak_cross_ivl_ms = 50;
	cfg->nak_bo_ivl_us = 0;
	cfg->router_alert = true;
	cfg->session_rate = 100;
}

void cp_config_default(struct cp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->session_lifetime_s = 300; /* the MIB's pgmNeSessionLifeTime */
	cfg->memory_budget_mb = 256;
	cfg->max_sessions = 0;	    /* from the budget */
	cfg->max_repair_states = 0; /* from the budget */
	cfg->repair_if_share = 50;
	cfg->repair_session_share = 25;
	cfg->rdata_linger_ms = 1000;
	cfg->nak_window_check = true;
	/* 9.5.3: DLRs that announce themselves are used; polling for off-tree ones sends POLLs
	   with the source's address into every LAN of the TSI, so it is asked for (below) */
	cfg->dlr_redirect = true;
	cfg->dlr_discovery = false;
	cfg->dlr_poll_ivl_ms = 10000;
	cfg->dlr_poll_bo_ivl_ms = 100;
	cfg->poll_reply = true;
	cp_if_config_default(&cfg->if_defaults);
}

/* ---- counters ---- */

static const char *const counter_names[CP_C_COUNT] = {
#define CP_COUNTER_NAME(sym, name, desc) [CP_C_##sym] = name,
	CP_COUNTERS(CP_COUNTER_NAME)
#undef CP_COUNTER_NAME
};

static const char *const counter_descriptions[CP_C_COUNT] = {
#define CP_COUNTER_DESC(sym, name, desc) [CP_C_##sym] = desc,
	CP_COUNTERS(CP_COUNTER_DESC)
#undef CP_COUNTER_DESC
};

const char *cp_counter_name(enum cp_counter c)
{
	return (unsigned)c < CP_C_COUNT ? counter_names[c] : "unknown-counter";
}

const char *cp_counter_description(enum cp_counter c)
{
	return (unsigned)c < CP_C_COUNT ? counter_descriptions[c] : "unknown counter";
}

const uint8_t cp_tsi_type_slot[PGM_TYPE_COUNT] = {
#define CP_TSI_TYPE_SLOT(t) [PGM_##t] = CP_TSI_T_##t + 1,
	CP_TSI_TYPES(CP_TSI_TYPE_SLOT)
#undef CP_TSI_TYPE_SLOT
};

const uint8_t cp_tsi_event_slot[CP_C_COUNT] = {
#define CP_TSI_EVENT_SLOT(sym) [CP_C_##sym] = CP_TSI_E_##sym + 1,
	CP_TSI_EVENTS(CP_TSI_EVENT_SLOT)
#undef CP_TSI_EVENT_SLOT
};

void cp_tsi_counters_expand(const struct cp_tsi_counters *tc, struct cp_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned t = 0; t < PGM_TYPE_COUNT; t++) {
		if (cp_tsi_type_slot[t] != 0) {
			out->in[t] = tc->in[cp_tsi_type_slot[t] - 1];
			out->out[t] = tc->out[cp_tsi_type_slot[t] - 1];
		}
	}
	for (unsigned c = 0; c < CP_C_COUNT; c++) {
		if (cp_tsi_event_slot[c] != 0)
			out->ev[c] = tc->ev[cp_tsi_event_slot[c] - 1];
	}
}

void cp_count(
	struct cp *cp, struct cp_iface *ifp, struct cp_session *s, enum cp_counter c, uint64_t n)
{
	if (ifp != NULL)
		ifp->counters.ev[c] += n;
	else
		cp->global_ev[c] += n;
	if (s != NULL && cp_tsi_event_slot[c] != 0)
		s->counters.ev[cp_tsi_event_slot[c] - 1] += n;
}

void cp_count_in(struct cp_iface *ifp, struct cp_session *s, unsigned type)
{
	type &= PGM_TYPE_COUNT - 1;
	if (ifp != NULL)
		ifp->counters.in[type]++;
	if (s != NULL && cp_tsi_type_slot[type] != 0)
		s->counters.in[cp_tsi_type_slot[type] - 1]++;
}

void cp_count_out(struct cp_iface *ifp, struct cp_session *s, unsigned type)
{
	type &= PGM_TYPE_COUNT - 1;
	if (ifp != NULL)
		ifp->counters.out[type]++;
	if (s != NULL && cp_tsi_type_slot[type] != 0)
		s->counters.out[cp_tsi_type_slot[type] - 1]++;
}

void cp_count_error(struct cp *cp, int ifindex, enum pgm_err err)
{
	struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if ((unsigned)err >= PGM_ERR_COUNT)
		return;
	if (ifp != NULL)
		ifp->counters.err[err]++;
	if (err == PGM_ERR_OPT_DISCARD)
		cp_count(cp, ifp, NULL, CP_C_OPX_DISCARDED, 1);
}

void cp_count_send_failed(struct cp *cp, int ifindex)
{
	cp_count(cp, cp_iface_find(cp, ifindex), NULL, CP_C_SEND_FAILED, 1);
}

/* ---- logging ---- */

void cp_set_log(struct cp *cp, cp_log_fn log, void *ctx, unsigned kinds_mask)
{
	cp->log = log;
	cp->log_ctx = ctx;
	cp->log_mask = log != NULL ? kinds_mask : 0;
}

bool cp_log_enabled(const struct cp *cp, enum cp_log_kind kind)
{
	return (cp->log_mask & (1u << kind)) != 0;
}

void cp_logf(struct cp *cp, enum cp_log_kind kind, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!cp_log_enabled(cp, kind))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cp->log(cp->log_ctx, kind, line);
}

const char *cp_if_label(const struct cp *cp, int ifindex, char *buf, size_t len)
{
	const struct cp_iface *ifp = cp_iface_find(cp, ifindex);

	if (ifp != NULL && ifp->name[0] != '\0')
		snprintf(buf, len, "%s", ifp->name);
	else
		snprintf(buf, len, "if%d", ifindex);
	return buf;
}

void cp_emit(struct cp *cp, const struct cp_action *act)
{
	if (cp->emit != NULL)
		cp->emit(cp->emit_ctx, act);
}

void cp_action_as_source(const struct cp *cp, struct cp_action *act, enum cp_action_type type,
	const struct cp_session *s, const struct cp_iface *ifp)
{
	memset(act, 0, sizeof(*act));
	act->type = type;
	act->ifindex = ifp->ifindex;
	act->ip_src = s->source;
	act->ip_dst = s->group;
	act->router_alert = cp_iface_config(cp, ifp)->router_alert;
	if ((s->flags & CP_SESSION_UDP) != 0) {
		act->udp = true;
		act->udp_sport = s->udp_sport;
		act->udp_dport = s->udp_dport;
	}
	act->tsi = s->tsi;
	act->data_dport = s->data_dport;
}

/* ---- object ---- */

struct cp *cp_new(const struct cp_config *cfg, cp_emit_fn emit, void *emit_ctx)
{
	struct cp *cp = calloc(1, sizeof(*cp));

	if (cp == NULL)
		return NULL;
	if (cfg != NULL)
		cp->cfg = *cfg;
	else
		cp_config_default(&cp->cfg);
	cp->emit = emit;
	cp->emit_ctx = emit_ctx;
	/* The hash key only has to be unknown to whoever sends us packets. */
	if (getrandom(&cp->hash_key, sizeof(cp->hash_key), GRND_NONBLOCK) !=
		(ssize_t)sizeof(cp->hash_key)) {
		cp->hash_key.k0 = (uint64_t)(uintptr_t)cp ^ 0x9e3779b97f4a7c15ull;
		cp->hash_key.k1 = (uint64_t)(uintptr_t)&cp_new ^ 0xc2b2ae3d27d4eb4full;
	}
	cp_set_random_seed(cp, cp->hash_key.k0 ^ (cp->hash_key.k1 << 1));
	cp_sessions_init(cp);
	cp_repairs_init(cp);
	cp_limits_init(cp);
	cp_wheel_init(&cp->polr_wheel, cp_polr_tnode, cp);
	if (cp->session_tab.buckets == NULL || cp->repair_tab.buckets == NULL) {
		cp_free(cp);
		return NULL;
	}
	return cp;
}

void cp_free(struct cp *cp)
{
	if (cp == NULL)
		return;
	cp_repairs_free(cp);
	cp_sessions_free(cp);
	cp_ifaces_free(cp);
	free(cp->repeats);
	free(cp);
}

void cp_set_config(struct cp *cp, const struct cp_config *cfg)
{
	bool lifetime_changed = cfg->session_lifetime_s != cp->cfg.session_lifetime_s;

	cp->cfg = *cfg;
	/* lowered limits evict nothing: states end within NAK_RDATA_IVL, and are not renewed */
	cp_limits(&cp->cfg, &cp->lim);
	if (lifetime_changed)
		cp_sessions_reschedule(cp);
}

void cp_set_rpf(struct cp *cp, cp_rpf_fn rpf, void *ctx)
{
	cp->rpf = rpf;
	cp->rpf_ctx = ctx;
}

void cp_set_route_sources(struct cp *cp, cp_route_sources_fn fn, void *ctx)
{
	cp->route_sources = fn;
	cp->route_sources_ctx = ctx;
}

void cp_set_random_seed(struct cp *cp, uint64_t seed)
{
	/* splitmix64 of the seed: any seed, 0 included, gives a usable xorshift state */
	seed += 0x9e3779b97f4a7c15ull;
	seed = (seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9ull;
	seed = (seed ^ (seed >> 27)) * 0x94d049bb133111ebull;
	seed ^= seed >> 31;
	cp->rng = seed != 0 ? seed : 0x2545f4914f6cdd1dull;
	cp->node_id = cp_random32(cp);
}

uint32_t cp_node_id(const struct cp *cp)
{
	return cp->node_id;
}

const struct cp_config *cp_get_config(const struct cp *cp)
{
	return &cp->cfg;
}

const struct cp_if_config *cp_iface_config(const struct cp *cp, const struct cp_iface *ifp)
{
	return ifp != NULL && ifp->has_cfg ? &ifp->cfg : &cp->cfg.if_defaults;
}

/*
 * A repair state's timers (NAK_RPT_IVL/RTE, NAK_RDATA_IVL, NAK_ELIM_IVL) follow the settings of
 * the session's upstream interface when it has its own, else the global defaults: the timers
 * pace what goes to and comes from upstream, and one state serves several downstream
 * interfaces that may disagree. The NCF interval follows the interface the NCF goes out on.
 */
const struct cp_if_config *cp_repair_config(const struct cp *cp, const struct cp_session *s)
{
	return cp_iface_config(cp, cp_iface_find(cp, s->upstream_ifindex));
}

/* ---- dispatch ---- */

/*
 * OPX 01 (9): an option this element does not understand is renamed OPT_INVALID in what it
 * forwards. The parser counted such options and kept each option's OPX bits.
 */
uint16_t cp_opx_invalid_mask(const struct pgm_packet *pkt)
{
	uint16_t mask = 0;

	if (pkt->opt.opx_invalidate == 0)
		return 0;
	for (unsigned i = 0; i < pkt->opt.count && i < PGM_MAX_OPTIONS; i++) {
		if (pgm_opt_bit(pkt->opt.type[i]) < 0 &&
			(pkt->opt.flags[i] & PGM_OPX_MASK) == PGM_OPX_INVALIDATE)
			mask |= (uint16_t)(1u << i);
	}
	return mask;
}

/* A forwarded copy, or a packet accepted for the kernel to route: apply OPX 01 renames. */
static void finish_accepted(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *ifp, struct cp_result *out)
{
	uint16_t mask;

	if (out->verdict == CP_DROP)
		return;
	mask = cp_opx_invalid_mask(in->pkt);
	if (mask == 0)
		return;
	out->rewrite.opt_invalid_mask = mask;
	out->verdict = CP_ACCEPT_REWRITTEN;
	cp_count(cp, ifp, NULL, CP_C_OPX_INVALIDATED, 1);
}

void cp_packet(struct cp *cp, const struct cp_packet *in, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_iface *in_if, *out_if = NULL;

	memset(out, 0, sizeof(*out));
	out->verdict = CP_ACCEPT;
	if (pkt == NULL || in->ip == NULL)
		return;
	if (in->now > cp->latest)
		cp->latest = in->now;
	in_if = cp_iface_find(cp, in->in_ifindex);
	if (in->out_ifindex != 0)
		out_if = cp_iface_find(cp, in->out_ifindex);
	cp_count_in(in_if, NULL, pkt->type);
	if (pkt->opt.opx_reserved != 0)
		cp_count(cp, in_if, NULL, CP_C_OPX_RESERVED, pkt->opt.opx_reserved);

	/*
	 * A forwarded copy leaving by an interface without router assist is not ours to
	 * constrain: the data plane should not even queue it, but if it does, it goes unchanged.
	 * SPMs still update the session state first, whichever copy comes.
	 */
	if (in->out_ifindex != 0 && (out_if == NULL || !out_if->assist) && pkt->type != PGM_SPM) {
		cp_count(cp, out_if != NULL ? out_if : in_if, NULL, CP_C_COPY_NOT_ASSISTED, 1);
		finish_accepted(cp, in, out_if != NULL ? out_if : in_if, out);
		return;
	}

	switch (pkt->type) {
	case PGM_SPM:
		cp_spm(cp, in, in_if, out_if, out);
		break;
	case PGM_NAK:
		cp_nak(cp, in, in_if, out);
		break;
	case PGM_NNAK:
		cp_nnak(cp, in, in_if, out);
		break;
	case PGM_NCF:
		cp_ncf(cp, in, in_if, out);
		break;
	case PGM_RDATA:
		cp_rdata(cp, in, in_if, out_if, out);
		break;
	case PGM_POLL:
		cp_count(cp, in_if, NULL, CP_C_POLL_RECEIVED, 1);
		cp_poll(cp, in, in_if, out);
		break;
	case PGM_POLR:
		cp_count(cp, in_if, NULL, CP_C_POLR_RECEIVED, 1);
		cp_polr(cp, in, in_if, out);
		break;
	case PGM_ODATA:
	case PGM_SPMR:
	case PGM_ACK:
		/* no network-element procedure: routed like any packet (2.3, 13) */
		break;
	default:
		cp_count(cp, in_if, NULL, CP_C_UNKNOWN_TYPE, 1);
		break;
	}
	finish_accepted(cp, in, out_if != NULL ? out_if : in_if, out);
}

/* ---- timers ---- */

cp_time_t cp_timers(struct cp *cp, cp_time_t now)
{
	uint32_t id;

	if (now > cp->latest)
		cp->latest = now;
	cp_wheel_advance(&cp->repair_wheel, now);
	cp_wheel_advance(&cp->session_wheel, now);
	cp_wheel_advance(&cp->polr_wheel, now);
	while ((id = cp_wheel_pop_expired(&cp->polr_wheel)) != CP_NIL)
		cp_polr_timer(cp, id, now);
	while ((id = cp_wheel_pop_expired(&cp->repair_wheel)) != CP_NIL)
		cp_repair_timer(cp, id, now);
	/* before any session can expire: the queued repeats name sessions by id */
	cp_repairs_flush_repeats(cp);
	while ((id = cp_wheel_pop_expired(&cp->session_wheel)) != CP_NIL)
		cp_session_timer(cp, id, now);
	return cp_next_deadline(cp);
}

cp_time_t cp_next_deadline(struct cp *cp)
{
	cp_time_t a = cp_wheel_next(&cp->repair_wheel), b = cp_wheel_next(&cp->session_wheel);
	cp_time_t c = cp_wheel_next(&cp->polr_wheel);

	if (b < a)
		a = b;
	return c < a ? c : a;
}

const char *cp_phase_name(enum cp_repair_phase p)
{
	switch (p) {
	case CP_PHASE_PENDING:
		return "PENDING";
	case CP_PHASE_OUTSTANDING:
		return "OUTSTANDING";
	case CP_PHASE_FORWARDING:
		return "FORWARDING";
	default:
		return "UNKNOWN";
	}
}

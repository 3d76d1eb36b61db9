/*
 * The packet path: a datagram parsed by the codec, through the control plane, to a verdict and
 * a rewrite; SPM and RDATA to a group replicated along their multicast route.
 */
#include <stdio.h>
#include <string.h>

#include "router/assist/assist_internal.h"

static const char *verdict_name(enum cp_verdict v)
{
	switch (v) {
	case CP_ACCEPT:
		return "accept";
	case CP_DROP:
		return "drop";
	case CP_ACCEPT_REWRITTEN:
		return "accept rewritten";
	default:
		return "?";
	}
}

static void print_packet(struct assist *a, const struct pgm_ip *ip, const struct pgm_packet *pkt,
	int in, int out, const struct cp_result *res)
{
	char summary[512], src[64], dst[64], inname[CP_IFNAME_LEN], outname[CP_IFNAME_LEN];
	char rw[128] = "";

	pgm_packet_format(pkt, summary, sizeof(summary));
	if (res->verdict == CP_ACCEPT_REWRITTEN && res->rewrite.spm_path) {
		char path[64];

		snprintf(rw, sizeof(rw), " (path %s)",
			pgm_nla_format(&res->rewrite.path, path, sizeof(path)));
	}
	assist_line(a, LOG_CAT_PACKETS, "%s%s%s %s > %s%s: %s: %s%s",
		assist_ifname(a, in, inname, sizeof(inname)), out ? " -> " : "",
		out ? assist_ifname(a, out, outname, sizeof(outname)) : "",
		pgm_nla_format(&ip->src, src, sizeof(src)),
		pgm_nla_format(&ip->dst, dst, sizeof(dst)), ip->udp ? " udp" : "", summary,
		verdict_name(res->verdict), rw);
}

/* Applies the control plane's rewrite to a copy of the datagram; returns its length or 0. */
static size_t apply_rewrite(struct assist *a, const uint8_t *datagram, size_t len,
	const struct pgm_ip *ip, const struct pgm_packet *pkt, const struct cp_rewrite *rw)
{
	uint8_t *tpdu = a->rwbuf + ip->pgm_offset;

	if (len > sizeof(a->rwbuf))
		return 0;
	memcpy(a->rwbuf, datagram, len);
	if (rw->spm_path && !pgm_rewrite_spm_path(tpdu, pkt, &rw->path))
		return 0;
	if (rw->nak_bo_ivl &&
		!pgm_rewrite_nak_bo_ivl(tpdu, pkt, rw->nak_bo_ivl_us, rw->nak_bo_ivl_sqn))
		return 0;
	if (rw->opt_invalid_mask != 0 && !pgm_rewrite_opts_invalid(tpdu, pkt, rw->opt_invalid_mask))
		return 0;
	if (ip->udp)
		pgm_ip_fix_udp_checksum(a->rwbuf, ip);
	if (rw->nak_bo_ivl_remove) /* last: the datagram gets shorter */
		return pgm_remove_nak_bo_ivl(a->rwbuf, len, ip, pkt);
	return len;
}

/* A parsed packet (or one copy of it) through the control plane: its verdict and rewrite. */
static inline __attribute__((always_inline)) void through_core(struct assist *a,
	const struct pgm_ip *ip, const struct pgm_packet *pkt, int in_ifindex, int out_ifindex,
	cp_time_t now, bool transit, struct cp_result *res)
{
	struct cp_packet in = {
		.ip = ip,
		.pkt = pkt,
		.in_ifindex = in_ifindex,
		.out_ifindex = out_ifindex,
		.now = now,
		.transit = transit,
	};

	cp_packet(a->cp, &in, res);
	if (assist_wants(a, LOG_CAT_PACKETS))
		print_packet(a, ip, pkt, in_ifindex, out_ifindex, res);
}

/*
 * Whether a UDP datagram on the encapsulation ports that failed to parse is PGM at all. The
 * ports are shared with whatever else a site runs on them, and the queue rules read one byte
 * of the payload as a PGM type: what only looks like PGM there is not PGM's business. It is
 * PGM when its header is one (version 0, no reserved bits, enough bytes) and carries a
 * checksum that verifies over the whole TPDU; anything else goes back to the kernel.
 */
static bool udp_is_pgm(const struct pgm_packet *pkt, enum pgm_err err)
{
	switch (err) {
	case PGM_ERR_SHORT_HEADER:
	case PGM_ERR_BAD_VERSION:
	case PGM_ERR_BAD_RESERVED:
	case PGM_ERR_ZERO_CHECKSUM:
	case PGM_ERR_BAD_CHECKSUM:
		return false;
	default:
		return pkt->checksum != 0;
	}
}

/* The TPDU of a located datagram parsed; on a PGM error it is counted on the interface, or, UDP
 * that is not PGM, in the data plane's udp_not_pgm (returned as PGM_ERR_UNKNOWN_TYPE: accepted
 * unchanged). */
static enum pgm_err parse_tpdu(struct assist *a, const struct assist_packet *p,
	const struct pgm_ip *ip, struct pgm_packet *pkt)
{
	unsigned flags = p->udp_csum_unset ? PGM_PARSE_NO_UDP_CHECKSUM : 0;
	enum pgm_err err = pgm_parse(p->datagram + ip->pgm_offset, ip->pgm_len, flags, pkt);

	if (err == PGM_ERR_OK)
		return err;
	if (ip->udp && err != PGM_ERR_UNKNOWN_TYPE && !udp_is_pgm(pkt, err)) {
		/* too short for a PGM header: queued at prerouting and, to us, at input again */
		if (p->before_routing || ip->pgm_len >= PGM_HEADER_LEN)
			a->stats.udp_not_pgm++;
		if (assist_wants(a, LOG_CAT_PACKETS)) {
			char ifname[CP_IFNAME_LEN];

			assist_line(a, LOG_CAT_PACKETS, "%s: UDP on port %u, not PGM (%s): accept",
				assist_ifname(a, p->in_ifindex, ifname, sizeof(ifname)),
				ip->udp_dport, pgm_err_name(err));
		}
		return PGM_ERR_UNKNOWN_TYPE;
	}
	cp_count_error(a->cp, p->in_ifindex, err);
	if (err == PGM_ERR_UNKNOWN_TYPE)
		return err; /* unknown types pass through unprocessed */
	a->stats.malformed++;
	if (assist_wants(a, LOG_CAT_PACKETS)) {
		char ifname[CP_IFNAME_LEN];

		assist_line(a, LOG_CAT_PACKETS, "%s: malformed PGM (%s): drop",
			assist_ifname(a, p->in_ifindex, ifname, sizeof(ifname)), pgm_err_name(err));
	}
	return err;
}

/* A datagram seen once or one forwarded copy: its verdict; a rewrite left in a->rwbuf. */
static enum cp_verdict process(
	struct assist *a, const struct assist_packet *p, const struct pgm_ip *ip, size_t *rw_len)
{
	struct pgm_packet pkt;
	struct cp_result res;
	enum pgm_err err = parse_tpdu(a, p, ip, &pkt);

	if (err != PGM_ERR_OK)
		return err == PGM_ERR_UNKNOWN_TYPE ? CP_ACCEPT : CP_DROP;
	/* Unicast seen before routing is not for us: the rules queue NAKs there only when the
	   destination is not local (receivers NAKing their source directly). */
	through_core(a, ip, &pkt, p->in_ifindex, p->out_ifindex, p->now,
		p->before_routing && (pkt.type == PGM_NAK || pkt.type == PGM_NNAK) &&
			!pgm_ip_dst_is_multicast(ip),
		&res);
	if (res.verdict == CP_ACCEPT_REWRITTEN) {
		*rw_len = apply_rewrite(a, p->datagram, p->len, ip, &pkt, &res.rewrite);
		if (*rw_len == 0) {
			a->stats.rewrite_failed++;
			return CP_ACCEPT;
		}
	}
	return res.verdict;
}

/*
 * One copy out of oif, the TTL decremented as the kernel's forwarding would. A UDP checksum
 * the sender left to the hardware (only the pseudo-header sum is in the field) is completed
 * here, as the egress device would; otherwise the copy goes from the caller's buffer.
 */
static inline __attribute__((always_inline)) void send_copy(struct assist *a, int oif,
	const uint8_t *datagram, size_t len, uint8_t ttl, const struct pgm_ip *ip, bool fix_csum)
{
	int rc;

	if (fix_csum && ip->udp) {
		memcpy(a->txbuf, datagram, len);
		pgm_ip_fix_udp_checksum(a->txbuf, ip);
		datagram = a->txbuf;
	}
	rc = a->env.send(a->env.ctx, oif, datagram, len, ttl);
	if (rc < 0) {
		a->stats.copies_failed++;
		a->stats.send_failed++;
		return;
	}
	a->stats.copies++; /* and among the packets sent when sent now (batched: later) */
	if (rc > 0)
		a->stats.originated++;
}

struct repl_copy {
	int oif;
	struct cp_result res;
};

/* A route's counter: workers on several threads share the route mirror (live.c), each under its
   read lock, so the add is atomic. */
static inline void route_count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/*
 * SPM and RDATA to a group are taken before routing, and their copies are made here: one per
 * outgoing interface of the multicast route, each through the control plane for that
 * interface (SPM_PATH rewritten; RDATA only where a NAK asked for it) and sent with the TTL
 * decremented, as the kernel's forwarding would. The original is dropped. That is what lets
 * ODATA, the fast path, forward with no rule after the routing decision, where the kernel runs
 * the hooks for every copy of every forwarded packet. A datagram without a resolved route, or
 * off the route's incoming interface, is left to the kernel (it asks the routing daemon, or
 * drops it and reports the wrong interface), unassisted and counted.
 *
 * An (S,G) route that lists its own incoming interface among the outgoing ones: ip_mr_forward
 * skips the arrival interface for (*,G) entries only (a (*,G) carries a datagram only when it
 * lists the arrival interface, and never sends it back there), so the kernel sends an (S,G)
 * copy back out of it. That copy is made here too, unchanged but for the TTL, as a router
 * without assist would send it: the interface is upstream of the session, its hosts hear the
 * source without this router, and an SPM naming the router would send their NAKs where none is
 * handled. Because the copy is unchanged, the route's one rewritten copy is never handed to the
 * kernel when the route also leads back (the kernel would send it out of both). A (*,G) copy
 * back upstream would also mislead PIM-SM there (dataplane/README).
 *
 * Returns the verdict for the original. CP_ACCEPT_REWRITTEN: accept it rewritten, a->rwbuf
 * with *rw_len bytes (the route's one copy).
 */
static enum cp_verdict replicate(
	struct assist *a, const struct assist_packet *p, const struct pgm_ip *ip, size_t *rw_len)
{
	struct mfc_route *r;
	int in = p->in_ifindex;
	uint8_t ttl = ip->ttl;
	bool assisted;
	struct pgm_packet pkt;
	struct repl_copy copies[MFC_MAX_OIFS];
	bool oif_assisted[MFC_MAX_OIFS];
	unsigned ncopies = 0;
	bool all_unchanged = true;
	bool any_source;

	/* not parseable: handled once, not once per copy, so it is counted once */
	if (pgm_parse(p->datagram + ip->pgm_offset, ip->pgm_len,
		    p->udp_csum_unset ? PGM_PARSE_NO_UDP_CHECKSUM : 0, &pkt) != PGM_ERR_OK)
		return process(a, p, ip, rw_len);
	r = a->env.route(a->env.ctx, &ip->src, &ip->dst, in);
	if (r == NULL || r->iif == 0) {
		a->stats.repl_no_route++;
		return CP_ACCEPT;
	}
	if (r->iif != in) {
		a->stats.repl_wrong_if++;
		return CP_ACCEPT;
	}
	any_source = mfc_route_any_source(r);
	assisted = cp_if_assisted(a->cp, in);
	for (unsigned i = 0; i < r->noifs; i++) {
		oif_assisted[i] = r->oif[i] != in && cp_if_assisted(a->cp, r->oif[i]);
		assisted = assisted || oif_assisted[i];
	}
	if (!assisted)
		return CP_ACCEPT; /* nothing of ours on this route: the kernel forwards it */
	/* In the kernel's order: ip_mr_forward walks the interfaces from the highest vif down,
	   rtnetlink lists them from the lowest up. */
	for (unsigned i = r->noifs; i-- > 0;) {
		struct repl_copy *c;

		/* as ip_mr_forward: never back out of a (*,G)'s arrival interface; the TTL must
		   exceed the interface's threshold */
		if ((r->oif[i] == in && any_source) || ttl <= r->ttl[i])
			continue;
		c = &copies[ncopies++];
		c->oif = r->oif[i];
		c->res.verdict = CP_ACCEPT;
		if (!oif_assisted[i])
			continue;
		through_core(a, ip, &pkt, in, c->oif, p->now, false, &c->res);
		all_unchanged = all_unchanged && c->res.verdict == CP_ACCEPT;
	}
	/* When every copy is unchanged (RDATA asked for on every interface of the route, or
	   interfaces without router assist), the kernel's own forwarding makes exactly them. */
	if (all_unchanged) {
		a->stats.repl_by_kernel++;
		route_count(&r->by_kernel);
		return CP_ACCEPT;
	}
	if (ncopies == 1 && copies[0].res.verdict == CP_ACCEPT_REWRITTEN) {
		/* the route's one copy: the kernel forwards the rewritten original (TTL and all) */
		*rw_len = apply_rewrite(a, p->datagram, p->len, ip, &pkt, &copies[0].res.rewrite);
		if (*rw_len != 0) {
			a->stats.repl_single++;
			route_count(&r->by_kernel);
			return CP_ACCEPT_REWRITTEN;
		}
		a->stats.rewrite_failed++; /* the copy goes unchanged, below */
		copies[0].res.verdict = CP_ACCEPT;
	}
	/* Rewritten copies go at once (the rewrite buffer is reused); unchanged ones after. */
	a->stats.replicated++;
	route_count(&r->replicated);
	for (unsigned i = 0; i < ncopies; i++) {
		struct repl_copy *c = &copies[i];
		size_t len;

		if (c->res.verdict == CP_DROP) {
			a->stats.copies_held++;
		} else if (c->res.verdict == CP_ACCEPT_REWRITTEN) {
			len = apply_rewrite(a, p->datagram, p->len, ip, &pkt, &c->res.rewrite);
			if (len != 0) {
				a->stats.rewritten++;
				send_copy(a, c->oif, a->rwbuf, len, (uint8_t)(ttl - 1), ip, false);
			} else {
				a->stats.rewrite_failed++;
				c->res.verdict = CP_ACCEPT; /* goes unchanged */
			}
		}
	}
	for (unsigned i = 0; i < ncopies; i++)
		if (copies[i].res.verdict == CP_ACCEPT)
			send_copy(a, copies[i].oif, p->datagram, p->len, (uint8_t)(ttl - 1), ip,
				p->udp_csum_unset);
	return CP_DROP;
}

enum cp_verdict assist_packet(struct assist *a, const struct assist_packet *p,
	const uint8_t **rewritten, size_t *rewritten_len)
{
	struct pgm_ip ip;
	enum pgm_err err;
	enum cp_verdict v;
	size_t rw_len = 0;
	int type;

	a->stats.packets++;
	err = pgm_parse_ip(p->datagram, p->len, &a->udp_ports, &ip);
	if (err != PGM_ERR_OK) {
		/* Not PGM we can read at the IP layer (a fragment, another protocol): the kernel
		   validated the IP header already, so let it continue unassisted. */
		a->stats.not_pgm++;
		cp_count_error(a->cp, p->in_ifindex, err);
		return CP_ACCEPT;
	}
	type = pgm_peek_type(p->datagram, &ip);
	if (p->before_routing && (type == PGM_SPM || type == PGM_RDATA) &&
		pgm_ip_dst_is_multicast(&ip))
		v = replicate(a, p, &ip, &rw_len);
	else
		v = process(a, p, &ip, &rw_len);
	if (v == CP_ACCEPT_REWRITTEN) {
		a->stats.rewritten++;
		*rewritten = a->rwbuf;
		*rewritten_len = rw_len;
	}
	return v;
}

void assist_timers(struct assist *a, cp_time_t now)
{
	a->stats.timer_runs++;
	cp_timers(a->cp, now);
}

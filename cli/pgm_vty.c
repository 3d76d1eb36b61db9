/*
 * The PGM router assist commands: configuration (global and per interface, each next to the
 * writer that puts it back into the running configuration), `show ip pgm router ...` in IOS
 * layout and as JSON, `clear ip pgm router ...` and the debug capture.
 */
#include "cli/pgm_vty.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "cli/config.h"
#include "cli/generic_vty.h"
#include "control/control.h"
#include "router/assist.h"
#include "router/daemon.h"
#include "router/lib/log.h"

#define PGM_ROUTER_HELP IP_STR PGM_STR ROUTER_ASSIST_STR
#define REPAIR_ROWS_BRIEF 20 /* repair states listed per session without `verbose` */

/* ---- reload bookkeeping: what the file being reloaded set again ---- */

enum global_setting {
	G_QUEUE,
	G_BACKEND,
	G_NCF_TTL,
	G_UDP,
	G_LIFETIME,
	G_MAX_SESSIONS,
	G_MAX_REPAIR,
	G_DLR_REDIRECT,
	G_DLR_DISCOVERY,
	G_POLL_RESPONSE,
	G_LINK_OUTPUT,
	G_COUNT
};

static bool reloading;
static uint32_t global_seen;		      /* bit per enum global_setting */
static uint32_t default_timers_seen;	      /* bit per enum assist_timer */
struct if_seen {
	char name[CP_IFNAME_LEN];
	bool enabled;
	uint32_t timers;
};
static struct if_seen *ifs_seen;
static size_t nifs_seen;

static struct if_seen *seen_if(const char *name)
{
	struct if_seen *n;

	for (size_t i = 0; i < nifs_seen; i++)
		if (strcmp(ifs_seen[i].name, name) == 0)
			return &ifs_seen[i];
	n = realloc(ifs_seen, (nifs_seen + 1) * sizeof(*n));
	if (n == NULL)
		return NULL;
	ifs_seen = n;
	n = &ifs_seen[nifs_seen++];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	return n;
}

static void mark_global(enum global_setting g)
{
	if (reloading)
		global_seen |= 1u << g;
}

static void reload_begin(void)
{
	reloading = true;
	global_seen = 0;
	default_timers_seen = 0;
	nifs_seen = 0;
}

static void reload_end(void)
{
	char err[256];

	reloading = false;
	if (!(global_seen & (1u << G_QUEUE)) &&
		assist_set_queue(ASSIST_DEFAULT_QUEUE, err, sizeof(err)) < 0)
		log_warnx("reload: queue: %s", err);
	if (!(global_seen & (1u << G_BACKEND)) &&
		assist_set_backend(RULES_BACKEND_AUTO, err, sizeof(err)) < 0)
		log_warnx("reload: backend: %s", err);
	if (!(global_seen & (1u << G_NCF_TTL)))
		assist_set_ncf_ttl(ASSIST_DEFAULT_NCF_TTL);
	if (!(global_seen & (1u << G_UDP)) &&
		assist_set_udp(true, PGM_DEFAULT_UDP_UCAST_PORT, PGM_DEFAULT_UDP_MCAST_PORT, err,
			sizeof(err)) < 0)
		log_warnx("reload: udp-encapsulation: %s", err);
	if (!(global_seen & (1u << G_LINK_OUTPUT)) &&
		assist_set_link_output(true, err, sizeof(err)) < 0)
		log_warnx("reload: link-layer-output: %s", err);
	if (!(global_seen & (1u << G_LIFETIME))) {
		struct cp_config d;

		cp_config_default(&d);
		assist_set_session_lifetime(d.session_lifetime_s);
	}
	if (!(global_seen & (1u << G_MAX_SESSIONS)))
		assist_set_max_sessions(0);
	if (!(global_seen & (1u << G_MAX_REPAIR)))
		assist_set_max_repair_states(0);
	{
		const struct assist_conf *c = assist_conf();
		struct cp_config d;

		cp_config_default(&d);
		assist_set_dlr(global_seen & (1u << G_DLR_REDIRECT) ? c->dlr_redirect
								    : d.dlr_redirect,
			global_seen & (1u << G_DLR_DISCOVERY) ? c->dlr_discovery : d.dlr_discovery,
			global_seen & (1u << G_DLR_DISCOVERY) ? c->dlr_poll_ivl_ms
							      : d.dlr_poll_ivl_ms,
			global_seen & (1u << G_DLR_DISCOVERY) ? c->dlr_poll_bo_ivl_ms
							      : d.dlr_poll_bo_ivl_ms);
		if (!(global_seen & (1u << G_POLL_RESPONSE)))
			assist_set_poll_reply(d.poll_reply);
	}
	for (int t = 0; t < ASSIST_T_COUNT; t++)
		if ((assist_conf()->defaults_set & (1u << t)) && !(default_timers_seen & (1u << t)))
			assist_set_default_timer(t, false, 0);
	/* interfaces: walk a copy of the names, the list changes while we go */
	for (size_t i = assist_if_count(); i > 0; i--) {
		const struct assist_if *ifc = assist_if_at(i - 1);
		struct if_seen *seen = NULL;
		char name[CP_IFNAME_LEN];

		if (ifc == NULL)
			continue;
		snprintf(name, sizeof(name), "%s", ifc->name);
		for (size_t j = 0; j < nifs_seen; j++)
			if (strcmp(ifs_seen[j].name, name) == 0)
				seen = &ifs_seen[j];
		if (ifc->enabled && (seen == NULL || !seen->enabled) &&
			assist_if_enable(name, false, err, sizeof(err)) < 0)
			log_warnx("reload: %s: %s", name, err);
		for (int t = 0; t < ASSIST_T_COUNT; t++)
			if ((ifc->timers_set & (1u << t)) &&
				(seen == NULL || !(seen->timers & (1u << t))))
				assist_if_set_timer(name, t, false, 0);
	}
	free(ifs_seen);
	ifs_seen = NULL;
	nifs_seen = 0;
}

/* ---- global configuration ---- */

static int fail(struct cmd_session *s, const char *err)
{
	cmd_out(s, "%% %s\n", err);
	return CMD_ERR_FAILED;
}

static int cmd_queue(struct cmd_session *s, const struct cmd_args *a)
{
	char err[256];
	long long q = a->negate ? ASSIST_DEFAULT_QUEUE : cmd_arg_int(a, "<0-65535>", 0);

	mark_global(G_QUEUE);
	if (assist_set_queue((uint16_t)q, err, sizeof(err)) < 0)
		return fail(s, err);
	return CMD_OK;
}

static int cmd_backend(struct cmd_session *s, const struct cmd_args *a)
{
	enum rules_backend b = RULES_BACKEND_AUTO;
	char err[256];

	if (!a->negate) {
		if (cmd_arg_has(a, "nftables"))
			b = RULES_BACKEND_NFT;
		else if (cmd_arg_has(a, "iptables"))
			b = RULES_BACKEND_IPTABLES;
	}
	mark_global(G_BACKEND);
	if (assist_set_backend(b, err, sizeof(err)) < 0)
		return fail(s, err);
	return CMD_OK;
}

static int cmd_ncf_ttl(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	mark_global(G_NCF_TTL);
	assist_set_ncf_ttl(
		a->negate ? ASSIST_DEFAULT_NCF_TTL : (uint8_t)cmd_arg_int(a, "<1-255>", 255));
	return CMD_OK;
}

static int cmd_udp(struct cmd_session *s, const struct cmd_args *a)
{
	const struct assist_conf *c = assist_conf();
	uint16_t u = PGM_DEFAULT_UDP_UCAST_PORT, m = PGM_DEFAULT_UDP_MCAST_PORT;
	char err[256];

	if (a->negate) {
		u = c->udp_ucast_port;
		m = c->udp_mcast_port;
	} else if (cmd_arg_has(a, "ports")) {
		u = (uint16_t)cmd_arg_int(a, "ucast", u);
		m = (uint16_t)cmd_arg_int(a, "mcast", m);
	}
	mark_global(G_UDP);
	if (assist_set_udp(!a->negate, u, m, err, sizeof(err)) < 0)
		return fail(s, err);
	return CMD_OK;
}

static int cmd_lifetime(struct cmd_session *s, const struct cmd_args *a)
{
	struct cp_config d;

	(void)s;
	cp_config_default(&d);
	mark_global(G_LIFETIME);
	assist_set_session_lifetime(a->negate ? d.session_lifetime_s
					      : (uint32_t)cmd_arg_int(a, "<0-86400>", 300));
	return CMD_OK;
}

static int cmd_max_sessions(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	mark_global(G_MAX_SESSIONS);
	assist_set_max_sessions(a->negate ? 0 : (uint32_t)cmd_arg_int(a, "<0-10000000>", 0));
	return CMD_OK;
}

static int cmd_max_repair(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	mark_global(G_MAX_REPAIR);
	assist_set_max_repair_states(
		a->negate ? 0 : (uint32_t)cmd_arg_int(a, "<0-100000000>", 0));
	return CMD_OK;
}

static int cmd_dlr_redirect(struct cmd_session *s, const struct cmd_args *a)
{
	const struct assist_conf *c = assist_conf();

	(void)s;
	mark_global(G_DLR_REDIRECT);
	assist_set_dlr(!a->negate, c->dlr_discovery, c->dlr_poll_ivl_ms, c->dlr_poll_bo_ivl_ms);
	return CMD_OK;
}

static int cmd_dlr_discovery(struct cmd_session *s, const struct cmd_args *a)
{
	const struct assist_conf *c = assist_conf();
	struct cp_config d;

	(void)s;
	cp_config_default(&d);
	mark_global(G_DLR_DISCOVERY);
	if (a->negate) {
		assist_set_dlr(c->dlr_redirect, false, d.dlr_poll_ivl_ms, d.dlr_poll_bo_ivl_ms);
		return CMD_OK;
	}
	assist_set_dlr(c->dlr_redirect, true,
		(uint32_t)cmd_arg_int(a, "<1-3600>", d.dlr_poll_ivl_ms / 1000) * 1000u,
		(uint32_t)cmd_arg_int(a, "<1-10000>", d.dlr_poll_bo_ivl_ms));
	return CMD_OK;
}

static int cmd_link_output(struct cmd_session *s, const struct cmd_args *a)
{
	char err[256];

	mark_global(G_LINK_OUTPUT);
	if (assist_set_link_output(!a->negate, err, sizeof(err)) < 0)
		return fail(s, err);
	return CMD_OK;
}

static int cmd_poll_response(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	mark_global(G_POLL_RESPONSE);
	assist_set_poll_reply(!a->negate);
	return CMD_OK;
}

/* The timer commands share one handler: the timer is found by its keyword. */
static int timer_from_args(const struct cmd_args *a, uint32_t *value)
{
	for (int t = 0; t < ASSIST_T_COUNT; t++) {
		const struct assist_timer_def *d = assist_timer_def(t);

		if (cmd_arg_has(a, d->keyword)) {
			char range[32];

			snprintf(range, sizeof(range), "<%u-%u>", d->min, d->max);
			*value = (uint32_t)cmd_arg_int(a, range, 0);
			return t;
		}
	}
	return -1;
}

static int cmd_default_timer(struct cmd_session *s, const struct cmd_args *a)
{
	uint32_t v = 0;
	int t = timer_from_args(a, &v);

	(void)s;
	if (t < 0)
		return CMD_ERR_INVALID;
	if (reloading)
		default_timers_seen |= 1u << t;
	assist_set_default_timer(t, !a->negate, v);
	return CMD_OK;
}

/* ---- interface configuration ---- */

static int cmd_if_router(struct cmd_session *s, const struct cmd_args *a)
{
	char err[256];

	if (!a->negate && !cfg_interface_exists(s->ifname) && cfg_interface_add(s->ifname) < 0)
		return fail(s, "out of memory");
	if (reloading && !a->negate) {
		struct if_seen *seen = seen_if(s->ifname);

		if (seen != NULL)
			seen->enabled = true;
	}
	if (assist_if_enable(s->ifname, !a->negate, err, sizeof(err)) < 0)
		return fail(s, err);
	return CMD_OK;
}

static int cmd_if_timer(struct cmd_session *s, const struct cmd_args *a)
{
	uint32_t v = 0;
	int t = timer_from_args(a, &v);

	if (t < 0)
		return CMD_ERR_INVALID;
	if (!a->negate && !cfg_interface_exists(s->ifname) && cfg_interface_add(s->ifname) < 0)
		return fail(s, "out of memory");
	if (reloading && !a->negate) {
		struct if_seen *seen = seen_if(s->ifname);

		if (seen != NULL)
			seen->timers |= 1u << t;
	}
	assist_if_set_timer(s->ifname, t, !a->negate, v);
	return CMD_OK;
}

static void if_deleted(const char *ifname)
{
	assist_if_forget(ifname);
}

/* ---- running configuration ---- */

static void write_global(struct cfg_buf *b)
{
	const struct assist_conf *c = assist_conf();
	struct cp_config d;

	cp_config_default(&d);
	if (c->queue_num != ASSIST_DEFAULT_QUEUE)
		cfg_printf(b, "ip pgm router queue %u\n", c->queue_num);
	if (c->backend != RULES_BACKEND_AUTO)
		cfg_printf(b, "ip pgm router backend %s\n", rules_backend_name(c->backend));
	if (c->ncf_ttl != ASSIST_DEFAULT_NCF_TTL)
		cfg_printf(b, "ip pgm router ncf-ttl %u\n", c->ncf_ttl);
	if (!c->udp)
		cfg_printf(b, "no ip pgm router udp-encapsulation\n");
	else if (c->udp_ucast_port != PGM_DEFAULT_UDP_UCAST_PORT ||
		 c->udp_mcast_port != PGM_DEFAULT_UDP_MCAST_PORT)
		cfg_printf(b, "ip pgm router udp-encapsulation ports %u %u\n", c->udp_ucast_port,
			c->udp_mcast_port);
	if (!c->link_output)
		cfg_printf(b, "no ip pgm router link-layer-output\n");
	if (c->session_lifetime_s != d.session_lifetime_s)
		cfg_printf(b, "ip pgm router session-lifetime %u\n", c->session_lifetime_s);
	if (c->max_sessions != 0)
		cfg_printf(b, "ip pgm router max-sessions %u\n", c->max_sessions);
	if (c->max_repair_states != 0)
		cfg_printf(b, "ip pgm router max-rexmit-states %u\n", c->max_repair_states);
	if (c->dlr_redirect != d.dlr_redirect)
		cfg_printf(b, "%sip pgm router dlr-redirect\n", c->dlr_redirect ? "" : "no ");
	if (c->dlr_discovery) {
		cfg_printf(b, "ip pgm router dlr-discovery");
		if (c->dlr_poll_ivl_ms != d.dlr_poll_ivl_ms ||
			c->dlr_poll_bo_ivl_ms != d.dlr_poll_bo_ivl_ms)
			cfg_printf(b, " interval %u backoff %u", c->dlr_poll_ivl_ms / 1000,
				c->dlr_poll_bo_ivl_ms);
		cfg_printf(b, "\n");
	}
	if (c->poll_reply != d.poll_reply)
		cfg_printf(b, "%sip pgm router poll-response\n", c->poll_reply ? "" : "no ");
	for (int t = 0; t < ASSIST_T_COUNT; t++)
		if (c->defaults_set & (1u << t))
			cfg_printf(b, "ip pgm router %s %u\n", assist_timer_def(t)->keyword,
				assist_timer_get(&c->if_defaults, t));
}

static void write_interface(struct cfg_buf *b, const char *ifname)
{
	const struct assist_if *ifc = assist_if_find(ifname);

	if (ifc == NULL)
		return;
	if (ifc->enabled)
		cfg_printf(b, " ip pgm router\n");
	for (int t = 0; t < ASSIST_T_COUNT; t++)
		if (ifc->timers_set & (1u << t))
			cfg_printf(b, " ip pgm router %s %u\n", assist_timer_def(t)->keyword,
				assist_timer_get(&ifc->cfg, t));
}

/* ---- output helpers ---- */

static void buf_print(void *ctx, const char *fmt, ...)
{
	struct cfg_buf *b = ctx;
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cfg_printf(b, "%s", line);
}

static int stream(struct cmd_session *s, struct cfg_buf *b)
{
	if (b->failed) {
		cfg_buf_free(b);
		return fail(s, "out of memory");
	}
	if (b->len == 0) {
		cfg_buf_free(b);
		return CMD_OK;
	}
	return cmd_out_stream(s, b->data, b->len);
}

static void json_string(struct cfg_buf *b, const char *text)
{
	cfg_printf(b, "\"");
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			cfg_printf(b, "\\%c", *p);
		else if (*p < 0x20)
			cfg_printf(b, "\\u%04x", *p);
		else
			cfg_printf(b, "%c", *p);
	}
	cfg_printf(b, "\"");
}

/* "1.234s", "-" for none, "expired" for the past. */
static const char *time_left(cp_time_t when, cp_time_t now, char *buf, size_t len)
{
	if (when == 0)
		snprintf(buf, len, "-");
	else if (when <= now)
		snprintf(buf, len, "0.000s");
	else
		snprintf(buf, len, "%.3fs", (double)(when - now) / 1e6);
	return buf;
}

static const char *age(cp_time_t then, cp_time_t now, char *buf, size_t len)
{
	uint64_t s = then != 0 && now > then ? (now - then) / 1000000u : 0;

	snprintf(buf, len, "%02llu:%02llu:%02llu", (unsigned long long)(s / 3600),
		(unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	return buf;
}

static bool not_running(struct cmd_session *s)
{
	if (assist_cp() != NULL)
		return false;
	cmd_out(s, "%% PGM router assist is not running\n");
	return true;
}

/* ---- show ip pgm router ---- */

static const char *limit_text(uint32_t limit, char *buf, size_t len)
{
	if (limit == 0)
		snprintf(buf, len, "no limit");
	else
		snprintf(buf, len, "limit %u", limit);
	return buf;
}

/* The per-interface settings, worded as their configuration keywords. */
static void timer_lines(
	struct cfg_buf *b, const char *indent, const struct cp_if_config *cfg, bool backoff)
{
	cfg_printf(b, "%sNAK repeat interval %u ms, NAK repeat rate %u per second\n", indent,
		cfg->nak_rpt_ivl_ms, cfg->nak_rpt_rate);
	cfg_printf(b, "%sNAK RDATA interval %u ms, NAK eliminate interval %u ms\n", indent,
		cfg->nak_rdata_ivl_ms, cfg->nak_elim_ivl_ms);
	cfg_printf(b, "%sNCF interval %u ms\n", indent, cfg->ncf_ivl_ms);
	if (!backoff)
		return;
	if (cfg->nak_bo_ivl_us)
		cfg_printf(b, "%sNAK backoff interval %u ms (written into forwarded SPMs)\n",
			indent, cfg->nak_bo_ivl_us / 1000);
	else
		cfg_printf(b, "%sNAK backoff interval of forwarded SPMs left unchanged\n", indent);
}

static int cmd_show_summary(struct cmd_session *s, const struct cmd_args *a)
{
	const struct assist_conf *c = assist_conf();
	struct cp_stats st = {0};
	struct cfg_buf b = {0};
	char lim1[32], lim2[32];
	bool json = cmd_arg_has(a, "json");
	size_t nif = assist_if_count(), nen = assist_if_enabled_count();

	if (assist_cp() != NULL)
		cp_get_stats(assist_cp(), &st);
	if (json) {
		cfg_printf(&b,
			"{\"running\":%s,\"interfaces_configured\":%zu,\"interfaces_enabled\":%zu,"
			"\"sessions\":%zu,\"repair_states\":%zu,\"memory_bytes\":%zu,"
			"\"max_sessions\":%u,\"max_rexmit_states\":%u,\"session_lifetime\":%u,"
			"\"queue\":%u}\n",
			assist_running() ? "true" : "false", nif, nen, st.sessions,
			st.repair_states, st.bytes, c->max_sessions, c->max_repair_states,
			c->session_lifetime_s, c->queue_num);
		return stream(s, &b);
	}
	cfg_printf(&b, "PGM router assist: %s, enabled on %zu interface%s\n",
		assist_running() ? "running" : "not running", nen, nen == 1 ? "" : "s");
	cfg_printf(&b, "  %zu session%s (%s), %zu repair state%s (%s), memory %zu KB\n",
		st.sessions, st.sessions == 1 ? "" : "s",
		limit_text(c->max_sessions, lim1, sizeof(lim1)), st.repair_states,
		st.repair_states == 1 ? "" : "s",
		limit_text(c->max_repair_states, lim2, sizeof(lim2)), st.bytes / 1024);
	if (c->session_lifetime_s == 0)
		cfg_printf(&b, "  Sessions never expire (session-lifetime 0)\n");
	else
		cfg_printf(&b, "  Sessions expire after %u seconds without SPMs\n",
			c->session_lifetime_s);
	cfg_printf(&b, "  Netfilter queue %u, NCF TTL %u, PGM over UDP ", c->queue_num, c->ncf_ttl);
	if (c->udp)
		cfg_printf(&b, "on ports %u (unicast) and %u (multicast)\n", c->udp_ucast_port,
			c->udp_mcast_port);
	else
		cfg_printf(&b, "not intercepted\n");
	if (cmd_arg_has(a, "verbose")) {
		cfg_printf(&b, "  Interface defaults:\n");
		timer_lines(&b, "    ", &c->if_defaults, true);
	}
	return stream(s, &b);
}

static void interface_block(struct cfg_buf *b, const struct assist_if *ifc, bool verbose,
	bool json, bool *first)
{
	struct cp_if_view v;
	bool up, running, have_view = false;
	int ifindex = assist_if_link(ifc->name, &up, &running);
	char addr[64] = "-";

	if (ifindex != 0 && assist_cp() != NULL && cp_get_if(assist_cp(), ifindex, &v)) {
		have_view = true;
		pgm_nla_format(&v.addr, addr, sizeof(addr));
	}
	if (json) {
		cfg_printf(b, "%s{\"name\":", *first ? "" : ",");
		json_string(b, ifc->name);
		cfg_printf(b,
			",\"exists\":%s,\"ifindex\":%d,\"up\":%s,\"address\":\"%s\","
			"\"router_assist\":%s",
			ifindex ? "true" : "false", ifindex, up ? "true" : "false",
			have_view ? addr : "", ifc->enabled ? "true" : "false");
		for (int t = 0; t < ASSIST_T_COUNT; t++) {
			char key[40];

			snprintf(key, sizeof(key), "%s", assist_timer_def(t)->keyword);
			for (char *p = key; *p; p++)
				if (*p == '-')
					*p = '_';
			cfg_printf(b, ",\"%s\":%u", key, assist_timer_get(&ifc->cfg, t));
		}
		cfg_printf(b, "}");
		*first = false;
		return;
	}
	if (ifindex == 0)
		cfg_printf(b, "%s does not exist (waiting for it)\n", ifc->name);
	else
		cfg_printf(b, "%s is %s, line protocol is %s, ifindex %d\n", ifc->name,
			up ? "up" : "administratively down", running ? "up" : "down", ifindex);
	cfg_printf(b, "  PGM router assist %s\n", ifc->enabled ? "enabled" : "disabled");
	if (ifindex != 0)
		cfg_printf(b, "  Address %s (the path NLA of SPMs forwarded here)\n", addr);
	timer_lines(b, "  ", &ifc->cfg, verbose);
	if (verbose && have_view && v.counters != NULL)
		cfg_printf(b, "  NAKs received %llu, NCFs sent %llu, RDATA forwarded %llu\n",
			(unsigned long long)v.counters->ev[CP_C_NAK_RECEIVED],
			(unsigned long long)v.counters->ev[CP_C_NCF_SENT],
			(unsigned long long)v.counters->ev[CP_C_RDATA_FORWARDED]);
}

struct interface_ctx {
	struct cfg_buf *b;
	const char *name;
	bool json, verbose, first;
	size_t shown;
};

static void interface_one(void *arg, const char *ifname)
{
	struct interface_ctx *c = arg;
	const struct assist_if *ifc = assist_if_find(ifname);

	if (ifc == NULL || (c->name != NULL ? strcmp(ifname, c->name) != 0 : !ifc->enabled))
		return;
	interface_block(c->b, ifc, c->verbose, c->json, &c->first);
	c->shown++;
}

static int cmd_show_interface(struct cmd_session *s, const struct cmd_args *a)
{
	const char *name = cmd_arg(a, "IFNAME");
	bool json = cmd_arg_has(a, "json");
	struct cfg_buf b = {0};
	struct interface_ctx c = {.b = &b, .name = name, .json = json, .first = true};
	size_t shown;

	c.verbose = cmd_arg_has(a, "verbose");
	if (json)
		cfg_printf(&b, "{\"interfaces\":[");
	/* in the order of the running configuration */
	cfg_foreach_interface(interface_one, &c);
	shown = c.shown;
	if (json) {
		cfg_printf(&b, "]}\n");
	} else if (shown == 0) {
		cfg_buf_free(&b);
		if (name != NULL) {
			cmd_out(s, "%% %s has no PGM configuration\n", name);
			return CMD_ERR_FAILED;
		}
		cmd_out(s, "PGM router assist is not enabled on any interface\n");
		return CMD_OK;
	}
	return stream(s, &b);
}

struct state_ctx {
	struct cfg_buf *b;
	bool json, verbose;
	cp_time_t now;
	size_t sessions, rows, total_rows;
	bool first_session, first_row;
};

static void if_mask_names(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned slot = 0; slot < 64 && off < len; slot++) {
		char name[CP_IFNAME_LEN];
		int n;

		if (!(mask & (1ull << slot)))
			continue;
		assist_ifname(cp_if_slot_ifindex(assist_cp(), slot), name, sizeof(name));
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, len, "(none)");
}

static void state_repair(void *arg, const struct cp_repair_view *r)
{
	static const char *const dlr_names[] = {"upstream", "upstream-dlr", "offtree-dlr"};
	struct state_ctx *c = arg;
	char ifs[256], t1[24], t2[24], t3[24], t4[24], sqn[32];

	c->total_rows++;
	if (!c->verbose && !c->json && c->rows >= REPAIR_ROWS_BRIEF)
		return;
	c->rows++;
	if_mask_names(r->if_mask, ifs, sizeof(ifs));
	if (c->json) {
		cfg_printf(c->b,
			"%s{\"sqn\":%u,\"parity\":%s,\"packet_count\":%u,\"nak_to\":\"%s\","
			"\"phase\":\"%s\",\"eliminating\":%s,\"anticipated\":%s,"
			"\"nnak_created\":%s,\"interfaces\":\"%s\",\"nak_repeat_in\":%.6f,"
			"\"nak_repeat_end_in\":%.6f,\"rdata_wait_in\":%.6f,\"elim_end_in\":%.6f}",
			c->first_row ? "" : ",", r->sqn, r->parity ? "true" : "false", r->pkt_cnt,
			dlr_names[r->dlr], cp_phase_name(r->phase),
			r->eliminating ? "true" : "false", r->anticipated ? "true" : "false",
			r->nnak_created ? "true" : "false", ifs,
			r->rpt_next > c->now ? (double)(r->rpt_next - c->now) / 1e6 : 0.0,
			r->rpt_end > c->now ? (double)(r->rpt_end - c->now) / 1e6 : 0.0,
			r->rdata_end > c->now ? (double)(r->rdata_end - c->now) / 1e6 : 0.0,
			r->elim_end > c->now ? (double)(r->elim_end - c->now) / 1e6 : 0.0);
		c->first_row = false;
		return;
	}
	if (r->parity)
		snprintf(sqn, sizeof(sqn), "TG %u/%u", r->sqn, r->pkt_cnt);
	else
		snprintf(sqn, sizeof(sqn), "%u", r->sqn);
	cfg_printf(c->b, "    %-11s %-12s%-4s %-20s %-9s %-9s %-9s %s%s\n", sqn,
		cp_phase_name(r->phase),
		r->anticipated ? "ant" : r->nnak_created ? "nnak" : "", ifs,
		time_left(r->rpt_next, c->now, t1, sizeof(t1)),
		time_left(r->rpt_end, c->now, t2, sizeof(t2)),
		time_left(r->elim_end, c->now, t3, sizeof(t3)),
		time_left(r->rdata_end, c->now, t4, sizeof(t4)),
		r->dlr == 1 ? " (upstream DLR)" : r->dlr == 2 ? " (off-tree DLR)" : "");
}

static void state_session(void *arg, const struct cp_session_view *v)
{
	struct state_ctx *c = arg;
	char tsi[32], src[64], grp[64], up[64], ifname[CP_IFNAME_LEN], t1[24], t2[24];
	char dlr_up[64], dlr_off[64], offif[CP_IFNAME_LEN], unreach[256], tgsize[16];

	pgm_nla_format(&v->dlr_upstream, dlr_up, sizeof(dlr_up));
	pgm_nla_format(&v->dlr_offtree, dlr_off, sizeof(dlr_off));
	assist_ifname(v->dlr_offtree_ifindex, offif, sizeof(offif));
	if_mask_names(v->unreach_mask, unreach, sizeof(unreach));
	snprintf(tgsize, sizeof(tgsize), "%u", v->curr_tgsize);
	pgm_tsi_format(&v->tsi, tsi, sizeof(tsi));
	pgm_nla_format(&v->source, src, sizeof(src));
	pgm_nla_format(&v->group, grp, sizeof(grp));
	pgm_nla_format(&v->upstream, up, sizeof(up));
	assist_ifname(v->upstream_ifindex, ifname, sizeof(ifname));
	c->sessions++;
	c->rows = 0;
	c->total_rows = 0;
	if (c->json) {
		cfg_printf(c->b,
			"%s{\"tsi\":\"%s\",\"source\":\"%s\",\"group\":\"%s\",\"dport\":%u,"
			"\"upstream\":\"%s\",\"upstream_interface\":",
			c->first_session ? "" : ",", tsi, src, grp, v->data_dport, up);
		json_string(c->b, ifname);
		cfg_printf(c->b,
			",\"spm_sqn\":%u,\"trail\":%u,\"lead\":%u,\"ttl\":%u,\"udp\":%s,"
			"\"age\":%.3f,\"last_spm\":%.3f,\"expires_in\":%.3f,\"repair_states\":%zu,"
			"\"parity_states\":%zu,\"tg_size\":%u,\"curr_tg_size\":%u,"
			"\"naks_suspended\":%s,\"unreachable_interfaces\":\"%s\","
			"\"dlrs\":[",
			v->spm_sqn, v->trail, v->lead, v->last_ttl, v->udp ? "true" : "false",
			(double)(c->now - v->created) / 1e6, (double)(c->now - v->last_spm) / 1e6,
			v->expires > c->now ? (double)(v->expires - c->now) / 1e6 : 0.0,
			v->repair_states, v->parity_states, v->parity_tgs, v->curr_tgsize,
			v->naks_suspended ? "true" : "false", unreach);
		if (v->dlr_upstream.afi != 0) {
			cfg_printf(c->b,
				"{\"address\":\"%s\",\"kind\":\"upstream\",\"interface\":",
				dlr_up);
			json_string(c->b, ifname);
			cfg_printf(c->b, ",\"parity\":%s,\"age\":%.3f}",
				v->dlr_upstream_parity ? "true" : "false",
				(double)(c->now - v->dlr_upstream_learned) / 1e6);
		}
		if (v->dlr_offtree.afi != 0) {
			cfg_printf(c->b,
				"%s{\"address\":\"%s\",\"kind\":\"offtree\",\"interface\":",
				v->dlr_upstream.afi != 0 ? "," : "", dlr_off);
			json_string(c->b, offif);
			cfg_printf(c->b, ",\"parity\":%s,\"age\":%.3f}",
				v->dlr_offtree_parity ? "true" : "false",
				(double)(c->now - v->dlr_offtree_learned) / 1e6);
		}
		cfg_printf(c->b, "],\"repairs\":[");
		c->first_row = true;
		cp_foreach_repair(assist_cp(), &v->tsi, state_repair, c);
		cfg_printf(c->b, "]}");
		c->first_session = false;
		return;
	}
	cfg_printf(c->b, "\nSession %s, source %s, group %s, port %u%s\n", tsi, src, grp,
		v->data_dport, v->udp ? ", PGM over UDP" : "");
	cfg_printf(c->b, "  Upstream %s on %s, SPM sqn %u, window %u-%u, TTL %u\n", up, ifname,
		v->spm_sqn, v->trail, v->lead, v->last_ttl);
	cfg_printf(c->b, "  Up %s, last SPM %.1fs ago, expires in %s\n",
		age(v->created, c->now, t1, sizeof(t1)), (double)(c->now - v->last_spm) / 1e6,
		v->expires ? time_left(v->expires, c->now, t2, sizeof(t2)) : "never");
	if (v->dlr_upstream.afi != 0)
		cfg_printf(c->b, "  Upstream DLR %s on %s%s, learned %s ago\n", dlr_up, ifname,
			v->dlr_upstream_parity ? ", parity" : "",
			age(v->dlr_upstream_learned, c->now, t1, sizeof(t1)));
	if (v->dlr_offtree.afi != 0)
		cfg_printf(c->b, "  Off-tree DLR %s on %s%s, learned %s ago\n", dlr_off, offif,
			v->dlr_offtree_parity ? ", parity" : "",
			age(v->dlr_offtree_learned, c->now, t1, sizeof(t1)));
	if (v->parity_tgs != 0)
		cfg_printf(c->b, "  FEC transmission group %u%s%s, %zu parity repair state%s\n",
			v->parity_tgs, v->curr_tgsize ? ", current " : "",
			v->curr_tgsize ? tgsize : "",
			v->parity_states, v->parity_states == 1 ? "" : "s");
	if (v->naks_suspended)
		cfg_printf(c->b, "  NAKs suspended: upstream neighbour unreachable (until an SPM)\n");
	if (v->unreach_mask != 0)
		cfg_printf(c->b, "  Unicast NCFs (neighbour unreachable) on %s\n", unreach);
	if (v->repair_states == 0) {
		cfg_printf(c->b, "  No repair state\n");
	} else {
		cfg_printf(c->b, "  Repair state%s: %zu\n", v->repair_states == 1 ? "" : "s",
			v->repair_states);
		cfg_printf(c->b, "    %-11s %-16s %-20s %-9s %-9s %-9s %s\n", "SQN", "Phase",
			"Interfaces", "Repeat", "RptEnd", "Elim", "RDATA");
		cp_foreach_repair(assist_cp(), &v->tsi, state_repair, c);
		if (c->total_rows > c->rows)
			cfg_printf(c->b, "    ... %zu more (show ip pgm router state verbose)\n",
				c->total_rows - c->rows);
	}
	if (c->verbose && v->counters != NULL) {
		const struct cp_counters *k = v->counters;

		cfg_printf(c->b, "  NAKs %llu sent to DLRs, %llu DLR timeouts; parity NAKs %llu "
				 "forwarded; NAKs %llu suspended (neighbour unreachable)\n",
			(unsigned long long)k->ev[CP_C_NAK_REDIRECTED],
			(unsigned long long)k->ev[CP_C_DLR_TIMEOUT],
			(unsigned long long)k->ev[CP_C_PARITY_NAK_FORWARDED],
			(unsigned long long)k->ev[CP_C_NAK_SUSPENDED]);
		cfg_printf(c->b,
			"  NAKs %llu received, %llu unique, %llu forwarded, %llu eliminated; "
			"NCFs %llu sent\n  RDATA copies %llu forwarded, %llu not forwarded "
			"(not requested there)\n",
			(unsigned long long)k->ev[CP_C_NAK_RECEIVED],
			(unsigned long long)k->ev[CP_C_NAK_UNIQUE],
			(unsigned long long)k->ev[CP_C_NAK_FORWARDED],
			(unsigned long long)k->ev[CP_C_NAK_ELIMINATED],
			(unsigned long long)k->ev[CP_C_NCF_SENT],
			(unsigned long long)k->ev[CP_C_RDATA_FORWARDED],
			(unsigned long long)(k->ev[CP_C_RDATA_NO_STATE] +
					     k->ev[CP_C_RDATA_NO_INTERFACE]));
	}
}

static int cmd_show_state(struct cmd_session *s, const struct cmd_args *a)
{
	const char *group_text = cmd_arg(a, "A.B.C.D");
	struct pgm_nla group;
	struct cfg_buf b = {0};
	struct cp_stats st;
	struct state_ctx c = {.b = &b, .first_session = true};

	if (not_running(s))
		return CMD_ERR_FAILED;
	if (group_text != NULL && !pgm_nla_parse(&group, group_text))
		return fail(s, "bad group address");
	c.json = cmd_arg_has(a, "json");
	c.verbose = cmd_arg_has(a, "verbose");
	c.now = assist_now();
	cp_get_stats(assist_cp(), &st);
	if (c.json)
		cfg_printf(&b, "{\"sessions\":[");
	else
		cfg_printf(&b, "PGM router state: %zu session%s, %zu repair state%s\n", st.sessions,
			st.sessions == 1 ? "" : "s", st.repair_states,
			st.repair_states == 1 ? "" : "s");
	cp_foreach_session(assist_cp(), group_text != NULL ? &group : NULL, state_session, &c);
	if (c.json)
		cfg_printf(&b, "]}\n");
	else if (group_text != NULL && c.sessions == 0)
		cfg_printf(&b, "No session for group %s\n", group_text);
	return stream(s, &b);
}

/* Packet types worth a column: every RFC 3208 type. */
static const unsigned traffic_types[] = {PGM_SPM, PGM_POLL, PGM_POLR, PGM_RDATA, PGM_NAK,
	PGM_NNAK, PGM_NCF, PGM_SPMR, PGM_ACK, PGM_ODATA};
#define NTRAFFIC_TYPES (sizeof(traffic_types) / sizeof(traffic_types[0]))

struct traffic_ctx {
	struct cfg_buf *b;
	const char *name;
	bool json, verbose, first;
	size_t shown;
};

static void traffic_if(void *arg, const struct cp_if_view *v)
{
	struct traffic_ctx *c = arg;
	const struct cp_counters *k = v->counters;
	bool any = false;

	if (k == NULL || (c->name != NULL ? strcmp(v->name, c->name) != 0 : !v->assist))
		return;
	c->shown++;
	if (c->json) {
		cfg_printf(c->b, "%s{\"name\":", c->first ? "" : ",");
		json_string(c->b, v->name);
		cfg_printf(c->b, ",\"router_assist\":%s,\"received\":{", v->assist ? "true" : "false");
		for (size_t i = 0; i < NTRAFFIC_TYPES; i++)
			cfg_printf(c->b, "%s\"%s\":%llu", i ? "," : "",
				pgm_type_name(traffic_types[i]),
				(unsigned long long)k->in[traffic_types[i]]);
		cfg_printf(c->b, "},\"sent\":{");
		for (size_t i = 0; i < NTRAFFIC_TYPES; i++)
			cfg_printf(c->b, "%s\"%s\":%llu", i ? "," : "",
				pgm_type_name(traffic_types[i]),
				(unsigned long long)k->out[traffic_types[i]]);
		cfg_printf(c->b, "},\"events\":{");
		for (unsigned e = 0; e < CP_C_COUNT; e++)
			cfg_printf(c->b, "%s\"%s\":%llu", e ? "," : "", cp_counter_name(e),
				(unsigned long long)k->ev[e]);
		cfg_printf(c->b, "},\"errors\":{");
		for (unsigned e = 1; e < PGM_ERR_COUNT; e++)
			cfg_printf(c->b, "%s\"%s\":%llu", e > 1 ? "," : "", pgm_err_name(e),
				(unsigned long long)k->err[e]);
		cfg_printf(c->b, "}}");
		c->first = false;
		return;
	}
	cfg_printf(c->b, "\n%s%s\n", v->name, v->assist ? "" : " (router assist disabled)");
	cfg_printf(c->b, "  %-10s", "");
	for (size_t i = 0; i < NTRAFFIC_TYPES - 1; i++)
		cfg_printf(c->b, " %8s", pgm_type_name(traffic_types[i]));
	cfg_printf(c->b, "\n  %-10s", "Received");
	for (size_t i = 0; i < NTRAFFIC_TYPES - 1; i++)
		cfg_printf(c->b, " %8llu", (unsigned long long)k->in[traffic_types[i]]);
	cfg_printf(c->b, "\n  %-10s", "Sent");
	for (size_t i = 0; i < NTRAFFIC_TYPES - 1; i++)
		cfg_printf(c->b, " %8llu", (unsigned long long)k->out[traffic_types[i]]);
	cfg_printf(c->b, "\n");
	for (unsigned e = 0; e < CP_C_COUNT; e++) {
		if (!c->verbose && k->ev[e] == 0)
			continue;
		cfg_printf(c->b, "  %-24s %12llu%s%s\n", cp_counter_name(e),
			(unsigned long long)k->ev[e], c->verbose ? "  " : "",
			c->verbose ? cp_counter_description(e) : "");
	}
	for (unsigned e = 1; e < PGM_ERR_COUNT; e++) {
		if (k->err[e] == 0 && !c->verbose)
			continue;
		if (!any)
			cfg_printf(c->b, "  Malformed packets dropped, by error:\n");
		any = true;
		cfg_printf(c->b, "    %-22s %12llu%s%s\n", pgm_err_name(e),
			(unsigned long long)k->err[e], c->verbose ? "  " : "",
			c->verbose ? pgm_err_description(e) : "");
	}
}

/* Events of timers and limits, which belong to no interface. */
static void traffic_global(struct traffic_ctx *c)
{
	struct cp_stats st;
	bool any = false;

	cp_get_stats(assist_cp(), &st);
	if (c->json) {
		cfg_printf(c->b, ",\"router\":{");
		for (unsigned e = 0; e < CP_C_COUNT; e++)
			cfg_printf(c->b, "%s\"%s\":%llu", e ? "," : "", cp_counter_name(e),
				(unsigned long long)st.global_ev[e]);
		cfg_printf(c->b, "}");
		return;
	}
	/* most counters can never be router-wide: only those that happened, verbose or not */
	for (unsigned e = 0; e < CP_C_COUNT; e++) {
		if (st.global_ev[e] == 0)
			continue;
		if (!any)
			cfg_printf(c->b, "\nRouter-wide (timers and limits)\n");
		any = true;
		cfg_printf(c->b, "  %-24s %12llu%s%s\n", cp_counter_name(e),
			(unsigned long long)st.global_ev[e], c->verbose ? "  " : "",
			c->verbose ? cp_counter_description(e) : "");
	}
}

static int cmd_show_traffic(struct cmd_session *s, const struct cmd_args *a)
{
	struct cfg_buf b = {0};
	struct traffic_ctx c = {.b = &b, .first = true};

	if (not_running(s))
		return CMD_ERR_FAILED;
	c.name = cmd_arg(a, "IFNAME");
	c.json = cmd_arg_has(a, "json");
	c.verbose = cmd_arg_has(a, "verbose");
	if (c.json)
		cfg_printf(&b, "{\"interfaces\":[");
	else
		cfg_printf(&b, "PGM router traffic (ODATA is switched by the kernel and not "
			       "counted)\n");
	cp_foreach_if(assist_cp(), traffic_if, &c);
	if (c.json)
		cfg_printf(&b, "]");
	if (c.name == NULL)
		traffic_global(&c);
	if (c.json) {
		cfg_printf(&b, "}\n");
	} else if (c.shown == 0) {
		cfg_buf_free(&b);
		if (c.name != NULL) {
			cmd_out(s, "%% No interface %s\n", c.name);
			return CMD_ERR_FAILED;
		}
		cmd_out(s, "No interface with router assist\n");
		return CMD_OK;
	}
	return stream(s, &b);
}

static int cmd_show_dataplane(struct cmd_session *s, const struct cmd_args *a)
{
	struct cfg_buf b = {0};

	assist_dataplane_report(buf_print, &b, cmd_arg_has(a, "json"));
	return stream(s, &b);
}

/* ---- clear ---- */

static int cmd_clear_traffic(struct cmd_session *s, const struct cmd_args *a)
{
	const char *name = cmd_arg(a, "IFNAME");
	int ifindex = 0;

	if (not_running(s))
		return CMD_ERR_FAILED;
	if (name != NULL && (ifindex = assist_ifindex(name)) == 0) {
		cmd_out(s, "%% No interface %s\n", name);
		return CMD_ERR_FAILED;
	}
	cp_clear_counters(assist_cp(), ifindex);
	log_info("PGM router traffic counters cleared%s%s", name ? " on " : "", name ? name : "");
	return CMD_OK;
}

static int cmd_clear_dlr(struct cmd_session *s, const struct cmd_args *a)
{
	const char *text = cmd_arg(a, "A.B.C.D");
	struct pgm_nla dlr;
	size_t n;

	if (not_running(s))
		return CMD_ERR_FAILED;
	if (text != NULL && !pgm_nla_parse(&dlr, text))
		return fail(s, "bad DLR address");
	n = cp_clear_dlrs(assist_cp(), text != NULL ? &dlr : NULL);
	if (!s->batch)
		cmd_out(s, "Cleared %zu learned DLR%s\n", n, n == 1 ? "" : "s");
	log_info("%zu learned DLRs cleared%s%s", n, text ? " for " : "", text ? text : "");
	return CMD_OK;
}

static int cmd_clear_rtx(struct cmd_session *s, const struct cmd_args *a)
{
	const char *group_text = cmd_arg(a, "A.B.C.D");
	struct pgm_nla group;
	size_t n;

	if (not_running(s))
		return CMD_ERR_FAILED;
	if (group_text != NULL && !pgm_nla_parse(&group, group_text))
		return fail(s, "bad group address");
	n = cp_clear_repair_states(assist_cp(), group_text ? &group : NULL);
	if (!s->batch)
		cmd_out(s, "Cleared %zu repair state%s\n", n, n == 1 ? "" : "s");
	log_info("%zu PGM repair states cleared%s%s", n, group_text ? " for group " : "",
		group_text ? group_text : "");
	return CMD_OK;
}

/* ---- debug capture ---- */

static int cmd_debug_capture(struct cmd_session *s, const struct cmd_args *a)
{
	char err[256];

	if (a->negate) {
		assist_capture_stop();
		return CMD_OK;
	}
	/* the file is opened by the daemon, whose working directory is / once detached */
	if (cmd_arg(a, "WORD")[0] != '/')
		return fail(s, "Give the capture file as an absolute path");
	if (!assist_running())
		return fail(s, "PGM router assist is not running");
	if (assist_capture_start(cmd_arg(a, "WORD"),
		    (uint32_t)cmd_arg_int(a, "<1-4096>", ASSIST_DEFAULT_CAPTURE_MB), err,
		    sizeof(err)) < 0)
		return fail(s, err);
	return CMD_OK;
}

/* `show debugging` */
static void show_capture(struct cmd_session *s)
{
	const char *path;

	if (assist_capture_active(&path))
		cmd_out(s, "  PGM router packet capture to %s is on\n", path);
}

static int cmd_undebug_capture(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	(void)a;
	assist_capture_stop();
	return CMD_OK;
}

/* ---- command tables ---- */

/* keyword, range, help of the keyword and of the value; the `no` forms take the value or not */
#define TIMER_SPECS(X)                                                                             \
	X("nak-repeat-interval", "<10-600000>",                                                    \
		"NAK_RPT_IVL: how long an unconfirmed NAK is repeated upstream\n",                 \
		"Milliseconds\n")                                                                  \
	X("nak-repeat-rate", "<1-1000>",                                                           \
		"NAK_RPT_RTE: repeats per second while a NAK is unconfirmed\n",                    \
		"NAKs per second\n")                                                               \
	X("nak-rdata-interval", "<10-3600000>",                                                    \
		"NAK_RDATA_IVL: how long repair state waits for RDATA after an NCF\n",             \
		"Milliseconds\n")                                                                  \
	X("nak-eliminate-interval", "<0-3600000>",                                                 \
		"NAK_ELIM_IVL: duplicate NAKs discarded after a confirmation\n", "Milliseconds\n") \
	X("ncf-interval", "<0-60000>",                                                             \
		"Identical NCFs on one interface at most once per interval\n", "Milliseconds\n")   \
	X("nak-backoff-interval", "<0-60000>",                                                     \
		"NAK_BO_IVL advertised in NCFs and written into forwarded SPMs (0: unchanged)\n",  \
		"Milliseconds\n")                                                                  \
	X("nak-backoff-probe", "<0-1000>",                                                         \
		"Tune NAK_BO_IVL: x2 on a first duplicate NAK, /2 after this many clean states\n", \
		"Repair states (NAK_PROBE_NUM; 0: no tuning)\n")                                  \
	X("nak-backoff-minimum", "<0-60000>",                                                      \
		"NAK_BO_IVL_MIN: lower bound of the tuned NAK_BO_IVL\n", "Milliseconds\n")        \
	X("nak-backoff-maximum", "<0-60000>",                                                      \
		"NAK_BO_IVL_MAX: upper bound of the tuned NAK_BO_IVL\n", "Milliseconds\n")        \
	X("duplicate-nak-max", "<0-1000>",                                                         \
		"DUP_NAK_MAX: duplicate NAKs at which multicast below is assumed lost\n",          \
		"Duplicate NAKs for one repair state (0: never)\n")

/* (the parameters must not be named like the designators they sit next to) */
#define TIMER_DEF(node, fn, kw, range, kw_help, range_help)                                        \
	{.spec = "ip pgm router " kw " " range,                                                    \
		.help = PGM_ROUTER_HELP kw_help range_help,                                        \
		.modes = CMD_MODE(node),                                                           \
		.priv = CMD_PRIV_ADMIN,                                                            \
		.handler = fn,                                                                     \
		.no_spec = "ip pgm router " kw " [" range "]",                                     \
		.no_help = PGM_ROUTER_HELP kw_help range_help},
#define GLOBAL_TIMER_DEF(...) TIMER_DEF(CMD_NODE_CONFIG, cmd_default_timer, __VA_ARGS__)
#define IF_TIMER_DEF(...)     TIMER_DEF(CMD_NODE_CONFIG_IF, cmd_if_timer, __VA_ARGS__)

#define SHOW_PGM SHOW_STR PGM_ROUTER_HELP
#define FORMAT_HELP "Detailed output\nJSON output\n"

static const struct cmd_def pgm_cmds[] = {
	/* global configuration */
	{.spec = "ip pgm router queue <0-65535>",
		.help = PGM_ROUTER_HELP "Netfilter queue number the data plane binds\n"
					"Queue number\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_queue,
		.no_spec = "ip pgm router queue [<0-65535>]",
		.no_help = PGM_ROUTER_HELP "Netfilter queue number the data plane binds\n"
					   "Queue number\n"},
	{.spec = "ip pgm router backend (auto|nftables|iptables)",
		.help = PGM_ROUTER_HELP "How interception rules are installed\n"
					"nftables where the kernel has queue support, else iptables\n"
					"nftables (needs CONFIG_NFT_QUEUE)\n"
					"iptables with the NFQUEUE target and the u32 match\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_backend,
		.no_spec = "ip pgm router backend [(auto|nftables|iptables)]",
		.no_help = PGM_ROUTER_HELP "How interception rules are installed\n"
					   "nftables where the kernel has queue support, else iptables\n"
					   "nftables (needs CONFIG_NFT_QUEUE)\n"
					   "iptables with the NFQUEUE target and the u32 match\n"},
	{.spec = "ip pgm router ncf-ttl <1-255>",
		.help = PGM_ROUTER_HELP "IP TTL of the NCFs the router multicasts\nTTL\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_ncf_ttl,
		.no_spec = "ip pgm router ncf-ttl [<1-255>]",
		.no_help = PGM_ROUTER_HELP "IP TTL of the NCFs the router multicasts\nTTL\n"},
	{.spec = "ip pgm router udp-encapsulation [ports <1-65535>$ucast <1-65535>$mcast]",
		.help = PGM_ROUTER_HELP "Intercept PGM over UDP (OpenPGM, ZeroMQ epgm)\n"
					"UDP ports\nUnicast port (NAKs), default 3055\n"
					"Multicast port (group traffic), default 3056\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_udp,
		.no_spec = "ip pgm router udp-encapsulation",
		.no_help = PGM_ROUTER_HELP "Intercept PGM over UDP (OpenPGM, ZeroMQ epgm)\n"},
	{.spec = "ip pgm router link-layer-output",
		.help = PGM_ROUTER_HELP "Send multicast, and unicast to confirmed neighbours, onto "
					"Ethernet links through a packet socket (no route lookup; "
					"bypasses netfilter output hooks)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_link_output,
		.no_spec = CMD_NO_SAME},
	{.spec = "ip pgm router session-lifetime <0-86400>",
		.help = PGM_ROUTER_HELP "How long a session lives without SPMs\n"
					"Seconds (0: forever)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_lifetime,
		.no_spec = "ip pgm router session-lifetime [<0-86400>]",
		.no_help = PGM_ROUTER_HELP "How long a session lives without SPMs\n"
					   "Seconds (0: forever)\n"},
	{.spec = "ip pgm router max-sessions <0-10000000>",
		.help = PGM_ROUTER_HELP "Limit the sessions tracked (pgmNeMaxSessions)\n"
					"Sessions (0: no limit)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_max_sessions,
		.no_spec = "ip pgm router max-sessions [<0-10000000>]",
		.no_help = PGM_ROUTER_HELP "Limit the sessions tracked (pgmNeMaxSessions)\n"
					   "Sessions (0: no limit)\n"},
	{.spec = "ip pgm router max-rexmit-states <0-100000000>",
		.help = PGM_ROUTER_HELP "Limit the repair states kept (pgmNeMaxReXmitStates)\n"
					"Repair states (0: no limit)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_max_repair,
		.no_spec = "ip pgm router max-rexmit-states [<0-100000000>]",
		.no_help = PGM_ROUTER_HELP "Limit the repair states kept (pgmNeMaxReXmitStates)\n"
					   "Repair states (0: no limit)\n"},
	{.spec = "ip pgm router dlr-redirect",
		.help = PGM_ROUTER_HELP "Send NAKs to DLRs that announce themselves (redirecting "
					"POLRs)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_dlr_redirect,
		.no_spec = CMD_NO_SAME},
	{.spec = "ip pgm router dlr-discovery [interval <1-3600> backoff <1-10000>]",
		.help = PGM_ROUTER_HELP "Poll for off-tree DLRs (POLL sub-type DLR) when a NAK finds "
					"no DLR\n"
					"At most one DLR poll per session in this interval\nSeconds "
					"(default 10)\nPOLL_BO_IVL of the poll\nMilliseconds "
					"(default 100)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_dlr_discovery,
		.no_spec = "ip pgm router dlr-discovery",
		.no_help = PGM_ROUTER_HELP "Poll for off-tree DLRs (POLL sub-type DLR) when a NAK "
					   "finds no DLR\n"},
	{.spec = "ip pgm router poll-response",
		.help = PGM_ROUTER_HELP "Answer general POLLs of the upstream neighbour (PGM child, "
					"RFC 3208 14.5)\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_poll_response,
		.no_spec = CMD_NO_SAME},
	TIMER_SPECS(GLOBAL_TIMER_DEF)

	/* interface configuration */
	{.spec = "ip pgm router",
		.help = PGM_ROUTER_HELP,
		.modes = CMD_MODE(CMD_NODE_CONFIG_IF),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_if_router,
		.no_spec = CMD_NO_SAME},
	TIMER_SPECS(IF_TIMER_DEF)

	/* show */
	{.spec = "show ip pgm router [(verbose|json)]",
		.help = SHOW_PGM FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_summary},
	{.spec = "show ip pgm router interface [IFNAME] [(verbose|json)]",
		.help = SHOW_PGM "Interfaces with router assist\n" IFNAME_STR FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_interface},
	{.spec = "show ip pgm router state [A.B.C.D] [(verbose|json)]",
		.help = SHOW_PGM "Sessions and repair (re-send) state\nGroup address\n" FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_state},
	{.spec = "show ip pgm router traffic [IFNAME] [(verbose|json)]",
		.help = SHOW_PGM "PGM packet counters per interface\n" IFNAME_STR FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_traffic},
	{.spec = "show ip pgm router dataplane [json]",
		.help = SHOW_PGM "Netfilter queue, interception rules and packet output\n"
				 "JSON output\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_dataplane},
	/* clear */
	{.spec = "clear ip pgm router traffic [IFNAME]",
		.help = "Reset functions\n" PGM_ROUTER_HELP "PGM packet counters\n" IFNAME_STR,
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_traffic},
	{.spec = "clear ip pgm router dlr [A.B.C.D]",
		.help = "Reset functions\n" PGM_ROUTER_HELP
		"Learned designated local repairers (NAKs go upstream again)\nDLR address\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_dlr},
	{.spec = "clear ip pgm router rtx-state [A.B.C.D]",
		.help = "Reset functions\n" PGM_ROUTER_HELP "Repair (re-send) state\nGroup address\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_rtx},

	/* debug capture */
	{.spec = "debug ip pgm router capture WORD [max-size <1-4096>]",
		.help = DEBUG_STR PGM_ROUTER_HELP
		"Write every packet received and sent to a pcap file\n"
		"Absolute path of the file, written by the daemon\n"
		"Stop writing at this size\nMegabytes (default 64)\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_debug_capture,
		.no_spec = "debug ip pgm router capture",
		.no_help = DEBUG_STR PGM_ROUTER_HELP "Packet capture\n"},
	{.spec = "undebug ip pgm router capture",
		.help = UNDEBUG_STR PGM_ROUTER_HELP "Packet capture\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_undebug_capture},
};

void pgm_vty_init(void)
{
	cmd_install(pgm_cmds, CMD_COUNT(pgm_cmds));
	cfg_register_writer(CFG_ORDER_GLOBAL + 10, write_global);
	cfg_register_interface_writer(10, write_interface);
	cfg_register_interface_delete_hook(if_deleted);
	cfg_register_reload_hooks(reload_begin, reload_end);
	generic_vty_debug_register(assist_capture_stop, show_capture);
}

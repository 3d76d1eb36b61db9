/*
 * `show ip pgm router [interface|state|traffic|dataplane]`: each show collects its view once
 * (the configuration, router assist's counters, the control plane's cp_*_view) and renders it
 * twice, as IOS-style text and as JSON built with json-c. Long lists (sessions, repair states)
 * are rendered an element at a time, so a large table never exists twice in memory.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "router/assist/report.h"
#include "router/vty/pgm_vty.h"

#define PGM_ROUTER_HELP	  IP_STR PGM_STR ROUTER_ASSIST_STR
#define SHOW_PGM	  SHOW_STR PGM_ROUTER_HELP
#define FORMAT_HELP	  "Detailed output\nJSON output\n"
#define STATE_HELP	  "Sessions and repair (re-send) state\n"
#define STATE_FORMAT_HELP "One line per session\nDetailed output\nJSON output\n"
#define REPAIR_ROWS_BRIEF 20 /* repair states listed per session without `verbose` */

/* ---- output ---- */

static int fail(struct cmd_session *s, const char *err)
{
	cmd_out(s, "%% %s\n", err);
	return CMD_ERR_FAILED;
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

/* Appends an object as compact JSON and frees it. */
static void json_put(struct cfg_buf *b, struct json_object *o)
{
	cfg_printf(b, "%s",
		json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void jadd(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static void jadd_u64(struct json_object *o, const char *key, uint64_t v)
{
	jadd(o, key, json_object_new_uint64(v));
}

static void jadd_bool(struct json_object *o, const char *key, bool v)
{
	jadd(o, key, json_object_new_boolean(v));
}

static void jadd_str(struct json_object *o, const char *key, const char *v)
{
	jadd(o, key, json_object_new_string(v));
}

/* The encapsulation ports: [{"first": 3055, "last": 3056}, ...]. */
static void jadd_udp_ports(struct json_object *o, const struct assist_settings *g)
{
	struct json_object *list = json_object_new_array();
	struct pgm_udp_ports ports;

	assist_udp_ports(g, &ports);
	for (unsigned i = 0; i < ports.more.n; i++) {
		struct json_object *r = json_object_new_object();

		jadd_u64(r, "first", ports.more.r[i].lo);
		jadd_u64(r, "last", ports.more.r[i].hi);
		json_object_array_add(list, r);
	}
	jadd(o, "udp_ports", list);
}

/* A number with a fixed count of decimals, as the text shows it. */
static void jadd_fixed(struct json_object *o, const char *key, double v, int decimals)
{
	char text[48];

	snprintf(text, sizeof(text), "%.*f", decimals, v);
	jadd(o, key, json_object_new_double_s(v, text));
}

/* "1.234s", "-" for none, "0.000s" for the past. */
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

static double seconds_left(cp_time_t when, cp_time_t now)
{
	return when > now ? (double)(when - now) / 1e6 : 0.0;
}

static const char *age(cp_time_t then, cp_time_t now, char *buf, size_t len)
{
	uint64_t s = then != 0 && now > then ? (now - then) / 1000000u : 0;

	snprintf(buf, len, "%02llu:%02llu:%02llu", (unsigned long long)(s / 3600),
		(unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	return buf;
}

static struct assist *running_assist(struct cmd_session *s)
{
	struct assist *a = pgm_vty_assist();

	if (a == NULL)
		cmd_out(s, "%% PGM router assist is not running\n");
	return a;
}

/* The JSON key of a setting: its keyword with '_' for '-'. */
static const char *json_key(const struct setting *row, char *buf, size_t len)
{
	snprintf(buf, len, "%s", row->keyword);
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
	return buf;
}

/* ---- show ip pgm router ---- */

struct summary_view {
	bool running;
	size_t ifs_configured, ifs_enabled;
	struct cp_stats cp;
	const struct assist_settings *g;
	char most_name[CP_IFNAME_LEN]; /* the interface charged the most repair states */
	/* policing before the queue: the limits, and what the rules dropped when readable */
	struct rules_police police[RULES_POLICE_CLASS_COUNT][RULES_POLICE_KEY_COUNT];
	bool policed_valid;
	struct rules_counters rules;
	bool families[RULES_FAMILY_COUNT]; /* intercepted */
	char ipv6_unavailable[300];	    /* why not IPv6, "" */
};

static void summary_collect(struct summary_view *v)
{
	const struct cfg *c = cfg_running();
	struct assist *a = pgm_vty_assist();

	memset(v, 0, sizeof(*v));
	v->running = a != NULL && assist_running(a);
	v->g = cfg_module_global(c, &pgm_module);
	for (size_t i = 0; i < cfg_if_count(c); i++) {
		const char *name = cfg_if_name(c, i);
		const struct assist_if_settings *s = cfg_module_if(c, &pgm_module, name);

		v->ifs_configured += cfg_module_if_set(c, &pgm_module, name) != 0;
		v->ifs_enabled += s->assist;
	}
	if (a != NULL)
		assist_get_stats(a, &v->cp);
	else
		cp_limits(&v->g->cp, &v->cp.limits); /* what a start would apply */
	assist_police(v->g, v->police);
	if (v->running) {
		struct assist_dataplane_view *dv = calloc(1, sizeof(*dv));

		if (dv != NULL) {
			assist_dataplane_view(a, dv);
			v->policed_valid = dv->rules_counters_valid;
			v->rules = dv->rules;
			memcpy(v->families, dv->families, sizeof(v->families));
			snprintf(v->ipv6_unavailable, sizeof(v->ipv6_unavailable), "%s",
				dv->ipv6_unavailable != NULL ? dv->ipv6_unavailable : "");
			free(dv);
		}
	}
	if (a != NULL && v->cp.if_states_most_ifindex != 0) {
		struct cp_if_view iv;

		if (cp_get_if(assist_cp(a), v->cp.if_states_most_ifindex, &iv))
			snprintf(v->most_name, sizeof(v->most_name), "%s", iv.name);
	}
}

static const char *const police_key_names[RULES_POLICE_KEY_COUNT] = {"source", "interface"};

/* {"nak": {"source": {"rate": 1000, "burst": 2000, "dropped": 12}, "interface": ...}, ...} */
static struct json_object *police_json(const struct summary_view *v)
{
	struct json_object *o = json_object_new_object();

	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++) {
		struct json_object *c = json_object_new_object();

		for (unsigned key = 0; key < RULES_POLICE_KEY_COUNT; key++) {
			struct json_object *l = json_object_new_object();

			jadd_u64(l, "rate", v->police[k][key].rate);
			jadd_u64(l, "burst", v->police[k][key].burst);
			if (v->policed_valid)
				jadd_u64(l, "dropped", v->rules.policed[k][key]);
			jadd(c, police_key_names[key], l);
		}
		jadd(o, rules_police_class_name((enum rules_police_class)k), c);
	}
	return o;
}

/* "    NAK per source 1000/s burst 2000: 12 dropped; per interface off" */
static void police_text(struct cfg_buf *b, const struct summary_view *v)
{
	cfg_printf(b, "  Policing before the queue%s:\n",
		v->policed_valid ? ", packets dropped over the limit" : "");
	for (unsigned k = 0; k < RULES_POLICE_CLASS_COUNT; k++) {
		static const char *const labels[RULES_POLICE_CLASS_COUNT] = {"NAK", "NCF", "SPM"};

		cfg_printf(b, "    %s", labels[k]);
		for (unsigned key = 0; key < RULES_POLICE_KEY_COUNT; key++) {
			const struct rules_police *p = &v->police[k][key];

			cfg_printf(b, "%s per %s ", key ? ";" : "", police_key_names[key]);
			if (p->rate == 0)
				cfg_printf(b, "off");
			else
				cfg_printf(b, "%u/s burst %u", p->rate, p->burst);
			if (p->rate != 0 && v->policed_valid)
				cfg_printf(b, ": %llu",
					(unsigned long long)v->rules.policed[k][key]);
		}
		cfg_printf(b, "\n");
	}
}

static const char *limit_text(uint32_t limit, bool derived, char *buf, size_t len)
{
	if (limit == 0)
		snprintf(buf, len, "no limit");
	else
		snprintf(buf, len, "limit %u%s", limit, derived ? " from the memory budget" : "");
	return buf;
}

/* "at most 379629 (50%), most held 3 (eth1)" */
static void quota_text(
	struct cfg_buf *b, uint32_t quota, uint32_t share, size_t most, const char *who)
{
	if (quota == 0)
		cfg_printf(b, "no limit");
	else
		cfg_printf(b, "at most %u (%u%%)", quota, share);
	cfg_printf(b, ", most held %zu%s%s%s\n", most, who[0] != '\0' ? " (" : "", who,
		who[0] != '\0' ? ")" : "");
}

/* A value with its unit: "2000 ms", "auto", "on ports 3055 3056". */
static const char *with_unit(const struct setting *row, const char *text, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", text, row->unit ? " " : "", row->unit ? row->unit : "");
	return buf;
}

/* The settings table: every row with its global value and default. */
static void settings_text(struct cfg_buf *b, const struct assist_settings *g)
{
	cfg_printf(b, "  Settings (ip pgm router KEYWORD; * the interfaces' defaults):\n");
	cfg_printf(b, "    %-24s %-30s %s\n", "Keyword", "Value", "Default");
	for (size_t i = 0; i < pgm_module.nrows; i++) {
		const struct setting *row = &pgm_module.rows[i];
		char kw[40], value[96], dflt[96], u1[128], u2[128];

		if (!setting_in_global(row))
			continue;
		snprintf(kw, sizeof(kw), "%s%s", row->keyword, setting_in_if(row) ? "*" : "");
		setting_text(row, g, value, sizeof(value));
		setting_default_text(row, dflt, sizeof(dflt));
		cfg_printf(b, "    %-24s %-30s %s\n", kw, with_unit(row, value, u1, sizeof(u1)),
			with_unit(row, dflt, u2, sizeof(u2)));
	}
}

static struct json_object *setting_json(const struct setting *row, uint32_t stored)
{
	uint32_t typed = setting_typed(row, stored);

	switch (row->kind) {
	case SETTING_NUMBER:
		return json_object_new_uint64(typed);
	case SETTING_CHOICE:
		return json_object_new_string(row->choices[typed]);
	default:
		return json_object_new_boolean(typed != 0);
	}
}

static struct json_object *settings_json(const struct assist_settings *g)
{
	struct json_object *list = json_object_new_array();

	for (size_t i = 0; i < pgm_module.nrows; i++) {
		const struct setting *row = &pgm_module.rows[i];
		struct json_object *o = json_object_new_object();
		char value[96];

		if (!setting_in_global(row)) {
			json_object_put(o);
			continue;
		}
		jadd_str(o, "keyword", row->keyword);
		jadd(o, "value", setting_json(row, setting_get(row, g, true)));
		jadd(o, "default",
			setting_json(row, row->kind == SETTING_NUMBER
						  ? row->dflt * (row->scale ? row->scale : 1)
						  : row->dflt));
		jadd(o, "unit", row->unit ? json_object_new_string(row->unit) : NULL);
		jadd_bool(o, "interface_default", setting_in_if(row));
		jadd_str(o, "text", setting_text(row, g, value, sizeof(value)));
		jadd_str(o, "default_text", setting_default_text(row, value, sizeof(value)));
		json_object_array_add(list, o);
	}
	return list;
}

static int cmd_show_summary(struct cmd_session *s, const struct cmd_args *a)
{
	struct summary_view v;
	struct cfg_buf b = {0};
	char lim1[64], lim2[64];
	const struct assist_settings *g;

	summary_collect(&v);
	g = v.g;
	if (cmd_arg_has(a, "json")) {
		struct json_object *o = json_object_new_object();

		jadd_bool(o, "running", v.running);
		jadd_u64(o, "interfaces_configured", v.ifs_configured);
		jadd_u64(o, "interfaces_enabled", v.ifs_enabled);
		jadd_u64(o, "sessions", v.cp.sessions);
		jadd_u64(o, "repair_states", v.cp.repair_states);
		jadd_u64(o, "memory_bytes", v.cp.bytes);
		jadd_u64(o, "memory_budget_mb", g->cp.memory_budget_mb);
		/* the limits in force: configured, or derived from the budget */
		jadd_u64(o, "max_sessions", v.cp.limits.max_sessions);
		jadd_bool(o, "max_sessions_derived", v.cp.limits.sessions_derived);
		jadd_u64(o, "max_rexmit_states", v.cp.limits.max_repair_states);
		jadd_bool(o, "max_rexmit_states_derived", v.cp.limits.repair_states_derived);
		jadd_u64(o, "interface_share", g->cp.repair_if_share);
		jadd_u64(o, "interface_quota", v.cp.limits.if_quota);
		jadd_u64(o, "interface_states_most", v.cp.if_states_most);
		jadd_str(o, "interface_states_most_name", v.most_name);
		jadd_u64(o, "session_share", g->cp.repair_session_share);
		jadd_u64(o, "session_quota", v.cp.limits.session_quota);
		jadd_u64(o, "session_states_most", v.cp.session_states_most);
		jadd_u64(o, "session_rate", g->cp.if_defaults.session_rate);
		jadd_u64(o, "session_lifetime", g->cp.session_lifetime_s);
		jadd_u64(o, "queue", g->queue);
		jadd_u64(o, "memory_kb", v.cp.bytes / 1024);
		jadd_u64(o, "ncf_ttl", g->ncf_ttl);
		jadd_bool(o, "udp", g->udp);
		jadd_udp_ports(o, g);
		jadd_bool(o, "intercepts_ipv4", v.families[RULES_IPV4]);
		jadd_bool(o, "intercepts_ipv6", v.families[RULES_IPV6]);
		jadd(o, "police", police_json(&v));
		jadd(o, "settings", settings_json(g));
		json_put(&b, o);
		cfg_printf(&b, "\n");
		return stream(s, &b);
	}
	cfg_printf(&b, "PGM router assist: %s, enabled on %zu interface%s\n",
		v.running ? "running" : "not running", v.ifs_enabled,
		v.ifs_enabled == 1 ? "" : "s");
	cfg_printf(&b, "  %zu session%s (%s), %zu repair state%s (%s)\n", v.cp.sessions,
		v.cp.sessions == 1 ? "" : "s",
		limit_text(v.cp.limits.max_sessions, v.cp.limits.sessions_derived, lim1,
			sizeof(lim1)),
		v.cp.repair_states, v.cp.repair_states == 1 ? "" : "s",
		limit_text(v.cp.limits.max_repair_states, v.cp.limits.repair_states_derived, lim2,
			sizeof(lim2)));
	if (v.running)
		cfg_printf(&b, "  Intercepting %s%s%s%s%s\n",
			v.families[RULES_IPV4] ? "IPv4" : "",
			v.families[RULES_IPV4] && v.families[RULES_IPV6] ? " and " : "",
			v.families[RULES_IPV6] ? "IPv6" : "",
			!v.families[RULES_IPV6] && v.ipv6_unavailable[0] != '\0' ? "; not IPv6: " : "",
			!v.families[RULES_IPV6] ? v.ipv6_unavailable : "");
	cfg_printf(&b, "  Memory %zu KB, budget %u MB\n", v.cp.bytes / 1024,
		g->cp.memory_budget_mb);
	cfg_printf(&b, "  Repair states per interface: ");
	quota_text(&b, v.cp.limits.if_quota, g->cp.repair_if_share, v.cp.if_states_most,
		v.most_name);
	cfg_printf(&b, "  Repair states per session: ");
	quota_text(&b, v.cp.limits.session_quota, g->cp.repair_session_share,
		v.cp.session_states_most, "");
	if (g->cp.if_defaults.session_rate == 0)
		cfg_printf(&b, "  New sessions per interface: no cap (session-rate 0)\n");
	else
		cfg_printf(&b, "  New sessions per interface: at most %u per second\n",
			g->cp.if_defaults.session_rate);
	if (g->cp.session_lifetime_s == 0)
		cfg_printf(&b, "  Sessions never expire (session-lifetime 0)\n");
	else
		cfg_printf(&b, "  Sessions expire after %u seconds without SPMs\n",
			g->cp.session_lifetime_s);
	cfg_printf(&b, "  Netfilter queue %u, NCF TTL %u, PGM over UDP ", g->queue, g->ncf_ttl);
	if (g->udp)
		cfg_printf(&b, "on ports %.*s\n", ASSIST_UDP_PORTS_LEN, g->udp_ports);
	else
		cfg_printf(&b, "not intercepted\n");
	police_text(&b, &v);
	if (cmd_arg_has(a, "verbose"))
		settings_text(&b, g);
	return stream(s, &b);
}

/* ---- show ip pgm router interface ---- */

struct interface_view {
	const char *name;
	struct assist_if_settings s; /* effective */
	int ifindex;
	bool up, running;
	bool have_view; /* known to the core */
	struct cp_if_view cp;
	struct cp_counters sum; /* cp.counters: every worker's */
};

static void interface_collect(
	struct assist *a, const struct cfg *c, const char *name, struct interface_view *v)
{
	memset(v, 0, sizeof(*v));
	v->name = name;
	settings_effective(c, &pgm_module, name, &v->s);
	if (a == NULL)
		return;
	v->ifindex = assist_if_lookup(a, name, &v->up, &v->running);
	v->have_view = v->ifindex != 0 && assist_get_if(a, v->ifindex, &v->cp, &v->sum);
}

/* The interface's settings in words, two to a line: the brief ones, or (verbose) all. */
static void interface_settings_text(
	struct cfg_buf *b, const struct assist_if_settings *s, bool verbose)
{
	unsigned n = 0;

	for (size_t i = 0; i < pgm_module.nrows; i++) {
		const struct setting *row = &pgm_module.rows[i];
		char value[96];

		if (!setting_in_if(row) || row->keyword[0] == '\0' ||
			(!verbose && !(row->flags & PGM_SETTING_BRIEF)))
			continue;
		setting_value_text(row, setting_get(row, s, false), value, sizeof(value));
		cfg_printf(b, "%s%s %s%s%s", n % 2 ? ", " : "  ", row->label, value,
			row->unit ? " " : "", row->unit ? row->unit : "");
		if (n++ % 2)
			cfg_printf(b, "\n");
	}
	if (n % 2)
		cfg_printf(b, "\n");
}

static void interface_text(struct cfg_buf *b, const struct interface_view *v, bool verbose)
{
	char addr[64];

	if (v->ifindex == 0)
		cfg_printf(b, "%s does not exist (waiting for it)\n", v->name);
	else
		cfg_printf(b, "%s is %s, line protocol is %s, ifindex %d\n", v->name,
			v->up ? "up" : "administratively down", v->running ? "up" : "down",
			v->ifindex);
	cfg_printf(b, "  PGM router assist %s\n", v->s.assist ? "enabled" : "disabled");
	if (v->ifindex != 0)
		cfg_printf(b, "  Address %s (the path NLA of SPMs forwarded here)\n",
			v->have_view ? pgm_nla_format(&v->cp.addr, addr, sizeof(addr)) : "-");
	/* IPv6 sessions' path NLA: the global address, the link-local one without it */
	if (v->ifindex != 0 && v->have_view && (v->cp.addr6.afi != 0 || v->cp.ll6.afi != 0)) {
		char ll[64];

		cfg_printf(b, "  IPv6 address %s, link-local %s\n",
			pgm_nla_format(&v->cp.addr6, addr, sizeof(addr)),
			pgm_nla_format(&v->cp.ll6, ll, sizeof(ll)));
	}
	interface_settings_text(b, &v->s, verbose);
	if (verbose && v->have_view && v->cp.counters != NULL)
		cfg_printf(b, "  NAKs received %llu, NCFs sent %llu, RDATA forwarded %llu\n",
			(unsigned long long)v->cp.counters->ev[CP_C_NAK_RECEIVED],
			(unsigned long long)v->cp.counters->ev[CP_C_NCF_SENT],
			(unsigned long long)v->cp.counters->ev[CP_C_RDATA_FORWARDED]);
}

static struct json_object *interface_json(const struct interface_view *v)
{
	struct json_object *o = json_object_new_object();
	const struct cp_counters *k = v->have_view ? v->cp.counters : NULL;
	char addr[64] = "", addr6[64] = "", ll6[64] = "";

	if (v->have_view)
		pgm_nla_format(&v->cp.addr, addr, sizeof(addr));
	/* IPv6 sessions' path NLA: the global address, the link-local one without it; "" none */
	if (v->have_view && v->cp.addr6.afi != 0)
		pgm_nla_format(&v->cp.addr6, addr6, sizeof(addr6));
	if (v->have_view && v->cp.ll6.afi != 0)
		pgm_nla_format(&v->cp.ll6, ll6, sizeof(ll6));
	jadd_str(o, "name", v->name);
	jadd_bool(o, "exists", v->ifindex != 0);
	jadd(o, "ifindex", json_object_new_int(v->ifindex));
	jadd_bool(o, "up", v->up);
	jadd_str(o, "address", addr);
	jadd_str(o, "address_ipv6", addr6);
	jadd_str(o, "address_link_local", ll6);
	jadd_bool(o, "router_assist", v->s.assist);
	for (size_t i = 0; i < pgm_module.nrows; i++) {
		const struct setting *row = &pgm_module.rows[i];
		char key[40];

		if (setting_in_if(row) && row->keyword[0] != '\0')
			jadd(o, json_key(row, key, sizeof(key)),
				setting_json(row, setting_get(row, &v->s, false)));
	}
	jadd_bool(o, "line_protocol", v->running);
	jadd_u64(o, "naks_received", k != NULL ? k->ev[CP_C_NAK_RECEIVED] : 0);
	jadd_u64(o, "ncfs_sent", k != NULL ? k->ev[CP_C_NCF_SENT] : 0);
	jadd_u64(o, "rdata_forwarded", k != NULL ? k->ev[CP_C_RDATA_FORWARDED] : 0);
	return o;
}

static int cmd_show_interface(struct cmd_session *s, const struct cmd_args *a)
{
	const char *name = cmd_arg(a, "IFNAME");
	bool json = cmd_arg_has(a, "json"), verbose = cmd_arg_has(a, "verbose");
	const struct cfg *c = cfg_running();
	struct assist *as = pgm_vty_assist();
	struct cfg_buf b = {0};
	size_t shown = 0;

	if (json)
		cfg_printf(&b, "{\"interfaces\":[");
	/* in the order of the running configuration: with a name, that interface if the
	   configuration has it; without, those with router assist */
	for (size_t i = 0; i < cfg_if_count(c); i++) {
		const char *ifname = cfg_if_name(c, i);
		const struct assist_if_settings *own = cfg_module_if(c, &pgm_module, ifname);
		struct interface_view v;

		if (name != NULL ? strcmp(ifname, name) != 0 : !own->assist)
			continue;
		interface_collect(as, c, ifname, &v);
		if (json) {
			if (shown != 0)
				cfg_printf(&b, ",");
			json_put(&b, interface_json(&v));
		} else {
			interface_text(&b, &v, verbose);
		}
		shown++;
	}
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

/* ---- show ip pgm router state ---- */

struct state_ctx {
	struct assist *a;
	struct cfg_buf *b;
	bool json, verbose, brief;
	bool by_source;	     /* only the sessions of this source */
	struct pgm_nla source;
	cp_time_t now;
	size_t sessions, rows, total_rows;
	struct json_object *repairs; /* JSON: the session's list being built */
};

static const char *if_mask_names(struct assist *a, uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned slot = 0; slot < 64 && off < len; slot++) {
		char name[CP_IFNAME_LEN];
		int n;

		if (!(mask & (1ull << slot)))
			continue;
		assist_ifname(a, cp_if_slot_ifindex(assist_cp(a), slot), name, sizeof(name));
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, len, "(none)");
	return buf;
}

static const char *const dlr_names[] = {"upstream", "upstream-dlr", "offtree-dlr"};

static struct json_object *repair_json(struct state_ctx *c, const struct cp_repair_view *r)
{
	struct json_object *o = json_object_new_object();
	char ifs[256];

	jadd_u64(o, "sqn", r->sqn);
	jadd_bool(o, "parity", r->parity);
	jadd_u64(o, "packet_count", r->pkt_cnt);
	jadd_str(o, "nak_to", dlr_names[r->dlr]);
	jadd_str(o, "phase", cp_phase_name(r->phase));
	jadd_bool(o, "eliminating", r->eliminating);
	jadd_bool(o, "anticipated", r->anticipated);
	jadd_bool(o, "nnak_created", r->nnak_created);
	jadd_str(o, "interfaces", if_mask_names(c->a, r->if_mask, ifs, sizeof(ifs)));
	jadd_fixed(o, "nak_repeat_in", seconds_left(r->rpt_next, c->now), 6);
	jadd_fixed(o, "nak_repeat_end_in", seconds_left(r->rpt_end, c->now), 6);
	jadd_fixed(o, "rdata_wait_in", seconds_left(r->rdata_end, c->now), 6);
	jadd_fixed(o, "elim_end_in", seconds_left(r->elim_end, c->now), 6);
	return o;
}

static void repair_text(struct state_ctx *c, const struct cp_repair_view *r)
{
	char ifs[256], t1[24], t2[24], t3[24], t4[24], sqn[32];

	if (r->parity)
		snprintf(sqn, sizeof(sqn), "TG %u/%u", r->sqn, r->pkt_cnt);
	else
		snprintf(sqn, sizeof(sqn), "%u", r->sqn);
	cfg_printf(c->b, "    %-11s %-12s%-4s %-20s %-9s %-9s %-9s %s%s\n", sqn,
		cp_phase_name(r->phase),
		r->anticipated	  ? "ant"
		: r->nnak_created ? "nnak"
				  : "",
		if_mask_names(c->a, r->if_mask, ifs, sizeof(ifs)),
		time_left(r->rpt_next, c->now, t1, sizeof(t1)),
		time_left(r->rpt_end, c->now, t2, sizeof(t2)),
		time_left(r->elim_end, c->now, t3, sizeof(t3)),
		time_left(r->rdata_end, c->now, t4, sizeof(t4)),
		r->dlr == 1   ? " (upstream DLR)"
		: r->dlr == 2 ? " (off-tree DLR)"
			      : "");
}

static void state_repair(void *arg, const struct cp_repair_view *r)
{
	struct state_ctx *c = arg;

	c->total_rows++;
	if (!c->verbose && !c->json && c->rows >= REPAIR_ROWS_BRIEF)
		return;
	c->rows++;
	if (c->json)
		json_object_array_add(c->repairs, repair_json(c, r));
	else
		repair_text(c, r);
}

/* The per-TSI counters the text's verbose lines show. */
static const enum cp_counter session_counters[] = {CP_C_NAK_REDIRECTED, CP_C_DLR_TIMEOUT,
	CP_C_PARITY_NAK_FORWARDED, CP_C_NAK_SUSPENDED, CP_C_NAK_RECEIVED, CP_C_NAK_UNIQUE,
	CP_C_NAK_FORWARDED, CP_C_NAK_ELIMINATED, CP_C_NAK_CROSSED_REPAIR, CP_C_NCF_SENT,
	CP_C_RDATA_FORWARDED, CP_C_RDATA_NO_STATE, CP_C_RDATA_NO_INTERFACE};

static struct json_object *dlr_json(
	const struct pgm_nla *addr, const char *kind, const char *ifname, bool parity, double age_s)
{
	struct json_object *o = json_object_new_object();
	char text[64];

	jadd_str(o, "address", pgm_nla_format(addr, text, sizeof(text)));
	jadd_str(o, "kind", kind);
	jadd_str(o, "interface", ifname);
	jadd_bool(o, "parity", parity);
	jadd_fixed(o, "age", age_s, 3);
	return o;
}

static void session_json(struct state_ctx *c, const struct cp_session_view *v)
{
	struct json_object *o = json_object_new_object(), *dlrs = json_object_new_array();
	struct json_object *counters = json_object_new_object();
	char tsi[32], text[64], ifname[CP_IFNAME_LEN], offif[CP_IFNAME_LEN], unreach[256];

	assist_ifname(c->a, v->upstream_ifindex, ifname, sizeof(ifname));
	assist_ifname(c->a, v->dlr_offtree_ifindex, offif, sizeof(offif));
	jadd_str(o, "tsi", pgm_tsi_format(&v->tsi, tsi, sizeof(tsi)));
	jadd_str(o, "source", pgm_nla_format(&v->source, text, sizeof(text)));
	jadd_str(o, "group", pgm_nla_format(&v->group, text, sizeof(text)));
	jadd_u64(o, "dport", v->data_dport);
	jadd_str(o, "upstream", pgm_nla_format(&v->upstream, text, sizeof(text)));
	jadd_str(o, "upstream_interface", ifname);
	jadd_u64(o, "spm_sqn", v->spm_sqn);
	jadd_u64(o, "trail", v->trail);
	jadd_u64(o, "lead", v->lead);
	jadd_u64(o, "ttl", v->last_ttl);
	jadd_bool(o, "udp", v->udp);
	jadd_fixed(o, "age", (double)(c->now - v->created) / 1e6, 3);
	jadd_fixed(o, "last_spm", (double)(c->now - v->last_spm) / 1e6, 3);
	jadd_fixed(o, "expires_in", seconds_left(v->expires, c->now), 3);
	jadd_u64(o, "repair_states", v->repair_states);
	jadd_u64(o, "parity_states", v->parity_states);
	jadd_u64(o, "tg_size", v->parity_tgs);
	jadd_u64(o, "curr_tg_size", v->curr_tgsize);
	jadd_bool(o, "naks_suspended", v->naks_suspended);
	jadd_str(o, "unreachable_interfaces",
		if_mask_names(c->a, v->unreach_mask, unreach, sizeof(unreach)));
	jadd_u64(o, "naks_to_source", v->counters != NULL ? v->counters->ev[CP_C_NAK_TRANSIT] : 0);
	jadd_str(o, "naks_to_source_interfaces",
		if_mask_names(c->a, v->transit_mask, unreach, sizeof(unreach)));
	if (v->dlr_upstream.afi != 0)
		json_object_array_add(
			dlrs, dlr_json(&v->dlr_upstream, "upstream", ifname, v->dlr_upstream_parity,
				      (double)(c->now - v->dlr_upstream_learned) / 1e6));
	if (v->dlr_offtree.afi != 0)
		json_object_array_add(
			dlrs, dlr_json(&v->dlr_offtree, "offtree", offif, v->dlr_offtree_parity,
				      (double)(c->now - v->dlr_offtree_learned) / 1e6));
	jadd(o, "dlrs", dlrs);
	c->repairs = json_object_new_array();
	assist_foreach_repair(c->a, &v->tsi, v->afi, state_repair, c);
	jadd(o, "repairs", c->repairs);
	for (size_t i = 0; i < sizeof(session_counters) / sizeof(session_counters[0]); i++)
		jadd_u64(counters, cp_counter_name(session_counters[i]),
			v->counters != NULL ? v->counters->ev[session_counters[i]] : 0);
	jadd(o, "counters", counters);
	if (c->sessions > 1)
		cfg_printf(c->b, ",");
	json_put(c->b, o);
}

static void session_text(struct state_ctx *c, const struct cp_session_view *v)
{
	char tsi[32], src[64], grp[64], up[64], ifname[CP_IFNAME_LEN], t1[24], t2[24];
	char dlr[64], offif[CP_IFNAME_LEN], unreach[256];

	assist_ifname(c->a, v->upstream_ifindex, ifname, sizeof(ifname));
	cfg_printf(c->b, "\nSession %s, source %s, group %s, port %u%s\n",
		pgm_tsi_format(&v->tsi, tsi, sizeof(tsi)),
		pgm_nla_format(&v->source, src, sizeof(src)),
		pgm_nla_format(&v->group, grp, sizeof(grp)), v->data_dport,
		v->udp ? ", PGM over UDP" : "");
	cfg_printf(c->b, "  Upstream %s on %s, SPM sqn %u, window %u-%u, TTL %u\n",
		pgm_nla_format(&v->upstream, up, sizeof(up)), ifname, v->spm_sqn, v->trail, v->lead,
		v->last_ttl);
	cfg_printf(c->b, "  Up %s, last SPM %.1fs ago, expires in %s\n",
		age(v->created, c->now, t1, sizeof(t1)), (double)(c->now - v->last_spm) / 1e6,
		v->expires ? time_left(v->expires, c->now, t2, sizeof(t2)) : "never");
	if (v->dlr_upstream.afi != 0)
		cfg_printf(c->b, "  Upstream DLR %s on %s%s, learned %s ago\n",
			pgm_nla_format(&v->dlr_upstream, dlr, sizeof(dlr)), ifname,
			v->dlr_upstream_parity ? ", parity" : "",
			age(v->dlr_upstream_learned, c->now, t1, sizeof(t1)));
	if (v->dlr_offtree.afi != 0)
		cfg_printf(c->b, "  Off-tree DLR %s on %s%s, learned %s ago\n",
			pgm_nla_format(&v->dlr_offtree, dlr, sizeof(dlr)),
			assist_ifname(c->a, v->dlr_offtree_ifindex, offif, sizeof(offif)),
			v->dlr_offtree_parity ? ", parity" : "",
			age(v->dlr_offtree_learned, c->now, t1, sizeof(t1)));
	if (v->parity_tgs != 0) {
		char tgsize[32] = "";

		if (v->curr_tgsize)
			snprintf(tgsize, sizeof(tgsize), ", current %u", v->curr_tgsize);
		cfg_printf(c->b, "  FEC transmission group %u%s, %zu parity repair state%s\n",
			v->parity_tgs, tgsize, v->parity_states, v->parity_states == 1 ? "" : "s");
	}
	if (v->naks_suspended)
		cfg_printf(
			c->b, "  NAKs suspended: upstream neighbour unreachable (until an SPM)\n");
	if (v->unreach_mask != 0)
		cfg_printf(c->b, "  Unicast NCFs (neighbour unreachable) on %s\n",
			if_mask_names(c->a, v->unreach_mask, unreach, sizeof(unreach)));
	if (v->transit_mask != 0 && v->counters != NULL)
		cfg_printf(c->b,
			"  NAKs to the source past this router: %llu, from %s (those receivers "
			"get no repairs through it)\n",
			(unsigned long long)v->counters->ev[CP_C_NAK_TRANSIT],
			if_mask_names(c->a, v->transit_mask, unreach, sizeof(unreach)));
	if (v->repair_states == 0) {
		cfg_printf(c->b, "  No repair state\n");
	} else {
		cfg_printf(c->b, "  Repair state%s: %zu\n", v->repair_states == 1 ? "" : "s",
			v->repair_states);
		cfg_printf(c->b, "    %-11s %-16s %-20s %-9s %-9s %-9s %s\n", "SQN", "Phase",
			"Interfaces", "Repeat", "RptEnd", "Elim", "RDATA");
		assist_foreach_repair(c->a, &v->tsi, v->afi, state_repair, c);
		if (c->total_rows > c->rows)
			cfg_printf(c->b, "    ... %zu more (show ip pgm router state verbose)\n",
				c->total_rows - c->rows);
	}
	if (c->verbose && v->counters != NULL) {
		const struct cp_counters *k = v->counters;

		cfg_printf(c->b,
			"  NAKs %llu sent to DLRs, %llu DLR timeouts; parity NAKs %llu "
			"forwarded; NAKs %llu suspended (neighbour unreachable)\n",
			(unsigned long long)k->ev[CP_C_NAK_REDIRECTED],
			(unsigned long long)k->ev[CP_C_DLR_TIMEOUT],
			(unsigned long long)k->ev[CP_C_PARITY_NAK_FORWARDED],
			(unsigned long long)k->ev[CP_C_NAK_SUSPENDED]);
		cfg_printf(c->b,
			"  NAKs %llu received, %llu unique, %llu forwarded, %llu eliminated "
			"(%llu crossed the repair); NCFs %llu sent\n  RDATA copies %llu forwarded, "
			"%llu not forwarded (not requested there)\n",
			(unsigned long long)k->ev[CP_C_NAK_RECEIVED],
			(unsigned long long)k->ev[CP_C_NAK_UNIQUE],
			(unsigned long long)k->ev[CP_C_NAK_FORWARDED],
			(unsigned long long)k->ev[CP_C_NAK_ELIMINATED],
			(unsigned long long)k->ev[CP_C_NAK_CROSSED_REPAIR],
			(unsigned long long)k->ev[CP_C_NCF_SENT],
			(unsigned long long)k->ev[CP_C_RDATA_FORWARDED],
			(unsigned long long)(k->ev[CP_C_RDATA_NO_STATE] +
					     k->ev[CP_C_RDATA_NO_INTERFACE]));
	}
}

/* `brief`: one line per session, as Junos's `show pgm source-path-messages`. */
#define BRIEF_COLUMNS "%-18s %-15s %-15s %-15s %-10s %8s  %-13s"

static void session_brief_text(struct state_ctx *c, const struct cp_session_view *v)
{
	char tsi[32], src[64], grp[64], up[64], ifname[CP_IFNAME_LEN], spm[24], window[32];

	assist_ifname(c->a, v->upstream_ifindex, ifname, sizeof(ifname));
	snprintf(spm, sizeof(spm), "%.1fs", (double)(c->now - v->last_spm) / 1e6);
	snprintf(window, sizeof(window), "%u-%u", v->trail, v->lead);
	cfg_printf(c->b, BRIEF_COLUMNS "%6zu\n", pgm_tsi_format(&v->tsi, tsi, sizeof(tsi)),
		pgm_nla_format(&v->source, src, sizeof(src)),
		pgm_nla_format(&v->group, grp, sizeof(grp)),
		pgm_nla_format(&v->upstream, up, sizeof(up)), ifname, spm, window,
		v->repair_states);
}

static void session_brief_json(struct state_ctx *c, const struct cp_session_view *v)
{
	struct json_object *o = json_object_new_object();
	char tsi[32], text[64], ifname[CP_IFNAME_LEN];

	assist_ifname(c->a, v->upstream_ifindex, ifname, sizeof(ifname));
	jadd_str(o, "tsi", pgm_tsi_format(&v->tsi, tsi, sizeof(tsi)));
	jadd_str(o, "source", pgm_nla_format(&v->source, text, sizeof(text)));
	jadd_str(o, "group", pgm_nla_format(&v->group, text, sizeof(text)));
	jadd_str(o, "upstream", pgm_nla_format(&v->upstream, text, sizeof(text)));
	jadd_str(o, "upstream_interface", ifname);
	jadd_fixed(o, "last_spm", (double)(c->now - v->last_spm) / 1e6, 3);
	jadd_u64(o, "trail", v->trail);
	jadd_u64(o, "lead", v->lead);
	jadd_u64(o, "repair_states", v->repair_states);
	if (c->sessions > 1)
		cfg_printf(c->b, ",");
	json_put(c->b, o);
}

static void state_session(void *arg, const struct cp_session_view *v)
{
	struct state_ctx *c = arg;

	if (c->by_source && !pgm_nla_equal(&v->source, &c->source))
		return;
	c->sessions++;
	c->rows = 0;
	c->total_rows = 0;
	if (c->brief)
		(c->json ? session_brief_json : session_brief_text)(c, v);
	else if (c->json)
		session_json(c, v);
	else
		session_text(c, v);
}

/* Sessions rendered per continuation step: the event loop (and the packet path with it) gets a
   turn between slices however many sessions there are. */
#define STATE_SESSIONS_PER_SLICE 64

struct state_slices {
	struct state_ctx c;
	struct cfg_buf b;
	struct cp_session_key *keys; /* the sessions at the start, in order */
	size_t n, next;
	char filter_text[96]; /* "group 239.1.2.3", ...: what `No session for` names */
};

static void state_slices_free(void *arg)
{
	struct state_slices *sl = arg;

	cfg_buf_free(&sl->b);
	free(sl->keys);
	free(sl);
}

/* Writes out what the buffer holds; false when it could not be built. */
static bool state_flush(struct cmd_session *s, struct cfg_buf *b)
{
	bool ok = !b->failed;

	if (ok && b->len > 0)
		cmd_write(s, b->data, b->len);
	b->len = 0;
	b->failed = false;
	return ok;
}

static int state_next_slice(struct cmd_session *s, void *arg)
{
	struct state_slices *sl = arg;
	size_t end = sl->next + STATE_SESSIONS_PER_SLICE;

	/* a session gone since the start is skipped; router assist gone ends the show */
	if (pgm_vty_assist() != sl->c.a)
		return fail(s, "PGM router assist stopped");
	for (; sl->next < sl->n && sl->next < end; sl->next++)
		assist_session_view_key(sl->c.a, &sl->keys[sl->next], state_session, &sl->c);
	if (sl->next == sl->n) {
		if (sl->c.json)
			cfg_printf(&sl->b, "]}\n");
		else if (sl->filter_text[0] != '\0' && sl->c.sessions == 0)
			cfg_printf(&sl->b, "No session for %s\n", sl->filter_text);
	}
	if (!state_flush(s, &sl->b))
		return fail(s, "out of memory");
	return sl->next < sl->n ? CMD_MORE : CMD_OK;
}

/* "4d81c2a034ed.7547": the GSI's 12 hex digits, a dot, the source port. */
static bool tsi_parse(const char *text, struct pgm_tsi *tsi)
{
	unsigned long port;
	char *end;

	if (strlen(text) < 2 * PGM_GSI_LEN + 2 || text[2 * PGM_GSI_LEN] != '.')
		return false;
	for (unsigned i = 0; i < PGM_GSI_LEN; i++) {
		unsigned byte;

		if (!isxdigit((unsigned char)text[2 * i]) ||
			!isxdigit((unsigned char)text[2 * i + 1]) ||
			sscanf(text + 2 * i, "%2x", &byte) != 1)
			return false;
		tsi->gsi[i] = (uint8_t)byte;
	}
	if (!isdigit((unsigned char)text[2 * PGM_GSI_LEN + 1]))
		return false;
	errno = 0;
	port = strtoul(text + 2 * PGM_GSI_LEN + 1, &end, 10);
	if (*end != '\0' || errno != 0 || port > 65535)
		return false;
	tsi->sport = (uint16_t)port;
	return true;
}

/* The sessions of one group, one source, one TSI or all (NULL filters). */
static int show_state(struct cmd_session *s, const struct cmd_args *a, const char *group_text,
	const char *source_text, const char *tsi_text)
{
	struct pgm_nla group;
	struct pgm_tsi tsi;
	struct state_slices *sl;
	struct cp_stats st;

	if (running_assist(s) == NULL)
		return CMD_ERR_FAILED;
	if (group_text != NULL && !pgm_nla_parse(&group, group_text))
		return fail(s, "bad group address");
	if (tsi_text != NULL && !tsi_parse(tsi_text, &tsi))
		return fail(s, "bad TSI: expected 12 hex digits, a dot and the source port "
			       "(4d81c2a034ed.7547)");
	if ((sl = calloc(1, sizeof(*sl))) == NULL)
		return fail(s, "out of memory");
	sl->c.b = &sl->b;
	sl->c.a = pgm_vty_assist();
	sl->c.json = cmd_arg_has(a, "json");
	sl->c.verbose = cmd_arg_has(a, "verbose");
	sl->c.brief = cmd_arg_has(a, "brief");
	sl->c.now = assist_now(sl->c.a);
	if (source_text != NULL && !pgm_nla_parse(&sl->c.source, source_text)) {
		state_slices_free(sl);
		return fail(s, "bad source address");
	}
	sl->c.by_source = source_text != NULL;
	if (group_text != NULL || source_text != NULL || tsi_text != NULL)
		snprintf(sl->filter_text, sizeof(sl->filter_text), "%s %s",
			group_text ? "group" : source_text ? "source" : "TSI",
			group_text ? group_text : source_text ? source_text : tsi_text);
	assist_get_stats(sl->c.a, &st);
	if (sl->c.json)
		cfg_printf(&sl->b,
			"{\"total_sessions\":%zu,\"total_repair_states\":%zu,\"sessions\":[",
			st.sessions, st.repair_states);
	else
		cfg_printf(&sl->b, "PGM router state: %zu session%s, %zu repair state%s\n",
			st.sessions, st.sessions == 1 ? "" : "s", st.repair_states,
			st.repair_states == 1 ? "" : "s");
	if (sl->c.brief && !sl->c.json)
		cfg_printf(&sl->b, "\n" BRIEF_COLUMNS "%6s\n", "TSI", "Source", "Group",
			"Upstream", "Interface", "Last SPM", "Window", "Repair");
	if (tsi_text != NULL) {
		/* its sessions, IPv4 then IPv6: looked up, not listed */
		if ((sl->keys = malloc(2 * sizeof(*sl->keys))) == NULL) {
			state_slices_free(sl);
			return fail(s, "out of memory");
		}
		sl->keys[0] = (struct cp_session_key){tsi, PGM_AFI_IP};
		sl->keys[1] = (struct cp_session_key){tsi, PGM_AFI_IP6};
		sl->n = 2;
	} else {
		sl->keys = assist_session_keys(sl->c.a, group_text != NULL ? &group : NULL, &sl->n);
		if (sl->keys == NULL && sl->n == 0 && st.sessions > 0 && group_text == NULL) {
			state_slices_free(sl);
			return fail(s, "out of memory");
		}
	}
	cmd_set_continuation(s, state_next_slice, sl, state_slices_free);
	return CMD_MORE;
}

static int cmd_show_state(struct cmd_session *s, const struct cmd_args *a)
{
	return show_state(s, a, cmd_arg(a, "GROUP"), NULL, NULL);
}

static int cmd_show_state_source(struct cmd_session *s, const struct cmd_args *a)
{
	return show_state(s, a, NULL, cmd_arg(a, "SOURCE"), NULL);
}

static int cmd_show_state_tsi(struct cmd_session *s, const struct cmd_args *a)
{
	return show_state(s, a, NULL, NULL, cmd_arg(a, "TSI"));
}

/* ---- show ip pgm router mroute ---- */

/* The multicast routes the daemon replicates SPM and RDATA along (mirrored from the kernel),
   copied out and sorted by group, then source ((*,G) first). */
struct mroute_list {
	struct mfc_route *r;
	size_t n, cap;
	bool failed;
};

static void mroute_collect(void *arg, const struct mfc_route *r)
{
	struct mroute_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct mfc_route *m = realloc(l->r, cap * sizeof(*m));

		if (m == NULL) {
			l->failed = true;
			return;
		}
		l->r = m;
		l->cap = cap;
	}
	l->r[l->n++] = *r;
}

static int mroute_order(const void *x, const void *y)
{
	const struct mfc_route *a = x, *b = y;
	int c;

	/* IPv4 first; the addresses' bytes are in network order, so memcmp sorts them */
	if (a->grp.afi != b->grp.afi)
		return a->grp.afi < b->grp.afi ? -1 : 1;
	if ((c = memcmp(a->grp.addr, b->grp.addr, sizeof(a->grp.addr))) != 0)
		return c;
	return memcmp(a->src.addr, b->src.addr, sizeof(a->src.addr));
}

static struct json_object *mroute_json(struct assist *as, const struct mfc_route *r)
{
	struct json_object *o = json_object_new_object(), *oifs = json_object_new_array();
	char text[INET6_ADDRSTRLEN], name[CP_IFNAME_LEN];

	jadd_str(o, "source",
		mfc_route_any_source(r) ? "*" : pgm_nla_format(&r->src, text, sizeof(text)));
	jadd_str(o, "group", pgm_nla_format(&r->grp, text, sizeof(text)));
	jadd_str(o, "incoming_interface",
		r->iif ? assist_ifname(as, r->iif, name, sizeof(name)) : "");
	jadd_bool(o, "incoming_router_assist", r->iif && cp_if_assisted(assist_cp(as), r->iif));
	for (unsigned i = 0; i < r->noifs; i++) {
		struct json_object *x = json_object_new_object();

		jadd_str(x, "interface", assist_ifname(as, r->oif[i], name, sizeof(name)));
		jadd_u64(x, "ttl_threshold", r->ttl[i]);
		jadd_bool(x, "router_assist", cp_if_assisted(assist_cp(as), r->oif[i]));
		json_object_array_add(oifs, x);
	}
	jadd(o, "outgoing", oifs);
	jadd_u64(o, "replicated", r->replicated);
	jadd_u64(o, "by_kernel", r->by_kernel);
	return o;
}

static void mroute_text(struct cfg_buf *b, struct assist *as, const struct mfc_route *r)
{
	char src[INET6_ADDRSTRLEN], grp[INET6_ADDRSTRLEN], name[CP_IFNAME_LEN];

	cfg_printf(b, "\n(%s, %s), incoming ",
		mfc_route_any_source(r) ? "*" : pgm_nla_format(&r->src, src, sizeof(src)),
		pgm_nla_format(&r->grp, grp, sizeof(grp)));
	if (r->iif == 0)
		cfg_printf(b, "unresolved\n");
	else
		cfg_printf(b, "%s%s\n", assist_ifname(as, r->iif, name, sizeof(name)),
			cp_if_assisted(assist_cp(as), r->iif) ? " (router assist)" : "");
	cfg_printf(b, "  Outgoing:%s", r->noifs ? "" : " none");
	for (unsigned i = 0; i < r->noifs; i++)
		cfg_printf(b, "%s %s TTL>%u%s", i ? "," : "",
			assist_ifname(as, r->oif[i], name, sizeof(name)), r->ttl[i],
			cp_if_assisted(assist_cp(as), r->oif[i]) ? " (router assist)" : "");
	cfg_printf(b, "\n  SPM/RDATA: %llu replicated here, %llu left to the kernel\n",
		(unsigned long long)r->replicated, (unsigned long long)r->by_kernel);
}

static int cmd_show_mroute(struct cmd_session *s, const struct cmd_args *a)
{
	struct assist *as = running_assist(s);
	struct mroute_list l = {0};
	struct cfg_buf b = {0};
	bool json = cmd_arg_has(a, "json");

	if (as == NULL)
		return CMD_ERR_FAILED;
	assist_routes(as, mroute_collect, &l);
	if (l.failed) {
		free(l.r);
		return fail(s, "out of memory");
	}
	if (l.n > 1)
		qsort(l.r, l.n, sizeof(*l.r), mroute_order);
	if (json) {
		struct json_object *o = json_object_new_object(), *list = json_object_new_array();

		for (size_t i = 0; i < l.n; i++)
			json_object_array_add(list, mroute_json(as, &l.r[i]));
		jadd_u64(o, "count", l.n);
		jadd(o, "routes", list);
		json_put(&b, o);
		cfg_printf(&b, "\n");
	} else {
		cfg_printf(&b,
			"PGM router multicast routes: %zu (mirrored from the kernel; SPM and RDATA "
			"are replicated along them)\n",
			l.n);
		for (size_t i = 0; i < l.n; i++)
			mroute_text(&b, as, &l.r[i]);
	}
	free(l.r);
	return stream(s, &b);
}

/* ---- show ip pgm router traffic ---- */

/* Packet types worth a column: those router assist queues (ODATA only in JSON: the kernel
   switches it). SPMR and ACK are never queued (README, Interception), so they have none. */
static const unsigned traffic_types[] = {PGM_SPM, PGM_POLL, PGM_POLR, PGM_RDATA, PGM_NAK, PGM_NNAK,
	PGM_NCF, PGM_ODATA};
#define NTRAFFIC_TYPES (sizeof(traffic_types) / sizeof(traffic_types[0]))

struct traffic_ctx {
	struct cfg_buf *b;
	const char *name;
	bool json, verbose;
	size_t shown;
};

static struct json_object *counts_json(const uint64_t *counts)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; i < NTRAFFIC_TYPES; i++)
		jadd_u64(o, pgm_type_name(traffic_types[i]), counts[traffic_types[i]]);
	return o;
}

static struct json_object *events_json(const uint64_t *ev)
{
	struct json_object *o = json_object_new_object();

	for (unsigned e = 0; e < CP_C_COUNT; e++)
		jadd_u64(o, cp_counter_name(e), ev[e]);
	return o;
}

static void traffic_if_json(struct traffic_ctx *c, const struct cp_if_view *v)
{
	const struct cp_counters *k = v->counters;
	struct json_object *o = json_object_new_object(), *errors = json_object_new_object();

	jadd_str(o, "name", v->name);
	jadd_bool(o, "router_assist", v->assist);
	jadd(o, "received", counts_json(k->in));
	jadd(o, "sent", counts_json(k->out));
	jadd(o, "events", events_json(k->ev));
	for (unsigned e = 1; e < PGM_ERR_COUNT; e++)
		jadd_u64(errors, pgm_err_name(e), k->err[e]);
	jadd(o, "errors", errors);
	if (c->shown > 1)
		cfg_printf(c->b, ",");
	json_put(c->b, o);
}

static void event_line(struct cfg_buf *b, unsigned e, uint64_t n, bool verbose)
{
	cfg_printf(b, "  %-24s %12llu%s%s\n", cp_counter_name(e), (unsigned long long)n,
		verbose ? "  " : "", verbose ? cp_counter_description(e) : "");
}

static void traffic_if_text(struct traffic_ctx *c, const struct cp_if_view *v)
{
	const struct cp_counters *k = v->counters;
	bool any = false;

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
	for (unsigned e = 0; e < CP_C_COUNT; e++)
		if (c->verbose || k->ev[e] != 0)
			event_line(c->b, e, k->ev[e], c->verbose);
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

static void traffic_if(void *arg, const struct cp_if_view *v)
{
	struct traffic_ctx *c = arg;

	if (v->counters == NULL || (c->name != NULL ? strcmp(v->name, c->name) != 0 : !v->assist))
		return;
	c->shown++;
	if (c->json)
		traffic_if_json(c, v);
	else
		traffic_if_text(c, v);
}

/* Events of timers and limits, which belong to no interface. */
static void traffic_global(struct traffic_ctx *c, struct assist *a)
{
	struct cp_stats st;
	bool any = false;

	assist_get_stats(a, &st);
	if (c->json) {
		cfg_printf(c->b, ",\"router\":");
		json_put(c->b, events_json(st.global_ev));
		return;
	}
	/* most counters can never be router-wide: only those that happened, verbose or not */
	for (unsigned e = 0; e < CP_C_COUNT; e++) {
		if (st.global_ev[e] == 0)
			continue;
		if (!any)
			cfg_printf(c->b, "\nRouter-wide (timers and limits)\n");
		any = true;
		event_line(c->b, e, st.global_ev[e], c->verbose);
	}
}

static int cmd_show_traffic(struct cmd_session *s, const struct cmd_args *a)
{
	struct cfg_buf b = {0};
	struct traffic_ctx c = {.b = &b};
	struct assist *as = running_assist(s);

	if (as == NULL)
		return CMD_ERR_FAILED;
	c.name = cmd_arg(a, "IFNAME");
	c.json = cmd_arg_has(a, "json");
	c.verbose = cmd_arg_has(a, "verbose");
	if (c.json)
		cfg_printf(&b, "{\"interfaces\":[");
	else
		cfg_printf(&b, "PGM router traffic (ODATA is switched by the kernel and not "
			       "counted)\n");
	assist_foreach_if(as, traffic_if, &c);
	if (c.json)
		cfg_printf(&b, "]");
	if (c.name == NULL)
		traffic_global(&c, as);
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

/* ---- show ip pgm router dataplane ---- */

static struct json_object *dataplane_json(
	const struct assist_dataplane_view *v, const struct assist_settings *g)
{
	const struct nfqueue_stats *qs = &v->queue;
	const struct nfqueue_kernel_stats *ks = &v->kernel;
	const struct rawsock_stats *rs = &v->output;
	const struct assist_stats *as = v->path;
	struct json_object *o = json_object_new_object(), *q = json_object_new_object();
	struct json_object *k = json_object_new_object(), *r = json_object_new_object();
	struct json_object *out = json_object_new_object(), *n = json_object_new_object();
	struct json_object *p = json_object_new_object(), *rep = json_object_new_object();
	struct json_object *ifs = json_object_new_object();

	jadd_bool(o, "running", v->running);
	jadd_str(o, "backend", v->backend);
	jadd_u64(o, "queue", g->queue);
	jadd_bool(o, "udp", g->udp);
	jadd_udp_ports(o, g);
	jadd_u64(q, "packets", qs->packets);
	jadd_u64(q, "bytes", qs->bytes);
	jadd_u64(q, "accepted", qs->accepted);
	jadd_u64(q, "dropped", qs->dropped);
	jadd_u64(q, "rewritten", qs->rewritten);
	jadd_u64(q, "batches", qs->batches);
	jadd_u64(q, "batched", qs->batched);
	jadd_u64(q, "verdict_messages", qs->verdict_messages);
	jadd_u64(q, "sends", qs->sends);
	jadd_u64(q, "held_rounds", qs->held_rounds);
	jadd_u64(q, "held", qs->held);
	jadd_u64(q, "enobufs", qs->enobufs);
	jadd_u64(q, "id_gaps", qs->id_gaps);
	jadd_u64(q, "send_errors", qs->send_errors);
	jadd_u64(q, "rcvbuf", qs->rcvbuf_bytes);
	jadd(o, "queue_stats", q);
	jadd_bool(k, "valid", ks->valid);
	jadd_u64(k, "waiting", ks->queue_total);
	jadd_u64(k, "queue_dropped", ks->queue_dropped);
	jadd_u64(k, "user_dropped", ks->user_dropped);
	jadd_u64(k, "socket_drops", ks->socket_drops);
	jadd(o, "kernel", k);
	if (v->nworkers > 1) {
		struct json_object *ws = json_object_new_array();

		for (unsigned i = 0; i < v->nworkers; i++) {
			const struct assist_worker_view *w = &v->workers[i];
			struct json_object *wo = json_object_new_object();

			jadd_u64(wo, "queue", w->queue_num);
			jadd_u64(wo, "packets", w->queue.packets);
			jadd_u64(wo, "accepted", w->queue.accepted);
			jadd_u64(wo, "dropped", w->queue.dropped);
			jadd_u64(wo, "kernel_dropped", (uint64_t)w->kernel.queue_dropped +
							      w->kernel.user_dropped +
							      w->kernel.socket_drops);
			jadd_u64(wo, "not_delivered", w->queue.id_gaps);
			jadd_u64(wo, "thread", (uint64_t)w->tid);
			if (w->cpu_valid)
				jadd_u64(wo, "cpu_ns", w->cpu_ns);
			json_object_array_add(ws, wo);
		}
		jadd(o, "workers", ws);
	}
	jadd_u64(r, "prerouting", v->rules.packets[RULES_IPT_PRE]);
	jadd_u64(r, "input", v->rules.packets[RULES_IPT_IN]);
	jadd_u64(r, "prerouting_ipv6", v->rules.packets_ipv6[RULES_IPT_PRE]);
	jadd_u64(r, "input_ipv6", v->rules.packets_ipv6[RULES_IPT_IN]);
	jadd(o, "rules_matched", r);
	jadd_bool(o, "intercepts_ipv4", v->families[RULES_IPV4]);
	jadd_bool(o, "intercepts_ipv6", v->families[RULES_IPV6]);
	jadd_str(o, "ipv6_unavailable", v->ipv6_unavailable != NULL ? v->ipv6_unavailable : "");
	jadd_u64(o, "ipv6_install_failures", v->ipv6_failures);
	jadd_u64(out, "packets", rs->packets);
	jadd_u64(out, "bytes", rs->bytes);
	jadd_u64(out, "link_layer", rs->link_packets);
	jadd_u64(out, "link_layer_unicast", rs->link_unicast);
	jadd_bool(out, "link_layer_output", rs->link_output);
	jadd_u64(out, "sndbuf", rs->sndbuf_bytes);
	jadd_u64(out, "would_block", rs->would_block);
	jadd_u64(out, "unreachable", rs->unreachable);
	jadd_u64(out, "errors", rs->too_big + rs->bad_input + rs->other_errors);
	jadd_u64(out, "fragmented", rs->fragmented);
	jadd_u64(out, "fragments", rs->fragments);
	jadd_u64(out, "fragment_refused", rs->frag_refused);
	jadd_bool(n, "available", rs->neigh_available);
	jadd_u64(n, "queries", rs->neigh.queries);
	jadd_u64(n, "usable", rs->neigh.usable);
	jadd_u64(n, "unusable", rs->neigh.unusable);
	jadd_u64(n, "errors", rs->neigh.errors);
	jadd_u64(n, "rate_limited", rs->neigh.rate_limited);
	jadd(out, "neighbours", n);
	jadd_u64(out, "link_layer_multicast", rs->link_packets - rs->link_unicast);
	jadd(o, "output", out);
	jadd_u64(p, "packets", as->packets);
	jadd_u64(p, "not_pgm", as->not_pgm);
	jadd_u64(p, "malformed", as->malformed);
	jadd_u64(p, "udp_not_pgm", as->udp_not_pgm);
	jadd_u64(p, "rewritten", as->rewritten);
	jadd_u64(p, "rewrite_failed", as->rewrite_failed);
	jadd_u64(p, "originated", as->originated);
	jadd_u64(p, "build_failed", as->build_failed);
	jadd_u64(p, "send_failed", as->send_failed);
	jadd_u64(p, "no_source_address", as->no_source_addr);
	jadd_u64(p, "timer_runs", as->timer_runs);
	jadd_u64(p, "max_round_packets", v->max_round_packets);
	jadd(o, "path", p);
	jadd_u64(rep, "replicated", as->replicated);
	jadd_u64(rep, "copies", as->copies);
	jadd_u64(rep, "copies_failed", as->copies_failed);
	jadd_u64(rep, "held", as->copies_held);
	jadd_u64(rep, "by_kernel", as->repl_by_kernel);
	jadd_u64(rep, "single_rewritten", as->repl_single);
	jadd_u64(rep, "no_route", as->repl_no_route);
	jadd_u64(rep, "wrong_interface", as->repl_wrong_if);
	jadd_u64(rep, "routes", v->routes_known);
	jadd_u64(rep, "route_messages", v->routes.messages);
	jadd_u64(rep, "route_resyncs", v->routes.resyncs);
	jadd(o, "replication", rep);
	jadd_u64(ifs, "known", v->interfaces_known);
	jadd_u64(ifs, "messages", v->interfaces.messages);
	jadd_u64(ifs, "resyncs", v->interfaces.resyncs);
	jadd(o, "interface_mirror", ifs);
	if (v->capture_path != NULL) {
		struct json_object *cap = json_object_new_object();

		jadd_str(cap, "path", v->capture_path);
		jadd_u64(cap, "packets", v->capture.packets);
		jadd_u64(cap, "bytes", v->capture.total_bytes);
		jadd_bool(cap, "stopped", v->capture.stopped);
		jadd(o, "capture", cap);
	}
	return o;
}

static void dataplane_text(
	struct cfg_buf *b, const struct assist_dataplane_view *v, const struct assist_settings *g)
{
	const struct nfqueue_stats *qs = &v->queue;
	const struct nfqueue_kernel_stats *ks = &v->kernel;
	const struct rawsock_stats *rs = &v->output;
	const struct assist_stats *as = v->path;

	cfg_printf(b, "PGM router assist data plane: %s\n", v->running ? "running" : "not running");
	if (v->nworkers > 1)
		cfg_printf(b,
			"  Interception backend %s, queues %u-%u (sessions by GSI), bypass when "
			"the daemon is down\n",
			v->backend, g->queue, g->queue + v->nworkers - 1);
	else
		cfg_printf(b, "  Interception backend %s, queue %u, bypass when the daemon is down\n",
			v->backend, g->queue);
	if (v->backend_detail[0] != '\0')
		cfg_printf(b, "    queue rules use the %s\n", v->backend_detail);
	if (v->nft_unavailable[0] != '\0')
		cfg_printf(b, "  nftables not used: %s\n", v->nft_unavailable);
	if (v->ipv6_unavailable != NULL && v->ipv6_unavailable[0] != '\0')
		cfg_printf(b, "  IPv6 not intercepted (%llu failed installs): %s\n",
			(unsigned long long)v->ipv6_failures, v->ipv6_unavailable);
	if (g->udp)
		cfg_printf(b, "  PGM over UDP intercepted on ports %.*s\n", ASSIST_UDP_PORTS_LEN,
			g->udp_ports);
	else
		cfg_printf(b, "  PGM over UDP not intercepted\n");
	cfg_printf(b,
		"  Queue: %llu packets, %llu bytes; verdicts: %llu accept, %llu drop, "
		"%llu rewritten\n",
		(unsigned long long)qs->packets, (unsigned long long)qs->bytes,
		(unsigned long long)qs->accepted, (unsigned long long)qs->dropped,
		(unsigned long long)qs->rewritten);
	cfg_printf(b, "    %llu batch verdicts carrying %llu, %llu single verdicts, %llu sends\n",
		(unsigned long long)qs->batches, (unsigned long long)qs->batched,
		(unsigned long long)qs->verdict_messages, (unsigned long long)qs->sends);
	cfg_printf(b,
		"    %llu receive rounds held their drop verdicts for a later send, %u held now\n",
		(unsigned long long)qs->held_rounds, qs->held);
	cfg_printf(b,
		"    receive buffer %u bytes%s, ENOBUFS %llu, packets not delivered %llu, "
		"send errors %llu\n",
		qs->rcvbuf_bytes, qs->rcvbuf_forced ? " (forced)" : "",
		(unsigned long long)qs->enobufs, (unsigned long long)qs->id_gaps,
		(unsigned long long)qs->send_errors);
	if (ks->valid)
		cfg_printf(b,
			"  Kernel queue: %u waiting, %u dropped (full), %u user-dropped, "
			"%u socket drops\n",
			ks->queue_total, ks->queue_dropped, ks->user_dropped, ks->socket_drops);
	for (unsigned i = 0; v->nworkers > 1 && i < v->nworkers; i++) {
		const struct assist_worker_view *w = &v->workers[i];
		char cpu[48] = "CPU unknown";

		if (w->cpu_valid)
			snprintf(cpu, sizeof(cpu), "CPU %.3f s", (double)w->cpu_ns / 1e9);
		cfg_printf(b,
			"  Worker %u: queue %u, %llu packets, %llu drop verdicts, %llu dropped by the "
			"kernel, %llu not delivered; thread %d, %s\n",
			i, w->queue_num, (unsigned long long)w->queue.packets,
			(unsigned long long)w->queue.dropped,
			(unsigned long long)w->kernel.queue_dropped + w->kernel.user_dropped +
				w->kernel.socket_drops,
			(unsigned long long)w->queue.id_gaps, w->tid, cpu);
	}
	if (v->rules_counters_valid)
		cfg_printf(b, "  Rules matched: prerouting %llu, input %llu (IPv6 %llu, %llu)\n",
			(unsigned long long)v->rules.packets[RULES_IPT_PRE],
			(unsigned long long)v->rules.packets[RULES_IPT_IN],
			(unsigned long long)v->rules.packets_ipv6[RULES_IPT_PRE],
			(unsigned long long)v->rules.packets_ipv6[RULES_IPT_IN]);
	else if (v->rules_counters_error[0] != '\0')
		cfg_printf(b, "  Rules matched: unavailable (%s)\n", v->rules_counters_error);
	cfg_printf(b,
		"  Output: %llu packets, %llu bytes; send buffer %u bytes, %llu would block, "
		"%llu unreachable, %llu other errors\n",
		(unsigned long long)rs->packets, (unsigned long long)rs->bytes, rs->sndbuf_bytes,
		(unsigned long long)rs->would_block, (unsigned long long)rs->unreachable,
		(unsigned long long)(rs->too_big + rs->bad_input + rs->other_errors));
	cfg_printf(b,
		"    %llu larger than their interface's MTU fragmented (%llu fragments), %llu "
		"refused (DF set)\n",
		(unsigned long long)rs->fragmented, (unsigned long long)rs->fragments,
		(unsigned long long)rs->frag_refused);
	cfg_printf(b,
		"    %llu multicast and %llu unicast through the link layer (%s), the rest through "
		"the IP stack\n",
		(unsigned long long)(rs->link_packets - rs->link_unicast),
		(unsigned long long)rs->link_unicast,
		rs->link_output				? "on"
		: !rs->link_available && v->output_open ? "unavailable: no packet socket"
							: "off");
	if (rs->neigh_available)
		cfg_printf(b,
			"    neighbour lookups: %llu asked, %llu confirmed, %llu not, %llu failed, "
			"%llu over the rate\n",
			(unsigned long long)rs->neigh.queries, (unsigned long long)rs->neigh.usable,
			(unsigned long long)rs->neigh.unusable,
			(unsigned long long)rs->neigh.errors,
			(unsigned long long)rs->neigh.rate_limited);
	else if (v->output_open && rs->link_available)
		cfg_printf(b,
			"    neighbour lookups unavailable (%s): unicast through the IP stack\n",
			strerror(rs->neigh_errno));
	cfg_printf(b,
		"  Packet path: %llu packets, %llu not PGM, %llu UDP not PGM, %llu malformed, "
		"%llu rewritten (%llu rewrites failed)\n",
		(unsigned long long)as->packets, (unsigned long long)as->not_pgm,
		(unsigned long long)as->udp_not_pgm, (unsigned long long)as->malformed,
		(unsigned long long)as->rewritten,
		(unsigned long long)as->rewrite_failed);
	cfg_printf(b,
		"    %llu originated, %llu could not be built, %llu send failures, "
		"%llu without a source address\n",
		(unsigned long long)as->originated, (unsigned long long)as->build_failed,
		(unsigned long long)as->send_failed, (unsigned long long)as->no_source_addr);
	cfg_printf(b, "    %llu timer runs, largest receive round %llu packets\n",
		(unsigned long long)as->timer_runs, (unsigned long long)v->max_round_packets);
	cfg_printf(b,
		"  Replication: %llu SPM/RDATA replicated, %llu copies sent (%llu failed), "
		"%llu held back\n",
		(unsigned long long)as->replicated, (unsigned long long)as->copies,
		(unsigned long long)as->copies_failed, (unsigned long long)as->copies_held);
	cfg_printf(b,
		"    left to the kernel: %llu with every copy unchanged, %llu with its one copy "
		"rewritten, %llu without a route, %llu off its incoming interface\n",
		(unsigned long long)as->repl_by_kernel, (unsigned long long)as->repl_single,
		(unsigned long long)as->repl_no_route, (unsigned long long)as->repl_wrong_if);
	cfg_printf(b, "    multicast routes: %zu known (rtnetlink: %llu messages, %llu resyncs)\n",
		v->routes_known, (unsigned long long)v->routes.messages,
		(unsigned long long)v->routes.resyncs);
	cfg_printf(b, "  Interfaces: %zu known (rtnetlink: %llu messages, %llu resyncs)\n",
		v->interfaces_known, (unsigned long long)v->interfaces.messages,
		(unsigned long long)v->interfaces.resyncs);
	if (v->capture_path != NULL)
		cfg_printf(b, "  Capture: %s, %llu packets, %llu bytes%s\n", v->capture_path,
			(unsigned long long)v->capture.packets,
			(unsigned long long)v->capture.total_bytes,
			v->capture.stopped ? " (size limit reached, stopped)" : "");
}

static int cmd_show_dataplane(struct cmd_session *s, const struct cmd_args *a)
{
	const struct assist_settings *g = cfg_module_global(cfg_running(), &pgm_module);
	struct assist *as = pgm_vty_assist();
	struct assist_stats none = {0};
	struct assist_dataplane_view v;
	struct cfg_buf b = {0};

	if (as != NULL) {
		assist_dataplane_view(as, &v);
	} else {
		memset(&v, 0, sizeof(v));
		v.backend = "none";
		v.nft_unavailable = "";
		v.path = &none;
	}
	if (cmd_arg_has(a, "json")) {
		json_put(&b, dataplane_json(&v, g));
		cfg_printf(&b, "\n");
	} else {
		dataplane_text(&b, &v, g);
	}
	return stream(s, &b);
}

/* ---- show ip pgm router metrics: OpenMetrics text ---- */

/* The counters of the shows above in the OpenMetrics text format, for Prometheus (a
   node-exporter textfile collector fed by `pgmrouter -c "show ip pgm router metrics"`). Names
   and labels are the JSON's: interface, type (lower case), event, error. Counters are the
   shows' own, zeroed by `clear`; gauges are sampled now. */

static void om_family(struct cfg_buf *b, const char *name, const char *type, const char *help)
{
	cfg_printf(b, "# TYPE pgmrouter_%s %s\n# HELP pgmrouter_%s %s\n", name, type, name, help);
}

static void om_value(struct cfg_buf *b, const char *name, uint64_t v)
{
	cfg_printf(b, "pgmrouter_%s %llu\n", name, (unsigned long long)v);
}

struct metrics_ctx {
	struct cfg_buf *b;
	unsigned part; /* which family cp_foreach_if is rendering */
};

enum { OM_RECEIVED, OM_SENT, OM_EVENTS, OM_MALFORMED };

/* Interface names are IFNAMEs (no quote, backslash or newline): no escaping needed. */
static void metrics_if(void *arg, const struct cp_if_view *v)
{
	struct metrics_ctx *m = arg;
	const struct cp_counters *k = v->counters;

	if (k == NULL || !v->assist)
		return;
	switch (m->part) {
	case OM_RECEIVED:
	case OM_SENT:
		for (size_t i = 0; i < NTRAFFIC_TYPES; i++) {
			char type[16];
			size_t j;

			for (j = 0; pgm_type_name(traffic_types[i])[j] && j < sizeof(type) - 1; j++)
				type[j] = (char)tolower(
					(unsigned char)pgm_type_name(traffic_types[i])[j]);
			type[j] = '\0';
			cfg_printf(m->b, "pgmrouter_%s_total{interface=\"%s\",type=\"%s\"} %llu\n",
				m->part == OM_RECEIVED ? "received" : "sent", v->name, type,
				(unsigned long long)(m->part == OM_RECEIVED ? k->in : k->out)
					[traffic_types[i]]);
		}
		break;
	case OM_EVENTS:
		for (unsigned e = 0; e < CP_C_COUNT; e++)
			cfg_printf(m->b,
				"pgmrouter_events_total{interface=\"%s\",event=\"%s\"} %llu\n",
				v->name, cp_counter_name(e), (unsigned long long)k->ev[e]);
		break;
	case OM_MALFORMED:
		for (unsigned e = 1; e < PGM_ERR_COUNT; e++)
			cfg_printf(m->b,
				"pgmrouter_malformed_total{interface=\"%s\",error=\"%s\"} %llu\n",
				v->name, pgm_err_name(e), (unsigned long long)k->err[e]);
		break;
	}
}

static void metrics_text(struct cfg_buf *b, struct assist *as)
{
	struct metrics_ctx m = {.b = b};
	struct summary_view sv;
	struct assist_dataplane_view dv;
	struct assist_stats none = {0};
	struct cp_stats st;

	summary_collect(&sv);
	om_family(b, "up", "gauge", "1 while router assist runs, else 0.");
	om_value(b, "up", sv.running);
	om_family(b, "sessions", "gauge", "Sessions (source path state) held.");
	om_value(b, "sessions", sv.cp.sessions);
	om_family(b, "sessions_limit", "gauge", "The most sessions held (max-sessions in force).");
	om_value(b, "sessions_limit", sv.cp.limits.max_sessions);
	om_family(b, "repair_states", "gauge", "Repair states held.");
	om_value(b, "repair_states", sv.cp.repair_states);
	om_family(b, "repair_states_limit", "gauge",
		"The most repair states held (max-rexmit-states in force).");
	om_value(b, "repair_states_limit", sv.cp.limits.max_repair_states);
	om_family(b, "memory_bytes", "gauge", "Memory of sessions and repair states.");
	om_value(b, "memory_bytes", sv.cp.bytes);
	if (as == NULL) {
		cfg_printf(b, "# EOF\n");
		return;
	}
	om_family(b, "received", "counter", "PGM packets received, by interface and type.");
	m.part = OM_RECEIVED;
	assist_foreach_if(as, metrics_if, &m);
	om_family(b, "sent", "counter", "PGM packets sent, by interface and type.");
	m.part = OM_SENT;
	assist_foreach_if(as, metrics_if, &m);
	om_family(b, "events", "counter",
		"Router assist events by interface (show ip pgm router traffic verbose).");
	m.part = OM_EVENTS;
	assist_foreach_if(as, metrics_if, &m);
	om_family(b, "malformed", "counter",
		"Malformed PGM packets dropped, by interface and error.");
	m.part = OM_MALFORMED;
	assist_foreach_if(as, metrics_if, &m);
	om_family(b, "router_events", "counter", "Router-wide events (timers and limits).");
	assist_get_stats(as, &st);
	for (unsigned e = 0; e < CP_C_COUNT; e++)
		cfg_printf(b, "pgmrouter_router_events_total{event=\"%s\"} %llu\n",
			cp_counter_name(e), (unsigned long long)st.global_ev[e]);

	assist_dataplane_view(as, &dv);
	if (dv.path == NULL)
		dv.path = &none;
	{
		/* the data plane: (family, help, value) as `show ip pgm router dataplane json` */
		const struct {
			const char *name, *help;
			uint64_t v;
		} dp[] = {
			{"queue_packets", "Packets received from the netfilter queue.",
				dv.queue.packets},
			{"queue_accepted", "Accept verdicts.", dv.queue.accepted},
			{"queue_dropped", "Drop verdicts.", dv.queue.dropped},
			{"queue_enobufs", "Queue socket overruns (ENOBUFS).", dv.queue.enobufs},
			{"queue_not_delivered", "Packets the kernel queued but never delivered.",
				dv.queue.id_gaps},
			{"output_packets", "Packets sent by the daemon.", dv.output.packets},
			{"output_errors", "Sends that failed.",
				dv.output.too_big + dv.output.bad_input + dv.output.other_errors},
			{"path_malformed", "Datagrams dropped for a PGM parse error.",
				dv.path->malformed},
			{"path_udp_not_pgm", "UDP on the PGM ports that is not PGM.",
				dv.path->udp_not_pgm},
			{"replicated", "SPM and RDATA replicated by the daemon.",
				dv.path->replicated},
			{"replication_copies", "Copies sent by replication.", dv.path->copies},
			{"replication_no_route", "SPM and RDATA without a multicast route.",
				dv.path->repl_no_route},
			{"replication_wrong_interface",
				"SPM and RDATA off their route's incoming interface.",
				dv.path->repl_wrong_if},
			{"kernel_queue_dropped",
				"Packets the kernel dropped with the queue full (its count).",
				dv.kernel.queue_dropped},
		};

		for (size_t i = 0; i < sizeof(dp) / sizeof(dp[0]); i++) {
			char total[64];

			om_family(b, dp[i].name, "counter", dp[i].help);
			snprintf(total, sizeof(total), "%s_total", dp[i].name);
			om_value(b, total, dp[i].v);
		}
	}
	om_family(b, "routes", "gauge", "Multicast routes mirrored.");
	om_value(b, "routes", dv.routes_known);
	cfg_printf(b, "# EOF\n");
}

static int cmd_show_metrics(struct cmd_session *s, const struct cmd_args *a)
{
	struct cfg_buf b = {0};

	(void)a;
	metrics_text(&b, pgm_vty_assist());
	return stream(s, &b);
}

static const struct cmd_def show_cmds[] = {
	{.spec = "show ip pgm router [(verbose|json)]",
		.help = SHOW_PGM FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_summary},
	{.spec = "show ip pgm router interface [IFNAME] [(verbose|json)]",
		.help = SHOW_PGM "Interfaces with router assist\n" IFNAME_STR FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_interface},
	{.spec = "show ip pgm router state [A.B.C.D$GROUP] [(brief|verbose)] [json]",
		.help = SHOW_PGM STATE_HELP "Group address\n" STATE_FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_state},
	{.spec = "show ip pgm router state group A.B.C.D$GROUP [(brief|verbose)] [json]",
		.help = SHOW_PGM STATE_HELP "The sessions of one group\nGroup address\n"
			STATE_FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_state},
	{.spec = "show ip pgm router state group X:X::X:X$GROUP [(brief|verbose)] [json]",
		.help = SHOW_PGM STATE_HELP "The sessions of one group\nIPv6 group address\n"
			STATE_FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_state},
	{.spec = "show ip pgm router state source A.B.C.D$SOURCE [(brief|verbose)] [json]",
		.help = SHOW_PGM STATE_HELP "The sessions of one source\nSource address\n"
			STATE_FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_state_source},
	{.spec = "show ip pgm router state source X:X::X:X$SOURCE [(brief|verbose)] [json]",
		.help = SHOW_PGM STATE_HELP "The sessions of one source\nIPv6 source address\n"
			STATE_FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_state_source},
	{.spec = "show ip pgm router state tsi WORD$TSI [(brief|verbose)] [json]",
		.help = SHOW_PGM STATE_HELP "One session by its transport session identifier\n"
			"TSI: the GSI's 12 hex digits, a dot, the source port (4d81c2a034ed.7547)\n"
			STATE_FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_state_tsi},
	{.spec = "show ip pgm router metrics",
		.help = SHOW_PGM "The counters in OpenMetrics text (Prometheus)\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_metrics},
	{.spec = "show ip pgm router mroute [json]",
		.help = SHOW_PGM "Multicast routes SPM and RDATA are replicated along\n"
				 "JSON output\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_mroute},
	{.spec = "show ip pgm router traffic [IFNAME] [(verbose|json)]",
		.help = SHOW_PGM "PGM packet counters per interface\n" IFNAME_STR FORMAT_HELP,
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_traffic},
	{.spec = "show ip pgm router dataplane [json]",
		.help = SHOW_PGM "Netfilter queue, interception rules and packet output\n"
				 "JSON output\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_dataplane},
};

void pgm_show_init(void)
{
	cmd_install(show_cmds, CMD_COUNT(show_cmds));
}

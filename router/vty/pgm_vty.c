/*
 * The PGM router assist commands: the `ip pgm router` settings as one table (cli/settings.h),
 * the configuration handed to router assist, `clear ip pgm router ...` and the debug capture.
 * The shows are in pgm_show.c.
 */
#include "router/vty/pgm_vty.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/command.h"
#include "dataplane/rules.h"
#include "router/lib/log.h"

#define PGM_ROUTER_HELP	   IP_STR PGM_STR ROUTER_ASSIST_STR
#define DEFAULT_CAPTURE_MB 64

static struct assist *attached;
static char *capture_path;

/* ---- the settings ---- */

#define G(field)  offsetof(struct assist_settings, field)
#define IF(field) offsetof(struct assist_if_settings, field)
/* a per-interface value, configured globally as every interface's default */
#define INHERITED(field) .global_offset = G(cp.if_defaults.field), .if_offset = IF(cfg.field)
#define GLOBAL(field)	 .global_offset = G(field), .if_offset = SETTING_NOWHERE

#define MS	      "Milliseconds\n"
#define RANGE(lo, hi) .min = (lo), .max = (hi)

static const char *const backends[] = {"auto", "nftables", "iptables", NULL};
_Static_assert(RULES_BACKEND_AUTO == 0 && RULES_BACKEND_NFT == 1 && RULES_BACKEND_IPTABLES == 2,
	"backend choices are the enum's values");

/* At most CP_MAX_INTERFACES interfaces with router assist: the core's interface sets are
   64-bit masks. */
static int check_assist(
	const struct cfg *c, const char *ifname, uint32_t value, char *err, size_t errlen)
{
	size_t n = 0;

	if (!value)
		return 0;
	for (size_t i = 0; i < cfg_if_count(c); i++) {
		const char *name = cfg_if_name(c, i);
		const struct assist_if_settings *s = cfg_module_if(c, &pgm_module, name);

		n += s != NULL && s->assist && strcmp(name, ifname) != 0;
	}
	if (n < CP_MAX_INTERFACES)
		return 0;
	snprintf(err, errlen, "at most %d interfaces can have router assist", CP_MAX_INTERFACES);
	return -1;
}

_Static_assert(ASSIST_UDP_PORTS_LEN == SETTING_TEXT_LEN, "the ports are a text argument");

/* The encapsulation ports as a set: "3055 3056", "5555", "3055-3056 7000-7010". */
static int udp_ports_canon(const char *typed, char *out, size_t len, char *err, size_t errlen)
{
	struct pgm_port_set set;

	if (pgm_port_set_parse(typed, &set, err, errlen) < 0)
		return -1;
	pgm_port_set_format(&set, out, len);
	return 0;
}

/* Policing before the queue (dataplane/rules.h): `no` removes the limit. */
#define POLICE_ROW(kw, row, dflt_prefix, help_line, lbl)                                            \
	{                                                                                      \
		.keyword = kw, .kind = SETTING_FLAG, .dflt = 1,                                \
		.help = help_line,                                                             \
		.args = "[rate <1-1000000>$pps burst <1-10000>$packets]",                       \
		.value_help = "Packets per second\nRate\nPackets let through at once\n"    \
			      "Bucket size\n",                                              \
		.arg = {{.name = "pps", .offset = G(police[row].rate), .dflt = dflt_prefix##_RATE}, \
			{.name = "packets", .offset = G(police[row].burst),                     \
				.dflt = dflt_prefix##_BURST}},                                 \
		.label = lbl, GLOBAL(police[row].on), .flags = PGM_SETTING_QUEUE               \
	}

/* In the order of the running configuration. The README's defaults table is checked against
   this one (tests/cli). */
static const struct setting pgm_settings[] = {
	{.keyword = "queue",
		.kind = SETTING_NUMBER,
		RANGE(0, 65535),
		.dflt = 113,
		/* the PGM protocol number: easy to recognise in nft list ruleset, iptables -L */
		.help = "Netfilter queue number the data plane binds\n",
		.value_help = "Queue number\n",
		.label = "Netfilter queue",
		GLOBAL(queue),
		.flags = PGM_SETTING_QUEUE},
	{.keyword = "workers",
		.kind = SETTING_NUMBER,
		RANGE(1, RULES_WORKERS_MAX),
		.dflt = 1,
		.help = "Worker threads the sessions are spread over, by GSI\n",
		.value_help = "Worker threads, worker k on the queue number + k\n",
		.label = "Workers",
		GLOBAL(workers),
		.flags = PGM_SETTING_QUEUE},
	{.keyword = "backend",
		.kind = SETTING_CHOICE,
		.choices = backends,
		.dflt = RULES_BACKEND_AUTO,
		.help = "How interception rules are installed\n",
		.value_help = "nftables where the kernel has queue support, else iptables\n"
			      "nftables (needs CONFIG_NFT_QUEUE)\n"
			      "iptables with the NFQUEUE target and the u32 match\n",
		.label = "Interception backend",
		GLOBAL(backend),
		.flags = PGM_SETTING_QUEUE},
	{.keyword = "ncf-ttl",
		.kind = SETTING_NUMBER,
		RANGE(1, 255),
		.dflt = 255,
		.help = "IP TTL of the NCFs the router multicasts\n",
		.value_help = "TTL\n",
		.label = "NCF TTL",
		GLOBAL(ncf_ttl)},
	{.keyword = "udp-encapsulation",
		.kind = SETTING_FLAG,
		.dflt = 1,
		.help = "Intercept PGM over UDP (OpenPGM, ZeroMQ epgm)\n",
		.args = "[ports LINE$list]",
		.value_help = "UDP ports\nPorts and ranges, unicast and multicast (3055 3056; "
			      "ZeroMQ epgm: the endpoint's port)\n",
		.arg = {{.name = "list",
			.offset = G(udp_ports),
			.canon = udp_ports_canon,
			.dflt_text = "3055 3056"}},
		.label = "PGM over UDP",
		GLOBAL(udp),
		.flags = PGM_SETTING_QUEUE},
	{.keyword = "link-layer-output",
		.kind = SETTING_FLAG,
		.dflt = 1,
		.help = "Send multicast, and unicast to confirmed neighbours, onto Ethernet links "
			"through a packet socket (no route lookup; bypasses netfilter output "
			"hooks)\n",
		.label = "Link-layer output",
		GLOBAL(link_output)},
	{.keyword = "session-lifetime",
		.kind = SETTING_NUMBER,
		RANGE(0, 86400),
		.dflt = 300,
		.help = "How long a session lives without SPMs\n",
		.value_help = "Seconds (0: forever)\n",
		.unit = "s",
		.label = "Session lifetime",
		GLOBAL(cp.session_lifetime_s)},
	{.keyword = "memory-budget",
		.kind = SETTING_NUMBER,
		RANGE(64, 1048576),
		.dflt = 256,
		.help = "Memory for sessions and repair states, from which their limits are "
			"derived\n",
		.value_help = "Megabytes\n",
		.unit = "MB",
		.label = "Memory budget",
		GLOBAL(cp.memory_budget_mb)},
	{.keyword = "max-sessions",
		.kind = SETTING_NUMBER,
		RANGE(0, 10000000),
		.dflt = 0,
		.help = "Limit the sessions tracked (pgmNeMaxSessions)\n",
		.value_help = "Sessions (0: from the memory budget)\n",
		.label = "Maximum sessions",
		GLOBAL(cp.max_sessions)},
	{.keyword = "max-rexmit-states",
		.kind = SETTING_NUMBER,
		RANGE(0, 100000000),
		.dflt = 0,
		.help = "Limit the repair states kept (pgmNeMaxReXmitStates)\n",
		.value_help = "Repair states (0: from the memory budget)\n",
		.label = "Maximum repair states",
		GLOBAL(cp.max_repair_states)},
	{.keyword = "rexmit-interface-share",
		.kind = SETTING_NUMBER,
		RANGE(1, 100),
		.dflt = 50,
		.help = "Share of the repair states that packets from one interface may create\n",
		.value_help = "Percent of max-rexmit-states\n",
		.unit = "%",
		.label = "Repair states per interface",
		GLOBAL(cp.repair_if_share)},
	{.keyword = "rexmit-session-share",
		.kind = SETTING_NUMBER,
		RANGE(1, 100),
		.dflt = 25,
		.help = "Share of the repair states one session may hold\n",
		.value_help = "Percent of max-rexmit-states\n",
		.unit = "%",
		.label = "Repair states per session",
		GLOBAL(cp.repair_session_share)},
	POLICE_ROW("police-nak", ASSIST_POLICE_NAK, RULES_POLICE_NAK,
		"Drop NAKs and NNAKs over a rate per source, before the queue\n",
		"NAK policing per source"),
	POLICE_ROW("police-ncf", ASSIST_POLICE_NCF, RULES_POLICE_NCF,
		"Drop NCFs over a rate per source, before the queue\n", "NCF policing per source"),
	POLICE_ROW("police-spm", ASSIST_POLICE_SPM, RULES_POLICE_SPM,
		"Drop SPMs, POLLs and POLRs over a rate per source, before the queue\n",
		"SPM policing per source"),
	POLICE_ROW("police-interface", ASSIST_POLICE_INTERFACE, RULES_POLICE_IF,
		"Drop each of those three kinds over a rate per interface, before the queue\n",
		"Policing per interface"),
	{.keyword = "dlr-redirect",
		.kind = SETTING_FLAG,
		.dflt = 1,
		.help = "Send NAKs to DLRs that announce themselves (redirecting POLRs)\n",
		.label = "DLR redirection",
		GLOBAL(cp.dlr_redirect)},
	{.keyword = "dlr-discovery",
		.kind = SETTING_FLAG,
		.dflt = 0,
		.help = "Poll for off-tree DLRs (POLL sub-type DLR) when a NAK finds no DLR\n",
		.args = "[interval <1-3600>$seconds backoff <1-10000>$ms]",
		.value_help = "At most one DLR poll per session in this interval\n"
			      "Seconds (default 10)\nPOLL_BO_IVL of the poll\n"
			      "Milliseconds (default 100)\n",
		.arg = {{.name = "seconds", .offset = G(cp.dlr_poll_ivl_ms), .dflt = 10, .scale = 1000},
			{.name = "ms", .offset = G(cp.dlr_poll_bo_ivl_ms), .dflt = 100, .scale = 1}},
		.label = "DLR discovery",
		GLOBAL(cp.dlr_discovery)},
	{.keyword = "poll-response",
		.kind = SETTING_FLAG,
		.dflt = 1,
		.help = "Answer general POLLs of the upstream neighbour (PGM child, RFC 3208 "
			"14.5)\n",
		.label = "POLL child role",
		GLOBAL(cp.poll_reply)},
	{.keyword = "",
		.kind = SETTING_FLAG,
		.dflt = 0,
		.help = "",
		.label = "Router assist",
		.global_offset = SETTING_NOWHERE,
		.if_offset = IF(assist),
		.check = check_assist},
	{.keyword = "nak-repeat-interval",
		.kind = SETTING_NUMBER,
		RANGE(10, 600000),
		.dflt = 2000,
		.help = "NAK_RPT_IVL: how long an unconfirmed NAK is repeated upstream\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NAK repeat interval",
		INHERITED(nak_rpt_ivl_ms),
		.flags = PGM_SETTING_BRIEF},
	{.keyword = "nak-repeat-rate",
		.kind = SETTING_NUMBER,
		RANGE(1, 1000),
		.dflt = 5,
		.help = "NAK_RPT_RTE: repeats per second while a NAK is unconfirmed\n",
		.value_help = "NAKs per second\n",
		.unit = "per second",
		.label = "NAK repeat rate",
		INHERITED(nak_rpt_rate),
		.flags = PGM_SETTING_BRIEF},
	{.keyword = "nak-rdata-interval",
		.kind = SETTING_NUMBER,
		RANGE(10, 3600000),
		.dflt = 10000,
		.help = "NAK_RDATA_IVL: how long repair state waits for RDATA after an NCF\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NAK RDATA interval",
		INHERITED(nak_rdata_ivl_ms),
		.flags = PGM_SETTING_BRIEF},
	{.keyword = "nak-eliminate-interval",
		.kind = SETTING_NUMBER,
		RANGE(0, 3600000),
		.dflt = 100,
		.help = "NAK_ELIM_IVL: duplicate NAKs discarded after a confirmation\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NAK eliminate interval",
		INHERITED(nak_elim_ivl_ms),
		.flags = PGM_SETTING_BRIEF},
	{.keyword = "nak-crossing-interval",
		.kind = SETTING_NUMBER,
		RANGE(0, 3600000),
		.dflt = 50,
		.help = "Repaired state kept this long: a new source's NAK that crossed the repair "
			"is discarded (0: off; at most NAK_ELIM_IVL)\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NAK crossing interval",
		INHERITED(nak_cross_ivl_ms)},
	{.keyword = "ncf-interval",
		.kind = SETTING_NUMBER,
		RANGE(0, 60000),
		.dflt = 50,
		.help = "Identical NCFs on one interface at most once per interval\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NCF interval",
		INHERITED(ncf_ivl_ms),
		.flags = PGM_SETTING_BRIEF},
	{.keyword = "nak-backoff-interval",
		.kind = SETTING_NUMBER,
		RANGE(0, 60000),
		.dflt = 0,
		.scale = 1000,
		.help = "NAK_BO_IVL advertised in NCFs and written into forwarded SPMs "
			"(0: unchanged)\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NAK backoff interval",
		INHERITED(nak_bo_ivl_us)},
	{.keyword = "nak-backoff-probe",
		.kind = SETTING_NUMBER,
		RANGE(0, 1000),
		.dflt = 0,
		.help = "Tune NAK_BO_IVL: x2 on a first duplicate NAK, /2 after this many clean "
			"states\n",
		.value_help = "Repair states (NAK_PROBE_NUM; 0: no tuning)\n",
		.unit = "repair states",
		.label = "NAK backoff probe",
		INHERITED(nak_probe_num)},
	{.keyword = "nak-backoff-minimum",
		.kind = SETTING_NUMBER,
		RANGE(0, 60000),
		.dflt = 0,
		.scale = 1000,
		.help = "NAK_BO_IVL_MIN: lower bound of the tuned NAK_BO_IVL\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NAK backoff minimum",
		INHERITED(nak_bo_ivl_min_us)},
	{.keyword = "nak-backoff-maximum",
		.kind = SETTING_NUMBER,
		RANGE(0, 60000),
		.dflt = 0,
		.scale = 1000,
		.help = "NAK_BO_IVL_MAX: upper bound of the tuned NAK_BO_IVL\n",
		.value_help = MS,
		.unit = "ms",
		.label = "NAK backoff maximum",
		INHERITED(nak_bo_ivl_max_us)},
	{.keyword = "duplicate-nak-max",
		.kind = SETTING_NUMBER,
		RANGE(0, 1000),
		.dflt = 0,
		.help = "DUP_NAK_MAX: duplicate NAKs at which multicast below is assumed lost\n",
		.value_help = "Duplicate NAKs for one repair state (0: never)\n",
		.unit = "NAKs",
		.label = "Duplicate NAK maximum",
		INHERITED(dup_nak_max)},
	{.keyword = "router-alert",
		.kind = SETTING_FLAG,
		.dflt = 1,
		.help = "IP Router Alert on the NCFs, POLLs and repairs the router sends as if from "
			"the source\n",
		.label = "Router Alert",
		INHERITED(router_alert)},
	{.keyword = "session-rate",
		.kind = SETTING_NUMBER,
		RANGE(0, 100000),
		.dflt = 100,
		.help = "New sessions learnt per second from SPMs arriving on an interface\n",
		.value_help = "Sessions per second, bursts of as many (0: no cap)\n",
		.unit = "per second",
		.label = "New-session rate",
		INHERITED(session_rate)},
};

static void pgm_init_global(void *values)
{
	struct assist_settings *g = values;

	/* what no row sets: the core's own (rdata_linger_ms, nak_window_check) */
	cp_config_default(&g->cp);
}

/* Router assist configured with `c`. */
static int configure(const struct cfg *c, unsigned how, char *err, size_t errlen)
{
	struct assist_conf conf;
	int rc;

	if (pgm_conf_from_cfg(c, &conf) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = assist_configure(attached, &conf, how, err, errlen);
	assist_conf_free(&conf);
	return rc;
}

/* A commit: router assist works out the difference from what runs itself; a commit that
   changed none of the PGM settings (a hostname) costs nothing. */
static int pgm_apply(
	void *ctx, const struct cfg *prev, const struct cfg *next, char *err, size_t errlen)
{
	(void)ctx;
	if (attached == NULL || cfg_module_same(prev, next, &pgm_module))
		return 0;
	return configure(next,
		settings_global_differ(&pgm_module, prev, next, PGM_SETTING_QUEUE)
			? ASSIST_RESTART_QUEUE
			: 0,
		err, errlen);
}

struct cfg_module pgm_module = {
	.name = "pgm",
	.prefix = "ip pgm router",
	.prefix_help = PGM_ROUTER_HELP,
	.rows = pgm_settings,
	.nrows = sizeof(pgm_settings) / sizeof(pgm_settings[0]),
	.global_size = sizeof(struct assist_settings),
	.if_size = sizeof(struct assist_if_settings),
	.init_global = pgm_init_global,
	.write_order = 110,
	.if_write_order = 10,
	.apply = pgm_apply,
};

int pgm_conf_from_cfg(const struct cfg *c, struct assist_conf *out)
{
	size_t n = cfg_if_count(c);

	memset(out, 0, sizeof(*out));
	memcpy(&out->g, cfg_module_global(c, &pgm_module), sizeof(out->g));
	if (n != 0 && (out->ifs = calloc(n, sizeof(*out->ifs))) == NULL)
		return -1;
	out->nifs = n;
	for (size_t i = 0; i < n; i++) {
		snprintf(out->ifs[i].name, sizeof(out->ifs[i].name), "%s", cfg_if_name(c, i));
		settings_effective(c, &pgm_module, out->ifs[i].name, &out->ifs[i].s);
	}
	return 0;
}

int pgm_vty_attach(struct assist *a, char *err, size_t errlen)
{
	attached = a;
	return a != NULL ? configure(cfg_running(), 0, err, errlen) : 0;
}

struct assist *pgm_vty_assist(void)
{
	return attached;
}

/* ---- clear ---- */

static int fail(struct cmd_session *s, const char *err)
{
	cmd_out(s, "%% %s\n", err);
	return CMD_ERR_FAILED;
}

static bool not_running(struct cmd_session *s)
{
	if (attached != NULL)
		return false;
	cmd_out(s, "%% PGM router assist is not running\n");
	return true;
}

static int cmd_clear_traffic(struct cmd_session *s, const struct cmd_args *a)
{
	const char *name = cmd_arg(a, "IFNAME");
	int ifindex = 0;
	bool up, running;

	if (not_running(s))
		return CMD_ERR_FAILED;
	if (name != NULL && (ifindex = assist_if_lookup(attached, name, &up, &running)) == 0) {
		cmd_out(s, "%% No interface %s\n", name);
		return CMD_ERR_FAILED;
	}
	assist_clear_counters(attached, ifindex);
	log_info("PGM router traffic counters cleared%s%s", name ? " on " : "", name ? name : "");
	return CMD_OK;
}

static int cmd_clear_dlr(struct cmd_session *s, const struct cmd_args *a)
{
	const char *text = cmd_arg(a, "DLR");
	struct pgm_nla dlr;
	size_t n;

	if (not_running(s))
		return CMD_ERR_FAILED;
	if (text != NULL && !pgm_nla_parse(&dlr, text))
		return fail(s, "bad DLR address");
	n = assist_clear_dlrs(attached, text != NULL ? &dlr : NULL);
	if (!s->batch)
		cmd_out(s, "Cleared %zu learned DLR%s\n", n, n == 1 ? "" : "s");
	log_info("%zu learned DLRs cleared%s%s", n, text ? " for " : "", text ? text : "");
	return CMD_OK;
}

static int cmd_clear_rtx(struct cmd_session *s, const struct cmd_args *a)
{
	const char *group_text = cmd_arg(a, "GROUP");
	struct pgm_nla group;
	size_t n;

	if (not_running(s))
		return CMD_ERR_FAILED;
	if (group_text != NULL && !pgm_nla_parse(&group, group_text))
		return fail(s, "bad group address");
	n = assist_clear_repair_states(attached, group_text ? &group : NULL);
	if (!s->batch)
		cmd_out(s, "Cleared %zu repair state%s\n", n, n == 1 ? "" : "s");
	log_info("%zu PGM repair states cleared%s%s", n, group_text ? " for group " : "",
		group_text ? group_text : "");
	return CMD_OK;
}

/* Bare `clear ip pgm router`, as on IOS: the three clears at once. Sessions stay: dropping
   one would lose its source path state, and NAKs their way upstream, until its next SPM. */
static int cmd_clear_all(struct cmd_session *s, const struct cmd_args *a)
{
	size_t repairs, dlrs;

	(void)a;
	if (not_running(s))
		return CMD_ERR_FAILED;
	assist_clear_counters(attached, 0);
	repairs = assist_clear_repair_states(attached, NULL);
	dlrs = assist_clear_dlrs(attached, NULL);
	if (!s->batch)
		cmd_out(s, "Cleared traffic counters, %zu repair state%s, %zu learned DLR%s\n",
			repairs, repairs == 1 ? "" : "s", dlrs, dlrs == 1 ? "" : "s");
	log_info("PGM router cleared: traffic counters, %zu repair states, %zu learned DLRs",
		repairs, dlrs);
	return CMD_OK;
}

/* ---- debug capture ---- */

const char *pgm_vty_capture_path(void)
{
	return capture_path;
}

void pgm_vty_capture_stop(void)
{
	char err[256];

	if (capture_path == NULL)
		return;
	if (attached != NULL)
		(void)assist_capture(attached, NULL, 0, err, sizeof(err));
	free(capture_path);
	capture_path = NULL;
}

static int cmd_debug_capture(struct cmd_session *s, const struct cmd_args *a)
{
	const char *path;
	char err[256], *copy;

	if (a->negate) {
		pgm_vty_capture_stop();
		return CMD_OK;
	}
	path = cmd_arg(a, "WORD");
	/* the file is opened by the daemon, whose working directory is / once detached */
	if (path[0] != '/')
		return fail(s, "Give the capture file as an absolute path");
	if (attached == NULL || !assist_running(attached))
		return fail(s, "PGM router assist is not running");
	if ((copy = strdup(path)) == NULL)
		return fail(s, "out of memory");
	if (assist_capture(attached, path, (uint32_t)cmd_arg_int(a, "mb", DEFAULT_CAPTURE_MB), err,
		    sizeof(err)) < 0) {
		free(copy);
		return fail(s, err);
	}
	free(capture_path);
	capture_path = copy;
	return CMD_OK;
}

static int cmd_undebug_capture(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	(void)a;
	pgm_vty_capture_stop();
	return CMD_OK;
}

static const struct cmd_def pgm_cmds[] = {
	{.spec = "clear ip pgm router",
		.help = "Reset functions\n" PGM_ROUTER_HELP,
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_all},
	{.spec = "clear ip pgm router traffic [IFNAME]",
		.help = "Reset functions\n" PGM_ROUTER_HELP "PGM packet counters\n" IFNAME_STR,
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_traffic},
	{.spec = "clear ip pgm router dlr [A.B.C.D$DLR]",
		.help = "Reset functions\n" PGM_ROUTER_HELP
			"Learned designated local repairers (NAKs go upstream again)\nDLR "
			"address\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_dlr},
	{.spec = "clear ip pgm router dlr X:X::X:X$DLR",
		.help = "Reset functions\n" PGM_ROUTER_HELP
			"Learned designated local repairers (NAKs go upstream again)\nIPv6 DLR "
			"address\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_dlr},
	{.spec = "clear ip pgm router rtx-state [A.B.C.D$GROUP]",
		.help = "Reset functions\n" PGM_ROUTER_HELP
			"Repair (re-send) state\nGroup address\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_rtx},
	{.spec = "clear ip pgm router rtx-state X:X::X:X$GROUP",
		.help = "Reset functions\n" PGM_ROUTER_HELP
			"Repair (re-send) state\nIPv6 group address\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_clear_rtx},
	{.spec = "debug ip pgm router capture WORD [max-size <1-4096>$mb]",
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
	settings_install(&pgm_module);
	cmd_install(pgm_cmds, CMD_COUNT(pgm_cmds));
	pgm_show_init();
}

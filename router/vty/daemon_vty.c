/*
 * The daemon's own commands: `show version`, and debugging switched per category
 * (router/lib/log.h) with the packet capture beside them (`show debugging`, `undebug all`).
 */
#include "router/vty/daemon_vty.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/command.h"
#include "cli/config.h"
#include "router/lib/event.h"
#include "router/lib/log.h"
#include "router/vty/pgm_vty.h"

#ifndef PGMROUTER_VERSION
#define PGMROUTER_VERSION "unknown"
#endif

static uint64_t started_us;

static int cmd_show_version(struct cmd_session *s, const struct cmd_args *a)
{
	uint64_t up = started_us != 0 ? (ev_time_now() - started_us) / 1000000u : 0;

	(void)a;
	cmd_out(s, "pgmrouter %s: PGM (RFC 3208) router assist for Linux\n", PGMROUTER_VERSION);
	cmd_out(s, "%s uptime is %llu days, %llu hours, %llu minutes\n", cmd_hostname(),
		(unsigned long long)(up / 86400), (unsigned long long)(up / 3600 % 24),
		(unsigned long long)(up / 60 % 60));
	cmd_out(s, "Startup configuration file: %s\n", cfg_startup_path());
	return CMD_OK;
}

/* ---- debugging ---- */

static const char *const category_keywords[LOG_CAT_COUNT] = {
	[LOG_CAT_PACKETS] = "packets",
	[LOG_CAT_EVENTS] = "events",
	[LOG_CAT_TIMERS] = "timers",
	[LOG_CAT_DATAPLANE] = "dataplane",
};

static void debug_set(const struct cmd_args *a, bool on)
{
	bool any = false;

	for (int c = 0; c < LOG_CAT_COUNT; c++)
		if (cmd_arg_has(a, category_keywords[c])) {
			log_debug_enable((enum log_category)c, on);
			any = true;
		}
	if (!any)
		for (int c = 0; c < LOG_CAT_COUNT; c++)
			log_debug_enable((enum log_category)c, on);
}

static int cmd_debug(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	debug_set(a, !a->negate);
	return CMD_OK;
}

static int cmd_undebug(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	debug_set(a, false);
	return CMD_OK;
}

static void all_off(void)
{
	for (int c = 0; c < LOG_CAT_COUNT; c++)
		log_debug_enable((enum log_category)c, false);
	pgm_vty_capture_stop();
}

static int cmd_debug_all(struct cmd_session *s, const struct cmd_args *a)
{
	if (a->negate)
		all_off();
	else
		for (int c = 0; c < LOG_CAT_COUNT; c++)
			log_debug_enable((enum log_category)c, true);
	if (!a->negate && !s->batch)
		cmd_out(s, "This may severely impact network performance. All possible debugging "
			   "has been turned on\n");
	else if (a->negate && !s->batch)
		cmd_out(s, "All possible debugging has been turned off\n");
	return CMD_OK;
}

static int cmd_undebug_all(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	all_off();
	if (!s->batch)
		cmd_out(s, "All possible debugging has been turned off\n");
	return CMD_OK;
}

static int cmd_show_debugging(struct cmd_session *s, const struct cmd_args *a)
{
	const char *path;

	(void)a;
	cmd_out(s, "PGM router debugging status:\n");
	for (int c = 0; c < LOG_CAT_COUNT; c++)
		if (log_debug_enabled((enum log_category)c))
			cmd_out(s, "  PGM router %s debugging is on\n",
				log_category_name((enum log_category)c));
	if ((path = pgm_vty_capture_path()) != NULL)
		cmd_out(s, "  PGM router packet capture to %s is on\n", path);
	return CMD_OK;
}

/* ---- show logging: the log ring (router/lib/log.h) ---- */

static int cmd_show_logging(struct cmd_session *s, const struct cmd_args *a)
{
	size_t held = log_ring_held(), last = (size_t)cmd_arg_int(a, "LINES", LOG_RING_LINES);
	size_t first = held > last ? held - last : 0;
	bool json = cmd_arg_has(a, "json");
	struct json_object *o = NULL, *lines = NULL;
	struct cfg_buf b = {0};
	struct log_line l;

	if (json) {
		o = json_object_new_object();
		lines = json_object_new_array();
		json_object_object_add(o, "size", json_object_new_int(LOG_RING_LINES));
		json_object_object_add(o, "held", json_object_new_uint64(held));
		json_object_object_add(o, "logged", json_object_new_uint64(log_ring_logged()));
	} else {
		cfg_printf(&b, "Log buffer: %d lines, %zu held, %llu logged since start\n",
			LOG_RING_LINES, held, log_ring_logged());
	}
	for (size_t i = first; log_ring_line(i, &l); i++) {
		char stamp[40];
		struct tm tm;

		if (json) {
			struct json_object *x = json_object_new_object();

			gmtime_r(&l.when.tv_sec, &tm);
			strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
			snprintf(stamp + strlen(stamp), sizeof(stamp) - strlen(stamp), ".%03ldZ",
				l.when.tv_nsec / 1000000);
			json_object_object_add(x, "time", json_object_new_string(stamp));
			json_object_object_add(x, "priority",
				json_object_new_string(log_priority_name(l.priority)));
			json_object_object_add(x, "text", json_object_new_string(l.text));
			json_object_array_add(lines, x);
		} else {
			localtime_r(&l.when.tv_sec, &tm);
			strftime(stamp, sizeof(stamp), "%b %e %H:%M:%S", &tm);
			cfg_printf(&b, "%s.%03ld %s: %s\n", stamp, l.when.tv_nsec / 1000000,
				log_priority_name(l.priority), l.text);
		}
	}
	if (json) {
		json_object_object_add(o, "lines", lines);
		cfg_printf(&b, "%s\n",
			json_object_to_json_string_ext(
				o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	}
	if (b.failed) {
		cfg_buf_free(&b);
		cmd_out(s, "%% out of memory\n");
		return CMD_ERR_FAILED;
	}
	return cmd_out_stream(s, b.data, b.len);
}

#define DEBUG_CATEGORIES_SPEC "[(packets|events|timers|dataplane)]"
#define DEBUG_CATEGORIES_HELP                                                                      \
	"PGM packets received and sent\n"                                                          \
	"Session and repair state events, configuration changes\n"                                 \
	"Timer expiries\n"                                                                         \
	"Netfilter queue data plane\n"

static const struct cmd_def daemon_cmds[] = {
	{.spec = "show version",
		.help = SHOW_STR "System hardware and software status\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_version},
	{.spec = "show debugging",
		.help = SHOW_STR "State of each debugging option\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_debugging},
	{.spec = "show logging [last <1-256>$LINES] [json]",
		.help = SHOW_STR "The daemon's recent log lines, kept in memory\n"
				 "Only the last lines\nHow many\nJSON output\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_logging},
	{.spec = "debug ip pgm router " DEBUG_CATEGORIES_SPEC,
		.help = DEBUG_STR IP_STR PGM_STR ROUTER_ASSIST_STR DEBUG_CATEGORIES_HELP,
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_debug,
		.no_spec = CMD_NO_SAME},
	{.spec = "undebug ip pgm router " DEBUG_CATEGORIES_SPEC,
		.help = UNDEBUG_STR IP_STR PGM_STR ROUTER_ASSIST_STR DEBUG_CATEGORIES_HELP,
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_undebug},
	{.spec = "debug all",
		.help = DEBUG_STR "Enable all debugging\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_debug_all,
		.no_spec = CMD_NO_SAME},
	{.spec = "undebug all",
		.help = UNDEBUG_STR "Disable all debugging\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_undebug_all},
};

void daemon_vty_init(uint64_t started)
{
	started_us = started;
	cmd_install(daemon_cmds, CMD_COUNT(daemon_cmds));
}

/*
 * The generic commands every session has: modes, hostname, interfaces, terminal settings,
 * history, the configuration files, debugging switches.
 */
#include "cli/generic_vty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/config.h"
#include "router/daemon.h"
#include "router/lib/event.h"
#include "router/lib/log.h"

#define CONFIG_FILE_MAX (64u << 20) /* show startup-config reads at most this much */

/* ---- modes ---- */

static int cmd_enable(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	if (s->read_only) {
		cmd_out(s, "%% Access denied: read-only session (group %s).\n", pgmrouterd.group);
		return CMD_ERR_DENIED;
	}
	cmd_enter_node(s, CMD_NODE_ENABLE);
	return CMD_OK;
}

static int cmd_disable(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	cmd_enter_node(s, CMD_NODE_EXEC);
	return CMD_OK;
}

static int cmd_configure(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	if (!s->batch)
		cmd_out(s, "Enter configuration commands, one per line.  End with CNTL/Z.\n");
	cmd_enter_node(s, CMD_NODE_CONFIG);
	return CMD_OK;
}

static int cmd_exit(struct cmd_session *s, const struct cmd_args *a)
{
	const struct cmd_node_def *n = cmd_node_get(s->node);

	(void)a;
	if (n == NULL || n->parent < 0)
		return CMD_CLOSE;
	if (s->node == CMD_NODE_CONFIG_IF)
		s->ifname[0] = '\0';
	cmd_enter_node(s, n->parent);
	return CMD_OK;
}

static int cmd_quit(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	(void)a;
	return CMD_CLOSE;
}

static int cmd_end(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	s->ifname[0] = '\0';
	cmd_enter_node(s, CMD_NODE_ENABLE);
	return CMD_OK;
}

/* ---- hostname ---- */

static bool hostname_seen; /* set again by the file being reloaded */

static bool valid_hostname(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= CMD_HOSTNAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

static int cmd_hostname_set(struct cmd_session *s, const struct cmd_args *a)
{
	const char *name = cmd_arg(a, "WORD");

	if (a->negate) {
		cmd_set_hostname(NULL);
		return CMD_OK;
	}
	if (!valid_hostname(name)) {
		cmd_out(s,
			"%% Invalid hostname \"%s\": letters, digits, '-', '_' and '.' only, "
			"at most %d characters\n",
			name, CMD_HOSTNAME_MAX - 1);
		return CMD_ERR_FAILED;
	}
	cmd_set_hostname(name);
	hostname_seen = true; /* a reload keeps it */
	return CMD_OK;
}

static void write_hostname(struct cfg_buf *b)
{
	if (!cmd_hostname_is_default())
		cfg_printf(b, "hostname %s\n", cmd_hostname());
}

static void hostname_reload_begin(void)
{
	hostname_seen = false;
}

static void hostname_reload_end(void)
{
	if (!hostname_seen)
		cmd_set_hostname(NULL);
}

/* ---- interfaces ---- */

struct if_description {
	char ifname[CMD_IFNAME_MAX];
	char *text;
	bool stale;
};

static struct if_description *descriptions;
static size_t ndescriptions, descriptions_cap;

/* Sorted by name: a config with thousands of interfaces stays fast. */
static size_t description_slot(const char *ifname, bool *found)
{
	size_t lo = 0, hi = ndescriptions;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(descriptions[mid].ifname, ifname);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static struct if_description *description_find(const char *ifname)
{
	bool found;
	size_t at = description_slot(ifname, &found);

	return found ? &descriptions[at] : NULL;
}

static void description_remove(const char *ifname)
{
	bool found;
	size_t at = description_slot(ifname, &found);

	if (!found)
		return;
	free(descriptions[at].text);
	memmove(&descriptions[at], &descriptions[at + 1],
		(ndescriptions - at - 1) * sizeof(*descriptions));
	ndescriptions--;
}

static int cmd_interface(struct cmd_session *s, const struct cmd_args *a)
{
	const char *name = cmd_arg(a, "IFNAME");

	if (a->negate) {
		if (!cfg_interface_exists(name)) {
			cmd_out(s, "%% Interface %s is not configured\n", name);
			return CMD_ERR_FAILED;
		}
		cfg_interface_del(name);
		return CMD_OK;
	}
	if (cfg_interface_add(name) < 0) {
		cmd_out(s, "%% Out of memory\n");
		return CMD_ERR_FAILED;
	}
	snprintf(s->ifname, sizeof(s->ifname), "%s", name);
	cmd_enter_node(s, CMD_NODE_CONFIG_IF);
	return CMD_OK;
}

static int cmd_description(struct cmd_session *s, const struct cmd_args *a)
{
	struct if_description *d = description_find(s->ifname);
	const char *text = cmd_arg(a, "LINE");
	char *copy;

	if (a->negate) {
		description_remove(s->ifname);
		return CMD_OK;
	}
	/* the interface may have been removed under the session (a reload, another session) */
	if (!cfg_interface_exists(s->ifname) && cfg_interface_add(s->ifname) < 0)
		return CMD_ERR_FAILED;
	if (strlen(text) > 240) {
		cmd_out(s, "%% Description too long (at most 240 characters)\n");
		return CMD_ERR_FAILED;
	}
	if ((copy = strdup(text)) == NULL)
		return CMD_ERR_FAILED;
	if (d == NULL) {
		bool found;
		size_t at;

		if (ndescriptions == descriptions_cap) {
			/* doubling: a config of thousands of interfaces must not copy the table
			   once per line */
			size_t cap = descriptions_cap ? descriptions_cap * 2 : 16;
			struct if_description *v = realloc(descriptions, cap * sizeof(*v));

			if (v == NULL) {
				free(copy);
				return CMD_ERR_FAILED;
			}
			descriptions = v;
			descriptions_cap = cap;
		}
		at = description_slot(s->ifname, &found);
		memmove(&descriptions[at + 1], &descriptions[at],
			(ndescriptions - at) * sizeof(*descriptions));
		ndescriptions++;
		d = &descriptions[at];
		memset(d, 0, sizeof(*d));
		snprintf(d->ifname, sizeof(d->ifname), "%s", s->ifname);
	}
	free(d->text);
	d->text = copy;
	d->stale = false;
	return CMD_OK;
}

static void write_description(struct cfg_buf *b, const char *ifname)
{
	const struct if_description *d = description_find(ifname);

	if (d != NULL)
		cfg_printf(b, " description %s\n", d->text);
}

static void descriptions_reload_begin(void)
{
	for (size_t i = 0; i < ndescriptions; i++)
		descriptions[i].stale = true;
}

static void descriptions_reload_end(void)
{
	for (size_t i = ndescriptions; i > 0; i--)
		if (descriptions[i - 1].stale) {
			char name[CMD_IFNAME_MAX];

			memcpy(name, descriptions[i - 1].ifname, sizeof(name));
			description_remove(name);
		}
}

/* ---- terminal ---- */

static int cmd_terminal_length(struct cmd_session *s, const struct cmd_args *a)
{
	s->term_length = (uint32_t)cmd_arg_int(a, "<0-512>", 0);
	return CMD_OK;
}

static int cmd_terminal_no_length(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	s->term_length = CMD_TERM_LENGTH_UNSET;
	return CMD_OK;
}

static int cmd_terminal_monitor(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	s->monitor = true;
	return CMD_OK;
}

static int cmd_terminal_no_monitor(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	s->monitor = false;
	return CMD_OK;
}

/* ---- show ---- */

static int cmd_show_version(struct cmd_session *s, const struct cmd_args *a)
{
	uint64_t up =
		pgmrouterd.started_us != 0 ? (ev_time_now() - pgmrouterd.started_us) / 1000000u : 0;

	(void)a;
	cmd_out(s, "pgmrouter %s: PGM (RFC 3208) router assist for Linux\n", PGMROUTER_VERSION);
	cmd_out(s, "%s uptime is %llu days, %llu hours, %llu minutes\n", cmd_hostname(),
		(unsigned long long)(up / 86400), (unsigned long long)(up / 3600 % 24),
		(unsigned long long)(up / 60 % 60));
	cmd_out(s, "Startup configuration file: %s\n", cfg_startup_path());
	return CMD_OK;
}

static int cmd_show_history(struct cmd_session *s, const struct cmd_args *a)
{
	unsigned n = s->history_count < CMD_HISTORY_SIZE ? s->history_count : CMD_HISTORY_SIZE;

	(void)a;
	for (unsigned i = s->history_count - n; i < s->history_count; i++)
		cmd_out(s, "  %s\n", s->history[i % CMD_HISTORY_SIZE]);
	return CMD_OK;
}

static int cmd_show_running(struct cmd_session *s, const struct cmd_args *a)
{
	struct cfg_buf b = {0};

	(void)a;
	cfg_printf(&b, "Building configuration...\n\nCurrent configuration:\n");
	cfg_running(&b);
	if (b.failed) {
		cfg_buf_free(&b);
		cmd_out(s, "%% Out of memory\n");
		return CMD_ERR_FAILED;
	}
	return cmd_out_stream(s, b.data, b.len);
}

static int cmd_show_startup(struct cmd_session *s, const struct cmd_args *a)
{
	const char *path = cfg_startup_path();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *text;
	size_t off = 0;

	(void)a;
	if (fd < 0) {
		if (errno == ENOENT)
			cmd_out(s, "%% Startup configuration %s is not present\n", path);
		else
			cmd_out(s, "%% Cannot read %s: %s\n", path, strerror(errno));
		return CMD_ERR_FAILED;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > CONFIG_FILE_MAX) {
		close(fd);
		cmd_out(s, "%% %s is not a regular file of at most %u MB\n", path,
			CONFIG_FILE_MAX >> 20);
		return CMD_ERR_FAILED;
	}
	if ((text = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return CMD_ERR_FAILED;
	}
	while (off < (size_t)st.st_size) {
		ssize_t r = read(fd, text + off, (size_t)st.st_size - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	return cmd_out_stream(s, text, off);
}

static int save_running(struct cmd_session *s)
{
	struct cfg_buf b = {0};
	int rc = CMD_OK;

	cfg_running(&b);
	cmd_out(s, "Building configuration...\n");
	if (b.failed || cfg_write_file(cfg_startup_path(), b.data, b.len) < 0) {
		cmd_out(s, "%% Cannot write %s: %s\n", cfg_startup_path(),
			b.failed ? "out of memory" : strerror(errno));
		rc = CMD_ERR_FAILED;
	} else {
		cmd_out(s, "[OK]\n");
		log_info("configuration saved to %s", cfg_startup_path());
	}
	cfg_buf_free(&b);
	return rc;
}

static int cmd_copy_run_start(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	return save_running(s);
}

static int cmd_write_config(struct cmd_session *s, const struct cmd_args *a)
{
	if (cmd_arg_has(a, "terminal"))
		return cmd_show_running(s, a);
	return save_running(s);
}

/* ---- debugging ---- */

static const char *const category_keywords[LOG_CAT_COUNT] = {
	[LOG_CAT_PACKETS] = "packets",
	[LOG_CAT_EVENTS] = "events",
	[LOG_CAT_TIMERS] = "timers",
	[LOG_CAT_DATAPLANE] = "dataplane",
};

static void (*other_debug_off)(void);
static void (*other_debug_show)(struct cmd_session *s);

void generic_vty_debug_register(void (*all_off)(void), void (*show)(struct cmd_session *s))
{
	other_debug_off = all_off;
	other_debug_show = show;
}

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

static int cmd_debug_all(struct cmd_session *s, const struct cmd_args *a)
{
	(void)s;
	for (int c = 0; c < LOG_CAT_COUNT; c++)
		log_debug_enable((enum log_category)c, !a->negate);
	if (a->negate && other_debug_off != NULL)
		other_debug_off();
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
	for (int c = 0; c < LOG_CAT_COUNT; c++)
		log_debug_enable((enum log_category)c, false);
	if (other_debug_off != NULL)
		other_debug_off();
	if (!s->batch)
		cmd_out(s, "All possible debugging has been turned off\n");
	return CMD_OK;
}

static int cmd_show_debugging(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	cmd_out(s, "PGM router debugging status:\n");
	for (int c = 0; c < LOG_CAT_COUNT; c++)
		if (log_debug_enabled((enum log_category)c))
			cmd_out(s, "  PGM router %s debugging is on\n",
				log_category_name((enum log_category)c));
	if (other_debug_show != NULL)
		other_debug_show(s);
	return CMD_OK;
}

#define DEBUG_CATEGORIES_SPEC "[(packets|events|timers|dataplane)]"
#define DEBUG_CATEGORIES_HELP                                                                      \
	"PGM packets received and sent\n"                                                          \
	"Session and repair state events, configuration changes\n"                                 \
	"Timer expiries\n"                                                                         \
	"Netfilter queue data plane\n"

#define MODES_ALL                                                                                  \
	(CMD_MODE(CMD_NODE_EXEC) | CMD_MODE(CMD_NODE_ENABLE) | CMD_MODE(CMD_NODE_CONFIG) |         \
		CMD_MODE(CMD_NODE_CONFIG_IF))

static const struct cmd_def generic_cmds[] = {
	{.spec = "enable", /* accepted in privileged mode too, as IOS does: scripts start with it */
		.help = "Turn on privileged commands\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_enable},
	{.spec = "disable",
		.help = "Turn off privileged commands\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.handler = cmd_disable},
	{.spec = "configure [terminal]",
		.help = "Enter configuration mode\nConfigure from the terminal\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_configure},
	{.spec = "exit",
		.help = "Exit from the current mode (or the session)\n",
		.modes = MODES_ALL,
		.handler = cmd_exit},
	{.spec = "quit",
		.help = "Exit from the session\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_quit},
	{.spec = "logout",
		.help = "Exit from the session\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_quit},
	{.spec = "end",
		.help = "Exit to privileged mode (Ctrl-Z)\n",
		.modes = CMD_MODES_CONFIG_ALL,
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_end},
	{.spec = "hostname WORD",
		.help = "Set the system's network name\nThis system's network name\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_hostname_set,
		.no_spec = "hostname [WORD]",
		.no_help = "Set the system's network name\nThis system's network name\n"},
	{.spec = "interface IFNAME",
		.help = "Select an interface to configure\n" IFNAME_STR,
		.modes = CMD_MODES_CONFIG_ALL,
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_interface,
		.no_spec = CMD_NO_SAME},
	{.spec = "description LINE",
		.help = "Interface specific description\nUp to 240 characters describing this "
			"interface\n",
		.modes = CMD_MODE(CMD_NODE_CONFIG_IF),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_description,
		.no_spec = "description [LINE]",
		.no_help = "Interface specific description\nUp to 240 characters describing this "
			   "interface\n"},
	{.spec = "terminal length <0-512>",
		.help = TERMINAL_STR "Set number of lines on a screen\n"
				     "Number of lines on screen (0 for no pausing)\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_terminal_length},
	{.spec = "terminal no length",
		.help = TERMINAL_STR NO_STR "Set number of lines on a screen\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_terminal_no_length},
	{.spec = "terminal monitor",
		.help = TERMINAL_STR "Copy debug output to the current terminal line\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_terminal_monitor},
	{.spec = "terminal no monitor",
		.help = TERMINAL_STR NO_STR "Copy debug output to the current terminal line\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_terminal_no_monitor},
	{.spec = "show version",
		.help = SHOW_STR "System hardware and software status\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_version},
	{.spec = "show history",
		.help = SHOW_STR "Display the session command history\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_history},
	{.spec = "show running-config",
		.help = SHOW_STR "Current operating configuration\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_running},
	{.spec = "show startup-config",
		.help = SHOW_STR "Contents of startup configuration\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_startup},
	{.spec = "show debugging",
		.help = SHOW_STR "State of each debugging option\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_debugging},
	{.spec = "copy running-config startup-config",
		.help = "Copy from one file to another\n"
			"Copy from current system configuration\n"
			"Copy to startup configuration\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_copy_run_start},
	{.spec = "write [(memory|terminal)]",
		.help = "Write running configuration to memory or terminal\n"
			"Write to the startup configuration\n"
			"Write to terminal\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_write_config},
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

void generic_vty_init(void)
{
	cmd_install(generic_cmds, CMD_COUNT(generic_cmds));
	cfg_register_writer(CFG_ORDER_HOSTNAME, write_hostname);
	cfg_register_interface_writer(0, write_description);
	cfg_register_interface_delete_hook(description_remove);
	cfg_register_reload_hooks(hostname_reload_begin, hostname_reload_end);
	cfg_register_reload_hooks(descriptions_reload_begin, descriptions_reload_end);
}

void generic_vty_free(void)
{
	for (size_t i = 0; i < ndescriptions; i++)
		free(descriptions[i].text);
	free(descriptions);
	descriptions = NULL;
	descriptions_cap = 0;
	ndescriptions = 0;
}

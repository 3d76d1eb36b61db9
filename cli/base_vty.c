/*
 * The engine's own commands, which every session has: modes, hostname, interfaces and their
 * descriptions, terminal settings, history, and the configuration files.
 */
#include "cli/base_vty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/config.h"

#define CONFIG_FILE_MAX (64u << 20) /* show startup-config reads at most this much */

static const char *readonly_group = "pgmrouter";

/* ---- modes ---- */

static int cmd_enable(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	if (s->read_only) {
		cmd_out(s, "%% Access denied: read-only session (group %s).\n", readonly_group);
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

/* ---- configuration: hostname, interfaces, descriptions ---- */

static int edit_failed(struct cmd_session *s)
{
	cmd_out(s, "%% Out of memory\n");
	return CMD_ERR_FAILED;
}

static int cmd_hostname_set(struct cmd_session *s, const struct cmd_args *a)
{
	struct cfg *c = cfg_edit(s);
	char err[256];

	if (c == NULL)
		return edit_failed(s);
	if (cfg_set_hostname(c, a->negate ? NULL : cmd_arg(a, "WORD"), err, sizeof(err)) < 0) {
		cmd_out(s, "%% %s\n", err);
		return CMD_ERR_FAILED;
	}
	return CMD_OK;
}

static int cmd_interface(struct cmd_session *s, const struct cmd_args *a)
{
	const char *name = cmd_arg(a, "IFNAME");
	struct cfg *c = cfg_edit(s);

	if (c == NULL)
		return edit_failed(s);
	if (a->negate) {
		if (!cfg_if_exists(c, name)) {
			cmd_out(s, "%% Interface %s is not configured\n", name);
			return CMD_ERR_FAILED;
		}
		cfg_if_del(c, name);
		return CMD_OK;
	}
	if (cfg_if_add(c, name) < 0)
		return edit_failed(s);
	snprintf(s->ifname, sizeof(s->ifname), "%s", name);
	cmd_enter_node(s, CMD_NODE_CONFIG_IF);
	return CMD_OK;
}

static int cmd_description(struct cmd_session *s, const struct cmd_args *a)
{
	const char *text = a->negate ? NULL : cmd_arg(a, "LINE");
	struct cfg *c = cfg_edit(s);

	if (c == NULL)
		return edit_failed(s);
	if (text != NULL && strlen(text) > CFG_DESCRIPTION_MAX) {
		cmd_out(s, "%% Description too long (at most %d characters)\n",
			CFG_DESCRIPTION_MAX);
		return CMD_ERR_FAILED;
	}
	/* the interface may have been removed under the session (a reload, another session):
	   setting a description names it again */
	if (text == NULL && !cfg_if_exists(c, s->ifname))
		return CMD_OK;
	if (cfg_if_set_description(c, s->ifname, text) < 0)
		return edit_failed(s);
	return CMD_OK;
}

/* ---- terminal ---- */

static int cmd_terminal_length(struct cmd_session *s, const struct cmd_args *a)
{
	s->term_length = (uint32_t)cmd_arg_int(a, "lines", 0);
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
	cfg_write(cfg_running(), &b);
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
	int fd = cfg_open_regular(path, O_RDONLY, 0); /* a FIFO there must not hold the daemon */
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

	cfg_write(cfg_running(), &b);
	cmd_out(s, "Building configuration...\n");
	if (b.failed || cfg_write_file(cfg_startup_path(), b.data, b.len) < 0) {
		cmd_out(s, "%% Cannot write %s: %s\n", cfg_startup_path(),
			b.failed ? "out of memory" : strerror(errno));
		rc = CMD_ERR_FAILED;
	} else {
		cmd_out(s, "[OK]\n");
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

static void report_to_session(void *ctx, const char *message)
{
	cmd_out(ctx, "%% %s\n", message);
}

/* IOS merges; here the file replaces the running configuration, as a reload does. */
static int cmd_copy_start_run(struct cmd_session *s, const struct cmd_args *a)
{
	int bad;

	(void)a;
	bad = cfg_reload_file(cfg_startup_path(), report_to_session, s);
	if (bad < 0) {
		cmd_out(s, "%% Cannot read %s: %s\n", cfg_startup_path(), strerror(errno));
		return CMD_ERR_FAILED;
	}
	return bad == 0 ? CMD_OK : CMD_ERR_FAILED;
}

#define MODES_ALL                                                                                  \
	(CMD_MODE(CMD_NODE_EXEC) | CMD_MODE(CMD_NODE_ENABLE) | CMD_MODE(CMD_NODE_CONFIG) |         \
		CMD_MODE(CMD_NODE_CONFIG_IF))

static const struct cmd_def base_cmds[] = {
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
	{.spec = "terminal length <0-512>$lines",
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
	{.spec = "copy running-config startup-config",
		.help = "Copy from one file to another\n"
			"Copy from current system configuration\n"
			"Copy to startup configuration\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_copy_run_start},
	{.spec = "copy startup-config running-config",
		.help = "Copy from one file to another\n"
			"Copy from startup configuration\n"
			"Copy to current system configuration (replacing it)\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_copy_start_run},
	{.spec = "write [(memory|terminal)]",
		.help = "Write running configuration to memory or terminal\n"
			"Write to the startup configuration\n"
			"Write to terminal\n",
		.modes = CMD_MODE(CMD_NODE_ENABLE),
		.priv = CMD_PRIV_ADMIN,
		.handler = cmd_write_config},
};

void base_vty_init(const char *group)
{
	readonly_group = group;
	cmd_install(base_cmds, CMD_COUNT(base_cmds));
}

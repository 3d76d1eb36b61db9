/*
 * The command engine: one command tree in the daemon that executes lines, answers `?` and
 * completes words, for the control socket, the startup config and the tests alike.
 *
 * Modules declare their commands in a table (FRR's DEFUN in data form):
 *
 *	static const struct cmd_def pgm_cmds[] = {
 *		{ .spec = "show ip pgm router traffic [IFNAME] [json]",
 *		  .help = SHOW_STR IP_STR "PGM\n" "PGM router assist\n" "Traffic counters\n"
 *			  "Interface name\n" "JSON output\n",
 *		  .modes = CMD_MODES_SHOW, .priv = CMD_PRIV_READ, .handler = show_traffic },
 *		{ .spec = "ip pgm router", .help = ..., .modes = CMD_MODE(CMD_NODE_CONFIG_IF),
 *		  .priv = CMD_PRIV_ADMIN, .handler = ip_pgm_router, .no_spec = CMD_NO_SAME },
 *	};
 *	cmd_install(pgm_cmds, CMD_COUNT(pgm_cmds));
 *
 * Spec tokens, separated by spaces:
 *	keyword		matched case-insensitively, abbreviations allowed
 *	WORD		any word
 *	IFNAME		an interface name (1-15 characters, no '/', ':' or blanks, not . or ..)
 *	A.B.C.D		an IPv4 address
 *	<lo-hi>		a decimal integer in [lo, hi]
 *	LINE		the rest of the line, blanks included (last token only)
 *	[x y]		optional sequence; [a|b] optional alternatives
 *	(a|b)		one of the alternatives
 * A variable can be named with a `$name` suffix (`A.B.C.D$source`); its name is otherwise its
 * text. `help` has one newline-terminated line per keyword or variable, in spec order.
 *
 * Matching (FRR's rules), word by word: among the tokens every still-possible command offers for
 * a word, only the best kind of match survives: exact keyword > address or number > keyword
 * abbreviation > interface name > free word > rest of line. A word that abbreviates two
 * different keywords is ambiguous; a word nothing accepts is invalid input (the caret points at
 * it); running out of words before a command is complete is an incomplete command.
 */
#ifndef PGMROUTER_CLI_COMMAND_H
#define PGMROUTER_CLI_COMMAND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nodes (modes). */
enum cmd_node_id {
	CMD_NODE_EXEC = 0,  /* host> */
	CMD_NODE_ENABLE,    /* host# */
	CMD_NODE_CONFIG,    /* host(config)# */
	CMD_NODE_CONFIG_IF, /* host(config-if)# */
	CMD_NODE_FILTER,    /* internal: the output filters after `|` */
	CMD_NODE_BUILTIN_COUNT
};
#define CMD_MODE(n)	     (1u << (n))
#define CMD_MODES_SHOW	     (CMD_MODE(CMD_NODE_EXEC) | CMD_MODE(CMD_NODE_ENABLE))
#define CMD_MODES_CONFIG_ALL (CMD_MODE(CMD_NODE_CONFIG) | CMD_MODE(CMD_NODE_CONFIG_IF))

struct cmd_node_def {
	const char *name;	   /* "config-if", for messages */
	const char *prompt_suffix; /* appended to the hostname: "(config-if)#" */
	int parent;		   /* where `exit` goes; -1: `exit` ends the session */
	bool config;		   /* configuration node: `do`, `end`, fallback to the parent */
};
const struct cmd_node_def *cmd_node_get(int node);

/* Frequently used help lines. */
#define SHOW_STR	  "Show running system information\n"
#define NO_STR		  "Negate a command or set its defaults\n"
#define DEFAULT_STR	  "Set a command to its defaults\n"
#define IP_STR		  "IP information\n"
#define PGM_STR		  "Pragmatic General Multicast (PGM)\n"
#define ROUTER_ASSIST_STR "PGM router assist\n"
#define DEBUG_STR	  "Debugging functions\n"
#define UNDEBUG_STR	  "Disable debugging functions (see also 'debug')\n"
#define IFNAME_STR	  "Interface name\n"
#define TERMINAL_STR	  "Set terminal line parameters\n"

enum cmd_priv {
	CMD_PRIV_READ = 0, /* allowed to read-only sessions (group pgmrouter) */
	CMD_PRIV_ADMIN,	   /* root only */
};

/* Command status; the control protocol carries these values unchanged. */
enum cmd_status {
	CMD_OK = 0,
	CMD_ERR_AMBIGUOUS = 1,
	CMD_ERR_INCOMPLETE = 2,
	CMD_ERR_INVALID = 3,
	CMD_ERR_FAILED = 4,   /* the command ran and reported an error */
	CMD_ERR_DENIED = 5,   /* not allowed to this session */
	CMD_ERR_TOO_LONG = 6, /* line longer than CMD_LINE_MAX */
	CMD_ERR_PROTOCOL = 7, /* malformed request (control socket only) */
	CMD_CLOSE = 8,	      /* the session ends (exit, quit) */
	CMD_MORE = 9,	      /* internal: a continuation produces more output */
	CMD_STATUS_COUNT
};
const char *cmd_status_name(int status);

#define CMD_LINE_MAX	      4096 /* longest command line, in bytes */
#define CMD_MAX_TOKENS	      32   /* tokens in one command spec */
#define CMD_HISTORY_SIZE      20   /* lines kept for `show history` */
#define CMD_HOSTNAME_MAX      64   /* hostname length including NUL */
#define CMD_IFNAME_MAX	      16   /* IFNAMSIZ */
#define CMD_TERM_LENGTH_UNSET UINT32_MAX

struct cmd_session;
struct cfg;

struct cmd_arg {
	const char *name;  /* variable name or keyword text */
	const char *value; /* the word as typed (for LINE: the rest of the line) */
	bool keyword;
};

struct cmd_args {
	bool negate; /* the `no` form */
	int argc;
	struct cmd_arg argv[CMD_MAX_TOKENS];
	const struct cmd_def *def;
	const void *compiled; /* the command as compiled, to check the names asked for */
};
/* The value of the variable called `name`, or for a keyword its text; NULL when not given. A
   name the command's spec does not have is a programming error (cmd_panic): an argument is
   never silently missing because its name drifted from the spec. */
const char *cmd_arg(const struct cmd_args *a, const char *name);
bool cmd_arg_has(const struct cmd_args *a, const char *name);
/* A <lo-hi> value (already range-checked by the matcher); `dflt` when not given. */
long long cmd_arg_int(const struct cmd_args *a, const char *name, long long dflt);

typedef int (*cmd_handler_fn)(struct cmd_session *s, const struct cmd_args *a);

#define CMD_NO_SAME  ((const char *)1) /* `no` form with the same tokens and help */
#define CMD_F_HIDDEN 0x1	       /* not listed by `?` nor completed */

struct cmd_def {
	const char *spec;
	const char *help;
	uint32_t modes; /* CMD_MODE() bits */
	enum cmd_priv priv;
	cmd_handler_fn handler;
	/* The `no` form: the tokens after `no` (CMD_NO_SAME: as spec) and their help lines (NULL
	   with CMD_NO_SAME: the spec's help). NULL: the command has no `no` form. */
	const char *no_spec;
	const char *no_help;
	unsigned flags;
	/* for the handler, as a->def->data (the settings' generic handler: its row) */
	const void *data;
};
#define CMD_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* Installs a module's table; a malformed spec is a programming error and fatalx()s. The table
   must outlive the engine (static storage). */
void cmd_install(const struct cmd_def *defs, size_t count);
/* Installs the engine's own tables (the output filters); call once before anything else. */
void cmd_engine_init(void);
/* Frees the compiled tree (tests and clean shutdown). */
void cmd_engine_free(void);

/* ---- sessions ---- */

typedef void (*cmd_write_fn)(struct cmd_session *s, const char *data, size_t len);
typedef int (*cmd_cont_fn)(struct cmd_session *s, void *arg); /* CMD_MORE or a final status */

struct cmd_error {
	int status;    /* CMD_ERR_* of the last line, CMD_OK when it ran */
	size_t offset; /* invalid input: byte offset of the bad word in the line */
	char word[64]; /* invalid input: the bad word (truncated) */
};

/* `| begin|include|exclude PATTERN`: the engine parses it, the transport applies it where the
   output is read (the client, cli/filter.h), so the daemon never runs a regular expression. */
enum cmd_filter_kind { CMD_FILTER_BEGIN, CMD_FILTER_INCLUDE, CMD_FILTER_EXCLUDE };
/* Called before the command runs; returns CMD_OK, or a status after printing why not. */
typedef int (*cmd_filter_fn)(struct cmd_session *s, enum cmd_filter_kind kind, const char *pattern);

struct cmd_session {
	int node;
	char ifname[CMD_IFNAME_MAX]; /* CONFIG_IF context */
	bool read_only;		     /* group pgmrouter: CMD_PRIV_READ commands only */
	bool batch;		     /* startup config: errors are recorded, not printed */
	bool check_only;	     /* a configuration check: `do` commands are parsed, not run */
	bool monitor;		     /* terminal monitor */
	bool echo_on_error;	     /* line mode: echo prompt and line before a parse error */
	uint32_t term_length;	     /* CMD_TERM_LENGTH_UNSET: the client's terminal rows */
	unsigned id;		     /* for `show users` */
	unsigned uid;
	struct cmd_error last_error;

	char *history[CMD_HISTORY_SIZE];
	unsigned history_count; /* total lines ever added */

	cmd_write_fn write;
	cmd_filter_fn filter; /* NULL: output filters are refused */
	void *owner; /* the transport's context (vty session, driver, config loader) */

	/* the configuration being edited (cli/config.h): a copy of the running one for the
	   command being run, or, edit_held, a candidate its loader owns */
	struct cfg *edit;
	bool edit_held;

	/* running command */
	cmd_cont_fn cont;
	void *cont_arg;
	void (*cont_free)(void *arg);
	int cont_status; /* worst status seen while the continuation ran */
};

void cmd_session_init(struct cmd_session *s, int node, cmd_write_fn write, void *owner);
void cmd_session_release(struct cmd_session *s); /* frees history and continuation */

/* The prompt for the session's current mode: "host>", "host(config-if)#". */
size_t cmd_prompt(const struct cmd_session *s, char *buf, size_t len);

/* Executes one line. Returns a cmd_status; CMD_MORE means the command set a continuation:
   call cmd_continue() (when the transport can take more output) until it returns another
   status. Errors are printed IOS style (caret under the echoed line) unless s->batch. */
int cmd_execute(struct cmd_session *s, const char *line);
int cmd_continue(struct cmd_session *s);
void cmd_abort(struct cmd_session *s); /* drops a running continuation (session gone) */

/* `?`: prints the help for the next word (line ends in a blank or is empty) or the words the
   last, partial word can become. Returns a cmd_status. */
int cmd_describe(struct cmd_session *s, const char *line);
/* TAB: calls `fn` for each keyword the last word of `line` can be completed to. */
typedef void (*cmd_complete_fn)(void *ctx, const char *word);
int cmd_complete(struct cmd_session *s, const char *line, cmd_complete_fn fn, void *ctx);

/* Output from handlers. */
void cmd_out(struct cmd_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmd_vout(struct cmd_session *s, const char *fmt, va_list ap);
void cmd_write(struct cmd_session *s, const char *data, size_t len);

/* Handlers that produce long output set a continuation and return CMD_MORE; it is called
   again whenever the transport has room, until it returns a final status. */
void cmd_set_continuation(
	struct cmd_session *s, cmd_cont_fn fn, void *arg, void (*free_fn)(void *));

/* Streams `text` (malloc'ed, taken over) as the command's output in pieces; returns CMD_MORE
   for the handler to return. */
int cmd_out_stream(struct cmd_session *s, char *text, size_t len);

/* Mode changes for handlers. */
void cmd_enter_node(struct cmd_session *s, int node);

/* History for `show history`. */
void cmd_history_add(struct cmd_session *s, const char *line);

/* The hostname shown in prompts: the configured one (set by cfg_commit), else the system's. */
const char *cmd_hostname(void);
void cmd_set_hostname(const char *name); /* NULL: back to the system's name */
/* The name used when none is configured (tests: a fixed name instead of gethostname()). */
void cmd_set_system_hostname(const char *name);

/* Token checks shared with modules. */
bool cmd_valid_ifname(const char *name);

/* A broken invariant of the engine's own (a malformed command table, no memory at start-up):
   the message on stderr, then abort(). */
void cmd_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* PGMROUTER_CLI_COMMAND_H */

/*
 * Settings tables (settings.h): the commands made from each row, their one handler, the
 * running-configuration writer and the values for shows.
 */
#include "cli/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a generated command's handler needs: a->def->data. */
struct setting_cmd {
	const struct cfg_module *m;
	const struct setting *row;
	bool global;
};

/* Everything settings_install allocated, freed by settings_free. */
struct installed {
	struct cmd_def *defs;
	struct setting_cmd *cmds;
	char **strings;
	size_t ndefs, nstrings;
};
static struct installed *installed;
static size_t ninstalled;

static uint32_t scale_of(uint32_t scale)
{
	return scale != 0 ? scale : 1;
}

static uint64_t row_bit(const struct cfg_module *m, const struct setting *row)
{
	return (uint64_t)1 << (row - m->rows);
}

static bool inherited(const struct setting *row)
{
	return setting_in_global(row) && setting_in_if(row);
}

/* ---- values ---- */

static uint32_t load_u32(const void *values, size_t offset)
{
	uint32_t v;

	memcpy(&v, (const unsigned char *)values + offset, sizeof(v));
	return v;
}

static void store_u32(void *values, size_t offset, uint32_t v)
{
	memcpy((unsigned char *)values + offset, &v, sizeof(v));
}

static uint32_t load_at(const struct setting *row, const void *values, size_t offset)
{
	if (row->kind == SETTING_FLAG)
		return *(const bool *)(const void *)((const unsigned char *)values + offset);
	return load_u32(values, offset);
}

static void store_at(const struct setting *row, void *values, size_t offset, uint32_t v)
{
	if (row->kind == SETTING_FLAG)
		*(bool *)(void *)((unsigned char *)values + offset) = v != 0;
	else
		store_u32(values, offset, v);
}

uint32_t setting_get(const struct setting *row, const void *values, bool global)
{
	return load_at(row, values, global ? row->global_offset : row->if_offset);
}

uint32_t setting_typed(const struct setting *row, uint32_t stored)
{
	return row->kind == SETTING_NUMBER ? stored / scale_of(row->scale) : stored;
}

static uint32_t stored_default(const struct setting *row)
{
	return row->kind == SETTING_NUMBER ? row->dflt * scale_of(row->scale) : row->dflt;
}

static const char *text_at(const void *values, size_t offset)
{
	return (const char *)values + offset;
}

void setting_arg_default(const struct setting_arg *arg, void *values)
{
	if (arg->canon != NULL) {
		memset((char *)values + arg->offset, 0, SETTING_TEXT_LEN);
		snprintf((char *)values + arg->offset, SETTING_TEXT_LEN, "%s", arg->dflt_text);
	} else
		store_u32(values, arg->offset, arg->dflt * scale_of(arg->scale));
}

bool setting_arg_equal(const struct setting_arg *arg, const void *a, const void *b)
{
	if (arg->canon != NULL)
		return strncmp(text_at(a, arg->offset), text_at(b, arg->offset),
			       SETTING_TEXT_LEN) == 0;
	return load_u32(a, arg->offset) == load_u32(b, arg->offset);
}

static bool arg_is_default(const struct setting_arg *arg, const void *values)
{
	if (arg->canon != NULL)
		return strncmp(text_at(values, arg->offset), arg->dflt_text, SETTING_TEXT_LEN) == 0;
	return load_u32(values, arg->offset) == arg->dflt * scale_of(arg->scale);
}

static bool args_default(const struct setting *row, const void *global_values)
{
	for (unsigned i = 0; i < SETTINGS_MAX_ARGS && row->arg[i].name != NULL; i++)
		if (!arg_is_default(&row->arg[i], global_values))
			return false;
	return true;
}

static const struct setting_arg *find_arg(const struct setting *row, const char *name, size_t len)
{
	for (unsigned i = 0; i < SETTINGS_MAX_ARGS && row->arg[i].name != NULL; i++)
		if (strlen(row->arg[i].name) == len && memcmp(row->arg[i].name, name, len) == 0)
			return &row->arg[i];
	return NULL;
}

/* A flag's arguments as typed: its syntax with each $name'd number replaced by the value (typed,
   in the order of row->arg; a text from `values`, or its default when NULL) and the brackets
   dropped ("ports 3055 3056"). */
static void args_text(const struct setting *row, const uint32_t *typed, const void *values,
	char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (const char *p = row->args; p != NULL && *p != '\0';) {
		const char *end, *dollar;
		int n;

		while (*p == ' ' || *p == '[' || *p == ']')
			p++;
		if (*p == '\0')
			break;
		end = p + strcspn(p, " []");
		dollar = memchr(p, '$', (size_t)(end - p));
		if (dollar != NULL) {
			const struct setting_arg *arg =
				find_arg(row, dollar + 1, (size_t)(end - dollar - 1));

			if (arg->canon != NULL)
				n = snprintf(buf + off, len - off, "%s%.*s", off ? " " : "",
					SETTING_TEXT_LEN,
					values != NULL ? text_at(values, arg->offset)
						       : arg->dflt_text);
			else
				n = snprintf(buf + off, len - off, "%s%u", off ? " " : "",
					typed[arg - row->arg]);
		} else {
			n = snprintf(
				buf + off, len - off, "%s%.*s", off ? " " : "", (int)(end - p), p);
		}
		if (n < 0 || (size_t)n >= len - off)
			return;
		off += (size_t)n;
		p = end;
	}
}

/* The arguments' values as typed: from global values, or (values NULL) their defaults. */
static void args_typed(const struct setting *row, const void *values, uint32_t *typed)
{
	for (unsigned i = 0; i < SETTINGS_MAX_ARGS && row->arg[i].name != NULL; i++)
		typed[i] = row->arg[i].canon != NULL ? 0
			   : values != NULL	     ? load_u32(values, row->arg[i].offset) /
						   scale_of(row->arg[i].scale)
						     : row->arg[i].dflt;
}

const char *setting_value_text(const struct setting *row, uint32_t stored, char *buf, size_t len)
{
	switch (row->kind) {
	case SETTING_NUMBER:
		snprintf(buf, len, "%u", stored / scale_of(row->scale));
		break;
	case SETTING_CHOICE:
		snprintf(buf, len, "%s", row->choices[stored]);
		break;
	case SETTING_FLAG:
		snprintf(buf, len, "%s", stored ? "on" : "off");
		break;
	}
	return buf;
}

/* "on ports 3055 3056": a flag that is on, with its arguments */
static const char *flag_text(
	const struct setting *row, bool on, const void *values, char *buf, size_t len)
{
	uint32_t typed[SETTINGS_MAX_ARGS] = {0};
	char args[SETTING_TEXT_LEN + 64];

	if (!on || row->args == NULL)
		return setting_value_text(row, on, buf, len);
	args_typed(row, values, typed);
	args_text(row, typed, values, args, sizeof(args));
	snprintf(buf, len, "on %s", args);
	return buf;
}

const char *setting_text(
	const struct setting *row, const void *global_values, char *buf, size_t len)
{
	uint32_t stored = setting_get(row, global_values, true);

	if (row->kind == SETTING_FLAG)
		return flag_text(row, stored, global_values, buf, len);
	return setting_value_text(row, stored, buf, len);
}

const char *setting_default_text(const struct setting *row, char *buf, size_t len)
{
	if (row->kind == SETTING_FLAG)
		return flag_text(row, row->dflt, NULL, buf, len);
	return setting_value_text(row, stored_default(row), buf, len);
}

void settings_effective(
	const struct cfg *c, const struct cfg_module *m, const char *ifname, void *out)
{
	const void *own = cfg_module_if(c, m, ifname);
	const void *global = cfg_module_global(c, m);
	uint64_t set = cfg_module_if_set(c, m, ifname);

	if (own != NULL)
		memcpy(out, own, m->if_size);
	else
		memset(out, 0, m->if_size);
	for (size_t i = 0; i < m->nrows; i++) {
		const struct setting *row = &m->rows[i];

		if (!setting_in_if(row))
			continue;
		if (inherited(row) && !(set & row_bit(m, row)))
			store_at(row, out, row->if_offset, setting_get(row, global, true));
		else if (own == NULL)
			store_at(row, out, row->if_offset, stored_default(row));
	}
}

bool settings_global_differ(
	const struct cfg_module *m, const struct cfg *a, const struct cfg *b, unsigned flags)
{
	const void *va = cfg_module_global(a, m), *vb = cfg_module_global(b, m);

	for (size_t i = 0; i < m->nrows; i++) {
		const struct setting *row = &m->rows[i];

		if ((row->flags & flags) != flags || !setting_in_global(row))
			continue;
		if (setting_get(row, va, true) != setting_get(row, vb, true))
			return true;
		for (unsigned k = 0; k < SETTINGS_MAX_ARGS && row->arg[k].name != NULL; k++)
			if (!setting_arg_equal(&row->arg[k], va, vb))
				return true;
	}
	return false;
}

/* ---- running configuration ---- */

static void write_row(const struct cfg_module *m, const struct setting *row, const void *values,
	uint32_t stored, const char *indent, struct cfg_buf *b)
{
	char text[SETTING_TEXT_LEN + 64];
	const char *sep = row->keyword[0] != '\0' ? " " : "";

	if (row->kind != SETTING_FLAG) {
		cfg_printf(b, "%s%s%s%s %s\n", indent, m->prefix, sep, row->keyword,
			setting_value_text(row, stored, text, sizeof(text)));
		return;
	}
	if (!stored) {
		cfg_printf(b, "%sno %s%s%s\n", indent, m->prefix, sep, row->keyword);
		return;
	}
	text[0] = '\0';
	if (row->args != NULL && !args_default(row, values)) {
		uint32_t typed[SETTINGS_MAX_ARGS] = {0};

		args_typed(row, values, typed);
		args_text(row, typed, values, text, sizeof(text));
	}
	cfg_printf(b, "%s%s%s%s%s%s\n", indent, m->prefix, sep, row->keyword, text[0] ? " " : "",
		text);
}

void settings_write_global(const struct cfg_module *m, const struct cfg *c, struct cfg_buf *b)
{
	const void *values = cfg_module_global(c, m);
	uint64_t set = cfg_module_global_set(c, m);

	for (size_t i = 0; i < m->nrows; i++) {
		const struct setting *row = &m->rows[i];
		uint32_t stored;
		bool write;

		if (!setting_in_global(row))
			continue;
		stored = setting_get(row, values, true);
		if (inherited(row))
			write = (set & row_bit(m, row)) != 0;
		else
			write = stored != stored_default(row) ||
				(row->kind == SETTING_FLAG && stored && !args_default(row, values));
		if (write)
			write_row(m, row, values, stored, "", b);
	}
}

void settings_write_if(
	const struct cfg_module *m, const struct cfg *c, const char *ifname, struct cfg_buf *b)
{
	const void *values = cfg_module_if(c, m, ifname);
	uint64_t set = cfg_module_if_set(c, m, ifname);

	for (size_t i = 0; values != NULL && i < m->nrows; i++) {
		const struct setting *row = &m->rows[i];

		if (setting_in_if(row) && (set & row_bit(m, row)))
			write_row(m, row, values, setting_get(row, values, false), " ", b);
	}
}

/* ---- the generic handler ---- */

static int fail(struct cmd_session *s, const char *message)
{
	cmd_out(s, "%% %s\n", message);
	return CMD_ERR_FAILED;
}

/* The typed value of the command: a number by its name, the choice that was typed, a flag's
   state. */
static uint32_t typed_value(const struct setting *row, const struct cmd_args *a)
{
	const char *v;

	if (a->negate)
		return row->kind == SETTING_FLAG ? 0 : row->dflt;
	switch (row->kind) {
	case SETTING_NUMBER:
		/* the matcher checked the range; the spec names the number $value */
		if ((v = cmd_arg(a, "value")) == NULL)
			cmd_panic("%s: no value bound", row->keyword);
		return (uint32_t)strtoul(v, NULL, 10);
	case SETTING_CHOICE:
		for (uint32_t i = 0; row->choices[i] != NULL; i++)
			if (cmd_arg_has(a, row->choices[i]))
				return i;
		cmd_panic("%s: no choice bound", row->keyword);
	case SETTING_FLAG:
	default:
		return 1;
	}
}

static int setting_handler(struct cmd_session *s, const struct cmd_args *a)
{
	const struct setting_cmd *sc = a->def->data;
	const struct setting *row = sc->row;
	const char *ifname = sc->global ? NULL : s->ifname;
	uint32_t typed = typed_value(row, a);
	struct cfg *c = cfg_edit(s);
	uint64_t *set, bit = row_bit(sc->m, row);
	void *values;
	char err[256], texts[SETTINGS_MAX_ARGS][SETTING_TEXT_LEN] = {{0}};

	if (c == NULL)
		return fail(s, "out of memory");
	if (row->check != NULL && row->check(c, ifname, typed, err, sizeof(err)) < 0)
		return fail(s, err);
	for (unsigned i = 0; sc->global && i < SETTINGS_MAX_ARGS && row->arg[i].name != NULL; i++) {
		const struct setting_arg *arg = &row->arg[i];
		const char *v = a->negate ? NULL : cmd_arg(a, arg->name);

		if (arg->canon == NULL)
			continue;
		if (v == NULL)
			snprintf(texts[i], sizeof(texts[i]), "%s", arg->dflt_text);
		else if (arg->canon(v, texts[i], sizeof(texts[i]), err, sizeof(err)) < 0)
			return fail(s, err);
	}
	values = cfg_module_values(c, sc->m, ifname, !a->negate, &set);
	if (values == NULL)
		return a->negate ? CMD_OK : fail(s, "out of memory");
	store_at(row, values, sc->global ? row->global_offset : row->if_offset,
		row->kind == SETTING_NUMBER ? typed * scale_of(row->scale) : typed);
	for (unsigned i = 0; sc->global && i < SETTINGS_MAX_ARGS && row->arg[i].name != NULL; i++) {
		const struct setting_arg *arg = &row->arg[i];
		const char *v = a->negate ? NULL : cmd_arg(a, arg->name);
		uint32_t x = v != NULL ? (uint32_t)strtoul(v, NULL, 10) : arg->dflt;

		if (arg->canon != NULL)
			memcpy((char *)values + arg->offset, texts[i], SETTING_TEXT_LEN);
		else
			store_u32(values, arg->offset, x * scale_of(arg->scale));
	}
	/* configured here: a number or choice until `no`; a flag while it differs from the
	   default, and on an interface overriding the global value, either way */
	if (row->kind == SETTING_FLAG && !(inherited(row) && !sc->global))
		*set = typed != row->dflt ? *set | bit : *set & ~bit;
	else
		*set = a->negate && row->kind != SETTING_FLAG ? *set & ~bit : *set | bit;
	return CMD_OK;
}

/* `default PREFIX KEYWORD`: back to the default, and on an interface to the global value. */
static int setting_default_handler(struct cmd_session *s, const struct cmd_args *a)
{
	const struct setting_cmd *sc = a->def->data;
	const struct setting *row = sc->row;
	const char *ifname = sc->global ? NULL : s->ifname;
	struct cfg *c = cfg_edit(s);
	uint64_t *set;
	void *values;
	char err[256];

	if (c == NULL)
		return fail(s, "out of memory");
	if (row->check != NULL && row->check(c, ifname, row->dflt, err, sizeof(err)) < 0)
		return fail(s, err);
	if ((values = cfg_module_values(c, sc->m, ifname, false, &set)) == NULL)
		return CMD_OK; /* an interface the configuration does not have: nothing to do */
	store_at(row, values, sc->global ? row->global_offset : row->if_offset, stored_default(row));
	for (unsigned i = 0; sc->global && i < SETTINGS_MAX_ARGS && row->arg[i].name != NULL; i++)
		setting_arg_default(&row->arg[i], values);
	*set &= ~row_bit(sc->m, row);
	return CMD_OK;
}

/* ---- commands from rows ---- */

static char *keep(struct installed *in, char *text)
{
	if (text == NULL)
		cmd_panic("out of memory");
	in->strings[in->nstrings++] = text;
	return text;
}

static char *join(struct installed *in, const char *a, const char *b, const char *c, const char *d)
{
	char *text;

	if (asprintf(&text, "%s%s%s%s", a, b, c, d) < 0)
		text = NULL;
	return keep(in, text);
}

/* The value part of a row's spec and of its `no` form. */
static void value_specs(
	struct installed *in, const struct setting *row, const char **spec, const char **no_spec)
{
	char *alternatives = NULL;
	size_t len = 0;

	switch (row->kind) {
	case SETTING_NUMBER:
		if (asprintf(&alternatives, "<%u-%u>$value", row->min, row->max) < 0)
			alternatives = NULL;
		keep(in, alternatives);
		*spec = join(in, " ", alternatives, "", "");
		*no_spec = join(in, " [", alternatives, "]", "");
		return;
	case SETTING_CHOICE:
		for (size_t i = 0; row->choices[i] != NULL; i++)
			len += strlen(row->choices[i]) + 1;
		alternatives = calloc(1, len + 1);
		keep(in, alternatives);
		for (size_t i = 0; row->choices[i] != NULL; i++) {
			if (i != 0)
				strcat(alternatives, "|");
			strcat(alternatives, row->choices[i]);
		}
		*spec = join(in, " (", alternatives, ")", "");
		*no_spec = join(in, " [(", alternatives, ")]", "");
		return;
	case SETTING_FLAG:
		*spec = row->args != NULL ? join(in, " ", row->args, "", "") : "";
		*no_spec = "";
		return;
	}
}

/* Rows are data: a broken one is a programming error, found at start-up. */
static void check_row(const struct cfg_module *m, const struct setting *row)
{
	size_t words = 0;

	if (!setting_in_global(row) && !setting_in_if(row))
		cmd_panic("%s %s: in no scope", m->prefix, row->keyword);
	if ((setting_in_global(row) && row->global_offset + sizeof(uint32_t) > m->global_size) ||
		(setting_in_if(row) && row->if_offset + sizeof(uint32_t) > m->if_size))
		cmd_panic("%s %s: value outside the module's struct", m->prefix, row->keyword);
	switch (row->kind) {
	case SETTING_NUMBER:
		if (row->min > row->max || row->dflt < row->min || row->dflt > row->max)
			cmd_panic("%s %s: default outside the range", m->prefix, row->keyword);
		break;
	case SETTING_CHOICE:
		while (row->choices != NULL && row->choices[words] != NULL)
			words++;
		if (row->dflt >= words)
			cmd_panic("%s %s: default is not a choice", m->prefix, row->keyword);
		break;
	case SETTING_FLAG:
		if (row->args != NULL && setting_in_if(row))
			cmd_panic("%s %s: arguments only globally", m->prefix, row->keyword);
		/* every number of the syntax is bound to an argument by its name */
		for (const char *p = row->args; p != NULL && (p = strchr(p, '$')) != NULL;) {
			size_t n = strcspn(p + 1, " []");

			if (find_arg(row, p + 1, n) == NULL)
				cmd_panic("%s %s: no argument %.*s", m->prefix, row->keyword,
					(int)n, p + 1);
			p += 1 + n;
		}
		break;
	default:
		cmd_panic("%s %s: unknown kind", m->prefix, row->keyword);
	}
}

void settings_install(struct cfg_module *m)
{
	struct installed *in, *v;
	size_t n = 0, ncmds = 0;

	if (m->nrows > SETTINGS_MAX_ROWS)
		cmd_panic("%s: more than %d settings", m->name, SETTINGS_MAX_ROWS);
	cfg_module_register(m);
	v = realloc(installed, (ninstalled + 1) * sizeof(*v));
	if (v == NULL)
		cmd_panic("out of memory");
	installed = v;
	in = &installed[ninstalled++];
	memset(in, 0, sizeof(*in));
	in->defs = calloc(4 * m->nrows, sizeof(*in->defs));
	in->cmds = calloc(2 * m->nrows, sizeof(*in->cmds));
	in->strings = calloc(16 * m->nrows, sizeof(*in->strings));
	if (in->defs == NULL || in->cmds == NULL || in->strings == NULL)
		cmd_panic("out of memory");
	for (size_t i = 0; i < m->nrows; i++) {
		const struct setting *row = &m->rows[i];
		const char *sep = row->keyword[0] != '\0' ? " " : "";
		const char *value_spec, *no_value_spec, *head, *help, *default_spec, *default_help;

		check_row(m, row);
		value_specs(in, row, &value_spec, &no_value_spec);
		head = join(in, m->prefix, sep, row->keyword, "");
		help = join(
			in, m->prefix_help, row->help, row->value_help ? row->value_help : "", "");
		default_spec = join(in, "default ", head, "", "");
		default_help = join(in, DEFAULT_STR, m->prefix_help, row->help, "");
		for (int scope = 0; scope < 2; scope++) {
			struct cmd_def *d = &in->defs[n];
			struct setting_cmd *sc = &in->cmds[ncmds++];

			if (scope == 0 ? !setting_in_global(row) : !setting_in_if(row))
				continue;
			sc->m = m;
			sc->row = row;
			sc->global = scope == 0;
			d->spec = join(in, head, value_spec, "", "");
			d->help = help;
			d->modes = CMD_MODE(scope == 0 ? CMD_NODE_CONFIG : CMD_NODE_CONFIG_IF);
			d->priv = CMD_PRIV_ADMIN;
			d->handler = setting_handler;
			d->data = sc;
			if (row->kind == SETTING_FLAG && row->args == NULL) {
				d->no_spec = CMD_NO_SAME;
			} else {
				d->no_spec = join(in, head, no_value_spec, "", "");
				d->no_help = row->kind == SETTING_FLAG
						     ? join(in, m->prefix_help, row->help, "", "")
						     : help;
			}
			n++;
			d = &in->defs[n++];
			d->spec = default_spec;
			d->help = default_help;
			d->modes = CMD_MODE(scope == 0 ? CMD_NODE_CONFIG : CMD_NODE_CONFIG_IF);
			d->priv = CMD_PRIV_ADMIN;
			d->handler = setting_default_handler;
			d->data = sc;
		}
	}
	in->ndefs = n;
	cmd_install(in->defs, n);
}

void settings_free(void)
{
	for (size_t i = 0; i < ninstalled; i++) {
		for (size_t k = 0; k < installed[i].nstrings; k++)
			free(installed[i].strings[k]);
		free(installed[i].strings);
		free(installed[i].defs);
		free(installed[i].cmds);
	}
	free(installed);
	installed = NULL;
	ninstalled = 0;
}

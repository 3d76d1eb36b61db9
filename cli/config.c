/*
 * The configuration database (see config.h): configurations as values, modules' value structs
 * inside them, the edit-commit cycle, files.
 */
#include "cli/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/settings.h"

#define MAX_MODULES 8

/* ---- text buffer ---- */

void cfg_printf(struct cfg_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->data != NULL ? b->data + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		char *p;

		while (cap - b->len <= (size_t)n)
			cap *= 2;
		p = realloc(b->data, cap);
		if (p == NULL) {
			b->failed = true;
			return;
		}
		b->data = p;
		b->cap = cap;
	}
}

void cfg_buf_free(struct cfg_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* ---- configurations ---- */

/*
 * Configurations share what they have in common: an edit copies the running configuration in
 * O(modules), and only what a command changes is copied again (copy on write), so a command
 * on a configuration of thousands of interfaces costs what it changes. Every shared piece has
 * a reference count and is never changed while another configuration holds it.
 */

/* One module's values in one scope, with a bit per row configured there. */
struct cfg_part {
	unsigned refs;
	uint64_t set;
	unsigned char values[];
};

struct cfg_if {
	unsigned refs;
	char name[CMD_IFNAME_MAX];
	char *description;
	struct cfg_part *parts[MAX_MODULES];
};

/* The interfaces, sorted by ifname_cmp. */
struct cfg_iftab {
	unsigned refs;
	size_t n, cap;
	struct cfg_if **v;
};

struct cfg {
	char hostname[CMD_HOSTNAME_MAX]; /* "" when not configured */
	struct cfg_iftab *ifs;
	struct cfg_part *global[MAX_MODULES];
};

static struct cfg_module *modules[MAX_MODULES];
static unsigned nmodules;
static struct cfg *running;
static bool configs_made; /* the registry is closed once a configuration exists */
static char *startup_path;

void cfg_module_register(struct cfg_module *m)
{
	if (configs_made || nmodules == MAX_MODULES)
		cmd_panic("module %s registered too late or one too many", m->name);
	m->index = nmodules;
	modules[nmodules++] = m;
}

/* ---- shared pieces ---- */

static struct cfg_part *part_new(size_t size)
{
	struct cfg_part *p = calloc(1, sizeof(struct cfg_part) + size);

	if (p != NULL)
		p->refs = 1;
	return p;
}

static void part_put(struct cfg_part *p)
{
	if (p != NULL && --p->refs == 0)
		free(p);
}

/* Makes *pp this configuration's own, to be changed; false without memory. */
static bool part_own(struct cfg_part **pp, size_t size)
{
	struct cfg_part *n;

	if ((*pp)->refs == 1)
		return true;
	if ((n = malloc(sizeof(struct cfg_part) + size)) == NULL)
		return false;
	memcpy(n, *pp, sizeof(struct cfg_part) + size);
	n->refs = 1;
	(*pp)->refs--;
	*pp = n;
	return true;
}

static void if_put(struct cfg_if *ifc)
{
	if (ifc == NULL || --ifc->refs != 0)
		return;
	free(ifc->description);
	for (unsigned i = 0; i < nmodules; i++)
		part_put(ifc->parts[i]);
	free(ifc);
}

static bool if_own(struct cfg_if **pp)
{
	struct cfg_if *n;

	if ((*pp)->refs == 1)
		return true;
	if ((n = malloc(sizeof(*n))) == NULL)
		return false;
	*n = **pp;
	n->refs = 1;
	if ((*pp)->description != NULL && (n->description = strdup((*pp)->description)) == NULL) {
		free(n);
		return false;
	}
	for (unsigned i = 0; i < nmodules; i++)
		n->parts[i]->refs++;
	(*pp)->refs--;
	*pp = n;
	return true;
}

static void iftab_put(struct cfg_iftab *t)
{
	if (t == NULL || --t->refs != 0)
		return;
	for (size_t i = 0; i < t->n; i++)
		if_put(t->v[i]);
	free(t->v);
	free(t);
}

/* The interface table as this configuration's own, with room for one more. */
static bool iftab_own(struct cfg *c)
{
	struct cfg_iftab *t = c->ifs, *n;

	if (t->refs == 1 && t->n < t->cap)
		return true;
	if (t->refs == 1) {
		/* doubling: a configuration of thousands of interfaces must not copy the table
		   once per line */
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct cfg_if **v = realloc(t->v, cap * sizeof(*v));

		if (v == NULL)
			return false;
		t->v = v;
		t->cap = cap;
		return true;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return false;
	n->cap = t->n + 16;
	if ((n->v = malloc(n->cap * sizeof(*n->v))) == NULL) {
		free(n);
		return false;
	}
	n->refs = 1;
	n->n = t->n;
	if (t->n != 0)
		memcpy(n->v, t->v, t->n * sizeof(*n->v));
	for (size_t i = 0; i < t->n; i++)
		t->v[i]->refs++;
	t->refs--;
	c->ifs = n;
	return true;
}

/* A row's default, stored. */
static void row_default(const struct setting *row, void *values, size_t offset)
{
	unsigned char *v = (unsigned char *)values + offset;

	if (row->kind == SETTING_FLAG) {
		*(bool *)(void *)v = row->dflt != 0;
		for (unsigned i = 0; i < SETTINGS_MAX_ARGS && row->arg[i].name != NULL; i++)
			setting_arg_default(&row->arg[i], values);
	} else {
		uint32_t x = row->dflt * (row->scale ? row->scale : 1);

		memcpy(v, &x, sizeof(x));
	}
}

static struct cfg_part *global_defaults(const struct cfg_module *m)
{
	struct cfg_part *p = part_new(m->global_size);

	if (p == NULL)
		return NULL;
	if (m->init_global != NULL)
		m->init_global(p->values);
	for (size_t i = 0; i < m->nrows; i++)
		if (setting_in_global(&m->rows[i]))
			row_default(&m->rows[i], p->values, m->rows[i].global_offset);
	return p;
}

static struct cfg_part *if_defaults(const struct cfg_module *m)
{
	struct cfg_part *p = part_new(m->if_size);

	if (p == NULL)
		return NULL;
	for (size_t i = 0; i < m->nrows; i++)
		if (setting_in_if(&m->rows[i]))
			row_default(&m->rows[i], p->values, m->rows[i].if_offset);
	return p;
}

/* ---- configurations ---- */

void cfg_destroy(struct cfg *c)
{
	if (c == NULL)
		return;
	iftab_put(c->ifs);
	for (unsigned i = 0; i < nmodules; i++)
		part_put(c->global[i]);
	free(c);
}

struct cfg *cfg_new(void)
{
	struct cfg *c = calloc(1, sizeof(*c));

	configs_made = true;
	if (c == NULL)
		return NULL;
	if ((c->ifs = calloc(1, sizeof(*c->ifs))) == NULL) {
		free(c);
		return NULL;
	}
	c->ifs->refs = 1;
	for (unsigned i = 0; i < nmodules; i++)
		if ((c->global[i] = global_defaults(modules[i])) == NULL) {
			cfg_destroy(c);
			return NULL;
		}
	return c;
}

struct cfg *cfg_dup(const struct cfg *c)
{
	struct cfg *n = malloc(sizeof(*n));

	if (n == NULL)
		return NULL;
	*n = *c;
	n->ifs->refs++;
	for (unsigned i = 0; i < nmodules; i++)
		n->global[i]->refs++;
	return n;
}

bool cfg_module_same(const struct cfg *a, const struct cfg *b, const struct cfg_module *m)
{
	unsigned i = m->index;

	if (a->global[i] != b->global[i] &&
		(a->global[i]->set != b->global[i]->set ||
			memcmp(a->global[i]->values, b->global[i]->values, m->global_size) != 0))
		return false;
	if (a->ifs == b->ifs)
		return true;
	if (a->ifs->n != b->ifs->n)
		return false;
	for (size_t k = 0; k < a->ifs->n; k++) {
		const struct cfg_if *x = a->ifs->v[k], *y = b->ifs->v[k];

		if (x != y && (strcmp(x->name, y->name) != 0 || x->parts[i] != y->parts[i]))
			return false;
	}
	return true;
}

const struct cfg *cfg_running(void)
{
	if (running == NULL && (running = cfg_new()) == NULL)
		cmd_panic("out of memory for the configuration");
	return running;
}

/* ---- hostname ---- */

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

const char *cfg_hostname(const struct cfg *c)
{
	return c->hostname[0] != '\0' ? c->hostname : NULL;
}

int cfg_set_hostname(struct cfg *c, const char *name, char *err, size_t errlen)
{
	if (name != NULL && !valid_hostname(name)) {
		snprintf(err, errlen,
			"Invalid hostname \"%s\": letters, digits, '-', '_' and '.' only, at most "
			"%d "
			"characters",
			name, CMD_HOSTNAME_MAX - 1);
		return -1;
	}
	snprintf(c->hostname, sizeof(c->hostname), "%s", name != NULL ? name : "");
	return 0;
}

/* ---- interfaces ---- */

/* Interfaces sort as people read them: eth2 before eth10. */
static int ifname_cmp(const char *a, const char *b)
{
	while (*a != '\0' && *b != '\0') {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *ea = a, *eb = b;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (ea = a; isdigit((unsigned char)*ea); ea++)
				;
			for (eb = b; isdigit((unsigned char)*eb); eb++)
				;
			if (ea - a != eb - b)
				return ea - a < eb - b ? -1 : 1;
			for (; a < ea; a++, b++)
				if (*a != *b)
					return *a < *b ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a == *b ? 0 : *a == '\0' ? -1 : 1;
}

static size_t if_find(const struct cfg *c, const char *name, bool *found)
{
	size_t lo = 0, hi = c->ifs->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int d = ifname_cmp(c->ifs->v[mid]->name, name);

		if (d == 0)
			d = strcmp(c->ifs->v[mid]->name, name); /* eth01 vs eth1 */
		if (d == 0) {
			*found = true;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static const struct cfg_if *if_get(const struct cfg *c, const char *name)
{
	bool found;
	size_t at = if_find(c, name, &found);

	return found ? c->ifs->v[at] : NULL;
}

/* The interface as this configuration's own, to be changed (added when `create`). */
static struct cfg_if *if_edit(struct cfg *c, const char *name, bool create)
{
	bool found;
	size_t at = if_find(c, name, &found);
	struct cfg_if *n;

	if (!found && !create)
		return NULL;
	if (!iftab_own(c))
		return NULL;
	if (found)
		return if_own(&c->ifs->v[at]) ? c->ifs->v[at] : NULL;
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->refs = 1;
	snprintf(n->name, sizeof(n->name), "%s", name);
	for (unsigned i = 0; i < nmodules; i++)
		if ((n->parts[i] = if_defaults(modules[i])) == NULL) {
			if_put(n);
			return NULL;
		}
	memmove(&c->ifs->v[at + 1], &c->ifs->v[at], (c->ifs->n - at) * sizeof(*c->ifs->v));
	c->ifs->v[at] = n;
	c->ifs->n++;
	return n;
}

size_t cfg_if_count(const struct cfg *c)
{
	return c->ifs->n;
}

const char *cfg_if_name(const struct cfg *c, size_t i)
{
	return i < c->ifs->n ? c->ifs->v[i]->name : NULL;
}

bool cfg_if_exists(const struct cfg *c, const char *ifname)
{
	return if_get(c, ifname) != NULL;
}

int cfg_if_add(struct cfg *c, const char *ifname)
{
	if (if_get(c, ifname) != NULL)
		return 0;
	return if_edit(c, ifname, true) != NULL ? 0 : -1;
}

void cfg_if_del(struct cfg *c, const char *ifname)
{
	bool found;
	size_t at = if_find(c, ifname, &found);

	if (!found || !iftab_own(c))
		return;
	if_put(c->ifs->v[at]);
	memmove(&c->ifs->v[at], &c->ifs->v[at + 1], (c->ifs->n - at - 1) * sizeof(*c->ifs->v));
	c->ifs->n--;
}

const char *cfg_if_description(const struct cfg *c, const char *ifname)
{
	const struct cfg_if *ifc = if_get(c, ifname);

	return ifc != NULL ? ifc->description : NULL;
}

int cfg_if_set_description(struct cfg *c, const char *ifname, const char *text)
{
	struct cfg_if *ifc;
	char *copy = NULL;

	if (text != NULL && (copy = strdup(text)) == NULL)
		return -1;
	if ((ifc = if_edit(c, ifname, true)) == NULL) {
		free(copy);
		return -1;
	}
	free(ifc->description);
	ifc->description = copy;
	return 0;
}

/* ---- module values ---- */

const void *cfg_module_global(const struct cfg *c, const struct cfg_module *m)
{
	return c->global[m->index]->values;
}

uint64_t cfg_module_global_set(const struct cfg *c, const struct cfg_module *m)
{
	return c->global[m->index]->set;
}

const void *cfg_module_if(const struct cfg *c, const struct cfg_module *m, const char *ifname)
{
	const struct cfg_if *ifc = if_get(c, ifname);

	return ifc != NULL ? ifc->parts[m->index]->values : NULL;
}

uint64_t cfg_module_if_set(const struct cfg *c, const struct cfg_module *m, const char *ifname)
{
	const struct cfg_if *ifc = if_get(c, ifname);

	return ifc != NULL ? ifc->parts[m->index]->set : 0;
}

void *cfg_module_values(
	struct cfg *c, const struct cfg_module *m, const char *ifname, bool create, uint64_t **set)
{
	struct cfg_part **pp;
	struct cfg_if *ifc;

	if (ifname == NULL) {
		pp = &c->global[m->index];
		if (!part_own(pp, m->global_size))
			return NULL;
	} else {
		if ((ifc = if_edit(c, ifname, create)) == NULL)
			return NULL;
		pp = &ifc->parts[m->index];
		if (!part_own(pp, m->if_size))
			return NULL;
	}
	*set = &(*pp)->set;
	return (*pp)->values;
}

/* ---- editing and committing ---- */

struct cfg *cfg_edit(struct cmd_session *s)
{
	if (s->edit == NULL)
		s->edit = cfg_dup(cfg_running());
	return s->edit;
}

int cfg_edit_end(struct cmd_session *s, int status)
{
	char err[256];
	struct cfg *c = s->edit;

	if (c == NULL || s->edit_held)
		return status;
	s->edit = NULL;
	if (status != CMD_OK) {
		cfg_destroy(c);
		return status;
	}
	if (cfg_commit(c, err, sizeof(err)) < 0) {
		cmd_out(s, "%% %s\n", err);
		return CMD_ERR_FAILED;
	}
	return status;
}

int cfg_commit(struct cfg *next, char *err, size_t errlen)
{
	const struct cfg *prev = cfg_running();
	unsigned done;

	for (done = 0; done < nmodules; done++) {
		struct cfg_module *m = modules[done];

		if (m->apply != NULL && m->apply(m->apply_ctx, prev, next, err, errlen) < 0)
			break;
	}
	if (done < nmodules) {
		char ignored[256];

		/* back to what ran: the modules that took the new configuration return to the old
		 */
		while (done-- > 0)
			if (modules[done]->apply != NULL)
				(void)modules[done]->apply(modules[done]->apply_ctx, next, prev,
					ignored, sizeof(ignored));
		cfg_destroy(next);
		return -1;
	}
	cmd_set_hostname(cfg_hostname(next));
	cfg_destroy(running);
	running = next;
	return 0;
}

/* ---- rendering ---- */

/* The modules sorted by a write order, registration order among equals. */
static unsigned modules_by(size_t offset, const struct cfg_module **order)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nmodules; i++) {
		int key = *(const int *)(const void *)((const char *)modules[i] + offset);
		unsigned k = n++;

		while (k > 0 &&
			*(const int *)(const void *)((const char *)order[k - 1] + offset) > key) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = modules[i];
	}
	return n;
}

void cfg_write(const struct cfg *c, struct cfg_buf *b)
{
	const struct cfg_module *global[MAX_MODULES], *per_if[MAX_MODULES];
	unsigned n = modules_by(offsetof(struct cfg_module, write_order), global);

	modules_by(offsetof(struct cfg_module, if_write_order), per_if);
	cfg_printf(b, "!\n");
	if (cfg_hostname(c) != NULL)
		cfg_printf(b, "hostname %s\n!\n", cfg_hostname(c));
	for (unsigned i = 0; i < n; i++) {
		size_t before = b->len;

		settings_write_global(global[i], c, b);
		if (b->len != before)
			cfg_printf(b, "!\n");
	}
	for (size_t k = 0; k < c->ifs->n; k++) {
		const struct cfg_if *ifc = c->ifs->v[k];

		cfg_printf(b, "interface %s\n", ifc->name);
		if (ifc->description != NULL)
			cfg_printf(b, " description %s\n", ifc->description);
		for (unsigned i = 0; i < n; i++)
			settings_write_if(per_if[i], c, ifc->name, b);
		cfg_printf(b, "!\n");
	}
	cfg_printf(b, "end\n");
}

/* ---- loading ---- */

struct capture {
	char text[512];
	size_t len;
};

static void capture_write(struct cmd_session *s, const char *data, size_t len)
{
	struct capture *c = s->owner;
	size_t room = sizeof(c->text) - 1 - c->len;

	if (len > room)
		len = room;
	memcpy(c->text + c->len, data, len);
	c->len += len;
	c->text[c->len] = '\0';
}

static void report_line(cfg_report_fn report, void *ctx, const char *path, unsigned lineno,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void report_line(
	cfg_report_fn report, void *ctx, const char *path, unsigned lineno, const char *fmt, ...)
{
	char msg[768];
	int n = snprintf(msg, sizeof(msg), "%s:%u: ", path, lineno);
	va_list ap;

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(msg))
		vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	report(ctx, msg);
}

static void report_error(cfg_report_fn report, void *ctx, const char *path, unsigned lineno,
	const struct cmd_session *s, int rc, const struct capture *cap, const char *line)
{
	const char *cmd = line;
	char first[256];

	while (*cmd == ' ' || *cmd == '\t')
		cmd++;
	switch (rc) {
	case CMD_ERR_INVALID:
		report_line(report, ctx, path, lineno, "Invalid input at '%s' (column %zu): %.200s",
			s->last_error.word, s->last_error.offset + 1, cmd);
		break;
	case CMD_ERR_INCOMPLETE:
		report_line(report, ctx, path, lineno, "Incomplete command: %.200s", cmd);
		break;
	case CMD_ERR_AMBIGUOUS:
		report_line(report, ctx, path, lineno, "Ambiguous command: %.200s", cmd);
		break;
	case CMD_ERR_TOO_LONG:
		report_line(report, ctx, path, lineno, "Line too long (at most %d characters)",
			CMD_LINE_MAX);
		break;
	default: {
		/* the handler's own message, without IOS's "% " */
		const char *m = cap->text;
		size_t len;

		while (*m == '%' || *m == ' ')
			m++;
		len = strcspn(m, "\n");
		if (len == 0) {
			report_line(report, ctx, path, lineno, "Command failed: %.200s", cmd);
			break;
		}
		snprintf(first, sizeof(first), "%.*s", (int)len, m);
		report_line(report, ctx, path, lineno, "%s: %.200s", first, cmd);
		break;
	}
	}
}

int cfg_open_regular(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, mode);
	struct stat st;

	int e = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		e = errno;
	if (e != 0) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int load_file(const char *path, struct cfg *into, cfg_report_fn report, void *ctx,
	bool check_only)
{
	int fd = cfg_open_regular(path, O_RDONLY, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	struct cmd_session s;
	struct capture cap;
	char *line = NULL;
	size_t linecap = 0;
	ssize_t n;
	unsigned lineno = 0;
	int errors = 0;

	if (f == NULL) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	cmd_session_init(&s, CMD_NODE_CONFIG, capture_write, &cap);
	s.batch = true;
	s.check_only = check_only;
	s.edit = into;
	s.edit_held = true;
	while ((n = getline(&line, &linecap, f)) >= 0) {
		const char *p = line;
		int rc;

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (strlen(line) != (size_t)n) {
			report_line(report, ctx, path, lineno, "NUL byte in line");
			errors++;
			continue;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '!' || *p == '#')
			continue;
		/* unindented: back to config mode; anything that left config mode comes back */
		if (p == line || !cmd_node_get(s.node)->config) {
			s.node = CMD_NODE_CONFIG;
			s.ifname[0] = '\0';
		}
		cap.len = 0;
		cap.text[0] = '\0';
		rc = cmd_execute(&s, line);
		while (rc == CMD_MORE)
			rc = cmd_continue(&s);
		if (rc != CMD_OK && rc != CMD_CLOSE) {
			report_error(report, ctx, path, lineno, &s, rc, &cap, line);
			errors++;
		}
	}
	s.edit = NULL;
	free(line);
	cmd_session_release(&s);
	fclose(f);
	return errors;
}

int cfg_load_file(const char *path, struct cfg *into, cfg_report_fn report, void *ctx)
{
	return load_file(path, into, report, ctx, false);
}

int cfg_check_file(const char *path, cfg_report_fn report, void *ctx)
{
	struct cfg *c = cfg_new();
	int bad;

	if (c == NULL) {
		errno = ENOMEM;
		return -1;
	}
	bad = load_file(path, c, report, ctx, true);
	cfg_destroy(c);
	return bad;
}

static int load_and_commit(const char *path, struct cfg *c, cfg_report_fn report, void *ctx)
{
	char err[256], msg[512];
	int bad;

	if (c == NULL) {
		errno = ENOMEM;
		return -1;
	}
	bad = cfg_load_file(path, c, report, ctx);
	if (bad < 0) {
		int e = errno;

		cfg_destroy(c);
		errno = e;
		return -1;
	}
	if (cfg_commit(c, err, sizeof(err)) < 0) {
		snprintf(msg, sizeof(msg), "%s: not applied: %s", path, err);
		report(ctx, msg);
		bad++;
	}
	return bad;
}

int cfg_merge_file(const char *path, cfg_report_fn report, void *ctx)
{
	return load_and_commit(path, cfg_dup(cfg_running()), report, ctx);
}

int cfg_reload_file(const char *path, cfg_report_fn report, void *ctx)
{
	return load_and_commit(path, cfg_new(), report, ctx);
}

void cfg_free(void)
{
	cfg_destroy(running);
	running = NULL;
	nmodules = 0;
	configs_made = false;
	free(startup_path);
	startup_path = NULL;
}

/* ---- saving ---- */

int cfg_write_file(const char *path, const char *data, size_t len)
{
	char *tmp = NULL, *dircopy = NULL, *real = realpath(path, NULL);
	int fd = -1, dfd, saved;
	size_t off = 0;

	/* a symlinked config stays a symlink: the file it points to is replaced */
	if (real != NULL)
		path = real;
	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
		free(real);
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, 0640) < 0)
		goto fail;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	free(tmp);
	tmp = NULL;
	/* the rename itself is durable only once the directory is synced */
	if ((dircopy = strdup(path)) != NULL) {
		dfd = open(dirname(dircopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dircopy);
	}
	free(real);
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(real);
	errno = saved;
	return -1;
}

const char *cfg_startup_path(void)
{
	return startup_path != NULL ? startup_path : CFG_DEFAULT_PATH;
}

void cfg_set_startup_path(const char *path)
{
	char *copy = path != NULL ? strdup(path) : NULL;

	free(startup_path);
	startup_path = copy;
}

/*
 * Startup config loading, running-config generation and atomic saving.
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

#include "router/lib/log.h"

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

/* ---- registries ---- */

struct writer {
	int order;
	bool per_interface;
	cfg_writer_fn global;
	cfg_if_writer_fn interface;
};

struct cfg_interface {
	char name[CMD_IFNAME_MAX];
	bool stale; /* not seen again during a reload */
};

struct reload_hooks {
	void (*begin)(void);
	void (*end)(void);
};

static struct writer *writers;
static size_t nwriters;
static struct cfg_interface *interfaces;
static size_t ninterfaces, interfaces_cap;
static cfg_if_hook_fn *delete_hooks;
static size_t ndelete_hooks;
static struct reload_hooks *reloads;
static size_t nreloads;
static char *startup_path;

static void add_writer(struct writer w)
{
	struct writer *v = realloc(writers, (nwriters + 1) * sizeof(*v));
	size_t i;

	if (v == NULL)
		fatal("realloc");
	writers = v;
	/* stable insertion by order */
	for (i = nwriters; i > 0 && writers[i - 1].order > w.order; i--)
		writers[i] = writers[i - 1];
	writers[i] = w;
	nwriters++;
}

void cfg_register_writer(int order, cfg_writer_fn fn)
{
	add_writer((struct writer){.order = order, .global = fn});
}

void cfg_register_interface_writer(int order, cfg_if_writer_fn fn)
{
	add_writer((struct writer){.order = order, .per_interface = true, .interface = fn});
}

void cfg_register_interface_delete_hook(cfg_if_hook_fn fn)
{
	cfg_if_hook_fn *v = realloc(delete_hooks, (ndelete_hooks + 1) * sizeof(*v));

	if (v == NULL)
		fatal("realloc");
	delete_hooks = v;
	delete_hooks[ndelete_hooks++] = fn;
}

void cfg_register_reload_hooks(void (*begin)(void), void (*end)(void))
{
	struct reload_hooks *v = realloc(reloads, (nreloads + 1) * sizeof(*v));

	if (v == NULL)
		fatal("realloc");
	reloads = v;
	reloads[nreloads++] = (struct reload_hooks){begin, end};
}

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

static size_t interface_find(const char *name, bool *found)
{
	size_t lo = 0, hi = ninterfaces;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = ifname_cmp(interfaces[mid].name, name);

		if (c == 0)
			c = strcmp(interfaces[mid].name, name); /* eth01 vs eth1 */
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

bool cfg_interface_exists(const char *ifname)
{
	bool found;

	interface_find(ifname, &found);
	return found;
}

int cfg_interface_add(const char *ifname)
{
	bool found;
	size_t at = interface_find(ifname, &found);

	if (found) {
		interfaces[at].stale = false;
		return 0;
	}
	if (ninterfaces == interfaces_cap) {
		size_t cap = interfaces_cap ? interfaces_cap * 2 : 16;
		struct cfg_interface *v = realloc(interfaces, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		interfaces = v;
		interfaces_cap = cap;
	}
	memmove(&interfaces[at + 1], &interfaces[at], (ninterfaces - at) * sizeof(*interfaces));
	memset(&interfaces[at], 0, sizeof(interfaces[at]));
	snprintf(interfaces[at].name, sizeof(interfaces[at].name), "%s", ifname);
	ninterfaces++;
	return 0;
}

void cfg_interface_del(const char *ifname)
{
	bool found;
	size_t at = interface_find(ifname, &found);

	if (!found)
		return;
	for (size_t i = 0; i < ndelete_hooks; i++)
		delete_hooks[i](ifname);
	at = interface_find(ifname, &found); /* a hook may not add, but be safe */
	if (!found)
		return;
	memmove(&interfaces[at], &interfaces[at + 1], (ninterfaces - at - 1) * sizeof(*interfaces));
	ninterfaces--;
}

void cfg_foreach_interface(cfg_if_iter_fn fn, void *ctx)
{
	for (size_t i = 0; i < ninterfaces; i++)
		fn(ctx, interfaces[i].name);
}

static void interfaces_reload_begin(void)
{
	for (size_t i = 0; i < ninterfaces; i++)
		interfaces[i].stale = true;
}

static void interfaces_reload_end(void)
{
	for (size_t i = ninterfaces; i > 0; i--)
		if (interfaces[i - 1].stale) {
			char name[CMD_IFNAME_MAX];

			memcpy(name, interfaces[i - 1].name, sizeof(name));
			cfg_interface_del(name);
		}
}

void cfg_free(void)
{
	free(writers);
	writers = NULL;
	nwriters = 0;
	free(interfaces);
	interfaces = NULL;
	ninterfaces = interfaces_cap = 0;
	free(delete_hooks);
	delete_hooks = NULL;
	ndelete_hooks = 0;
	free(reloads);
	reloads = NULL;
	nreloads = 0;
	free(startup_path);
	startup_path = NULL;
}

/* ---- running config ---- */

static void run_global_writers(struct cfg_buf *b, bool late)
{
	for (size_t i = 0; i < nwriters; i++) {
		size_t before = b->len;

		if (writers[i].per_interface || (writers[i].order >= CFG_ORDER_INTERFACES) != late)
			continue;
		writers[i].global(b);
		if (b->len != before)
			cfg_printf(b, "!\n");
	}
}

void cfg_running(struct cfg_buf *b)
{
	cfg_printf(b, "!\n");
	run_global_writers(b, false);
	for (size_t n = 0; n < ninterfaces; n++) {
		cfg_printf(b, "interface %s\n", interfaces[n].name);
		for (size_t i = 0; i < nwriters; i++)
			if (writers[i].per_interface)
				writers[i].interface(b, interfaces[n].name);
		cfg_printf(b, "!\n");
	}
	run_global_writers(b, true);
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

int cfg_load_file(const char *path, cfg_report_fn report, void *ctx)
{
	FILE *f = fopen(path, "re");
	struct cmd_session s;
	struct capture cap;
	char *line = NULL;
	size_t linecap = 0;
	ssize_t n;
	unsigned lineno = 0;
	int errors = 0;

	if (f == NULL)
		return -1;
	cmd_session_init(&s, CMD_NODE_CONFIG, capture_write, &cap);
	s.batch = true;
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
	free(line);
	cmd_session_release(&s);
	fclose(f);
	return errors;
}

int cfg_reload_file(const char *path, cfg_report_fn report, void *ctx)
{
	int rc;

	for (size_t i = 0; i < nreloads; i++)
		if (reloads[i].begin != NULL)
			reloads[i].begin();
	interfaces_reload_begin();
	rc = cfg_load_file(path, report, ctx);
	if (rc < 0) {
		/* unreadable: keep the running configuration as it is */
		for (size_t i = 0; i < ninterfaces; i++)
			interfaces[i].stale = false;
	}
	interfaces_reload_end();
	for (size_t i = 0; i < nreloads; i++)
		if (reloads[i].end != NULL)
			reloads[i].end();
	return rc;
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
	if (fchmod(fd, 0644) < 0)
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

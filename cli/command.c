/*
 * The command engine: spec compiler, word-by-word matcher, `?` and TAB, filter syntax.
 *
 * Every command spec compiles to a small graph: token nodes joined by epsilon nodes (fork and
 * join) for optional parts and alternatives, from a start node to an end node. Matching a line
 * keeps, per candidate command, the set of token nodes the words so far can have reached, with
 * one back-pointer per word to recover the arguments of the winning path.
 */
#include "cli/command.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/config.h"

#define MAX_GRAPH_NODES 64
#define MAX_EDGES	16

enum tok_type {
	TK_KEYWORD,
	TK_WORD,
	TK_IFNAME,
	TK_IPV4,
	TK_IPV6, /* X:X::X:X */
	TK_RANGE,
	TK_LINE,
	TK_FORK,
	TK_JOIN,
	TK_END
};

/* How well a word matches a token; at each word only the best kind survives. */
enum score {
	SC_NONE = 0,
	SC_LINE,    /* the rest of the line */
	SC_WORD,    /* a free word */
	SC_IFNAME,  /* an interface name */
	SC_PARTIAL, /* a keyword abbreviation */
	SC_TYPED,   /* an address or a number in range */
	SC_EXACT,   /* a keyword typed in full */
};

struct tok {
	uint8_t type;
	uint8_t nedges;
	uint8_t edges[MAX_EDGES];
	bool next_end; /* the end is reachable without another word */
	uint64_t next; /* token nodes reachable with the next word */
	char *text;    /* keyword, or the variable as written in the spec */
	char *name;    /* argument name */
	char *help;
	long long lo, hi; /* TK_RANGE */
};

struct ccmd {
	const struct cmd_def *def;
	bool negate;
	uint32_t modes;
	uint8_t nnodes;
	struct tok nodes[MAX_GRAPH_NODES]; /* 0 is the start */
};

static struct ccmd **commands;
static size_t ncommands;

static const struct cmd_node_def nodes[CMD_NODE_BUILTIN_COUNT] = {
	[CMD_NODE_EXEC] = {"exec", ">", -1, false},
	[CMD_NODE_ENABLE] = {"enable", "#", -1, false},
	[CMD_NODE_CONFIG] = {"config", "(config)#", CMD_NODE_ENABLE, true},
	[CMD_NODE_CONFIG_IF] = {"config-if", "(config-if)#", CMD_NODE_CONFIG, true},
	[CMD_NODE_FILTER] = {"filter", "", -1, false},
};

static const char *const status_names[CMD_STATUS_COUNT] = {
	[CMD_OK] = "ok",
	[CMD_ERR_AMBIGUOUS] = "ambiguous",
	[CMD_ERR_INCOMPLETE] = "incomplete",
	[CMD_ERR_INVALID] = "invalid",
	[CMD_ERR_FAILED] = "failed",
	[CMD_ERR_DENIED] = "denied",
	[CMD_ERR_TOO_LONG] = "too-long",
	[CMD_ERR_PROTOCOL] = "protocol",
	[CMD_CLOSE] = "close",
	[CMD_MORE] = "more",
};

const char *cmd_status_name(int status)
{
	return status >= 0 && status < CMD_STATUS_COUNT ? status_names[status] : "unknown";
}

const struct cmd_node_def *cmd_node_get(int node)
{
	return node >= 0 && node < CMD_NODE_BUILTIN_COUNT ? &nodes[node] : NULL;
}

/* ---- spec compiler ---- */

struct spec_parser {
	struct ccmd *c;
	const char *p;
	const char *help;
	const char *spec; /* for messages */
};

static uint8_t graph_node(struct spec_parser *sp, uint8_t type)
{
	struct ccmd *c = sp->c;

	if (c->nnodes >= MAX_GRAPH_NODES)
		cmd_panic("command \"%s\": too many tokens", sp->spec);
	c->nodes[c->nnodes].type = type;
	return c->nnodes++;
}

static void graph_edge(struct spec_parser *sp, uint8_t from, uint8_t to)
{
	struct tok *t = &sp->c->nodes[from];

	if (t->nedges >= MAX_EDGES)
		cmd_panic("command \"%s\": too many alternatives", sp->spec);
	t->edges[t->nedges++] = to;
}

static char spec_peek(struct spec_parser *sp)
{
	while (*sp->p == ' ')
		sp->p++;
	if (*sp->p != '\0' && strchr("[]()|", *sp->p) != NULL)
		return *sp->p;
	return *sp->p == '\0' ? '\0' : 'w';
}

static char *next_help(struct spec_parser *sp, const char *token)
{
	const char *nl;
	char *h;

	if (sp->help == NULL || (nl = strchr(sp->help, '\n')) == NULL)
		cmd_panic("command \"%s\": no help line for \"%s\"", sp->spec, token);
	h = strndup(sp->help, (size_t)(nl - sp->help));
	if (h == NULL)
		cmd_panic("out of memory");
	sp->help = nl + 1;
	return h;
}

static bool all_upper(const char *s, size_t n)
{
	bool letter = false;

	for (size_t i = 0; i < n; i++) {
		if (islower((unsigned char)s[i]))
			return false;
		if (isupper((unsigned char)s[i]))
			letter = true;
	}
	return letter;
}

static uint8_t spec_atom(struct spec_parser *sp)
{
	const char *start = sp->p, *dollar;
	size_t len, textlen;
	uint8_t n;
	struct tok *t;

	while (*sp->p != '\0' && *sp->p != ' ' && strchr("[]()|", *sp->p) == NULL)
		sp->p++;
	len = (size_t)(sp->p - start);
	dollar = memchr(start, '$', len);
	textlen = dollar != NULL ? (size_t)(dollar - start) : len;
	n = graph_node(sp, TK_KEYWORD);
	t = &sp->c->nodes[n];
	t->text = strndup(start, textlen);
	t->name = dollar != NULL ? strndup(dollar + 1, len - textlen - 1) : strndup(start, textlen);
	if (t->text == NULL || t->name == NULL)
		cmd_panic("out of memory");
	if (strcmp(t->text, "WORD") == 0) {
		t->type = TK_WORD;
	} else if (strcmp(t->text, "IFNAME") == 0) {
		t->type = TK_IFNAME;
	} else if (strcmp(t->text, "A.B.C.D") == 0) {
		t->type = TK_IPV4;
	} else if (strcmp(t->text, "X:X::X:X") == 0) {
		t->type = TK_IPV6;
	} else if (strcmp(t->text, "LINE") == 0) {
		t->type = TK_LINE;
	} else if (t->text[0] == '<') {
		char *end;

		t->type = TK_RANGE;
		errno = 0;
		t->lo = strtoll(t->text + 1, &end, 10);
		if (errno != 0 || *end != '-')
			cmd_panic("command \"%s\": bad range %s", sp->spec, t->text);
		t->hi = strtoll(end + 1, &end, 10);
		if (errno != 0 || strcmp(end, ">") != 0 || t->hi < t->lo)
			cmd_panic("command \"%s\": bad range %s", sp->spec, t->text);
	} else if (all_upper(t->text, textlen)) {
		t->type = TK_WORD; /* any other upper-case variable: NAME, REGEX */
	} else if (dollar != NULL) {
		cmd_panic("command \"%s\": keyword %s cannot be renamed", sp->spec, t->text);
	}
	t->help = next_help(sp, t->text);
	return n;
}

static uint8_t spec_sequence(struct spec_parser *sp, uint8_t prev);

static uint8_t spec_group(struct spec_parser *sp, uint8_t prev, char closer)
{
	uint8_t fork = graph_node(sp, TK_FORK), join;

	graph_edge(sp, prev, fork);
	join = graph_node(sp, TK_JOIN);
	for (;;) {
		uint8_t last = spec_sequence(sp, fork);
		char c = spec_peek(sp);

		if (last == fork)
			cmd_panic("command \"%s\": empty alternative", sp->spec);
		graph_edge(sp, last, join);
		if (c == '|') {
			sp->p++;
			continue;
		}
		if (c != closer)
			cmd_panic("command \"%s\": expected '%c'", sp->spec, closer);
		sp->p++;
		break;
	}
	if (closer == ']')
		graph_edge(sp, fork, join);
	return join;
}

static uint8_t spec_sequence(struct spec_parser *sp, uint8_t prev)
{
	for (;;) {
		char c = spec_peek(sp);

		if (c == '\0' || c == '|' || c == ']' || c == ')')
			return prev;
		sp->p++;
		if (c == '[') {
			prev = spec_group(sp, prev, ']');
		} else if (c == '(') {
			prev = spec_group(sp, prev, ')');
		} else {
			uint8_t n;

			sp->p--;
			n = spec_atom(sp);
			graph_edge(sp, prev, n);
			prev = n;
		}
	}
}

static void closure(const struct ccmd *c, uint8_t from, uint64_t *toks, bool *end, uint64_t *seen)
{
	const struct tok *t = &c->nodes[from];

	for (unsigned i = 0; i < t->nedges; i++) {
		uint8_t to = t->edges[i];
		uint8_t type = c->nodes[to].type;

		if (type == TK_END) {
			*end = true;
		} else if (type == TK_FORK || type == TK_JOIN) {
			if (!(*seen & (1ull << to))) {
				*seen |= 1ull << to;
				closure(c, to, toks, end, seen);
			}
		} else {
			*toks |= 1ull << to;
		}
	}
}

static struct ccmd *compile(
	const struct cmd_def *def, const char *spec, const char *help, bool negate)
{
	struct ccmd *c = calloc(1, sizeof(*c));
	struct spec_parser sp = {c, spec, help, spec};
	uint8_t last, end;
	unsigned ntokens = 0;

	if (c == NULL)
		cmd_panic("out of memory");
	c->def = def;
	c->negate = negate;
	c->modes = def->modes;
	graph_node(&sp, TK_FORK); /* start */
	last = spec_sequence(&sp, 0);
	if (spec_peek(&sp) != '\0')
		cmd_panic("command \"%s\": unbalanced '%c'", spec, *sp.p);
	if (sp.help == NULL || *sp.help != '\0')
		cmd_panic("command \"%s\": more help lines than tokens", spec);
	end = graph_node(&sp, TK_END);
	graph_edge(&sp, last, end);
	for (uint8_t i = 0; i < c->nnodes; i++) {
		struct tok *t = &c->nodes[i];
		uint64_t seen = 0;

		closure(c, i, &t->next, &t->next_end, &seen);
		if (t->type <= TK_LINE)
			ntokens++;
		if (t->type == TK_LINE && (t->next != 0 || !t->next_end))
			cmd_panic("command \"%s\": LINE must be the last token", spec);
	}
	if (ntokens > CMD_MAX_TOKENS)
		cmd_panic("command \"%s\": more than %d tokens", spec, CMD_MAX_TOKENS);
	if (c->nodes[0].next_end)
		cmd_panic("command \"%s\": matches an empty line", spec);
	return c;
}

static void add_command(struct ccmd *c)
{
	struct ccmd **v = realloc(commands, (ncommands + 1) * sizeof(*v));

	if (v == NULL)
		cmd_panic("out of memory");
	commands = v;
	commands[ncommands++] = c;
}

void cmd_install(const struct cmd_def *defs, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		const struct cmd_def *d = &defs[i];

		add_command(compile(d, d->spec, d->help, false));
		if (d->no_spec != NULL) {
			const char *spec = d->no_spec == CMD_NO_SAME ? d->spec : d->no_spec;
			const char *help = d->no_help != NULL ? d->no_help : d->help;
			char *nspec, *nhelp;

			if (d->no_spec != CMD_NO_SAME && d->no_help == NULL)
				cmd_panic("command \"%s\": no_spec without no_help", d->spec);
			if (asprintf(&nspec, "no %s", spec) < 0 ||
				asprintf(&nhelp, "%s%s", NO_STR, help) < 0)
				cmd_panic("out of memory");
			add_command(compile(d, nspec, nhelp, true));
			free(nspec);
			free(nhelp);
		}
	}
}

void cmd_engine_free(void)
{
	for (size_t i = 0; i < ncommands; i++) {
		for (unsigned j = 0; j < commands[i]->nnodes; j++) {
			free(commands[i]->nodes[j].text);
			free(commands[i]->nodes[j].name);
			free(commands[i]->nodes[j].help);
		}
		free(commands[i]);
	}
	free(commands);
	commands = NULL;
	ncommands = 0;
}

/* ---- token checks ---- */

bool cmd_valid_ifname(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= CMD_IFNAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];

		if (ch == '/' || ch == ':' || ch <= ' ' || ch >= 0x7f)
			return false;
	}
	return true;
}

static bool parse_integer(const char *w, long long *v)
{
	char *end;

	if (*w == '\0' ||
		!(isdigit((unsigned char)*w) || (*w == '-' && isdigit((unsigned char)w[1]))))
		return false;
	errno = 0;
	*v = strtoll(w, &end, 10);
	return errno == 0 && *end == '\0';
}

static enum score token_score(const struct tok *t, const char *w)
{
	size_t wl = strlen(w);
	struct in_addr a;
	long long v;

	switch (t->type) {
	case TK_KEYWORD:
		if (strcasecmp(w, t->text) == 0)
			return SC_EXACT;
		if (wl < strlen(t->text) && strncasecmp(w, t->text, wl) == 0)
			return SC_PARTIAL;
		return SC_NONE;
	case TK_WORD:
		return SC_WORD;
	case TK_IFNAME:
		return cmd_valid_ifname(w) ? SC_IFNAME : SC_NONE;
	case TK_IPV4:
		return inet_pton(AF_INET, w, &a) == 1 ? SC_TYPED : SC_NONE;
	case TK_IPV6: {
		struct in6_addr a6;

		return inet_pton(AF_INET6, w, &a6) == 1 ? SC_TYPED : SC_NONE;
	}
	case TK_RANGE:
		return parse_integer(w, &v) && v >= t->lo && v <= t->hi ? SC_TYPED : SC_NONE;
	case TK_LINE:
		return SC_LINE;
	default:
		return SC_NONE;
	}
}

/* Can a word that starts with `w` still match `t`? (for `?` and TAB inside a word) */
static bool token_could_match(const struct tok *t, const char *w)
{
	size_t wl = strlen(w);

	switch (t->type) {
	case TK_KEYWORD:
		return strncasecmp(w, t->text, wl) == 0;
	case TK_WORD:
	case TK_LINE:
		return true;
	case TK_IFNAME:
		return cmd_valid_ifname(w);
	case TK_IPV4: {
		unsigned dots = 0, digits = 0, value = 0;

		for (size_t i = 0; i < wl; i++) {
			if (w[i] == '.') {
				if (digits == 0 || ++dots > 3)
					return false;
				digits = value = 0;
			} else if (isdigit((unsigned char)w[i])) {
				value = value * 10 + (unsigned)(w[i] - '0');
				if (++digits > 3 || value > 255)
					return false;
			} else {
				return false;
			}
		}
		return true;
	}
	case TK_IPV6:
		/* hex digits and colons, an IPv4 tail's dots; at least one colon once past 4 */
		for (size_t i = 0; i < wl; i++)
			if (!isxdigit((unsigned char)w[i]) && w[i] != ':' && w[i] != '.')
				return false;
		return wl <= 4 || strchr(w, ':') != NULL;
	case TK_RANGE: {
		long long v, scale = 1;
		bool negative = w[0] == '-';

		if (strcmp(w, "-") == 0)
			return t->lo < 0;
		if (!parse_integer(w, &v))
			return false;
		/* Does some number in range begin with these digits? */
		for (int k = 0; k < 19; k++) {
			long long base, lo, hi;

			if (__builtin_mul_overflow(v, scale, &base))
				break;
			lo = negative ? base - (scale - 1) : base;
			hi = negative ? base : base + (scale - 1);
			if (hi >= t->lo && lo <= t->hi)
				return true;
			if (__builtin_mul_overflow(scale, 10, &scale))
				break;
		}
		return false;
	}
	default:
		return false;
	}
}

/* ---- words ---- */

struct words {
	size_t n;
	const char **w; /* NUL-terminated copies */
	size_t *off;	/* offsets in the original line */
	char *split;	/* the copy the words point into */
	char *orig;	/* an untouched copy for LINE values */
};

static void words_free(struct words *ws)
{
	free(ws->w);
	free(ws->off);
	free(ws->split);
	free(ws->orig);
	memset(ws, 0, sizeof(*ws));
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int words_split(struct words *ws, const char *line)
{
	size_t len = strlen(line), cap = len / 2 + 2;

	memset(ws, 0, sizeof(*ws));
	ws->split = strdup(line);
	ws->orig = strdup(line);
	ws->w = calloc(cap, sizeof(*ws->w));
	ws->off = calloc(cap, sizeof(*ws->off));
	if (ws->split == NULL || ws->orig == NULL || ws->w == NULL || ws->off == NULL) {
		words_free(ws);
		return -1;
	}
	for (size_t i = 0; i < len;) {
		if (is_blank(ws->split[i])) {
			ws->split[i++] = '\0';
			continue;
		}
		ws->w[ws->n] = ws->split + i;
		ws->off[ws->n++] = i;
		while (i < len && !is_blank(ws->split[i]))
			i++;
	}
	return 0;
}

/* ---- matcher ---- */

struct cand {
	struct ccmd *c;
	uint64_t live; /* token nodes reached by the last word (0 with no word yet) */
	int line_from; /* word index where a LINE token took the rest, or -1 */
	/* predecessor of each live node per word: rows 0..depth, from the match's pred_block */
	uint8_t (*pred)[MAX_GRAPH_NODES];
	uint8_t depth; /* words matched (until LINE) */
};

struct hit {
	uint32_t cand;
	uint8_t node;
	uint8_t from;
	uint8_t score;
};

struct match {
	int status;
	size_t bad_word; /* invalid input / ambiguity: index of the word */
	struct cand *cands;
	size_t ncands;
	/* one row of MAX_GRAPH_NODES bytes per word (and one more) per candidate that matched the
	   first word: sized by the line, not by CMD_MAX_TOKENS, and by the commands the first word
	   leaves, not by all of the mode's, so a line costs kilobytes, not a quarter megabyte */
	uint8_t (*pred_block)[MAX_GRAPH_NODES];
	struct cand *winner;
	uint8_t end_node; /* the winner's last node */
};

static void match_free(struct match *m)
{
	free(m->cands);
	free(m->pred_block);
	memset(m, 0, sizeof(*m));
}

static bool command_visible(const struct ccmd *c, int node)
{
	return (c->modes & CMD_MODE(node)) != 0;
}

static uint64_t cand_next(const struct cand *cd)
{
	if (cd->depth == 0)
		return cd->c->nodes[0].next;
	if (cd->line_from >= 0)
		return 0;
	uint64_t next = 0;

	for (uint64_t live = cd->live; live != 0; live &= live - 1)
		next |= cd->c->nodes[__builtin_ctzll(live)].next;
	return next;
}

static bool cand_can_end(const struct cand *cd, uint8_t *end_node)
{
	if (cd->depth == 0)
		return false;
	if (cd->line_from >= 0) {
		*end_node = (uint8_t)__builtin_ctzll(cd->live);
		return true;
	}
	for (uint64_t live = cd->live; live != 0; live &= live - 1) {
		unsigned n = (unsigned)__builtin_ctzll(live);

		if (cd->c->nodes[n].next_end) {
			*end_node = (uint8_t)n;
			return true;
		}
	}
	return false;
}

/* Gives each candidate with a hit of score `best` (hits in candidate order) its `rows` rows of
 * predecessors from one block. */
static int pred_rows(
	struct match *m, const struct hit *hits, size_t nhits, uint8_t best, size_t rows)
{
	size_t kept = 0;
	uint32_t last = UINT32_MAX;

	for (size_t h = 0; h < nhits; h++) {
		if (hits[h].score == best && hits[h].cand != last) {
			last = hits[h].cand;
			kept++;
		}
	}
	m->pred_block = malloc((kept ? kept : 1) * rows * sizeof(*m->pred_block));
	if (m->pred_block == NULL)
		return -1;
	kept = 0;
	last = UINT32_MAX;
	for (size_t h = 0; h < nhits; h++) {
		if (hits[h].score == best && hits[h].cand != last) {
			last = hits[h].cand;
			m->cands[last].pred = m->pred_block + kept++ * rows;
		}
	}
	return 0;
}

/* Matches words [first, first + count) against the commands of `node`. */
static int match_words(
	struct match *m, int node, const struct words *ws, size_t first, size_t count)
{
	struct hit *hits = NULL;
	size_t hcap = 0;

	size_t visible = 0, rows = (count < CMD_MAX_TOKENS ? count : CMD_MAX_TOKENS) + 1;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < ncommands; i++)
		visible += command_visible(commands[i], node);
	m->cands = calloc(visible ? visible : 1, sizeof(*m->cands));
	if (m->cands == NULL)
		return m->status = CMD_ERR_FAILED;
	for (size_t i = 0; i < ncommands; i++) {
		if (!command_visible(commands[i], node))
			continue;
		m->cands[m->ncands].c = commands[i];
		m->cands[m->ncands].line_from = -1;
		m->ncands++;
	}
	for (size_t wi = 0; wi < count; wi++) {
		const char *word = ws->w[first + wi];
		size_t nhits = 0;
		uint8_t best = SC_NONE;
		const char *partial_kw = NULL;

		for (size_t ci = 0; ci < m->ncands; ci++) {
			struct cand *cd = &m->cands[ci];
			uint64_t next;

			if (cd->c == NULL)
				continue;
			if (cd->line_from >= 0) {
				if (nhits == hcap) {
					hcap = hcap ? hcap * 2 : 64;
					hits = realloc(hits, hcap * sizeof(*hits));
					if (hits == NULL)
						return m->status = CMD_ERR_FAILED;
				}
				hits[nhits++] = (struct hit){(uint32_t)ci, 0, 0, SC_LINE};
				if (best < SC_LINE)
					best = SC_LINE;
				continue;
			}
			/* the set bits only: lines are matched against every command of the mode */
			next = cand_next(cd);
			for (; next != 0; next &= next - 1) {
				unsigned n = (unsigned)__builtin_ctzll(next);
				enum score sc;
				uint8_t from = 0;

				sc = token_score(&cd->c->nodes[n], word);
				if (sc == SC_NONE)
					continue;
				if (cd->depth > 0) {
					/* the first live node that leads here */
					for (uint64_t live = cd->live; live != 0;
						live &= live - 1) {
						unsigned p = (unsigned)__builtin_ctzll(live);

						if (cd->c->nodes[p].next & (1ull << n)) {
							from = (uint8_t)p;
							break;
						}
					}
				}
				if (nhits == hcap) {
					hcap = hcap ? hcap * 2 : 64;
					hits = realloc(hits, hcap * sizeof(*hits));
					if (hits == NULL)
						return m->status = CMD_ERR_FAILED;
				}
				hits[nhits++] =
					(struct hit){(uint32_t)ci, (uint8_t)n, from, (uint8_t)sc};
				if (sc > best)
					best = (uint8_t)sc;
			}
		}
		if (best == SC_NONE) {
			free(hits);
			m->bad_word = first + wi;
			return m->status = CMD_ERR_INVALID;
		}
		if (best == SC_PARTIAL) {
			for (size_t h = 0; h < nhits; h++) {
				const char *kw;

				if (hits[h].score != SC_PARTIAL)
					continue;
				kw = m->cands[hits[h].cand].c->nodes[hits[h].node].text;
				if (partial_kw == NULL)
					partial_kw = kw;
				else if (strcasecmp(partial_kw, kw) != 0) {
					free(hits);
					m->bad_word = first + wi;
					return m->status = CMD_ERR_AMBIGUOUS;
				}
			}
		}
		/* After the first word: rows of predecessors for the candidates it leaves. Not
		   cleared: a cell is written when its node becomes live, and bind_args() reads only
		   those. */
		if (wi == 0 && pred_rows(m, hits, nhits, best, rows) < 0) {
			free(hits);
			return m->status = CMD_ERR_FAILED;
		}
		/* Survivors: candidates with a best-score hit; their new live set. The hits come in
		   candidate order, so each candidate's are the next run of them. The survivors move
		   to the front, in order, so the next word looks at them alone. */
		size_t kept = 0;

		for (size_t ci = 0, h = 0; ci < m->ncands; ci++) {
			struct cand *cd = &m->cands[ci];
			uint64_t live = 0;
			bool kept_line = false;

			for (; h < nhits && hits[h].cand == ci; h++) {
				if (hits[h].score != best)
					continue;
				if (cd->line_from >= 0) {
					kept_line = true;
					continue;
				}
				if (!(live & (1ull << hits[h].node))) {
					live |= 1ull << hits[h].node;
					cd->pred[cd->depth][hits[h].node] = hits[h].from;
				}
			}
			if (!kept_line) {
				if (live == 0)
					continue;
				cd->live = live;
				/* A LINE token swallows every further word. */
				for (uint64_t l = live; l != 0; l &= l - 1) {
					unsigned n = (unsigned)__builtin_ctzll(l);

					if (cd->c->nodes[n].type == TK_LINE) {
						cd->live = 1ull << n;
						cd->line_from = (int)wi;
						break;
					}
				}
				cd->depth++;
			}
			m->cands[kept++] = *cd;
		}
		m->ncands = kept;
	}
	free(hits);
	return m->status = CMD_OK;
}

/* How far a failed match got: the bad word, or every word when it was incomplete. */
static size_t match_progress(const struct match *m, size_t end)
{
	return m->status == CMD_ERR_INVALID || m->status == CMD_ERR_AMBIGUOUS ? m->bad_word : end;
}

/* After match_words() succeeded: exactly one complete command, or an error. */
static int match_resolve(struct match *m)
{
	size_t complete = 0;

	for (size_t ci = 0; ci < m->ncands; ci++) {
		struct cand *cd = &m->cands[ci];
		uint8_t end;

		if (cd->c == NULL || !cand_can_end(cd, &end))
			continue;
		if (complete == 0) {
			m->winner = cd;
			m->end_node = end;
		}
		complete++;
	}
	if (complete == 1)
		return m->status = CMD_OK;
	m->winner = NULL;
	return m->status = complete > 1 ? CMD_ERR_AMBIGUOUS : CMD_ERR_INCOMPLETE;
}

static void bind_args(
	const struct match *m, const struct words *ws, size_t first, struct cmd_args *a)
{
	const struct cand *cd = m->winner;
	uint8_t path[CMD_MAX_TOKENS + 1];
	uint8_t node = m->end_node;

	memset(a, 0, sizeof(*a));
	a->def = cd->c->def;
	a->compiled = cd->c;
	a->negate = cd->c->negate;
	for (int d = cd->depth - 1; d >= 0; d--) {
		path[d] = node;
		node = cd->pred[d][node];
	}
	for (unsigned d = 0; d < cd->depth && a->argc < CMD_MAX_TOKENS; d++) {
		const struct tok *t = &cd->c->nodes[path[d]];
		struct cmd_arg *arg = &a->argv[a->argc++];

		arg->name = t->name;
		arg->keyword = t->type == TK_KEYWORD;
		arg->value = ws->w[first + d];
		if (t->type == TK_LINE) {
			char *v = ws->orig + ws->off[first + d];
			size_t len = strlen(v);

			while (len > 0 && is_blank(v[len - 1]))
				v[--len] = '\0';
			arg->value = v;
		}
	}
}

const char *cmd_arg(const struct cmd_args *a, const char *name)
{
	const struct ccmd *c = a->compiled;

	for (int i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i].name, name) == 0)
			return a->argv[i].keyword ? a->argv[i].name : a->argv[i].value;
	for (unsigned n = 0; c != NULL && n < c->nnodes; n++)
		if (c->nodes[n].name != NULL && strcmp(c->nodes[n].name, name) == 0)
			return NULL; /* an optional part not given */
	cmd_panic("command \"%s\": no argument named %s", a->def->spec, name);
}

bool cmd_arg_has(const struct cmd_args *a, const char *name)
{
	return cmd_arg(a, name) != NULL;
}

long long cmd_arg_int(const struct cmd_args *a, const char *name, long long dflt)
{
	const char *v = cmd_arg(a, name);

	return v != NULL ? strtoll(v, NULL, 10) : dflt;
}

void cmd_panic(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "command engine: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/* ---- hostname ---- */

static char hostname[CMD_HOSTNAME_MAX];	   /* configured */
static char system_name[CMD_HOSTNAME_MAX]; /* used when none is */

const char *cmd_hostname(void)
{
	char *dot;

	if (hostname[0] != '\0')
		return hostname;
	if (system_name[0] == '\0') {
		if (gethostname(system_name, sizeof(system_name)) < 0 || system_name[0] == '\0')
			snprintf(system_name, sizeof(system_name), "pgmrouter");
		system_name[sizeof(system_name) - 1] = '\0';
		if ((dot = strchr(system_name, '.')) != NULL)
			*dot = '\0';
	}
	return system_name;
}

void cmd_set_hostname(const char *name)
{
	snprintf(hostname, sizeof(hostname), "%s", name != NULL ? name : "");
}

void cmd_set_system_hostname(const char *name)
{
	snprintf(system_name, sizeof(system_name), "%s", name);
}

/* ---- sessions and output ---- */

void cmd_session_init(struct cmd_session *s, int node, cmd_write_fn write, void *owner)
{
	memset(s, 0, sizeof(*s));
	s->node = node;
	s->write = write;
	s->owner = owner;
	s->term_length = CMD_TERM_LENGTH_UNSET;
}

void cmd_abort(struct cmd_session *s)
{
	if (s->cont_free != NULL && s->cont_arg != NULL)
		s->cont_free(s->cont_arg);
	s->cont = NULL;
	s->cont_arg = NULL;
	s->cont_free = NULL;
}

void cmd_session_release(struct cmd_session *s)
{
	cmd_abort(s);
	if (!s->edit_held)
		cfg_destroy(s->edit);
	s->edit = NULL;
	for (unsigned i = 0; i < CMD_HISTORY_SIZE; i++) {
		free(s->history[i]);
		s->history[i] = NULL;
	}
}

size_t cmd_prompt(const struct cmd_session *s, char *buf, size_t len)
{
	const struct cmd_node_def *n = cmd_node_get(s->node);
	int r = snprintf(buf, len, "%s%s", cmd_hostname(), n != NULL ? n->prompt_suffix : "#");

	return r < 0 ? 0 : (size_t)r < len ? (size_t)r : len - 1;
}

void cmd_write(struct cmd_session *s, const char *data, size_t len)
{
	if (len > 0)
		s->write(s, data, len);
}

void cmd_vout(struct cmd_session *s, const char *fmt, va_list ap)
{
	char small[1024], *big = NULL;
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0) {
		va_end(ap2);
		return;
	}
	if ((size_t)n < sizeof(small)) {
		cmd_write(s, small, (size_t)n);
	} else if ((big = malloc((size_t)n + 1)) != NULL) {
		vsnprintf(big, (size_t)n + 1, fmt, ap2);
		cmd_write(s, big, (size_t)n);
		free(big);
	}
	va_end(ap2);
}

void cmd_out(struct cmd_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vout(s, fmt, ap);
	va_end(ap);
}

void cmd_set_continuation(struct cmd_session *s, cmd_cont_fn fn, void *arg, void (*free_fn)(void *))
{
	s->cont = fn;
	s->cont_arg = arg;
	s->cont_free = free_fn;
}

#define STREAM_CHUNK 16384

struct text_stream {
	char *text;
	size_t len, off;
};

static void text_stream_free(void *arg)
{
	struct text_stream *ts = arg;

	free(ts->text);
	free(ts);
}

static int text_stream_next(struct cmd_session *s, void *arg)
{
	struct text_stream *ts = arg;
	size_t n = ts->len - ts->off < STREAM_CHUNK ? ts->len - ts->off : STREAM_CHUNK;

	cmd_write(s, ts->text + ts->off, n);
	ts->off += n;
	return ts->off < ts->len ? CMD_MORE : CMD_OK;
}

int cmd_out_stream(struct cmd_session *s, char *text, size_t len)
{
	struct text_stream *ts = calloc(1, sizeof(*ts));

	if (ts == NULL) {
		free(text);
		cmd_out(s, "%% Out of memory\n");
		return CMD_ERR_FAILED;
	}
	ts->text = text;
	ts->len = len;
	cmd_set_continuation(s, text_stream_next, ts, text_stream_free);
	return CMD_MORE;
}

void cmd_enter_node(struct cmd_session *s, int node)
{
	if (node >= 0 && node < CMD_NODE_BUILTIN_COUNT)
		s->node = node;
}

void cmd_history_add(struct cmd_session *s, const char *line)
{
	unsigned slot = s->history_count % CMD_HISTORY_SIZE;
	char *copy = strdup(line);

	if (copy == NULL)
		return;
	free(s->history[slot]);
	s->history[slot] = copy;
	s->history_count++;
}

/* ---- the front end: `do`, `|`, fallback to the parent node, errors ---- */

static bool pipe_allowed(int node)
{
	return node == CMD_NODE_EXEC || node == CMD_NODE_ENABLE;
}

static bool is_do(const struct cmd_session *s, const struct words *ws)
{
	const struct cmd_node_def *n = cmd_node_get(s->node);

	return n != NULL && n->config && ws->n > 0 && strcasecmp(ws->w[0], "do") == 0;
}

static size_t find_pipe(const struct words *ws, size_t first)
{
	for (size_t i = first; i < ws->n; i++)
		if (strcmp(ws->w[i], "|") == 0)
			return i;
	return ws->n;
}

/* Line mode: the command is not on the screen, so show it for the caret to point into. */
static void echo_line(struct cmd_session *s, const char *line)
{
	char prompt[128];

	if (!s->echo_on_error)
		return;
	cmd_prompt(s, prompt, sizeof(prompt));
	cmd_out(s, "%s%s\n", prompt, line);
}

static void print_error(struct cmd_session *s, int status, const struct words *ws, size_t bad_word,
	size_t prompt_len, const char *line)
{
	s->last_error.status = status;
	s->last_error.offset = 0;
	s->last_error.word[0] = '\0';
	if (status == CMD_ERR_INVALID && bad_word < ws->n) {
		s->last_error.offset = ws->off[bad_word];
		snprintf(s->last_error.word, sizeof(s->last_error.word), "%s", ws->w[bad_word]);
	} else if (status == CMD_ERR_INVALID) {
		s->last_error.offset = strlen(line);
	}
	if (s->batch)
		return;
	echo_line(s, line);
	switch (status) {
	case CMD_ERR_INVALID:
		cmd_out(s, "%*s^\n", (int)(prompt_len + s->last_error.offset), "");
		cmd_out(s, "%% Invalid input detected at '^' marker.\n");
		break;
	case CMD_ERR_AMBIGUOUS: {
		size_t len;

		while (is_blank(*line))
			line++;
		len = strlen(line);
		while (len > 0 && is_blank(line[len - 1]))
			len--;
		cmd_out(s, "%% Ambiguous command:  \"%.*s\"\n", (int)len, line);
		break;
	}
	case CMD_ERR_INCOMPLETE:
		cmd_out(s, "%% Incomplete command.\n");
		break;
	default:
		break;
	}
}

/* Checks characters and length; prints the error. */
static int check_line(struct cmd_session *s, const char *line, size_t prompt_len)
{
	size_t len = strlen(line);

	if (len > CMD_LINE_MAX) {
		s->last_error.status = CMD_ERR_TOO_LONG;
		if (!s->batch)
			cmd_out(s, "%% Line too long (%zu characters, at most %d).\n", len,
				CMD_LINE_MAX);
		return CMD_ERR_TOO_LONG;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			s->last_error.status = CMD_ERR_INVALID;
			s->last_error.offset = i;
			snprintf(s->last_error.word, sizeof(s->last_error.word), "\\x%02x", c);
			if (!s->batch) {
				echo_line(s, line);
				cmd_out(s, "%*s^\n", (int)(prompt_len + i), "");
				cmd_out(s, "%% Invalid input detected at '^' marker.\n");
			}
			return CMD_ERR_INVALID;
		}
	}
	return CMD_OK;
}

static int install_filter(struct cmd_session *s, const struct words *ws, size_t pipe,
	size_t prompt_len, const char *line)
{
	struct match m;
	struct cmd_args a;
	const char *kind, *regex;
	int rc;

	if (pipe + 1 >= ws->n) {
		print_error(s, CMD_ERR_INCOMPLETE, ws, 0, prompt_len, line);
		return CMD_ERR_INCOMPLETE;
	}
	if (match_words(&m, CMD_NODE_FILTER, ws, pipe + 1, ws->n - pipe - 1) == CMD_OK)
		match_resolve(&m);
	if (m.status != CMD_OK) {
		rc = m.status;
		print_error(s, rc, ws, m.bad_word, prompt_len, line);
		match_free(&m);
		return rc;
	}
	bind_args(&m, ws, pipe + 1, &a);
	match_free(&m);
	kind = a.argv[0].name;
	regex = cmd_arg(&a, "LINE");
	if (regex == NULL)
		return CMD_ERR_FAILED;
	if (s->filter == NULL) {
		cmd_out(s, "%% Output filters are not available here\n");
		s->last_error.status = CMD_ERR_FAILED;
		return CMD_ERR_FAILED;
	}
	rc = s->filter(s,
		strcmp(kind, "begin") == 0	 ? CMD_FILTER_BEGIN
		: strcmp(kind, "include") == 0 ? CMD_FILTER_INCLUDE
					       : CMD_FILTER_EXCLUDE,
		regex);
	if (rc != CMD_OK)
		s->last_error.status = rc;
	return rc;
}

int cmd_execute(struct cmd_session *s, const char *line)
{
	char prompt[128];
	size_t prompt_len = cmd_prompt(s, prompt, sizeof(prompt));
	struct words ws;
	struct match m;
	struct cmd_args args;
	size_t first = 0, end;
	int node = s->node, rc;
	bool via_do = false;

	s->last_error.status = CMD_OK;
	if (s->cont != NULL)
		cmd_abort(s);
	if ((rc = check_line(s, line, prompt_len)) != CMD_OK)
		return rc;
	if (words_split(&ws, line) < 0)
		return CMD_ERR_FAILED;
	if (ws.n == 0) {
		words_free(&ws);
		return CMD_OK;
	}
	if (!s->batch)
		cmd_history_add(s, line);
	if (is_do(s, &ws)) {
		via_do = true;
		first = 1;
		node = s->read_only ? CMD_NODE_EXEC : CMD_NODE_ENABLE;
		if (ws.n == 1) {
			print_error(s, CMD_ERR_INCOMPLETE, &ws, 0, prompt_len, line);
			words_free(&ws);
			return CMD_ERR_INCOMPLETE;
		}
	}
	end = pipe_allowed(node) ? find_pipe(&ws, first) : ws.n;
	if (match_words(&m, node, &ws, first, end - first) == CMD_OK)
		match_resolve(&m);
	if (m.status != CMD_OK && !via_do) {
		/* IOS: a command of an enclosing configuration node leaves the sub-mode. */
		const struct cmd_node_def *nd = cmd_node_get(node);

		while (nd != NULL && nd->config && nd->parent >= 0) {
			const struct cmd_node_def *pd = cmd_node_get(nd->parent);
			struct match pm;
			int parent = nd->parent;

			if (pd == NULL || !pd->config)
				break;
			if (match_words(&pm, parent, &ws, first, end - first) == CMD_OK &&
				match_resolve(&pm) == CMD_OK) {
				match_free(&m);
				m = pm;
				node = parent;
				break;
			}
			/* the error of the node that understood more of the line says more */
			if (match_progress(&pm, end) > match_progress(&m, end)) {
				match_free(&m);
				m = pm;
			} else {
				match_free(&pm);
			}
			nd = pd;
		}
	}
	if (m.status != CMD_OK) {
		rc = m.status;
		print_error(s, rc, &ws, m.bad_word, prompt_len, line);
		match_free(&m);
		words_free(&ws);
		return rc;
	}
	bind_args(&m, &ws, first, &args);
	match_free(&m);
	if (args.def->priv == CMD_PRIV_ADMIN && s->read_only) {
		s->last_error.status = CMD_ERR_DENIED;
		if (!s->batch)
			cmd_out(s, "%% Permission denied: this session is read-only.\n");
		words_free(&ws);
		return CMD_ERR_DENIED;
	}
	if (end < ws.n && (rc = install_filter(s, &ws, end, prompt_len, line)) != CMD_OK) {
		words_free(&ws);
		return rc;
	}
	if (via_do && s->check_only) {
		words_free(&ws);
		return CMD_OK;
	}
	if (node != s->node && !via_do)
		s->node = node; /* left the sub-mode */
	if (args.def->handler == NULL) {
		rc = CMD_OK;
	} else if (via_do) {
		/* `do` runs the command as in enable mode, then comes back. */
		int saved = s->node;

		s->node = node;
		rc = args.def->handler(s, &args);
		if (s->node == node)
			s->node = saved;
	} else {
		rc = args.def->handler(s, &args);
	}
	words_free(&ws);
	rc = cfg_edit_end(s, rc);
	if (rc == CMD_MORE && s->cont == NULL)
		rc = CMD_ERR_FAILED;
	if (rc == CMD_MORE) {
		s->cont_status = CMD_OK;
		return rc;
	}
	if (rc != CMD_OK && rc != CMD_CLOSE)
		s->last_error.status = rc;
	return rc;
}

int cmd_continue(struct cmd_session *s)
{
	int rc;

	if (s->cont == NULL)
		return CMD_OK;
	rc = s->cont(s, s->cont_arg);
	if (rc == CMD_MORE)
		return rc;
	if (s->cont_free != NULL && s->cont_arg != NULL)
		s->cont_free(s->cont_arg);
	s->cont = NULL;
	s->cont_arg = NULL;
	s->cont_free = NULL;
	if (rc != CMD_OK)
		s->last_error.status = rc;
	return rc;
}

/* ---- `?` and TAB ---- */

struct offer {
	const struct tok *t;
};

static int offer_cmp(const void *a, const void *b)
{
	const struct offer *x = a, *y = b;

	return strcmp(x->t->text, y->t->text);
}

static bool same_offer(const struct tok *a, const struct tok *b)
{
	return a->type == b->type && strcmp(a->text, b->text) == 0;
}

/* The tokens the live candidates offer for the next word; `partial` restricts to those the
   partial word can still become (NULL: all). */
static size_t collect_offers(const struct cmd_session *s, const struct match *m,
	const char *partial, bool *can_end, struct offer **out)
{
	struct offer *v = NULL;
	size_t n = 0, cap = 0;

	*can_end = false;
	for (size_t ci = 0; ci < m->ncands; ci++) {
		const struct cand *cd = &m->cands[ci];
		uint64_t next;
		uint8_t end;

		if (cd->c == NULL)
			continue;
		if ((cd->c->def->flags & CMD_F_HIDDEN) ||
			(s->read_only && cd->c->def->priv == CMD_PRIV_ADMIN))
			continue;
		if (cand_can_end(cd, &end))
			*can_end = true;
		next = cand_next(cd);
		if (cd->line_from >= 0)
			next = cd->live; /* more of the same LINE */
		for (; next != 0; next &= next - 1) {
			const struct tok *tk = &cd->c->nodes[__builtin_ctzll(next)];
			bool dup = false;

			if (partial != NULL && !token_could_match(tk, partial))
				continue;
			for (size_t i = 0; i < n && !dup; i++)
				dup = same_offer(v[i].t, tk);
			if (dup)
				continue;
			if (n == cap) {
				struct offer *nv;

				cap = cap ? cap * 2 : 32;
				nv = realloc(v, cap * sizeof(*v));
				if (nv == NULL)
					break;
				v = nv;
			}
			v[n++].t = tk;
		}
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), offer_cmp);
	*out = v;
	return n;
}

static const struct tok do_token = {
	.type = TK_KEYWORD,
	.text = (char *)"do",
	.name = (char *)"do",
	.help = (char *)"To run exec commands in config mode",
};
static const struct tok pipe_token = {
	.type = TK_KEYWORD,
	.text = (char *)"|",
	.name = (char *)"|",
	.help = (char *)"Output modifiers",
};

/* Shared by `?` and TAB: where the words are matched and what is offered. */
struct offers {
	int status;
	struct offer *v;
	size_t n;
	bool can_end;
	bool partial;
	const char *partial_word;
};

static void offers_free(struct offers *o)
{
	free(o->v);
	memset(o, 0, sizeof(*o));
}

static void offers_add(struct offers *o, const struct tok *t)
{
	struct offer *nv = realloc(o->v, (o->n + 1) * sizeof(*nv));

	if (nv == NULL)
		return;
	o->v = nv;
	o->v[o->n++].t = t;
	qsort(o->v, o->n, sizeof(*o->v), offer_cmp);
}

static int gather(struct cmd_session *s, const char *line, const struct words *ws,
	size_t prompt_len, struct offers *o)
{
	size_t first = 0, complete, pipe;
	int node = s->node;
	struct match m;
	bool in_filter = false;

	memset(o, 0, sizeof(*o));
	o->partial = ws->n > 0 && line[0] != '\0' && !is_blank(line[strlen(line) - 1]);
	complete = o->partial ? ws->n - 1 : ws->n;
	o->partial_word = o->partial ? ws->w[ws->n - 1] : NULL;
	if (is_do(s, ws) && complete >= 1) {
		first = 1;
		node = s->read_only ? CMD_NODE_EXEC : CMD_NODE_ENABLE;
	}
	pipe = pipe_allowed(node) ? find_pipe(ws, first) : ws->n;
	if (pipe < complete) {
		/* Describing the filter: validate the command first. */
		if (match_words(&m, node, ws, first, pipe - first) == CMD_OK)
			match_resolve(&m);
		if (m.status != CMD_OK) {
			print_error(s, m.status, ws, m.bad_word, prompt_len, line);
			o->status = m.status;
			match_free(&m);
			return o->status;
		}
		match_free(&m);
		node = CMD_NODE_FILTER;
		first = pipe + 1;
		in_filter = true;
	}
	if (match_words(&m, node, ws, first, complete - first) != CMD_OK) {
		print_error(s, m.status, ws, m.bad_word, prompt_len, line);
		o->status = m.status;
		match_free(&m);
		return o->status;
	}
	o->n = collect_offers(s, &m, o->partial_word, &o->can_end, &o->v);
	if (complete == first && !in_filter && first == 0) {
		const struct cmd_node_def *nd = cmd_node_get(node);

		if (nd != NULL && nd->config &&
			(o->partial_word == NULL || token_could_match(&do_token, o->partial_word)))
			offers_add(o, &do_token);
	}
	if (o->can_end && !in_filter && pipe_allowed(node) &&
		(!o->partial || strcmp(o->partial_word, "|") == 0))
		offers_add(o, &pipe_token);
	if (!o->partial && complete == first && in_filter)
		o->can_end = false;
	if (o->partial ? o->n == 0 : o->n == 0 && !o->can_end) {
		/* nothing can follow: point at the word that cannot be completed */
		print_error(
			s, CMD_ERR_INVALID, ws, o->partial ? ws->n - 1 : ws->n, prompt_len, line);
		o->status = CMD_ERR_INVALID;
	}
	match_free(&m);
	return o->status;
}

int cmd_describe(struct cmd_session *s, const char *line)
{
	char prompt[128];
	size_t prompt_len = cmd_prompt(s, prompt, sizeof(prompt));
	struct words ws;
	struct offers o;
	int rc;

	if ((rc = check_line(s, line, prompt_len)) != CMD_OK)
		return rc;
	if (words_split(&ws, line) < 0)
		return CMD_ERR_FAILED;
	if (gather(s, line, &ws, prompt_len, &o) != CMD_OK) {
		rc = o.status;
		offers_free(&o);
		words_free(&ws);
		return rc;
	}
	if (o.partial) {
		/* IOS: the words the partial word can become, on as few lines as fit */
		size_t col = 0;

		for (size_t i = 0; i < o.n; i++) {
			size_t w = strlen(o.v[i].t->text) + 2;

			if (col > 0 && col + w > 79) {
				cmd_out(s, "\n");
				col = 0;
			}
			cmd_out(s, "%s  ", o.v[i].t->text);
			col += w;
		}
		cmd_out(s, "\n");
	} else {
		int width = 4; /* "<cr>" */

		for (size_t i = 0; i < o.n; i++)
			if ((int)strlen(o.v[i].t->text) > width)
				width = (int)strlen(o.v[i].t->text);
		for (size_t i = 0; i < o.n; i++)
			cmd_out(s, "  %-*s  %s\n", width, o.v[i].t->text, o.v[i].t->help);
		if (o.can_end)
			cmd_out(s, "  <cr>\n");
	}
	offers_free(&o);
	words_free(&ws);
	return CMD_OK;
}

int cmd_complete(struct cmd_session *s, const char *line, cmd_complete_fn fn, void *ctx)
{
	struct words ws;
	struct offers o;
	bool batch = s->batch;
	int rc;

	/* TAB never prints errors: it just has nothing to offer. */
	if (strlen(line) > CMD_LINE_MAX)
		return CMD_ERR_TOO_LONG;
	if (words_split(&ws, line) < 0)
		return CMD_ERR_FAILED;
	s->batch = true;
	rc = gather(s, line, &ws, 0, &o);
	s->batch = batch;
	if (rc == CMD_OK)
		for (size_t i = 0; i < o.n; i++)
			if (o.v[i].t->type == TK_KEYWORD && o.v[i].t != &pipe_token)
				fn(ctx, o.v[i].t->text);
	offers_free(&o);
	words_free(&ws);
	return rc;
}

/* The output filters, matched by the same engine. */
static const struct cmd_def filter_cmds[] = {
	{.spec = "begin LINE",
		.help = "Begin with the line that matches\nRegular expression\n",
		.modes = CMD_MODE(CMD_NODE_FILTER)},
	{.spec = "exclude LINE",
		.help = "Exclude lines that match\nRegular expression\n",
		.modes = CMD_MODE(CMD_NODE_FILTER)},
	{.spec = "include LINE",
		.help = "Include lines that match\nRegular expression\n",
		.modes = CMD_MODE(CMD_NODE_FILTER)},
};

void cmd_engine_init(void)
{
	cmd_install(filter_cmds, CMD_COUNT(filter_cmds));
}

/*
 * Shared by the test peers (pgm-send, pgm-recv, zmq-pub, zmq-sub; pgm-dlr for its number parsing):
 * the self-checking payload, the delivery tracker that proves "every message exactly once and in
 * order", option parsing and the machine-readable summary line; the stop flag, its signal handler
 * and the clocks are tests/lib/tool.h's.
 *
 * Payload layout (big endian), SIZE bytes in total, SIZE >= PEER_HEADER_LEN:
 *   0  magic    "PLAB"
 *   4  run id   chosen by the sender, so a receiver ignores traffic of another run
 *   8  sequence 0, 1, 2, ... one per message
 *  16  size     total message length, must equal the received length
 *  20  checksum FNV-1a over every byte of the message except the checksum field itself
 *  24  body     byte i of the message is (seq * 131 + i * 7) mod 256
 * A receiver recomputes the checksum and the body pattern, so truncation, corruption and
 * misdelivery are told apart from loss.
 *
 * Everything here is static inline: each peer is one .c file built into its own program.
 */
#ifndef PEER_COMMON_H
#define PEER_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/lib/tool.h"

#define PEER_MAGIC	0x504c4142u /* "PLAB" */
#define PEER_HEADER_LEN 24u
#define PEER_MAX_SIZE	65000u

/* Exit codes shared by every peer; the lab scripts rely on them. */
#define PEER_EXIT_OK	  0 /* everything delivered exactly once, in order */
#define PEER_EXIT_FAIL	  1 /* ran to the end but the delivery check failed */
#define PEER_EXIT_TIMEOUT 2 /* the run-time limit expired first */
#define PEER_EXIT_USAGE	  64
#define PEER_EXIT_SETUP	  70 /* socket creation, bind, connect failed */
/* The last lines of a receiver's usage text. */
#define PEER_RECEIVER_EXIT_HELP                                                                    \
	"Exit: 0 complete and in order, 1 delivery check failed, 2 timeout,\n"                     \
	"      64 usage, 70 setup failure.\n"

/* SIGINT/SIGTERM end the run cleanly (summary printed); SIGPIPE is ignored. */
static inline void peer_install_signals(void)
{
	stop_on_signals();
	signal(SIGPIPE, SIG_IGN);
}

/* Strict number parsing for options: the whole string, within [min, max]. */
static inline bool peer_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long value;

	if (text == NULL || *text == '\0' || *text == '-')
		return false;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || value < min || value > max)
		return false;
	*out = value;
	return true;
}

static inline bool peer_parse_double(const char *text, double min, double max, double *out)
{
	char *end;
	double value;

	if (text == NULL || *text == '\0')
		return false;
	errno = 0;
	value = strtod(text, &end);
	if (errno != 0 || *end != '\0' || !(value >= min && value <= max))
		return false;
	*out = value;
	return true;
}

/* PGM over UDP: the encapsulation ports, 0 when PGM runs over IP. */
struct peer_udp_ports {
	uint64_t ucast;
	uint64_t mcast;
};

/* "PORT" (one port for both) or "UCAST:MCAST", each in [1, 65535]. */
static inline bool peer_parse_udp_ports(const char *text, struct peer_udp_ports *ports)
{
	char buf[32];
	char *colon;

	if (strlen(text) >= sizeof(buf))
		return false;
	strcpy(buf, text);
	colon = strchr(buf, ':');
	if (colon != NULL)
		*colon = '\0';
	if (!peer_parse_u64(buf, 1, 65535, &ports->ucast))
		return false;
	if (colon == NULL) {
		ports->mcast = ports->ucast;
		return true;
	}
	return peer_parse_u64(colon + 1, 1, 65535, &ports->mcast);
}

/*
 * Command-line options from a table: one row per option with its long name, its short letter
 * (0: long only), how its argument is read and where the value goes. -h and --help come with
 * every table. A bad value ends parsing with "PEER: invalid value for option -X: VALUE" (-- for
 * a long-only option); an unknown option, a stray argument or a missing required option prints
 * the usage on stderr.
 */
enum peer_arg {
	PEER_ARG_STRING,    /* const char *: the argument itself */
	PEER_ARG_FLAG,	    /* bool: set to true, no argument */
	PEER_ARG_U64,	    /* uint64_t in [min, max] */
	PEER_ARG_POW2,	    /* uint64_t in [min, max] and a power of 2 */
	PEER_ARG_DOUBLE,    /* double in [real_min, real_max] */
	PEER_ARG_UDP_PORTS, /* struct peer_udp_ports, PORT[:PORT] */
};

struct peer_option {
	const char *name;
	int letter;
	enum peer_arg arg;
	void *value;
	uint64_t min, max;
	double real_min, real_max;
	bool required;
};

/*
 * Table rows; _Generic makes a target of the wrong type a compile error (and clang-format would
 * tear its associations apart).
 */
/* clang-format off */
#define PEER_OPT_ROW(long_name, short_letter, kind, target)                                        \
	.name = (long_name), .letter = (short_letter), .arg = (kind), .value = (target)
#define PEER_OPT_STRING(long_name, short_letter, target)                                           \
	{PEER_OPT_ROW(long_name, short_letter, PEER_ARG_STRING,                                    \
		_Generic((target), const char **: (target)))}
#define PEER_OPT_REQUIRED(long_name, short_letter, target)                                         \
	{PEER_OPT_ROW(long_name, short_letter, PEER_ARG_STRING,                                    \
		_Generic((target), const char **: (target))), .required = true}
#define PEER_OPT_FLAG(long_name, short_letter, target)                                             \
	{PEER_OPT_ROW(long_name, short_letter, PEER_ARG_FLAG, _Generic((target), bool *: (target)))}
#define PEER_OPT_U64(long_name, short_letter, target, lo, hi)                                      \
	{PEER_OPT_ROW(long_name, short_letter, PEER_ARG_U64,                                       \
		_Generic((target), uint64_t *: (target))), .min = (lo), .max = (hi)}
#define PEER_OPT_POW2(long_name, short_letter, target, lo, hi)                                     \
	{PEER_OPT_ROW(long_name, short_letter, PEER_ARG_POW2,                                      \
		_Generic((target), uint64_t *: (target))), .min = (lo), .max = (hi)}
#define PEER_OPT_DOUBLE(long_name, short_letter, target, lo, hi)                                   \
	{PEER_OPT_ROW(long_name, short_letter, PEER_ARG_DOUBLE,                                    \
		_Generic((target), double *: (target))), .real_min = (lo), .real_max = (hi)}
#define PEER_OPT_UDP_PORTS(long_name, short_letter, target)                                        \
	{PEER_OPT_ROW(long_name, short_letter, PEER_ARG_UDP_PORTS,                                 \
		_Generic((target), struct peer_udp_ports *: (target)))}
/* clang-format on */

#define PEER_MAX_OPTIONS 48
#define PEER_LONG_ONLY	 256 /* getopt value of long-only row i: PEER_LONG_ONLY + i */

/*
 * Rows of the options every lab peer reads alike. `o` is the peer's options struct: the macros
 * name its fields (count, run_id, timeout_s; size, rate, start_delay_ms, linger_ms; progress_ms).
 */
#define PEER_RUN_OPTIONS(o)                                                                        \
	PEER_OPT_U64("count", 'c', &(o)->count, 1, 100000000),                                     \
		PEER_OPT_U64("run-id", 'I', &(o)->run_id, 0, UINT32_MAX),                          \
		PEER_OPT_U64("timeout", 'T', &(o)->timeout_s, 1, 86400)
/* A sender lingers after its last message to answer NAKs: up to an hour. */
#define PEER_SENDER_OPTIONS(o)                                                                     \
	PEER_OPT_U64("size", 'z', &(o)->size, PEER_HEADER_LEN, PEER_MAX_SIZE),                     \
		PEER_OPT_DOUBLE("rate", 'r', &(o)->rate, 0.1, 1e6),                                \
		PEER_OPT_U64("start-delay", 0, &(o)->start_delay_ms, 0, 600000),                   \
		PEER_OPT_U64("linger", 0, &(o)->linger_ms, 0, 3600000)
/* A receiver lingers after its last message to catch late duplicates: up to a minute. */
#define PEER_RECEIVER_OPTIONS(o)                                                                   \
	PEER_OPT_U64("linger", 0, &(o)->linger_ms, 0, 60000),                                      \
		PEER_OPT_U64("progress", 0, &(o)->progress_ms, 10, 3600000)

static inline bool peer_option_read(const struct peer_option *opt, const char *arg)
{
	uint64_t *number = opt->value;

	switch (opt->arg) {
	case PEER_ARG_STRING:
		*(const char **)opt->value = arg;
		return true;
	case PEER_ARG_FLAG:
		*(bool *)opt->value = true;
		return true;
	case PEER_ARG_U64:
		return peer_parse_u64(arg, opt->min, opt->max, number);
	case PEER_ARG_POW2:
		return peer_parse_u64(arg, opt->min, opt->max, number) &&
		       (*number & (*number - 1)) == 0;
	case PEER_ARG_DOUBLE:
		return peer_parse_double(arg, opt->real_min, opt->real_max, opt->value);
	case PEER_ARG_UDP_PORTS:
		return peer_parse_udp_ports(arg, opt->value);
	}
	return false;
}

/* 0 when every option was read, -1 when not (reported); -h and --help exit 0 after the usage. */
static inline int peer_parse_options(int argc, char **argv, const char *peer,
	const struct peer_option *table, size_t count, void (*usage)(FILE *out))
{
	struct option longopts[PEER_MAX_OPTIONS + 2];
	char shortopts[2 * PEER_MAX_OPTIONS + 2];
	bool given[PEER_MAX_OPTIONS] = {false};
	size_t letters = 0;
	int c;

	if (count > PEER_MAX_OPTIONS) {
		fprintf(stderr, "%s: too many options for the parser\n", peer);
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		bool flag = table[i].arg == PEER_ARG_FLAG;

		longopts[i] = (struct option){table[i].name, flag ? no_argument : required_argument,
			NULL, table[i].letter ? table[i].letter : PEER_LONG_ONLY + (int)i};
		if (table[i].letter) {
			shortopts[letters++] = (char)table[i].letter;
			if (!flag)
				shortopts[letters++] = ':';
		}
	}
	longopts[count] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[count + 1] = (struct option){NULL, 0, NULL, 0};
	shortopts[letters++] = 'h';
	shortopts[letters] = '\0';
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		size_t i;

		if (c == 'h') {
			usage(stdout);
			exit(PEER_EXIT_OK);
		}
		for (i = 0; i < count && longopts[i].val != c; i++)
			;
		if (i == count) {
			usage(stderr);
			return -1;
		}
		if (!peer_option_read(&table[i], optarg)) {
			fprintf(stderr, "%s: invalid value for option -%c: %s\n", peer,
				c < PEER_LONG_ONLY ? c : '-', optarg);
			return -1;
		}
		given[i] = true;
	}
	for (size_t i = 0; i < count; i++) {
		if (table[i].required && !given[i]) {
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static inline void peer_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint32_t peer_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint32_t peer_fnv1a(uint32_t hash, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		hash ^= p[i];
		hash *= 16777619u;
	}
	return hash;
}

static inline uint32_t peer_checksum(const uint8_t *msg, size_t len)
{
	uint32_t hash = 2166136261u;

	hash = peer_fnv1a(hash, msg, 20);
	return peer_fnv1a(hash, msg + PEER_HEADER_LEN, len - PEER_HEADER_LEN);
}

static inline uint8_t peer_body_byte(uint64_t seq, size_t offset)
{
	return (uint8_t)(seq * 131u + offset * 7u);
}

/* Fills buf (size bytes, size >= PEER_HEADER_LEN) with message number seq. */
static inline void peer_payload_build(uint8_t *buf, size_t size, uint32_t run_id, uint64_t seq)
{
	peer_put32(buf, PEER_MAGIC);
	peer_put32(buf + 4, run_id);
	peer_put32(buf + 8, (uint32_t)(seq >> 32));
	peer_put32(buf + 12, (uint32_t)seq);
	peer_put32(buf + 16, (uint32_t)size);
	for (size_t i = PEER_HEADER_LEN; i < size; i++)
		buf[i] = peer_body_byte(seq, i);
	peer_put32(buf + 20, peer_checksum(buf, size));
}

enum peer_verdict {
	PEER_MSG_NEW,	       /* first copy of a message, in order */
	PEER_MSG_NEW_LATE,     /* first copy, but a higher sequence was already delivered */
	PEER_MSG_DUPLICATE,    /* a second copy */
	PEER_MSG_CORRUPT,      /* bad magic, length, checksum or body */
	PEER_MSG_FOREIGN,      /* intact, but another run id: ignored */
	PEER_MSG_OUT_OF_RANGE, /* intact, this run, but seq >= the expected count */
};

struct peer_delivery {
	uint32_t run_id;
	uint64_t expected;
	uint8_t *seen; /* one bit per sequence number */
	uint64_t unique;
	uint64_t bytes;
	uint64_t duplicates;
	uint64_t out_of_order;
	uint64_t corrupt;
	uint64_t foreign;
	uint64_t out_of_range;
	uint64_t recovered; /* delivered from a repair (RDATA), when the transport can tell */
	int64_t highest;    /* highest sequence delivered so far, -1 before the first */
	uint64_t first_us;  /* time of the first valid message, 0 before */
	uint64_t complete_us;
};

static inline bool peer_delivery_init(struct peer_delivery *d, uint32_t run_id, uint64_t expected)
{
	memset(d, 0, sizeof(*d));
	d->run_id = run_id;
	d->expected = expected;
	d->highest = -1;
	d->seen = calloc((size_t)(expected / 8 + 1), 1);
	return d->seen != NULL;
}

static inline void peer_delivery_free(struct peer_delivery *d)
{
	free(d->seen);
	d->seen = NULL;
}

static inline bool peer_delivery_complete(const struct peer_delivery *d)
{
	return d->unique == d->expected;
}

/* The verdict on one delivered message; counts it. */
static inline enum peer_verdict peer_delivery_account(
	struct peer_delivery *d, const uint8_t *msg, size_t len, uint64_t now_us)
{
	uint64_t seq;

	if (len < PEER_HEADER_LEN || len > PEER_MAX_SIZE || peer_get32(msg) != PEER_MAGIC ||
		peer_get32(msg + 16) != len || peer_get32(msg + 20) != peer_checksum(msg, len)) {
		d->corrupt++;
		return PEER_MSG_CORRUPT;
	}
	seq = (uint64_t)peer_get32(msg + 8) << 32 | peer_get32(msg + 12);
	for (size_t i = PEER_HEADER_LEN; i < len; i++) {
		if (msg[i] != peer_body_byte(seq, i)) {
			d->corrupt++;
			return PEER_MSG_CORRUPT;
		}
	}
	if (peer_get32(msg + 4) != d->run_id) {
		d->foreign++;
		return PEER_MSG_FOREIGN;
	}
	if (seq >= d->expected) {
		d->out_of_range++;
		return PEER_MSG_OUT_OF_RANGE;
	}
	if (d->seen[seq / 8] & (1u << (seq % 8))) {
		d->duplicates++;
		return PEER_MSG_DUPLICATE;
	}
	d->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
	d->unique++;
	d->bytes += len;
	if (d->first_us == 0)
		d->first_us = now_us;
	if (d->unique == d->expected)
		d->complete_us = now_us;
	if ((int64_t)seq < d->highest) {
		d->out_of_order++;
		return PEER_MSG_NEW_LATE;
	}
	d->highest = (int64_t)seq;
	return PEER_MSG_NEW;
}

static inline bool peer_delivery_ok(const struct peer_delivery *d)
{
	return peer_delivery_complete(d) && d->duplicates == 0 && d->out_of_order == 0 &&
	       d->corrupt == 0 && d->out_of_range == 0;
}

/* First sequence number not delivered, or expected when none is missing. */
static inline uint64_t peer_delivery_first_missing(const struct peer_delivery *d)
{
	for (uint64_t seq = 0; seq < d->expected; seq++)
		if (!(d->seen[seq / 8] & (1u << (seq % 8))))
			return seq;
	return d->expected;
}

/*
 * The one-line, key=value summary every receiver prints last on stdout. result is ok, fail or
 * timeout; the lab scripts parse these keys.
 */
/*
 * recovered is "na" when the transport cannot tell repaired messages apart (ZeroMQ); resets
 * counts the transport's unrecoverable-loss reports. first_missing is -1 when none is missing.
 */
static inline void peer_delivery_print(const struct peer_delivery *d, const char *peer,
	const char *result, uint64_t start_us, uint64_t end_us, bool knows_recovered,
	uint64_t resets)
{
	uint64_t missing = d->expected - d->unique;
	uint64_t data_ms = 0;
	char recovered[24] = "na";

	if (d->first_us != 0)
		data_ms = ((d->complete_us ? d->complete_us : end_us) - d->first_us) / 1000u;
	if (knows_recovered)
		snprintf(recovered, sizeof(recovered), "%" PRIu64, d->recovered);
	printf("result=%s peer=%s expected=%" PRIu64 " messages=%" PRIu64 " bytes=%" PRIu64
	       " duplicates=%" PRIu64 " out_of_order=%" PRIu64 " corrupt=%" PRIu64
	       " out_of_range=%" PRIu64 " foreign=%" PRIu64 " missing=%" PRIu64
	       " first_missing=%" PRId64 " recovered=%s resets=%" PRIu64 " data_ms=%" PRIu64
	       " run_ms=%" PRIu64 "\n",
		result, peer, d->expected, d->unique, d->bytes, d->duplicates, d->out_of_order,
		d->corrupt, d->out_of_range, d->foreign, missing,
		missing ? (int64_t)peer_delivery_first_missing(d) : (int64_t)-1, recovered, resets,
		data_ms, (end_us - start_us) / 1000u);
	fflush(stdout);
}

static inline void peer_delivery_progress(
	const struct peer_delivery *d, const char *peer, uint64_t start_us, uint64_t now_us)
{
	printf("event=progress peer=%s messages=%" PRIu64 " expected=%" PRIu64
	       " duplicates=%" PRIu64 " out_of_order=%" PRIu64 " corrupt=%" PRIu64
	       " recovered=%" PRIu64 " run_ms=%" PRIu64 "\n",
		peer, d->unique, d->expected, d->duplicates, d->out_of_order, d->corrupt,
		d->recovered, (now_us - start_us) / 1000u);
	fflush(stdout);
}

/*
 * A receiver's schedule: the run-time limit, the progress lines and, once every message is in,
 * the linger that catches late duplicates.
 */
struct peer_receiver_clock {
	uint64_t start_us;
	uint64_t deadline_us;
	uint64_t progress_us;
	uint64_t next_progress_us; /* UINT64_MAX: no progress lines */
	uint64_t linger_us;
};

static inline void peer_receiver_clock_start(
	struct peer_receiver_clock *k, uint64_t timeout_s, uint64_t progress_ms, uint64_t linger_ms)
{
	k->start_us = now_microseconds();
	k->deadline_us = k->start_us + timeout_s * 1000000u;
	k->progress_us = progress_ms * 1000u;
	k->next_progress_us = progress_ms ? k->start_us + k->progress_us : UINT64_MAX;
	k->linger_us = linger_ms * 1000u;
}

/*
 * One turn of a receiver's loop at time now: prints the progress line when it is due. False when
 * the run is over: the deadline passed (*timed_out set) or the linger after the last message.
 */
static inline bool peer_receiver_tick(struct peer_receiver_clock *k, const struct peer_delivery *d,
	const char *peer, uint64_t now, bool *timed_out)
{
	if (now >= k->deadline_us) {
		*timed_out = true;
		return false;
	}
	if (now >= k->next_progress_us) {
		peer_delivery_progress(d, peer, k->start_us, now);
		k->next_progress_us += k->progress_us;
	}
	return !(peer_delivery_complete(d) && now >= d->complete_us + k->linger_us);
}

/* When the loop must look again at the latest: deadline, progress line or end of the linger. */
static inline uint64_t peer_receiver_wake_us(
	const struct peer_receiver_clock *k, const struct peer_delivery *d)
{
	uint64_t wake = k->deadline_us < k->next_progress_us ? k->deadline_us : k->next_progress_us;

	if (peer_delivery_complete(d) && d->complete_us + k->linger_us < wake)
		wake = d->complete_us + k->linger_us;
	return wake;
}

/*
 * Prints the summary line and returns the exit status: a timeout counts only when messages are
 * still missing.
 */
static inline int peer_receiver_finish(const struct peer_delivery *d, const char *peer,
	const struct peer_receiver_clock *k, bool timed_out, bool knows_recovered, uint64_t resets)
{
	bool timeout = timed_out && !peer_delivery_complete(d);
	const char *result = timeout ? "timeout" : peer_delivery_ok(d) ? "ok" : "fail";

	peer_delivery_print(
		d, peer, result, k->start_us, now_microseconds(), knows_recovered, resets);
	if (timeout)
		return PEER_EXIT_TIMEOUT;
	return peer_delivery_ok(d) ? PEER_EXIT_OK : PEER_EXIT_FAIL;
}

#endif /* PEER_COMMON_H */

/*
 * pgm-pcapstat: per-(TSI, SQN) delays between two kinds of PGM packets in captures, for the
 * latency benchmarks: NAK in to NCF out, NAK to RDATA, or one packet seen at two capture points.
 *
 *   pgm-pcapstat --from TYPE[@N] --to TYPE[@N] [--csv OUT] FILE...
 *
 * Every file (pcap or pcapng; Ethernet, Linux cooked or raw IP) is read with nanosecond
 * timestamps and every PGM packet in it parsed with the wire codec (checksums verified). Each
 * sequence number a packet carries (the header SQN and every OPT_NAK_LIST entry) is one event for
 * the key (TSI, SQN). The events of all files are taken in time order: the first event matching
 * --from starts the key's clock, the first later event matching --to stops it. TYPE@N restricts
 * a side to the N-th file (1-based), so "--from nak@1 --to nak@2" measures how long a NAK took
 * from one capture point to another. Files must come from one host (one clock).
 *
 * Prints one key=value line: packets read, PGM packets by type, keys that started, matched and
 * did not, and the delay's median, 90th and 99th percentile (nearest rank), mean, minimum and
 * maximum in microseconds. --csv writes one row per matched key: tsi,sqn,start_ns,delay_us.
 * Exit: 0 (also with nothing matched), 1 unreadable file, 64 usage.
 */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/wire/pgm_wire.h"

#define MAX_FILES 16

struct side {
	int type; /* enum pgm_type */
	int file; /* 0 = any, else 1-based file index */
};

struct event {
	int64_t t_ns;
	uint32_t key; /* index into the key table */
	uint8_t type;
	uint8_t file;
};

struct key_entry {
	struct pgm_tsi tsi;
	uint32_t sqn;
	bool used;
	bool started, stopped;
	int64_t start_ns, stop_ns;
};

static struct event *events;
static size_t event_count, event_cap;
static struct key_entry *keys;
static size_t key_count, key_cap; /* key_cap: a power of 2 */
static uint64_t packets_read, pgm_packets, parse_errors, not_ipv4;
static uint64_t type_count[PGM_TYPE_COUNT];

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (p == NULL) {
		fprintf(stderr, "pgm-pcapstat: out of memory\n");
		exit(1);
	}
	return p;
}

static uint64_t key_hash(const struct pgm_tsi *tsi, uint32_t sqn)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < PGM_GSI_LEN; i++)
		h = (h ^ tsi->gsi[i]) * 1099511628211ull;
	h = (h ^ tsi->sport) * 1099511628211ull;
	h = (h ^ sqn) * 1099511628211ull;
	return h ^ (h >> 29);
}

static void keys_grow(void);

static uint32_t key_index(const struct pgm_tsi *tsi, uint32_t sqn)
{
	size_t i;

	if ((key_count + 1) * 2 > key_cap)
		keys_grow();
	i = (size_t)key_hash(tsi, sqn) & (key_cap - 1);
	while (keys[i].used) {
		if (keys[i].sqn == sqn && pgm_tsi_equal(&keys[i].tsi, tsi))
			return (uint32_t)i;
		i = (i + 1) & (key_cap - 1);
	}
	keys[i].used = true;
	keys[i].tsi = *tsi;
	keys[i].sqn = sqn;
	key_count++;
	return (uint32_t)i;
}

/* Doubles the table, rehashing what it holds. */
static void keys_grow(void)
{
	struct key_entry *old = keys;
	size_t old_cap = key_cap;

	key_cap = key_cap ? key_cap * 2 : 4096;
	keys = calloc(key_cap, sizeof(*keys));
	if (keys == NULL) {
		fprintf(stderr, "pgm-pcapstat: out of memory\n");
		exit(1);
	}
	key_count = 0;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].used) {
			size_t j = (size_t)key_hash(&old[i].tsi, old[i].sqn) & (key_cap - 1);

			while (keys[j].used)
				j = (j + 1) & (key_cap - 1);
			keys[j] = old[i];
			key_count++;
		}
	}
	free(old);
}

/* Events refer to keys by (TSI, SQN) until every file is read; this array keeps them. */
struct pending_key {
	struct pgm_tsi tsi;
	uint32_t sqn;
};
static struct pending_key *pending;

static void add_event(
	int64_t t_ns, const struct pgm_tsi *tsi, uint32_t sqn, uint8_t type, uint8_t file)
{
	if (event_count == event_cap) {
		event_cap = event_cap ? event_cap * 2 : 65536;
		events = xrealloc(events, event_cap * sizeof(*events));
		pending = xrealloc(pending, event_cap * sizeof(*pending));
	}
	events[event_count] = (struct event){.t_ns = t_ns, .type = type, .file = file};
	pending[event_count].tsi = *tsi;
	pending[event_count].sqn = sqn;
	event_count++;
}

static bool side_wants(const struct side *s, unsigned type, unsigned file)
{
	return s->type == (int)type && (s->file == 0 || s->file == (int)file);
}

/* The IP datagram inside a captured frame, or NULL. */
static const uint8_t *frame_ip(int linktype, const uint8_t *frame, size_t caplen, size_t *len)
{
	size_t off;
	uint16_t proto;

	switch (linktype) {
	case DLT_EN10MB:
		if (caplen < 14)
			return NULL;
		proto = (uint16_t)(frame[12] << 8 | frame[13]);
		off = 14;
		while (proto == 0x8100 && caplen >= off + 4) { /* VLAN tags */
			proto = (uint16_t)(frame[off + 2] << 8 | frame[off + 3]);
			off += 4;
		}
		break;
	case DLT_LINUX_SLL:
		if (caplen < 16)
			return NULL;
		proto = (uint16_t)(frame[14] << 8 | frame[15]);
		off = 16;
		break;
	case DLT_RAW:
		proto = 0x0800;
		off = 0;
		break;
	default:
		return NULL;
	}
	if (proto != 0x0800 || caplen <= off)
		return NULL;
	*len = caplen - off;
	return frame + off;
}

static int read_file(
	const char *path, unsigned file, const struct side *from, const struct side *to)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pgm_udp_ports ports;
	struct pcap_pkthdr *h;
	const uint8_t *frame;
	pcap_t *p;
	int linktype, rc;

	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL) {
		fprintf(stderr, "pgm-pcapstat: %s: %s\n", path, errbuf);
		return -1;
	}
	linktype = pcap_datalink(p);
	pgm_udp_ports_default(&ports);
	ports.enabled = true;
	while ((rc = pcap_next_ex(p, &h, &frame)) == 1) {
		struct pgm_packet pkt;
		struct pgm_ip ip;
		struct pgm_tsi tsi;
		const uint8_t *dgram;
		size_t len;
		int64_t t_ns;

		packets_read++;
		dgram = frame_ip(linktype, frame, h->caplen, &len);
		if (dgram == NULL) {
			not_ipv4++;
			continue;
		}
		if (pgm_parse_datagram(dgram, len, &ports, 0, &ip, &pkt) != PGM_ERR_OK) {
			parse_errors++;
			continue;
		}
		pgm_packets++;
		type_count[pkt.type & 0x0f]++;
		if (!side_wants(from, pkt.type, file) && !side_wants(to, pkt.type, file))
			continue;
		pgm_packet_tsi(&pkt, &tsi);
		t_ns = (int64_t)h->ts.tv_sec * 1000000000 + (int64_t)h->ts.tv_usec;
		add_event(t_ns, &tsi, pkt.sqn, pkt.type, (uint8_t)file);
		for (unsigned i = 0; i < pkt.opt.nak_list_count; i++)
			add_event(t_ns, &tsi, pgm_opt_nak_list_sqn(&pkt.opt, i), pkt.type,
				(uint8_t)file);
	}
	if (rc == -1)
		fprintf(stderr, "pgm-pcapstat: %s: %s\n", path, pcap_geterr(p));
	pcap_close(p);
	return rc == -1 ? -1 : 0;
}

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	/* Same timestamp: keep the capture order of the files (stable by file). */
	return (int)x->file - (int)y->file;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double nearest_rank(const double *sorted, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = (size_t)(p * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static double median(const double *sorted, size_t n)
{
	if (n == 0)
		return 0;
	if (n % 2)
		return sorted[n / 2];
	return (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static bool parse_side(const char *text, struct side *s)
{
	static const struct {
		const char *name;
		int type;
	} names[] = {{"spm", PGM_SPM}, {"odata", PGM_ODATA}, {"rdata", PGM_RDATA}, {"nak", PGM_NAK},
		{"nnak", PGM_NNAK}, {"ncf", PGM_NCF}, {"spmr", PGM_SPMR}};
	char buf[32], *at;

	if (strlen(text) >= sizeof(buf))
		return false;
	strcpy(buf, text);
	s->file = 0;
	at = strchr(buf, '@');
	if (at != NULL) {
		*at = '\0';
		s->file = atoi(at + 1);
		if (s->file < 1 || s->file > MAX_FILES)
			return false;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(buf, names[i].name) == 0) {
			s->type = names[i].type;
			return true;
		}
	}
	return false;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: pgm-pcapstat --from TYPE[@N] --to TYPE[@N] [--csv OUT] FILE...\n"
		     "  TYPE: spm odata rdata nak nnak ncf spmr; @N: only from the N-th file\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"csv", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct side from = {.type = -1}, to = {.type = -1};
	const char *csv_path = NULL;
	FILE *csv = NULL;
	uint64_t started = 0, matched = 0, to_first = 0;
	double *delays, sum = 0;
	size_t n = 0;
	int c, nfiles;

	while ((c = getopt_long(argc, argv, "f:t:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!parse_side(optarg, &from)) {
				usage(stderr);
				return 64;
			}
			break;
		case 't':
			if (!parse_side(optarg, &to)) {
				usage(stderr);
				return 64;
			}
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	nfiles = argc - optind;
	if (from.type < 0 || to.type < 0 || nfiles < 1 || nfiles > MAX_FILES) {
		usage(stderr);
		return 64;
	}
	for (int i = 0; i < nfiles; i++)
		if (read_file(argv[optind + i], (unsigned)i + 1, &from, &to) != 0)
			return 1;
	/* Sized once for every possible key, so no rehash moves a key an event points at. */
	while (key_cap < 2 * event_count + 2)
		keys_grow();
	for (size_t i = 0; i < event_count; i++)
		events[i].key = key_index(&pending[i].tsi, pending[i].sqn);
	qsort(events, event_count, sizeof(*events), cmp_event);

	for (size_t i = 0; i < event_count; i++) {
		struct key_entry *k = &keys[events[i].key];
		const struct event *e = &events[i];

		if (!k->started && side_wants(&from, e->type, e->file)) {
			k->started = true;
			k->start_ns = e->t_ns;
			started++;
		} else if (k->started && !k->stopped && side_wants(&to, e->type, e->file)) {
			k->stopped = true;
			k->stop_ns = e->t_ns;
			matched++;
		} else if (!k->started && side_wants(&to, e->type, e->file) && !k->stopped) {
			/* the answer came before any request was seen: not a delay */
			k->stopped = true;
			to_first++;
		}
	}
	if (csv_path != NULL) {
		csv = fopen(csv_path, "w");
		if (csv == NULL) {
			perror(csv_path);
			return 1;
		}
		fprintf(csv, "tsi,sqn,start_ns,delay_us\n");
	}
	delays = xrealloc(NULL, (matched + 1) * sizeof(double));
	for (size_t i = 0; i < key_cap; i++) {
		const struct key_entry *k = &keys[i];

		if (!k->used || !k->started || !k->stopped)
			continue;
		delays[n] = (double)(k->stop_ns - k->start_ns) / 1000.0;
		sum += delays[n];
		if (csv != NULL) {
			char tsi[32];

			fprintf(csv, "%s,%" PRIu32 ",%" PRId64 ",%.3f\n",
				pgm_tsi_format(&k->tsi, tsi, sizeof(tsi)), k->sqn, k->start_ns,
				delays[n]);
		}
		n++;
	}
	if (csv != NULL)
		fclose(csv);
	qsort(delays, n, sizeof(double), cmp_double);
	printf("packets=%" PRIu64 " pgm=%" PRIu64 " parse_errors=%" PRIu64 " not_ipv4=%" PRIu64,
		packets_read, pgm_packets, parse_errors, not_ipv4);
	for (unsigned t = 0; t < PGM_TYPE_COUNT; t++) {
		char name[16];

		if (type_count[t] == 0)
			continue;
		snprintf(name, sizeof(name), "%s", pgm_type_name(t));
		for (char *q = name; *q; q++)
			*q = (char)tolower((unsigned char)*q);
		printf(" %s=%" PRIu64, name, type_count[t]);
	}
	printf(" started=%" PRIu64 " matched=%" PRIu64 " unmatched=%" PRIu64
	       " answer_first=%" PRIu64
	       " median_us=%.1f p90_us=%.1f p99_us=%.1f mean_us=%.1f min_us=%.1f max_us=%.1f\n",
		started, matched, started - matched, to_first, median(delays, n),
		nearest_rank(delays, n, 0.90), nearest_rank(delays, n, 0.99),
		n ? sum / (double)n : 0.0, n ? delays[0] : 0.0, n ? delays[n - 1] : 0.0);
	free(delays);
	free(events);
	free(pending);
	free(keys);
	return 0;
}

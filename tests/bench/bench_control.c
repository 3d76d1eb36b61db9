/*
 * Control-plane benchmark: decisions per second on one core (NAK storm, constrained RDATA
 * forwarding, SPM copies), memory per TSI and per repair state, timer cost per expiring entry
 * as the table grows, bench-scale's NAK probe without the I/O, and the longest timer run while
 * the clock crosses the timer wheel slot of a million states' deadlines.
 *
 *   build/bench/bench_control [--smoke | --cascade]
 *
 * Prints CSV rows "benchmark,metric,value,unit" on stdout. Times are the thread's CPU time.
 * --smoke uses small sizes and finishes well within a second; its figures are only a sanity
 * check. --cascade runs only the timer rows and the cascade.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/control.h"
#include "control/cp_internal.h" /* the timer wheel's cascade budget, for the baseline */

#define NIFS 8 /* 1 upstream + 7 downstream, all assisted */

static uint64_t actions_emitted;

static void count_action(void *ctx, const struct cp_action *act)
{
	(void)ctx;
	(void)act;
	actions_emitted++;
}

/*
 * CPU time of this thread: the machine may be shared, and "per core" means the time the core
 * actually spent on us, not the wall clock while others ran.
 */
static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The timers due at `now`, as the daemon runs them: a run that reports itself due again (a
 * timer wheel's cascade moves a bounded part per run) is followed by another at once.
 */
static cp_time_t run_timers(struct cp *cp, cp_time_t now)
{
	cp_time_t next;

	while ((next = cp_timers(cp, now)) <= now)
		;
	return next;
}

static void row(const char *bench, const char *metric, double value, const char *unit)
{
	printf("%s,%s,%.6g,%s\n", bench, metric, value, unit);
}

static struct pgm_nla nla4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t addr[4] = {a, b, c, d};
	struct pgm_nla nla;

	pgm_nla_from_ip4(&nla, addr);
	return nla;
}

static struct cp *new_core(const struct cp_config *cfg)
{
	struct cp *cp = cp_new(cfg, count_action, NULL);

	if (cp == NULL) {
		fprintf(stderr, "bench_control: cp_new failed\n");
		exit(1);
	}
	for (int i = 1; i <= NIFS; i++) {
		char name[16];
		struct pgm_nla addr = nla4(198, 18, (uint8_t)i, 1);

		snprintf(name, sizeof(name), "if%d", i);
		cp_if_add(cp, i, name);
		cp_if_set_addr(cp, i, &addr);
		cp_if_set_assist(cp, i, true);
	}
	return cp;
}

/* Session number n: GSI from n, source port from n, group 239.192.x.y. */
static void session_tsi(uint32_t n, uint8_t gsi[PGM_GSI_LEN], uint16_t *sport)
{
	gsi[0] = 0x0a;
	gsi[1] = 0x0b;
	gsi[2] = (uint8_t)(n >> 24);
	gsi[3] = (uint8_t)(n >> 16);
	gsi[4] = (uint8_t)(n >> 8);
	gsi[5] = (uint8_t)n;
	*sport = (uint16_t)(1000 + (n & 0x3fff));
}

struct pkt {
	struct pgm_ip ip;
	struct pgm_packet pkt;
};

static void make_spm(struct pkt *p, uint32_t session, uint32_t sqn)
{
	memset(p, 0, sizeof(*p));
	p->ip.version = 4;
	p->ip.ttl = 64;
	p->ip.router_alert = true;
	p->ip.src = nla4(198, 18, 0, 10);
	p->ip.dst = nla4(239, 192, (uint8_t)(session >> 8), (uint8_t)session);
	p->pkt.type = PGM_SPM;
	session_tsi(session, p->pkt.gsi, &p->pkt.sport);
	p->pkt.dport = 7500;
	p->pkt.sqn = sqn;
	p->pkt.trail = 0;
	p->pkt.lead = 0x80000000u;
	p->pkt.path = nla4(198, 18, 0, 100);
}

static void make_nak(struct pkt *p, unsigned type, uint32_t session, uint32_t sqn)
{
	memset(p, 0, sizeof(*p));
	p->ip.version = 4;
	p->ip.ttl = 64;
	p->ip.src = nla4(198, 18, 9, 50);
	p->ip.dst = nla4(198, 18, 9, 1);
	p->pkt.type = (uint8_t)type;
	session_tsi(session, p->pkt.gsi, type == PGM_NCF ? &p->pkt.sport : &p->pkt.dport);
	if (type == PGM_NCF) {
		p->ip.dst = nla4(239, 192, (uint8_t)(session >> 8), (uint8_t)session);
		p->pkt.dport = 7500;
	} else {
		p->pkt.sport = 7500;
	}
	p->pkt.sqn = sqn;
	p->pkt.nak_src = nla4(198, 18, 0, 10);
	p->pkt.nak_grp = nla4(239, 192, (uint8_t)(session >> 8), (uint8_t)session);
}

static void make_rdata(struct pkt *p, uint32_t session, uint32_t sqn)
{
	memset(p, 0, sizeof(*p));
	p->ip.version = 4;
	p->ip.ttl = 64;
	p->ip.router_alert = true;
	p->ip.src = nla4(198, 18, 0, 10);
	p->ip.dst = nla4(239, 192, (uint8_t)(session >> 8), (uint8_t)session);
	p->pkt.type = PGM_RDATA;
	session_tsi(session, p->pkt.gsi, &p->pkt.sport);
	p->pkt.dport = 7500;
	p->pkt.sqn = sqn;
}

static enum cp_verdict feed(struct cp *cp, const struct pkt *p, int in, int out, cp_time_t now)
{
	struct cp_packet pin = {&p->ip, &p->pkt, in, out, now, false};
	struct cp_result res;

	cp_packet(cp, &pin, &res);
	return res.verdict;
}

static void add_sessions(struct cp *cp, uint32_t n, cp_time_t now)
{
	struct pkt p;

	for (uint32_t s = 0; s < n; s++) {
		make_spm(&p, s, 1);
		feed(cp, &p, 1, 2, now);
	}
}

/* `per` confirmed repair states in each of the first `sessions` sessions: SQNs 100 onwards, each
 * NAKed on interface 2 and confirmed from upstream. */
static void add_confirmed_states(struct cp *cp, uint32_t sessions, uint32_t per, cp_time_t now)
{
	struct pkt p;

	for (uint32_t q = 0; q < per; q++) {
		for (uint32_t s = 0; s < sessions; s++) {
			make_nak(&p, PGM_NAK, s, 100 + q);
			feed(cp, &p, 2, 0, now);
			make_nak(&p, PGM_NCF, s, 100 + q);
			feed(cp, &p, 1, 0, now);
		}
	}
}

/*
 * NAK storm: for each of `sqns` lost packets of each session, `receivers` receivers on the 7
 * downstream interfaces NAK it (in a shuffled order), the upstream confirms, and time moves on.
 * Every cp_packet call is one decision.
 */
static void bench_nak_storm(uint32_t sessions, uint32_t sqns, uint32_t receivers)
{
	struct cp *cp = new_core(NULL);
	cp_time_t now = CP_SEC(100);
	uint64_t decisions = 0;
	double t0, t;
	struct pkt nak, ncf;

	add_sessions(cp, sessions, now);
	actions_emitted = 0;
	t0 = seconds();
	for (uint32_t q = 0; q < sqns; q++) {
		for (uint32_t s = 0; s < sessions; s++) {
			make_nak(&nak, PGM_NAK, s, 1000 + q);
			for (uint32_t r = 0; r < receivers; r++) {
				feed(cp, &nak, 2 + (int)((r * 5 + q) % (NIFS - 1)), 0, now);
				now += 3;
				decisions++;
			}
			make_nak(&ncf, PGM_NCF, s, 1000 + q);
			feed(cp, &ncf, 1, 0, now);
			decisions++;
		}
	}
	t = seconds() - t0;
	row("control_nak_storm", "decisions", (double)decisions, "count");
	row("control_nak_storm", "decisions_per_second", (double)decisions / t, "1/s");
	row("control_nak_storm", "ns_per_decision", t * 1e9 / (double)decisions, "ns");
	row("control_nak_storm", "actions_per_decision",
		(double)actions_emitted / (double)decisions, "ratio");
	cp_free(cp);
}

/*
 * Constrained RDATA forwarding: repair states NAKed on 3 of 7 downstream interfaces, then each
 * RDATA handed over as 7 copies (one per egress interface).
 */
static void bench_rdata(uint32_t sessions, uint32_t sqns)
{
	struct cp *cp = new_core(NULL);
	cp_time_t now = CP_SEC(100);
	uint64_t decisions = 0, accepted = 0;
	double t0, t;
	struct pkt p;

	add_sessions(cp, sessions, now);
	for (uint32_t q = 0; q < sqns; q++) {
		for (uint32_t s = 0; s < sessions; s++) {
			make_nak(&p, PGM_NAK, s, 5000 + q);
			for (int k = 0; k < 3; k++)
				feed(cp, &p, 2 + (int)((q + (uint32_t)k * 2) % (NIFS - 1)), 0, now);
		}
	}
	t0 = seconds();
	for (uint32_t q = 0; q < sqns; q++) {
		for (uint32_t s = 0; s < sessions; s++) {
			make_rdata(&p, s, 5000 + q);
			for (int out = 2; out <= NIFS; out++) {
				accepted += feed(cp, &p, 1, out, now) != CP_DROP;
				decisions++;
			}
		}
	}
	t = seconds() - t0;
	row("control_rdata", "decisions", (double)decisions, "count");
	row("control_rdata", "decisions_per_second", (double)decisions / t, "1/s");
	row("control_rdata", "ns_per_decision", t * 1e9 / (double)decisions, "ns");
	row("control_rdata", "copies_accepted_ratio", (double)accepted / (double)decisions,
		"ratio");
	cp_free(cp);
}

/* SPM processing: each SPM of each session handed over as 7 copies. */
static void bench_spm(uint32_t sessions, uint32_t rounds)
{
	struct cp *cp = new_core(NULL);
	cp_time_t now = CP_SEC(100);
	uint64_t decisions = 0;
	double t0, t;
	struct pkt p;

	add_sessions(cp, sessions, now);
	t0 = seconds();
	for (uint32_t r = 0; r < rounds; r++) {
		for (uint32_t s = 0; s < sessions; s++) {
			make_spm(&p, s, 2 + r);
			for (int out = 2; out <= NIFS; out++) {
				feed(cp, &p, 1, out, now);
				decisions++;
			}
		}
		now += CP_MS(100);
	}
	t = seconds() - t0;
	row("control_spm", "decisions", (double)decisions, "count");
	row("control_spm", "decisions_per_second", (double)decisions / t, "1/s");
	row("control_spm", "ns_per_decision", t * 1e9 / (double)decisions, "ns");
	cp_free(cp);
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, resident = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * 4;
}

/* Memory with `sessions` TSIs and `states` repair states (spread evenly over the TSIs). */
static void bench_memory(uint32_t sessions, uint32_t states)
{
	struct cp_config cfg;
	struct cp *cp;
	struct cp_stats st;
	cp_time_t now = CP_SEC(100);
	long rss0 = rss_kib(), rss1, rss2;
	struct pkt p;
	uint32_t per = states / sessions;

	cp_config_default(&cfg);
	cfg.if_defaults.nak_rpt_ivl_ms = 100000; /* nothing expires while we fill */
	cp = new_core(&cfg);
	add_sessions(cp, sessions, now);
	cp_get_stats(cp, &st);
	rss1 = rss_kib();
	row("control_memory", "sessions", (double)st.sessions, "count");
	row("control_memory", "session_sizeof", (double)st.session_size, "bytes");
	row("control_memory", "bytes_per_session", (double)st.session_bytes / (double)st.sessions,
		"bytes");
	row("control_memory", "rss_per_session", (double)(rss1 - rss0) * 1024.0 / (double)sessions,
		"bytes");
	for (uint32_t q = 0; q < per; q++) {
		for (uint32_t s = 0; s < sessions; s++) {
			make_nak(&p, PGM_NAK, s, 100 + q);
			feed(cp, &p, 2, 0, now);
		}
	}
	cp_get_stats(cp, &st);
	rss2 = rss_kib();
	row("control_memory", "repair_states", (double)st.repair_states, "count");
	row("control_memory", "repair_state_sizeof", (double)st.repair_size, "bytes");
	row("control_memory", "bytes_per_repair_state",
		(double)st.repair_bytes / (double)st.repair_states, "bytes");
	row("control_memory", "rss_per_repair_state",
		(double)(rss2 - rss1) * 1024.0 / (double)st.repair_states, "bytes");
	row("control_memory", "total_bytes", (double)st.bytes, "bytes");
	cp_free(cp);
}

/*
 * Timer cost per expiring entry with n states in the table: n anticipated states created over
 * one second (so their deadlines are spread), then the clock is walked in 1 ms steps through
 * their NAK_ELIM_IVL ends (each state stays, re-armed for NAK_RDATA_IVL) and through their
 * NAK_RDATA_IVL ends (each state is deleted).
 */
static void bench_timers(uint32_t n)
{
	struct cp_config cfg;
	struct cp *cp;
	cp_time_t base = CP_SEC(100), step = CP_MS(1);
	struct pkt p;
	double t0, t_elim, t_delete;
	char metric[64];
	struct cp_stats st;

	/* every state in one session on one interface: no memory budget, no per-session or
	   per-interface quota, or the default shares would refuse most of them */
	cp_config_default(&cfg);
	cfg.memory_budget_mb = 0;
	cfg.repair_if_share = 0;
	cfg.repair_session_share = 0;
	cp = new_core(&cfg);
	add_sessions(cp, 1, base);
	for (uint32_t i = 0; i < n; i++) {
		make_nak(&p, PGM_NCF, 0, i);
		feed(cp, &p, 1, 0, base + (cp_time_t)i * CP_SEC(1) / n);
	}
	cp_get_stats(cp, &st);
	if (st.repair_states != n) {
		fprintf(stderr, "bench_control: %zu states created of %u\n", st.repair_states, n);
		exit(1);
	}
	run_timers(cp, base + CP_SEC(1) - 1);
	t0 = seconds();
	for (cp_time_t now = base + CP_SEC(1); now <= base + CP_SEC(2); now += step)
		run_timers(cp, now);
	t_elim = seconds() - t0;
	cp_get_stats(cp, &st);
	if (st.repair_states != n) {
		fprintf(stderr, "bench_control: %zu states left of %u\n", st.repair_states, n);
		exit(1);
	}
	run_timers(cp, base + CP_SEC(10) - 1);
	t0 = seconds();
	for (cp_time_t now = base + CP_SEC(10); now <= base + CP_SEC(11); now += step)
		run_timers(cp, now);
	t_delete = seconds() - t0;
	cp_get_stats(cp, &st);
	if (st.repair_states != 0) {
		fprintf(stderr, "bench_control: %zu states did not expire\n", st.repair_states);
		exit(1);
	}
	snprintf(metric, sizeof(metric), "ns_per_elim_expiry_%u", n);
	row("control_timers", metric, t_elim * 1e9 / n, "ns");
	snprintf(metric, sizeof(metric), "ns_per_rdata_expiry_%u", n);
	row("control_timers", metric, t_delete * 1e9 / n, "ns");
	cp_free(cp);
}

/*
 * bench-scale's NAK probe in memory: `states` confirmed repair states over 16 sessions, then
 * NAKs for SQNs drawn at random over all of them, 50 us apart (20,000/s), the timers run every
 * millisecond as the daemon runs them. duplicate: NAK_ELIM_IVL as long as NAK_RDATA_IVL and no
 * NCF interval, so every probe NAK is eliminated and confirmed, the same work at every size;
 * else the defaults, where a NAK for a state past its elimination goes upstream (repeated, then
 * given up after NAK_RPT_IVL) unless an earlier probe NAK asked for it. ns per probe NAK, the
 * timers' work included, and actions (NCFs, NAKs upstream, repeats) per probe NAK.
 */
static void bench_nak_probe(uint32_t states, uint32_t probes, bool duplicate)
{
	enum { SESSIONS = 16 };
	const char *mode = duplicate ? "duplicate" : "forward";
	uint32_t per = states / SESSIONS;
	uint64_t rng = 0x9E3779B97F4A7C15ull;
	/* The states' deadlines 10 s on stay below the next multiple of 2^24 us: crossing one
	   moves every entry of the timer wheel's level 4 down a level (a million at 1,008,000
	   states, spread over runs of a bounded size but a cost of the clock, not of the probe's
	   NAKs: bench_cascade measures it). */
	cp_time_t now = ((cp_time_t)7 << 24) + CP_SEC(1);
	struct cp_config cfg;
	struct cp_stats st;
	struct cp *cp;
	char metric[64];
	double t0, t;
	struct pkt p;

	cp_config_default(&cfg);
	cfg.memory_budget_mb = 0; /* no budget, no quotas: every state fits */
	cfg.repair_if_share = 0;
	cfg.repair_session_share = 0;
	if (duplicate) {
		cfg.if_defaults.nak_elim_ivl_ms = cfg.if_defaults.nak_rdata_ivl_ms;
		cfg.if_defaults.ncf_ivl_ms = 0;
	}
	cp = new_core(&cfg);
	add_sessions(cp, SESSIONS, now);
	add_confirmed_states(cp, SESSIONS, per, now);
	now += CP_MS(500); /* the defaults' NAK_ELIM_IVL over, before the clock starts */
	run_timers(cp, now);
	cp_get_stats(cp, &st);
	if (st.repair_states != (size_t)per * SESSIONS) {
		fprintf(stderr, "bench_control: %zu states of %u\n", st.repair_states,
			per * SESSIONS);
		exit(1);
	}
	actions_emitted = 0;
	t0 = seconds();
	for (uint32_t i = 0; i < probes; i++) {
		uint64_t r;

		rng ^= rng >> 12; /* xorshift64* */
		rng ^= rng << 25;
		rng ^= rng >> 27;
		r = rng * 0x2545F4914F6CDD1Dull;
		make_nak(&p, PGM_NAK, (uint32_t)(r % SESSIONS), 100 + (uint32_t)((r >> 8) % per));
		feed(cp, &p, 2, 0, now);
		now += 50;
		if (i % 20 == 19)
			run_timers(cp, now);
	}
	t = seconds() - t0;
	snprintf(metric, sizeof(metric), "ns_per_nak_%s_%u", mode, per * SESSIONS);
	row("control_nak_probe", metric, t * 1e9 / probes, "ns");
	snprintf(metric, sizeof(metric), "actions_per_nak_%s_%u", mode, per * SESSIONS);
	row("control_nak_probe", metric, (double)actions_emitted / probes, "ratio");
	cp_free(cp);
}

struct cascade_run {
	double max_call; /* seconds: the longest cp_timers call */
	double total;	 /* seconds: all calls from the crossing */
	unsigned calls;	 /* cp_timers calls until the backlog was gone */
};

/*
 * `states` confirmed repair states whose NAK_RDATA_IVL ends fall in one level-4 slot of the
 * timer wheel (2^24 us), then the clock walked in 1 ms steps across that slot's start, as the
 * daemon runs the timers: when a run reports itself due again (a cascade's backlog), it is
 * called again at once. `unbounded`: the cascade budget off, every entry moved in one call (the
 * wheel before the budget). The longest single cp_timers call, and the total from the crossing.
 */
static struct cascade_run cascade_once(uint32_t states, bool unbounded)
{
	enum { SESSIONS = 16 };
	uint32_t per = states / SESSIONS;
	const cp_time_t boundary = (cp_time_t)8 << 24;
	cp_time_t now = boundary - CP_SEC(2);
	struct cascade_run run = {0, 0, 0};
	struct cp_config cfg;
	struct cp_stats st;
	struct cp *cp;

	cp_config_default(&cfg);
	cfg.memory_budget_mb = 0;
	cfg.repair_if_share = 0;
	cfg.repair_session_share = 0;
	cp = new_core(&cfg);
	if (unbounded)
		cp->repair_wheel.cascade_budget = UINT32_MAX;
	add_sessions(cp, SESSIONS, now);
	add_confirmed_states(cp, SESSIONS, per, now);
	run_timers(cp, now + CP_MS(500)); /* NAK_ELIM_IVL over: each re-armed for NAK_RDATA_IVL */
	run_timers(cp, boundary - CP_MS(1));
	cp_get_stats(cp, &st);
	if (st.repair_states != (size_t)per * SESSIONS ||
		now + CP_MS(500) + CP_MS(cfg.if_defaults.nak_rdata_ivl_ms) <= boundary) {
		fprintf(stderr, "bench_control: %zu states of %u, or not past the boundary\n",
			st.repair_states, per * SESSIONS);
		exit(1);
	}
	for (now = boundary; now < boundary + CP_MS(20); now += CP_MS(1)) {
		cp_time_t next;

		do {
			double t0 = seconds(), t;

			next = cp_timers(cp, now);
			t = seconds() - t0;
			run.total += t;
			if (t > run.max_call)
				run.max_call = t;
			if (next <= now)
				run.calls++;
		} while (next <= now);
	}
	run.calls++; /* the last, which left no backlog */
	if (cp_wheel_cascading(&cp->repair_wheel)) {
		fprintf(stderr, "bench_control: the cascade did not finish\n");
		exit(1);
	}
	cp_free(cp);
	return run;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The cascade as bounded against the baseline (unbounded), alternating, `reps` times each: the
 * longest call's median, min and max, the ratio of the medians, the calls the backlog took and
 * the total time from the crossing per moved entry.
 */
static void bench_cascade(uint32_t states, unsigned reps)
{
	double bounded[8], unbounded[8], per_entry[2] = {0, 0};
	unsigned calls = 0;
	char metric[64];

	if (reps > 8)
		reps = 8;
	for (unsigned r = 0; r < reps; r++) {
		struct cascade_run a = cascade_once(states, r % 2 != 0);
		struct cascade_run b = cascade_once(states, r % 2 == 0);
		struct cascade_run *u = r % 2 != 0 ? &a : &b, *k = r % 2 != 0 ? &b : &a;

		unbounded[r] = u->max_call;
		bounded[r] = k->max_call;
		per_entry[0] += u->total / states / reps;
		per_entry[1] += k->total / states / reps;
		calls = k->calls;
	}
	qsort(bounded, reps, sizeof(double), cmp_double);
	qsort(unbounded, reps, sizeof(double), cmp_double);
	for (int side = 0; side < 2; side++) {
		const double *v = side == 0 ? unbounded : bounded;
		const char *name = side == 0 ? "unbounded" : "budget";

		snprintf(metric, sizeof(metric), "max_call_us_%s_%u", name, states);
		row("control_cascade", metric, v[reps / 2] * 1e6, "us");
		snprintf(metric, sizeof(metric), "max_call_us_%s_min_%u", name, states);
		row("control_cascade", metric, v[0] * 1e6, "us");
		snprintf(metric, sizeof(metric), "max_call_us_%s_max_%u", name, states);
		row("control_cascade", metric, v[reps - 1] * 1e6, "us");
	}
	snprintf(metric, sizeof(metric), "max_call_ratio_%u", states);
	row("control_cascade", metric, bounded[reps / 2] / unbounded[reps / 2], "ratio");
	snprintf(metric, sizeof(metric), "budget_calls_%u", states);
	row("control_cascade", metric, calls, "count");
	snprintf(metric, sizeof(metric), "ns_per_state_unbounded_%u", states);
	row("control_cascade", metric, per_entry[0] * 1e9, "ns");
	snprintf(metric, sizeof(metric), "ns_per_state_budget_%u", states);
	row("control_cascade", metric, per_entry[1] * 1e9, "ns");
}

int main(int argc, char **argv)
{
	bool smoke = argc > 1 && strcmp(argv[1], "--smoke") == 0;
	bool cascade = argc > 1 && strcmp(argv[1], "--cascade") == 0;

	if (argc > 1 && !smoke && !cascade) {
		fprintf(stderr, "usage: bench_control [--smoke | --cascade]\n");
		return 2;
	}
	printf("benchmark,metric,value,unit\n");
	if (cascade) {
		/* the timer rows and the cascade alone */
		bench_timers(10000);
		bench_timers(100000);
		bench_timers(1000000);
		bench_cascade(1008000, 3);
	} else if (smoke) {
		bench_nak_storm(20, 50, 8);
		bench_rdata(20, 50);
		bench_spm(200, 10);
		bench_memory(1000, 10000);
		bench_timers(10000);
		bench_timers(20000);
		bench_nak_probe(1008, 3000, true);
		bench_nak_probe(10080, 3000, true);
		bench_nak_probe(1008, 3000, false);
		bench_nak_probe(10080, 3000, false);
		bench_cascade(10080, 1);
	} else {
		bench_nak_storm(100, 1000, 16);
		bench_rdata(100, 1000);
		bench_spm(10000, 30);
		bench_memory(100000, 1000000);
		bench_timers(10000);
		bench_timers(100000);
		bench_timers(1000000);
		/* bench-scale's sizes and probe: 30,000 NAKs (three runs of 0.5 s at 20,000/s) */
		bench_nak_probe(10080, 30000, true);
		bench_nak_probe(100800, 30000, true);
		bench_nak_probe(1008000, 30000, true);
		bench_nak_probe(10080, 30000, false);
		bench_nak_probe(1008000, 30000, false);
		bench_cascade(1008000, 3);
	}
	return 0;
}

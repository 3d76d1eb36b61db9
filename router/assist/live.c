/*
 * The live data plane: router assist's environment on the event loop (live.h).
 */
#include "router/assist/live.h"

#include <errno.h>
#include <linux/if_addr.h>
#include <linux/netfilter.h>
#include <linux/rtnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <net/if_arp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "router/assist/report.h"
#include "router/lib/event.h"

/* Held drops (dataplane/nfq.h): up to HOLD_DROPS drop verdicts wait at most HOLD_US for a later
   receive round's send; only while the queue wakes the loop again less than HOLD_BUSY_US after
   its last packets were handled. Slower, the wait would mostly end with the timer, a wakeup of
   its own: no system call saved. */
#define HOLD_DROPS   64u
#define HOLD_US	     5000u
#define HOLD_BUSY_US 500u

/*
 * The control plane's timers run on a grid of CP_TIMER_TICK_US: every expiry due within one tick
 * is handled by one timer run, one wakeup, instead of a wakeup each (under a NAK storm, thousands
 * a second). A timer fires at most one tick late; the shortest PGM interval is 50 ms. A build
 * with -DCP_TIMER_TICK_US=1 has exact timers (the A/B in tests/bench/README).
 */
#ifndef CP_TIMER_TICK_US
#define CP_TIMER_TICK_US 1000u
#endif

/*
 * A packet path: one netfilter queue, the router assist object its packets go through, its
 * output sockets and its timers, on one event loop. With one worker it is the daemon's own, on
 * the main loop with the object the configuration sees; with N > 1 each worker has one on a
 * thread of its own (dataplane/rules.h steers every session to one queue), its own object
 * (a shard of the main one: assist.h, workers) and its own raw sockets. A worker's thread holds
 * its object's lock while it handles a receive round or a timer run, and the route mirror's
 * read lock; the main thread takes the object's lock to change it or read it, and the route
 * mirror's write lock to update it.
 */
struct live_path {
	struct live *l;
	unsigned index; /* the worker: queue number = the configured one + index */
	struct ev_loop *loop;
	struct assist *a;
	struct nfqueue *nfq; /* NULL: no queue (the main path beside workers) */
	struct ev_io *io;
	struct rawsock *raw;
	bool sends_batched; /* between sends_batch_begin and _end: sends only queue */
	struct ev_timer *cp_timer;
	struct ev_timer *hold_timer; /* bounds the wait of held drop verdicts */
	uint64_t nfq_idle;	     /* when the loop last finished with the queue's packets */
	/* The time the packets of one receive round are handled at (packet_now) */
	cp_time_t pkt_now;
	bool pkt_now_fresh;
	cp_time_t timers_at; /* the time the last control-plane timer run was for */
	uint64_t round_packets, max_round_packets;
	/* A worker on a thread of its own */
	bool threaded;
	pthread_t thread;
	bool thread_started;
	int tid;     /* its thread's id (atomic) */
	int wake_fd; /* eventfd: stop, or the main thread changed the object */
	struct ev_io *wake_io;
	bool stop;	       /* atomic */
	uint8_t capbuf[65535]; /* a copy with its new TTL, for the capture */
};

struct live {
	struct ev_loop *loop;
	struct assist *a;
	bool running;
	uint64_t ipv6_failures_logged; /* rules_family_failures(IPv6) when last logged */
	struct rtnl *rtnl;
	struct ev_io *rtnl_io;
	struct mfc *mfc; /* the kernel's multicast routes: where SPM and RDATA copies go */
	struct ev_io *mfc_io;
	/* Workers on threads read the routes under it; the main thread updates them under it. */
	pthread_rwlock_t mfc_lock;
	struct live_path main; /* the daemon's own: the queue with one worker, timers always */
	struct live_path *workers[RULES_WORKERS_MAX];
	unsigned nworkers; /* threads: 0 with one worker */
	/* At start the workers' threads wait for live_run_workers: the daemon drops its
	   privileges first, on the one thread, and the threads inherit what it keeps (a thread
	   started before would keep everything, or lose the capabilities it needs). */
	bool hold_threads;
	struct rules *rules;
	pthread_mutex_t capture_lock; /* the capture, written by every path */
	struct pcap_writer *capture;  /* atomic */
	char *capture_path;
};

static bool threaded(const struct live *l)
{
	return l->nworkers != 0;
}

/* ---- the interception rules and the queue ---- */

static size_t enabled_names(const struct assist_conf *conf, const char **names, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < conf->nifs && n < max; i++)
		if (conf->ifs[i].s.assist)
			names[n++] = conf->ifs[i].name;
	return n;
}

static bool same_enabled(const struct assist_conf *x, const struct assist_conf *y)
{
	const char *a[CP_MAX_INTERFACES], *b[CP_MAX_INTERFACES];
	size_t na = enabled_names(x, a, CP_MAX_INTERFACES),
	       nb = enabled_names(y, b, CP_MAX_INTERFACES);

	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

static const struct assist_if_settings *conf_if(const struct assist_conf *conf, const char *name)
{
	for (size_t i = 0; i < conf->nifs; i++)
		if (strcmp(conf->ifs[i].name, name) == 0)
			return &conf->ifs[i].s;
	return NULL;
}

static void on_nfq_readable(struct ev_loop *loop, int fd, unsigned events, void *arg);
static void on_nfq_packet(void *ctx, struct nfqueue *q, const struct nfqueue_packet *np);
static void sends_flush(void *ctx);
static void on_cp_timer(struct ev_loop *loop, void *arg);
static void on_hold_timer(struct ev_loop *loop, void *arg);
static void on_send_failed(void *ctx, int ifindex, const uint8_t *datagram, size_t len, int err);
static void if_to_path(struct live_path *p, const struct rtnl_if *ifp);
static void worker_env(struct assist_env *env, struct live_path *p);

/* IPv6 interception failing alone leaves IPv4's in place: said once per failed install. */
static void log_ipv6_unavailable(struct live *l)
{
	uint64_t failures = rules_family_failures(l->rules, RULES_IPV6);

	if (failures != l->ipv6_failures_logged &&
		!rules_family_installed(l->rules, RULES_IPV6))
		log_warnx("IPv6 PGM is not intercepted, IPv4 is: %s",
			rules_family_unavailable_reason(l->rules, RULES_IPV6));
	l->ipv6_failures_logged = failures;
}

/* A path's queue, read on its loop. */
static int path_queue_open(struct live_path *p, uint16_t queue_num, char *err, size_t errlen)
{
	struct nfqueue_config qc;

	nfqueue_config_default(&qc);
	qc.queue_num = queue_num;
	p->nfq = nfqueue_open(&qc, on_nfq_packet, p, err, errlen);
	if (p->nfq == NULL)
		return -1;
	nfqueue_set_before_verdicts(p->nfq, sends_flush, p);
	p->io = ev_io_add(p->loop, nfqueue_fd(p->nfq), EV_READ, on_nfq_readable, p);
	if (p->io == NULL) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void path_queue_close(struct live_path *p)
{
	if (p->io != NULL)
		ev_io_del(p->loop, p->io);
	p->io = NULL;
	if (p->nfq != NULL)
		nfqueue_close(p->nfq);
	p->nfq = NULL;
}

/* ---- workers on threads ---- */

static void worker_wake(struct live_path *p)
{
	uint64_t one = 1;

	if (write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: a wakeup is pending anyway */
	}
}

/* The main thread changed the worker's object (its timers may be due sooner) or stops it. */
static void on_worker_wake(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	struct live_path *p = arg;
	uint64_t v;

	(void)fd;
	(void)events;
	if (read(p->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("worker %u: wakeup", p->index);
	if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		ev_loop_break(loop);
		return;
	}
	on_cp_timer(loop, p); /* runs what is due and re-arms */
}

static void *worker_main(void *arg)
{
	struct live_path *p = arg;

	__atomic_store_n(&p->tid, (int)syscall(SYS_gettid), __ATOMIC_RELAXED);
	if (ev_loop_run(p->loop) < 0)
		log_warn("worker %u: event loop", p->index);
	return NULL;
}

/* Whether the worker's object was changed by the main thread: the worker looks again. */
static void env_changed(void *ctx)
{
	worker_wake(ctx);
}

static void worker_free(struct live_path *p)
{
	if (p == NULL)
		return;
	if (p->thread_started) {
		__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
		worker_wake(p);
		pthread_join(p->thread, NULL);
	}
	path_queue_close(p);
	if (p->wake_io != NULL)
		ev_io_del(p->loop, p->wake_io);
	if (p->cp_timer != NULL)
		ev_timer_free(p->loop, p->cp_timer);
	if (p->hold_timer != NULL)
		ev_timer_free(p->loop, p->hold_timer);
	if (p->raw != NULL)
		rawsock_close(p->raw);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	assist_free(p->a);
	if (p->loop != NULL)
		ev_loop_free(p->loop);
	free(p);
}

static void add_if_to_worker(void *ctx, const struct rtnl_if *ifp)
{
	if_to_path(ctx, ifp);
}

/* Worker `index` of n: its loop, object (configured as a shard, the interfaces known so far),
   output sockets and queue; not started. */
static struct live_path *worker_new(struct live *l, const struct assist_conf *conf, unsigned index,
	unsigned n, char *err, size_t errlen)
{
	struct live_path *p = calloc(1, sizeof(*p));
	struct assist_env env;
	struct assist_conf shard;
	struct rawsock_config rsc;

	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->l = l;
	p->index = index;
	p->threaded = true;
	p->wake_fd = -1;
	p->loop = ev_loop_new();
	worker_env(&env, p);
	p->a = p->loop != NULL ? assist_new(&env) : NULL;
	if (p->a == NULL)
		goto nomem;
	p->cp_timer = ev_timer_new(p->loop, on_cp_timer, p);
	p->hold_timer = ev_timer_new(p->loop, on_hold_timer, p);
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->cp_timer == NULL || p->hold_timer == NULL || p->wake_fd < 0)
		goto nomem;
	p->wake_io = ev_io_add(p->loop, p->wake_fd, EV_READ, on_worker_wake, p);
	if (p->wake_io == NULL)
		goto nomem;
	rawsock_config_default(&rsc);
	p->raw = rawsock_open(&rsc, err, errlen);
	if (p->raw == NULL)
		goto fail;
	rawsock_set_failed_fn(p->raw, on_send_failed, p);
	rawsock_set_link_output(p->raw, conf->g.link_output);
	shard = *conf;
	assist_shard_conf(&shard.g, n);
	if (assist_configure(p->a, &shard, 0, err, errlen) < 0)
		goto fail;
	rtnl_foreach_if(l->rtnl, add_if_to_worker, p);
	if (path_queue_open(p, (uint16_t)(conf->g.queue + index), err, errlen) < 0)
		goto fail;
	return p;
nomem:
	snprintf(err, errlen, "worker %u: out of memory", index);
fail:
	worker_free(p);
	return NULL;
}

static int worker_start(struct live_path *p, char *err, size_t errlen)
{
	sigset_t all, old;
	int rc;

	/* signals stay with the main thread's signalfd */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&p->thread, NULL, worker_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "worker %u: thread: %s", p->index, strerror(rc));
		return -1;
	}
	p->thread_started = true;
	return 0;
}

static void nfq_close(struct live *l)
{
	path_queue_close(&l->main);
	assist_set_shards(l->a, NULL, 0);
	for (unsigned i = 0; i < l->nworkers; i++) {
		struct assist_stats st;

		/* the packet path's counters stay with the object the CLI sees; the workers'
		   sessions, repair states and per-interface counters go with them */
		assist_lock(l->workers[i]->a);
		st = *assist_stats(l->workers[i]->a);
		assist_unlock(l->workers[i]->a);
		worker_free(l->workers[i]);
		l->workers[i] = NULL;
		assist_add_stats(l->a, &st);
	}
	l->nworkers = 0;
}

static int nfq_open(struct live *l, const struct assist_conf *conf, char *err, size_t errlen)
{
	struct rules_config rc;
	const char *names[CP_MAX_INTERFACES];
	unsigned nqueues = conf->g.workers > 1 ? conf->g.workers : 1;
	size_t n;

	if (conf->g.workers > 1 && conf->g.queue + conf->g.workers - 1 > UINT16_MAX) {
		snprintf(err, errlen, "%u workers need queues %u to %u: beyond 65535",
			conf->g.workers, conf->g.queue, conf->g.queue + conf->g.workers - 1);
		return -1;
	}
	if (nqueues == 1) {
		if (path_queue_open(&l->main, (uint16_t)conf->g.queue, err, errlen) < 0) {
			nfq_close(l);
			return -1;
		}
	} else {
		for (unsigned i = 0; i < nqueues; i++) {
			l->workers[i] = worker_new(l, conf, i, nqueues, err, errlen);
			if (l->workers[i] == NULL) {
				nfq_close(l);
				return -1;
			}
			l->nworkers = i + 1;
		}
		for (unsigned i = 0; i < nqueues && !l->hold_threads; i++)
			if (worker_start(l->workers[i], err, errlen) < 0) {
				nfq_close(l);
				return -1;
			}
		{
			struct assist *shards[RULES_WORKERS_MAX];

			for (unsigned i = 0; i < nqueues; i++)
				shards[i] = l->workers[i]->a;
			assist_set_shards(l->a, shards, nqueues);
		}
	}
	rules_config_default(&rc);
	rc.queue_num = (uint16_t)conf->g.queue;
	rc.workers = (uint16_t)nqueues;
	rc.udp = conf->g.udp;
	{
		struct pgm_udp_ports ports;

		assist_udp_ports(&conf->g, &ports);
		if (ports.more.n != 0)
			rc.udp_ports = ports.more;
	}
	assist_police(&conf->g, rc.police);
	if (l->rules != NULL)
		rules_free(l->rules);
	l->rules = rules_new(&rc);
	if (l->rules == NULL) {
		snprintf(err, errlen, "out of memory");
		nfq_close(l);
		return -1;
	}
	n = enabled_names(conf, names, CP_MAX_INTERFACES);
	if (rules_install(l->rules, (enum rules_backend)conf->g.backend, names, n, err, errlen) <
		0) {
		nfq_close(l);
		return -1;
	}
	if (nqueues > 1)
		log_info("interception rules installed (%s, queues %u-%u, %zu interface%s, %s); "
			 "%u worker threads",
			rules_backend_name(rules_backend(l->rules)), conf->g.queue,
			conf->g.queue + nqueues - 1, n, n == 1 ? "" : "s",
			rules_family_installed(l->rules, RULES_IPV6) ? "IPv4 and IPv6"
								     : "IPv4 only",
			nqueues);
	else
		log_info("interception rules installed (%s, queue %u, %zu interface%s, %s)",
			rules_backend_name(rules_backend(l->rules)), conf->g.queue, n,
			n == 1 ? "" : "s",
			rules_family_installed(l->rules, RULES_IPV6) ? "IPv4 and IPv6"
								    : "IPv4 only");
	log_ipv6_unavailable(l);
	return 0;
}

/* Queue number, backend or UDP ports changed: rules and queue again. */
static int nfq_restart(struct live *l, const struct assist_conf *conf, char *err, size_t errlen)
{
	char err2[256];

	bool was_threaded = threaded(l);
	int rc;

	if (l->rules != NULL && rules_installed(l->rules) &&
		rules_remove(l->rules, err2, sizeof(err2)) < 0)
		log_warnx("removing interception rules: %s", err2);
	nfq_close(l);
	rc = nfq_open(l, conf, err, errlen);
	/* Workers on threads came or went: the sessions of the cores before are steered to
	   other ones now, which learn them again from their next SPMs; the main object's core
	   starts afresh too, or its stale sessions would show beside theirs. */
	if (was_threaded || threaded(l)) {
		if (assist_reset_core(l->a) < 0)
			log_warnx("the control plane's state before the workers changed is kept: "
				  "out of memory");
		log_info("workers changed: the control plane's sessions and repair states start "
			 "afresh");
	}
	return rc;
}

static void log_assist_changes(
	struct live *l, const struct assist_conf *prev, const struct assist_conf *next)
{
	for (size_t i = 0; i < next->nifs; i++) {
		const struct assist_if_settings *was = conf_if(prev, next->ifs[i].name);

		if (!next->ifs[i].s.assist || (was != NULL && was->assist))
			continue;
		if (rtnl_if_by_name(l->rtnl, next->ifs[i].name) == NULL)
			log_info("%s: router assist configured; the interface does not exist yet, "
				 "waiting for it",
				next->ifs[i].name);
		else
			log_info("%s: router assist enabled", next->ifs[i].name);
	}
	for (size_t i = 0; i < prev->nifs; i++) {
		const struct assist_if_settings *now = conf_if(next, prev->ifs[i].name);

		if (prev->ifs[i].s.assist && (now == NULL || !now->assist))
			log_info("%s: router assist disabled", prev->ifs[i].name);
	}
}

/* Every path's output: the main one's, then each worker's under its lock. */
static void raw_each(
	struct live *l, void (*fn)(struct rawsock *raw, const void *arg), const void *arg)
{
	if (l->main.raw != NULL)
		fn(l->main.raw, arg);
	for (unsigned i = 0; i < l->nworkers; i++) {
		struct live_path *p = l->workers[i];

		assist_lock(p->a);
		fn(p->raw, arg);
		assist_unlock(p->a);
	}
}

static void raw_link_output(struct rawsock *raw, const void *arg)
{
	rawsock_set_link_output(raw, *(const bool *)arg);
}

static int env_apply(void *ctx, const struct assist_conf *prev, const struct assist_conf *next,
	unsigned how, char *err, size_t errlen)
{
	struct live *l = ((struct live_path *)ctx)->l;
	const char *names[CP_MAX_INTERFACES];
	size_t n;

	if (!l->running)
		return 0; /* live_start opens everything for what is configured then */
	if (next->g.link_output != prev->g.link_output &&
		!rawsock_set_link_output(l->main.raw, next->g.link_output)) {
		snprintf(err, errlen, "no packet socket: multicast goes through the IP stack");
		return -1;
	}
	raw_each(l, raw_link_output, &next->g.link_output);
	if (how & ASSIST_RESTART_QUEUE) {
		if (nfq_restart(l, next, err, errlen) < 0) {
			char err2[256];

			if (nfq_restart(l, prev, err2, sizeof(err2)) < 0)
				log_warnx("%s; and back to what ran: %s", err, err2);
			raw_each(l, raw_link_output, &prev->g.link_output);
			return -1;
		}
	} else if (!same_enabled(prev, next)) {
		n = enabled_names(next, names, CP_MAX_INTERFACES);
		if (rules_update(l->rules, names, n, err, errlen) < 0) {
			raw_each(l, raw_link_output, &prev->g.link_output);
			return -1;
		}
		log_debug(LOG_CAT_DATAPLANE, "interception rules updated: %zu interface%s", n,
			n == 1 ? "" : "s");
		log_ipv6_unavailable(l);
	}
	log_assist_changes(l, prev, next);
	return 0;
}

/* ---- output ---- */

static void capture_packet(struct live_path *p, const void *ip, size_t len)
{
	struct live *l = p->l;

	if (__atomic_load_n(&l->capture, __ATOMIC_ACQUIRE) == NULL)
		return;
	pthread_mutex_lock(&l->capture_lock);
	if (l->capture != NULL)
		pcap_writer_write(l->capture, ip, len, NULL);
	pthread_mutex_unlock(&l->capture_lock);
}

static void capture_flush(struct live_path *p)
{
	struct live *l = p->l;

	if (__atomic_load_n(&l->capture, __ATOMIC_ACQUIRE) == NULL)
		return;
	pthread_mutex_lock(&l->capture_lock);
	if (l->capture != NULL)
		pcap_writer_flush(l->capture);
	pthread_mutex_unlock(&l->capture_lock);
}

/* A datagram sent, to the capture as it leaves (with its new TTL). */
static __attribute__((noinline)) void capture_sent(
	struct live_path *p, const uint8_t *datagram, size_t len, uint8_t ttl)
{
	if (ttl != 0 && len <= sizeof(p->capbuf)) {
		memcpy(p->capbuf, datagram, len);
		p->capbuf[8] = ttl;
		datagram = p->capbuf;
	}
	capture_packet(p, datagram, len);
}

static int env_send(void *ctx, int ifindex, const uint8_t *datagram, size_t len, uint8_t ttl)
{
	struct live_path *p = ctx;

	if (__atomic_load_n(&p->l->capture, __ATOMIC_RELAXED) != NULL)
		capture_sent(p, datagram, len, ttl);
	if ((ttl != 0 ? rawsock_send_ttl(p->raw, ifindex, datagram, len, ttl)
		      : rawsock_send(p->raw, ifindex, datagram, len)) < 0)
		return -1;
	return p->sends_batched ? 0 : 1;
}

/*
 * Packets sent while handling a burst (a receive round, a timer run) are queued and sent
 * together, one sendmmsg() per output socket instead of a sendmsg() each (multicast onto Ethernet
 * first, then the rest, each in the order made), before the verdicts of the packets that made
 * them (nfqueue_set_before_verdicts).
 */
static void sends_batch_begin(struct live_path *p)
{
	rawsock_batch_begin(p->raw);
	p->sends_batched = true;
}

static void sends_flush_queued(struct live_path *p)
{
	uint64_t sent, failed;

	if (!p->sends_batched)
		return;
	rawsock_batch_send(p->raw, &sent, &failed);
	assist_count_sent(p->a, sent, failed);
}

static void sends_flush(void *ctx)
{
	struct live_path *p = ctx;

	p->pkt_now_fresh = false; /* the end of a receive round */
	sends_flush_queued(p);
}

/* What is queued so far leaves now (assist_env.send_now), the batch stays open. */
static void env_send_now(void *ctx)
{
	sends_flush_queued(ctx);
}

/* Out now, ahead of what its round queued (assist_env.send_first): an NCF, a first NAK upstream. */
static int env_send_first(void *ctx, int ifindex, const uint8_t *datagram, size_t len, uint8_t ttl)
{
	struct live_path *p = ctx;

	if (__atomic_load_n(&p->l->capture, __ATOMIC_RELAXED) != NULL)
		capture_sent(p, datagram, len, ttl);
	return rawsock_send_first(p->raw, ifindex, datagram, len, ttl) < 0 ? -1 : 1;
}

static void sends_batch_end(struct live_path *p)
{
	uint64_t sent, failed;

	rawsock_batch_end(p->raw, &sent, &failed);
	p->sends_batched = false;
	assist_count_sent(p->a, sent, failed);
}

/* A packet counted as sent on its interface that the kernel refused: the interface says so. */
static void on_send_failed(void *ctx, int ifindex, const uint8_t *datagram, size_t len, int err)
{
	struct live_path *p = ctx;

	(void)datagram;
	(void)len;
	(void)err;
	cp_count_send_failed(assist_cp(p->a), ifindex);
}

/* ---- the rest of the environment ---- */

static cp_time_t env_now(void *ctx)
{
	(void)ctx;
	return ev_time_now();
}

/* A worker reads the routes under the mirror's read lock, taken for its whole receive round or
   timer run (route pointers stay valid through it); the main thread is their only writer. */
static struct mfc_route *env_route(
	void *ctx, const struct pgm_nla *src, const struct pgm_nla *group, int in_ifindex)
{
	struct live *l = ((struct live_path *)ctx)->l;

	return l->mfc != NULL ? mfc_match(l->mfc, src, group, in_ifindex) : NULL;
}

static void env_routes(void *ctx, void (*fn)(void *arg, const struct mfc_route *r), void *arg)
{
	struct live *l = ((struct live_path *)ctx)->l;

	if (l->mfc == NULL)
		return;
	/* the workers write the routes' counters under the read lock */
	pthread_rwlock_wrlock(&l->mfc_lock);
	mfc_foreach(l->mfc, fn, arg);
	pthread_rwlock_unlock(&l->mfc_lock);
}

static unsigned env_route_sources(void *ctx, const struct pgm_nla *group, int ifindex,
	struct pgm_nla *srcs, unsigned max)
{
	struct live *l = ((struct live_path *)ctx)->l;

	return l->mfc != NULL ? (unsigned)mfc_sources(l->mfc, group, ifindex, srcs, max) : 0;
}

static bool env_source(void *ctx, int ifindex, const struct pgm_nla *dst, struct pgm_nla *src)
{
	struct live_path *p = ctx;

	memset(src, 0, sizeof(*src));
	if (p->raw == NULL || dst->afi != PGM_AFI_IP6 ||
		!rawsock_source6(p->raw, ifindex, dst->addr, src->addr))
		return false;
	src->afi = PGM_AFI_IP6;
	return true;
}

static int env_if_lookup(void *ctx, const char *name, bool *up, bool *running)
{
	struct live *l = ((struct live_path *)ctx)->l;
	const struct rtnl_if *ifp = l->rtnl != NULL ? rtnl_if_by_name(l->rtnl, name) : NULL;

	*up = ifp != NULL && ifp->up;
	*running = ifp != NULL && ifp->running;
	return ifp != NULL ? ifp->ifindex : 0;
}

/* A worker's object is not asked for interfaces by name (the shows ask the main one). */
static int worker_if_lookup(void *ctx, const char *name, bool *up, bool *running)
{
	(void)ctx;
	(void)name;
	*up = *running = false;
	return 0;
}

static unsigned env_lines_wanted(void *ctx)
{
	(void)ctx;
	return log_debug_mask();
}

static void env_line(void *ctx, enum log_category cat, const char *text)
{
	struct live_path *p = ctx;

	if (p->threaded)
		log_debug(cat, "[worker %u] %s", p->index, text);
	else
		log_debug(cat, "%s", text);
}

static bool env_running(void *ctx)
{
	return ((struct live_path *)ctx)->l->running;
}

static void capture_stop(struct live *l)
{
	struct pcap_writer_stats st;
	struct pcap_writer *w;

	if (l->capture == NULL)
		return;
	pthread_mutex_lock(&l->capture_lock);
	w = l->capture;
	__atomic_store_n(&l->capture, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&l->capture_lock);
	pcap_writer_get_stats(w, &st);
	pcap_writer_close(w);
	log_info("capture: %s closed, %llu packets", l->capture_path,
		(unsigned long long)st.packets);
	free(l->capture_path);
	l->capture_path = NULL;
}

static int env_capture(void *ctx, const char *path, uint32_t max_mb, char *err, size_t errlen)
{
	struct live *l = ((struct live_path *)ctx)->l;
	struct pcap_writer_config cfg;
	struct pcap_writer *w;

	if (path == NULL) {
		capture_stop(l);
		return 0;
	}
	if (!l->running) {
		snprintf(err, errlen, "PGM router assist is not running");
		return -1;
	}
	pcap_writer_config_default(&cfg);
	cfg.max_bytes = (uint64_t)max_mb << 20;
	cfg.on_limit = PCAP_LIMIT_STOP;
	w = pcap_writer_open(path, &cfg, err, errlen);
	if (w == NULL)
		return -1;
	capture_stop(l);
	l->capture_path = strdup(path);
	pthread_mutex_lock(&l->capture_lock);
	__atomic_store_n(&l->capture, w, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&l->capture_lock);
	log_info("capture: writing to %s (at most %u MB)", path, max_mb);
	return 0;
}

/* A thread's time on a CPU so far, from /proc/self/task/TID/schedstat: false where the
   kernel has no schedstat. */
static bool thread_cpu_ns(int tid, uint64_t *ns)
{
	char path[64];
	unsigned long long run = 0;
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	ok = fscanf(f, "%llu", &run) == 1;
	fclose(f);
	*ns = run;
	return ok;
}

static void add_output(struct rawsock_stats *to, const struct rawsock_stats *from)
{
	to->packets += from->packets;
	to->bytes += from->bytes;
	to->would_block += from->would_block;
	to->too_big += from->too_big;
	to->fragmented += from->fragmented;
	to->fragments += from->fragments;
	to->frag_refused += from->frag_refused;
	to->unreachable += from->unreachable;
	to->bad_input += from->bad_input;
	to->other_errors += from->other_errors;
	to->link_packets += from->link_packets;
	to->link_unicast += from->link_unicast;
	if (from->last_errno != 0)
		to->last_errno = from->last_errno;
}

/* One path's queue in the report (under the path's lock when it is a worker's). */
static void report_path(struct live_path *p, struct assist_worker_view *w, uint32_t queue_num)
{
	nfqueue_get_stats(p->nfq, &w->queue);
	nfqueue_get_kernel_stats(p->nfq, &w->kernel);
	w->queue_num = queue_num;
}

static void env_report(void *ctx, struct assist_dataplane_view *v)
{
	struct live *l = ((struct live_path *)ctx)->l;
	uint32_t queue = assist_conf(l->a)->g.queue;

	v->running = l->running;
	if (l->rules != NULL) {
		v->backend = rules_backend_name(rules_backend(l->rules));
		v->nft_unavailable = rules_nft_unavailable_reason(l->rules);
		if (v->nft_unavailable == NULL)
			v->nft_unavailable = "";
		rules_backend_detail(l->rules, v->backend_detail, sizeof(v->backend_detail));
		for (unsigned f = 0; f < RULES_FAMILY_COUNT; f++)
			v->families[f] = rules_family_installed(l->rules, (enum rules_family)f);
		v->ipv6_unavailable = rules_family_unavailable_reason(l->rules, RULES_IPV6);
		v->ipv6_failures = rules_family_failures(l->rules, RULES_IPV6);
		if (rules_installed(l->rules))
			v->rules_counters_valid =
				rules_read_counters(l->rules, &v->rules, v->rules_counters_error,
					sizeof(v->rules_counters_error)) == 0;
	}
	if (l->main.raw != NULL) {
		v->output_open = true;
		rawsock_get_stats(l->main.raw, &v->output);
	}
	v->max_round_packets = l->main.max_round_packets;
	if (l->main.nfq != NULL) {
		struct assist_worker_view *w = &v->workers[v->nworkers++];

		report_path(&l->main, w, queue);
		w->tid = l->main.tid;
		w->cpu_valid = thread_cpu_ns(w->tid, &w->cpu_ns);
	}
	for (unsigned i = 0; i < l->nworkers; i++) {
		struct live_path *p = l->workers[i];
		struct assist_worker_view *w = &v->workers[v->nworkers++];
		struct rawsock_stats out;

		assist_lock(p->a);
		report_path(p, w, queue + i);
		rawsock_get_stats(p->raw, &out);
		if (p->max_round_packets > v->max_round_packets)
			v->max_round_packets = p->max_round_packets;
		assist_unlock(p->a);
		add_output(&v->output, &out);
		w->tid = __atomic_load_n(&p->tid, __ATOMIC_RELAXED);
		w->cpu_valid = w->tid != 0 && thread_cpu_ns(w->tid, &w->cpu_ns);
	}
	assist_dataplane_sum_queues(v);
	if (l->rtnl != NULL) {
		rtnl_get_stats(l->rtnl, &v->interfaces);
		v->interfaces_known = rtnl_if_count(l->rtnl);
	}
	if (l->mfc != NULL) {
		mfc_get_stats(l->mfc, &v->routes);
		v->routes_known = mfc_count(l->mfc);
	}
	if (l->capture != NULL) {
		v->capture_path = l->capture_path;
		pthread_mutex_lock(&l->capture_lock);
		pcap_writer_get_stats(l->capture, &v->capture);
		pthread_mutex_unlock(&l->capture_lock);
	}
}

/* ---- interfaces from rtnetlink ---- */

/* Whether the interface's output can go through the link layer, and its MTU, which the
   router's copies larger than it are fragmented for (rawsock.h). */
static void raw_link_from_rtnl(struct live_path *p, const struct rtnl_if *ifp, bool present)
{
	if (p->raw == NULL)
		return;
	if (rawsock_set_link(p->raw, ifp->ifindex, present && ifp->type == ARPHRD_ETHER) < 0 &&
		!p->threaded)
		log_warnx("%s: multicast out of it goes through the IP stack (ifindex %d: %s)",
			ifp->name, ifp->ifindex, strerror(errno));
	if (rawsock_set_mtu(p->raw, ifp->ifindex, present ? ifp->mtu : 0) < 0 && !p->threaded)
		log_warnx("%s: copies larger than its MTU are not fragmented (ifindex %d: %s)",
			ifp->name, ifp->ifindex, strerror(errno));
}

/* Every path's output sockets (each worker's under its lock). */
static void raw_links_from_rtnl(struct live *l, const struct rtnl_if *ifp, bool present)
{
	raw_link_from_rtnl(&l->main, ifp, present);
	for (unsigned i = 0; i < l->nworkers; i++) {
		assist_lock(l->workers[i]->a);
		raw_link_from_rtnl(l->workers[i], ifp, present);
		assist_unlock(l->workers[i]->a);
	}
}

static struct pgm_nla primary_addr(const struct rtnl_if *ifp)
{
	struct pgm_nla addr = {0};

	if (ifp->has_primary4)
		pgm_nla_from_ip4(&addr, &ifp->primary4);
	return addr;
}

/*
 * The interface's IPv6 addresses that can name the router: the first global (or unique local)
 * one, and the first link-local one, not deprecated. Tentative ones count: the address mirror
 * reports an address once, when it appears (still tentative, with duplicate detection on),
 * not when its flags change. Which of the two goes where: cp_if_addr_for.
 */
static void ipv6_addrs(const struct rtnl_if *ifp, struct pgm_nla *global, struct pgm_nla *ll)
{
	memset(global, 0, sizeof(*global));
	memset(ll, 0, sizeof(*ll));
	for (size_t i = 0; i < ifp->naddrs; i++) {
		const struct rtnl_addr *a = &ifp->addrs[i];
		bool link = a->addr[0] == 0xfe && (a->addr[1] & 0xc0) == 0x80;
		struct pgm_nla *to = link ? ll : global;

		if (a->family != AF_INET6 || to->afi != 0 ||
			(a->flags & IFA_F_DEPRECATED) != 0 ||
			(!link && a->scope != RT_SCOPE_UNIVERSE))
			continue;
		to->afi = PGM_AFI_IP6;
		memcpy(to->addr, a->addr, 16);
	}
}

/* One path's object and output told of an interface (a new worker, before its thread runs). */
static void if_to_path(struct live_path *p, const struct rtnl_if *ifp)
{
	struct pgm_nla addr = primary_addr(ifp), global, ll;

	raw_link_from_rtnl(p, ifp, true);
	assist_if_added(p->a, ifp->ifindex, ifp->name, &addr);
	ipv6_addrs(ifp, &global, &ll);
	assist_if_address6(p->a, ifp->ifindex, &global, &ll);
}

/* The main object (and through it the workers') and every path's output. */
static void if_from_rtnl(struct live *l, const struct rtnl_if *ifp)
{
	struct pgm_nla addr = primary_addr(ifp), global, ll;

	raw_links_from_rtnl(l, ifp, true);
	assist_if_added(l->a, ifp->ifindex, ifp->name, &addr);
	ipv6_addrs(ifp, &global, &ll);
	assist_if_address6(l->a, ifp->ifindex, &global, &ll);
}

static void on_rtnl_event(void *ctx, const struct rtnl_event *ev)
{
	struct live *l = ctx;
	const struct rtnl_if *ifp = ev->ifp;
	const struct assist_if_settings *s;
	struct pgm_nla addr, addr6;

	if (ifp == NULL)
		return;
	s = conf_if(assist_conf(l->a), ifp->name);
	switch (ev->type) {
	case RTNL_IF_ADDED:
		if_from_rtnl(l, ifp);
		/* Not during the start-up dump: the start may still fail, and its own message
		   then is the only one. */
		if (s != NULL && s->assist && l->running)
			log_info("%s: appeared (ifindex %d), router assist active", ifp->name,
				ifp->ifindex);
		break;
	case RTNL_IF_REMOVED:
		assist_if_removed(l->a, ifp->ifindex);
		raw_links_from_rtnl(l, ifp, false);
		if (s != NULL && s->assist)
			log_info("%s: removed; router assist waits for it to come back", ifp->name);
		break;
	case RTNL_IF_CHANGED:
		if (ev->changes & (RTNL_CHANGE_TYPE | RTNL_CHANGE_MTU))
			raw_links_from_rtnl(l, ifp, true);
		if (ev->changes & RTNL_CHANGE_NAME) {
			/* The control plane knows interfaces by index and name; a rename makes it
			   another interface for the configuration (which is by name). */
			assist_if_removed(l->a, ifp->ifindex);
			if_from_rtnl(l, ifp);
			log_info("%s: renamed from %s", ifp->name, ev->old_name);
		} else if (ev->changes & RTNL_CHANGE_PRIMARY4) {
			addr = primary_addr(ifp);
			assist_if_address(l->a, ifp->ifindex, &addr);
			log_debug(LOG_CAT_DATAPLANE, "%s: primary address changed", ifp->name);
		}
		break;
	case RTNL_ADDR_ADDED:
	case RTNL_ADDR_REMOVED:
		/* IPv4's primary comes with RTNL_CHANGE_PRIMARY4; IPv6's are chosen here */
		if (ev->addr == NULL || ev->addr->family != AF_INET6)
			break;
		ipv6_addrs(ifp, &addr6, &addr);
		assist_if_address6(l->a, ifp->ifindex, &addr6, &addr);
		break;
	default:
		break;
	}
}

static void on_rtnl_readable(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	struct live *l = arg;

	(void)loop;
	(void)fd;
	(void)events;
	if (rtnl_process(l->rtnl) < 0)
		log_warn("rtnetlink");
}

static void on_mfc_readable(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	struct live *l = arg;
	int rc;

	(void)loop;
	(void)fd;
	(void)events;
	if (threaded(l))
		pthread_rwlock_wrlock(&l->mfc_lock);
	rc = mfc_process(l->mfc);
	if (threaded(l))
		pthread_rwlock_unlock(&l->mfc_lock);
	if (rc < 0)
		log_warn("multicast routes");
}

static void add_existing_if(void *ctx, const struct rtnl_if *ifp)
{
	if_from_rtnl(ctx, ifp);
}

/* ---- the packet path ---- */

/* A worker's round or timer run: its object, and the routes it reads (not the main path's:
   nothing else runs on its thread). */
static void path_enter(struct live_path *p)
{
	if (!p->threaded)
		return;
	assist_lock(p->a);
	pthread_rwlock_rdlock(&p->l->mfc_lock);
}

static void path_leave(struct live_path *p)
{
	if (!p->threaded)
		return;
	pthread_rwlock_unlock(&p->l->mfc_lock);
	assist_unlock(p->a);
}

/* The clock for the packets of one receive round: one reading per round, not one per packet
   (a round is at most one recvmmsg batch: well under a millisecond, the timers' grid). */
static cp_time_t packet_now(struct live_path *p)
{
	if (!p->pkt_now_fresh) {
		p->pkt_now = ev_time_now();
		p->pkt_now_fresh = true;
	}
	return p->pkt_now;
}

static void on_nfq_packet(void *ctx, struct nfqueue *q, const struct nfqueue_packet *np)
{
	struct live_path *p = ctx;
	struct assist_packet pkt = {
		.datagram = np->payload,
		.len = np->len,
		.in_ifindex = (int)np->in_ifindex,
		.out_ifindex = (int)np->out_ifindex,
		/* before routing, and whole: a truncated copy cannot be replicated */
		.before_routing = np->hook == NF_INET_PRE_ROUTING && np->orig_len <= np->len,
		.udp_csum_unset = (np->skb_info & NFQA_SKB_CSUMNOTREADY) != 0,
	};
	const uint8_t *rw = NULL;
	size_t rw_len = 0;
	enum cp_verdict v;
	int rc;

	p->round_packets++;
	capture_packet(p, np->payload, np->len);
	pkt.now = packet_now(p);
	v = assist_packet(p->a, &pkt, &rw, &rw_len);
	if (v == CP_ACCEPT_REWRITTEN) {
		capture_packet(p, rw, rw_len);
		rc = nfqueue_verdict_payload(q, np->id, rw, rw_len);
	} else {
		rc = nfqueue_verdict(q, np->id, v == CP_DROP ? NFQUEUE_DROP : NFQUEUE_ACCEPT);
	}
	if (rc < 0)
		log_debug(LOG_CAT_DATAPLANE, "verdict for packet %u not sent", np->id);
}

/*
 * When the control plane's timers next need a run: on the grid, UINT64_MAX for never. A deadline
 * not after the last run's time means that run left work (a timer wheel's cascade is moved a
 * bounded part per run): the next run is then a microsecond after it, not on the grid, so the
 * loop comes back to it at its next turn, after the packets ready by then, and a million moved
 * entries take a few hundred turns, not as many milliseconds.
 */
static cp_time_t cp_timer_due(struct live_path *p)
{
	cp_time_t next = cp_next_deadline(assist_cp(p->a));

	if (next <= p->timers_at)
		return p->timers_at + 1;
	if (next != UINT64_MAX && next <= UINT64_MAX - CP_TIMER_TICK_US)
		next = (next + CP_TIMER_TICK_US - 1) / CP_TIMER_TICK_US * CP_TIMER_TICK_US;
	return next;
}

static void cp_timer_rearm(struct live_path *p)
{
	cp_time_t next = cp_timer_due(p);

	if (next == UINT64_MAX)
		ev_timer_stop(p->loop, p->cp_timer);
	else
		ev_timer_start(p->loop, p->cp_timer, next);
}

static void on_cp_timer(struct ev_loop *loop, void *arg)
{
	struct live_path *p = arg;

	(void)loop;
	path_enter(p);
	assist_log_sync(p->a);
	sends_batch_begin(p);
	p->timers_at = ev_time_now();
	assist_timers(p->a, p->timers_at);
	sends_batch_end(p);
	cp_timer_rearm(p);
	path_leave(p);
	capture_flush(p);
}

/* Drop verdicts held since a round's end (at most HOLD_US ago) go to the kernel now. */
static void on_hold_timer(struct ev_loop *loop, void *arg)
{
	struct live_path *p = arg;

	(void)loop;
	path_enter(p);
	if (p->nfq != NULL)
		(void)nfqueue_flush(p->nfq);
	path_leave(p);
}

static void on_nfq_readable(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	struct live_path *p = arg;

	(void)fd;
	(void)events;
	path_enter(p);
	assist_log_sync(p->a);
	nfqueue_set_hold_drops(p->nfq, ev_now(loop) - p->nfq_idle < HOLD_BUSY_US ? HOLD_DROPS : 0);
	p->round_packets = 0;
	/* The first packet reads the clock: not the loop's reading from before this wakeup's
	   other handlers (a timer run among them), so the control plane's time never goes back */
	p->pkt_now_fresh = false;
	/* A bounded number of receive calls per round keeps the CLI and timers responsive under
	   a flood; the rest is read on the next round. */
	sends_batch_begin(p);
	if (nfqueue_process(p->nfq, 16) < 0) {
		int e = errno;

		sends_batch_end(p);
		errno = e;
		log_warn("nfqueue");
	} else {
		/* Timers due by the last packet's time run now, their packets sent with the
		   round's: under a steady load the timer then seldom needs a wakeup of its own. */
		if (p->round_packets != 0 && cp_timer_due(p) <= p->pkt_now) {
			p->timers_at = p->pkt_now;
			assist_timers(p->a, p->pkt_now);
		}
		sends_batch_end(p);
	}
	if (p->round_packets > p->max_round_packets)
		p->max_round_packets = p->round_packets;
	p->nfq_idle = ev_time_now();
	if (nfqueue_held(p->nfq) != 0 && !ev_timer_pending(p->hold_timer))
		ev_timer_start(p->loop, p->hold_timer, p->nfq_idle + HOLD_US);
	cp_timer_rearm(p);
	path_leave(p);
	capture_flush(p);
}

/* ---- life cycle ---- */

static void main_env(struct assist_env *env, struct live_path *p)
{
	*env = (struct assist_env){
		.ctx = p,
		.now = env_now,
		.send = env_send,
		.source = env_source,
		.send_now = env_send_now,
		.send_first = env_send_first,
		.route = env_route,
		.route_sources = env_route_sources,
		.routes = env_routes,
		.if_lookup = env_if_lookup,
		.lines_wanted = env_lines_wanted,
		.line = env_line,
		.apply = env_apply,
		.report = env_report,
		.running = env_running,
		.capture = env_capture,
	};
}

/* A worker's object: its packets, output and timers; routes, the configuration's application,
   reports, the running state and the capture are the main object's. */
static void worker_env(struct assist_env *env, struct live_path *p)
{
	main_env(env, p);
	env->routes = NULL;
	env->apply = NULL;
	env->report = NULL;
	env->running = NULL;
	env->capture = NULL;
	env->if_lookup = worker_if_lookup;
	env->changed = env_changed;
}

struct live *live_new(struct ev_loop *loop)
{
	struct live *l = calloc(1, sizeof(*l));
	struct assist_env env;

	if (l == NULL)
		return NULL;
	l->loop = loop;
	pthread_mutex_init(&l->capture_lock, NULL);
	{
		pthread_rwlockattr_t attr;

		/* the main thread's updates are not starved by workers' rounds */
		pthread_rwlockattr_init(&attr);
		pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&l->mfc_lock, &attr);
		pthread_rwlockattr_destroy(&attr);
	}
	l->main.l = l;
	l->main.loop = loop;
	l->main.wake_fd = -1;
	main_env(&env, &l->main);
	l->a = l->main.a = assist_new(&env);
	l->main.cp_timer = ev_timer_new(loop, on_cp_timer, &l->main);
	l->main.hold_timer = ev_timer_new(loop, on_hold_timer, &l->main);
	l->rtnl = rtnl_new(on_rtnl_event, l);
	l->mfc = mfc_new();
	if (l->a == NULL || l->main.cp_timer == NULL || l->main.hold_timer == NULL ||
		l->rtnl == NULL || l->mfc == NULL) {
		live_free(l);
		return NULL;
	}
	return l;
}

struct assist *live_assist(struct live *l)
{
	return l->a;
}

static void live_stop(struct live *l)
{
	char err[256];

	if (l->rules != NULL) {
		if (rules_installed(l->rules) && rules_remove(l->rules, err, sizeof(err)) < 0)
			log_warnx("removing interception rules: %s", err);
		rules_free(l->rules);
		l->rules = NULL;
	}
	nfq_close(l);
	if (l->main.raw != NULL)
		rawsock_close(l->main.raw);
	l->main.raw = NULL;
	if (l->mfc_io != NULL)
		ev_io_del(l->loop, l->mfc_io);
	l->mfc_io = NULL;
	if (l->rtnl_io != NULL)
		ev_io_del(l->loop, l->rtnl_io);
	l->rtnl_io = NULL;
	capture_stop(l);
	l->running = false;
}

int live_start(struct live *l, char *err, size_t errlen)
{
	const struct assist_conf *conf = assist_conf(l->a);
	struct rawsock_config rsc;

	l->main.tid = (int)syscall(SYS_gettid);
	if (geteuid() != 0) {
		snprintf(err, errlen,
			"must run as root: intercepting packets needs CAP_NET_ADMIN and "
			"CAP_NET_RAW");
		return -1;
	}
	/* before the interfaces: each says whether its multicast can go by the link layer */
	rawsock_config_default(&rsc);
	l->main.raw = rawsock_open(&rsc, err, errlen);
	if (l->main.raw == NULL)
		goto fail;
	rawsock_set_failed_fn(l->main.raw, on_send_failed, &l->main);
	{
		struct rawsock_stats st;

		rawsock_get_stats(l->main.raw, &st);
		if (!rawsock_set_link_output(l->main.raw, conf->g.link_output))
			log_warnx("no packet socket (%s): multicast goes through the IP stack",
				strerror(st.link_errno));
		if (st.ipv6_errno != 0)
			log_warnx("no raw IPv6 socket (%s): IPv6 output refused and counted",
				strerror(st.ipv6_errno));
	}
	if (rtnl_open(l->rtnl, err, errlen) < 0)
		goto fail;
	/* rtnl_open reported the existing interfaces through the callback; walk them again in
	   case it ran before every address was known */
	rtnl_foreach_if(l->rtnl, add_existing_if, l);
	l->rtnl_io = ev_io_add(l->loop, rtnl_fd(l->rtnl), EV_READ, on_rtnl_readable, l);
	if (l->rtnl_io == NULL) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		goto fail;
	}
	if (mfc_open(l->mfc, err, errlen) < 0) {
		/* A kernel without multicast routing: nothing to replicate by, so SPM and RDATA
		   are left to the kernel (counted as without a route). */
		log_warnx("%s; SPM and RDATA to groups go unassisted", err);
		err[0] = '\0';
	} else {
		l->mfc_io = ev_io_add(l->loop, mfc_fd(l->mfc), EV_READ, on_mfc_readable, l);
		if (l->mfc_io == NULL) {
			snprintf(err, errlen, "event loop: %s", strerror(errno));
			goto fail;
		}
	}
	l->hold_threads = true;
	if (nfq_open(l, conf, err, errlen) < 0)
		goto fail;
	l->running = true;
	for (size_t i = 0; i < conf->nifs; i++) {
		bool up, running;
		int ifindex;

		if (!conf->ifs[i].s.assist)
			continue;
		ifindex = env_if_lookup(&l->main, conf->ifs[i].name, &up, &running);
		if (ifindex == 0)
			log_info("%s: router assist configured; the interface does not exist yet, "
				 "waiting for it",
				conf->ifs[i].name);
		else
			log_info("%s: router assist active (ifindex %d)", conf->ifs[i].name,
				ifindex);
	}
	return 0;
fail:
	live_stop(l);
	return -1;
}

int live_run_workers(struct live *l, char *err, size_t errlen)
{
	l->hold_threads = false;
	for (unsigned i = 0; i < l->nworkers; i++)
		if (!l->workers[i]->thread_started && worker_start(l->workers[i], err, errlen) < 0)
			return -1;
	return 0;
}

void live_free(struct live *l)
{
	if (l == NULL)
		return;
	live_stop(l);
	if (l->main.cp_timer != NULL)
		ev_timer_free(l->loop, l->main.cp_timer);
	if (l->main.hold_timer != NULL)
		ev_timer_free(l->loop, l->main.hold_timer);
	if (l->rtnl != NULL)
		rtnl_free(l->rtnl);
	mfc_free(l->mfc);
	assist_free(l->a);
	pthread_rwlock_destroy(&l->mfc_lock);
	pthread_mutex_destroy(&l->capture_lock);
	free(l);
}

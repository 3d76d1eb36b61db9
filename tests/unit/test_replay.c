/*
 * The OpenPGM capture fixtures replayed through the control plane (pgmrouterd -R): the router
 * sits between the source's LAN and the receivers' LAN of the capture, and its decisions are
 * counted. The fixtures are fixed files, so the counts are exact; tests/fixtures/README lists
 * what they hold (IP: 12 SPM, 252 ODATA, 22 RDATA, 21 NAK with 5 lists, 21 NCF, 1 SPMR).
 */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/config.h"
#include "cli/settings.h"
#include "control/control.h"
#include "dataplane/wire/pgm_wire.h"
#include "router/assist/assist_internal.h"
#include "router/assist/offline.h"
#include "router/vty/pgm_vty.h"
#include "tests/unit/check_run.h"

struct counts {
	const struct cp_counters *up, *down;
	struct offline *o;
};

static void find_if(void *ctx, const struct cp_if_view *v)
{
	struct counts *c = ctx;

	if (v->ifindex == 1)
		c->up = v->counters;
	else if (v->ifindex == 2)
		c->down = v->counters;
}

static bool broken_ok; /* the file may end in a broken record (after the packets tested) */

/* As pgmrouterd -R does it, with the default configuration (the settings table's). */
static void replay(const char *file, struct counts *c)
{
	static const char *const ifs[] = {"up=198.18.1.1/24", "a=198.18.2.1/24"};
	struct assist_conf conf;
	char err[256];
	int saved, devnull, rc;

	cmd_engine_init();
	pgm_vty_init();
	ck_assert_int_eq(pgm_conf_from_cfg(cfg_running(), &conf), 0);
	/* the replay prints its counters: keep them out of Check's output */
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	devnull = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(devnull, 0);
	dup2(devnull, STDOUT_FILENO);
	c->o = offline_replay_open(&conf, ifs, 2, true, err, sizeof(err));
	rc = c->o != NULL ? offline_replay_file(c->o, file, err, sizeof(err)) : -1;
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(devnull);
	assist_conf_free(&conf);
	ck_assert_msg(rc == 0 || broken_ok, "%s", err);
	cp_foreach_if(assist_cp(offline_assist(c->o)), find_if, c);
	ck_assert_ptr_nonnull(c->up);
	ck_assert_ptr_nonnull(c->down);
}

static void replay_done(struct counts *c)
{
	offline_free(c->o);
	cfg_free();
	cmd_engine_free();
	settings_free();
}

static void check_common(const struct counts *c, uint64_t naks, uint64_t sqns)
{
	/* 7.1: every SPM forwarded downstream with our path, one session */
	ck_assert_uint_eq(c->up->in[PGM_SPM], 12);
	ck_assert_uint_eq(c->down->ev[CP_C_SPM_FORWARDED], 12);
	ck_assert_uint_eq(c->up->ev[CP_C_SESSIONS_CREATED], 1);
	/* 7.2: each of the 21 NAKs (27 SQNs with the lists) confirmed or rate-limited */
	ck_assert_uint_eq(c->down->in[PGM_NAK], naks);
	ck_assert_uint_eq(c->down->ev[CP_C_NAK_RECEIVED], sqns);
	ck_assert_uint_eq(c->down->ev[CP_C_NCF_SENT] + c->down->ev[CP_C_NCF_RATE_LIMITED], naks);
	/* 7.3, 7.4: OpenPGM repeats a listed SQN as a single NAK right after the list: those
	   duplicates are eliminated (a list is still forwarded when another SQN in it is new), so
	   fewer NAKs go upstream than came in */
	ck_assert_uint_le(c->down->ev[CP_C_NAK_UNIQUE] + c->down->ev[CP_C_NAK_ELIMINATED], sqns);
	ck_assert_uint_gt(c->down->ev[CP_C_NAK_ELIMINATED], 0);
	ck_assert_uint_lt(c->up->ev[CP_C_NAK_FORWARDED], naks);
	ck_assert_uint_eq(c->up->out[PGM_NAK], c->up->ev[CP_C_NAK_FORWARDED]);
	/* 7.3, 7.5: the source's NCFs confirm what we forwarded, anticipate the rest */
	ck_assert_uint_eq(c->up->ev[CP_C_NCF_RECEIVED],
		c->up->ev[CP_C_NCF_CONFIRMED] + c->up->ev[CP_C_NCF_ANTICIPATED]);
	/* 7.8: RDATA forwarded once per repair state; a second repair of the same SQN finds
	   the state gone and is dropped */
	ck_assert_uint_eq(c->down->ev[CP_C_RDATA_FORWARDED] + c->down->ev[CP_C_RDATA_NO_STATE],
		c->up->in[PGM_RDATA]);
	ck_assert_uint_le(c->down->ev[CP_C_RDATA_FORWARDED], c->down->ev[CP_C_NAK_UNIQUE]);
}

START_TEST(test_replay_openpgm_ip)
{
	struct counts c = {0};

	replay("tests/fixtures/openpgm-ip.pcap", &c);
	check_common(&c, 21, 27);
	ck_assert_uint_eq(c.up->in[PGM_RDATA], 22);
	ck_assert_uint_eq(c.down->ev[CP_C_RDATA_FORWARDED], 22);
	ck_assert_uint_eq(c.down->ev[CP_C_NAK_UNIQUE], 22);
	ck_assert_uint_eq(c.up->ev[CP_C_NAK_FORWARDED], 16);
	replay_done(&c);
}
END_TEST

START_TEST(test_replay_openpgm_udp)
{
	struct counts c = {0};

	replay("tests/fixtures/openpgm-udp.pcap", &c);
	check_common(&c, 23, 30);
	ck_assert_uint_eq(c.up->in[PGM_RDATA], 26);
	ck_assert_uint_eq(c.down->ev[CP_C_RDATA_FORWARDED], 24);
	ck_assert_uint_eq(c.down->ev[CP_C_RDATA_NO_STATE], 2);
	replay_done(&c);
}
END_TEST

/* A capture whose timestamps go back (merged from several hosts, or edited): the replay's clock
 * stays where it was instead of wrapping to the far future, where repair state timers fired in
 * a loop that never ended (fuzz_pcap found it; the file is its input). */
START_TEST(test_replay_clock_never_goes_back)
{
	struct counts c = {0};

	broken_ok = true;
	replay("tests/fuzz/corpus/fuzz_pcap/clock-backwards.pcap", &c);
	broken_ok = false;
	ck_assert_uint_gt(c.up->in[PGM_SPM] + c.down->in[PGM_SPM], 0);
	replay_done(&c);
}
END_TEST

/* An environment that queues what it is given, as the live one does within a receive round, and
 * sends what it is given to send first at once. */
static unsigned ncfs_queued, ncfs_first, naks_queued, naks_sent_now, naks_first, others_first;

static uint8_t pgm_type(const uint8_t *datagram, size_t len)
{
	struct pgm_ip ip;

	if (pgm_parse_ip(datagram, len, NULL, &ip) != PGM_ERR_OK || ip.pgm_len <= 4)
		return 0xff;
	return datagram[ip.pgm_offset + 4];
}

static int queueing_send(void *ctx, int ifindex, const uint8_t *datagram, size_t len, uint8_t ttl)
{
	uint8_t type = pgm_type(datagram, len);

	(void)ctx;
	(void)ifindex;
	(void)ttl;
	if (type == PGM_NCF)
		ncfs_queued++;
	else if (type == PGM_NAK)
		naks_queued++;
	return 0;
}

static int queueing_send_first(
	void *ctx, int ifindex, const uint8_t *datagram, size_t len, uint8_t ttl)
{
	uint8_t type = pgm_type(datagram, len);

	(void)ctx;
	(void)ifindex;
	(void)ttl;
	if (type == PGM_NCF)
		ncfs_first++;
	else if (type == PGM_NAK)
		naks_first++;
	else
		others_first++;
	return 1;
}

static void queueing_send_now(void *ctx)
{
	(void)ctx;
	naks_sent_now += naks_queued;
}

/* Every NCF leaves at once, ahead of whatever its NAK's round queued (issue 27: NCFs waited
 * for the end of a receive round, up to a whole recvmmsg batch, then behind a send of each NAK
 * upstream); so does the first NAK upstream (the repair waits for it), ahead of its NCF. This
 * environment never sends its queue (no assist_count_sent): every later NAK upstream, and
 * everything else, stays queued. */
START_TEST(test_replay_ncf_sent_at_once)
{
	static const char *const ifs[] = {"up=198.18.1.1/24", "a=198.18.2.1/24"};
	struct assist_conf conf;
	struct offline *o;
	struct assist *a;
	char err[256];
	int saved, devnull, rc;

	cmd_engine_init();
	pgm_vty_init();
	ck_assert_int_eq(pgm_conf_from_cfg(cfg_running(), &conf), 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, STDOUT_FILENO);
	o = offline_replay_open(&conf, ifs, 2, true, err, sizeof(err));
	ck_assert_ptr_nonnull(o);
	a = offline_assist(o);
	a->env.send = queueing_send;
	a->env.send_now = queueing_send_now;
	a->env.send_first = queueing_send_first;
	rc = offline_replay_file(o, "tests/fixtures/openpgm-ip.pcap", err, sizeof(err));
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(devnull);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_uint_gt(ncfs_first, 0);
	ck_assert_uint_eq(ncfs_queued, 0);
	/* the first NAK forwarded upstream left at once; the others wait for the batch's end */
	ck_assert_uint_eq(naks_first, 1);
	ck_assert_uint_gt(naks_queued, 0);
	ck_assert_uint_eq(naks_sent_now, 0);
	ck_assert_uint_eq(others_first, 0);
	assist_conf_free(&conf);
	offline_free(o);
	cfg_free();
	cmd_engine_free();
	settings_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("fixtures");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_replay_openpgm_ip);
	tcase_add_test(tc, test_replay_openpgm_udp);
	tcase_add_test(tc, test_replay_ncf_sent_at_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("clock");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_replay_clock_never_goes_back);
	suite_add_tcase(s, tc);
	return check_run(s);
}

/*
 * nfq-ncffloor: the latency benchmark's floor. A minimal NFQUEUE consumer with the daemon's
 * queue settings (dataplane/nfq.c, as nfq-acceptall) that answers each NAK (PGM over IP) at once
 * with one NCF to the NAK's group on the NAK's arrival interface and drops the NAK; NCFs are
 * dropped too (a network element does not forward them), everything else is accepted. The NCF
 * is the NAK's TPDU with the type and the port swap of a downstream packet: the same TSI, SQN
 * and size as the daemon's. The least any user-space network element can do for a NAK.
 *
 *   nfq-ncffloor [-q QUEUE] [-t SECONDS] [-r READY_FILE]
 *
 * Runs until SIGINT/SIGTERM or the time limit, then prints one line of counters ("key=value"
 * pairs) to stdout. READY_FILE is created once the queue is bound.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dataplane/nfq.h"
#include "dataplane/wire/pgm_wire.h"
#include "tests/lib/tool.h"

#ifndef IPPROTO_PGM
#define IPPROTO_PGM 113
#endif

struct floor {
	int fd; /* raw IP socket, protocol PGM: the kernel writes the IP header */
	int mcast_if;
	uint64_t naks, ncfs_sent, send_errors, bad_naks, ncfs_dropped;
	uint8_t tpdu[NFQUEUE_MAX_PAYLOAD];
};

/* The NCF for a NAK: sent before the NAK's verdict. 0 when sent. */
static int answer_nak(struct floor *f, const uint8_t *tpdu, size_t len, int ifindex)
{
	struct pgm_packet pkt;
	struct sockaddr_in to = {.sin_family = AF_INET};

	if (pgm_parse(tpdu, len, 0, &pkt) != PGM_ERR_OK || pkt.nak_grp.afi != PGM_AFI_IP ||
		ifindex <= 0) {
		f->bad_naks++;
		return -1;
	}
	memcpy(f->tpdu, tpdu, len);
	memcpy(f->tpdu, tpdu + 2, 2); /* downstream: SPORT is the source's port (8.3) */
	memcpy(f->tpdu + 2, tpdu, 2);
	f->tpdu[4] = PGM_NCF;
	pgm_checksum_set(f->tpdu, len);
	memcpy(&to.sin_addr, pkt.nak_grp.addr, 4);
	if (ifindex != f->mcast_if) {
		struct ip_mreqn m = {.imr_ifindex = ifindex};

		if (setsockopt(f->fd, IPPROTO_IP, IP_MULTICAST_IF, &m, sizeof(m)) < 0) {
			f->send_errors++;
			return -1;
		}
		f->mcast_if = ifindex;
	}
	if (sendto(f->fd, f->tpdu, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
		f->send_errors++;
		return -1;
	}
	f->ncfs_sent++;
	return 0;
}

static void on_packet(void *ctx, struct nfqueue *q, const struct nfqueue_packet *pkt)
{
	struct floor *f = ctx;
	struct pgm_ip ip;
	enum nfqueue_verdict v = NFQUEUE_ACCEPT;

	if (pgm_parse_ip(pkt->payload, pkt->len, NULL, &ip) == PGM_ERR_OK && !ip.udp &&
		ip.pgm_len >= 8) {
		const uint8_t *tpdu = pkt->payload + ip.pgm_offset;

		if (tpdu[4] == PGM_NAK) {
			f->naks++;
			(void)answer_nak(f, tpdu, ip.pgm_len, (int)pkt->in_ifindex);
			v = NFQUEUE_DROP;
		} else if (tpdu[4] == PGM_NCF) {
			f->ncfs_dropped++;
			v = NFQUEUE_DROP;
		}
	}
	(void)nfqueue_verdict(q, pkt->id, v);
}

int main(int argc, char **argv)
{
	struct nfqueue_config cfg;
	struct nfqueue_stats st;
	struct nfqueue *q;
	struct floor *f;
	double seconds = 0;
	const char *ready = NULL;
	struct timespec start, now;
	char err[256];
	int c, ttl = 255, loop = 0, small = 4096;

	nfqueue_config_default(&cfg);
	while ((c = getopt(argc, argv, "q:t:r:")) != -1) {
		switch (c) {
		case 'q':
			cfg.queue_num = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = strtod(optarg, NULL);
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: nfq-ncffloor [-q QUEUE] [-t SECONDS] [-r READY_FILE]\n");
			return 2;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return 1;
	f->fd = socket(AF_INET, SOCK_RAW, IPPROTO_PGM);
	if (f->fd < 0) {
		perror("nfq-ncffloor: raw socket");
		return 1;
	}
	/* send only: what the socket would receive is never read */
	(void)setsockopt(f->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	(void)setsockopt(f->fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
	(void)setsockopt(f->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop));
	q = nfqueue_open(&cfg, on_packet, f, err, sizeof(err));
	if (q == NULL) {
		fprintf(stderr, "nfq-ncffloor: %s\n", err);
		return 1;
	}
	touch_ready(ready);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!stop_requested) {
		struct pollfd pfd = {.fd = nfqueue_fd(q), .events = POLLIN};

		if (seconds > 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((double)(now.tv_sec - start.tv_sec) +
					(double)(now.tv_nsec - start.tv_nsec) / 1e9 >=
				seconds)
				break;
		}
		if (poll(&pfd, 1, 200) < 0 && errno != EINTR) {
			perror("nfq-ncffloor: poll");
			break;
		}
		if ((pfd.revents & POLLIN) && nfqueue_process(q, 64) < 0) {
			fprintf(stderr, "nfq-ncffloor: receive: %s\n", strerror(errno));
			break;
		}
	}
	nfqueue_get_stats(q, &st);
	printf("packets=%" PRIu64 " naks=%" PRIu64 " ncfs_sent=%" PRIu64 " send_errors=%" PRIu64
	       " bad_naks=%" PRIu64 " ncfs_dropped=%" PRIu64 " rounds=%" PRIu64 "\n",
		st.packets, f->naks, f->ncfs_sent, f->send_errors, f->bad_naks, f->ncfs_dropped,
		st.rounds);
	nfqueue_close(q);
	close(f->fd);
	free(f);
	return 0;
}

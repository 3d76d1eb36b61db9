/*
 * pgm-sniff: a small PGM observer for shell-driven tests. Captures on one interface with libpcap
 * and prints one parsed line per PGM packet (IP protocol 113, or UDP on the encapsulation
 * ports), bounded by time and count:
 *
 *   pgm src=198.18.1.2 dst=239.192.0.1 ttl=15 ra=1 encap=ip csum=ok type=SPM | SPM 0102...
 *
 * csum is ok, bad or none (a zero checksum); malformed packets print error=NAME (the codec's
 * counter name) instead of the summary. Every parsed line ends with the PGM ports as they go on
 * the wire ("ports 1234>7500"; the summary shows the session's TSI, upstream types swapped
 * back) and, over UDP, the UDP ports ("udp-ports 3055>3055"); --time adds the capture time
 * ("time=SECONDS.MICROSECONDS"). IPv4 fragments of PGM over IP print a line each ("pgm ipfrag
 * src=S dst=D id=N off=BYTES mf=0|1 len=N") and, once all have come, their datagram's line
 * ending in "ipfrags=N". UDP checksums are not judged here (veth captures of
 * local senders carry offloaded, unfinished checksums); udpcsum= shows them.
 *
 *   pgm-sniff --if IF [--timeout S (10)] [--count N] [--ports U,M (3055,3056)] [--in]
 *             [--ready FILE] [--filter BPF] [--write PCAP] [--time]
 *
 * IPv6 datagrams behind a hop-by-hop header (Router Alert) are captured too, and printed when
 * PGM is their upper layer. --in keeps only packets the interface received. --ready creates FILE
 * once capturing. --write also saves every captured packet (PGM or not) to a pcap file for tshark.
 * At the end "sniffed N packets" goes to standard error. Exit status 0, or 2 on a capture error.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataplane/pcapio.h"
#include "dataplane/wire/pgm_wire.h"
#include "tests/lib/tool.h"

/* An IPv4 datagram being put together from its fragments (by source, destination, protocol
   and id; overlapping fragments are not expected from the peers and not handled). */
#define SNIFF_REASM_SLOTS 8
struct sniff_reasm {
	bool used;
	uint8_t key[10]; /* source, destination, protocol, id... as in the header (12..19, 9, 4..5) */
	size_t have, total; /* data bytes held; the whole data length once the last arrived, else 0 */
	unsigned frags;
	uint8_t buf[0xffff];
};

struct sniff {
	pcap_dumper_t *dump;
	struct pgm_udp_ports ports;
	int dlt;
	bool show_time;
	unsigned long printed;
	struct sniff_reasm reasm[SNIFF_REASM_SLOTS];
	unsigned reasm_next;
};

static void print_tail(const struct sniff *s, const struct pgm_ip *ip, const struct pgm_packet *pkt,
	const struct timeval *ts, unsigned frags)
{
	if (pkt != NULL)
		printf(" ports %u>%u", pkt->sport, pkt->dport);
	if (ip->udp)
		printf(" udp-ports %u>%u", ip->udp_sport, ip->udp_dport);
	if (s->show_time)
		printf(" time=%lld.%06ld", (long long)ts->tv_sec, (long)ts->tv_usec);
	if (frags != 0)
		printf(" ipfrags=%u", frags);
	printf("\n");
}

static void print_datagram(struct sniff *s, const uint8_t *d, size_t len,
	const struct timeval *ts, unsigned frags);

/*
 * An IPv4 fragment (PGM over IP: every fragment carries protocol 113): one line for it, "pgm
 * ipfrag src=S dst=D id=N off=BYTES mf=0|1 len=IP_LENGTH", and once its datagram is whole, the
 * datagram's own line with "ipfrags=N" at its end.
 */
static void print_fragment(
	struct sniff *s, const uint8_t *d, size_t caplen, const struct timeval *ts)
{
	size_t ihl = (size_t)(d[0] & 0x0f) * 4, total = (size_t)(d[2] << 8 | d[3]), n, off;
	unsigned word = (unsigned)(d[6] << 8 | d[7]);
	struct sniff_reasm *r = NULL;
	uint8_t key[10];
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, d + 12, src, sizeof(src));
	inet_ntop(AF_INET, d + 16, dst, sizeof(dst));
	off = (size_t)(word & 0x1fff) * 8;
	printf("pgm ipfrag src=%s dst=%s id=%u off=%zu mf=%d len=%zu\n", src, dst,
		(unsigned)(d[4] << 8 | d[5]), off, (word & 0x2000) != 0, total);
	s->printed++;
	if (total > caplen || total < ihl)
		return;
	n = total - ihl;
	if (off + n > sizeof(r->buf) - 60)
		return;
	memcpy(key, d + 12, 8);
	key[8] = d[4];
	key[9] = d[5];
	for (unsigned i = 0; i < SNIFF_REASM_SLOTS; i++)
		if (s->reasm[i].used && memcmp(s->reasm[i].key, key, sizeof(key)) == 0 &&
			s->reasm[i].buf[9] == d[9])
			r = &s->reasm[i];
	if (r == NULL) {
		r = &s->reasm[s->reasm_next++ % SNIFF_REASM_SLOTS]; /* the oldest goes */
		r->used = true;
		memcpy(r->key, key, sizeof(key));
		r->have = r->total = 0;
		r->frags = 0;
		memcpy(r->buf, d, 20); /* until the first fragment's header */
		r->buf[0] = 0x45;
	}
	if (off == 0)
		memcpy(r->buf, d, 20); /* its options are not kept */
	r->buf[0] = 0x45;
	memcpy(r->buf + 20 + off, d + ihl, n);
	r->have += n;
	r->frags++;
	if (!(word & 0x2000))
		r->total = off + n;
	if (r->total == 0 || r->have != r->total)
		return;
	r->used = false;
	r->buf[2] = (uint8_t)((r->total + 20) >> 8);
	r->buf[3] = (uint8_t)(r->total + 20);
	r->buf[6] = r->buf[7] = 0;
	print_datagram(s, r->buf, r->total + 20, ts, r->frags);
}

static void print_packet(
	struct sniff *s, const uint8_t *frame, size_t caplen, const struct timeval *ts)
{
	uint8_t version;
	int off = pcap_link_ip_offset(s->dlt, frame, caplen, &version);

	if (off < 0)
		return;
	if (version == 4 && caplen - (size_t)off >= 20 && frame[off + 9] == 113 &&
		((frame[off + 6] << 8 | frame[off + 7]) & 0x3fff) != 0) {
		print_fragment(s, frame + off, caplen - (size_t)off, ts);
		return;
	}
	print_datagram(s, frame + off, caplen - (size_t)off, ts, 0);
}

static void print_datagram(struct sniff *s, const uint8_t *d, size_t len,
	const struct timeval *ts, unsigned frags)
{
	struct pgm_ip ip;
	struct pgm_packet pkt;
	char src[64], dst[64], line[1024];
	const char *csum;
	enum pgm_err e;

	e = pgm_parse_ip(d, len, &s->ports, &ip);
	if (e == PGM_ERR_NOT_PGM)
		return;
	if (e != PGM_ERR_OK) {
		printf("pgm error=%s len=%zu\n", pgm_err_name(e), len);
		s->printed++;
		return;
	}
	pgm_nla_format(&ip.src, src, sizeof(src));
	pgm_nla_format(&ip.dst, dst, sizeof(dst));
	printf("pgm src=%s dst=%s ttl=%u ra=%d encap=%s", src, dst, ip.ttl, ip.router_alert,
		ip.udp ? "udp" : "ip");
	if (ip.udp)
		printf(" udpcsum=%s", ip.udp_checksum == 0			 ? "none"
				      : pgm_ip_udp_checksum_ok(d, &ip) ? "ok"
										 : "bad");
	e = pgm_parse(d + ip.pgm_offset, ip.pgm_len, 0, &pkt);
	if (e == PGM_ERR_BAD_CHECKSUM) {
		csum = "bad";
		e = pgm_parse(d + ip.pgm_offset, ip.pgm_len, PGM_PARSE_NO_CHECKSUM, &pkt);
	} else {
		csum = pkt.checksum == 0 ? "none" : "ok";
	}
	if (e != PGM_ERR_OK) {
		printf(" csum=%s error=%s len=%u", csum, pgm_err_name(e), ip.pgm_len);
		print_tail(s, &ip, NULL, ts, frags);
	} else {
		pgm_packet_format(&pkt, line, sizeof(line));
		printf(" csum=%s type=%s | %s", csum, pgm_type_name(pkt.type), line);
		print_tail(s, &ip, &pkt, ts, frags);
	}
	s->printed++;
}

static void usage(void)
{
	fprintf(stderr, "usage: pgm-sniff --if IF [--timeout S] [--count N] [--ports U,M] [--in] "
			"[--ready FILE] [--filter BPF] [--write PCAP] [--time]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"if", required_argument, NULL, 'i'},
		{"timeout", required_argument, NULL, 't'},
		{"count", required_argument, NULL, 'n'},
		{"ports", required_argument, NULL, 'p'},
		{"in", no_argument, NULL, 'I'},
		{"ready", required_argument, NULL, 'r'},
		{"filter", required_argument, NULL, 'f'},
		{"write", required_argument, NULL, 'w'},
		{"time", no_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	const char *ifname = NULL, *ready = NULL, *filter = NULL, *pcap_out = NULL;
	double timeout = 10, start;
	unsigned long count = 0;
	bool in_only = false;
	char errbuf[PCAP_ERRBUF_SIZE], deffilter[128];
	struct bpf_program prog;
	static struct sniff s;
	pcap_t *p;
	int c;

	memset(&s, 0, sizeof(s));
	pgm_udp_ports_default(&s.ports);
	s.ports.enabled = true;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			ifname = optarg;
			break;
		case 't':
			timeout = strtod(optarg, NULL);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'p': {
			unsigned u, m;

			if (sscanf(optarg, "%u,%u", &u, &m) != 2 || u > 0xffff || m > 0xffff)
				usage();
			s.ports.ucast_port = (uint16_t)u;
			s.ports.mcast_port = (uint16_t)m;
			break;
		}
		case 'I':
			in_only = true;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'f':
			filter = optarg;
			break;
		case 'w':
			pcap_out = optarg;
			break;
		case 'T':
			s.show_time = true;
			break;
		default:
			usage();
		}
	}
	if (ifname == NULL || optind < argc)
		usage();
	snprintf(deffilter, sizeof(deffilter),
		"ip proto 113 or ip6 proto 113 or ip6 proto 0 or udp port %u or udp port %u",
		s.ports.ucast_port, s.ports.mcast_port);
	p = pcap_create(ifname, errbuf);
	if (p == NULL) {
		fprintf(stderr, "pgm-sniff: %s\n", errbuf);
		return 2;
	}
	pcap_set_snaplen(p, 65535);
	pcap_set_immediate_mode(p, 1);
	pcap_set_buffer_size(p, 4 * 1024 * 1024);
	if (pcap_activate(p) < 0) {
		fprintf(stderr, "pgm-sniff: %s: %s\n", ifname, pcap_geterr(p));
		return 2;
	}
	if (in_only && pcap_setdirection(p, PCAP_D_IN) < 0) {
		fprintf(stderr, "pgm-sniff: %s\n", pcap_geterr(p));
		return 2;
	}
	if (pcap_compile(p, &prog, filter ? filter : deffilter, 1, PCAP_NETMASK_UNKNOWN) < 0 ||
		pcap_setfilter(p, &prog) < 0) {
		fprintf(stderr, "pgm-sniff: filter: %s\n", pcap_geterr(p));
		return 2;
	}
	pcap_freecode(&prog);
	if (pcap_setnonblock(p, 1, errbuf) < 0) {
		fprintf(stderr, "pgm-sniff: %s\n", errbuf);
		return 2;
	}
	s.dlt = pcap_datalink(p);
	if (pcap_out != NULL && (s.dump = pcap_dump_open(p, pcap_out)) == NULL) {
		fprintf(stderr, "pgm-sniff: %s: %s\n", pcap_out, pcap_geterr(p));
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	touch_ready(ready);
	start = now_seconds();
	while (!stop_requested && now_seconds() - start < timeout &&
		(count == 0 || s.printed < count)) {
		struct pollfd pfd = {.fd = pcap_get_selectable_fd(p), .events = POLLIN};
		struct pcap_pkthdr *h;
		const u_char *data;

		poll(&pfd, 1, 50);
		while ((count == 0 || s.printed < count) && pcap_next_ex(p, &h, &data) == 1) {
			if (s.dump != NULL) {
				pcap_dump((u_char *)s.dump, h, data);
				pcap_dump_flush(s.dump);
			}
			print_packet(&s, data, h->caplen, &h->ts);
		}
	}
	fprintf(stderr, "sniffed %lu packets\n", s.printed);
	if (s.dump != NULL)
		pcap_dump_close(s.dump);
	pcap_close(p);
	return 0;
}

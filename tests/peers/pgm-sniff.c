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
 * ("time=SECONDS.MICROSECONDS"). UDP checksums are not judged here (veth captures of
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

static volatile sig_atomic_t stop_requested;

static void on_signal(int signo)
{
	(void)signo;
	stop_requested = 1;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sniff {
	pcap_dumper_t *dump;
	struct pgm_udp_ports ports;
	int dlt;
	bool show_time;
	unsigned long printed;
};

static void print_tail(const struct sniff *s, const struct pgm_ip *ip, const struct pgm_packet *pkt,
	const struct timeval *ts)
{
	if (pkt != NULL)
		printf(" ports %u>%u", pkt->sport, pkt->dport);
	if (ip->udp)
		printf(" udp-ports %u>%u", ip->udp_sport, ip->udp_dport);
	if (s->show_time)
		printf(" time=%lld.%06ld", (long long)ts->tv_sec, (long)ts->tv_usec);
	printf("\n");
}

static void print_packet(
	struct sniff *s, const uint8_t *frame, size_t caplen, const struct timeval *ts)
{
	struct pgm_ip ip;
	struct pgm_packet pkt;
	char src[64], dst[64], line[1024];
	const char *csum;
	enum pgm_err e;
	uint8_t version;
	int off = pcap_link_ip_offset(s->dlt, frame, caplen, &version);

	if (off < 0)
		return;
	e = pgm_parse_ip(frame + off, caplen - (size_t)off, &s->ports, &ip);
	if (e == PGM_ERR_NOT_PGM)
		return;
	if (e != PGM_ERR_OK) {
		printf("pgm error=%s len=%zu\n", pgm_err_name(e), caplen - (size_t)off);
		s->printed++;
		return;
	}
	pgm_nla_format(&ip.src, src, sizeof(src));
	pgm_nla_format(&ip.dst, dst, sizeof(dst));
	printf("pgm src=%s dst=%s ttl=%u ra=%d encap=%s", src, dst, ip.ttl, ip.router_alert,
		ip.udp ? "udp" : "ip");
	if (ip.udp)
		printf(" udpcsum=%s", ip.udp_checksum == 0			 ? "none"
				      : pgm_ip_udp_checksum_ok(frame + off, &ip) ? "ok"
										 : "bad");
	e = pgm_parse(frame + off + ip.pgm_offset, ip.pgm_len, 0, &pkt);
	if (e == PGM_ERR_BAD_CHECKSUM) {
		csum = "bad";
		e = pgm_parse(frame + off + ip.pgm_offset, ip.pgm_len, PGM_PARSE_NO_CHECKSUM, &pkt);
	} else {
		csum = pkt.checksum == 0 ? "none" : "ok";
	}
	if (e != PGM_ERR_OK) {
		printf(" csum=%s error=%s len=%u", csum, pgm_err_name(e), ip.pgm_len);
		print_tail(s, &ip, NULL, ts);
	} else {
		pgm_packet_format(&pkt, line, sizeof(line));
		printf(" csum=%s type=%s | %s", csum, pgm_type_name(pkt.type), line);
		print_tail(s, &ip, &pkt, ts);
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
	struct sniff s;
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
	if (ready != NULL) {
		FILE *f = fopen(ready, "w");

		if (f != NULL)
			fclose(f);
	}
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

/*
 * Replaying captures through the wire codec (see pgm_pcap_check.h).
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "tests/lib/pgm_pcap_check.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Offset of the IP datagram in a frame, or -1 if there is none. */
static long ip_offset(int dlt, const uint8_t *frame, size_t len)
{
	size_t off;
	uint16_t proto;

	switch (dlt) {
	case DLT_EN10MB:
		if (len < 14)
			return -1;
		proto = get16(frame + 12);
		off = 14;
		while ((proto == ETHERTYPE_VLAN || proto == ETHERTYPE_QINQ) && len - off >= 4) {
			proto = get16(frame + off + 2);
			off += 4;
		}
		break;
	case DLT_LINUX_SLL:
		if (len < 16)
			return -1;
		proto = get16(frame + 14);
		off = 16;
		break;
	case DLT_LINUX_SLL2:
		if (len < 20)
			return -1;
		proto = get16(frame);
		off = 20;
		break;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		if (len < 1)
			return -1;
		proto = (frame[0] >> 4) == 6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4;
		off = 0;
		break;
	default:
		return -1;
	}
	if ((proto != ETHERTYPE_IPV4 && proto != ETHERTYPE_IPV6) || off >= len)
		return -1;
	if ((frame[off] >> 4) != (proto == ETHERTYPE_IPV4 ? 4 : 6))
		return -1;
	return (long)off;
}

int pgm_pcap_for_each_datagram(const char *path, pgm_pcap_datagram_fn fn, void *arg,
	struct pgm_pcap_walk *walk, char *errbuf, size_t errlen)
{
	char pcap_err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *frame;
	pcap_t *pcap;
	int dlt, rc;

	memset(walk, 0, sizeof(*walk));
	pcap = pcap_open_offline(path, pcap_err);
	if (pcap == NULL) {
		snprintf(errbuf, errlen, "%s: %s", path, pcap_err);
		return -1;
	}
	dlt = pcap_datalink(pcap);
	if (dlt != DLT_EN10MB && dlt != DLT_LINUX_SLL && dlt != DLT_LINUX_SLL2 && dlt != DLT_RAW &&
		dlt != DLT_IPV4 && dlt != DLT_IPV6) {
		snprintf(errbuf, errlen, "%s: unsupported link type %s", path,
			pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?");
		pcap_close(pcap);
		return -1;
	}
	while ((rc = pcap_next_ex(pcap, &h, &frame)) == 1) {
		long off;

		walk->records++;
		if (h->caplen < h->len) {
			walk->truncated++;
			continue;
		}
		off = ip_offset(dlt, frame, h->caplen);
		if (off < 0) {
			walk->not_ip++;
			continue;
		}
		walk->datagrams++;
		fn(frame + off, h->caplen - (size_t)off, walk->records, arg);
	}
	if (rc == -1) {
		snprintf(errbuf, errlen, "%s: %s", path, pcap_geterr(pcap));
		pcap_close(pcap);
		return -1;
	}
	pcap_close(pcap);
	return 0;
}

struct check_ctx {
	const struct pgm_udp_ports *ports;
	unsigned flags;
	struct pgm_pcap_check *result;
};

static void check_datagram(const uint8_t *datagram, size_t len, unsigned long index, void *arg)
{
	struct check_ctx *ctx = arg;
	struct pgm_pcap_check *r = ctx->result;
	uint8_t out[65536];
	struct pgm_packet pkt;
	struct pgm_ip ip;
	enum pgm_err err;
	size_t n, i;

	err = pgm_parse_datagram(datagram, len, ctx->ports, ctx->flags, &ip, &pkt);
	if (err == PGM_ERR_NOT_PGM) {
		r->not_pgm++;
		return;
	}
	r->pgm++;
	if (err != PGM_ERR_OK) {
		r->errors[err]++;
		if (r->first_error_record == 0) {
			r->first_error_record = index;
			r->first_error = err;
		}
		return;
	}
	r->parsed++;
	n = pgm_packet_serialize(out, sizeof(out), &pkt);
	if (n == pkt.tpdu_len && memcmp(out, pkt.tpdu, n) == 0) {
		r->identical++;
		return;
	}
	r->mismatches++;
	if (r->first_mismatch_record == 0) {
		for (i = 0; i < n && i < pkt.tpdu_len && out[i] == pkt.tpdu[i]; i++)
			;
		r->first_mismatch_record = index;
		r->first_mismatch_offset = i;
		pgm_packet_format(
			&pkt, r->first_mismatch_summary, sizeof(r->first_mismatch_summary));
	}
}

int pgm_pcap_check_file(const char *path, const struct pgm_udp_ports *ports, unsigned flags,
	struct pgm_pcap_check *result, char *errbuf, size_t errlen)
{
	struct check_ctx ctx = {.ports = ports, .flags = flags, .result = result};

	memset(result, 0, sizeof(*result));
	return pgm_pcap_for_each_datagram(
		path, check_datagram, &ctx, &result->walk, errbuf, errlen);
}

/*
 * Captures: the writer's files read back byte for byte through libpcap, their header (magic,
 * version 2.4, LINKTYPE_RAW), the size bound (stop, rotate once),
 * and the reader's link layers (Ethernet with VLAN tags, Linux cooked v1/v2, raw) and bad input.
 */
#include <check.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataplane/pcapio.h"
#include "tests/unit/check_run.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/pcapio-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void path_in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* A fake IPv4 datagram of `len` bytes (header fields enough for the version nibble). */
static void make_ip4(uint8_t *p, size_t len, uint8_t fill)
{
	memset(p, fill, len);
	p[0] = 0x45;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	p[9] = 113;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

START_TEST(test_round_trip)
{
	struct pcap_writer_config cfg;
	struct pcap_writer_stats ws;
	struct pcap_reader_stats rs;
	struct pcap_datagram d;
	struct pcap_writer *w;
	struct pcap_reader *r;
	uint8_t a[60], b[1500], v6[48] = {0x60};
	struct timeval ta = {1700000000, 123456}, tb = {1700000001, 999999};
	char path[128], err[256];

	path_in_dir(path, sizeof(path), "rt.pcap");
	make_ip4(a, sizeof(a), 0xaa);
	make_ip4(b, sizeof(b), 0xbb);
	pcap_writer_config_default(&cfg);
	w = pcap_writer_open(path, &cfg, err, sizeof(err));
	ck_assert_msg(w != NULL, "%s", err);
	ck_assert_int_eq(pcap_writer_write(w, a, sizeof(a), &ta), 0);
	ck_assert_int_eq(pcap_writer_write(w, b, sizeof(b), &tb), 0);
	ck_assert_int_eq(pcap_writer_write(w, v6, sizeof(v6), NULL), 0);
	ck_assert_int_eq(pcap_writer_flush(w), 0);
	pcap_writer_get_stats(w, &ws);
	ck_assert_uint_eq(ws.packets, 3);
	ck_assert_uint_eq(ws.bytes, 24 + 3 * 16 + 60 + 1500 + 48);
	ck_assert_int_eq(file_size(path), (long)ws.bytes);
	pcap_writer_close(w);

	r = pcap_reader_open(path, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	ck_assert_int_eq(pcap_reader_linktype(r), DLT_RAW);
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1);
	ck_assert_uint_eq(d.len, sizeof(a));
	ck_assert_uint_eq(d.orig_len, sizeof(a));
	ck_assert_int_eq(memcmp(d.ip, a, sizeof(a)), 0);
	ck_assert_int_eq(d.ts.tv_sec, ta.tv_sec);
	ck_assert_int_eq(d.ts.tv_usec, ta.tv_usec);
	ck_assert_uint_eq(d.ip_version, 4);
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1);
	ck_assert_uint_eq(d.len, sizeof(b));
	ck_assert_int_eq(memcmp(d.ip, b, sizeof(b)), 0);
	ck_assert_int_eq(d.ts.tv_usec, 999999);
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1);
	ck_assert_uint_eq(d.ip_version, 6);
	ck_assert_int_gt(d.ts.tv_sec, 1700000001); /* NULL: now */
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 0);
	pcap_reader_get_stats(r, &rs);
	ck_assert_uint_eq(rs.frames, 3);
	ck_assert_uint_eq(rs.datagrams, 3);
	pcap_reader_close(r);
}
END_TEST

START_TEST(test_file_header_bytes)
{
	struct pcap_writer *w;
	char path[128], err[256];
	uint32_t hdr[6];
	FILE *f;

	path_in_dir(path, sizeof(path), "hdr.pcap");
	w = pcap_writer_open(path, NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	pcap_writer_close(w);
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fclose(f);
	ck_assert_uint_eq(hdr[0], 0xa1b2c3d4u);
	ck_assert_uint_eq(hdr[1] & 0xffff, 2);
	ck_assert_uint_eq(hdr[1] >> 16, 4);
	ck_assert_uint_eq(hdr[4], 65535);
	ck_assert_uint_eq(hdr[5], 101); /* LINKTYPE_RAW */
}
END_TEST

START_TEST(test_limit_stop)
{
	struct pcap_writer_config cfg = {
		.max_bytes = 24 + 3 * (16 + 100), .on_limit = PCAP_LIMIT_STOP};
	struct pcap_writer_stats ws;
	struct pcap_writer *w;
	uint8_t p[100];
	char path[128], err[256];

	path_in_dir(path, sizeof(path), "stop.pcap");
	make_ip4(p, sizeof(p), 1);
	w = pcap_writer_open(path, &cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < 10; i++)
		pcap_writer_write(w, p, sizeof(p), NULL);
	pcap_writer_get_stats(w, &ws);
	ck_assert_uint_eq(ws.packets, 3);
	ck_assert_uint_eq(ws.limit_dropped, 7);
	ck_assert(ws.stopped);
	ck_assert_uint_eq(ws.rotations, 0);
	pcap_writer_close(w);
	ck_assert_int_eq(file_size(path), (long)cfg.max_bytes);
}
END_TEST

START_TEST(test_limit_rotate_once)
{
	struct pcap_writer_config cfg = {.max_bytes = 1000, .on_limit = PCAP_LIMIT_ROTATE_ONCE};
	struct pcap_writer_stats ws;
	struct pcap_reader *r;
	struct pcap_datagram d;
	struct pcap_writer *w;
	uint8_t p[100];
	char path[128], rotated[140], err[256];
	int n = 0;

	path_in_dir(path, sizeof(path), "rot.pcap");
	snprintf(rotated, sizeof(rotated), "%s.1", path);
	w = pcap_writer_open(path, &cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	for (int i = 0; i < 40; i++) {
		make_ip4(p, sizeof(p), (uint8_t)i);
		ck_assert_int_eq(pcap_writer_write(w, p, sizeof(p), NULL), 0);
	}
	pcap_writer_get_stats(w, &ws);
	pcap_writer_close(w);
	/* 8 records of 116 bytes fit after the 24-byte header: 40 records = 4 rotations */
	ck_assert_uint_eq(ws.packets, 40);
	ck_assert_uint_eq(ws.rotations, 4);
	ck_assert_uint_eq(ws.limit_dropped, 0);
	ck_assert_int_le(file_size(path), 1000);
	ck_assert_int_le(file_size(rotated), 1000);
	ck_assert_int_eq(file_size(rotated), 24 + 8 * 116);
	/* the current file holds the newest records, in order */
	r = pcap_reader_open(path, err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	while (pcap_reader_next(r, &d, err, sizeof(err)) == 1) {
		ck_assert_uint_eq(d.ip[10], (uint8_t)(32 + n));
		n++;
	}
	ck_assert_int_eq(n, 8);
	pcap_reader_close(r);
}
END_TEST

START_TEST(test_writer_errors)
{
	struct pcap_writer_config tiny = {.max_bytes = 30, .on_limit = PCAP_LIMIT_STOP};
	struct pcap_writer_config small = {.max_bytes = 100, .on_limit = PCAP_LIMIT_ROTATE_ONCE};
	struct pcap_writer_stats ws;
	struct pcap_writer *w;
	uint8_t big[200];
	char path[128], err[256];

	path_in_dir(path, sizeof(path), "e.pcap");
	ck_assert_ptr_null(pcap_writer_open(path, &tiny, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "too small"));
	ck_assert_ptr_null(pcap_writer_open("/nonexistent-dir/x.pcap", NULL, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "cannot create /nonexistent-dir/x.pcap"));
	w = pcap_writer_open(path, &small, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	make_ip4(big, sizeof(big), 0);
	ck_assert_int_eq(pcap_writer_write(w, big, sizeof(big), NULL), -1); /* never fits */
	ck_assert_int_eq(pcap_writer_write(w, NULL, 10, NULL), -1);
	pcap_writer_get_stats(w, &ws);
	ck_assert_uint_eq(ws.errors, 2);
	ck_assert_uint_eq(ws.packets, 0);
	pcap_writer_close(w);
}
END_TEST

/* Writes frames with libpcap's own dumper for a given link type. */
static void dump_frames(
	const char *path, int dlt, const uint8_t *const *frames, const size_t *lens, int n)
{
	pcap_t *p = pcap_open_dead(dlt, 65535);
	pcap_dumper_t *dd = pcap_dump_open(p, path);

	ck_assert_ptr_nonnull(dd);
	for (int i = 0; i < n; i++) {
		struct pcap_pkthdr h = {.ts = {1000 + i, 0},
			.caplen = (bpf_u_int32)lens[i],
			.len = (bpf_u_int32)lens[i]};

		pcap_dump((u_char *)dd, &h, frames[i]);
	}
	pcap_dump_close(dd);
	pcap_close(p);
}

START_TEST(test_reader_ethernet_vlan_and_arp)
{
	uint8_t plain[14 + 40], vlan[18 + 40], qinq[22 + 40], arp[14 + 28], v6[14 + 40];
	const uint8_t *frames[] = {plain, vlan, qinq, arp, v6};
	size_t lens[] = {sizeof(plain), sizeof(vlan), sizeof(qinq), sizeof(arp), sizeof(v6)};
	struct pcap_reader_stats rs;
	struct pcap_datagram d;
	struct pcap_reader *r;
	char path[128], err[256];

	memset(plain, 0, sizeof(plain));
	plain[12] = 0x08;
	make_ip4(plain + 14, 40, 1);
	memset(vlan, 0, sizeof(vlan));
	vlan[12] = 0x81;
	vlan[16] = 0x08;
	make_ip4(vlan + 18, 40, 2);
	memset(qinq, 0, sizeof(qinq));
	qinq[12] = 0x88;
	qinq[13] = 0xa8;
	qinq[16] = 0x81;
	qinq[20] = 0x08;
	make_ip4(qinq + 22, 40, 3);
	memset(arp, 0, sizeof(arp));
	arp[12] = 0x08;
	arp[13] = 0x06;
	memset(v6, 0, sizeof(v6));
	v6[12] = 0x86;
	v6[13] = 0xdd;
	v6[14] = 0x60;
	path_in_dir(path, sizeof(path), "eth.pcap");
	dump_frames(path, DLT_EN10MB, frames, lens, 5);

	r = pcap_reader_open(path, err, sizeof(err));
	ck_assert_msg(r != NULL, "%s", err);
	for (int i = 1; i <= 3; i++) {
		ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1);
		ck_assert_uint_eq(d.len, 40);
		ck_assert_uint_eq(d.ip[0], 0x45);
		ck_assert_uint_eq(d.ip[10], i); /* the fill byte of frame i */
	}
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1); /* ARP skipped */
	ck_assert_uint_eq(d.ip_version, 6);
	ck_assert_int_eq(d.ts.tv_sec, 1004);
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 0);
	pcap_reader_get_stats(r, &rs);
	ck_assert_uint_eq(rs.frames, 5);
	ck_assert_uint_eq(rs.datagrams, 4);
	ck_assert_uint_eq(rs.not_ip, 1);
	pcap_reader_close(r);
}
END_TEST

START_TEST(test_reader_cooked_v1_v2)
{
	uint8_t sll[16 + 40], sll2[20 + 40];
	const uint8_t *f1[] = {sll}, *f2[] = {sll2};
	size_t l1[] = {sizeof(sll)}, l2[] = {sizeof(sll2)};
	struct pcap_datagram d;
	struct pcap_reader *r;
	char path[128], err[256];

	memset(sll, 0, sizeof(sll));
	sll[14] = 0x08; /* protocol at 14 */
	make_ip4(sll + 16, 40, 7);
	memset(sll2, 0, sizeof(sll2));
	sll2[0] = 0x08; /* protocol at 0 */
	make_ip4(sll2 + 20, 40, 8);

	path_in_dir(path, sizeof(path), "sll.pcap");
	dump_frames(path, DLT_LINUX_SLL, f1, l1, 1);
	r = pcap_reader_open(path, err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1);
	ck_assert_uint_eq(d.len, 40);
	ck_assert_uint_eq(d.ip[10], 7);
	pcap_reader_close(r);

	path_in_dir(path, sizeof(path), "sll2.pcap");
	dump_frames(path, DLT_LINUX_SLL2, f2, l2, 1);
	r = pcap_reader_open(path, err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(pcap_reader_linktype(r), DLT_LINUX_SLL2);
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1);
	ck_assert_uint_eq(d.ip[10], 8);
	pcap_reader_close(r);
}
END_TEST

START_TEST(test_reader_truncated_capture)
{
	uint8_t frame[14 + 60];
	struct pcap_datagram d;
	struct pcap_reader *r;
	pcap_dumper_t *dd;
	pcap_t *p;
	char path[128], err[256];
	struct pcap_pkthdr h = {.ts = {1, 0}, .caplen = 14 + 30, .len = sizeof(frame)};

	memset(frame, 0, sizeof(frame));
	frame[12] = 0x08;
	make_ip4(frame + 14, 60, 9);
	path_in_dir(path, sizeof(path), "trunc.pcap");
	p = pcap_open_dead(DLT_EN10MB, 44);
	dd = pcap_dump_open(p, path);
	pcap_dump((u_char *)dd, &h, frame);
	pcap_dump_close(dd);
	pcap_close(p);
	r = pcap_reader_open(path, err, sizeof(err));
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(pcap_reader_next(r, &d, err, sizeof(err)), 1);
	ck_assert(d.truncated);
	ck_assert_uint_eq(d.len, 30);
	ck_assert_uint_eq(d.orig_len, 60);
	pcap_reader_close(r);
}
END_TEST

START_TEST(test_reader_errors)
{
	const uint8_t frame[4] = {0};
	const uint8_t *frames[] = {frame};
	size_t lens[] = {sizeof(frame)};
	char path[128], err[256];
	FILE *f;

	ck_assert_ptr_null(pcap_reader_open("/nonexistent.pcap", err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "cannot read /nonexistent.pcap"));
	path_in_dir(path, sizeof(path), "wifi.pcap");
	dump_frames(path, DLT_IEEE802_11, frames, lens, 1);
	ck_assert_ptr_null(pcap_reader_open(path, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "is not supported"));
	path_in_dir(path, sizeof(path), "junk.pcap");
	f = fopen(path, "w");
	fputs("this is not a capture file at all", f);
	fclose(f);
	ck_assert_ptr_null(pcap_reader_open(path, err, sizeof(err)));
}
END_TEST

START_TEST(test_link_offsets)
{
	uint8_t f[64];
	uint8_t v = 0;

	memset(f, 0, sizeof(f));
	/* short frames */
	ck_assert_int_eq(pcap_link_ip_offset(DLT_EN10MB, f, 13, &v), -2);
	ck_assert_int_eq(pcap_link_ip_offset(DLT_LINUX_SLL, f, 15, &v), -2);
	ck_assert_int_eq(pcap_link_ip_offset(DLT_LINUX_SLL2, f, 19, &v), -2);
	ck_assert_int_eq(pcap_link_ip_offset(DLT_RAW, f, 0, &v), -2);
	/* ethertype IPv4 but the payload says IPv6: not trusted */
	f[12] = 0x08;
	f[14] = 0x60;
	ck_assert_int_eq(pcap_link_ip_offset(DLT_EN10MB, f, sizeof(f), &v), -1);
	f[14] = 0x45;
	ck_assert_int_eq(pcap_link_ip_offset(DLT_EN10MB, f, sizeof(f), &v), 14);
	ck_assert_uint_eq(v, 4);
	/* Ethernet header only: no IP byte */
	ck_assert_int_eq(pcap_link_ip_offset(DLT_EN10MB, f, 14, &v), -2);
	/* raw with a version that is neither 4 nor 6 */
	f[0] = 0x50;
	ck_assert_int_eq(pcap_link_ip_offset(DLT_RAW, f, sizeof(f), &v), -1);
	/* loopback (BSD null header) */
	f[4] = 0x45;
	ck_assert_int_eq(pcap_link_ip_offset(DLT_NULL, f, sizeof(f), &v), 4);
	/* an unsupported link type */
	ck_assert_int_eq(pcap_link_ip_offset(DLT_IEEE802_11, f, sizeof(f), &v), -1);
	/* endless VLAN tags stop after 4 */
	memset(f, 0, sizeof(f));
	for (int i = 12; i + 1 < 40; i += 4) {
		f[i] = 0x81;
		f[i + 1] = 0x00;
	}
	ck_assert_int_eq(pcap_link_ip_offset(DLT_EN10MB, f, sizeof(f), &v), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pcapio");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_file_header_bytes);
	tcase_add_test(tc, test_limit_stop);
	tcase_add_test(tc, test_limit_rotate_once);
	tcase_add_test(tc, test_writer_errors);
	tcase_add_test(tc, test_reader_ethernet_vlan_and_arp);
	tcase_add_test(tc, test_reader_cooked_v1_v2);
	tcase_add_test(tc, test_reader_truncated_capture);
	tcase_add_test(tc, test_reader_errors);
	tcase_add_test(tc, test_link_offsets);
	suite_add_tcase(s, tc);
	return check_run(s);
}

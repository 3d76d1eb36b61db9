/*
 * Packet captures: a bounded writer for the daemon's debug switch, and a reader for offline
 * replay.
 *
 * Writer: classic pcap (microsecond timestamps), LINKTYPE_RAW, every record a whole IPv4 or IPv6
 * datagram. The file is bounded: when the next record would pass max_bytes the writer either
 * stops (records are counted as not written) or rotates once (the full file becomes FILE.1,
 * replacing an older FILE.1, and a new FILE starts), so at most two files of max_bytes exist.
 * Writes go through a stdio buffer flushed at every pcap_writer_flush() (the daemon calls it
 * once per event-loop round) and at close.
 *
 * Reader: libpcap's offline reader (pcap and pcapng), link types DLT_EN10MB (with 802.1Q/802.1ad
 * tags), DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW (and LINKTYPE_IPV4/IPV6), DLT_NULL/DLT_LOOP. It
 * yields the IP datagram of each frame with its timestamp; frames that carry no IP are skipped
 * and counted.
 */
#ifndef PGMROUTER_PCAPIO_H
#define PGMROUTER_PCAPIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#define PCAP_LINKTYPE_RAW	101 /* the on-disk value of DLT_RAW */
#define PCAP_WRITER_DEFAULT_MAX (64u * 1024 * 1024)
#define PCAP_WRITER_SNAPLEN	65535u

enum pcap_limit_action {
	PCAP_LIMIT_STOP,	/* stop writing at max_bytes */
	PCAP_LIMIT_ROTATE_ONCE, /* keep FILE.1 as the previous full file */
};

struct pcap_writer_config {
	uint64_t max_bytes; /* 0 = unlimited; at least the 24-byte file header */
	enum pcap_limit_action on_limit;
};
void pcap_writer_config_default(struct pcap_writer_config *cfg);

struct pcap_writer_stats {
	uint64_t packets;	/* records written (all files) */
	uint64_t bytes;		/* bytes written to the current file, header included */
	uint64_t total_bytes;	/* bytes written to every file */
	uint64_t limit_dropped; /* records not written: the file was full (STOP) */
	uint64_t rotations;
	uint64_t errors; /* records lost to write errors, or too large */
	bool stopped;	 /* STOP reached the limit */
};

struct pcap_writer;
/* Creates (truncates) the file. NULL with one sentence in err on failure. */
struct pcap_writer *pcap_writer_open(
	const char *path, const struct pcap_writer_config *cfg, char *err, size_t errlen);
/* Writes one datagram; ts NULL = now (CLOCK_REALTIME). Returns 0 if written, -1 otherwise (the
 * reason is counted). */
int pcap_writer_write(struct pcap_writer *w, const void *ip, size_t len, const struct timeval *ts);
int pcap_writer_flush(struct pcap_writer *w);
void pcap_writer_get_stats(const struct pcap_writer *w, struct pcap_writer_stats *st);
void pcap_writer_close(struct pcap_writer *w);

/* ---- reader ---- */

struct pcap_reader_stats {
	uint64_t frames;     /* records read */
	uint64_t datagrams;  /* IP datagrams yielded */
	uint64_t not_ip;     /* frames without IPv4/IPv6 (ARP, other link protocols) */
	uint64_t truncated;  /* frames captured shorter than their length (still yielded) */
	uint64_t bad_frames; /* link headers cut short */
};

struct pcap_datagram {
	const uint8_t *ip; /* the IP header onwards, valid until the next call */
	size_t len;	   /* captured bytes from the IP header */
	size_t orig_len;   /* the frame's length on the wire minus the link header */
	struct timeval ts;
	uint8_t ip_version; /* 4 or 6 */
	bool truncated;
};

struct pcap_reader;
/* NULL with err set when the file cannot be read or its link type is not supported. */
struct pcap_reader *pcap_reader_open(const char *path, char *err, size_t errlen);
/* 1 = a datagram, 0 = end of file, -1 = read error (err set). */
int pcap_reader_next(struct pcap_reader *r, struct pcap_datagram *d, char *err, size_t errlen);
int pcap_reader_linktype(const struct pcap_reader *r); /* the DLT_ value */
void pcap_reader_get_stats(const struct pcap_reader *r, struct pcap_reader_stats *st);
void pcap_reader_close(struct pcap_reader *r);

/* Finds the IP datagram in one frame of the given DLT_ link type (exposed for tests). Returns
 * the offset of the IP header, -1 for a frame without IP, -2 for a short frame. */
int pcap_link_ip_offset(int dlt, const uint8_t *frame, size_t caplen, uint8_t *ip_version);

#endif /* PGMROUTER_PCAPIO_H */

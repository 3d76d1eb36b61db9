/*
 * Packet captures: bounded LINKTYPE_RAW writer and libpcap-based reader. See pcapio.h.
 */
#include "dataplane/pcapio.h"

#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PCAP_MAGIC_USEC	       0xa1b2c3d4u
#define PCAP_FILE_HEADER_LEN   24u
#define PCAP_RECORD_HEADER_LEN 16u

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif

/* ---- writer ---- */

struct pcap_writer {
	char *path;
	char *rotated_path;
	FILE *f;
	struct pcap_writer_config cfg;
	struct pcap_writer_stats st;
};

void pcap_writer_config_default(struct pcap_writer_config *cfg)
{
	cfg->max_bytes = PCAP_WRITER_DEFAULT_MAX;
	cfg->on_limit = PCAP_LIMIT_ROTATE_ONCE;
}

/* Opens (truncating) the current file and writes its header. The path is typed by an operator
   and written by the daemon: never through a symlink, and only a regular file (opened
   non-blocking, so that a FIFO cannot hold the daemon), mode 0600. */
static int pcap_writer_start_file(struct pcap_writer *w)
{
	int fd = open(w->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	struct stat st;
	int e = 0;

	uint32_t hdr[6] = {
		PCAP_MAGIC_USEC,
		2u | (4u << 16), /* version 2.4: major then minor, 16 bits each in host order */
		0,		 /* thiszone */
		0,		 /* sigfigs */
		PCAP_WRITER_SNAPLEN,
		PCAP_LINKTYPE_RAW,
	};

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 || ftruncate(fd, 0) < 0)
		e = errno;
	if (e != 0 || (w->f = fdopen(fd, "we")) == NULL) {
		e = e != 0 ? e : errno;
		close(fd);
		errno = e;
		return -1;
	}
	setvbuf(w->f, NULL, _IOFBF, 64 * 1024);
	if (fwrite(hdr, sizeof(hdr), 1, w->f) != 1) {
		fclose(w->f);
		w->f = NULL;
		return -1;
	}
	w->st.bytes = PCAP_FILE_HEADER_LEN;
	w->st.total_bytes += PCAP_FILE_HEADER_LEN;
	return 0;
}

struct pcap_writer *pcap_writer_open(
	const char *path, const struct pcap_writer_config *cfg, char *err, size_t errlen)
{
	struct pcap_writer *w;

	if (cfg != NULL && cfg->max_bytes != 0 &&
		cfg->max_bytes < PCAP_FILE_HEADER_LEN + PCAP_RECORD_HEADER_LEN + 20) {
		snprintf(err, errlen, "pcap: size limit %llu is too small for one packet",
			(unsigned long long)cfg->max_bytes);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		snprintf(err, errlen, "pcap: out of memory");
		return NULL;
	}
	if (cfg != NULL)
		w->cfg = *cfg;
	else
		pcap_writer_config_default(&w->cfg);
	w->path = strdup(path);
	if (w->path == NULL || asprintf(&w->rotated_path, "%s.1", path) < 0) {
		w->rotated_path = NULL;
		snprintf(err, errlen, "pcap: out of memory");
		pcap_writer_close(w);
		return NULL;
	}
	if (pcap_writer_start_file(w) < 0) {
		snprintf(err, errlen, "pcap: cannot create %s: %s", path,
			errno == EINVAL || errno == ENXIO ? "not a regular file"
			: errno == ELOOP		  ? "a symbolic link"
							  : strerror(errno));
		pcap_writer_close(w);
		return NULL;
	}
	return w;
}

static int pcap_writer_rotate(struct pcap_writer *w)
{
	if (w->f != NULL && fclose(w->f) != 0)
		w->st.errors++;
	w->f = NULL;
	if (rename(w->path, w->rotated_path) < 0)
		return -1;
	w->st.rotations++;
	return pcap_writer_start_file(w);
}

int pcap_writer_write(struct pcap_writer *w, const void *ip, size_t len, const struct timeval *ts)
{
	size_t incl = len > PCAP_WRITER_SNAPLEN ? PCAP_WRITER_SNAPLEN : len;
	uint64_t need = PCAP_RECORD_HEADER_LEN + incl;
	uint32_t rec[4];
	struct timeval now;

	if (w->st.stopped) {
		w->st.limit_dropped++;
		return -1;
	}
	if (w->f == NULL || ip == NULL || len > UINT32_MAX) {
		w->st.errors++;
		return -1;
	}
	if (w->cfg.max_bytes != 0 && w->st.bytes + need > w->cfg.max_bytes) {
		if (PCAP_FILE_HEADER_LEN + need > w->cfg.max_bytes) {
			w->st.errors++; /* would not fit even in an empty file */
			return -1;
		}
		if (w->cfg.on_limit == PCAP_LIMIT_STOP) {
			w->st.stopped = true;
			w->st.limit_dropped++;
			(void)fflush(w->f);
			return -1;
		}
		if (pcap_writer_rotate(w) < 0) {
			w->st.errors++;
			return -1;
		}
	}
	if (ts == NULL) {
		struct timespec tsp;

		clock_gettime(CLOCK_REALTIME, &tsp);
		now.tv_sec = tsp.tv_sec;
		now.tv_usec = tsp.tv_nsec / 1000;
		ts = &now;
	}
	rec[0] = (uint32_t)ts->tv_sec;
	rec[1] = (uint32_t)ts->tv_usec;
	rec[2] = (uint32_t)incl;
	rec[3] = (uint32_t)len;
	if (fwrite(rec, sizeof(rec), 1, w->f) != 1 || fwrite(ip, 1, incl, w->f) != incl) {
		w->st.errors++;
		return -1;
	}
	w->st.packets++;
	w->st.bytes += need;
	w->st.total_bytes += need;
	return 0;
}

int pcap_writer_flush(struct pcap_writer *w)
{
	if (w->f == NULL || fflush(w->f) == 0)
		return 0;
	w->st.errors++;
	return -1;
}

void pcap_writer_get_stats(const struct pcap_writer *w, struct pcap_writer_stats *st)
{
	*st = w->st;
}

void pcap_writer_close(struct pcap_writer *w)
{
	if (w == NULL)
		return;
	if (w->f != NULL)
		fclose(w->f);
	free(w->path);
	free(w->rotated_path);
	free(w);
}

/* ---- reader ---- */

struct pcap_reader {
	pcap_t *p;
	int dlt;
	struct pcap_reader_stats st;
};

static int ip_version_at(const uint8_t *frame, size_t caplen, size_t off, uint8_t *ip_version)
{
	uint8_t v;

	if (off >= caplen)
		return -2;
	v = frame[off] >> 4;
	if (v != 4 && v != 6)
		return -1;
	*ip_version = v;
	return (int)off;
}

int pcap_link_ip_offset(int dlt, const uint8_t *frame, size_t caplen, uint8_t *ip_version)
{
	size_t off;
	uint16_t proto;

	switch (dlt) {
	case DLT_EN10MB:
		off = 12;
		for (int tags = 0;; tags++) {
			if (caplen < off + 2)
				return -2;
			proto = (uint16_t)(frame[off] << 8 | frame[off + 1]);
			/* 802.1Q, 802.1ad and the old QinQ type: skip the 4-byte tag */
			if ((proto == 0x8100 || proto == 0x88a8 || proto == 0x9100) && tags < 4) {
				off += 4;
				continue;
			}
			off += 2;
			break;
		}
		break;
	case DLT_LINUX_SLL:
		if (caplen < 16)
			return -2;
		proto = (uint16_t)(frame[14] << 8 | frame[15]);
		off = 16;
		break;
	case DLT_LINUX_SLL2:
		if (caplen < 20)
			return -2;
		proto = (uint16_t)(frame[0] << 8 | frame[1]);
		off = 20;
		break;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		return ip_version_at(frame, caplen, 0, ip_version);
	case DLT_NULL:
	case DLT_LOOP:
		/* a 4-byte address family whose byte order and IPv6 value vary by system: trust
		 * the IP version nibble */
		return ip_version_at(frame, caplen, 4, ip_version);
	default:
		return -1;
	}
	if (proto != 0x0800 && proto != 0x86dd)
		return -1;
	if (ip_version_at(frame, caplen, off, ip_version) < 0)
		return caplen <= off ? -2 : -1;
	if ((*ip_version == 4) != (proto == 0x0800))
		return -1;
	return (int)off;
}

static bool dlt_supported(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
		return true;
	default:
		return false;
	}
}

struct pcap_reader *pcap_reader_open(const char *path, char *err, size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_reader *r;
	pcap_t *p;

	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_MICRO, errbuf);
	if (p == NULL) {
		snprintf(err, errlen, "pcap: cannot read %s: %s", path, errbuf);
		return NULL;
	}
	if (!dlt_supported(pcap_datalink(p))) {
		const char *name = pcap_datalink_val_to_name(pcap_datalink(p));

		snprintf(err, errlen, "pcap: %s: link type %s (%d) is not supported", path,
			name ? name : "unknown", pcap_datalink(p));
		pcap_close(p);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		snprintf(err, errlen, "pcap: out of memory");
		pcap_close(p);
		return NULL;
	}
	r->p = p;
	r->dlt = pcap_datalink(p);
	return r;
}

int pcap_reader_next(struct pcap_reader *r, struct pcap_datagram *d, char *err, size_t errlen)
{
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *data;
		int rc = pcap_next_ex(r->p, &h, &data);
		int off;

		if (rc == PCAP_ERROR_BREAK)
			return 0;
		if (rc != 1) {
			snprintf(err, errlen, "pcap: %s", pcap_geterr(r->p));
			return -1;
		}
		r->st.frames++;
		memset(d, 0, sizeof(*d));
		off = pcap_link_ip_offset(r->dlt, data, h->caplen, &d->ip_version);
		if (off == -2) {
			r->st.bad_frames++;
			continue;
		}
		if (off < 0) {
			r->st.not_ip++;
			continue;
		}
		d->ip = data + off;
		d->len = h->caplen - (size_t)off;
		d->orig_len = h->len > (bpf_u_int32)off ? h->len - (size_t)off : d->len;
		d->ts = h->ts;
		d->truncated = h->caplen < h->len;
		if (d->truncated)
			r->st.truncated++;
		r->st.datagrams++;
		return 1;
	}
}

int pcap_reader_linktype(const struct pcap_reader *r)
{
	return r->dlt;
}

void pcap_reader_get_stats(const struct pcap_reader *r, struct pcap_reader_stats *st)
{
	*st = r->st;
}

void pcap_reader_close(struct pcap_reader *r)
{
	if (r == NULL)
		return;
	pcap_close(r->p);
	free(r);
}

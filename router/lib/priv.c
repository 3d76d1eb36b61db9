/*
 * Least privilege (see priv.h). The capability syscalls are used directly: two calls do not
 * need libcap.
 */
#include "router/lib/priv.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEEP ((1u << CAP_NET_ADMIN) | (1u << CAP_NET_RAW))

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int n = CAP_LAST_CAP;

	if (f != NULL) {
		if (fscanf(f, "%d", &n) != 1)
			n = CAP_LAST_CAP;
		fclose(f);
	}
	return n;
}

int priv_drop(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	int last = last_cap();

	if (geteuid() != 0)
		return 0;
	for (int c = 0; c <= last; c++) {
		if (c < 32 && (KEEP & (1u << c)))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
			snprintf(err, errlen, "dropping capability %d from the bounding set: %s", c,
				strerror(errno));
			return -1;
		}
	}
	memset(data, 0, sizeof(data));
	data[0].effective = KEEP;
	data[0].permitted = KEEP;
	if (syscall(SYS_capset, &hdr, data) < 0) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Least privilege (see priv.h). The capability syscalls are used directly: a few calls do not
 * need libcap.
 */
#include "router/lib/priv.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEEP ((1u << CAP_NET_ADMIN) | (1u << CAP_NET_RAW))

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = CAP_LAST_CAP;

	if (f != NULL) {
		if (fscanf(f, "%d", &n) != 1)
			n = CAP_LAST_CAP;
		fclose(f);
	}
	return n;
}

int priv_lookup(const char *name, struct priv_user *user, char *err, size_t errlen)
{
	struct passwd pw, *pwp = NULL;
	char buf[4096];
	int rc;

	memset(user, 0, sizeof(*user));
	snprintf(user->name, sizeof(user->name), "%s", name);
	rc = getpwnam_r(name, &pw, buf, sizeof(buf), &pwp);
	if (pwp == NULL) {
		if (rc == 0 || rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM)
			return 0;
		snprintf(err, errlen, "user %s: %s", name, strerror(rc));
		return -1;
	}
	user->found = true;
	user->uid = pw.pw_uid;
	user->gid = pw.pw_gid;
	return 0;
}

static int caps_set(uint32_t effective, uint32_t permitted, uint32_t inheritable)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	data[0].effective = effective;
	data[0].permitted = permitted;
	data[0].inheritable = inheritable;
	return (int)syscall(SYS_capset, &hdr, data);
}

static int caps_get(struct __user_cap_data_struct *data)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};

	memset(data, 0, sizeof(*data) * _LINUX_CAPABILITY_U32S_3);
	return (int)syscall(SYS_capget, &hdr, data);
}

/* What the process ended up with is what was asked for: no step silently did less. */
static int verify(const struct priv_user *user, char *err, size_t errlen)
{
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	uid_t r, e, s;

	if (caps_get(data) < 0 || data[0].effective != KEEP || data[0].permitted != KEEP ||
		data[1].effective != 0 || data[1].permitted != 0) {
		snprintf(err, errlen, "capabilities not as set (effective %#x, permitted %#x)",
			data[0].effective, data[0].permitted);
		return -1;
	}
	if (user == NULL)
		return 0;
	if (getresuid(&r, &e, &s) < 0 || r != user->uid || e != user->uid || s != user->uid) {
		snprintf(err, errlen, "still not uid %u", (unsigned)user->uid);
		return -1;
	}
	if (setuid(0) == 0) {
		snprintf(err, errlen, "uid 0 could be regained");
		return -1;
	}
	return 0;
}

int priv_drop(const struct priv_user *user, char *err, size_t errlen)
{
	int last = last_cap();

	if (geteuid() != 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
			snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	for (int c = 0; c <= last; c++) {
		if (c < 32 && (KEEP & (1u << c)))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
			snprintf(err, errlen, "dropping capability %d from the bounding set: %s", c,
				strerror(errno));
			return -1;
		}
	}
	if (user != NULL) {
		/* keep the permitted set across the change of uid */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) {
			snprintf(err, errlen, "keepcaps: %s", strerror(errno));
			return -1;
		}
		if (setgroups(1, &user->gid) < 0 || setresgid(user->gid, user->gid, user->gid) < 0 ||
			setresuid(user->uid, user->uid, user->uid) < 0) {
			snprintf(err, errlen, "switching to user %s (uid %u, gid %u): %s", user->name,
				(unsigned)user->uid, (unsigned)user->gid, strerror(errno));
			return -1;
		}
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0) {
			snprintf(err, errlen, "keepcaps: %s", strerror(errno));
			return -1;
		}
	}
	/* inheritable and ambient: iptables and nft, run on configuration changes and at exit,
	   get the two capabilities although they run as the unprivileged user */
	if (caps_set(KEEP, KEEP, KEEP) < 0) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_ADMIN, 0, 0) < 0 ||
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) < 0) {
		snprintf(err, errlen, "ambient capabilities: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	return verify(user, err, errlen);
}

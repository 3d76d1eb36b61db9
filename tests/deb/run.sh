#!/bin/bash
# The Debian package, make check's deb stage: builds it (make deb: dpkg-buildpackage, lintian
# without errors) and installs it with dpkg into a scratch root, where inside.sh checks what
# it installed. The scratch root is an overlay of this machine's / in a private mount
# namespace: dpkg, adduser and the maintainer scripts run as on a real host, every change
# lands in a temporary directory removed at exit, and the daemon started from the package runs
# in a network namespace of its own.
#
#   tests/deb/run.sh            build, then check
#   DEB_REUSE=1 tests/deb/run.sh  check the package already in build/deb
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)

if [ "$(id -u)" != 0 ]; then
	echo "deb: needs root (overlay mount, dpkg)" >&2
	exit 1
fi
start=$(date +%s)
if [ "${DEB_REUSE:-0}" != 1 ] || ! ls build/deb/pgmrouter_*.deb >/dev/null 2>&1; then
	make --no-print-directory deb || exit 1
fi
built=$(date +%s)
deb=$(ls build/deb/pgmrouter_*.deb | head -n 1)

scratch=$(mktemp -d /tmp/pgmrouter-deb.XXXXXX) || exit 1
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/upper/deb-test" "$scratch/work" "$scratch/root"
cp "$deb" "$scratch/upper/deb-test/pgmrouter.deb"
cp "$repo/tests/deb/inside.sh" "$scratch/upper/deb-test/"

# The root: / with the scratch upper layer; fresh /proc and /run, the host's /dev and /sys.
unshare --mount --propagation private sh -c '
	r=$1/root
	mount -t overlay overlay -o lowerdir=/,upperdir=$1/upper,workdir=$1/work "$r" || exit 1
	mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && mount --rbind /sys "$r/sys" &&
		mount -t tmpfs tmpfs "$r/run" && mount -t tmpfs tmpfs "$r/tmp" || exit 1
	exec chroot "$r" /bin/bash /deb-test/inside.sh' sh "$scratch"
rc=$?
echo "deb: build $((built - start)) s, checks $(($(date +%s) - built)) s"
exit $rc

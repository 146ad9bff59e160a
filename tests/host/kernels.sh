#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The build refuses a kernel magnet does not support, with one clear
# message and before compiling anything: the real Kbuild files against
# Debian's real 6.1 build tree, told by make's command line that its
# version is another (VERSION and PATCHLEVEL override the kernel
# Makefile's). DKMS's entry points (kmod/magnet/Makefile, filters/Makefile)
# are used, on a copy of the sources.
#
# Usage: tests/host/kernels.sh
# Prints the tests' one format (tests/harness.h): "ok - ..." /
# "not ok - ..." lines, then "N passed, M failed"; exits 1 if any failed.

top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$(KVER=6.1 "$top/scripts/kdir") || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok - $1"; }

mkdir -p "$T/src/kmod"
cp -r "$top/include" "$top/filters" "$T/src/"
cp -r "$top/kmod/magnet" "$top/kmod/kernels.mk" "$T/src/kmod/"

# refused DIR VERSION PATCHLEVEL
refused() {
	dir=$1 v=$2 p=$3
	out=$(make -C "$T/src/$dir" KDIR="$kdir" VERSION="$v" PATCHLEVEL="$p" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then ok "$dir on $v.$p: the build fails"; else not_ok "$dir on $v.$p: the build fails"; fi
	if echo "$out" | grep -q "magnet builds on Linux 6.1 to 6.12; .* is $v.$p\."; then
		ok "$dir on $v.$p: it says which kernels it builds on"
	else
		not_ok "$dir on $v.$p: it says which kernels it builds on"
		echo "$out" | tail -n 5 | sed 's/^/#   /'
	fi
	if echo "$out" | grep -q 'error:'; then
		not_ok "$dir on $v.$p: no compiler error"
	else
		ok "$dir on $v.$p: no compiler error"
	fi
	if ls "$T/src/$dir"/*.o > /dev/null 2>&1; then
		not_ok "$dir on $v.$p: nothing compiled"
	else
		ok "$dir on $v.$p: nothing compiled"
	fi
}

refused kmod/magnet 5 10
refused kmod/magnet 6 13
refused filters 6 0
refused filters 7 0

echo "$((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The tests of the C host test programs whose names contain NAME, across
# the programs (make check-host T=NAME): each PROGRAM with such a test
# (PROGRAM -l NAME lists them) runs with NAME as its argument, the others
# are passed over, and their tallies are added up.
#
# Usage: tests/host/units.sh NAME PROGRAM...
# Prints the tests' one format (tests/harness.h): the programs' lines,
# then "N passed, M failed" for them all; exits 1 if any failed, or if no
# test's name contains NAME.

name=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
passed=0
failed=0
ran=0
for prog; do
	[ -n "$("$prog" -l "$name")" ] || continue
	ran=$((ran + 1))
	echo "# $prog $name"
	"$prog" "$name" | tee "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok - $prog: no summary line (crashed?)"
		failed=$((failed + 1))
		continue
	fi
	p=${line%% passed*}
	f=${line#*, }
	passed=$((passed + p))
	failed=$((failed + ${f%% failed}))
done
if [ "$ran" -eq 0 ]; then
	echo "not ok - no host test's name contains \"$name\""
	failed=$((failed + 1))
else
	echo "# tests whose names contain \"$name\", in $ran of $# programs:"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The benchmark scripts without running a benchmark: perftest-scripts/
# small-write.sh, cluster-bench.sh, busy-poll-sweep.sh, auth-cost.sh, write-profile.sh,
# recovery.sh, idle-cpu.sh
# (and bench-lib.sh / bench_lib.py)
# parse, print their --help (exit 0), and refuse bad usage with exit 2 and one
# line on stderr before they touch the disk or start anything. The
# benchmarks themselves are not timed tests (docs/performance.md).
#
# usage: test_bench_scripts.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_bench_scripts.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
P=$HERE/../perftest-scripts
TMP=$(mktemp -d /tmp/weft-bench-scripts.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

for f in small-write.sh cluster-bench.sh bench-lib.sh busy-poll-sweep.sh auth-cost.sh write-profile.sh \
	recovery.sh idle-cpu.sh; do
	bash -n "$P/$f" || fail "$f: syntax"
done
python3 -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" "$P/bench_lib.py" ||
	fail "bench_lib.py: syntax"
# the table code is python in a here-document: it must compile too
for f in small-write.sh cluster-bench.sh busy-poll-sweep.sh auth-cost.sh recovery.sh; do
	awk "/<< 'EOF' \\| tee/ { on = 1; next } /^EOF\$/ { on = 0 } on" "$P/$f" > "$TMP/table.py"
	[ -s "$TMP/table.py" ] || fail "$f: no python table found"
	python3 -c "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')" "$TMP/table.py" ||
		fail "$f: the python table does not compile"
done

"$P/small-write.sh" --help > "$TMP/out" 2> "$TMP/err"
[ $? = 0 ] && grep -q "^usage: small-write.sh" "$TMP/out" && grep -q -- "--json" "$TMP/out" &&
	grep -q "^exit: 0 done, 1 a tool failed, 2 bad usage" "$TMP/out" && [ ! -s "$TMP/err" ] ||
	fail "small-write.sh --help"
"$P/cluster-bench.sh" --help > "$TMP/out" 2>&1
[ $? = 0 ] && grep -q "^usage: cluster-bench.sh" "$TMP/out" || fail "cluster-bench.sh --help"
"$P/auth-cost.sh" --help > "$TMP/out" 2>&1
[ $? = 0 ] && grep -q "^usage: auth-cost.sh" "$TMP/out" || fail "auth-cost.sh --help"
awk "/<< 'EOF'\$/ { on = 1; next } /^EOF\$/ { on = 0 } on" "$P/write-profile.sh" > "$TMP/report.py"
[ -s "$TMP/report.py" ] && python3 -c "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')" \
	"$TMP/report.py" || fail "write-profile.sh: the python report does not compile"
"$P/write-profile.sh" --help > "$TMP/out" 2>&1
[ $? = 0 ] && grep -q "^usage: write-profile.sh" "$TMP/out" || fail "write-profile.sh --help"
"$P/recovery.sh" --help > "$TMP/out" 2>&1
[ $? = 0 ] && grep -q "^usage: recovery.sh" "$TMP/out" || fail "recovery.sh --help"
"$P/busy-poll-sweep.sh" --help > "$TMP/out" 2>&1
[ $? = 0 ] && grep -q "^usage: busy-poll-sweep.sh" "$TMP/out" || fail "busy-poll-sweep.sh --help"
"$P/idle-cpu.sh" --help > "$TMP/out" 2>&1
[ $? = 0 ] && grep -q "^usage: idle-cpu.sh" "$TMP/out" || fail "idle-cpu.sh --help"

# bad usage: exit 2, one line on stderr naming the problem, nothing on stdout,
# and no scratch directory made
check_bad() {
	local script=$1 want=$2
	shift 2
	"$P/$script" --dir "$TMP/scratch" "$@" > "$TMP/out" 2> "$TMP/err"
	local rc=$?
	if [ $rc != 2 ]; then
		fail "$script $* exited $rc, not 2: $(head -n 2 "$TMP/err")"
	elif [ -s "$TMP/out" ]; then
		fail "$script $* printed on stdout"
	elif [ "$(wc -l < "$TMP/err")" != 1 ] || ! grep -q -- "$want" "$TMP/err"; then
		fail "$script $*: stderr is not one line with '$want': $(cat "$TMP/err")"
	elif [ -e "$TMP/scratch" ]; then
		fail "$script $*: made its scratch directory before refusing"
	else
		echo "ok: $script $* -> $(cat "$TMP/err")"
	fi
}
check_bad small-write.sh "unknown option '--bogus'" --bogus
check_bad auth-cost.sh "unknown option '--bogus'" --bogus
check_bad auth-cost.sh "'0' is not a positive number" --rounds 0
check_bad auth-cost.sh "'0' is not a positive number" --blocks 0
check_bad recovery.sh "unknown option '--bogus'" --bogus
check_bad recovery.sh "'0' is not a positive number" --objects 0
check_bad recovery.sh "is not a size" --size lots
check_bad recovery.sh "not found: build it" "$TMP/no-such-build"
check_bad small-write.sh "'abc' is not a positive number" --seconds abc
check_bad small-write.sh "'0' is not a positive number" --pg-seconds 0
check_bad small-write.sh "'-3' is not a positive number" --syscall-seconds -3
check_bad small-write.sh "needs PORT..PORT+199" --port 65400
check_bad small-write.sh "not found: build it" "$TMP/no-such-build"
check_bad small-write.sh "no such directory" --out "$TMP/no/such/file.md" "$BUILD"
check_bad cluster-bench.sh "unknown option '--bogus'" --bogus
check_bad cluster-bench.sh "not found: build it" "$TMP/no-such-build"
check_bad busy-poll-sweep.sh "unknown option '--bogus'" --bogus
check_bad write-profile.sh "unknown option '--bogus'" --bogus
check_bad write-profile.sh "a size like 4K" --size 4X
check_bad write-profile.sh "'0' is not a positive number" --depth 0
check_bad write-profile.sh "needs PORT..PORT+99" --port 65500
check_bad busy-poll-sweep.sh "expected microseconds" --values 5,x
check_bad busy-poll-sweep.sh "expected a positive number" --seconds 0
check_bad idle-cpu.sh "unknown option '--bogus'" --bogus
check_bad idle-cpu.sh "'0' is not a positive number" --pgs 0
check_bad idle-cpu.sh "'x' is not a positive number" --seconds x
check_bad idle-cpu.sh "needs PORT..PORT+99" --port 65500
check_bad idle-cpu.sh "not found: build it" "$TMP/no-such-build"

[ $FAILS = 0 ] && echo "PASS" || { echo "$FAILS failure(s)"; exit 1; }

#!/usr/bin/env bash
# Build the sanitizer configuration (ASan + UBSan, -Werror) and run every test.
# Usage: scripts/test.sh [ctest args...]   e.g. scripts/test.sh -L unit
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${WEFT_TEST_BUILD:-$top/build-test}
jobs=${WEFT_JOBS:-$(nproc)}

echo "== configure ($build, sanitizers on)"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=ON >"$build.configure.log" 2>&1 ||
	{ cat "$build.configure.log"; exit 1; }
grep -E "^-- weft:" "$build.configure.log" || true

echo "== build"
cmake --build "$build" -j"$jobs"

echo "== test"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest --output-on-failure -j"$jobs" "$@"

# An optimised build sees warnings the Debug one cannot (maybe-uninitialized,
# format-truncation) and -Werror makes them errors: compile it too, no tests.
# WEFT_RELEASE_CHECK=0 skips this step.
if [ "${WEFT_RELEASE_CHECK:-1}" != 0 ]; then
	rbuild=$build-release
	echo "== release compile (-O2, -Werror)"
	cmake -S "$top" -B "$rbuild" -DCMAKE_BUILD_TYPE=Release >"$rbuild.configure.log" 2>&1 ||
		{ cat "$rbuild.configure.log"; exit 1; }
	cmake --build "$rbuild" -j"$jobs" >"$rbuild.build.log" 2>&1 ||
		{ grep -E "error|warning" "$rbuild.build.log" | head -40; echo "release build FAILED"; exit 1; }
	echo "release build: ok"
fi

# The decoders' libFuzzer targets, built with clang, each run briefly so a
# change that breaks them (or that they catch) shows up in CI. Longer runs:
# docs/protocol.md. WEFT_FUZZ_SECONDS=0 skips this step.
fuzz_s=${WEFT_FUZZ_SECONDS:-20}
if [ "$fuzz_s" -gt 0 ] && command -v clang >/dev/null; then
	fbuild=$build-fuzz
	echo "== fuzz (clang, ${fuzz_s}s per target)"
	CC=clang cmake -S "$top" -B "$fbuild" -DCMAKE_BUILD_TYPE=Debug -DWEFT_SANITIZE=ON \
		-DWEFT_FUZZ=ON >"$fbuild.configure.log" 2>&1 || { cat "$fbuild.configure.log"; exit 1; }
	targets=$(cmake --build "$fbuild" --target help | sed -n 's/^\.\.\. \(fuzz_[a-z_]*\)$/\1/p' |
		grep -v '_replay$' || true)
	for t in $targets; do
		cmake --build "$fbuild" -j"$jobs" --target "$t" >/dev/null
		corpus=$top/tests/corpus/${t#fuzz_}
		scratch=$(mktemp -d)
		"$fbuild/tests/$t" -max_total_time="$fuzz_s" -print_final_stats=1 "$scratch" \
			$( [ -d "$corpus" ] && echo "$corpus" ) >"$scratch.log" 2>&1 ||
			{ tail -50 "$scratch.log"; echo "$t: FAILED (crash input above)"; exit 1; }
		echo "$t: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$scratch.log"), no crash"
		rm -rf "$scratch" "$scratch.log"
	done
fi

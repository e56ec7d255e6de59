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

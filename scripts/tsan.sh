#!/usr/bin/env bash
# Builds the tests whose ranks or callers are threads of one process (ranks as threads with and
# without streams, several communicators, the flight recorder's snapshots, stream batches, the
# C++ API) with ThreadSanitizer, and runs them. The multi-process tests are left out: TSan sees
# one process, and their threads are few and short-lived. UCX is left out: its memory hooks
# (libucm) crash under TSan. Extra arguments go to ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
dir="$root/build-tsan"
targets=(test_collectives_threads test_comm test_cpp_api test_flight_recorder test_stream_batches
         test_traffic_stats test_remote_puts)
"$root/scripts/build.sh" "$dir" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
  "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" -DWEFT_SANITIZE=thread -DWEFT_BUILD_PERF=OFF \
  -DWEFT_ENABLE_UCX=OFF -- "${targets[@]}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
# The largest count of the collective checks: still past the direct slots (staged between
# threads), but not a million elements, which under TSan took 15 minutes.
export WEFT_TEST_LARGE_COUNT=${WEFT_TEST_LARGE_COUNT:-100003}
cd "$dir"
# Their tests carry the label threads (tests/api/CMakeLists.txt).
ctest --output-on-failure --timeout 900 -j "$(nproc)" -L threads --no-tests=error "$@"

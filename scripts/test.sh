#!/usr/bin/env bash
# Builds Weft and runs the whole test suite. --sanitize builds with AddressSanitizer and
# UndefinedBehaviorSanitizer instead, at -O1 with assertions on (unoptimised, its tests took 1.5
# times as long: the multi-process collective tests spend it in reduction loops). Both keep line
# tables only (-g1): stack traces name functions, files and lines, and the builds take about a
# third less time than with full debug information.
# Extra arguments go to ctest (e.g. -L unit, -R Split).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
dir="$root/build-test"
options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
         "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
if [ "${1:-}" = "--sanitize" ]; then
  shift
  dir="$root/build-asan"
  options=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1"
           "-DWEFT_SANITIZE=address,undefined")
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  export LSAN_OPTIONS=suppressions=$root/scripts/lsan-suppressions.txt
fi
"$root/scripts/build.sh" "$dir" "${options[@]}"
cd "$dir"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"

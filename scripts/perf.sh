#!/usr/bin/env bash
# The main job: install what is missing, build in release mode, and run a 4-rank all-reduce
# sweep from 8 B to 64 MiB with a correctness check on this machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build-release" -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF \
  -- weft-run weft-perf
bin="$root/build-release"
"$bin/tools/weft_run/weft-run" -n 4 "$bin/perf/weft_perf/weft-perf" all_reduce -b 8 -e 64M -f 4 -c 1 "$@"

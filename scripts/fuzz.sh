#!/usr/bin/env bash
# Builds the libFuzzer targets of the topology readers with clang (ASan + UBSan) and runs each
# for a bounded time from its seeds; exits non-zero when a target crashes, leaks or breaks an
# invariant, or is not built (the hwloc XML target is skipped only when CMake found no hwloc).
# usage: scripts/fuzz.sh [seconds per target, default $WEFT_FUZZ_SECONDS or 30]
# WEFT_FUZZ_SEED fixes libFuzzer's random seed (CI sets one, so that its run is the same walk
# every time and a failure there is a regression, not a new find); unset, each run explores anew.
# The build goes to build-fuzz/; what the runs find goes to build-fuzz/fuzz-runs/<target>/
# (crash-*, leak-* and the inputs that found new paths), kept for a look after a failure.
# Each run starts from the seeds and from the corpus kept in the repository
# (tests/topology/fuzz/kept/<target>.tar.xz: inputs of earlier runs, merged down to those that
# reach new paths), so CI re-checks every path found so far. WEFT_FUZZ_KEEP=1 merges what a run
# found into the kept corpus (commit the archives it rewrites).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-${WEFT_FUZZ_SECONDS:-30}}
seed=${WEFT_FUZZ_SEED:-0}  # 0: libFuzzer picks one
cxx=${WEFT_FUZZ_CXX:-clang++-14}
cc=${WEFT_FUZZ_CC:-clang-14}
if ! command -v "$cxx" > /dev/null; then
  echo "fuzz.sh: $cxx not found (scripts/install-deps.sh installs clang-14 and libFuzzer)" >&2
  exit 1
fi
"$root/scripts/install-deps.sh"
dir="$root/build-fuzz"
CC=$cc CXX=$cxx cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWEFT_BUILD_FUZZERS=ON -DWEFT_BUILD_PERF=OFF
# The hwloc target exists only when CMake found hwloc; then it must build and run like the others.
targets=(nccl_xml nvsmi)
if grep -q '^WEFT_ENABLE_HWLOC:BOOL=ON$' "$dir/CMakeCache.txt"; then
  targets+=(hwloc_xml)
else
  echo "fuzz.sh: CMake found no hwloc (WEFT_ENABLE_HWLOC is not ON): hwloc_xml is not fuzzed"
fi
binaries=()
for target in "${targets[@]}"; do binaries+=("topology_${target}_fuzzer"); done
cmake --build "$dir" --target "${binaries[@]}"

data="$root/tests/topology/data"
seeds="$root/tests/topology/fuzz/corpus"
kept="$root/tests/topology/fuzz/kept"
# target: the seed files it starts from (data files and hand-written seeds).
declare -A corpus=(
  [nccl_xml]="$data/*.nccl.xml $seeds/nccl_*.xml"
  [nvsmi]="$data/*.nvsmi.txt $seeds/nvsmi_*.txt"
  [hwloc_xml]="$data/*.hwloc.xml $seeds/hwloc*.xml"
)
# A small quarantine keeps the fuzzer's memory small, and so the fork of each hwloc trial load
# (topology/hwloc_xml_load.h) cheap: about 1.5 times the runs per second.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:quarantine_size_mb=16
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for target in "${targets[@]}"; do
  bin="$dir/tests/topology/topology_${target}_fuzzer"
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: $target FAILED: $bin was not built"
    failed+=("$target")
    continue
  fi
  work="$dir/fuzz-runs/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus"
  # shellcheck disable=SC2086  # the globs expand here
  cp ${corpus[$target]} "$work/corpus/"
  if [ -f "$kept/$target.tar.xz" ]; then tar -xJf "$kept/$target.tar.xz" -C "$work/corpus"; fi
  echo "== $target: ${seconds} s from $(find "$work/corpus" -type f | wc -l) seeds (seed $seed)"
  if "$bin" -seed="$seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" > "$work/log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^Done" "$work/log" || true
    if [ "${WEFT_FUZZ_KEEP:-0}" = 1 ]; then
      rm -rf "$work/merged" && mkdir -p "$work/merged" "$kept"
      "$bin" -merge=1 "$work/merged" "$work/corpus" > "$work/merge.log" 2>&1
      tar -cJf "$kept/$target.tar.xz" -C "$work/merged" --sort=name --owner=0 --group=0 \
        --numeric-owner --mtime=@0 .
      echo "kept $(find "$work/merged" -type f | wc -l) inputs in $kept/$target.tar.xz"
    fi
  else
    echo "fuzz.sh: $target FAILED; the input that failed is in $work/, the log ends:"
    tail -n 40 "$work/log"
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}"
  exit 1
fi
echo "fuzz.sh: no crash in ${seconds} s per target"

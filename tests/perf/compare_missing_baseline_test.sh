#!/usr/bin/env bash
# perf/compare on a build without Gloo: it leaves the gloo baseline out with a note and compares
# the rest, instead of failing. The build is stood in for by links to this build's tools, with
# gloo-perf missing.
set -euo pipefail
source=$1
build=$2
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
echo "CMAKE_BUILD_TYPE:STRING=Release" >"$fake/CMakeCache.txt"
for tool in tools/weft_run/weft-run perf/weft_perf/weft-perf perf/membw/weft-membw; do
  mkdir -p "$fake/$(dirname "$tool")"
  ln -s "$build/$tool" "$fake/$tool"
done
out=$("$source/perf/compare" --quick --no-install --no-build --no-netns --no-hosts \
  --build-dir "$fake" --libs weft,gloo --out "$fake/results" 2>&1) || {
  echo "$out" >&2
  echo "perf/compare failed without gloo-perf" >&2
  exit 1
}
grep -q "gloo-perf is not built" <<<"$out" || {
  echo "$out" >&2
  echo "no note about the missing gloo-perf" >&2
  exit 1
}
grep -q "all_reduce" "$fake/results/tables.txt"
echo "perf/compare without gloo-perf: skipped it with a note"

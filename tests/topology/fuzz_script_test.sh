#!/usr/bin/env bash
# scripts/fuzz.sh with cmake, the compiler and the fuzzers stubbed: a fuzzer that was not built
# fails the run, and the hwloc one is skipped only when CMake found no hwloc.
# usage: fuzz_script_test.sh REPOSITORY_ROOT
set -euo pipefail
src=$1
unset WEFT_FUZZ_SEED  # the cases below set it where they want one
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root/scripts" "$tmp/root/tests/topology" "$tmp/bin"
cp "$src/scripts/fuzz.sh" "$tmp/root/scripts/"
printf '#!/bin/sh\nexit 0\n' > "$tmp/root/scripts/install-deps.sh"
chmod +x "$tmp/root/scripts/install-deps.sh"
ln -s "$src/tests/topology/data" "$src/tests/topology/fuzz" "$tmp/root/tests/topology/"
# cmake -S ROOT -B DIR ...: a cache saying whether hwloc was found ($FAKE_HWLOC).
# cmake --build DIR --target T...: a stub fuzzer for each T but $FAKE_MISSING.
cat > "$tmp/bin/cmake" << 'STUB'
#!/usr/bin/env bash
if [ "$1" = "-S" ]; then
  mkdir -p "$4"
  echo "WEFT_ENABLE_HWLOC:BOOL=$FAKE_HWLOC" > "$4/CMakeCache.txt"
  exit 0
fi
dir=$2
shift 3
mkdir -p "$dir/tests/topology"
for t in "$@"; do
  echo "$t" >> "$dir/built"
  [ "$t" = "$FAKE_MISSING" ] && continue
  printf '#!/bin/sh\necho "Done 1 runs ($1)"\n' > "$dir/tests/topology/$t"
  chmod +x "$dir/tests/topology/$t"
done
STUB
chmod +x "$tmp/bin/cmake"

failures=0
# run HWLOC MISSING EXPECTED_STATUS TEXT...: fuzz.sh's exit status and output lines.
run() {
  local hwloc=$1 missing=$2 want=$3 out status
  shift 3
  rm -rf "$tmp/root/build-fuzz"
  status=0
  out=$(PATH="$tmp/bin:$PATH" WEFT_FUZZ_CXX=true WEFT_FUZZ_CC=true FAKE_HWLOC=$hwloc \
    FAKE_MISSING=$missing "$tmp/root/scripts/fuzz.sh" 1 2>&1) || status=$?
  if { [ "$want" = 0 ] && [ "$status" != 0 ]; } || { [ "$want" != 0 ] && [ "$status" = 0 ]; }; then
    echo "FAIL: hwloc $hwloc, $missing missing: exit $status, expected $want"$'\n'"$out"
    failures=$((failures + 1))
  fi
  for text in "$@"; do
    if ! grep -qF -- "$text" <<< "$out"; then
      echo "FAIL: hwloc $hwloc, $missing missing: no \"$text\" in"$'\n'"$out"
      failures=$((failures + 1))
    fi
  done
}
run ON none 0 "== hwloc_xml" "no crash in 1 s per target"
run ON topology_hwloc_xml_fuzzer 1 "hwloc_xml FAILED" "failed: hwloc_xml"
run ON topology_nvsmi_fuzzer 1 "nvsmi FAILED" "== hwloc_xml"
WEFT_FUZZ_SEED=7 run ON none 0 "(seed 7)" "Done 1 runs (-seed=7)"
run ON none 0 "Done 1 runs (-seed=0)"  # unset: libFuzzer picks one
run OFF none 0 "CMake found no hwloc" "== nvsmi" "no crash in 1 s per target"
if grep -q hwloc "$tmp/root/build-fuzz/built"; then
  echo "FAIL: without hwloc the hwloc fuzzer was asked for"
  failures=$((failures + 1))
fi
[ "$failures" = 0 ] && echo "fuzz.sh: all cases as expected"
exit "$((failures > 0))"

#!/usr/bin/env bash
# Installs the Debian packages Weft builds and tests with, if any is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libpugixml-dev
  libhwloc-dev iproute2
  # the tools' man pages, generated from their --help at build time (skipped without it)
  help2man
  # weft-topo --png renders with Graphviz's dot (its tests skip the rendering without it)
  graphviz
  # tools/weft_train: the example trainer's math (optional in the build), its --plot
  libeigen3-dev gnuplot-nox
  # the UCX transport (optional in the build; installed so that CI builds and tests it)
  libucx-dev
  # weft.torch, the torch.distributed backend (optional in the build, as UCX)
  python3-torch libtorch-dev pybind11-dev python3-dev
  # Debian's torch computes through libblas.so.3, the reference BLAS unless an optimized one is
  # installed: perf/torch_compare's DDP step would time the arithmetic, not the training step
  libopenblas0-pthread
  # scripts/fuzz.sh: clang and its libFuzzer/sanitizer runtimes (only recommended by clang-14,
  # so --no-install-recommends would leave them out)
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

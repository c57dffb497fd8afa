#!/usr/bin/env bash
# Configures and builds Weft. usage: scripts/build.sh BUILD_DIR [cmake options...] [-- targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
options=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  options+=("$1")
  shift
done
[ $# -gt 0 ] && shift
cmake -S "$root" -B "$dir" -G Ninja "${options[@]}"
cmake --build "$dir" -- "$@"

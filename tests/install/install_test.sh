#!/usr/bin/env bash
# Installs Weft from a build tree into a scratch prefix, then builds and runs a consumer with
# find_package(Weft) and another with pkg-config, as a project that links Weft would, and, given
# the interpreter weft.torch was built for (4th argument), imports the installed package.
set -euo pipefail
build=$1
source=$2
# A sanitized libweft needs its consumers built with the same sanitizers.
flags=""
[ -n "${3:-}" ] && flags="-fsanitize=$3"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/weft/weft.h"
test -f "$prefix/include/weft/weft.hpp"
ls "$prefix"/lib*/libweft.so* "$prefix"/lib*/libweft.a >/dev/null

# libweft.so exports the functions weft.h declares and nothing else, weak libstdc++ template
# instances included: its internals stay inside it.
grep -oE '\bweft[A-Z][A-Za-z]*\(' "$prefix/include/weft/weft.h" | tr -d '(' | sort -u \
  >"$prefix/declared"
nm -D --defined-only "$prefix"/lib*/libweft.so | awk '$2 != "A" {print $3}' | sort \
  >"$prefix/exported"
diff "$prefix/declared" "$prefix/exported" || {
  echo "libweft.so exports other symbols than weft.h declares ('>': exported only)" >&2
  exit 1
}

cmake -S "$source/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="$flags" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
LD_LIBRARY_PATH=$(echo "$prefix"/lib*) "$prefix/consumer-build/consumer"

pc_dir=$(dirname "$(ls "$prefix"/lib*/pkgconfig/weft.pc)")
pc_flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs weft)
g++ -std=c++20 $flags "$source/consumer/consumer.cc" $pc_flags -pthread -o "$prefix/consumer-pc"
LD_LIBRARY_PATH=$(echo "$prefix"/lib*) "$prefix/consumer-pc"

# A C program linked statically against libweft.a with nothing but pkg-config --static's flags
# (the shared library moved aside, so the linker has to take the archive).
static=$prefix/static
mkdir "$static"
cp -r "$prefix/include" "$static/"
cp -r "$(dirname "$pc_dir")" "$static/lib"
rm "$static"/lib/libweft.so*
pc_static=$(PKG_CONFIG_PATH="$static/lib/pkgconfig" pkg-config --static --cflags --libs weft)
gcc $flags "$source/consumer/consumer.c" $pc_static -o "$prefix/consumer-static"
if ldd "$prefix/consumer-static" | grep -q libweft; then
  echo "the static consumer links libweft.so" >&2
  exit 1
fi
"$prefix/consumer-static"

# The installed tools run from the install tree as they are: they find its libweft.so.
for tool in "$prefix"/bin/*; do
  env -u LD_LIBRARY_PATH "$tool" --help >/dev/null || {
    echo "installed $(basename "$tool") --help failed" >&2
    exit 1
  }
  env -u LD_LIBRARY_PATH "$tool" --version | grep -q "^$(basename "$tool") (Weft [0-9]" || {
    echo "installed $(basename "$tool") --version does not give Weft's version" >&2
    exit 1
  }
done

# Each installed tool has its man page where the build had help2man, naming its options.
if grep -q '^HELP2MAN:FILEPATH=/' "$build/CMakeCache.txt"; then
  for tool in "$prefix"/bin/*; do
    page=$prefix/share/man/man1/$(basename "$tool").1
    grep -q -- '\\-\\-help' "$page" || {
      echo "no man page listing --help for $(basename "$tool") at $page" >&2
      exit 1
    }
  done
fi

# weft.torch, where it was built: the installed package imports and registers its backend.
python=${4:-}
if [ -n "$python" ]; then
  package=$(ls -d "$prefix"/lib/python3*/dist-packages/weft)
  PYTHONPATH=$(dirname "$package") env -u LD_LIBRARY_PATH "$python" -c \
    'import weft.torch, torch.distributed as d; assert d.Backend.WEFT == "WEFT"'
fi
echo "install test passed"

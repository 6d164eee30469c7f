#!/usr/bin/env bash
# Installs the build into a scratch prefix and proves it is usable:
# find_package(tessera) and pkg-config consumers build and run, and neither
# libtessera.so nor the tool needs libcuda or a shared libcudart.
set -eu
build=$1 consumer=$2 cc=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

lib=$(ls "$prefix"/lib*/libtessera.so | head -n 1)
libdir=$(dirname "$lib")
needed=$(readelf -d "$lib" | grep NEEDED || true)
if echo "$needed" | grep -q -e libcuda -e libcudart; then
  echo "libtessera.so must not need libcuda or libcudart:"; echo "$needed"; exit 1
fi
test -f "$prefix/include/tessera.h"
test -f "$libdir/libtessera.a"
test -x "$prefix/bin/tessera"

cmake -S "$consumer" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
LD_LIBRARY_PATH="$libdir" "$scratch/consumer/consumer_shared"
"$scratch/consumer/consumer_static"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
"$cc" -std=c11 "$consumer/main.c" -o "$scratch/pc_consumer" $(pkg-config --cflags --libs tessera)
LD_LIBRARY_PATH="$libdir" "$scratch/pc_consumer"
echo "unit_install: ok"

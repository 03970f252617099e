#!/usr/bin/env bash
# Installs graft from the build tree into a temporary prefix, then configures, builds and runs
# a downstream project that uses find_package(graft CONFIG REQUIRED) + graft::graft.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > /dev/null
mkdir -p "$work/app"
cp "$src_dir/CMakeLists.txt.in" "$work/app/CMakeLists.txt"
cp "$src_dir/main.cpp" "$work/app/main.cpp"
cmake -S "$work/app" -B "$work/app/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/app/build" > /dev/null
"$work/app/build/app"

#!/usr/bin/env bash
# Checks that the C++ tree is formatted as .clang-format says (clang-format 14, Debian's).
# `make format` rewrites the files; CI (.ci/run) runs this check.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh clang-format >/dev/null
# tests/programs/ holds other projects' programs byte for byte as published: not ours to format
mapfile -t files < <(git ls-files '*.h' '*.cpp' ':!:tests/programs/**')
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "clang-format: ${#bad[@]} of ${#files[@]} files are not formatted (run 'make format'):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "clang-format: ${#files[@]} files formatted"

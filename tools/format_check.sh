#!/usr/bin/env bash
# Fails when a C++ source is not formatted by .clang-format (clang-format 14, Google style,
# 100 columns). `tools/format_check.sh --fix` rewrites the files in place. Exit 77 (skipped)
# when clang-format is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'include/*.h' 'apps/*.cc' 'apps/*.h' \
  'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'fuzz/*.cc' 'fuzz/*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run -Werror "${files[@]}"
echo "format ok: ${#files[@]} files"

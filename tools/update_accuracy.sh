#!/usr/bin/env bash
# Regenerates docs/accuracy.md from `gpuplan validate --markdown` on every case file.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${GPUPLAN_BIN:-build/gpuplan}"
SHARED="${GPUPLAN_SHARED:-../shared}"
files=("$SHARED"/validation/*.jsonl)
if compgen -G "data/measurements/*.jsonl" >/dev/null; then files+=(data/measurements/*.jsonl); fi
tmp="$(mktemp)"
{
  cat docs/accuracy.head.md
  echo
  for f in "${files[@]}"; do
    echo "### $(basename "$f")"
    echo
    "$BIN" validate --markdown "$f"
    echo
  done
} > "$tmp"
mv "$tmp" docs/accuracy.md
echo "wrote docs/accuracy.md"

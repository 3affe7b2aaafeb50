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
  echo "## Cross-validated figures (leave one source out)"
  echo
  echo "\`gpuplan validate --cv source\` over all the files above together: the performance"
  echo "constants of \`data/calibration.csv\` are refitted without each source's cases and the error"
  echo "is measured on that source (section \"Cross-validation\" above). *in-sample* = shipped"
  echo "constants; *refit* = constants fitted on every case; *held-out* = each source predicted by"
  echo "constants fitted on the other sources."
  echo
  "$BIN" validate --cv source --markdown "${files[@]}"
  echo
} > "$tmp"
mv "$tmp" docs/accuracy.md
echo "wrote docs/accuracy.md"

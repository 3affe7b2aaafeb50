#!/usr/bin/env bash
# Installs gpuplan's build dependencies (Debian 12 packages; only when missing), then configures
# and builds. Usage: tools/setup.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
shift || true
PKGS=(build-essential cmake pkg-config libfmt-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      libcpp-httplib-dev libjs-chart.js chromium wrk clang-format)
# serve-api (issue 17): cpp-httplib for the server, Chart.js vendored into the page at build
# time, chromium for the headless browser test (skipped without it), wrk for docs/performance.md.
# GPUPLAN_FUZZ=1: also clang and its libFuzzer/sanitizer runtimes (tools/fuzz_smoke.sh).
if [ "${GPUPLAN_FUZZ:-0}" = "1" ]; then PKGS+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" >&2
fi
# Schema checks of emitted files (issue #13, tools/schema-check): node + npm from Debian when
# missing, then the pinned npm packages (package-lock.json) when not yet installed. Tests never
# reach the network; without these they are reported as skipped.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "installing: nodejs npm" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q nodejs npm >&2
fi
if [ ! -d tools/schema-check/node_modules/kubernetes-models ] || [ ! -d tools/schema-check/node_modules/ajv ]; then
  (cd tools/schema-check && npm ci --no-audit --no-fund >&2)
fi
# GPUPLAN_SETUP_ONLY=1: install the packages, do not configure or build.
if [ "${GPUPLAN_SETUP_ONLY:-0}" = "1" ]; then exit 0; fi
JOBS="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "$@" >&2
cmake --build "$BUILD_DIR" -j"$JOBS" >&2

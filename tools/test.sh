#!/usr/bin/env bash
# Quick start 2: set up, build, and run the whole test suite (CTest); prints its summary.
# GPUPLAN_SANITIZE=1 runs it under AddressSanitizer + UndefinedBehaviorSanitizer instead.
# GPUPLAN_WERROR=1 (CI) builds the library, CLI and server with -Werror.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRA=()
if [ "${GPUPLAN_WERROR:-0}" = "1" ]; then EXTRA+=(-DGPUPLAN_WERROR=ON); fi
if [ "${GPUPLAN_SANITIZE:-0}" = "1" ]; then
  bash tools/setup.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUPLAN_SANITIZE=ON -DGPUPLAN_BUILD_BENCH=OFF "${EXTRA[@]}"
  cd build-asan
else
  bash tools/setup.sh build -DGPUPLAN_BUILD_BENCH=ON "${EXTRA[@]}"
  cd build
fi
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"

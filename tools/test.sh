#!/usr/bin/env bash
# Quick start 2: set up, build, and run the whole test suite (CTest); prints its summary.
# GPUPLAN_SANITIZE=1 runs it under AddressSanitizer + UndefinedBehaviorSanitizer instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${GPUPLAN_SANITIZE:-0}" = "1" ]; then
  bash tools/setup.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUPLAN_SANITIZE=ON -DGPUPLAN_BUILD_BENCH=OFF
  cd build-asan
else
  bash tools/setup.sh build -DGPUPLAN_BUILD_BENCH=ON
  cd build
fi
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"

#!/usr/bin/env bash
# Quick start 1: set up, build, and run gpuplan's main job on the built-in default scenario
# (the guides' B16 NLP case). Extra arguments are passed to gpuplan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh build -DGPUPLAN_BUILD_BENCH=OFF
exec ./build/gpuplan "$@"

#!/usr/bin/env bash
# CI fuzz smoke and sanitizer subset (docs/reliability.md): builds the clang tree with
# GPUPLAN_FUZZ=ON (library, CLI and input tests under ASan/UBSan), runs input_test, the YAML
# reader tests, cli_test (against the sanitized CLI) and the bad-input corpus against it, then each libFuzzer harness for SECONDS (default
# 5) on a copy of its seed corpus. Usage: tools/fuzz_smoke.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-5}"
BUILD_DIR="${2:-build-fuzz}"
GPUPLAN_FUZZ=1 GPUPLAN_SETUP_ONLY=1 bash tools/setup.sh
JOBS="$(nproc 2>/dev/null || echo 2)"
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$BUILD_DIR" -DGPUPLAN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DGPUPLAN_BUILD_TESTS=ON -DGPUPLAN_BUILD_BENCH=OFF "${LAUNCHER[@]}" >&2
FUZZERS=(hf_config safetensors_header safetensors_index job_yaml serve_yaml check_yaml catalog_csv
         skypilot_csv validate_jsonl plan_json emit)
TARGETS=(gpuplan input_test bad_input_driver cli_test job_yaml_test serve_yaml_test)
for f in "${FUZZERS[@]}"; do TARGETS+=("fuzz_$f"); done
cmake --build "$BUILD_DIR" -j"$JOBS" --target "${TARGETS[@]}" >&2
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in input_test job_yaml_test serve_yaml_test cli_test; do
  echo "== $t (ASan/UBSan)"
  "$BUILD_DIR/tests/$t" --gtest_brief=1
done
echo "== bad-input corpus against the ASan/UBSan CLI"
"$BUILD_DIR/tests/bad_input_driver" "$BUILD_DIR/gpuplan" tests/bad_inputs/cases.jsonl
echo "== libFuzzer harnesses, ${SECS} s each"
for f in "${FUZZERS[@]}"; do
  work="$(mktemp -d)"
  cp -r "fuzz/corpus/$f/." "$work/"
  log="$(mktemp)"
  if ! "$BUILD_DIR/fuzz/fuzz_$f" "$work" -dict="fuzz/dict/$f.dict" -max_total_time="$SECS" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log"
    echo "FAIL fuzz_$f" >&2
    exit 1
  fi
  echo "fuzz_$f: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') executions"
  rm -rf "$work" "$log"
done

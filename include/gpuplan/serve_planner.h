// The serving planner: for a model, a load (requests/s with input/output lengths) and latency
// SLOs, finds the cheapest deployments over the catalog (GPU instances with a tensor-parallel
// width and replica count, or CPU instances), and prices them per hour, month, 1k requests
// and 1M output tokens. Also CPU-vs-GPU TCO with the break-even load.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/serve.h"

namespace gpuplan {

// The request shape a serving job gets when it does not say (docs/serve-yaml.md): LLMs 512
// prompt and 256 output tokens, encoders 128 tokens, vision models their image's patches.
int DefaultServeInputLen(const ModelSpec& m);
int DefaultServeOutputLen(const ModelSpec& m);

struct ServeJobSpec {
  ModelSpec model;
  Precision weight_precision = Precision::kBf16;
  std::optional<QuantSpec> quant;
  Precision kv_precision = Precision::kBf16;
  double qps = 1;        // requests per second (peak load to carry)
  int input_len = 512;   // LLM prompt tokens, or encoder sequence length
  int output_len = 128;  // LLM output tokens (0 for encoders/CNNs)
  int beams = 1;         // beam width of the decoding (ServeSetup::beams)
  // Each request's generation limit (ServeSetup::max_new_tokens): a named benchmark's
  // max_output_tokens; unset = output_len.
  std::optional<int> max_output_len;
  // Diffusion UNets: the sampling loop each image runs (a named benchmark's, else diffusers'
  // defaults). Other models ignore it.
  DiffusionSampling diffusion;
  std::optional<double> ttft_p99_ms, tpot_p99_ms, e2e_p99_ms;
  Engine engine = Engine::kVllm;
  double target_utilization = 0.6;  // guides' HPA target (B12)
  std::vector<std::string> clouds, regions, gpus;
  bool allow_gpu = true;
  bool allow_cpu = false;
  bool reserved = false;  // rank by the 1-year reserved price where one exists
  Currency currency = Currency::kUsd;
  int top = 5;
  bool include_suspect = false;  // rank catalog rows whose source marks them suspect
  bool marketplace = true;       // rank marketplace listings (kMarketplaceFlag)
  bool by_region = false;        // keep rows that differ only by region apart
  bool with_guide = true;        // compare with the guides' serving rule (ServePlanResult::guide_*)
};

struct ServePlan {
  const InstanceType* instance = nullptr;
  int tp = 1;  // tensor-parallel GPUs per replica within a node (0 for CPU)
  // Nodes per replica: 1, or the pipeline-parallel stages across nodes (tp within a node, pp
  // across nodes over the fabric) when the model fits no single node of the shape.
  int pp = 1;
  int replicas_per_instance = 1;
  int replicas = 1;
  int instances = 1;
  int batch = 1;            // concurrent sequences (or forward batch) per replica
  ServePerf perf;           // per replica at `batch`
  double capacity_qps = 0;  // per replica at the planned utilisation
  // The utilisation the capacity is planned at: the job's target, or lower where queueing at the
  // target would miss a latency SLO (more replicas, each waiting less).
  double planned_utilization = 0;
  double utilization = 0;  // at the job's load
  double ttft_p99_ms = 0, tpot_p99_ms = 0, e2e_p99_ms = 0;
  std::optional<double> cost_per_hour, cost_per_hour_reserved;
  double cost_per_month = 0, cost_per_1k_requests = 0, cost_per_1m_output_tokens = 0;
  std::vector<std::string> warnings;
  // What runs the model on this hardware: the requested engine for LLMs on CUDA/ROCm GPUs, the
  // Neuron build on Inferentia/Trainium, Triton + TensorRT for encoders and CNNs on GPUs, ONNX
  // Runtime / OpenVINO on CPUs (see ServingRuntime).
  std::string runtime;
  // The host's RAM cannot stage the replica's weights plus the engine workers (default sizing
  // policy, docs/sizing.md): such plans rank after every plan whose host is adequate.
  bool host_inadequate = false;
  // Disk one instance needs for the engine image and the weights (default sizing policy: the
  // OS and images plus a downloaded and a converted copy of the weights), and whether the
  // shape's local NVMe is known to hold it (nullopt = not recorded for this shape).
  Bytes disk_needed;
  std::optional<bool> local_disk_enough;
  std::vector<std::string> also_regions;  // same deployment, same or higher price elsewhere
};

// The serving runtime for `model` on `inst` (whose accelerator is `acc`, nullptr for a CPU
// instance) when the job asked for `engine`.
std::string ServingRuntime(const ModelSpec& model, const InstanceType& inst, const Accelerator* acc,
                           Engine engine);

struct ServePlanResult {
  std::vector<ServePlan> plans;  // cheapest first
  std::vector<std::string> notes;
  // The guides' serving rule for this model and load (A2 for 7B at low QPS and 70B at high
  // concurrency, B16 for a 13B-class model), the cheapest plan that follows it, and the verdict.
  std::string guide_rule;
  std::vector<ServePlan> guide_plans;  // at most one
  std::string guide_comparison;
  std::string prices_as_of;
  long evaluated = 0;
};

// A serving job file (YAML, docs/serve-yaml.md) as read: every field optional; the CLI merges
// it with its flags (flags win) and validates the result.
struct ServeJobFile {
  std::string model;
  std::string benchmark;  // serve.benchmark: data/inference_benchmarks.csv id or alias
  std::optional<double> qps;
  std::optional<int> input_len, output_len, top;
  std::optional<int> denoise_steps;  // serve.denoise_steps: diffusion UNets only
  std::optional<double> ttft_p99_ms, tpot_p99_ms, e2e_p99_ms, target_utilization;
  std::string precision, quant, kv_precision, engine, currency;
  std::vector<std::string> clouds, regions, gpus;
  std::optional<bool> cpu, cpu_only, reserved, include_suspect, marketplace;
  // Where each value the file gives sits, by its key: "serve.engine" -> "job.yaml:8:serve.engine"
  // (MergeServeJobFile hands it on to the request).
  std::map<std::string, std::string, std::less<>> where;
};
// Errors name "label:LINE:yaml.path"; unknown keys get a did-you-mean.
Result<ServeJobFile> ParseServeJobYaml(std::string_view yaml_text, std::string_view label);

// The engine setup one replica of `job` runs at tensor-parallel width `tp` (weights, KV, engine
// and its host overlap, beams): the planner's, `check`'s and the load curves' one home.
ServeSetup ServeSetupFor(const ServeJobSpec& job, int tp);

Result<ServePlanResult> PlanServing(const ServeJobSpec& job, const Catalog& catalog,
                                    const Calibration& cal,
                                    std::optional<double> cny_per_usd = std::nullopt);

// The serving model of one replica of a plan across loads, for callers that need latency at a
// load other than the planned one (`simulate`). Built from the same estimators and the same
// queueing approximation as PlanServing (one prediction path): points at concurrency 1, 2, 4,
// ... up to the plan's concurrency.
struct ServeLoadCurve {
  std::vector<int> batch;
  std::vector<double> rps;        // requests/s of the replica at that concurrency (increasing)
  std::vector<double> prefill_s;  // LLM: one prompt; others: one batch's forward
  std::vector<double> tpot_s;     // LLM only: the in-flight mean
  double tpot_p99_over_mean = 1;  // TpotP99's factor
  double max_rps = 0;             // at the plan's concurrency
  int servers = 1;                // queue servers: the plan's concurrency for LLMs, 1 otherwise
  int output_len = 0;
  bool llm = true;
};
ServeLoadCurve BuildServeLoadCurve(const ServeJobSpec& job, const ServePlan& plan,
                                   const Catalog& catalog, const Calibration& cal);

// Latency of one replica carrying `rps` (p99, ms), interpolated between the curve's points;
// TTFT includes the planner's M/M/c p99 wait at utilisation rps / max_rps (capped at 0.99).
struct ServeAtLoad {
  double utilization = 0;
  double ttft_p99_ms = 0, tpot_p99_ms = 0, e2e_p99_ms = 0;
};
ServeAtLoad EvaluateServeAtLoad(const ServeLoadCurve& curve, double rps);

// The planner's p99 queueing wait (s) for service time `service_s` at utilisation `rho` with
// `servers` servers: -ln(0.01) * S * rho / (c * (1 - rho)), rho capped at 0.99.
double ServeQueueP99(double service_s, double rho, int servers);

// p99 latency (s) of a request to a non-LLM replica (encoder, CNN, diffusion UNet) that serves
// batches of `batch` taking `service_s` each, at utilisation `rho`: its own batch, on an
// accelerator the batch already running when it arrives (at p99 nearly all of one), and the
// M/M/c wait with c = batch. A CPU runs the batch as independent streams: no batch in flight.
double BatchedServeP99(double service_s, double rho, int batch, bool cpu);

// The highest utilisation (up to 0.99) at which BatchedServeP99 stays within `bound_s`; 0 when
// an idle replica already misses it. `pooled` replicas draw from one queue (a dispatcher that
// hands each request to the next free replica): the wait is that of batch x pooled servers.
// The planner's replicas each keep their own queue behind a load balancer (pooled = 1).
double MaxUtilizationWithin(double bound_s, double service_s, int batch, bool cpu, int pooled = 1);

// The most requests/s one non-LLM replica sustains with p99 latency within `bound_s` (an MLPerf
// Server run's latency bound): over batches 1, 2, 4, ... up to `max_batch`, the batch's
// throughput times the highest utilisation that keeps BatchedServeP99 within the bound, with
// `pooled` replicas fed by one queue (MaxUtilizationWithin).
ServePerf BatchedServerCapacity(const ModelSpec& m, Precision p, const ComputeDevice& dev,
                                int seq_len, double bound_s, int max_batch, const Calibration& cal,
                                bool fused, const DiffusionSampling& sampling, int pooled = 1);

// Achievable fraction of a node fabric's line rate (the calibration's link_efficiency.*): what
// pipeline stages of a multi-node serving replica send their activations over.
double FabricEfficiency(InterNodeFabric f, const Calibration& cal);

// The most nodes one serving replica spans (pipeline stages across nodes).
constexpr int kMaxServeNodesPerReplica = 8;

}  // namespace gpuplan

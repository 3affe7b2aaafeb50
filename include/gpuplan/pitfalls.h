// The guides' pitfall rules for training, in one place. `gpuplan plan train` turns each plan's
// findings into its warnings and `gpuplan check` reports them, so the same setup gets the same
// findings at the same thresholds from both. Each rule is a function of the evaluated numbers
// (step-time split, memory breakdown, instance, job knobs) and returns a typed finding; each
// threshold is one named constant with its guide reference (rules and choices: docs/warnings.md
// and docs/check.md; the guides' rule ids: shared/seeds/README.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/job.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/plan.h"
#include "gpuplan/sizing.h"
#include "gpuplan/units.h"

namespace gpuplan {

enum class Severity : std::uint8_t { kError, kWarning, kInfo };

// "error", "warning", "info".
const char* SeverityName(Severity s);

// One pitfall that applies to a setup or a plan.
struct Finding {
  Severity severity = Severity::kWarning;
  std::string rule;     // guide rule id and a slug: "B5-memory-headroom"
  std::string message;  // what is wrong, with the numbers behind it
  std::string fix;      // what to change
};

// ---- thresholds (one per rule) ------------------------------------------------------------

// A12: exposed tensor- and data-parallel communication under this share of the step is not a
// pitfall (a PCIe box whose communication hides behind compute trains fine; issue 12).
inline constexpr double kMaterialCommShare = 0.10;
// A12: exposed communication at or above this share of the step dominates it (the guide's
// ~40% on PCIe against ~15% on NVLink): an error for PCIe-only multi-GPU training, a warning
// for any setup when all exposed communication (TP, DP, PP, EP) reaches it.
inline constexpr double kSevereCommShare = 0.30;
// Pipeline bubble at or above this share of the step: too few micro-batches per step for the
// stages ((pp - 1) / m of a step idles; Narayanan et al. 2021 keep m >= 4 x pp).
inline constexpr double kSevereBubbleShare = 0.25;
// B5: memory above this fraction of the headroom line (0.95 x 80% = 76% of usable memory) is
// close enough to the line that the guide's 20-30% over theory can cross it.
inline constexpr double kHeadroomWarnFraction = 0.95;
// A3: a card under the 64 GiB class (RTX 4090 24 GB, A100 40 GB, L40S 48 GB) is "small".
inline constexpr Bytes kSmallCardLimit = GiB(64);
// A3: the alternative has at least this much more memory per GPU ...
inline constexpr double kLargerCardMemoryRatio = 1.5;
// ... and trains the same job at least this much cheaper.
inline constexpr double kLargerCardMinSaving = 0.10;

// B1: a training-class machine serves a load that another deployment carries for at most
// 1 / kServingCostRatio of its price per hour.
inline constexpr double kServingCostRatio = 2.0;

// ---- what the rules read ------------------------------------------------------------------

// One evaluated training setup: a plan, or the setup `gpuplan check` reads. Pointers are
// non-null and outlive the call.
struct TrainFacts {
  const ModelSpec* model = nullptr;
  TrainMethod method = TrainMethod::kFull;
  const InstanceType* instance = nullptr;  // the catalog row, or one built for custom hardware
  const Accelerator* accelerator = nullptr;
  int nodes = 1;
  Parallelism par;
  TrainMemoryOptions opt;
  const TrainEval* eval = nullptr;       // EvaluateTraining of (model, par, opt) on the instance
  double headroom = 0.8;                 // usable fraction of GPU memory (B5)
  bool spot = false;                     // runs on spot capacity
  double checkpoint_interval_hours = 0;  // 0 = no checkpoints
  Bytes dataset;                         // 0 = unknown
  std::vector<std::string> zones;        // zones of the nodes; empty = not given (plans)
  // CheckHost of the node against a sizing policy (TrainingSizingInput); failed, not waived
  // items become findings.
  std::vector<HostFinding> host;
};

// A cheaper way to train the same job on a larger-memory GPU (A3), found by the caller: the
// planner from its own ranked plans, check from the catalog.
struct LargerCard {
  std::string description;  // "aws p4de.24xlarge (8 x A100-SXM4-80GB, ...) at $40.97/h"
  Bytes memory;             // per GPU
  double cost = 0;          // the job's cost on it, in the same unit as `own_cost`
  double own_cost = 0;      // the job's cost on the setup's card
  std::string cost_unit;    // "per 1M tokens", "for the job"
};

// One training checkpoint on disk: weights + optimizer states (16 bytes per parameter:
// bf16 weights, fp32 master, Adam m and v), or the adapter for LoRA/QLoRA.
Bytes TrainingCheckpointBytes(const TrainJobSpec& job);

// The host-sizing input of one node of a training setup: files, checkpoint, dataset and the
// input rate at the evaluated step (bytes per token or image x the step's rate / nodes).
SizingInput TrainingSizingInput(const TrainJobSpec& job, const InstanceType& inst,
                                const Accelerator& acc, int nodes, const Parallelism& par,
                                const TrainEval& eval);

// What the setup's small card needs to fit (A3): "full recompute", "gradient accumulation x8
// at micro-batch 1", or empty when the card is not small or nothing is forced. Re-evaluates
// the layout without recompute and at twice the micro-batch.
std::string SmallCardForcedBy(const TrainFacts& f, const TrainJob& job, const Calibration& cal);

// ---- the rules ----------------------------------------------------------------------------
// Each returns the finding when the rule fires, with the numbers behind it.

// B5: predicted memory against the headroom line of usable memory. Error when it does not fit
// in usable memory at all; warning above kHeadroomWarnFraction x headroom.
std::optional<Finding> MemoryHeadroomRule(const TrainFacts& f);

// A12/B8: more than one GPU per node over PCIe (or no GPU link), a layout that communicates
// (tp or dp > 1), and exposed TP+DP communication >= kMaterialCommShare of the step; error at
// kSevereCommShare. `nvlink_share`: the same layout's share on NVLink, when the caller has it.
std::optional<Finding> PcieMultiGpuRule(const TrainFacts& f,
                                        std::optional<double> nvlink_share = std::nullopt);

// A13/B8: more than one node with no RDMA fabric (gradients cross TCP). Error.
std::optional<Finding> MultiNodeRdmaRule(const TrainFacts& f);

// A13/B8: nodes in more than one zone (error); more than one node, zones not given (info: the
// advice to keep them in one zone).
std::optional<Finding> SameZoneRule(const TrainFacts& f);

// A15: spot capacity without checkpoints (each interruption loses the run so far). Error.
std::optional<Finding> SpotCheckpointRule(const TrainFacts& f, const Calibration& cal);

// B6: host RAM per node under guide B's dataset term (1.5 x the dataset; SizeHost guide-B),
// when both are known. Warning.
std::optional<Finding> DatasetRamRule(const TrainFacts& f);

// B17 (data loading): vision training whose JPEG decode at the step's images per second needs
// more host cores than the node has (calibration jpeg_decode_images_per_core_s). Warning.
std::optional<Finding> JpegDecodeRule(const TrainFacts& f, const Calibration& cal);

// A12: all exposed communication (TP, DP, PP, EP) >= kSevereCommShare of the step, on any
// link. Warning.
std::optional<Finding> ExposedCommunicationRule(const TrainFacts& f);

// Pipeline parallelism whose bubble (stages idle at the ends of each step) is
// >= kSevereBubbleShare of the step: the global batch gives too few micro-batches per pipeline.
// Warning.
std::optional<Finding> PipelineBubbleRule(const TrainFacts& f);

// A4-A10/B6-B8: one finding per failed, not waived host item (cpu -> A4-host-cpu, ram ->
// A5-host-ram, system_disk/data_disk -> A6-host-disk, storage_bw -> A9-host-storage-read,
// network -> B8-host-network); CPU and RAM only when the instance's vCPUs / RAM are known.
std::vector<Finding> HostRules(const TrainFacts& f);

// The rule id a failed host item is reported under (see HostRules).
const char* HostRuleId(const std::string& item);

// A3: a small card (kSmallCardLimit) forced into `forced_by` (SmallCardForcedBy) while
// `larger` trains the job at least kLargerCardMinSaving cheaper. Warning.
std::optional<Finding> SmallCardRule(const TrainFacts& f, const std::string& forced_by,
                                     const std::optional<LargerCard>& larger);

// B1: true for a training-class instance: NVLink/NVSwitch between its GPUs and an RDMA fabric
// between nodes (p4d/p5, ND A100/H100, A3).
bool IsTrainingClass(const InstanceType& inst);

// A cheaper deployment of the same serving load (B1), found by the caller: the serving
// planner's cheapest plan on the same cloud, or check's PlanServing on it.
struct CheaperServing {
  std::string description;  // "2 x g5.xlarge (2 x 1 GPU(s))"
  double per_hour = 0;      // in the unit of `own_per_hour`
};

// B1: `setup` (a training-class instance, IsTrainingClass) serving at `own_per_hour` while
// `cheaper` carries the same load at <= 1 / kServingCostRatio of it. `load` describes the load
// ("2 replicas carry 10.5 req/s ..."; may be empty); `currency` is the prices' code. Warning.
std::optional<Finding> TrainingInstanceServingRule(const InstanceType& inst,
                                                   const std::string& setup, double own_per_hour,
                                                   const std::string& load,
                                                   const std::optional<CheaperServing>& cheaper,
                                                   const std::string& currency);

// A marketplace listing (IsMarketplace: a vast.ai host's offer) for a setup of `machines`
// machines: its price is the host's, as of the catalog's snapshot, it is that host's capacity,
// and no provider SLA covers it. Warning; shared by the training and serving planners and check.
std::optional<Finding> MarketplaceRule(const InstanceType& inst, int machines);

// Every rule above that needs no search (all but A3), in a fixed order: what a plan's
// warnings and `gpuplan check` share.
std::vector<Finding> TrainingPitfalls(const TrainFacts& f, const Calibration& cal,
                                      std::optional<double> nvlink_share = std::nullopt);

}  // namespace gpuplan

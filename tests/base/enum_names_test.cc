// One name table per enum (src/base/enum_names.h): Name(), Parse() and the did-you-mean list
// agree for every enum, aliases parse to their value, and parsing trims and ignores case.
#include "base/enum_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/input.h"
#include "gpuplan/model.h"
#include "gpuplan/precision.h"

namespace gpuplan {
namespace {

// Every canonical name parses back to a value whose Name() is that name; names are distinct.
template <class E, class NameF, class ParseF>
void ExpectRoundTrip(const std::vector<std::string>& names, std::size_t count, NameF name,
                     ParseF parse, const char* what) {
  EXPECT_EQ(names.size(), count) << what;
  std::set<std::string> seen;
  for (const auto& n : names) {
    auto v = parse(n);
    ASSERT_TRUE(v.has_value()) << what << ": " << n;
    EXPECT_EQ(std::string(name(*v)), n) << what;
    EXPECT_TRUE(seen.insert(n).second) << what << ": duplicate " << n;
  }
}

TEST(EnumNames, EveryTableRoundTrips) {
  ExpectRoundTrip<TrainMethod>(TrainMethodNames(), 4, TrainMethodName, ParseTrainMethod,
                               "TrainMethod");
  ExpectRoundTrip<Optimizer>(OptimizerNames(), 13, OptimizerName, ParseOptimizer, "Optimizer");
  ExpectRoundTrip<Recompute>(RecomputeNames(), 3, RecomputeName, ParseRecompute, "Recompute");
  ExpectRoundTrip<Engine>(EngineNames(), 5, EngineName, ParseEngine, "Engine");
  ExpectRoundTrip<TrainFramework>(TrainFrameworkNames(), 8, TrainFrameworkName, ParseTrainFramework,
                                  "TrainFramework");
  ExpectRoundTrip<Precision>(PrecisionNames(), 7, PrecisionName, ParsePrecision, "Precision");
  ExpectRoundTrip<ModelArch>(ModelArchNames(), 8, ModelArchName, ParseModelArch, "ModelArch");
  ExpectRoundTrip<IntraNodeLink>(IntraNodeLinkNames(), 7, IntraNodeLinkName, ParseIntraNodeLink,
                                 "IntraNodeLink");
  ExpectRoundTrip<InterNodeFabric>(InterNodeFabricNames(), 6, InterNodeFabricName,
                                   ParseInterNodeFabric, "InterNodeFabric");
}

TEST(EnumNames, AliasesCaseAndSpaces) {
  EXPECT_EQ(ParseTrainMethod("SFT"), TrainMethod::kFull);
  EXPECT_EQ(ParseTrainMethod(" qlora "), TrainMethod::kQlora);
  EXPECT_EQ(ParseTrainMethod(""), std::nullopt);
  EXPECT_EQ(ParseTrainMethod("lora2"), std::nullopt);
  EXPECT_EQ(ParseOptimizer("paged_adamw_8bit"), Optimizer::kAdamW8bit);
  EXPECT_EQ(ParseRecompute("gradient-checkpointing"), Recompute::kFull);
  EXPECT_EQ(ParseEngine("TensorRT-LLM"), Engine::kTrtLlm);
  EXPECT_EQ(ParseTrainFramework("nemo"), TrainFramework::kMegatronCore);
  EXPECT_EQ(ParsePrecision("bfloat16"), Precision::kBf16);
  EXPECT_EQ(ParsePrecision("nf4"), Precision::kInt4);
  EXPECT_EQ(ParseModelArch("decoder"), ModelArch::kDense);
  EXPECT_EQ(ParseModelArch("unet"), ModelArch::kDiffusionUnet);
  EXPECT_EQ(ParseInterNodeFabric("IB"), InterNodeFabric::kInfiniband);
  // An empty link cell is a machine without one.
  EXPECT_EQ(ParseIntraNodeLink(""), IntraNodeLink::kNone);
  EXPECT_EQ(ParseInterNodeFabric(""), InterNodeFabric::kNone);
}

// Configs and papers spell one choice many ways: separators and case do not matter, and a class
// path names its last component (torchtune's `_component_: bitsandbytes.optim.PagedAdamW8bit`).
TEST(EnumNames, SeparatorsAndClassPaths) {
  EXPECT_EQ(ParseOptimizer("adamw_8bit"), Optimizer::kAdamW8bit);
  EXPECT_EQ(ParseOptimizer("AdamW-8bit"), Optimizer::kAdamW8bit);
  EXPECT_EQ(ParseOptimizer("bitsandbytes.optim.PagedAdamW8bit"), Optimizer::kAdamW8bit);
  EXPECT_EQ(ParseOptimizer("torch.optim.AdamW"), Optimizer::kAdamW);
  EXPECT_EQ(ParseOptimizer("paged_adamw_32bit"), Optimizer::kAdamW);
  EXPECT_EQ(ParseOptimizer("Adafactor"), Optimizer::kAdafactor);
  EXPECT_EQ(ParseOptimizer("adam_mini"), Optimizer::kAdamMini);
  EXPECT_EQ(ParseOptimizer("Lion8bit"), Optimizer::kLion8bit);
  EXPECT_EQ(ParseOptimizer("torch.optim"), std::nullopt);  // the path names no optimizer
  EXPECT_EQ(ParseTrainMethod("full_finetune"), TrainMethod::kFull);
  EXPECT_EQ(ParseTrainMethod("Full fine-tune"), TrainMethod::kFull);
  EXPECT_EQ(ParseTrainMethod("pre-train"), TrainMethod::kPretrain);
  EXPECT_EQ(ParseRecompute("activation_checkpointing"), Recompute::kFull);
  EXPECT_EQ(ParseRecompute("true"), Recompute::kFull);
  EXPECT_EQ(ParseRecompute("false"), Recompute::kNone);
  EXPECT_EQ(ParsePrecision("bf16-mixed"), Precision::kBf16);
  EXPECT_EQ(ParsePrecision("amp_fp16"), Precision::kFp16);
  EXPECT_EQ(ParsePrecision("fp8_e5m2"), Precision::kFp8);
  EXPECT_EQ(ParsePrecision("W8A8-INT8"), Precision::kInt8);
  EXPECT_EQ(ParsePrecision("fp4"), std::nullopt);  // no FP4 format is modelled
  EXPECT_EQ(ParseEngine("trt_llm"), Engine::kTrtLlm);
  EXPECT_EQ(ParseTrainMethod("x.lora"), std::nullopt);  // class paths name optimizers only
}

TEST(EnumNames, DidYouMeanUsesTheTable) {
  EXPECT_EQ(ChoiceHint("lroa", TrainMethodNames()),
            "did you mean \"lora\"? (one of: pretrain, full, lora, qlora)");
  EXPECT_EQ(ChoiceHint("zzzzzzzz", RecomputeNames()), "use one of: none, selective, full");
}

}  // namespace
}  // namespace gpuplan

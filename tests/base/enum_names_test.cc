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
  ExpectRoundTrip<Optimizer>(OptimizerNames(), 6, OptimizerName, ParseOptimizer, "Optimizer");
  ExpectRoundTrip<Recompute>(RecomputeNames(), 3, RecomputeName, ParseRecompute, "Recompute");
  ExpectRoundTrip<Engine>(EngineNames(), 5, EngineName, ParseEngine, "Engine");
  ExpectRoundTrip<TrainFramework>(TrainFrameworkNames(), 7, TrainFrameworkName, ParseTrainFramework,
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

TEST(EnumNames, DidYouMeanUsesTheTable) {
  EXPECT_EQ(ChoiceHint("lroa", TrainMethodNames()),
            "did you mean \"lora\"? (one of: pretrain, full, lora, qlora)");
  EXPECT_EQ(ChoiceHint("zzzzzzzz", RecomputeNames()), "use one of: none, selective, full");
}

}  // namespace
}  // namespace gpuplan

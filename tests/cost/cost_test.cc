// The library functions moved out of the CLI for issue 17: cheapest offers (one per cloud,
// cheapest first, multi-node only over a collective fabric: guides A13/B8), the TCO request
// checks, the training job's finalization and the serving job's defaults.
#include <gtest/gtest.h>

#include <set>

#include "gpuplan/catalog.h"
#include "gpuplan/cost.h"
#include "gpuplan/job_checks.h"
#include "gpuplan/tco.h"
#include "gpuplan/model.h"

namespace gpuplan {
namespace {

const Catalog& Cat() {
  static const Catalog* c = new Catalog(*LoadBuiltinCatalog());
  return *c;
}

TEST(CheapestOffersTest, OnePerCloudCheapestFirstMultiNodeOnlyOverAFabric) {
  const Accelerator* h100 = Cat().FindAccelerator("H100");
  ASSERT_NE(h100, nullptr);
  for (int gpus : {1, 8, 16, 64}) {
    for (bool multi : {false, true}) {
      auto offers = CheapestOffers(Cat(), *h100, gpus, multi, Currency::kUsd, std::nullopt);
      std::set<std::string> clouds;
      double prev = 0;
      for (const auto& o : offers) {
        EXPECT_TRUE(clouds.insert(o.inst->cloud).second) << "two offers on " << o.inst->cloud;
        EXPECT_EQ(o.inst->accelerator, h100->id);
        EXPECT_EQ(o.nodes * o.inst->accelerator_count >= gpus, true);
        if (o.nodes > 1) {
          EXPECT_TRUE(multi);
          EXPECT_NE(o.inst->inter_node_fabric, InterNodeFabric::kNone) << o.inst->instance_type;
          EXPECT_EQ(o.nodes * o.inst->accelerator_count, gpus);
        }
        const double key = o.on_demand.value_or(o.spot.value_or(1e300));
        EXPECT_GE(key, prev);
        prev = key;
        if (o.on_demand && o.inst->price_on_demand && o.inst->currency == Currency::kUsd) {
          EXPECT_DOUBLE_EQ(*o.on_demand, *o.inst->price_on_demand * o.nodes);
        }
      }
      if (gpus == 8) {
        EXPECT_FALSE(offers.empty());
      }
      if (gpus == 64 && !multi) {
        EXPECT_TRUE(offers.empty()) << "no single machine has 64 H100s";
      }
    }
  }
  EXPECT_FALSE(CheapestOffers(Cat(), *h100, 64, true, Currency::kUsd, std::nullopt).empty());
}

TEST(CostTest, SpotRateAndTcoInputsAreChecked) {
  auto c = WithSpotRate(DefaultCalibration(), 0.25, "--spot-rate");
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->Get("spot_interruptions_per_node_hour", -1), 0.25);
  auto bad = WithSpotRate(DefaultCalibration(), 1.5, "spot_rate");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().field, "spot_rate");
  EXPECT_FALSE(CheckTcoYears(0, "--years"));
  EXPECT_FALSE(CheckTcoYears(11, "--years"));
  EXPECT_TRUE(CheckTcoYears(3, "--years"));
  auto p = ParseHourlyProfile("1,2,3", "--profile");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("got 3"), std::string::npos);
  std::string day;
  for (int h = 0; h < 24; ++h) day += (h ? "," : "") + std::to_string(h);
  auto ok = ParseHourlyProfile(day, "--profile");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->size(), 24u);
  EXPECT_DOUBLE_EQ((*ok)[23], 23);
}

TEST(JobChecksTest, FinalizeTrainJob) {
  TrainJobSpec job;
  job.model = *FindPreset("resnet-50");
  job.method = TrainMethod::kLora;
  job.samples = 1e6;
  auto st = FinalizeTrainJob(job, InputSource::kFlags);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(st.error().field, "--method");
  TrainJobFields f;
  f.method = "train.method";
  f.tokens = "train.data.tokens";
  st = FinalizeTrainJob(job, InputSource::kYaml, "request", f);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().field, "train.method");

  TrainJobSpec llm;
  llm.model = *FindPreset("Llama-2-7B");
  st = FinalizeTrainJob(llm, InputSource::kFlags);  // no tokens, no samples
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().field, "--tokens");
  llm.tokens = 1e9;
  ASSERT_TRUE(FinalizeTrainJob(llm, InputSource::kFlags));
  EXPECT_EQ(llm.seq_len, EffectiveSeqLen(llm));
  EXPECT_GT(llm.seq_len, 0);
}

TEST(JobChecksTest, ServeDefaultsByModelKind) {
  ServeRequest r;
  r.model = "Llama-2-7B";
  r.qps = 2;
  auto j = BuildServeJob(r, "USD");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->input_len, 512);
  EXPECT_EQ(j->output_len, 256);
  EXPECT_EQ(j->top, 5);
  EXPECT_EQ(j->currency, Currency::kUsd);
  r.model = "bert-base-uncased";
  j = BuildServeJob(r, "CNY");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->input_len, 128);
  EXPECT_EQ(j->output_len, 0);
  EXPECT_EQ(j->currency, Currency::kCny);
  // The load must be given once, and is converted from tokens/s with the output length.
  r.model = "Llama-2-7B";
  r.qps.reset();
  r.tokens_per_s = 512;
  j = BuildServeJob(r, "USD");
  ASSERT_TRUE(j);
  EXPECT_DOUBLE_EQ(j->qps, 2.0);
  r.qps = 1;
  auto both = BuildServeJob(r, "USD");
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().field, "--qps");
  // A model the caller parsed (a pasted config.json) is used as given.
  ModelSpec m = *FindPreset("Llama-2-7B");
  m.name = "pasted";
  r.qps.reset();
  r.model.clear();
  j = BuildServeJob(r, "USD", &m);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->model.name, "pasted");
}

}  // namespace
}  // namespace gpuplan

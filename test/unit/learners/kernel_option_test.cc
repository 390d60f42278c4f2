// The kernel a learner holds (learners/common/kernel_option.h): without --bandwidth the RBF bandwidth is
// --bandwidth_factor times the median distance of the warm-up, the factor defaulting by the loss (0.5 for the
// logistic loss, 1 — the median heuristic as published — for the squared loss); it is saved with the model,
// and a model saved before the factor existed loads as the median heuristic.
#include "learners/common/kernel_option.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "labeled_example.h"
#include "lepus/loss.h"
#include "registry_cases.h"

namespace lepus {
namespace {

// Points 0, 1, 3 and 7 on one axis: the median pair distance is 3 (test/unit/kernels/kernel_test.cc).
std::vector<Example> axis_points() {
  std::vector<Example> out;
  for (double x : {0.0, 1.0, 3.0, 7.0}) out.push_back(testing::example({{4, x}}, 1.0f));
  return out;
}

kernels::KernelParams rbf(double factor) {
  kernels::KernelParams p;
  p.median_factor = factor;
  return p;
}

std::vector<uint8_t> saved(const common::KernelSetting& k) {
  ModelWriter w;
  k.save(w);
  return w.bytes();
}

TEST(KernelSetting, BandwidthFactorScalesTheMedianAndIsSaved) {
  VectorBuilder builder(10);
  const std::vector<Example> xs = axis_points();
  common::KernelSetting half(rbf(0.5));
  EXPECT_NE(half.text().find("0.5 x the median distance"), std::string::npos) << half.text();
  half.estimate(xs, builder);
  EXPECT_DOUBLE_EQ(half.kernel().params().bandwidth, 1.5);
  const std::vector<uint8_t> bytes = saved(half);
  common::KernelSetting loaded(rbf(1.0));  // another factor given: the saved one wins
  ModelReader r(bytes.data(), bytes.size(), "model");
  loaded.load(r, "kons");
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_DOUBLE_EQ(loaded.kernel().params().bandwidth, 1.5);
  EXPECT_EQ(loaded.text(), half.text());
  EXPECT_EQ(saved(loaded), bytes);

  // Factor 1 saves as the median heuristic always has (no factor in the file), and loads as it.
  common::KernelSetting median(rbf(1.0));
  median.estimate(xs, builder);
  EXPECT_DOUBLE_EQ(median.kernel().params().bandwidth, 3.0);
  EXPECT_NE(median.text().find("median heuristic"), std::string::npos) << median.text();
  EXPECT_EQ(saved(median).size() + 8, bytes.size());
  const std::vector<uint8_t> old = saved(median);
  common::KernelSetting again(rbf(0.5));
  ModelReader r2(old.data(), old.size(), "model");
  again.load(r2, "kons");
  EXPECT_EQ(again.text(), median.text());
}

// The factor's default follows the loss: kons learns classification (logistic) with half the median distance
// and regression (squared) with the median heuristic; --bandwidth_factor overrides both.
TEST(KernelSetting, FactorDefaultsByTheLoss) {
  const LearnerRow& row = *find_learner("kons");
  auto text = [&](const char* loss, const char* factor) {
    OptionValues v = registry_test::defaults_of(row);
    if (factor) v.set("bandwidth_factor", factor, true);
    const auto l = make_loss(LossOptions{loss});
    auto learner = row.make(LearnerContext{v, *l, 10, false});
    warm_up(*learner, axis_points());
    return learner->summary_lines().front();
  };
  EXPECT_NE(text("logistic", nullptr).find("bandwidth 1.5 (0.5 x the median"), std::string::npos);
  EXPECT_NE(text("squared", nullptr).find("bandwidth 3 (median heuristic"), std::string::npos);
  EXPECT_NE(text("logistic", "1").find("bandwidth 3 (median heuristic"), std::string::npos);
  EXPECT_NE(text("squared", "0.25").find("bandwidth 0.75 (0.25 x the median"), std::string::npos);
}

}  // namespace
}  // namespace lepus

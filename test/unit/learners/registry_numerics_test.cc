// Numerics for every learner in the registry (issue 7): extreme feature values and long runs of one example never
// produce a NaN or infinite prediction or weight. Learners added to the registry are covered automatically.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/feature_space.h"
#include "formats/vw_text.h"
#include "lepus/learner.h"
#include "lepus/loss.h"
#include "lepus/model_io.h"
#include "registry_cases.h"

namespace lepus {
namespace {

using registry_test::Case;
using registry_test::defaults_of;
using registry_test::Quiet;

std::vector<Case> cases() { return registry_test::cases({"squared", "logistic", "hinge", "quantile"}); }

// Every number of the learner's state, as its own save() writes it: ModelWriter checks each float and double
// put (put_f32, put_f64, put_values), and a state with bytes put untyped (put_raw) would hide numbers from
// the check.
void expect_finite_state(const Learner& l, const std::string& what) {
  ModelWriter w;
  l.save(w);
  EXPECT_GT(w.values(), 0u) << what << ": no number in the saved state";
  EXPECT_EQ(w.untyped_bytes(), 0u) << what << ": state saved as raw bytes, which the check cannot see";
  EXPECT_EQ(w.nonfinite(), 0u) << what << ": " << w.nonfinite() << " of the " << w.values()
                               << " numbers in the saved state are not finite";
}

class RegistryNumerics : public ::testing::TestWithParam<Case> {};

TEST_P(RegistryNumerics, ExtremeValuesStayFinite) {
  const LearnerRow* row = find_learner(GetParam().learner);
  ASSERT_NE(row, nullptr);
  LossOptions lo;
  lo.name = GetParam().loss;
  const auto loss = make_loss(lo);
  const OptionValues opts = defaults_of(*row);
  auto learner = row->make(LearnerContext{opts, *loss, 12, false});
  FeatureSpace space(FeatureSpaceOptions{});
  Quiet q;
  Example ex;
  const char* lines[] = {"1 |f a:1e30 b:1e-30 c:1",
                         "-1 |f a:1e-30 b:1e30 d:1e30",
                         "1 |f a:3e38 e:-3e38",
                         "-1 |f a:1e-38 b:-1e-38 c:1e-45",
                         "1 1000 |f a:1e30 z:1e-30",
                         "-1 0.001 |f a:1e-30",
                         "1e30 |f a:1",
                         "-1e30 |f a:1e30 b",
                         "1 |f a:1e15 b:1e15 c:1e15 d:1e15"};
  // 200 rounds of the nine lines, or as many as the learner's cap allows (an exact kernel learner's cost grows with
  // every example: O(t^2) per round).
  const uint64_t per_round = std::size(lines);
  const uint64_t rounds =
      row->numerics_test_cap > 0 ? std::min<uint64_t>(200, row->numerics_test_cap / per_round) : 200;
  for (uint64_t round = 0; round < rounds; ++round) {
    for (const char* line : lines) {
      parse_vw_line(line, ParseOptions{}, ex, q);
      space.expand(ex);
      const Prediction p = learner->learn(ex);
      ASSERT_TRUE(std::isfinite(p.value)) << line << " round " << round;
      ASSERT_TRUE(std::isfinite(learner->predict(ex).value)) << line;
    }
  }
  expect_finite_state(*learner, GetParam().learner);
}

TEST_P(RegistryNumerics, ManyIdenticalExamplesStayFinite) {
  const LearnerRow* row = find_learner(GetParam().learner);
  LossOptions lo;
  lo.name = GetParam().loss;
  const auto loss = make_loss(lo);
  const OptionValues opts = defaults_of(*row);
  auto learner = row->make(LearnerContext{opts, *loss, 12, false});
  FeatureSpace space(FeatureSpaceOptions{});
  Quiet q;
  Example ex;
  parse_vw_line("1 |f a:1e20 b:1e-20 c", ParseOptions{}, ex, q);
  space.expand(ex);
  const uint64_t n = row->numerics_test_cap > 0 ? std::min<uint64_t>(row->numerics_test_cap, 100000) : 100000;
  for (uint64_t i = 0; i < n; ++i) {
    const Prediction p = learner->learn(ex);
    ASSERT_TRUE(std::isfinite(p.value) && std::isfinite(p.raw)) << "example " << i;
  }
  expect_finite_state(*learner, GetParam().learner);
}

INSTANTIATE_TEST_SUITE_P(AllLearners, RegistryNumerics, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return registry_test::case_name(info.param); });

}  // namespace
}  // namespace lepus

// vw-ftrl, vw-pistol, vw-coin: each update rule on values computed by hand from the rules' formulas (vw_optimizers.h),
// then the whole learners on the three-example stream t3 (logistic loss), whose every printed prediction, raw
// score and final slot state VW 9.11.2 prints for --ftrl, --pistol and --coin:
//   t3 = "1 |f a b:2 c" / "-1 |f a:0.5 d" / "1 2 |f b c:-1" (the third has importance weight 2),
// and VW's driver order: ftrl and coin print the prediction made before learning (under the clipping range
// before the label widens it) and report the loss of the one they learned from.
#include "learners/vw_optimizers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "lepus/errors.h"

namespace lepus {
namespace {

using F = VwOptimizerLearner::Field;

// Slots of t3's features (no collisions): a, b, c, d, and the constant k, last among the linear features as in VW.
constexpr uint64_t kA = 1, kB = 2, kC = 3, kD = 4, kK = 5;

Example example(std::vector<std::pair<uint64_t, float>> f, float y, float weight = 1.0f,
                float initial = 0.0f) {
  Example ex;
  for (const auto& [i, v] : f) ex.features.push_back(Feature{i, v});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  ex.weight = weight;
  ex.initial = initial;
  return ex;
}

std::vector<Example> t3() {
  return {example({{kA, 1.0f}, {kB, 2.0f}, {kC, 1.0f}, {kK, 1.0f}}, 1.0f),
          example({{kA, 0.5f}, {kD, 1.0f}, {kK, 1.0f}}, -1.0f),
          example({{kB, 1.0f}, {kC, -1.0f}, {kK, 1.0f}}, 1.0f, 2.0f)};
}

std::unique_ptr<Loss> loss(const char* name) {
  LossOptions o;
  o.name = name;
  return make_loss(o);
}

// ---- the rules, one slot at a time ----

// FTRL-Proximal, alpha 0.5, beta 1, from a fresh slot with g = u x = -0.5 * 2 = -1:
// n = 1, sigma = (1 - 0)/0.5 = 2, z = -1 - 2 * 0 = -1, w = -(z)/((1 + 1)/0.5) = 0.25.
TEST(VwFtrlRule, FirstStepFromAFreshSlot) {
  const VwOptimizerOptions o = VwOptimizerOptions::defaults(VwOptimizer::kFtrl);
  float s[4] = {0, 0, 0, 0};
  ASSERT_TRUE(VwOptimizerLearner::ftrl_step(s, 2.0f, -0.5f, o));
  EXPECT_FLOAT_EQ(s[F::kG2], 1.0f);
  EXPECT_FLOAT_EQ(s[F::kZt], -1.0f);
  EXPECT_FLOAT_EQ(s[F::kXt], 0.25f);
  // Second step, g = 0.5 * 1: n = 1.25, sigma = (sqrt(1.25) - 1)/0.5 = 0.236068, z = -1 + (0.5 - 0.236068 * 0.25)
  // = -0.559017, w = 0.559017 / ((1 + sqrt(1.25))/0.5) = 0.131966.
  ASSERT_TRUE(VwOptimizerLearner::ftrl_step(s, 1.0f, 0.5f, o));
  EXPECT_NEAR(s[F::kG2], 1.25, 1e-6);
  EXPECT_NEAR(s[F::kZt], -0.559017, 1e-6);
  EXPECT_NEAR(s[F::kXt], 0.131966, 1e-6);
}

// l1 zeroes a weight while |z| <= lambda1 and shrinks it by lambda1 beyond; l2 adds to the denominator.
// Fresh slot, g = -0.5: n = 0.25, sigma = 1, z = -0.5.
TEST(VwFtrlRule, L1AndL2) {
  VwOptimizerOptions o = VwOptimizerOptions::defaults(VwOptimizer::kFtrl);
  o.l1 = 0.6f;
  float s[4] = {0, 0, 0, 0};
  ASSERT_TRUE(VwOptimizerLearner::ftrl_step(s, 1.0f, -0.5f, o));
  EXPECT_FLOAT_EQ(s[F::kZt], -0.5f);
  EXPECT_EQ(s[F::kXt], 0.0f);  // |z| = 0.5 <= 0.6
  o.l1 = 0.1f;
  o.l2 = 1.0f;
  float t[4] = {0, 0, 0, 0};
  ASSERT_TRUE(VwOptimizerLearner::ftrl_step(t, 1.0f, -0.5f, o));
  // w = -(z - sgn(z) l1) / ((beta + sqrt(n))/alpha + l2) = (0.5 - 0.1) / ((1 + 0.5)/0.5 + 1) = 0.1.
  EXPECT_NEAR(t[F::kXt], 0.1, 1e-7);
}

// PiSTOL's update: ZT -= g and G2 += |g| (absolute values, not squares).
TEST(VwPistolRule, SumsGradientsAndTheirAbsoluteValues) {
  float s[4] = {0, 0, 0, 0};
  ASSERT_TRUE(VwOptimizerLearner::pistol_step(s, 2.0f, -0.5f));
  EXPECT_FLOAT_EQ(s[F::kZt], 1.0f);
  EXPECT_FLOAT_EQ(s[F::kG2], 1.0f);
  ASSERT_TRUE(VwOptimizerLearner::pistol_step(s, -3.0f, -0.5f));  // g = 1.5
  EXPECT_FLOAT_EQ(s[F::kZt], -0.5f);
  EXPECT_FLOAT_EQ(s[F::kG2], 2.5f);
  EXPECT_EQ(s[F::kXt], 0.0f);  // the weight is computed at prediction time
}

// Coin betting's update from t3's slot b before example 3 (ZT 1, G2 1, MX 2, MG 1, WE 0), x = 1, u = -1.16431,
// avg = 2.6875: MG = |u| = 1.16431 (> beta), bet = (4 + 0)/((1.16431 * 2)(1.16431 * 2 + 1)) * 1 = 0.516057,
// ZT = 1 + 1.16431, G2 = 1 + 1.16431, WE = 1.16431 * 0.516057 = 0.60085, XT = 0.516057 / 2.6875 = 0.192021.
TEST(VwCoinRule, BetsWithTheNewLipschitzEstimate) {
  const VwOptimizerOptions o = VwOptimizerOptions::defaults(VwOptimizer::kCoin);
  float s[8] = {0, 1, 1, 2, 0, 1, 0, 0};
  ASSERT_TRUE(VwOptimizerLearner::coin_step(s, 1.0f, -1.16431f, 2.6875f, o));
  EXPECT_NEAR(s[F::kMg], 1.16431, 1e-6);
  EXPECT_FLOAT_EQ(s[F::kMx], 2.0f);
  EXPECT_NEAR(s[F::kZt], 2.16431, 1e-6);
  EXPECT_NEAR(s[F::kG2], 2.16431, 1e-6);
  EXPECT_NEAR(s[F::kWe], 0.60085, 2e-6);
  EXPECT_NEAR(s[F::kXt], 0.192021, 1e-6);
}

// The first gradient of a fresh slot: MG becomes max(beta, |u|) = 1, and the bet is 0 (ZT was 0).
TEST(VwCoinRule, FreshSlotTakesBetaAsItsLipschitzFloor) {
  const VwOptimizerOptions o = VwOptimizerOptions::defaults(VwOptimizer::kCoin);
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_TRUE(VwOptimizerLearner::coin_step(s, 2.0f, -0.5f, 4.0f, o));
  EXPECT_FLOAT_EQ(s[F::kMg], 1.0f);
  EXPECT_FLOAT_EQ(s[F::kMx], 2.0f);
  EXPECT_FLOAT_EQ(s[F::kZt], 1.0f);
  EXPECT_FLOAT_EQ(s[F::kG2], 1.0f);
  EXPECT_EQ(s[F::kWe], 0.0f);
  EXPECT_EQ(s[F::kXt], 0.0f);
}

// A step whose state would overflow leaves the slot as it was.
TEST(VwOptimizerRules, NonFiniteStepLeavesTheSlot) {
  const VwOptimizerOptions o = VwOptimizerOptions::defaults(VwOptimizer::kFtrl);
  float s[4] = {0.5f, -1.0f, 2.0f, 0.0f};
  EXPECT_FALSE(VwOptimizerLearner::ftrl_step(s, 1e30f, 1e30f, o));
  EXPECT_EQ(s[0], 0.5f);
  EXPECT_EQ(s[1], -1.0f);
  EXPECT_EQ(s[2], 2.0f);
}

// ---- the learners on t3 (VW 9.11.2's printed values) ----

struct T3Case {
  VwOptimizer mode;
  double shown[3];   // -p
  double raw[3];     // -r
  double scored[3];  // the prediction learned from and scored
  double after[3];   // predictions of the trained learner on t3 (VW: -t -i model)
};

class VwOptimizersT3 : public ::testing::TestWithParam<T3Case> {};

TEST_P(VwOptimizersT3, MatchesVw) {
  const T3Case& c = GetParam();
  const auto lf = loss("logistic");
  VwOptimizerLearner l(VwOptimizerOptions::defaults(c.mode), *lf, 18, false);
  for (int t = 0; t < 3; ++t) {
    const Prediction p = l.learn(t3()[t]);
    EXPECT_NEAR(p.value, c.shown[t], 1e-6) << t;
    EXPECT_NEAR(p.raw, c.raw[t], 1e-6) << t;
    EXPECT_NEAR(p.scored.value_or(p.value), c.scored[t], 1e-6) << t;
  }
  for (int t = 0; t < 3; ++t) EXPECT_NEAR(l.predict(t3()[t]).value, c.after[t], 1e-6) << t;
}

INSTANTIATE_TEST_SUITE_P(
    Vw, VwOptimizersT3,
    ::testing::Values(
        T3Case{VwOptimizer::kFtrl,
               {0, 0.25, 0.0895943},
               {0, 0.25, 0.0895943},
               {0, 0.25, 0.0895943},
               {1.136859, 0.080540, 0.735389}},
        T3Case{VwOptimizer::kPistol,
               {0, 0.192139, -0.0494929},
               {0, 0.192139, -0.0494929},
               {0, 0.192139, -0.0494929},
               {0.425361, 0.052071, -0.049493}},
        // coin prints the XT prediction made before learning; it learns from the betting sum / avg.
        T3Case{VwOptimizer::kCoin,
               {0, 0, 0.426667},
               {0, 0.64, -0.331626},
               {0, 0.64, -0.331626},
               {1.128064, 0.146647, -0.258707}}),
    [](const auto& info) {
      return std::string(info.param.mode == VwOptimizer::kFtrl     ? "ftrl"
                         : info.param.mode == VwOptimizer::kPistol ? "pistol"
                                                                   : "coin");
    });

// The final slot states VW 9.11.2 reaches on t3 (read from VW's --readable_model and -t predictions).
TEST(VwOptimizersT3State, FtrlPistolCoin) {
  const auto lf = loss("logistic");
  VwOptimizerLearner ftrl(VwOptimizerOptions::defaults(VwOptimizer::kFtrl), *lf, 18, false);
  VwOptimizerLearner pistol(VwOptimizerOptions::defaults(VwOptimizer::kPistol), *lf, 18, false);
  VwOptimizerLearner coin(VwOptimizerOptions::defaults(VwOptimizer::kCoin), *lf, 18, false);
  for (const Example& ex : t3()) {
    ftrl.learn(ex);
    pistol.learn(ex);
    coin.learn(ex);
  }
  EXPECT_NEAR(ftrl.field(kB, F::kXt), 0.450433, 1e-6);
  EXPECT_NEAR(ftrl.field(kB, F::kZt), -2.14669, 1e-5);
  EXPECT_NEAR(ftrl.field(kB, F::kG2), 1.91247, 1e-5);
  EXPECT_NEAR(ftrl.field(kD, F::kXt), -0.179934, 1e-6);
  EXPECT_NEAR(ftrl.field(kK, F::kXt), 0.221798, 1e-6);
  EXPECT_NEAR(pistol.field(kK, F::kXt), -0.0119753, 1e-6);
  EXPECT_NEAR(pistol.field(kK, F::kZt), 0.976854, 1e-6);
  EXPECT_NEAR(pistol.field(kK, F::kG2), 2.07263, 1e-5);
  EXPECT_NEAR(pistol.field(kB, F::kMx), 2.0, 0.0);
  EXPECT_NEAR(coin.field(kK, F::kXt), -0.0666865, 1e-6);
  EXPECT_NEAR(coin.field(kK, F::kWe), -1.08167, 1e-5);
  EXPECT_NEAR(coin.field(kC, F::kWe), -1.2017, 1e-4);
  EXPECT_NEAR(coin.field(kC, F::kMg), 1.16431, 1e-5);
  // N = 4 + 2.25 + 2 * 2.25 and W = 1 + 1 + 2.
  EXPECT_DOUBLE_EQ(coin.coin_norm_sum(), 10.75);
  EXPECT_DOUBLE_EQ(coin.coin_weight_sum(), 4.0);
}

// ftrl under squared loss: the printed prediction is clipped by the range before the label widens it, the
// learned one by the widened range. A fresh learner's range is [0, 0]; the example "15 1 5 |f a" (initial
// prediction 5) prints 0 and learns from 5 (u = 2 (5 - 15) = -20).
TEST(VwFtrlDriver, PrintsBeforeWideningLearnsAfter) {
  const auto sq = loss("squared");
  VwOptimizerLearner l(VwOptimizerOptions::defaults(VwOptimizer::kFtrl), *sq, 18, false);
  const Prediction p = l.learn(example({{kA, 1.0f}}, 15.0f, 1.0f, 5.0f));
  EXPECT_EQ(p.value, 0.0f);
  EXPECT_EQ(p.raw, 5.0f);
  ASSERT_TRUE(p.scored.has_value());
  EXPECT_EQ(*p.scored, 5.0f);
  // g = -20: n = 400, sigma = 40, z = -20, w = 20 / ((1 + 20)/0.5) = 0.476190.
  EXPECT_NEAR(l.field(kA, F::kXt), 0.476190, 1e-6);
  EXPECT_EQ(l.label_range().hi, 15.0f);
}

// Importance 0: the range widens, nothing is learned, the XT prediction is printed (pistol too).
TEST(VwOptimizersDriver, WeightZeroWidensOnly) {
  const auto sq = loss("squared");
  for (VwOptimizer m : {VwOptimizer::kFtrl, VwOptimizer::kPistol, VwOptimizer::kCoin}) {
    VwOptimizerLearner l(VwOptimizerOptions::defaults(m), *sq, 18, false);
    const Prediction p = l.learn(example({{kA, 1.0f}}, 7.0f, 0.0f, 3.0f));
    EXPECT_EQ(p.raw, 3.0f);
    EXPECT_EQ(p.value, m == VwOptimizer::kPistol ? 3.0f : 0.0f);  // pistol widens first, the others after
    EXPECT_EQ(l.label_range().hi, 7.0f);
    for (int f = 0; f < (m == VwOptimizer::kCoin ? 6 : m == VwOptimizer::kPistol ? 4 : 3); ++f)
      EXPECT_EQ(l.field(kA, static_cast<F>(f)), 0.0f);
  }
}

TEST(VwOptimizerOptionsTest, VwDefaultsPerModeAndChecks) {
  EXPECT_EQ(VwOptimizerOptions::defaults(VwOptimizer::kFtrl).alpha, 0.5f);
  EXPECT_EQ(VwOptimizerOptions::defaults(VwOptimizer::kFtrl).beta, 1.0f);
  EXPECT_EQ(VwOptimizerOptions::defaults(VwOptimizer::kPistol).alpha, 1.0f);
  EXPECT_EQ(VwOptimizerOptions::defaults(VwOptimizer::kPistol).beta, 0.5f);
  EXPECT_EQ(VwOptimizerOptions::defaults(VwOptimizer::kCoin).alpha, 4.0f);
  EXPECT_EQ(VwOptimizerOptions::defaults(VwOptimizer::kCoin).beta, 1.0f);
  OptionValues v;
  v.set("ftrl_alpha", "0", true);
  EXPECT_THROW(VwOptimizerOptions::from(VwOptimizer::kFtrl, v), ConfigError);
  // The registry rows declare each mode's own defaults.
  for (const char* name : {"vw-ftrl", "vw-pistol", "vw-coin"}) {
    const LearnerRow* row = find_learner(name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_FALSE(row->traits.vw_flag.empty());
  }
  const LearnerRow* coin = find_learner("vw-coin");
  for (const auto& s : coin->options) {
    if (s.name == "ftrl_alpha") {
      EXPECT_EQ(s.default_value, "4");
    }
  }
}

}  // namespace
}  // namespace lepus

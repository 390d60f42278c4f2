// The sgd learner against VW 9.11.2's update computed by hand on small examples.
#include "learners/gd.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "core/feature_space.h"
#include "formats/vw_text.h"
#include "labeled_example.h"
#include "lepus/errors.h"
#include "lepus/hashing.h"
#include "losses/losses.h"

namespace lepus {
namespace {

class NoWarnings final : public WarningSink {
 public:
  void warn(const std::string& m) override { ADD_FAILURE() << m; }
};

using testing::sgd_defaults;

const char* kT3[] = {"1 |f a b:2 c", "-1 |f a:0.5 d", "1 2 |f b c:-1"};

struct T3Run {
  std::vector<float> predictions;
  double loss_sum = 0.0, weight_sum = 0.0;
};

T3Run run_t3(GdLearner& g, const Loss& loss) {
  FeatureSpace space(FeatureSpaceOptions{});
  ParseOptions po;
  NoWarnings w;
  Example ex;
  T3Run r;
  for (const char* line : kT3) {
    parse_vw_line(line, po, ex, w);
    space.expand(ex);
    const Prediction p = g.learn(ex);
    r.predictions.push_back(p.value);
    r.loss_sum += loss.loss(p.value, ex.label, g.label_range()) * ex.weight;
    r.weight_sum += ex.weight;
  }
  return r;
}

uint64_t slot(const char* name) { return hash_strings(name, hash_strings("f", 0)) & 0x3FFFF; }

TEST(Gd, PlainSgdMatchesHandComputedOracle) {
  SquaredLoss loss;
  OptionValues v = sgd_defaults();
  v.set("sgd", "1", true);
  v.set("learning_rate", "0.5", true);
  GdLearner g(GdOptions::from(v), loss, 18, false);
  const T3Run r = run_t3(g, loss);
  EXPECT_FLOAT_EQ(r.predictions[0], 0.0f);
  EXPECT_FLOAT_EQ(r.predictions[1], 1.0f);  // raw 1.06066 clipped to the label range [-1, 1]
  EXPECT_NEAR(r.predictions[2], 0.259513f, 1e-6);
  const auto& s = g.slots();
  EXPECT_NEAR(s[slot("a")].w, 0.129757f, 1e-6);
  EXPECT_NEAR(s[slot("b")].w, 2.07653f, 1e-5);
  EXPECT_NEAR(s[slot("c")].w, 0.0447951f, 1e-6);
  EXPECT_NEAR(s[slot("d")].w, -1.1547f, 1e-4);
  EXPECT_NEAR(s[kConstantIndex & 0x3FFFF].w, 0.214718f, 1e-6);
  EXPECT_NEAR(r.loss_sum / r.weight_sum, 1.524160, 1e-6);
}

// The default rule uses VW's rsqrt (Intel's rsqrtss, emulated bit for bit): VW's printed digits.
TEST(Gd, DefaultRuleMatchesHandComputedOracle) {
  SquaredLoss loss;
  GdLearner g(GdOptions::from(sgd_defaults()), loss, 18, false);
  const T3Run r = run_t3(g, loss);
  EXPECT_FLOAT_EQ(r.predictions[0], 0.0f);
  EXPECT_NEAR(r.predictions[1], 0.237012f, 1e-6);
  EXPECT_NEAR(r.predictions[2], -0.096765f, 1e-6);
  struct Want {
    uint64_t slot;
    float w, g, n;
  };
  const Want want[] = {{slot("a"), 0.0390992f, 5.5302f, 1},
                       {slot("b"), 0.172993f, 25.6231f, 2},
                       {slot("c"), -0.0997739f, 13.6231f, 1},
                       {slot("d"), -0.226042f, 6.12079f, 1},
                       {kConstantIndex & 0x3FFFF, 0.196379f, 19.7439f, 1}};
  for (const auto& x : want) {
    const auto& s = g.slots()[x.slot];
    EXPECT_NEAR(s.w, x.w, 1e-5 * std::fabs(x.w));
    EXPECT_NEAR(s.g, x.g, 1e-5 * x.g);
    EXPECT_EQ(s.n, x.n);
  }
  EXPECT_NEAR(g.normalizer(), 10.75, 1e-9);
}

TEST(Gd, FirstDefaultStepByHand) {
  // Example 1 of (c.9): g2 = 4, ppu = 1.999512 * mult 0.5, u = (1 - e^-ppu)/ppu * mult.
  SquaredLoss loss;
  GdLearner g(GdOptions::from(sgd_defaults()), loss, 18, false);
  FeatureSpace space(FeatureSpaceOptions{});
  NoWarnings w;
  Example ex;
  parse_vw_line(kT3[0], ParseOptions{}, ex, w);
  space.expand(ex);
  g.learn(ex);
  const auto& a = g.slots()[slot("a")];
  EXPECT_EQ(a.g, 4.0f);
  EXPECT_EQ(g.slots()[slot("b")].g, 16.0f);
  EXPECT_EQ(g.slots()[slot("b")].n, 2.0f);
  EXPECT_NEAR(a.w, 0.158008f, 1e-6);  // exact 1/sqrt would give 0.158030
}

// As VW: an example of weight 0 teaches nothing (the conformance suite), but its label widens the clipping
// range.
TEST(Gd, WeightZeroWidensTheLabelRange) {
  SquaredLoss loss;
  GdLearner g(GdOptions::from(sgd_defaults()), loss, 18, false);
  FeatureSpace space(FeatureSpaceOptions{});
  NoWarnings w;
  Example ex;
  parse_vw_line("5 0 |f a", ParseOptions{}, ex, w);
  space.expand(ex);
  g.learn(ex);
  EXPECT_EQ(g.label_range().hi, 5.0f);
}

// Save/load and resumed training in every update mode are the conformance suite's (with its default -l, l1,
// l2); here the model also carries --l1/--l2's gravity and contraction, and its update mode and rates win
// over the options of the learner it is loaded into (built with the defaults): it continues bit for bit.
TEST(Gd, LoadedModelKeepsItsModeAndRegularization) {
  SquaredLoss loss;
  const char* more[] = {"2 |f a:3 e", "-3 0.5 |f b c:2", "1 |f d e:-1", "0.5 2 0.1 |f a d"};
  auto state = [](const GdLearner& l) {
    ModelWriter out;
    l.save(out);
    return out.bytes();
  };
  for (const char* mode : {"", "sgd", "adaptive", "normalized", "invariant"}) {
    OptionValues v = sgd_defaults();
    if (*mode) v.set(mode, "1", true);
    v.set("l1", "1e-4", true);
    v.set("l2", "1e-3", true);
    GdLearner g(GdOptions::from(v), loss, 12, false);
    run_t3(g, loss);
    const auto bytes = state(g);
    GdLearner h(GdOptions::from(sgd_defaults()), loss, 12, false);  // options come from the saved state
    ModelReader in(bytes.data(), bytes.size(), "mem");
    h.load(in);
    FeatureSpace space(FeatureSpaceOptions{});
    NoWarnings w;
    Example ex;
    for (const char* line : more) {
      parse_vw_line(line, ParseOptions{}, ex, w);
      space.expand(ex);
      const Prediction a = g.learn(ex), b = h.learn(ex);
      ASSERT_EQ(a.raw, b.raw) << mode << " " << line;
      ASSERT_EQ(a.value, b.value) << mode << " " << line;
    }
    EXPECT_EQ(state(g), state(h)) << mode;
  }
}

// Long examples (1,024 features or more) sum their terms in eight lanes unless --vw_exact: the predictions move in
// the last bits only; shorter examples are VW's order either way, to the bit.
TEST(Gd, LongExamplesSumInLanesUnlessVwExact) {
  LogisticLoss loss(-1.0f, 1.0f);
  OptionValues exact_options = sgd_defaults();
  exact_options.set("vw_exact", "1", true);
  for (size_t n : {size_t{300}, size_t{1023}, size_t{1024}, size_t{3001}}) {
    GdLearner lanes(GdOptions::from(sgd_defaults()), loss, 18, false);
    GdLearner exact(GdOptions::from(exact_options), loss, 18, false);
    std::mt19937_64 rng(n);
    size_t differ = 0;
    double worst = 0.0;
    for (int e = 0; e < 60; ++e) {
      Example ex;
      ex.labeled = true;
      ex.label = e % 3 == 0 ? 1.0f : -1.0f;
      for (size_t k = 0; k < n; ++k)
        ex.features.push_back(Feature{rng() % 20000, std::uniform_real_distribution<float>(0.0f, 0.3f)(rng)});
      const float a = lanes.learn(ex).value, b = exact.learn(ex).value;
      differ += std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(b);
      worst = std::max(worst, std::fabs(static_cast<double>(a) - b));
    }
    if (n < gd_kernel::kLaneMin) {
      EXPECT_EQ(differ, 0u) << n << " features";
    } else {
      EXPECT_GT(differ, 0u) << n << " features";
      EXPECT_LT(worst, 1e-4) << n << " features";
    }
  }
}

}  // namespace
}  // namespace lepus

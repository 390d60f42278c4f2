// scinol-full --matrix sketch, default variant (scinol2: Σ~ = diag(M²) + Δ I + BᵀB, B the sketch of the rows
// g x): while the data's rank is at most m every prediction equals the full mode's; per-feature rescaling
// changes nothing after shrinks; a saved model resumes exactly as one run.
//
// Published variant (Frequent Directions plus its cumulative shrinkage ridge, W. Kotłowski, ALT 2017,
// Algorithm 2 on the surrogate S~ = BᵀB + Δ I): while the data's rank is at most m nothing is shrunk away and
// every prediction equals the full mode's (relative 1e-7 through many rank-m shrinks, rank-deficient starts
// and a feature 10^4 times another's scale); an example with a never-seen feature is predicted 0 exactly;
// with m below the data's rank the shrinkage mass grows, predictions stay finite, are unchanged by
// per-feature rescaling (the first-seen scales absorb it) and learn a linear concept; and the mode refuses
// full-mode state.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "learners/scinol_full.h"
#include "learners/scinol_sketch.h"
#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

const LogisticLoss kLogistic(-1.0f, 1.0f);

ScinolFullOptions published() {
  ScinolFullOptions o;
  o.variant = ScinolFullVariant::kPublished;
  return o;
}

Example example(const std::vector<double>& x, float y) {
  Example ex;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != 0.0) ex.features.push_back(Feature{i, static_cast<float>(x[i])});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  return ex;
}

// Rows of rank `rank` in d features (a fixed random basis, its directions entering one by one over the first
// rows: a rank-deficient start), one feature's column scaled by 1e4; labels from a noisy linear rule.
std::vector<Example> stream(int n, int d, int rank, uint64_t seed, double column_scale = 1e4) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> basis(rank, std::vector<double>(d));
  for (auto& b : basis)
    for (double& v : b) v = normal(rng);
  std::vector<Example> out;
  for (int t = 0; t < n; ++t) {
    std::vector<double> x(d, 0.0);
    for (int k = 0; k < std::min(rank, 1 + t / 5); ++k) {
      const double c = normal(rng);
      for (int i = 0; i < d; ++i) x[i] += c * basis[k][i];
    }
    x[0] *= column_scale;
    const double s = x[1] - 0.5 * x[2] + 0.3 * normal(rng);
    out.push_back(example(x, s > 0 ? 1.0f : -1.0f));
  }
  return out;
}

TEST(ScinolSketch, EqualsTheFullModeWhileTheRankIsAtMostM) {
  for (const auto& [rank, m] : {std::pair{3, 3u}, std::pair{4, 6u}, std::pair{1, 2u}}) {
    ScinolFullLearner full(published(), kLogistic, 10);
    ScinolSketchLearner sketch(published(), m, kLogistic, 10);
    int zeros = 0;
    for (const Example& ex : stream(400, 7, rank, 10 + rank)) {
      full.learn(ex);
      sketch.learn(ex);
      const double want = full.last().yhat;
      ASSERT_NEAR(sketch.last().yhat, want, 1e-7 * std::max(1.0, std::fabs(want))) << rank << " " << m;
      ASSERT_EQ(sketch.last().new_direction, full.last().new_direction);
      zeros += sketch.last().new_direction;
    }
    EXPECT_EQ(sketch.shrinkage(), 0.0);
    EXPECT_EQ(zeros, rank);  // each new direction (round 1: every feature new) was predicted 0
    EXPECT_NEAR(sketch.gamma(), full.gamma(), 1e-7 * full.gamma());
  }
}

TEST(ScinolSketch, ANeverSeenFeatureIsPredictedZeroExactly) {
  ScinolSketchLearner l(published(), 2, kLogistic, 10);
  for (const Example& ex : stream(200, 8, 8, 21, 1.0)) l.learn(ex);
  ASSERT_GT(l.shrinkage(), 0.0);
  Example fresh = example({0.5, -1.0, 0, 0, 0, 0, 0, 0, 0, 2.0}, 1.0f);  // feature 9 never seen
  EXPECT_EQ(l.predict(fresh).raw, 0.0f);
  l.learn(fresh);
  EXPECT_TRUE(l.last().new_direction);
  EXPECT_EQ(l.last().yhat, 0.0);
}

TEST(ScinolSketch, BelowTheRankItShrinksStaysFiniteAndLearns) {
  ScinolSketchLearner l(published(), 3, kLogistic, 12);
  std::mt19937_64 rng(31);
  std::normal_distribution<double> normal;
  double loss = 0.0;
  const int n = 4000, d = 40;
  for (int t = 0; t < n; ++t) {
    std::vector<double> x(d);  // ±1 features: the isotropic ridge Δ I then matches the features' own units
    for (double& v : x) v = normal(rng) > 0.0 ? 1.0 : -1.0;
    const float y = x[0] + x[1] - x[2] + 0.5 * normal(rng) > 0 ? 1.0f : -1.0f;
    const double p = l.learn(example(x, y)).raw;
    ASSERT_TRUE(std::isfinite(l.last().yhat)) << t;
    loss += std::log1p(std::exp(-y * p));
  }
  EXPECT_GT(l.shrinkage(), 0.0);
  EXPECT_LT(loss / n, 0.5);  // ln 2 = 0.693 is learning nothing
  EXPECT_EQ(l.safeguard_count(), 0u);
}

TEST(ScinolSketch, PredictionsUnchangedByPerFeatureRescalingAfterShrinks) {
  const std::vector<double> a = {1e-3, 7.0, 1e3, 0.2, 50.0, 1.0, 3e-2, 9e2};
  ScinolSketchLearner plain(published(), 2, kLogistic, 10), scaled(published(), 2, kLogistic, 10);
  for (const Example& ex : stream(600, 8, 8, 41, 1.0)) {
    Example s = ex;
    for (Feature& f : s.features) f.value = static_cast<float>(f.value * a[f.index]);
    plain.learn(ex);
    scaled.learn(s);
    ASSERT_NEAR(scaled.last().yhat, plain.last().yhat, 1e-5 * std::max(1.0, std::fabs(plain.last().yhat)));
  }
  EXPECT_GT(plain.shrinkage(), 0.0);
}

TEST(ScinolSketch, RefusesFullModeStateAndAnotherRank) {
  ScinolFullLearner full(published(), kLogistic, 10);
  ScinolSketchLearner sketch(published(), 4, kLogistic, 10);
  for (const Example& ex : stream(30, 5, 5, 51)) {
    full.learn(ex);
    sketch.learn(ex);
  }
  ModelWriter wf, ws;
  full.save(wf);
  sketch.save(ws);
  ScinolSketchLearner other_sketch(published(), 4, kLogistic, 10);
  ModelReader rf(wf.bytes().data(), wf.bytes().size(), "test");
  EXPECT_THROW(other_sketch.load(rf), ModelFormatError);
  ScinolFullLearner other_full(published(), kLogistic, 10);
  ModelReader rs(ws.bytes().data(), ws.bytes().size(), "test");
  EXPECT_THROW(other_full.load(rs), ModelFormatError);
  ScinolSketchLearner rank5(published(), 5, kLogistic, 10);
  ModelReader r5(ws.bytes().data(), ws.bytes().size(), "test");
  EXPECT_THROW(rank5.load(r5), ModelFormatError);
}

// A state of the first layout (0x5C01: the published algorithm's, without the variant, ε and wealth after -b)
// still loads, as the published variant, and predicts as the state it was cut from.
TEST(ScinolSketch, AStateOfTheFirstLayoutLoadsAsThePublishedVariant) {
  ScinolSketchLearner sketch(published(), 4, kLogistic, 10);
  const auto data = stream(30, 5, 5, 52);
  for (const Example& ex : data) sketch.learn(ex);
  ModelWriter w;
  sketch.save(w);
  std::vector<uint8_t> v1 = w.bytes();
  const uint32_t tag = 0x5C01;
  std::memcpy(v1.data(), &tag, 4);
  v1.erase(v1.begin() + 8, v1.begin() + 8 + 4 + 8 + 8);  // version (4), bits (4), then variant, ε, wealth
  ScinolFullOptions scinol2;  // this run's variant: the state's (published) replaces it
  ScinolSketchLearner back(scinol2, 4, kLogistic, 10);
  ModelReader r(v1.data(), v1.size(), "test");
  back.load(r);
  EXPECT_EQ(r.remaining(), 0u);
  for (const Example& ex : stream(10, 5, 5, 53)) EXPECT_EQ(back.predict(ex).value, sketch.predict(ex).value);
  ModelWriter again;
  back.save(again);
  EXPECT_EQ(again.bytes(), w.bytes());
}

// ---- the scinol2 variant (the default) ----

TEST(ScinolSketchScinol2, EqualsTheFullModeWhileTheRankIsAtMostM) {
  for (const auto& [rank, m] : {std::pair{3, 3u}, std::pair{4, 6u}, std::pair{1, 2u}}) {
    ScinolFullLearner full(ScinolFullOptions{}, kLogistic, 10);
    ScinolSketchLearner sketch(ScinolFullOptions{}, m, kLogistic, 10);
    for (const Example& ex : stream(400, 7, rank, 10 + rank)) {
      full.learn(ex);
      sketch.learn(ex);
      const double want = full.last().yhat;
      ASSERT_NEAR(sketch.last().yhat, want, 1e-7 * std::max(1.0, std::fabs(want))) << rank << " " << m;
    }
    EXPECT_EQ(sketch.shrinkage(), 0.0);
    EXPECT_NEAR(sketch.wealth(), full.wealth(), 1e-7 * full.wealth());
  }
}

TEST(ScinolSketchScinol2, PredictionsUnchangedByPerFeatureRescalingAfterShrinks) {
  const std::vector<double> a = {1e-3, -7.0, 1e3, 0.2, 50.0, 1.0, -3e-2, 9e2};
  ScinolSketchLearner plain(ScinolFullOptions{}, 2, kLogistic, 10),
      scaled(ScinolFullOptions{}, 2, kLogistic, 10);
  for (const Example& ex : stream(600, 8, 8, 41, 1.0)) {
    Example s = ex;
    for (Feature& f : s.features) f.value = static_cast<float>(f.value * a[f.index]);
    plain.learn(ex);
    scaled.learn(s);
    ASSERT_NEAR(scaled.last().yhat, plain.last().yhat, 1e-5 * std::max(1.0, std::fabs(plain.last().yhat)));
  }
  EXPECT_GT(plain.shrinkage(), 0.0);
}

TEST(ScinolSketchScinol2, BelowTheRankItShrinksStaysFiniteAndLearns) {
  ScinolSketchLearner l(ScinolFullOptions{}, 10, kLogistic, 12);
  std::mt19937_64 rng(31);
  std::normal_distribution<double> normal;
  double loss = 0.0;
  const int n = 4000, d = 40;
  for (int t = 0; t < n; ++t) {
    std::vector<double> x(d);
    for (double& v : x) v = normal(rng) * (1 + t % 7);
    const float y = x[0] + x[1] - x[2] + 0.5 * normal(rng) > 0 ? 1.0f : -1.0f;
    const double p = l.learn(example(x, y)).raw;
    ASSERT_TRUE(std::isfinite(l.last().yhat)) << t;
    loss += std::log1p(std::exp(-y * p));
  }
  EXPECT_GT(l.shrinkage(), 0.0);
  // ln 2 = 0.693 is learning nothing. Rank 10 of 40 isotropic features is far from the full mode (0.16 on
  // these rows): the shrinkage ridge Δ soon outweighs diag(M²); measured 0.585.
  EXPECT_LT(loss / n, 0.62);
  EXPECT_EQ(l.safeguard_count(), 0u);
}

TEST(ScinolSketchScinol2, ResumeEqualsOneRun) {
  const std::vector<Example> es = stream(500, 9, 9, 61, 1.0);
  ScinolSketchLearner one(ScinolFullOptions{}, 3, kLogistic, 10),
      first(ScinolFullOptions{}, 3, kLogistic, 10);
  std::vector<float> want;
  for (const Example& e : es) want.push_back(one.learn(e).raw);
  for (size_t t = 0; t < 250; ++t) ASSERT_EQ(first.learn(es[t]).raw, want[t]);
  ASSERT_GT(first.shrinkage(), 0.0);
  ModelWriter w;
  first.save(w);
  ScinolSketchLearner resumed(ScinolFullOptions{}, 3, kLogistic, 10);
  ModelReader r(w.bytes().data(), w.bytes().size(), "test");
  resumed.load(r);
  for (size_t t = 250; t < es.size(); ++t) {
    ASSERT_EQ(resumed.predict(es[t]).raw, want[t]) << t;
    ASSERT_EQ(resumed.learn(es[t]).raw, want[t]) << t;
  }
  EXPECT_EQ(resumed.wealth(), one.wealth());
}

}  // namespace
}  // namespace lepus

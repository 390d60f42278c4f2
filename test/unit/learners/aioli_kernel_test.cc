// aioli-kernel (non-parametric AIOLI, Jézéquel, Gaillard, Rudi, COLT 2020, §4.1) against a hand-computed oracle
// (double precision, relative 1e-5: the Gaussian kernel exp(-(x - x')²/2), λ = 1, B = R = 1, O-A3) and its
// properties: with the linear kernel it is the primal learner (src/learners/aioli.h, full matrix) round by round,
// with (1 + xx')² in 1-D it is the primal learner on the feature map (1, √2x, x²); --budget with landmarks spanning
// the data is the exact learner and never keeps more than B landmarks; a saved model loads to the same bytes and
// predicts and resumes exactly; an overflowing round is skipped and counted.
#include "learners/aioli_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "labeled_example.h"
#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

const LogisticLoss kLoss(-1.0f, 1.0f);

using testing::example;

// A 1-D point at slot 0 (0 is the empty vector, as the kernel sees it).
Example point1(double x, float y) { return x == 0.0 ? example({}, y) : example({{0, x}}, y); }

AioliKernelOptions options(kernels::KernelKind kind, double b, std::optional<double> lambda,
                           std::optional<double> r, uint64_t budget = 0) {
  AioliKernelOptions o;
  o.kernel.kind = kind;
  o.kernel.bandwidth = kind == kernels::KernelKind::kRbf ? 1.0 : 0.0;
  o.kernel.degree = 2;
  o.kernel.coef0 = 1.0;
  o.radius = b;
  o.lambda = lambda;
  o.r = r;
  o.budget = budget;
  return o;
}

std::string sci(double v) {
  std::ostringstream s;
  s.precision(3);
  s << v;
  return s.str();
}

double logistic(double z, double y) { return std::log1p(std::exp(-y * z)); }

// Relative 1e-5, or half a unit of the oracle's sixth printed decimal for small values.
void expect_rel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + 5e-7) << what;
}

std::vector<uint8_t> bytes_of(const Learner& l) {
  ModelWriter w;
  l.save(w);
  return w.bytes();
}

void load_bytes(Learner& l, const std::vector<uint8_t>& bytes) {
  ModelReader r(bytes.data(), bytes.size(), "mem");
  l.load(r);
  ASSERT_EQ(r.remaining(), 0u);
}

// O-A3: Gaussian K = exp(-(x - x')²/2) (bandwidth 1), λ = 1, B = R = 1; x = 0, 0, 1, 0.5, -1.
TEST(AioliKernel, OracleOA3) {
  AioliKernelLearner l(options(kernels::KernelKind::kRbf, 1, 1, 1), kLoss, 4);
  const double x[] = {0, 0, 1, 0.5, -1};
  const float y[] = {1, 1, -1, 1, -1};
  const double s[] = {1, 0.941176, 0.959289, 0.874273, 0.954751};
  const double c[] = {0, 0.235294, 0.263260, 0.165740, 0.295480};
  const double yhat[] = {0, 0.190586, 0.212491, 0.136050, 0.238760};
  const double kappa[] = {0.0625, 0.061936, 0.061800, 0.062212, 0.061618};
  const double beta[] = {0.25, 0.238053, -0.263330, 0.241484, -0.264992};
  const double loss[] = {0.693147, 0.602388, 0.805026, 0.627434, 0.819636};
  const double cum[] = {0.693147, 1.295535, 2.100561, 2.727995, 3.547631};
  double total = 0.0, worst = 0.0;  // the largest relative difference from the oracle's columns
  for (int t = 0; t < 5; ++t) {
    const std::string at = "round " + std::to_string(t + 1);
    const Prediction p = l.learn(point1(x[t], y[t]));
    const AioliKernelLearner::Round& r = l.last_round();
    for (const auto& [got, want] : std::vector<std::pair<double, double>>{
             {r.s, s[t]}, {r.c, c[t]}, {r.yhat, yhat[t]}, {r.kappa, kappa[t]}, {r.beta, beta[t]}})
      if (want != 0.0) worst = std::max(worst, std::fabs(got - want) / std::fabs(want));
    expect_rel(r.s, s[t], at + " s");
    expect_rel(r.c, c[t], at + " c");
    expect_rel(r.yhat, yhat[t], at + " yhat");
    expect_rel(r.kappa, kappa[t], at + " kappa");
    expect_rel(r.beta, beta[t], at + " beta");
    EXPECT_NEAR(p.raw, r.yhat, 1e-7) << at;
    expect_rel(logistic(p.raw, y[t]), loss[t], at + " loss");
    total += logistic(p.raw, y[t]);
    expect_rel(total, cum[t], at + " cumulative loss");
  }
  EXPECT_EQ(l.stored_points(), 5u);
  EXPECT_EQ(l.r(), 1.0);
  RecordProperty("max_relative_difference", sci(worst));
}

// Random sparse data over 8 slots: 1 to 4 features per example, labels from a hidden linear rule with 20% noise,
// every 5th example of importance weight 2.5.
std::vector<Example> sparse_stream(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_int_distribution<int> count(1, 4), slot(0, 7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double w[] = {1.0, -0.5, 0.8, 0.0, -1.2, 0.3, 0.6, -0.9};
  std::vector<Example> out;
  for (int t = 0; t < n; ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    double z = 0.0;
    const int k = count(rng);
    for (int j = 0; j < k; ++j) {
      const int s = slot(rng);
      bool dup = false;
      for (const auto& [i, v] : f) dup = dup || i == static_cast<uint64_t>(s);
      if (dup) continue;
      const double v = static_cast<float>(0.8 * g(rng));
      f.push_back({static_cast<uint64_t>(s), v});
      z += w[s] * v;
    }
    const float y = (z > 0) != (u(rng) < 0.2) ? 1.0f : -1.0f;
    out.push_back(example(f, y, t % 5 == 4 ? 2.5f : 1.0f));
  }
  return out;
}

// With the linear kernel, aioli-kernel is primal aioli with the full matrix: s, c and ŷ of every round, and the
// default R (the largest ‖x‖ learned from).
TEST(AioliKernel, LinearKernelIsPrimalAioli) {
  AioliKernelLearner k(options(kernels::KernelKind::kLinear, 2.0, 0.5, std::nullopt), kLoss, 6);
  AioliOptions po;
  po.radius = 2.0;
  po.lambda = 0.5;
  po.matrix = MatrixKind::kFull;
  po.scale = false;  // aioli-kernel feeds its kernel features as they are: the published algorithm
  AioliLearner p(po, kLoss, 6);
  const std::vector<Example> data = sparse_stream(80, 21);
  double worst = 0.0;
  for (size_t t = 0; t < data.size(); ++t) {
    const AioliLearner::Round want = p.evaluate(data[t]);
    const Prediction pp = p.learn(data[t]);
    const Prediction kp = k.learn(data[t]);
    const AioliKernelLearner::Round& got = k.last_round();
    ASSERT_NEAR(got.s, want.s, 1e-9 * std::max(1.0, want.s)) << t;
    ASSERT_NEAR(got.c, want.c, 1e-9 * std::max(1.0, std::fabs(want.c))) << t;
    ASSERT_NEAR(got.yhat, want.yhat, 1e-9 * std::max(1.0, std::fabs(want.yhat))) << t;
    ASSERT_EQ(kp.raw, pp.raw) << t;
    ASSERT_NEAR(k.r(), p.r(), 1e-12 * p.r()) << t;
    worst = std::max(worst, std::fabs(got.yhat - want.yhat));
  }
  EXPECT_GT(std::fabs(k.last_round().yhat), 0.1);  // the run has moved away from 0
  RecordProperty("max_abs_yhat_difference", sci(worst));
}

// (1 + xx')² in 1-D is the linear kernel of φ(x) = (1, √2x, x²): aioli-kernel equals primal aioli fed φ in double
// precision (learn_vector), including the default R, √ of the largest (1 + x²)².
TEST(AioliKernel, PolynomialKernelIsPrimalAioliOnItsFeatureMap) {
  AioliKernelLearner k(options(kernels::KernelKind::kPolynomial, 1.0, std::nullopt, std::nullopt), kLoss, 4);
  AioliOptions po;
  po.radius = 1.0;
  po.matrix = MatrixKind::kFull;
  po.scale = false;  // aioli-kernel feeds its kernel features as they are: the published algorithm
  AioliLearner p(po, kLoss, 4);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  double r_max = 0.0, worst = 0.0;
  for (int t = 0; t < 60; ++t) {
    const double x = t == 3 ? 0.0 : static_cast<float>(g(rng));
    const float y = (x * x > 0.8) != (t % 7 == 0) ? 1.0f : -1.0f;  // a non-linear rule, some noise
    std::vector<Coord> phi = {{0, 1.0}};
    if (x != 0.0)
      phi.insert(phi.end(), {{1, std::sqrt(2.0) * x}, {2, x * x}});  // a vector's values are nonzero
    const SparseVector v{phi.data(), phi.size(), 0};
    const double want = p.learn_vector(v, y, 1.0, 0.0, std::sqrt(v.norm2()));
    k.learn(point1(x, y));
    ASSERT_NEAR(k.last_round().yhat, want, 1e-9 * std::max(1.0, std::fabs(want))) << t;
    worst = std::max(worst, std::fabs(k.last_round().yhat - want));
    r_max = std::max(r_max, 1.0 + x * x);
  }
  EXPECT_NEAR(k.r(), r_max, 1e-12 * r_max);
  EXPECT_GT(std::fabs(k.last_round().yhat), 0.1);
  RecordProperty("max_abs_yhat_difference", sci(worst));
}

// --budget with landmarks spanning the data, each example offered before it is learned from: every round equals
// the exact learner. Linear kernel in 3-D with the axes first (budget 3), and the Gaussian kernel on 4 distinct
// points repeated in random order (budget 10: the 4 are kept, a repeat adds nothing to the span).
TEST(AioliKernel, BudgetSpanningTheDataIsExact) {
  std::mt19937_64 rng(8);
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, 3);
  {
    SCOPED_TRACE("linear");
    AioliKernelLearner exact(options(kernels::KernelKind::kLinear, 1.0, 0.7, std::nullopt), kLoss, 6);
    AioliKernelLearner budget(options(kernels::KernelKind::kLinear, 1.0, 0.7, std::nullopt, 3), kLoss, 6,
                              false, 2);
    std::vector<Example> data = {example({{0, 1.0}}, 1), example({{1, 1.0}}, -1), example({{2, 1.0}}, 1)};
    for (int t = 0; t < 60; ++t)
      data.push_back(example({{0, 0.7 * g(rng)}, {1, 0.7 * g(rng)}, {2, 0.7 * g(rng)}}, g(rng) > 0 ? 1 : -1,
                             t % 6 == 5 ? 3.0f : 1.0f));
    for (size_t t = 0; t < data.size(); ++t) {
      const Prediction a = exact.learn(data[t]), b = budget.learn(data[t]);
      ASSERT_NEAR(budget.last_round().yhat, exact.last_round().yhat, 1e-9) << t;
      ASSERT_EQ(a.raw, b.raw) << t;
    }
    EXPECT_EQ(budget.landmarks(), 3u);
    EXPECT_GT(std::fabs(exact.last_round().yhat), 0.05);
  }
  {
    SCOPED_TRACE("rbf");
    AioliKernelLearner exact(options(kernels::KernelKind::kRbf, 1.0, std::nullopt, std::nullopt), kLoss, 6);
    AioliKernelLearner budget(options(kernels::KernelKind::kRbf, 1.0, std::nullopt, std::nullopt, 10), kLoss,
                              6, false, 3);
    const double xs[] = {-2.0, -0.7, 0.6, 1.9};
    const float ys[] = {1, -1, -1, 1};
    for (int t = 0; t < 80; ++t) {
      const int i = t < 4 ? t : pick(rng);
      const Example ex = point1(xs[i], t % 9 == 8 ? -ys[i] : ys[i]);
      exact.learn(ex);
      budget.learn(ex);
      ASSERT_NEAR(budget.last_round().yhat, exact.last_round().yhat, 1e-9) << t;
    }
    EXPECT_EQ(budget.landmarks(), 4u);
    EXPECT_EQ(exact.stored_points(), 80u);
    EXPECT_GT(std::fabs(exact.last_round().yhat), 0.5);
  }
}

// The budget caps the landmarks: 400 spread 2-D points, Gaussian kernel of bandwidth 0.3, budget 20.
TEST(AioliKernel, BudgetKeepsAtMostBLandmarks) {
  AioliKernelOptions o = options(kernels::KernelKind::kRbf, 1.0, std::nullopt, std::nullopt, 20);
  o.kernel.bandwidth = 0.3;
  AioliKernelLearner l(o, kLoss, 8, false, 1);
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (int t = 0; t < 400; ++t) {
    const double a = u(rng), b = u(rng);
    l.learn(example({{0, a}, {1, b}}, a * b > 0 ? 1 : -1));
    ASSERT_LE(l.landmarks(), 20u) << t;
  }
  EXPECT_EQ(l.landmarks(), 20u);  // filled: the points are far apart at this bandwidth
  EXPECT_EQ(l.stored_points(), 0u);
  std::ostringstream text;
  l.write_readable(text);
  EXPECT_NE(text.str().find("landmarks 20\n"), std::string::npos);
}

// Save -> load gives the same bytes; the loaded learner (and a -t one) predicts what the trained one does, and
// training resumed from it equals training uninterrupted. Exact and --budget, RBF with the bandwidth of the
// median heuristic (saved with the model).
TEST(AioliKernel, SaveLoadRoundTripIsExact) {
  for (const uint64_t budget : {uint64_t{0}, uint64_t{15}}) {
    SCOPED_TRACE(budget == 0 ? "exact" : "budget");
    AioliKernelOptions o = options(kernels::KernelKind::kRbf, 1.5, std::nullopt, std::nullopt, budget);
    o.kernel.bandwidth = 0.0;  // the median heuristic
    const std::vector<Example> data = sparse_stream(120, 33);
    AioliKernelLearner trained(o, kLoss, 6, false, 9);
    ASSERT_EQ(trained.warmup_wanted(), common::kKernelWarmup);
    trained.warmup(std::span<const Example>(data.data(), 40));
    ASSERT_EQ(trained.warmup_wanted(), 0u);
    for (int t = 0; t < 60; ++t) trained.learn(data[t]);
    const std::vector<uint8_t> saved = bytes_of(trained);
    AioliKernelLearner loaded(o, kLoss, 6, false, 9), tested(o, kLoss, 6, true, 9);
    load_bytes(loaded, saved);
    load_bytes(tested, saved);
    EXPECT_EQ(bytes_of(loaded), saved);
    EXPECT_EQ(loaded.kernel().text(), trained.kernel().text());
    EXPECT_NE(trained.kernel().text().find("median heuristic"), std::string::npos);
    for (int t = 60; t < 80; ++t) {
      const Prediction a = trained.predict(data[t]);
      EXPECT_EQ(loaded.predict(data[t]).raw, a.raw) << t;
      EXPECT_EQ(tested.predict(data[t]).raw, a.raw) << t;
    }
    for (int t = 60; t < 120; ++t) ASSERT_EQ(loaded.learn(data[t]).raw, trained.learn(data[t]).raw) << t;
    EXPECT_EQ(bytes_of(loaded), bytes_of(trained));
    // A model of another budget is refused.
    AioliKernelLearner other(options(kernels::KernelKind::kRbf, 1.5, std::nullopt, std::nullopt, budget + 5),
                             kLoss, 6);
    ModelReader r(saved.data(), saved.size(), "mem");
    EXPECT_THROW(other.load(r), ModelFormatError);
  }
}

// A round whose numbers overflow (polynomial kernel, K(x, x) = (1 + 1e60)² > 1e100) is skipped and counted; the
// learner goes on as if it had not been seen.
TEST(AioliKernel, OverflowingRoundIsSkippedAndCounted) {
  AioliKernelLearner l(options(kernels::KernelKind::kPolynomial, 1.0, std::nullopt, std::nullopt), kLoss, 4);
  AioliKernelLearner clean(options(kernels::KernelKind::kPolynomial, 1.0, std::nullopt, std::nullopt), kLoss,
                           4);
  l.learn(point1(0.5, 1));
  clean.learn(point1(0.5, 1));
  EXPECT_EQ(l.safeguard_count(), 0u);
  const Prediction p = l.learn(point1(1e30, -1));
  EXPECT_TRUE(std::isfinite(p.raw));
  EXPECT_EQ(l.safeguard_count(), 1u);
  EXPECT_EQ(l.stored_points(), 1u);
  EXPECT_EQ(l.r(), 1.25);  // R from the rounds learned only
  l.learn(point1(-0.3, -1));
  clean.learn(point1(-0.3, -1));
  EXPECT_EQ(l.last_round().yhat, clean.last_round().yhat);
}

TEST(AioliKernel, OptionsAreChecked) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{{"aioli_B", "0"},
                                                                                    {"aioli_lambda", "-1"},
                                                                                    {"aioli_R", "0"},
                                                                                    {"kernel", "sigmoid"},
                                                                                    {"degree", "1.5"},
                                                                                    {"budget", "2.5"},
                                                                                    {"budget", "70000"}}) {
    OptionValues v;
    v.set(name, value, true);
    EXPECT_THROW(AioliKernelOptions::from(v), ConfigError) << name << " " << value;
  }
  OptionValues ok;
  ok.set("budget", "100", true);
  ok.set("aioli_B", "2", true);
  const AioliKernelOptions o = AioliKernelOptions::from(ok);
  EXPECT_EQ(o.budget, 100u);
  EXPECT_EQ(o.ridge(), 0.25);
  const LearnerRow* row = find_learner("aioli-kernel");
  ASSERT_NE(row, nullptr);
  EXPECT_FALSE(row->accepts_loss("squared"));
  EXPECT_TRUE(row->accepts_loss("logistic"));
}

}  // namespace
}  // namespace lepus

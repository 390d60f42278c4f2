// kwemm and klaser: the worked kernel rounds of the min-max regression thesis's kernel forms (computed
// independently in double precision: kwemm with the Gaussian kernel, b = 2; klaser with b = 1, c = 4; both with the
// polynomial kernel (xx' + 1)²), the dual Theorem 4 identity L_t = b yᵀα, and the properties: with the linear kernel
// each equals its primal learner (src/learners/minmax.h) round by round; α = M⁻¹y and β = -M⁻¹/b for kwemm
// (M = K + b diag(1/a)); under --budget with as many landmarks as the data's rank it equals the exact learner.
#include "learners/kminmax.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "lepus/errors.h"

namespace lepus {
namespace {

Example point1(double x, double y) {
  Example ex;
  if (x != 0.0) ex.features.push_back(Feature{0, static_cast<float>(x)});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = static_cast<float>(y);
  ex.labeled = true;
  return ex;
}

Example vec(const std::vector<double>& x, double y) {
  Example ex;
  for (size_t i = 0; i < x.size(); ++i) ex.features.push_back(Feature{i, static_cast<float>(x[i])});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = static_cast<float>(y);
  ex.labeled = true;
  return ex;
}

KernelMinmaxOptions options(bool laser, kernels::KernelKind kind, double b, double c = 0.0,
                            uint64_t budget = 0) {
  KernelMinmaxOptions o;
  o.rule = &minmax_rule(laser ? "laser" : "wemm");
  o.kernel.kind = kind;
  o.kernel.bandwidth = kind == kernels::KernelKind::kRbf ? 1.0 : 0.0;
  o.kernel.degree = 2;
  o.kernel.coef0 = 1.0;
  o.b = b;
  if (laser) o.c = c;
  o.budget = budget;
  return o;
}

TEST(KernelMinmax, KwemmGaussianRounds) {
  KernelMinmaxLearner l(options(false, kernels::KernelKind::kRbf, 2.0), 4);
  const double x[] = {0, 1, 0.5}, y[] = {1, 2, -1};
  const double yhat[] = {0, 0.303265, 0.962881}, m[] = {0.5, 0.408030, 0.210785},
               loss[] = {1, 3.878909, 7.731810};
  double total = 0.0;
  for (int t = 0; t < 3; ++t) {
    const double p = l.learn(point1(x[t], y[t])).value;
    EXPECT_NEAR(p, yhat[t], 1e-6) << t;
    EXPECT_NEAR(l.last_m(), m[t], 1e-6) << t;
    total += (y[t] - p) * (y[t] - p);
    Eigen::VectorXd ys(t + 1);
    for (int i = 0; i <= t; ++i) ys(i) = y[i];
    EXPECT_NEAR(total, loss[t], 1e-5) << t;
    EXPECT_NEAR(l.b() * ys.dot(l.alpha()), total, 1e-7 * total) << t;  // Theorem 4, dual form (ŷ as floats)
  }
  const Eigen::VectorXd a = l.alpha();
  EXPECT_NEAR(a(0), 0.584275, 1e-6);
  EXPECT_NEAR(a(1), 1.150095, 1e-6);
  EXPECT_NEAR(a(2), -0.981440, 1e-6);
  const Eigen::MatrixXd be = l.beta();
  EXPECT_NEAR(be(0, 0), -0.303271, 1e-6);
  EXPECT_NEAR(be(0, 1), 0.049069, 1e-6);
  EXPECT_NEAR(be(1, 2), 0.076858, 1e-6);
  EXPECT_NEAR(be(2, 2), -0.25, 1e-12);
}

TEST(KernelMinmax, KlaserGaussianRounds) {
  KernelMinmaxLearner l(options(true, kernels::KernelKind::kRbf, 1.0, 4.0), 4);
  const double x[] = {0, 1, 0.5}, y[] = {1, 2, -1};
  const double yhat[] = {0, 0.146784, 0.635959}, m[] = {1, 1.066060, 0.772737};
  for (int t = 0; t < 3; ++t) {
    EXPECT_NEAR(l.learn(point1(x[t], y[t])).value, yhat[t], 1e-6) << t;
    EXPECT_NEAR(l.last_m(), m[t], 1e-6) << t;
    if (t == 1) {
      EXPECT_NEAR(l.alpha()(0), 0.250946, 1e-6);
      EXPECT_NEAR(l.alpha()(1), 1.026552, 1e-6);
      EXPECT_NEAR(l.beta()(0, 1), 0.183480, 1e-6);
      EXPECT_NEAR(l.beta()(1, 1), -0.756270, 1e-6);
    }
  }
  EXPECT_NEAR(l.alpha()(2), -1.800087, 1e-6);
}

TEST(KernelMinmax, PolynomialRoundsAndTheGramInverse) {
  const double x[] = {0, 1, 0.5, -0.5}, y[] = {1, 2, -1, 0.5};
  KernelMinmaxLearner w(options(false, kernels::KernelKind::kPolynomial, 5.0), 4);
  KernelMinmaxLearner s(options(true, kernels::KernelKind::kPolynomial, 1.0, 3.0), 4);
  const double wy[] = {0, 0.2, 0.938, 0.085441}, wm[] = {0.2, 0.76, 0.1044, 0.267721};
  const double sy[] = {0, 0.085714, 0.562225, -0.022720}, sm[] = {1, 4.833333, 1.032738, 2.492820};
  std::vector<double> a;  // WEMM's weights a_t = 1/(1 - m_t)
  for (int t = 0; t < 4; ++t) {
    EXPECT_NEAR(w.learn(point1(x[t], y[t])).value, wy[t], 1e-6) << t;
    EXPECT_NEAR(w.last_m(), wm[t], 1e-6) << t;
    a.push_back(1.0 / (1.0 - w.last_m()));
    EXPECT_NEAR(s.learn(point1(x[t], y[t])).value, sy[t], 1e-6) << t;
    EXPECT_NEAR(s.last_m(), sm[t], 1e-6) << t;
  }
  // α = M⁻¹y and β = -M⁻¹/b, M = K + b diag(1/a).
  Eigen::MatrixXd M(4, 4);
  Eigen::VectorXd ys(4);
  for (int i = 0; i < 4; ++i) {
    ys(i) = y[i];
    for (int j = 0; j < 4; ++j) M(i, j) = (x[i] * x[j] + 1.0) * (x[i] * x[j] + 1.0);
    M(i, i) += 5.0 / a[i];
  }
  const Eigen::MatrixXd G = M.inverse();
  EXPECT_LT((w.alpha() - G * ys).norm(), 1e-9);
  EXPECT_LT((w.beta() + G / 5.0).norm(), 1e-9);
  EXPECT_NEAR(w.alpha()(0), 0.157989, 1e-6);
  EXPECT_NEAR(w.beta()(0, 3), 0.007597, 1e-6);
}

// With the linear kernel, each equals its primal learner (full matrix) on every round of a random stream.
TEST(KernelMinmax, LinearKernelIsThePrimalLearner) {
  for (const bool laser : {false, true}) {
    SCOPED_TRACE(laser ? "klaser" : "kwemm");
    const double b = laser ? 0.5 : 3.0, c = 20.0;
    KernelMinmaxLearner k(options(laser, kernels::KernelKind::kLinear, b, c), 6);
    MinmaxOptions po;
    po.rule = &minmax_rule(laser ? "laser" : "wemm");
    po.b = b;
    po.c = c;
    MinmaxLearner p(po, 6);
    std::mt19937_64 rng(9);
    std::normal_distribution<double> g(0.0, 1.0);
    for (int t = 0; t < 60; ++t) {
      std::vector<double> x(4);
      for (double& v : x) v = 0.45 * g(rng);
      const Example ex = vec(x, g(rng));
      const double a = k.learn(ex).value, q = p.learn(ex).value;
      ASSERT_NEAR(a, q, 1e-5 * std::max(1.0, std::fabs(q))) << t;
    }
  }
}

// --budget with landmarks spanning the data (linear kernel, 3 dimensions, budget 3): once the three landmarks are
// offered before each example is learned, every prediction is the exact learner's (both are rotation invariant:
// Σ_0 is isotropic).
TEST(KernelMinmax, BudgetSpanningTheDataIsExact) {
  for (const bool laser : {false, true}) {
    SCOPED_TRACE(laser ? "klaser" : "kwemm");
    KernelMinmaxLearner exact(options(laser, kernels::KernelKind::kLinear, laser ? 0.5 : 4.0, 20.0), 6);
    KernelMinmaxLearner budget(options(laser, kernels::KernelKind::kLinear, laser ? 0.5 : 4.0, 20.0, 3), 6,
                               1);
    std::mt19937_64 rng(4);
    std::normal_distribution<double> g(0.0, 1.0);
    // The first three examples are the axes: KORS keeps a point orthogonal to the dictionary with probability 1
    // when β τ̃ >= 1 (τ̃ = 1.5 q/(1 + q), q = 1 here).
    std::vector<Example> data = {vec({1, 0, 0}, 0.3), vec({0, 1, 0}, -0.2), vec({0, 0, 1}, 0.5)};
    for (int t = 0; t < 50; ++t) data.push_back(vec({0.5 * g(rng), 0.5 * g(rng), 0.5 * g(rng)}, g(rng)));
    for (size_t t = 0; t < data.size(); ++t) {
      const double a = exact.learn(data[t]).value, q = budget.learn(data[t]).value;
      ASSERT_NEAR(a, q, 1e-5 * std::max(1.0, std::fabs(a))) << t;
    }
  }
}

// The warm-up is asked for only when something is estimated from it: the RBF bandwidth, or b and c from κ̂.
TEST(KernelMinmax, WarmupOnlyWhenSomethingIsEstimated) {
  EXPECT_EQ(KernelMinmaxLearner(options(false, kernels::KernelKind::kLinear, 3.0), 4).warmup_wanted(), 0u);
  KernelMinmaxOptions scale = options(false, kernels::KernelKind::kLinear, 3.0);
  scale.b.reset();
  KernelMinmaxLearner by_scale(scale, 4);
  ASSERT_EQ(by_scale.warmup_wanted(), 256u);
  std::vector<Example> prefix = {point1(2.0, 1.0), point1(-3.0, 0.5)};
  by_scale.warmup(prefix);
  EXPECT_EQ(by_scale.b(), 2.0 * 9.0);  // 2 κ̂, κ̂ = the largest x² = 9
  EXPECT_EQ(by_scale.warmup_wanted(), 0u);
  KernelMinmaxOptions rbf = options(true, kernels::KernelKind::kRbf, 0.5, 20.0);
  rbf.kernel.bandwidth = 0.0;
  EXPECT_EQ(KernelMinmaxLearner(rbf, 4).warmup_wanted(), 256u);
}

TEST(KernelMinmax, RefusesBadOptions) {
  OptionValues v;
  v.set("mm_b", "4", true);
  v.set("mm_c", "2", true);
  EXPECT_THROW(KernelMinmaxOptions::from(minmax_rule("laser"), v), ConfigError);
  OptionValues k;
  k.set("kernel", "sigmoid", true);
  EXPECT_THROW(KernelMinmaxOptions::from(minmax_rule("wemm"), k), ConfigError);
}

}  // namespace
}  // namespace lepus

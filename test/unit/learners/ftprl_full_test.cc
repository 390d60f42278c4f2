// ftprl-full (McMahan & Streeter, "Adaptive Bound Optimization for Online Convex Optimization", COLT 2010):
// the master step against the hand-computed oracle of FTPRL-Scale with a non-diagonal A (which is FTPRL with
// Q_t = alpha_t A^2, Section 3.4), the one-feature case against FTPRL-Diag's oracle (Algorithm 1, corrected
// sign), and the full-matrix schedule checked by its argmin (eq. (5) minimised by brute force over the ball)
// and by Theorem 2's a-posteriori regret bound on every run; iterates stay in the ball.
#include "learners/ftprl_full.h"

#include <gtest/gtest.h>
#include "long_run.h"

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <vector>

#include "lepus/errors.h"
#include "losses/losses.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

const SquaredLoss kSquared;
const LogisticLoss kLogistic(-1.0f, 1.0f);

Example example(const std::vector<double>& x, float y = 0.0f) {
  Example ex;
  for (size_t i = 0; i < x.size(); ++i) ex.features.push_back(Feature{i, static_cast<float>(x[i])});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  ex.weight = 1.0f;
  return ex;
}

FtprlFullOptions opts(double r) {
  FtprlFullOptions o;
  o.radius = r;
  return o;
}

void expect_rel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + 5e-7) << what;
}

// One feature: Q = sqrt(G)/R is FTPRL-Diag's lambda-bar and the ball is the box; its oracle (d = 1, R = 1,
// g = 0.5, -1, 0.25, 2) gives w_2..w_5 = -1, -0.105573, -0.323791, -1.
TEST(FtprlFull, OneFeatureIsFtprlDiag) {
  FtprlFullLearner l(opts(1.0), kSquared, 4);
  const double g[] = {0.5, -1, 0.25, 2}, w[] = {-1, -0.105573, -0.323791, -1};
  for (int t = 0; t < 4; ++t) {
    l.update(example({1.0}), g[t]);
    expect_rel(l.weight(0), w[t], "w after round " + std::to_string(t + 1));
  }
}

// The master step with the fixed schedule Q_{1:t} = abar_t A^2 (abar_t = sqrt(sum ||A^-1 g||^2), R = 1) on
// the ellipsoid ||A w|| <= 1, A = [[2, 1], [1, 1]]: FTPRL-Scale with a non-diagonal A (the hand-computed
// oracle P6). In the Q-norm the projection onto the ellipsoid is the scaling u / ||A u||.
TEST(FtprlFull, MasterStepReproducesNonDiagonalScaleOracle) {
  Eigen::Matrix2d a;
  a << 2, 1, 1, 1;
  const Eigen::Matrix2d ainv = a.inverse(), a2 = a * a;
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(a2);
  const std::vector<Eigen::Vector2d> gs = {{1, 0}, {0, -2}, {-0.5, 1}, {0.3, 0}};
  const double abar[] = {1.41421, 4.69042, 5.52268, 5.53895};
  const double w_next[][2] = {
      {-1.41421, 2.12132}, {-1.39682, 2.20579}, {-1.40399, 2.19084}, {-1.40513, 2.18772}};
  FtprlFullCore core;
  core.resize(2);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(2);
  double sum = 0.0, linear = 0.0;
  for (int t = 0; t < 4; ++t) {
    linear += gs[t].dot(w);
    sum += (ainv * gs[t]).squaredNorm();
    const double ab = std::sqrt(sum);
    expect_rel(ab, abar[t], "abar");
    const Eigen::VectorXd u = core.advance(w, gs[t], eig.eigenvectors(), ab * eig.eigenvalues());
    const double n = (a * u).norm();
    w = n > 1.0 ? Eigen::VectorXd(u / n) : u;
    expect_rel(w(0), w_next[t][0], "w_1 after round " + std::to_string(t + 1));
    expect_rel(w(1), w_next[t][1], "w_2 after round " + std::to_string(t + 1));
    EXPECT_NEAR((a * w).norm(), 1.0, 1e-12);
  }
  expect_rel(linear, -1.75964, "cumulative linear loss");
}

struct Trace {
  std::vector<Eigen::VectorXd> w, g;  // w_t played, g_t
  std::vector<Eigen::MatrixXd> q;     // Q_{1:t}
};

// A logistic run on d dense features; records w_t, g_t and Q_{1:t} (positions are the features, all present
// from the first example).
Trace run(uint64_t seed, int d, int n, double r) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  Eigen::VectorXd truth(d);
  for (int i = 0; i < d; ++i) truth(i) = 2 * g(rng);
  FtprlFullLearner l(opts(r), kLogistic, 6);
  Trace out;
  for (int t = 0; t < n; ++t) {
    std::vector<double> x(d);
    Eigen::VectorXd xv(d);
    for (int i = 0; i < d; ++i) xv(i) = x[i] = static_cast<float>(g(rng) * (1 + i));
    const float y = xv.dot(truth) + g(rng) > 0 ? 1.0f : -1.0f;
    Eigen::VectorXd w(d);
    for (int i = 0; i < d; ++i) w(i) = l.weight(i);
    const Example ex = example(x, y);
    const Prediction p = l.predict(ex);
    const double dl = kLogistic.first_derivative(p.raw, y, l.label_range());
    l.learn(ex);
    out.w.push_back(w);
    out.g.push_back(dl * xv);
    out.q.push_back(l.core().q_cum);
    EXPECT_LE(w.norm(), r * (1 + 1e-12));
  }
  Eigen::VectorXd w(d);
  for (int i = 0; i < d; ++i) w(i) = l.weight(i);
  out.w.push_back(w);
  return out;
}

// w_{t+1} minimises eq. (5), 1/2 sum_tau (w - w_tau)' Q_tau (w - w_tau) + z_t . w, over the ball: compared
// with projected gradient descent run to convergence.
TEST(FtprlFull, IterateIsTheArgminOfTheProximalObjective) {
  const int d = 3;
  const double r = 1.5;
  const Trace a = run(31, d, 40, r);
  Eigen::MatrixXd prev = Eigen::MatrixXd::Zero(d, d);
  Eigen::VectorXd lin = Eigen::VectorXd::Zero(d);  // sum Q_tau w_tau - z
  for (size_t t = 0; t < a.g.size(); ++t) {
    lin += (a.q[t] - prev) * a.w[t] - a.g[t];
    prev = a.q[t];
    // minimise 1/2 w'Qw - lin.w over ||w|| <= r
    const double step = 1.0 / std::max(1e-12, lepus::SymEigen(a.q[t]).eigenvalues().maxCoeff());
    Eigen::VectorXd w = a.w[t + 1];
    for (int it = 0; it < 200000; ++it) {
      Eigen::VectorXd next = w - step * (a.q[t] * w - lin);
      if (next.norm() > r) next *= r / next.norm();
      if ((next - w).norm() < 1e-15) break;
      w = next;
    }
    auto f = [&](const Eigen::VectorXd& v) { return 0.5 * v.dot(a.q[t] * v) - lin.dot(v); };
    // The learner's iterate is at least as good as the brute-force minimiser (up to rounding) and close to
    // it.
    EXPECT_LE(f(a.w[t + 1]), f(w) + 1e-9 * std::max(1.0, std::fabs(f(w)))) << t;
    EXPECT_LT((a.w[t + 1] - w).norm(), 1e-5) << t;
  }
}

// Theorem 2: for every u in the ball, sum_t g_t.(w_t - u) <= 1/2 sum_t (u - w_t)'Q_t(u - w_t) + sum_t
// g_t'Q_{1:t}^+ g_t.
TEST(FtprlFull, RegretWithinTheoremTwosBoundOnEveryRun) {
  const int d = 4;
  const double r = 2.0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const Trace a = run(100 + seed, d, 300, r);
    double pen = 0.0;
    for (size_t t = 0; t < a.g.size(); ++t) {
      const Eigen::MatrixXd pinv = a.q[t].completeOrthogonalDecomposition().pseudoInverse();
      pen += a.g[t].dot(pinv * a.g[t]);
    }
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
    for (int k = 0; k < 50; ++k) {
      Eigen::VectorXd u(d);
      for (int i = 0; i < d; ++i) u(i) = g(rng);
      u *= r / u.norm() * (k % 2 ? 1.0 : 0.5);
      double regret = 0.0, prox = 0.0;
      Eigen::MatrixXd prev = Eigen::MatrixXd::Zero(d, d);
      for (size_t t = 0; t < a.g.size(); ++t) {
        regret += a.g[t].dot(a.w[t] - u);
        prox += 0.5 * (u - a.w[t]).dot((a.q[t] - prev) * (u - a.w[t]));
        prev = a.q[t];
      }
      EXPECT_LE(regret, prox + pen + 1e-9) << "seed " << seed << " u " << k;
    }
  }
}

TEST(FtprlFull, CapIsATypedError) {
  FtprlFullOptions o = opts(1.0);
  o.cap = 2;
  FtprlFullLearner l(o, kSquared, 6);
  l.learn(example({1, 1}, 1));
  EXPECT_THROW(l.learn(example({1, 1, 1}, -7)), ConfigError);
}

}  // namespace
}  // namespace lepus

namespace lepus {
namespace {

// 10^6 rounds (one 20 x 20 eigendecomposition each) in d = 20 with feature scales from 1e-6 to 1e6: every
// prediction finite, w in the ball, Q_{1:t} exactly symmetric.
TEST(FtprlFull, MillionRoundsStayFinite) {
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> u(-1, 1);
  const int d = 20;
  FtprlFullLearner l(opts(1.0), kLogistic, 6);
  for (int t = 0; t < test::long_run(1000000); ++t) {
    std::vector<double> x(d, 0.0);
    for (int i = 0; i < d; ++i)
      if (u(rng) > 0.2) x[i] = u(rng) * std::pow(10.0, -6 + 12.0 * i / (d - 1));
    const Prediction p = l.learn(example(x, u(rng) > 0 ? 1.0f : -1.0f));
    ASSERT_TRUE(std::isfinite(p.raw)) << t;
  }
  double norm2 = 0.0;
  for (int i = 0; i < d; ++i) norm2 += l.weight(i) * l.weight(i);
  EXPECT_LE(std::sqrt(norm2), 1.0 + 1e-12);
  const Eigen::MatrixXd& q = l.core().q_cum;
  EXPECT_TRUE(q.allFinite());
  for (Eigen::Index i = 0; i < q.rows(); ++i)
    for (Eigen::Index j = 0; j < q.cols(); ++j) ASSERT_EQ(q(i, j), q(j, i));
}

}  // namespace
}  // namespace lepus

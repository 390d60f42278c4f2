// scinol-full against hand-computed oracles (double precision, relative 1e-5) of W. Kotłowski, "Scale-Invariant
// Unconstrained Online Learning" (ALT 2017), Algorithm 2: d = 1 (O5), a rank-deficient d = 2 start (O6) and a
// fixed gradient sequence (O7); and its properties: predictions unchanged under an invertible linear map of
// the inputs (Appendix D), 0 exactly on an example in a new direction, Lemma 4.3's potential inequality with no
// slack, the range bounds, the rank-one pseudo-inverse equal to a from-scratch one, numerical health over 10^6
// rounds with values from 1e-6 to 1e6 and rank decisions equal to the column-normalised run's.
#include "learners/scinol_full.h"

#include "long_run.h"
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <vector>

#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

const LogisticLoss kLogistic(-1.0f, 1.0f);

Example example(const std::vector<double>& x, float y, float weight = 1.0f) {
  Example ex;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != 0.0) ex.features.push_back(Feature{i, static_cast<float>(x[i])});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  ex.weight = weight;
  return ex;
}

ScinolFullOptions opts(double alpha = 1.5) {
  ScinolFullOptions o;
  o.alpha = alpha;
  return o;
}

void expect_rel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + 5e-7) << what;
}

TEST(ScinolFull, OracleO5) {
  ScinolFullLearner l(opts(), kLogistic, 4);
  const double xs[] = {2, -1, 0.5};
  const float ys[] = {1, 1, -1};
  const double eta[] = {0.666667, 0.655648, 0.610268}, yhat[] = {0, -0.13113, 0.0271578};
  const double g[] = {-0.5, -0.532735, 0.506789}, lev[] = {1, 0.2, 0.047619};
  const double gamma[] = {0.25, 0.306761, 0.318992}, h[] = {1, 0.467265, 0.21387};
  for (int t = 0; t < 3; ++t) {
    const std::string at = "round " + std::to_string(t + 1);
    expect_rel(l.round(example({xs[t]}, ys[t]), true), yhat[t], at + " yhat");
    expect_rel(l.last().eta, eta[t], at + " eta");
    expect_rel(l.last().g, g[t], at + " g");
    expect_rel(l.last().lev, lev[t], at + " lev");
    expect_rel(l.gamma(), gamma[t], at + " Gamma");
    expect_rel(l.h(0), h[t], at + " h");
  }
}

TEST(ScinolFull, OracleO6RankDeficientStart) {
  ScinolFullLearner l(opts(), kLogistic, 4);
  const std::vector<std::vector<double>> xs = {{1, 1}, {2, 2}, {1, -1}, {3, 1}};
  const float ys[] = {1, 1, -1, 1};
  const bool fresh[] = {true, false, true, false};
  const double pinv[][3] = {{.25, .25, .25}, {.05, .05, .05}, {.3, -.2, .3}, {.125, -.125, .267857}};
  const double eta[] = {0.666667, 0.623671, 0.663904, 0.663459}, yhat[] = {0, 0.124734, 0, 0.0177915};
  const double g[] = {-0.5, -0.468857, 0.5, -0.495552}, lev[] = {1, 0.8, 1, 0.642857};
  const double gamma[] = {0.25, 0.425861, 0.675861, 0.833729};
  const double h[][2] = {{0.5, 0.5}, {1.43771, 1.43771}, {0.937714, 1.93771}, {2.42437, 2.43327}};
  const double c[] = {0.25, 0.413404, 0.663404, 0.845836};
  for (int t = 0; t < 4; ++t) {
    const std::string at = "round " + std::to_string(t + 1);
    const double y = l.round(example(xs[t], ys[t]), true);
    EXPECT_EQ(l.last().new_direction, fresh[t]) << at;
    if (fresh[t]) EXPECT_EQ(y, 0.0) << at;  // exactly
    expect_rel(y, yhat[t], at + " yhat");
    expect_rel(l.pinv(0, 0), pinv[t][0], at + " S+_00");
    expect_rel(l.pinv(0, 1), pinv[t][1], at + " S+_01");
    expect_rel(l.pinv(1, 1), pinv[t][2], at + " S+_11");
    expect_rel(l.last().eta, eta[t], at + " eta");
    expect_rel(l.last().g, g[t], at + " g");
    expect_rel(l.last().lev, lev[t], at + " lev");
    expect_rel(l.gamma(), gamma[t], at + " Gamma");
    expect_rel(l.h(0), h[t][0], at + " h_0");
    expect_rel(l.h(1), h[t][1], at + " h_1");
    expect_rel(l.c(), c[t], at + " c");
  }
}

TEST(ScinolFull, OracleO7FixedGradients) {
  ScinolFullLearner l(opts(2.0), kLogistic, 4);
  const double g[] = {-1, -1, -1, 1};
  const double eta[] = {0.5, 0.441248, 0.479595, 0.554893}, w[] = {0, 0.220624, 0.31973, 0.41617};
  const double gamma[] = {1, 1.5, 1.83333, 2.08333};
  for (int t = 0; t < 4; ++t) {
    const double y = l.round(example({1}, 0), false, g[t]);
    expect_rel(l.last().eta, eta[t], "eta");
    expect_rel(y, w[t], "w (x = 1)");
    expect_rel(l.gamma(), gamma[t], "Gamma");
  }
}

// Rows in general position in d = 5 after a rank-deficient start (two rounds in a 2-D subspace), labels from a
// noisy linear rule, then the same rows through a well-conditioned A (condition number about 10).
std::vector<std::vector<double>> rows(std::mt19937_64& rng, int n, int d) {
  std::normal_distribution<double> g;
  std::vector<std::vector<double>> out;
  for (int t = 0; t < n; ++t) {
    std::vector<double> x(d);
    for (double& v : x) v = g(rng);
    if (t < 2)
      for (int i = 2; i < d; ++i) x[i] = 0.0;
    out.push_back(x);
  }
  return out;
}

TEST(ScinolFull, PredictionsUnchangedByAnInvertibleLinearMap) {
  std::mt19937_64 rng(21);
  std::normal_distribution<double> g;
  const int d = 5, n = 400;
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(d, d) * 2.0;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) a(i, j) += 0.3 * g(rng);
  const auto xs = rows(rng, n, d);
  ScinolFullLearner plain(opts(), kLogistic, 6), mapped(opts(), kLogistic, 6);
  for (int t = 0; t < n; ++t) {
    Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(xs[t].data(), d);
    const float y = x(0) - 0.5 * x(3) + 0.3 * g(rng) > 0 ? 1.0f : -1.0f;
    const Eigen::VectorXd ax = a * x;
    // float inputs: feed both the float-rounded x and A applied to that rounded x, in double via the example
    Example e1 = example(xs[t], y);
    std::vector<double> xr(d);
    for (int i = 0; i < d; ++i) xr[i] = static_cast<float>(xs[t][i]);
    const Eigen::VectorXd axr = a * Eigen::Map<const Eigen::VectorXd>(xr.data(), d);
    std::vector<double> av(axr.data(), axr.data() + d);
    Example e2 = example(av, y);
    (void)ax;
    const double p = plain.round(e1, true), q = mapped.round(e2, true);
    ASSERT_EQ(plain.last().new_direction, mapped.last().new_direction) << t;
    // A x is rounded to float in the example: a relative 1e-7 perturbation of the inputs.
    ASSERT_NEAR(p, q, 1e-6 * std::max(1.0, std::fabs(p)) + 1e-6) << t;
  }
}

// Lemma 4.3: g_t yhat_t + psi_t <= psi_{t-1}, psi_t = exp((h_t'S_t^+h_t - Gamma_t) / (2 alpha)); the range
// bounds 0 <= c <= sum g^2 and Gamma <= sum g^2; P h = h; a new direction gives yhat = 0 and lev = 1, else
// lev = b/(1+b) < 1; S^+ equals the pseudo-inverse of S computed from scratch.
TEST(ScinolFull, PotentialRangeAndPseudoInverse) {
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<double> u(-1, 1);
  const int d = 6;
  const double alpha = 1.5;
  ScinolFullLearner l(opts(alpha), kLogistic, 6);
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(d, d);
  double psi = 1.0, sum_g2 = 0.0;
  for (int t = 0; t < 300; ++t) {
    // Rank grows over time: only the first 1 + t/40 coordinates are used.
    std::vector<double> x(d, 0.0);
    const int used = std::min(d, 1 + t / 40);
    for (int i = 0; i < used; ++i) x[i] = std::round(u(rng) * 8) / 4;  // exact in float
    const double gt = u(rng);
    const double y = l.round(example(x, 0), false, gt);
    Eigen::VectorXd xv = Eigen::Map<const Eigen::VectorXd>(x.data(), d);
    s += xv * xv.transpose();
    sum_g2 += gt * gt;
    const double next = std::exp((l.c() - l.gamma()) / (2 * alpha));
    ASSERT_LE(gt * y + next, psi * (1 + 1e-9) + 1e-12) << t;
    psi = next;
    ASSERT_GE(l.c(), -1e-12);
    ASSERT_LE(l.c(), sum_g2 * (1 + 1e-9));
    ASSERT_LE(l.gamma(), sum_g2 * (1 + 1e-9));
    if (l.last().new_direction) {
      ASSERT_EQ(y, 0.0);
      ASSERT_EQ(l.last().lev, 1.0);
    } else {
      ASSERT_LT(l.last().lev, 1.0);
    }
    // From scratch: S^+ by eigendecomposition with a relative cut-off.
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(s);
    Eigen::MatrixXd pinv = Eigen::MatrixXd::Zero(d, d), proj = Eigen::MatrixXd::Zero(d, d);
    const double top = eig.eigenvalues().cwiseAbs().maxCoeff();
    for (int k = 0; k < d; ++k)
      if (eig.eigenvalues()(k) > 1e-10 * top) {
        pinv += eig.eigenvectors().col(k) * eig.eigenvectors().col(k).transpose() / eig.eigenvalues()(k);
        proj += eig.eigenvectors().col(k) * eig.eigenvectors().col(k).transpose();
      }
    Eigen::VectorXd h(d);
    for (int i = 0; i < d; ++i) h(i) = l.h(i);
    ASSERT_LT((proj * h - h).norm(), 1e-9 * std::max(1.0, h.norm())) << t;
    for (int i = 0; i < used; ++i)
      for (int j = 0; j < used; ++j) {
        ASSERT_NEAR(l.pinv(i, j), pinv(i, j), 1e-9 * std::max(1.0, pinv.cwiseAbs().maxCoeff())) << t;
        ASSERT_NEAR(l.projector(i, j), proj(i, j), 1e-9) << t;
        ASSERT_EQ(l.pinv(i, j), l.pinv(j, i));  // exactly symmetric
      }
  }
}

// 10^6 rounds in d = 20 with column scales from 1e-6 to 1e6: every prediction finite, S^+ symmetric, and every
// rank decision the same as in the run on the column-normalised data (the invariance makes them equal).
TEST(ScinolFull, MillionRoundsFiniteAndRankDecisionsScaleFree) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-1, 1);
  const int d = 20;
  double scale[d];
  for (int i = 0; i < d; ++i) scale[i] = std::pow(10.0, -6 + 12.0 * i / (d - 1));
  ScinolFullLearner scaled(opts(), kLogistic, 6), normal(opts(), kLogistic, 6);
  for (int t = 0; t < test::long_run(1000000); ++t) {
    std::vector<double> x(d, 0.0), xs(d, 0.0);
    for (int i = 0; i < d; ++i) {
      if (u(rng) < 0.6) continue;
      const float v = static_cast<float>(u(rng));
      x[i] = v;
      xs[i] = static_cast<float>(v * scale[i]);
    }
    const float y = u(rng) > 0 ? 1.0f : -1.0f;
    const double a = normal.round(example(x, y), true), b = scaled.round(example(xs, y), true);
    ASSERT_TRUE(std::isfinite(a) && std::isfinite(b)) << t;
    ASSERT_EQ(normal.last().new_direction, scaled.last().new_direction) << t;
  }
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) ASSERT_EQ(scaled.pinv(i, j), scaled.pinv(j, i));
  EXPECT_EQ(normal.size(), static_cast<size_t>(d));
}

TEST(ScinolFull, CapIsATypedError) {
  ScinolFullOptions o = opts();
  o.cap = 3;
  ScinolFullLearner l(o, kLogistic, 6);
  l.learn(example({1, 1, 1}, 1));
  EXPECT_THROW(l.learn(example({0, 0, 0, 1}, 1)), ConfigError);
}

}  // namespace
}  // namespace lepus

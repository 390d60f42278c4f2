// scinol-full's default variant (ScInOL2 of Kempka, Kotłowski, Warmuth, ICML 2019, carried to the full
// matrix: Sigma_t = V_{t-1} + diag(M_t^2), one coin-betting wealth) against its own oracles: hand-computed
// rounds in d = 1 (equal to ScInOL2's hand-computed rounds, scinol2_test.cc's S4) and d = 2, a fixed gradient
// sequence, equality with lepus's scinol2 on any 1-D sequence, Sigma^-1 equal to a from-scratch inverse, the
// wealth identity sum_t g_t (yhat_t - initial) = eps - wealth_T with no round losing more than half the
// wealth, predictions unchanged by any per-feature rescaling (and changed by a general linear map: that
// guarantee is given up), and a saved model resuming exactly as one run.
//
// The published algorithm (--scinol_full_variant published) against hand-computed oracles (double precision,
// relative 1e-5) of W. Kotłowski, "Scale-Invariant Unconstrained Online Learning" (ALT 2017), Algorithm 2: d
// = 1 (O5), a rank-deficient d = 2 start (O6) and a fixed gradient sequence (O7); and its properties:
// predictions unchanged under an invertible linear map of the inputs (Appendix D), 0 exactly on an example in
// a new direction, Lemma 4.3's potential inequality with no slack, the range bounds, the rank-one
// pseudo-inverse equal to a from-scratch one, numerical health over 10^6 rounds with values from 1e-6 to 1e6
// and rank decisions equal to the column-normalised run's.
#include "learners/scinol_full.h"

#include <gtest/gtest.h>
#include "long_run.h"

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <vector>

#include "learners/scinol2.h"
#include "lepus/errors.h"
#include "losses/losses.h"
#include "sketch/sym_eigen.h"

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

// The published algorithm (--scinol_full_variant published): these oracles are Kotłowski's.
ScinolFullOptions opts(double alpha = 1.5) {
  ScinolFullOptions o;
  o.variant = ScinolFullVariant::kPublished;
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
    if (fresh[t]) {
      EXPECT_EQ(y, 0.0) << at;  // exactly
    }
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

// Rows in general position in d = 5 after a rank-deficient start (two rounds in a 2-D subspace), labels from
// a noisy linear rule, then the same rows through a well-conditioned A (condition number about 10).
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
    const lepus::SymEigen eig(s);
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

// 10^6 rounds in d = 20 with column scales from 1e-6 to 1e6: every prediction finite, S^+ symmetric, and
// every rank decision the same as in the run on the column-normalised data (the invariance makes them equal).
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

// ---- the scinol2 variant (the default) ----

ScinolFullOptions scinol2_opts(double eps = 1.0) {
  ScinolFullOptions o;  // the default variant
  EXPECT_EQ(o.variant, ScinolFullVariant::kScinol2);
  o.eps = eps;
  return o;
}

// d = 1, x = (2, -1, 0.5), y = (+1, +1, -1): ScInOL2's own hand-computed rounds (scinol2_test.cc's S4) (yhat,
// g, the wealth eta, G = h).
TEST(ScinolFullScinol2, OracleOneDimensionIsScinol2S4) {
  ScinolFullLearner l(scinol2_opts(), kLogistic, 4);
  const double xs[] = {2, -1, 0.5};
  const float ys[] = {1, 1, -1};
  const double yhat[] = {0, -0.1, 0.0213285}, g[] = {-0.5, -0.524979, 0.505332};
  const double wealth[] = {1, 0.947502, 0.936724}, h[] = {1, 0.475021, 0.222355};
  for (int t = 0; t < 3; ++t) {
    const std::string at = "round " + std::to_string(t + 1);
    expect_rel(l.round(example({xs[t]}, ys[t]), true), yhat[t], at + " yhat");
    expect_rel(l.last().g, g[t], at + " g");
    expect_rel(l.wealth(), wealth[t], at + " wealth");
    expect_rel(l.h(0), h[t], at + " h");
  }
}

// d = 2, X = ((1,0), (0,3), (2,1), (-1,2)), y = (+1, -1, +1, -1), eps = 1. By hand: round 3 has
// M = (2, 3), V = diag(0.25, 2.25), Sigma = diag(4.25, 11.25), h = (0.5, -1.5): c = 0.25/4.25 + 2.25/11.25 =
// 0.258824, r = 2(0.5)/4.25 - 1.5/11.25 = 0.101961, lev = 4/4.25 + 1/11.25 = 1.030065 (above 1: a clamp may
// be needed in d > 1), bet = 1/2 (c <= 1), yhat = 0.0509804. Round 4's Sigma has V's off-diagonal g^2 x x'.
TEST(ScinolFullScinol2, OracleTwoDimensions) {
  ScinolFullLearner l(scinol2_opts(), kLogistic, 4);
  const std::vector<std::vector<double>> xs = {{1, 0}, {0, 3}, {2, 1}, {-1, 2}};
  const float ys[] = {1, -1, 1, -1};
  const double yhat[] = {0, 0, 0.0509804, -0.252754765}, g[] = {-0.5, 0.5, -0.487257662, 0.437145574};
  const double lev[] = {1, 1, 1.030065359, 0.57449374}, bet[] = {0.5, 0.5, 0.5, 0.512420293};
  const double wealth[] = {1, 1, 1.024840587, 1.135331214};
  const double h[][2] = {{0.5, 0}, {0.5, -1.5}, {1.474515323, -1.012742338}, {1.911660897, -1.887033487}};
  for (int t = 0; t < 4; ++t) {
    const std::string at = "round " + std::to_string(t + 1);
    expect_rel(l.round(example(xs[t], ys[t]), true), yhat[t], at + " yhat");
    expect_rel(l.last().g, g[t], at + " g");
    expect_rel(l.last().lev, lev[t], at + " lev");
    expect_rel(l.last().eta, bet[t], at + " bet");
    expect_rel(l.wealth(), wealth[t], at + " wealth");
    expect_rel(l.h(0), h[t][0], at + " h_0");
    expect_rel(l.h(1), h[t][1], at + " h_1");
  }
}

// x = 1, g = (-1, -1, -1, +1): yhat = (0, 0.25, 0.360844, 0.402711), wealth (1, 1.25, 1.610844, 1.208133).
TEST(ScinolFullScinol2, OracleFixedGradients) {
  ScinolFullLearner l(scinol2_opts(), kLogistic, 4);
  const double g[] = {-1, -1, -1, 1}, yhat[] = {0, 0.25, 0.360843918, 0.40271098};
  const double wealth[] = {1, 1.25, 1.610843918, 1.208132939};
  for (int t = 0; t < 4; ++t) {
    expect_rel(l.round(example({1}, 0), false, g[t]), yhat[t], "yhat");
    expect_rel(l.wealth(), wealth[t], "wealth");
  }
}

// In one dimension the variant is ScInOL2 exactly (M^2 + S2 = Sigma, one coordinate's wealth), whatever the
// values and labels: lepus's scinol2 learner agrees to rounding on a long random sequence.
TEST(ScinolFullScinol2, EqualsScinol2InOneDimension) {
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<double> u(-1, 1);
  ScinolFullLearner full(scinol2_opts(), kLogistic, 4);
  Scinol2Learner coord(Scinol2Options{}, kLogistic, 4, false);
  for (int t = 0; t < 2000; ++t) {
    const double x = static_cast<float>(std::exp(4 * u(rng)) * (u(rng) > -0.2 ? 1 : -1));
    const Example e = example({x}, u(rng) > 0.3 * x / (1 + std::fabs(x)) ? 1.0f : -1.0f);
    const double a = full.round(e, true), b = coord.learn_score(e);
    ASSERT_NEAR(a, b, 1e-9 * std::max(1.0, std::fabs(b))) << t;
  }
}

std::vector<double> round_floats(std::vector<double> x) {
  for (double& v : x) v = static_cast<float>(v);
  return x;
}

// Sigma^-1 (kept by rank-one updates and a Woodbury step over the grown maxima) against the inverse of
// V + diag(M^2) from scratch; the wealth identity and the half-wealth bound; c = h'Sigma^-1 h.
TEST(ScinolFullScinol2, InverseWealthIdentityAndHalfWealthBound) {
  std::mt19937_64 rng(25);
  std::uniform_real_distribution<double> u(-1, 1);
  const int d = 6;
  ScinolFullLearner l(scinol2_opts(0.7), kLogistic, 6);
  Eigen::MatrixXd v = Eigen::MatrixXd::Zero(d, d);
  Eigen::VectorXd m = Eigen::VectorXd::Zero(d);
  double sum_gy = 0.0, wealth = 0.7;
  for (int t = 0; t < 400; ++t) {
    std::vector<double> x(d, 0.0);
    const int used = std::min(d, 1 + t / 30);  // features enter over time; maxima grow now and then
    for (int i = 0; i < used; ++i)
      if (u(rng) > -0.5) x[i] = std::round(u(rng) * (8 + t / 10)) / 4;
    const double gt = u(rng);
    const double y = l.round(example(x, 0), false, gt);
    ASSERT_LE(std::fabs(y), 0.5 * wealth * (1 + 1e-12)) << t;
    sum_gy += gt * y;
    ASSERT_GE(l.wealth(), 0.5 * wealth * (1 - 1e-12)) << t;
    wealth = l.wealth();
    ASSERT_NEAR(sum_gy, 0.7 - l.wealth(), 1e-9 * std::max(1.0, l.wealth())) << t;
    Eigen::VectorXd xv = Eigen::Map<const Eigen::VectorXd>(x.data(), d);
    v += gt * gt * xv * xv.transpose();
    for (int i = 0; i < d; ++i) m(i) = std::max(m(i), std::fabs(x[i]));
    std::vector<int> seen;  // the features held so far
    for (int i = 0; i < d; ++i)
      if (m(i) > 0.0) seen.push_back(i);
    const int n = static_cast<int>(seen.size());
    if (n == 0) continue;
    Eigen::MatrixXd sigma(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        sigma(i, j) = v(seen[i], seen[j]) + (i == j ? m(seen[i]) * m(seen[i]) : 0.0);
    const Eigen::MatrixXd inv = sigma.ldlt().solve(Eigen::MatrixXd::Identity(n, n));
    Eigen::VectorXd h(n);
    for (int i = 0; i < n; ++i) h(i) = l.h(seen[i]);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        ASSERT_NEAR(l.pinv(seen[i], seen[j]), inv(i, j), 1e-9 * inv.cwiseAbs().maxCoeff()) << t;
        ASSERT_EQ(l.pinv(seen[i], seen[j]), l.pinv(seen[j], seen[i]));  // exactly symmetric
      }
    ASSERT_NEAR(l.c(), h.dot(inv * h), 1e-9 * std::max(1.0, l.c())) << t;
  }
}

// Any per-feature rescaling (negative included) and a permutation leave every prediction unchanged; a general
// invertible linear map does not (the published algorithm's invariance is given up for diag(M^2)).
TEST(ScinolFullScinol2, PredictionsUnchangedByPerFeatureRescalingNotByALinearMap) {
  std::mt19937_64 rng(26);
  std::normal_distribution<double> g;
  const int d = 5, n = 400;
  const double a[] = {1e-3, -7.0, 1e4, 0.2, -50.0};
  const int perm[] = {3, 0, 4, 1, 2};
  Eigen::MatrixXd map = Eigen::MatrixXd::Identity(d, d) * 2.0;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) map(i, j) += 0.3 * g(rng);
  const auto xs = rows(rng, n, d);
  ScinolFullLearner plain(scinol2_opts(), kLogistic, 6), scaled(scinol2_opts(), kLogistic, 6),
      mapped(scinol2_opts(), kLogistic, 6);
  double moved = 0.0;
  for (int t = 0; t < n; ++t) {
    const std::vector<double> x = round_floats(xs[t]);
    const float y = x[0] - 0.5 * x[3] + 0.3 * g(rng) > 0 ? 1.0f : -1.0f;
    std::vector<double> sx(d), mx(d);
    for (int i = 0; i < d; ++i) sx[perm[i]] = static_cast<float>(x[i] * a[i]);
    const Eigen::VectorXd ax = map * Eigen::Map<const Eigen::VectorXd>(x.data(), d);
    for (int i = 0; i < d; ++i) mx[i] = ax(i);
    const double p = plain.round(example(x, y), true), q = scaled.round(example(sx, y), true);
    ASSERT_NEAR(p, q, 1e-6 * std::max(1.0, std::fabs(p))) << t;  // float rounding of x a: relative 1e-7
    moved = std::max(moved, std::fabs(mapped.round(example(mx, y), true) - p));
  }
  EXPECT_GT(moved, 0.01);
}

// A model saved after half the stream and loaded into a fresh learner continues exactly as one run.
TEST(ScinolFullScinol2, ResumeEqualsOneRun) {
  std::mt19937_64 rng(27);
  std::normal_distribution<double> g;
  const auto xs = rows(rng, 300, 6);
  std::vector<Example> es;
  for (const auto& x : xs) es.push_back(example(x, x[1] + 0.4 * g(rng) > 0 ? 1.0f : -1.0f));
  ScinolFullLearner one(scinol2_opts(), kLogistic, 6), first(scinol2_opts(), kLogistic, 6);
  std::vector<float> want;
  for (const Example& e : es) want.push_back(one.learn(e).raw);
  for (size_t t = 0; t < 150; ++t) ASSERT_EQ(first.learn(es[t]).raw, want[t]);
  ModelWriter w;
  first.save(w);
  ScinolFullLearner resumed(ScinolFullOptions{}, kLogistic, 6);
  ModelReader r(w.bytes().data(), w.bytes().size(), "test");
  resumed.load(r);
  for (size_t t = 150; t < es.size(); ++t) {
    ASSERT_EQ(resumed.predict(es[t]).raw, want[t]) << t;
    ASSERT_EQ(resumed.learn(es[t]).raw, want[t]) << t;
  }
  EXPECT_EQ(resumed.wealth(), one.wealth());
}

// A published-mode state loads as the published algorithm whatever this run's variant.
TEST(ScinolFullScinol2, PublishedStateLoadsAsPublished) {
  ScinolFullLearner pub(opts(), kLogistic, 6);
  std::mt19937_64 rng(28);
  const auto xs = rows(rng, 50, 4);
  for (const auto& x : xs) pub.learn(example(x, x[0] > 0 ? 1.0f : -1.0f));
  ModelWriter w;
  pub.save(w);
  ScinolFullLearner l(ScinolFullOptions{}, kLogistic, 6);
  ModelReader r(w.bytes().data(), w.bytes().size(), "test");
  l.load(r);
  const Example e = example({0.3, -1.0, 0.2, 0.5}, 1.0f);
  EXPECT_EQ(l.predict(e).raw, pub.predict(e).raw);
  EXPECT_EQ(l.describe()[0], "scinol_full_variant = published");
}

}  // namespace
}  // namespace lepus

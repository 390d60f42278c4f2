// kons, sketched-kons and KORS (Calandriello, Lazaric, Valko, ICML 2017): the worked examples of their rounds
// (ỹ, ŷ, ġ, τ̃, γ, β per round, computed independently in double precision: exact KONS with the linear and the
// Gaussian kernel, KORS's scores and coins, Sketched-KONS with coupled coins), and the properties: kons with the
// linear kernel is ONS with the clipping projection written in the primal, the log-det identity of Lemma 3,
// KORS's leverage estimates within [τ, 3τ] (β = 30), sketched-kons with a coin floor of 1 is kons, and a model
// saved halfway resumes exactly.
#include "learners/kons.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "lepus/errors.h"
#include "lepus/loss.h"

namespace lepus {
namespace {

Example example(std::vector<std::pair<uint64_t, float>> f, float y) {
  Example ex;
  for (const auto& [i, v] : f) ex.features.push_back(Feature{i, v});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  return ex;
}

// A 1-D point: value v at slot 0 (0 is the empty vector, as the kernel sees it).
Example point1(float v, float y) { return example({{0, v}}, y); }

KonsOptions options(kernels::KernelKind kind, bool sketched = false) {
  KonsOptions o;
  o.kernel.kind = kind;
  o.kernel.bandwidth = kind == kernels::KernelKind::kRbf ? 1.0 : 0.0;
  o.alpha = 1.0;
  o.clip = 1.0;
  o.eta = 0.125;  // σ = 1/(8C²) for the squared loss with C = 1
  o.sketched = sketched;
  return o;
}

std::unique_ptr<Loss> squared() { return make_loss(LossOptions{"squared"}); }

struct Row {
  double ytilde, yhat, gdot, tau, gamma, beta;
};

void expect_round(const KonsLearner::Round& r, const Row& want, int t) {
  EXPECT_NEAR(r.ytilde, want.ytilde, 1e-5 * std::max(1.0, std::fabs(want.ytilde))) << "round " << t;
  EXPECT_NEAR(r.yhat, want.yhat, 1e-5 * std::max(1.0, std::fabs(want.yhat))) << "round " << t;
  EXPECT_NEAR(r.gdot, want.gdot, 1e-5 * std::max(1.0, std::fabs(want.gdot))) << "round " << t;
  EXPECT_NEAR(r.tau, want.tau, 1e-5 * std::max(1.0, want.tau)) << "round " << t;
  EXPECT_NEAR(r.gamma, want.gamma, 1e-5 * std::max(1.0, want.gamma)) << "round " << t;
  EXPECT_NEAR(r.beta, want.beta, 1e-5 * std::max(1.0, std::fabs(want.beta))) << "round " << t;
}

// Exact KONS, linear kernel, d = 2: a projection (round 2 clips 1.33 to 1, so ġ = 0 and the point is stored with
// γ = 0, β = -h/τ̃) and the ordinary rounds.
TEST(Kons, LinearKernelRounds) {
  const auto loss = squared();
  KonsLearner l(options(kernels::KernelKind::kLinear), *loss, 4, 0);
  const std::vector<Example> xs = {example({{0, 1.0f}}, 1.0f), example({{0, 1.0f}}, 1.0f),
                                   example({{0, 0.6f}, {1, 0.8f}}, -1.0f), example({{1, 1.0f}}, 0.5f),
                                   example({{0, 0.8f}, {1, 0.6f}}, 1.0f)};
  const Row want[] = {{0, 0, -2, 1, 0.5, 2},
                      {1.333333, 1, 0, 0.666667, 0, -0.5},
                      {0.6, 0.6, 3.2, 0.88, 1.28, -2.432},
                      {-1.203913, -1, -3, 0.614748, 1.125, 2.206701},
                      {0.048170, 0.048170, -1.903660, 0.370745, 0.452990, 1.925480}};
  for (int t = 0; t < 5; ++t) {
    l.learn(xs[t]);
    expect_round(l.last_round(), want[t], t + 1);
  }
  EXPECT_EQ(l.stored_points(), 5u);
  EXPECT_EQ(l.sketch_size(), 4u);  // round 2 has γ = 0: not a row of N
}

// Exact KONS, Gaussian kernel exp(-(x - x')²/2) on 1-D inputs.
TEST(Kons, GaussianKernelRounds) {
  const auto loss = squared();
  KonsLearner l(options(kernels::KernelKind::kRbf), *loss, 4, 0);
  const float x[] = {0, 0, 1, 0.5, -1, 0.2, 0.9};
  const float y[] = {1, 1, -1, 0.5, 0.3, -0.2, -1};
  const Row want[] = {{0, 0, -2, 1, 0.5, 2},
                      {1.333333, 1, 0, 0.666667, 0, -0.5},
                      {0.606531, 0.606531, 3.213061, 0.877374, 1.290470, -2.430351},
                      {-0.178480, -0.178480, -1.356960, 0.440377, 0.230167, 1.315879},
                      {0.760876, 0.760876, 0.921753, 0.873132, 0.106203, -0.840945},
                      {0.500987, 0.500987, 1.401973, 0.462910, 0.245691, -1.278885},
                      {-0.518237, -0.518237, 0.963526, 0.362277, 0.116048, -1.023666}};
  double total = 0.0;
  for (int t = 0; t < 7; ++t) {
    const Prediction p = l.learn(point1(x[t], y[t]));
    expect_round(l.last_round(), want[t], t + 1);
    total += (p.value - y[t]) * (p.value - y[t]);
  }
  EXPECT_NEAR(total, 4.977161, 1e-5);
}

// KORS with unscaled points (d = 1), Gaussian kernel, α = 1, ε = 0.5, β = 2, the coins' uniforms given.
TEST(Kors, ScoresAndCoins) {
  const kernels::Kernel k(kernels::KernelParams{kernels::KernelKind::kRbf, 2, 1.0, 1.0});
  Kors kors(k, KorsOptions{1.0, 0.5, 2.0});
  const double x[] = {0, 0, 1, 0.5, -1, 0.2, 0.9};
  const double u[] = {0.5, 0.9, 0.3, 0.95, 0.1, 0.7, 0.2};
  const double tau[] = {0.75, 0.5, 0.645176, 0.366498, 0.641809, 0.337597, 0.429776};
  const double p[] = {1, 1, 1, 0.732997, 1, 0.675195, 0.859552};
  const bool kept[] = {true, true, true, false, true, false, true};
  std::vector<kernels::SlotValue> buf;
  for (int t = 0; t < 7; ++t) {
    std::vector<kernels::SlotValue> c;
    if (x[t] != 0.0) c.push_back({0, x[t]});
    const kernels::PointRef pt{c.data(), c.size(), x[t] * x[t]};
    EXPECT_NEAR(kors.score(pt, 1.0), tau[t], 1e-6) << t;
    const Kors::Step s = kors.step(pt, 1.0, u[t]);
    EXPECT_NEAR(s.tau, tau[t], 1e-6) << t;
    EXPECT_NEAR(s.p, p[t], 1e-6) << t;
    EXPECT_EQ(s.kept, kept[t]) << t;
  }
  ASSERT_EQ(kors.size(), 5u);
  EXPECT_NEAR(1.0 / kors.probability(4), 1.163397, 1e-6);  // the last point's weight 1/p
}

// Sketched-KONS: KORS on the rescaled points ġ√η φ (β = 2, ε = 0.5), coin floor 0.2, coupled coins.
TEST(SketchedKons, CoupledCoinsRounds) {
  const auto loss = squared();
  KonsOptions o = options(kernels::KernelKind::kRbf, true);
  o.kors = KorsOptions{1.0, 0.5, 2.0};
  o.gamma_min = 0.2;
  KonsLearner l(o, *loss, 4, 0);
  l.set_uniforms({0.5, 0.9, 0.3, 0.95, 0.1, 0.7, 0.15});
  const float x[] = {0, 0, 1, 0.5, -1, 0.2, 0.9};
  const float y[] = {1, 1, -1, 0.5, 0.3, -0.2, -1};
  const double ytilde[] = {0, 1.333333, 0.606531, -0.178480, 0.778462, 0.537863, -0.587042};
  const double yhat[] = {0, 1, 0.606531, -0.178480, 0.778462, 0.537863, -0.587042};
  const double gdot[] = {-2, 0, 3.213061, -1.356960, 0.956924, 1.475726, 0.825915};
  const double kors_tau[] = {0.5, 0, 0.796509, 0.138048, 0.136879, 0.175346, 0.049922};
  const double kors_p[] = {1, 0, 1, 0.276096, 0.273757, 0.350691, 0.099844};
  const bool zk[] = {true, false, true, false, true, false, false};
  const bool zs[] = {true, false, true, false, true, false, true};
  const double tau[] = {1, 0.666667, 0.877374, 0.440377, 0.877276, 0.502606, 0.403864};
  const double beta[] = {2, -0.5, -2.430351, 1.356960, -0.867819, -1.475726, -0.875970};
  const size_t dict[] = {1, 1, 2, 2, 3, 3, 3};
  const size_t sketch[] = {1, 1, 2, 2, 3, 3, 4};
  double total = 0.0;
  for (int t = 0; t < 7; ++t) {
    const Prediction p = l.learn(point1(x[t], y[t]));
    const KonsLearner::Round& r = l.last_round();
    EXPECT_NEAR(r.ytilde, ytilde[t], 1e-5) << t;
    EXPECT_NEAR(r.yhat, yhat[t], 1e-5) << t;
    EXPECT_NEAR(r.gdot, gdot[t], 1e-5) << t;
    EXPECT_NEAR(r.kors_tau, kors_tau[t], 1e-5) << t;
    EXPECT_NEAR(r.kors_p, kors_p[t], 1e-5) << t;
    EXPECT_EQ(r.kors_kept, zk[t]) << t;
    EXPECT_EQ(r.sketched_in, zs[t]) << t;
    EXPECT_NEAR(r.tau, tau[t], 1e-5) << t;
    EXPECT_NEAR(r.beta, beta[t], 1e-5) << t;
    EXPECT_EQ(l.dictionary_size(), dict[t]) << t;
    EXPECT_EQ(l.sketch_size(), sketch[t]) << t;
    total += (p.value - y[t]) * (p.value - y[t]);
  }
  EXPECT_NEAR(total, 4.985178, 1e-5);
}

// With the linear kernel, kons is ONS with the clipping projection of eq. (1) in the primal (A⁻¹ by
// Sherman-Morrison): every ỹ_t equal, on random data whose predictions clip often (C = 0.5).
TEST(Kons, LinearKernelIsPrimalOns) {
  const auto loss = squared();
  KonsOptions o = options(kernels::KernelKind::kLinear);
  o.clip = 0.5;
  o.alpha = 0.7;
  o.eta = 0.4;
  KonsLearner l(o, *loss, 6, 0);
  const int d = 5;
  Eigen::MatrixXd ainv = Eigen::MatrixXd::Identity(d, d) / o.alpha;
  Eigen::VectorXd u = Eigen::VectorXd::Zero(d);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0.0, 1.0);
  int clipped = 0;
  for (int t = 0; t < 60; ++t) {
    std::vector<std::pair<uint64_t, float>> f;
    Eigen::VectorXd x = Eigen::VectorXd::Zero(d);
    for (int j = 0; j < d; ++j) {
      const float v = static_cast<float>(g(rng));
      if (t % 3 == 0 && j > 2) continue;  // some rounds in a subspace
      f.push_back({static_cast<uint64_t>(j), v});
      x(j) = v;
    }
    const float y = static_cast<float>(g(rng));
    l.learn(example(f, y));
    // The primal ONS round.
    const double yt = x.dot(u), yh = std::clamp(yt, -*o.clip, *o.clip), h = yt - yh;
    clipped += h != 0.0;
    const Eigen::VectorXd v = ainv * x;
    const double tau = x.dot(v);
    const Eigen::VectorXd w = u - (h / tau) * v;
    const double gd = loss->first_derivative(static_cast<float>(yh), y, LabelRange{});
    const double gamma = *o.eta * gd * gd, den = 1.0 + gamma * tau;
    ainv -= (gamma / den) * v * v.transpose();
    u = w - gd * v / den;
    EXPECT_NEAR(l.last_round().ytilde, yt, 1e-9 * std::max(1.0, std::fabs(yt))) << t;
    EXPECT_NEAR(l.last_round().tau, tau, 1e-9 * std::max(1.0, tau)) << t;
  }
  EXPECT_GT(clipped, 10);
}

// Lemma 3's first identity: log det(I + Γ^½KΓ^½/α) = Σ_t log(1 + γ_t τ̃_t), on a random Gaussian-kernel run.
TEST(Kons, LogDetIdentity) {
  const auto loss = squared();
  KonsOptions o = options(kernels::KernelKind::kRbf);
  o.alpha = 0.7;
  KonsLearner l(o, *loss, 6, 0);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_real_distribution<double> uy(-1.0, 1.0);
  std::vector<Eigen::Vector2d> pts;
  std::vector<double> gammas;
  double sum = 0.0;
  for (int t = 0; t < 12; ++t) {
    const Eigen::Vector2d x(g(rng), g(rng));
    l.learn(
        example({{0, static_cast<float>(x(0))}, {1, static_cast<float>(x(1))}}, static_cast<float>(uy(rng))));
    const auto& r = l.last_round();
    sum += std::log1p(r.gamma * r.tau);
    pts.emplace_back(static_cast<float>(x(0)), static_cast<float>(x(1)));
    gammas.push_back(r.gamma);
  }
  const int n = static_cast<int>(pts.size());
  Eigen::MatrixXd m(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      m(i, j) = std::sqrt(gammas[i] * gammas[j]) * std::exp(-(pts[i] - pts[j]).squaredNorm() / 2.0) / o.alpha;
  m += Eigen::MatrixXd::Identity(n, n);
  const double logdet =
      2.0 * Eigen::LLT<Eigen::MatrixXd>(m).matrixL().toDenseMatrix().diagonal().array().log().sum();
  EXPECT_NEAR(sum, logdet, 1e-10 * std::max(1.0, logdet));
  EXPECT_GT(sum, 1.0);
}

// Theorem 2: with β = 30 the leverage estimates stay within [τ, 3τ] (ρ = (1 + ε)/(1 - ε) = 3), τ the exact ridge
// leverage score of the newest point; Gaussian kernel h = 1, x ~ N(0, 0.5²), α = 1, ε = 0.5, T = 600.
TEST(Kors, EstimatesWithinTheorem2) {
  for (uint64_t seed : {1u, 2u}) {
    const kernels::Kernel k(kernels::KernelParams{kernels::KernelKind::kRbf, 2, 1.0, 1.0});
    Kors kors(k, KorsOptions{1.0, 0.5, 30.0});
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g(0.0, 0.5);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    std::vector<double> xs;
    Eigen::MatrixXd kinv = Eigen::MatrixXd::Zero(600, 600);  // (K_{t-1} + αI)⁻¹ in its top-left block
    int violations = 0;
    for (int t = 0; t < 600; ++t) {
      const double x = g(rng);
      const int n = static_cast<int>(xs.size());
      Eigen::VectorXd kx(n);
      for (int i = 0; i < n; ++i) kx(i) = std::exp(-(x - xs[i]) * (x - xs[i]) / 2.0);
      const Eigen::VectorXd v = kinv.topLeftCorner(n, n) * kx;
      const double q = 1.0 - kx.dot(v);  // k_tt = 1, α = 1
      const double tau = q / (1.0 + q);
      std::vector<kernels::SlotValue> c;
      if (x != 0.0) c.push_back({0, x});
      const Kors::Step s = kors.step(kernels::PointRef{c.data(), c.size(), x * x}, 1.0, unif(rng));
      if (s.tau < tau * (1 - 1e-12) || s.tau > 3.0 * tau * (1 + 1e-12)) ++violations;
      const double schur = 1.0 + q;  // k_tt + α - kᵀ(K + αI)⁻¹k
      kinv.topLeftCorner(n, n).noalias() += (v / schur) * v.transpose();
      kinv.col(n).head(n) = -v / schur;
      kinv.row(n).head(n) = -v.transpose() / schur;
      kinv(n, n) = 1.0 / schur;
      xs.push_back(x);
    }
    EXPECT_EQ(violations, 0) << "seed " << seed;
    EXPECT_GT(kors.size(), 100u);
    EXPECT_LT(kors.size(), 600u);
  }
}

// A coin floor of 1 takes every gradient into the sketch: sketched-kons is kons.
TEST(SketchedKons, FloorOneIsKons) {
  const auto loss = squared();
  KonsOptions o = options(kernels::KernelKind::kRbf, true);
  o.gamma_min = 1.0;
  KonsLearner s(o, *loss, 6, 3);
  KonsLearner k(options(kernels::KernelKind::kRbf), *loss, 6, 3);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int t = 0; t < 80; ++t) {
    const Example ex = example({{0, static_cast<float>(g(rng))}, {1, static_cast<float>(g(rng))}},
                               static_cast<float>(std::tanh(g(rng))));
    EXPECT_EQ(s.learn(ex).value, k.learn(ex).value) << t;
  }
  EXPECT_EQ(s.sketch_size(), k.sketch_size());
}

// --budget with landmarks spanning the data (linear kernel, 3 dimensions, budget 3, the axes first): each example
// is offered as a landmark before it is learned from, so every round equals exact kons (ONS with an isotropic prior
// is unchanged by the rotation to the landmarks' orthonormal coordinates).
TEST(Kons, BudgetSpanningTheDataIsExact) {
  const auto loss = squared();
  KonsOptions o = options(kernels::KernelKind::kLinear);
  o.clip = 0.8;
  KonsLearner exact(o, *loss, 6, 0);
  o.budget = 3;
  KonsLearner budget(o, *loss, 6, 2);
  std::mt19937_64 rng(8);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Example> data = {example({{0, 1.0f}}, 0.3f), example({{1, 1.0f}}, -0.2f),
                               example({{2, 1.0f}}, 0.5f)};
  for (int t = 0; t < 60; ++t)
    data.push_back(example({{0, static_cast<float>(0.6 * g(rng))},
                            {1, static_cast<float>(0.6 * g(rng))},
                            {2, static_cast<float>(0.6 * g(rng))}},
                           static_cast<float>(g(rng))));
  for (size_t t = 0; t < data.size(); ++t) {
    exact.learn(data[t]);
    budget.learn(data[t]);
    ASSERT_NEAR(budget.last_round().ytilde, exact.last_round().ytilde, 1e-9) << t;
  }
  EXPECT_EQ(budget.landmarks(), 3u);
}

TEST(Kons, RefusesBadOptions) {
  OptionValues v;
  v.set("kernel", "cubic", true);
  EXPECT_THROW(KonsOptions::from(v, false), ConfigError);
  OptionValues d;
  d.set("kernel", "poly", true);
  d.set("degree", "2.5", true);
  EXPECT_THROW(KonsOptions::from(d, false), ConfigError);
  OptionValues a;
  a.set("kons_alpha", "0", true);
  EXPECT_THROW(KonsOptions::from(a, false), ConfigError);
}

}  // namespace
}  // namespace lepus

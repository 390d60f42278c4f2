// --matrix sketch for wemm, laser and laser-noshrink (src/learners/minmax_sketch.h): with a rank at least
// that of the data the sketch is the full recursion of E. Moroshko's thesis ("New Min-Max Algorithms and
// Analysis for Online Regression", Technion 2013; Table 3.1 for WEMM, Table 5.1 for LASER) round by round;
// the guarantees of the low-rank forms (WEMM: Σ ⪯ I/b, so m < 1 whenever ‖x‖² < b; LASER: λ, δ > 0, Q
// orthonormal, the isotropic part follows the drift map until the first truncation); on a 200-dimensional
// rank-20-plus-noise stream a rank-30 sketch loses at most 2% against full; 10^6 rounds with tiny and huge
// inputs stay finite and symmetric; the other rows have no sketch; a model of another rank is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "health_stream.h"
#include "learners/minmax.h"
#include "lepus/errors.h"
#include "lepus/loss.h"
#include "long_run.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

std::unique_ptr<MinmaxLearner> make(const std::string& name,
                                    std::vector<std::pair<std::string, std::string>> options,
                                    const std::string& matrix, int bits = 10) {
  const LearnerRow* row = find_learner(name);
  if (!row) throw std::runtime_error("no row " + name);
  OptionValues v;
  for (const auto& spec : row->options)
    if (spec.kind != OptionSpec::Kind::kFlag && !spec.default_value.empty())
      v.set(spec.name, spec.default_value, false);
  for (const auto& [k, val] : options) v.set(k, val, true);
  v.set("matrix", matrix, true);
  LossOptions lo;
  lo.name = "squared";
  static const std::unique_ptr<Loss> loss = make_loss(lo);
  std::unique_ptr<Learner> l = row->make(LearnerContext{v, *loss, bits, false});
  auto* m = dynamic_cast<MinmaxLearner*>(l.get());
  if (!m) throw std::runtime_error("not a MinmaxLearner");
  l.release();
  return std::unique_ptr<MinmaxLearner>(m);
}

Example example(const Eigen::VectorXd& x, double y, float weight = 1.0f) {
  Example ex;
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (x(i) != 0.0) ex.features.push_back(Feature{static_cast<uint64_t>(i), static_cast<float>(x(i))});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = static_cast<float>(y);
  ex.labeled = true;
  ex.weight = weight;
  return ex;
}

// x = (U s + noise ε) / ‖·‖ with U a d x r orthonormal basis, s ~ N(0, I_r) / √r, ε ~ N(0, I_d) / √d (noise =
// 0: exactly rank r); y = u·x + 0.1 N(0, 1) with u = U β, β ~ N(0, I_r). Unit-norm inputs, so wemm's default
// b = 2 keeps m <= 1/2.
struct Stream {
  Stream(int d, int r, double noise, uint64_t seed) : gen(seed), d(d), r(r), noise(noise) {
    Eigen::MatrixXd g(d, r);
    for (double& v : g.reshaped()) v = n01(gen);
    U = Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ() * Eigen::MatrixXd::Identity(d, r);
    Eigen::VectorXd beta(r);
    for (double& v : beta) v = n01(gen);
    u = U * beta;
  }
  Example next(float weight = 1.0f) {
    Eigen::VectorXd s(r), e(d);
    for (double& v : s) v = n01(gen) / std::sqrt(r);
    for (double& v : e) v = n01(gen) / std::sqrt(d);
    Eigen::VectorXd x = U * s + noise * e;
    x /= x.norm();
    for (double& v : x) v = static_cast<float>(v);  // the learner sees float features
    return example(x, u.dot(x) + 0.1 * n01(gen), weight);
  }
  std::mt19937_64 gen;
  std::normal_distribution<double> n01;
  int d, r;
  double noise;
  Eigen::MatrixXd U;
  Eigen::VectorXd u;
};

// Relative closeness per round, 1e-7 (an absolute floor of 1e-7 for numbers near 0).
void close(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-7 * std::max(1.0, std::fabs(want))) << what;
}

TEST(MinmaxSketch, EqualsFullWhenTheRankCoversTheData) {
  for (const char* rule : {"wemm", "laser", "laser-noshrink"}) {
    for (const char* rank : {"6", "9"}) {  // the data have rank 6; wemm compresses every 6 (9) rounds
      const std::string what = std::string(rule) + " rank " + rank;
      auto full = make(rule, {}, "full");
      auto sketch = make(rule, {{"rank", rank}}, "sketch");
      Stream s(40, 6, 0.0, 3);
      for (int t = 0; t < 400; ++t) {
        const Example ex = s.next(t % 7 == 3 ? 2.5f : 1.0f);  // importance weights as (√k x, √k y)
        const MinmaxLearner::Round a = full->evaluate(ex), b = sketch->evaluate(ex);
        close(b.yhat, a.yhat, what + " yhat t=" + std::to_string(t));
        close(b.m, a.m, what + " m t=" + std::to_string(t));
        full->learn(ex);
        sketch->learn(ex);
      }
      for (uint64_t i = 0; i < 40; ++i) {
        close(sketch->weight(i), full->weight(i), what + " w" + std::to_string(i));
        for (uint64_t j = 0; j < 40; j += 7) close(sketch->sigma(i, j), full->sigma(i, j), what + " Sigma");
      }
      EXPECT_EQ(sketch->safeguard_count(), full->safeguard_count()) << what;  // wemm's guard: weight 2.5
      EXPECT_LE(sketch->sketch()->columns(), std::stoi(rank) * (rule == std::string("wemm") ? 2 : 1)) << what;
    }
  }
}

// WEMM: Σ = I/b − ZZᵀ ⪯ I/b after every round, compressions included, so m <= ‖x‖²/b and inputs with ‖x‖²
// just below b never need the guard; the sketched Σ stays positive semi-definite.
TEST(MinmaxSketch, WemmSigmaStaysBelowIOverB) {
  const double b = 2.0;
  auto l = make("wemm", {{"rank", "4"}, {"mm_b", "2"}}, "sketch");
  Stream s(30, 30, 0.0, 5);  // full-rank data: every compression drops mass
  int compressions = 0;
  Eigen::Index cols = 0;
  for (int t = 0; t < 300; ++t) {
    Example ex = s.next();
    for (Feature& f : ex.features) f.value *= static_cast<float>(std::sqrt(0.999 * b));  // ‖x‖² = 0.999 b
    const MinmaxLearner::Round r = l->evaluate(ex);
    EXPECT_LT(r.m, 0.999 + 1e-6) << t;  // ‖x‖²/b, up to the float features
    EXPECT_GE(r.m, 0.0) << t;
    l->learn(ex);
    const Eigen::MatrixXd z = l->sketch()->basis();
    const double top = lepus::SymEigen(z.transpose() * z).eigenvalues().maxCoeff();
    EXPECT_LE(top, (1.0 + 1e-9) / b) << "ZZᵀ ⪯ I/b, t=" << t;
    compressions += l->sketch()->columns() < cols ? 1 : 0;
    cols = l->sketch()->columns();
  }
  EXPECT_GT(compressions, 10);
  EXPECT_EQ(l->safeguard_count(), 0u) << "the m < 1 guard never fired";
}

// LASER: λ_j, δ > 0 and Q orthonormal; the isotropic precision is the drift map's, 1/δ_t = (c − b)/(bc) +
// t/c, until the first truncation, and never below it after (a truncated pair's excess over δ is spread over
// the isotropic part).
TEST(MinmaxSketch, LaserEigenFormStaysValid) {
  const double b = 1.0, c = 100.0;
  auto l = make("laser", {{"rank", "5"}, {"mm_b", "1"}, {"mm_c", "100"}}, "sketch");
  Stream s(30, 30, 0.0, 7);
  for (int t = 1; t <= 500; ++t) {
    l->learn(s.next());
    const MinmaxSketch& k = *l->sketch();
    const double drift_only = (c - b) / (b * c) + t / c;
    if (t <= 5)
      EXPECT_NEAR(1.0 / k.delta(), drift_only, 1e-12 * t) << t;
    else
      EXPECT_LE(1.0 / k.delta(), drift_only * (1.0 + 1e-12)) << t;
    ASSERT_GT(k.delta(), 0.0);
    for (double v : k.lambda()) EXPECT_GT(v, 0.0) << t;
    const Eigen::MatrixXd q = k.basis();
    EXPECT_LT((q.transpose() * q - Eigen::MatrixXd::Identity(q.cols(), q.cols())).norm(), 1e-12) << t;
  }
  EXPECT_EQ(l->sketch()->columns(), 5);
}

// The acceptance check of the sketch: a 200-dimensional stream of a rank-20 signal plus isotropic noise (a
// tenth of the input's energy), wemm and laser at rank 30 within 2% of full in cumulative squared loss.
TEST(MinmaxSketch, Rank20PlusNoiseAtRank30IsWithinTwoPercentOfFull) {
  for (const char* rule : {"wemm", "laser"}) {
    auto full = make(rule, {}, "full");
    auto sketch = make(rule, {{"rank", "30"}}, "sketch");
    Stream s(200, 20, std::sqrt(0.1), 11);
    double lf = 0.0, ls = 0.0;
    for (int t = 0; t < 2000; ++t) {
      const Example ex = s.next();
      const double yf = full->learn(ex).value, ys = sketch->learn(ex).value;
      lf += (yf - ex.label) * (yf - ex.label);
      ls += (ys - ex.label) * (ys - ex.label);
    }
    EXPECT_LE(ls, 1.02 * lf) << rule << ": full " << lf << ", sketch " << ls;
  }
}

// 10^6 rounds, d = 10, inputs of norm 1e-6 and 1e6, rank 4 (every round truncates): predictions and weights
// stay finite, Σ symmetric; wemm's ZZᵀ stays ⪯ I/b; LASER keeps λ, δ > 0 and Q orthonormal, its precision
// symmetric positive definite.
struct Health {
  const char* rule;
  double scale;
};
class MinmaxSketchHealth : public ::testing::TestWithParam<Health> {};

TEST_P(MinmaxSketchHealth, LongRunStaysFiniteAndSymmetric) {
  const Health h = GetParam();
  const int d = 10;
  auto l = make(h.rule, {{"rank", "4"}}, "sketch", 6);
  test::health_stream(*l, d, h.scale, [](const Example&) {});
  const MinmaxSketch& k = *l->sketch();
  Eigen::MatrixXd S(d, d), D(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) S(i, j) = l->sigma(i, j), D(i, j) = k.precision(i, j);
  for (int i = 0; i < d; ++i) {
    EXPECT_TRUE(std::isfinite(l->weight(i)));
    for (int j = 0; j < d; ++j) {
      EXPECT_TRUE(std::isfinite(S(i, j)));
      EXPECT_EQ(S(i, j), S(j, i));
    }
  }
  const Eigen::MatrixXd q = k.basis();
  if (k.form() == MinmaxSketch::Form::kWemm) {
    const double b = l->options().b;
    EXPECT_LE(lepus::SymEigen(q.transpose() * q).eigenvalues().maxCoeff(), (1.0 + 1e-9) / b);
    EXPECT_GE(lepus::SymEigen(S).eigenvalues().minCoeff(), -1e-12 / b);
  } else {
    EXPECT_GT(k.delta(), 0.0);
    for (double v : k.lambda()) EXPECT_GT(v, 0.0);
    EXPECT_LT((q.transpose() * q - Eigen::MatrixXd::Identity(q.cols(), q.cols())).norm(), 1e-9);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) EXPECT_EQ(D(i, j), D(j, i));
    EXPECT_GT(lepus::SymEigen(D).eigenvalues().minCoeff(), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(All, MinmaxSketchHealth,
                         ::testing::Values(Health{"wemm", 1e-6}, Health{"wemm", 1e6}, Health{"laser", 1e-6},
                                           Health{"laser", 1e6}, Health{"laser-noshrink", 1e6}),
                         [](const ::testing::TestParamInfo<Health>& i) {
                           std::string n =
                               std::string(i.param.rule) + (i.param.scale < 1.0 ? "_tiny" : "_huge");
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(MinmaxSketch, OnlyWemmAndLaserHaveASketch) {
  for (const auto& rule : minmax_rules()) {
    if (rule.sketch) {
      EXPECT_NO_THROW(make(rule.name, {}, "sketch")) << rule.name;
      continue;
    }
    try {
      make(rule.name, {}, "sketch");
      ADD_FAILURE() << rule.name << " accepted --matrix sketch";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("full, diag)"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(make("wemm", {{"rank", "0"}}, "sketch"), ConfigError);
  for (const char* name : {"wemm", "laser", "laser-noshrink"}) EXPECT_TRUE(minmax_rule(name).sketch) << name;
}

TEST(MinmaxSketch, ModelOfAnotherRankOrModeIsRefused) {
  auto a = make("laser", {{"rank", "3"}}, "sketch");
  Stream s(10, 10, 0.0, 1);
  for (int t = 0; t < 20; ++t) a->learn(s.next());
  ModelWriter w;
  a->save(w);
  for (const auto& [rank, mode] : {std::pair<const char*, const char*>{"4", "sketch"}, {"3", "full"}}) {
    auto r = make("laser", {{"rank", rank}}, mode);
    ModelReader in(w.bytes().data(), w.bytes().size(), "test");
    EXPECT_THROW(r->load(in), ModelFormatError) << rank << " " << mode;
  }
  auto same = make("laser", {{"rank", "3"}}, "sketch");
  ModelReader in(w.bytes().data(), w.bytes().size(), "test");
  same->load(in);
  const Example ex = s.next();
  EXPECT_EQ(same->predict(ex).value, a->predict(ex).value);
}

}  // namespace
}  // namespace lepus

// aioli against hand-computed oracles (double precision, relative 1e-5) of Jézéquel, Gaillard, Rudi, "Efficient
// improper learning for online logistic regression" (COLT 2020): a d = 2 run (O-A1), the improper shrinkage at a
// small ridge (O-A2), the first rounds of the paper's Section 5 data (O-A4); and its properties: label-flip
// antisymmetry, the root's bracket, bounded surrogate coefficients at extreme margins, Theorem 1's regret bound
// on every run, the diagonal mode's closed form, a sketch of rank >= the data's equal to the full matrix, and
// numerical health over 10^6 rounds.
#include "learners/aioli.h"

#include <gtest/gtest.h>
#include "long_run.h"

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <vector>

#include "labeled_example.h"
#include "losses/losses.h"
#include "sketch/full_matrix.h"

namespace lepus {
namespace {

const LogisticLoss kLoss(-1.0f, 1.0f);

using testing::example;

AioliOptions opts(double b, double lambda, double r, MatrixKind kind = MatrixKind::kFull,
                  uint32_t rank = 10) {
  AioliOptions o;
  o.radius = b;
  o.lambda = lambda;
  o.r = r;
  o.matrix = kind;
  o.rank = rank;
  o.scale = false;  // the paper's algorithm, which its oracles are of
  return o;
}

double logistic(double z, double y) { return std::log1p(std::exp(-y * z)); }

// Relative 1e-5, or half a unit of the oracle's sixth printed decimal for small values.
void expect_rel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + 5e-7) << what;
}

// O-A1: d = 2, lambda = 1, B = 1, R = 1.
TEST(Aioli, OracleOA1) {
  AioliLearner l(opts(1, 1, 1), kLoss, 4);
  const std::vector<Example> xs = {example({{0, 1.0}}, 1),
                                   example({{0, 0.6}, {1, 0.8}}, -1),
                                   example({{1, 1.0}}, 1),
                                   example({{0, -0.5}, {1, 0.5}}, 1),
                                   example({{0, 0.8}, {1, -0.6}}, -1),
                                   example({{0, 0.3}, {1, 0.4}}, 1)};
  const double s[] = {1, 0.978824, 0.962420, 0.470155, 0.914946, 0.222193};
  const double c[] = {0, 0.141176, -0.200489, -0.019950, -0.120213, 0.055440};
  const double yhat[] = {0, 0.113445, -0.161674, -0.017851, -0.097849, 0.052523};
  const double kappa[] = {0.0625, 0.062299, 0.062093, 0.062495, 0.062351, 0.062457};
  const double beta[] = {0.25, -0.257098, 0.260126, 0.251116, -0.243880, 0.246717};
  const double cum[] = {0.693147, 1.444625, 2.221873, 2.923985, 3.569404, 4.236635};
  double total = 0.0;
  for (int t = 0; t < 6; ++t) {
    const std::string at = "round " + std::to_string(t + 1);
    const AioliLearner::Round r = l.evaluate(xs[t]);
    expect_rel(r.s, s[t], at + " s");
    expect_rel(r.c, c[t], at + " c");
    expect_rel(r.yhat, yhat[t], at + " yhat");
    const AioliStep st = aioli_step(xs[t].label * r.yhat, xs[t].label, 2.0);
    expect_rel(st.kappa, kappa[t], at + " kappa");
    expect_rel(st.beta, beta[t], at + " beta");
    const Prediction p = l.learn(xs[t]);
    EXPECT_NEAR(p.raw, r.yhat, 1e-6);
    total += logistic(p.raw, xs[t].label);
    expect_rel(total, cum[t], at + " cumulative loss");
    const auto& full = dynamic_cast<const FullMatrix&>(l.matrix());
    auto inv = [&](uint64_t i, uint64_t j) {
      return full.inverse(full.index().find(i), full.index().find(j));
    };
    if (t == 0) {
      expect_rel(inv(0, 0), 0.941176, "A^-1 after 1");
      EXPECT_NEAR(l.b(0), 0.25, 1e-12);
    } else if (t == 1) {
      expect_rel(inv(0, 0), 0.922452, "A^-1_00 after 2");
      expect_rel(inv(0, 1), -0.026527, "A^-1_01 after 2");
      expect_rel(inv(1, 1), 0.962420, "A^-1_11 after 2");
      expect_rel(l.b(0), 0.095741, "b_0 after 2");
      expect_rel(l.b(1), -0.205678, "b_1 after 2");
    } else if (t == 5) {
      expect_rel(inv(0, 0), 0.872586, "A^-1_00 after 6");
      expect_rel(inv(0, 1), 0.006187, "A^-1_01 after 6");
      expect_rel(inv(1, 1), 0.869588, "A^-1_11 after 6");
      expect_rel(l.b(0), -0.150905, "b_0 after 6");
      expect_rel(l.b(1), 0.425020, "b_1 after 6");
    }
  }
}

// O-A2: d = 1, lambda = 0.001, B = R = 1, x = 1; six +1 labels then a -1. Round 2: c = 3.937 but yhat = 0.833.
TEST(Aioli, OracleOA2ImproperShrinkage) {
  AioliLearner l(opts(1, 0.001, 1), kLoss, 4);
  const double s[] = {1000, 15.7480, 8.59919, 6.34328, 5.23662, 4.57108, 4.12101};
  const double c[] = {0, 3.93701, 3.83057, 3.83800, 3.87445, 3.91782, 3.96148};
  const double yhat[] = {0, 0.833421, 1.329826, 1.670697, 1.923599, 2.121501, 2.282508};
  const double loss[] = {0.693147, 0.360858, 0.234695, 0.172369, 0.136348, 0.113196, 2.379660};
  for (int t = 0; t < 7; ++t) {
    const Example ex = example({{0, 1.0}}, t < 6 ? 1.0f : -1.0f);
    const AioliLearner::Round r = l.evaluate(ex);
    expect_rel(r.s, s[t], "s");
    expect_rel(r.c, c[t], "c");
    expect_rel(r.yhat, yhat[t], "yhat");
    expect_rel(logistic(l.learn(ex).raw, ex.label), loss[t], "loss");
  }
}

// O-A4: the paper's Section 5 data, n = 1000 (B = ln 1000, lambda = 1/B^2, R = 1), a fixed sequence.
TEST(Aioli, OracleOA4SectionFiveData) {
  const double b = std::log(1000.0);
  AioliLearner l(opts(b, 1.0 / (b * b), 1), kLoss, 4);
  const double x1 = 1 - std::sqrt(0.01) / (2 * b), x2 = std::sqrt(0.01) / b;  // 0.992762, 0.014476
  const std::vector<Example> xs = {example({{0, x2}}, -1), example({{0, x2}}, -1), example({{0, x1}}, 1),
                                   example({{0, x2}}, -1), example({{0, x1}}, 1),  example({{0, x2}}, -1)};
  const double yhat[] = {0, -0.002493, -0.026864, 0.096478, 0.889826, 0.115956};
  double total = 0.0;
  for (int t = 0; t < 6; ++t) {
    const Prediction p = l.learn(xs[t]);
    expect_rel(p.raw, yhat[t], "round " + std::to_string(t + 1));
    total += logistic(p.raw, xs[t].label);
  }
  EXPECT_NEAR(total, 3.931177, 1e-5);
}

// Flipping every label flips every prediction (b changes sign, A does not).
TEST(Aioli, LabelFlipAntisymmetry) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g;
  AioliLearner a(opts(2, 0.5, 3), kLoss, 6), b(opts(2, 0.5, 3), kLoss, 6);
  for (int t = 0; t < 300; ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t i = 0; i < 5; ++i) f.push_back({i, g(rng)});
    const float y = g(rng) > 0 ? 1.0f : -1.0f;
    const double pa = a.learn(example(f, y)).raw, pb = b.learn(example(f, -y)).raw;
    ASSERT_NEAR(pa, -pb, 1e-12 * std::max(1.0, std::fabs(pa))) << t;
  }
}

// The root: f(z) = z + (s/2) tanh(z/2) - c = 0 with sign(z) = sign(c), |z| <= |c|, |z - c| <= s/2.
TEST(Aioli, RootLiesInItsBracket) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> e(-8, 8);
  for (int k = 0; k < 20000; ++k) {
    const double s = std::pow(10.0, e(rng)), c = (k % 2 ? 1 : -1) * std::pow(10.0, e(rng));
    const double z = aioli_root(s, c);
    ASSERT_TRUE(std::isfinite(z));
    ASSERT_GE(z * c, 0.0);
    ASSERT_LE(std::fabs(z), std::fabs(c));
    ASSERT_LE(std::fabs(z - c), s / 2 + 1e-15 * std::max(std::fabs(c), s));
    ASSERT_LE(std::fabs(z + s / 2 * std::tanh(z / 2) - c), 1e-12 * std::max(1.0, std::fabs(c)))
        << s << " " << c;
  }
  EXPECT_EQ(aioli_root(5.0, 0.0), 0.0);
  EXPECT_EQ(aioli_root(0.0, 3.0), 3.0);
}

// Surrogate coefficients: kappa in (0, 1/(8(1+BR))], |beta| <= (1 + 0.223872/(1+BR))/2, finite at any margin.
TEST(Aioli, SurrogateCoefficientsAtExtremeMargins) {
  EXPECT_DOUBLE_EQ(aioli_step(0, 1, 2).kappa, 0.0625);
  EXPECT_DOUBLE_EQ(aioli_step(0, 1, 2).beta, 0.25);
  expect_rel(aioli_step(40, 1, 2).kappa, 1.062089e-18, "kappa(40)");
  expect_rel(aioli_step(-40, 1, 2).kappa, 1.062089e-18, "kappa(-40)");
  EXPECT_NEAR(aioli_step(-40, 1, 2).beta, 0.5, 1e-12);
  expect_rel(aioli_step(40, 1, 2).beta, 4.46e-17, "beta(40)");  // the oracle prints 3 digits
  EXPECT_EQ(aioli_step(-800, 1, 2).kappa, 0.0);
  EXPECT_EQ(aioli_step(-800, 1, 2).beta, 0.5);
  EXPECT_EQ(aioli_step(800, 1, 2).kappa, 0.0);
  EXPECT_EQ(aioli_step(800, 1, 2).beta, 0.0);
  for (double m = -1000; m <= 1000; m += 0.37) {
    for (double cr : {1.0, 2.0, 11.0}) {
      const AioliStep st = aioli_step(m, -1, cr);
      ASSERT_TRUE(std::isfinite(st.kappa) && std::isfinite(st.beta)) << m;
      ASSERT_GE(st.kappa, 0.0);
      ASSERT_LE(st.kappa, 1.0 / (8 * cr) * (1 + 1e-15));
      ASSERT_LE(std::fabs(st.beta), 0.5 * (1 + 0.223872 / cr) + 1e-12);
    }
  }
}

// Theorem 1 on every run of the paper's Section 5 distribution (d = 1, R = 1, B = ln n, lambda = 1/B^2): the
// regret against every theta on a grid of [-B, B] is at most lambda theta^2 + d(1+BR) log(1 + nR^2/(8d(1+BR)lambda)),
// and at most its per-run form lambda theta^2 + (1+BR) log(A_n / lambda).
TEST(Aioli, RegretWithinTheoremOneOnEveryRun) {
  const int n = 2000;
  const double b = std::log(static_cast<double>(n)), eps = 0.01, lambda = 1 / (b * b);
  for (int chi : {-1, 1}) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      std::mt19937_64 rng(seed * 7 + (chi > 0));
      std::uniform_real_distribution<double> u(0, 1);
      const double p = std::sqrt(eps) / (2 * b) + chi * eps / b;
      AioliLearner l(opts(b, lambda, 1), kLoss, 4);
      std::vector<std::pair<double, double>> seen;
      double total = 0.0;
      for (int t = 0; t < n; ++t) {
        const bool pos = u(rng) < p;
        const double x = pos ? 1 - std::sqrt(eps) / (2 * b) : std::sqrt(eps) / b;
        const float y = pos ? 1.0f : -1.0f;
        total += logistic(l.learn(example({{0, x}}, y)).raw, y);
        seen.push_back({static_cast<float>(x), y});
      }
      const auto& full = dynamic_cast<const FullMatrix&>(l.matrix());
      const double a_n = 1.0 / full.inverse(0, 0);
      const double bound = (1 + b) * std::log(1 + n / (8 * (1 + b) * lambda));
      const double per_run = (1 + b) * std::log(a_n / lambda);
      EXPECT_LE(per_run, bound + 1e-9);
      for (int k = -200; k <= 200; ++k) {
        const double theta = b * k / 200.0;
        double best = 0.0;
        for (const auto& [x, y] : seen) best += logistic(theta * x, y);
        const double regret = total - best;
        ASSERT_LE(regret, lambda * theta * theta + per_run + 1e-9) << "theta " << theta << " seed " << seed;
      }
    }
  }
}

// diag keeps a_j = lambda + sum kappa x_j^2 and b_j: s = sum x_j^2/a_j, c = sum x_j b_j/a_j.
TEST(Aioli, DiagonalModeIsItsClosedForm) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> g;
  const double lambda = 0.3, cr = 1 + 2.0 * 4.0;
  AioliLearner l(opts(2, lambda, 4, MatrixKind::kDiag), kLoss, 6);
  std::vector<double> a(64, lambda), bv(64, 0.0);
  for (int t = 0; t < 500; ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t i = t % 3; i < 40; i += 3 + t % 5) f.push_back({i, g(rng)});
    const Example ex = example(f, g(rng) > 0.3 ? 1.0f : -1.0f, t % 4 == 0 ? 2.0f : 1.0f);
    double s = 0, c = 0;
    for (const auto& [i, v] : f) {
      const double x = static_cast<float>(v);
      s += x * x / a[i];
      c += x * bv[i] / a[i];
    }
    const AioliLearner::Round r = l.evaluate(ex);
    ASSERT_NEAR(r.s, s, 1e-12 * s);
    ASSERT_NEAR(r.c, c, 1e-12 * std::max(1.0, std::fabs(c)));
    ASSERT_NEAR(r.yhat, aioli_root(s, c), 1e-12 * std::max(1.0, std::fabs(c)));
    const double y = ex.label;
    const AioliStep st = aioli_step(y * static_cast<float>(r.yhat), y, cr);
    l.learn(ex);
    for (const auto& [i, v] : f) {
      const double x = static_cast<float>(v);
      a[i] += ex.weight * st.kappa * x * x;
      bv[i] += ex.weight * st.beta * x;
    }
  }
}

// A sketch whose rank is at least the data's dimension is the full matrix.
TEST(Aioli, SketchOfFullRankEqualsFull) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g;
  AioliLearner full(opts(1, 1, 3), kLoss, 6), sketch(opts(1, 1, 3, MatrixKind::kSketch, 8), kLoss, 6);
  for (int t = 0; t < 400; ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t i = 0; i < 6; ++i)
      if (g(rng) > -0.5) f.push_back({i * 7, g(rng)});
    const Example ex = example(f, g(rng) > 0 ? 1.0f : -1.0f);
    const double a = full.learn(ex).raw, b = sketch.learn(ex).raw;
    ASSERT_NEAR(a, b, 1e-6 * std::max(1.0, std::fabs(a))) << t;
  }
}

// 10^6 rounds, d = 20, values from 1e-6 to 1e6: every prediction finite, A^-1 symmetric, no safeguard needed
// beyond float's range.
TEST(Aioli, MillionRoundsStayFiniteAndSymmetric) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> e(-6, 6), u(0, 1);
  AioliLearner l(opts(1, 1, 1e6 * std::sqrt(20.0)), kLoss, 6);
  const double scale[] = {1e-6, 1e-3, 1, 1e3, 1e6};
  for (int t = 0; t < test::long_run(1000000); ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t i = 0; i < 20; ++i)
      if (u(rng) < 0.25) f.push_back({i, scale[i % 5] * (u(rng) * 2 - 1)});
    const Prediction p = l.learn(example(f, u(rng) < 0.5 ? 1.0f : -1.0f));
    ASSERT_TRUE(std::isfinite(p.raw)) << t;
  }
  const auto& full = dynamic_cast<const FullMatrix&>(l.matrix());
  for (uint32_t i = 0; i < full.size(); ++i)
    for (uint32_t j = 0; j < full.size(); ++j) {
      ASSERT_TRUE(std::isfinite(full.inverse(i, j)));
      ASSERT_EQ(full.inverse(i, j), full.inverse(j, i));
    }
}

TEST(Aioli, OptionsAreChecked) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{{"aioli_B", "0"},
                                                                                    {"aioli_lambda", "-1"},
                                                                                    {"aioli_R", "nan"},
                                                                                    {"matrix", "dense"},
                                                                                    {"rank", "0"},
                                                                                    {"rank", "2.5"},
                                                                                    {"aioli_scale", "max"}}) {
    OptionValues v;
    v.set(name, value, true);
    EXPECT_THROW(AioliOptions::from(v), ConfigError) << name << " " << value;
  }
}

// --aioli_scale feature (the default) against the published algorithm: a stream in which the first example
// already holds each coordinate's largest |x| is, scaled, exactly the published AIOLI on x / s; and the scaled
// learner's predictions do not change when any column is multiplied by a constant (1e-3 ... 1e3), in every
// matrix mode.
std::vector<Example> scale_stream(const std::vector<double>& column_factor, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Example> xs;
  for (int t = 0; t < n; ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    double score = 0.0;
    for (uint64_t j = 0; j < column_factor.size(); ++j) {
      if (t > 0 && rng() % 3 == 0) continue;                          // sparse after the first
      const double v = t == 0 ? 4.0 : std::clamp(g(rng), -4.0, 4.0);  // the first holds each |x|'s largest
      score += (j % 2 ? 1.0 : -0.7) * v;
      f.emplace_back(j, v * column_factor[j]);
    }
    xs.push_back(example(f, score + g(rng) > 0 ? 1 : -1));
  }
  return xs;
}

TEST(AioliScale, IsThePublishedAlgorithmOnScaledInputs) {
  const std::vector<double> factor = {1.0, 250.0, 0.01, 3.0, 1e3};
  const std::vector<Example> raw = scale_stream(factor, 300, 5);
  AioliOptions scaled = opts(1, 1, 1);
  scaled.scale = true;
  scaled.r.reset();
  AioliOptions published = opts(1, 1, 1);
  published.r.reset();
  AioliLearner a(scaled, kLoss, 6), b(published, kLoss, 6);
  for (const Example& x : raw) {
    Example u = x;  // x / s with s = 4 |factor|: what the scaled learner feeds its matrix
    for (Feature& f : u.features)
      f.value = static_cast<float>(f.value / static_cast<double>(static_cast<float>(4.0 * factor[f.index])));
    const double pa = a.learn(x).raw, pb = b.learn(u).raw;
    ASSERT_NEAR(pa, pb, 1e-5 * std::max(1.0, std::fabs(pb)));
  }
}

// Both rules: the logistic one and the squared loss's (the Vovk-Azoury-Warmuth forecaster).
TEST(AioliScale, PredictionsUnchangedByRescalingAnyColumn) {
  const std::vector<double> ones(6, 1.0), factor = {1e-3, 1.0, 255.0, 0.5, 1e3, 7.0};
  const SquaredLoss squared;
  for (const Loss* loss : {static_cast<const Loss*>(&kLoss), static_cast<const Loss*>(&squared)})
    for (MatrixKind kind : {MatrixKind::kFull, MatrixKind::kDiag, MatrixKind::kSketch, MatrixKind::kAuto}) {
      SCOPED_TRACE(std::string(loss->name()));
      AioliOptions o;  // every default: B = 1, lambda = 1, R the largest norm so far, scale feature
      o.matrix = kind;
      o.rank = 3;
      AioliLearner a(o, *loss, 6), b(o, *loss, 6);
      const std::vector<Example> xs = scale_stream(ones, 400, 11), ys = scale_stream(factor, 400, 11);
      double worst = 0.0;
      for (size_t t = 0; t < xs.size(); ++t) {
        const double pa = a.learn(xs[t]).raw, pb = b.learn(ys[t]).raw;
        worst = std::max(worst, std::fabs(pa - pb) / std::max(1.0, std::fabs(pa)));
      }
      EXPECT_LT(worst, 1e-5) << matrix_kind_name(kind);
      AioliOptions none = o;  // the published algorithm is not invariant (the test can fail)
      none.scale = false;
      AioliLearner c(none, *loss, 6), d(none, *loss, 6);
      double diff = 0.0;
      for (size_t t = 0; t < xs.size(); ++t)
        diff = std::max(diff, std::fabs(static_cast<double>(c.learn(xs[t]).raw) - d.learn(ys[t]).raw));
      EXPECT_GT(diff, 0.1) << matrix_kind_name(kind);
    }
}

// The scales are state: a run saved and resumed predicts as the uninterrupted one; a model saved without them
// (state version 2, before scales existed) loads as the published algorithm.
// Both learners through xs[0, n); the second's state, saved.
ModelWriter saved_after(AioliLearner& whole, AioliLearner& first, const std::vector<Example>& xs, int n) {
  for (int t = 0; t < n; ++t) {
    whole.learn(xs[t]);
    first.learn(xs[t]);
  }
  ModelWriter w;
  first.save(w);
  return w;
}

TEST(AioliScale, ScalesAreSavedAndResumed) {
  const std::vector<Example> xs = scale_stream({1.0, 250.0, 0.01}, 200, 3);
  AioliOptions o;
  AioliLearner whole(o, kLoss, 6), first(o, kLoss, 6);
  const ModelWriter w = saved_after(whole, first, xs, 100);
  AioliLearner resumed(o, kLoss, 6);
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  resumed.load(r);
  for (size_t t = 100; t < xs.size(); ++t) ASSERT_EQ(whole.learn(xs[t]).raw, resumed.learn(xs[t]).raw) << t;
}

// --aioli_sketch_diagonal: the sketch's diagonal correction is state. A run resumed from a model predicts as
// the uninterrupted one and takes the model's c (not its own); a state of version 3 (before the correction)
// loads with c = 0, the plain sketch it was. The correction changes what a low-rank sketch predicts.
TEST(AioliSketchDiagonal, IsSavedResumedAndOlderStatesArePlain) {
  const std::vector<Example> xs = scale_stream({1.0, 250.0, 0.01, 3.0, 40.0, 0.5, 7.0}, 400, 5);
  AioliOptions corrected;
  corrected.matrix = MatrixKind::kSketch;
  corrected.rank = 2;
  corrected.sketch_diagonal = 2.0;
  AioliOptions plain = corrected;
  plain.sketch_diagonal = 0.0;
  AioliLearner whole(corrected, kLoss, 8), first(corrected, kLoss, 8), other(plain, kLoss, 8);
  bool differs = false;
  for (int t = 0; t < 200; ++t) {
    const double a = whole.learn(xs[t]).raw;
    first.learn(xs[t]);
    differs = differs || a != other.learn(xs[t]).raw;
  }
  EXPECT_TRUE(differs);
  ModelWriter w;
  first.save(w);
  AioliLearner resumed(plain, kLoss, 8);  // this run's own c is 0: the model's 2 applies
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  resumed.load(r);
  for (size_t t = 200; t < xs.size(); ++t) ASSERT_EQ(whole.learn(xs[t]).raw, resumed.learn(xs[t]).raw) << t;

  // Version 3: the same layout without the f64 c and the u8 rule after the rank (at byte 42: version, B,
  // lambda, R flag, R, the largest norm, the matrix kind, the rank).
  ModelWriter pw;
  other.save(pw);
  std::vector<uint8_t> v3 = pw.bytes();
  ASSERT_GT(v3.size(), 51u);
  v3[0] = 3;
  v3.erase(v3.begin() + 42, v3.begin() + 51);
  AioliLearner old(corrected, kLoss, 8);  // this run's own c is 2: the model's plain sketch applies
  ModelReader r3(v3.data(), v3.size(), "mem");
  old.load(r3);
  for (size_t t = 200; t < xs.size(); ++t) ASSERT_EQ(other.learn(xs[t]).raw, old.learn(xs[t]).raw) << t;
}

}  // namespace
}  // namespace lepus

namespace lepus {
namespace {

// O-A5: the online-to-batch predictor of the O-A1 run with tau = 3 (the state before round 3) is non-linear in
// x, and at x_3 it is yhat_3.
TEST(AioliO2b, OracleOA5) {
  AioliOptions o = opts(1, 1, 1);
  o.o2b = true;
  AioliLearner l(o, kLoss, 4);
  const std::vector<Example> xs = {example({{0, 1.0}}, 1), example({{0, 0.6}, {1, 0.8}}, -1),
                                   example({{1, 1.0}}, 1), example({{0, -0.5}, {1, 0.5}}, 1)};
  l.learn(xs[0]);
  l.learn(xs[1]);
  l.take_snapshot();  // before round 3
  EXPECT_EQ(l.snapshot_round(), 3u);
  l.learn(xs[2]);
  l.learn(xs[3]);
  const std::vector<std::pair<std::vector<std::pair<uint64_t, double>>, double>> queries = {
      {{{1, 1.0}}, -0.161674},
      {{{0, 1.0}, {1, 1.0}}, -0.073206},
      {{{0, 2.0}, {1, 2.0}}, -0.075392},
      {{{0, 0.5}}, 0.044331}};
  for (const auto& [x, want] : queries) expect_rel(l.predict_o2b(example(x, 0)), want, "f(x)");
}

// The reservoir keeps round tau with probability 1/n for each tau: over 3000 seeds and n = 6, each round is kept
// about 500 times (binomial sd 20).
TEST(AioliO2b, SnapshotRoundIsUniform) {
  std::vector<int> count(7, 0);
  AioliOptions o = opts(1, 1, 1, MatrixKind::kDiag);
  o.o2b = true;
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    AioliLearner l(o, kLoss, 4, false, seed);
    for (int t = 0; t < 6; ++t) l.learn(example({{static_cast<uint64_t>(t % 3), 1.0}}, t % 2 ? 1.0f : -1.0f));
    ASSERT_GE(l.snapshot_round(), 1u);
    ASSERT_LE(l.snapshot_round(), 6u);
    ++count[l.snapshot_round()];
  }
  for (int tau = 1; tau <= 6; ++tau) EXPECT_NEAR(count[tau], 500, 100) << tau;
}

// A -t run of an o2b model predicts with the snapshot; a model without the flag predicts with the final state.
TEST(AioliO2b, TestOnlyRunsPredictWithTheSnapshot) {
  AioliOptions o = opts(1, 1, 1);
  o.o2b = true;
  AioliLearner l(o, kLoss, 4, false, 7);
  for (int t = 0; t < 20; ++t)
    l.learn(example({{static_cast<uint64_t>(t % 3), 1.0 + t % 2}}, t % 3 ? 1.0f : -1.0f));
  ModelWriter w;
  l.save(w);
  AioliLearner t(o, kLoss, 4, true, 7);
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  t.load(r);
  const Example q = example({{0, 1.0}, {1, 1.0}}, 1);
  EXPECT_EQ(t.predict(q).raw, static_cast<float>(l.predict_o2b(q)));
  EXPECT_NE(l.predict(q).raw, t.predict(q).raw);  // the final state predicts otherwise (snapshot round < 20)
}

}  // namespace
}  // namespace lepus

namespace lepus {
namespace {

// The squared loss: the Vovk-Azoury-Warmuth forecaster, each pre-update prediction against its dense formula
// x_t' (lambda I + sum_{s<=t} x_s x_s')^-1 sum_{s<t} y_s x_s, labels far outside [-1, 1], lambda = 0.5 (the
// published feature scale, full matrix).
TEST(AioliSquared, IsTheVovkAzouryWarmuthForecaster) {
  const SquaredLoss squared;
  AioliLearner l(opts(1, 0.5, 1), squared, 8);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0.0, 1.0);
  Eigen::MatrixXd a = 0.5 * Eigen::MatrixXd::Identity(4, 4);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(4);
  for (int t = 0; t < 60; ++t) {
    Eigen::VectorXd x(4);
    for (int i = 0; i < 4; ++i) x(i) = static_cast<float>(g(rng) * (i + 1));  // as the example holds it
    const float y = static_cast<float>(20.0 + 3.0 * x(0) - x(2) + g(rng));
    const Example ex = example({{1, x(0)}, {2, x(1)}, {3, x(2)}, {4, x(3)}}, y);
    const double got = l.learn(ex).raw;
    a += x * x.transpose();
    const double want = x.dot(a.ldlt().solve(b));
    EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + 1e-6) << t;
    b += static_cast<double>(y) * x;
  }
}

// The rule is saved: a squared-loss state resumes bit for bit, and a learner of the other loss refuses it (as
// a logistic one refuses a squared state); a version-4 state, from before the squared rule, loads as logistic.
TEST(AioliSquared, TheRuleIsSavedAndTheOtherLossRefused) {
  const SquaredLoss squared;
  const std::vector<Example> xs = scale_stream({1.0, 250.0, 0.01, 3.0}, 200, 9);
  AioliOptions o;
  AioliLearner whole(o, squared, 8), first(o, squared, 8);
  const ModelWriter w = saved_after(whole, first, xs, 100);
  AioliLearner resumed(o, squared, 8), logistic(o, kLoss, 8);
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  resumed.load(r);
  for (size_t t = 100; t < xs.size(); ++t) ASSERT_EQ(whole.learn(xs[t]).raw, resumed.learn(xs[t]).raw) << t;
  ModelReader again(w.bytes().data(), w.bytes().size(), "mem");
  EXPECT_THROW(logistic.load(again), ModelFormatError);

  ModelWriter lw;
  logistic.save(lw);
  std::vector<uint8_t> v4 = lw.bytes();
  ASSERT_GT(v4.size(), 51u);
  v4[0] = 4;
  v4.erase(v4.begin() + 50);  // the rule byte after c
  AioliLearner old_logistic(o, kLoss, 8), old_squared(o, squared, 8);
  ModelReader r4(v4.data(), v4.size(), "mem");
  EXPECT_NO_THROW(old_logistic.load(r4));
  ModelReader r4b(v4.data(), v4.size(), "mem");
  EXPECT_THROW(old_squared.load(r4b), ModelFormatError);
}

}  // namespace
}  // namespace lepus

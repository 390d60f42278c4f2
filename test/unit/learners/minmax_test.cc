// The min-max regressors (wemm, laser, laser-noshrink, rls, aaw, arowr, arcor, cr-rls): the oracles of E.
// Moroshko's thesis "New Min-Max Algorithms and Analysis for Online Regression" (Technion 2013) recomputed in
// double precision on the three-round sequence S3 (x = (1,0), (0.6,0.8), (0,1); y = 1, 2, -1), on a repeated
// input and on one-hot and 2-sparse sequences (diagonal mode); the properties: WEMM's cumulative loss equals
// its weighted ridge objective every round (Theorem 4), aaw and ridge share their state, LASER is invariant
// under (x, b, c) -> (2x, 4b, 4c) and becomes aaw as c -> infinity; invalid configurations are refused; long
// runs with tiny and huge inputs stay finite and symmetric.
#include "learners/minmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "health_stream.h"
#include "lepus/errors.h"
#include "lepus/loss.h"
#include "long_run.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

Example example(std::vector<std::pair<uint64_t, double>> f, double y, float weight = 1.0f) {
  Example ex;
  for (const auto& [i, v] : f) ex.features.push_back(Feature{i, static_cast<float>(v)});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = static_cast<float>(y);
  ex.labeled = true;
  ex.weight = weight;
  return ex;
}

// S3, with x scaled by s.
std::vector<Example> s3(double s = 1.0) {
  return {example({{0, s}}, 1.0), example({{0, 0.6 * s}, {1, 0.8 * s}}, 2.0), example({{1, s}}, -1.0)};
}

std::unique_ptr<Loss> squared() {
  LossOptions lo;
  lo.name = "squared";
  return make_loss(lo);
}

// The learner `name` from its registry row with `options` (name, value) and --matrix `matrix`.
std::unique_ptr<MinmaxLearner> make(const std::string& name,
                                    std::vector<std::pair<std::string, std::string>> options,
                                    const std::string& matrix = "full", int bits = 4) {
  const LearnerRow* row = find_learner(name);
  if (!row) throw std::runtime_error("no row " + name);
  OptionValues v;
  for (const auto& spec : row->options)
    if (spec.kind != OptionSpec::Kind::kFlag && !spec.default_value.empty())
      v.set(spec.name, spec.default_value, false);
  for (const auto& [k, val] : options) v.set(k, val, true);
  v.set("matrix", matrix, true);
  static const std::unique_ptr<Loss> loss = squared();
  std::unique_ptr<Learner> l = row->make(LearnerContext{v, *loss, bits, false});
  auto* m = dynamic_cast<MinmaxLearner*>(l.get());
  if (!m) throw std::runtime_error("not a MinmaxLearner");
  l.release();
  return std::unique_ptr<MinmaxLearner>(m);
}

Eigen::VectorXd dense(const Example& ex, int d) {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(d);
  for (const Feature& f : ex.features) x(static_cast<Eigen::Index>(f.index)) = f.value;
  return x;
}

// The oracles are printed to 6 decimals: relative 1e-5, or 6e-7 absolute for small numbers.
void near(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, std::max(1e-5 * std::fabs(want), 6e-7)) << what;
}

// Learns `xs` and returns the pre-update predictions (in double) and per-round m.
struct Trace {
  std::vector<double> yhat, m, p, loss;
};
Trace run(MinmaxLearner& l, const std::vector<Example>& xs) {
  Trace r;
  double total = 0.0;
  for (const Example& ex : xs) {
    const MinmaxLearner::Round round = l.evaluate(ex);
    const Prediction pred = l.learn(ex);
    EXPECT_NEAR(pred.value, round.yhat, 1e-6 * std::max(1.0, std::fabs(round.yhat)));  // learn returns ŷ
    r.yhat.push_back(round.yhat);
    r.m.push_back(round.m);
    r.p.push_back(round.p);
    total += (round.yhat - ex.label) * (round.yhat - ex.label);
    r.loss.push_back(total);
  }
  return r;
}

// Σ of the first two slots as {Σ11, Σ12, Σ22}.
void expect_sigma2(const MinmaxLearner& l, double s11, double s12, double s22, const std::string& what) {
  near(l.sigma(0, 0), s11, what + " S11");
  near(l.sigma(0, 1), s12, what + " S12");
  near(l.sigma(1, 0), s12, what + " S21");
  near(l.sigma(1, 1), s22, what + " S22");
}

// Round t's expected numbers on S3: the prediction, the cumulative loss, w and Σ of the first two slots.
void expect_round(const MinmaxLearner& l, int t, double got_yhat, double got_total, double yhat, double total,
                  const double (&w)[2], const double (&S)[3]) {
  const std::string at = "t=" + std::to_string(t + 1);
  near(got_yhat, yhat, at + " yhat");
  near(got_total, total, at + " L");
  near(l.weight(0), w[0], at + " w1");
  near(l.weight(1), w[1], at + " w2");
  expect_sigma2(l, S[0], S[1], S[2], at);
}

// Learns S3 one round at a time, checking after each round.
template <class Check>
void s3_rounds(MinmaxLearner& l, Check check, double scale = 1.0) {
  double total = 0.0;
  const auto xs = s3(scale);
  for (int t = 0; t < 3; ++t) {
    const MinmaxLearner::Round r = l.evaluate(xs[t]);
    l.learn(xs[t]);
    total += (r.yhat - xs[t].label) * (r.yhat - xs[t].label);
    check(t, r, total);
  }
}

// ---- wemm, b = 2 ----
TEST(Minmax, WemmOracleS3) {
  auto l = make("wemm", {{"mm_b", "2"}});
  const double yhat[] = {0, 0.3, 0.68}, m[] = {0.5, 0.41, 0.34}, a[] = {2, 1.694915, 1.515152};
  const double L[] = {1, 3.89, 6.7124}, w[][2] = {{0.5, 0}, {0.755, 0.68}, {0.8558, 0.1088}};
  const double S[][3] = {{0.25, 0, 0.5}, {0.2275, -0.06, 0.34}, {0.2239, -0.0396, 0.2244}};
  const double post[] = {0.25, 0.2419, 0.2244};            // x_tᵀ Σ_t x_t = m(1 - m)
  const double logdet[] = {0.693147, 1.220780, 1.636295};  // ln|A_t/b|, A_t = bI + Σ a_s x_s x_sᵀ
  const auto xs = s3();
  Eigen::Matrix2d A = 2.0 * Eigen::Matrix2d::Identity();
  s3_rounds(*l, [&](int t, const MinmaxLearner::Round& r, double total) {
    const std::string at = "t=" + std::to_string(t + 1);
    const Eigen::Vector2d x = dense(xs[t], 2);
    A += x * x.transpose() / (1.0 - r.m);
    near(std::log((A / 2.0).determinant()), logdet[t], at + " ln|A/b|");
    near(r.yhat, yhat[t], at + " yhat");
    near(r.m, m[t], at + " m");
    near(1.0 / (1.0 - r.m), a[t], at + " a");
    near(total, L[t], at + " L");
    near(l->weight(0), w[t][0], at + " w1");
    near(l->weight(1), w[t][1], at + " w2");
    expect_sigma2(*l, S[t][0], S[t][1], S[t][2], at);
    const MinmaxLearner::Round after = l->evaluate(xs[t]);  // m now reads x_tᵀ Σ_t x_t
    near(after.m, post[t], at + " post");
    near(after.m, r.m * (1.0 - r.m), at + " m(1-m)");
  });
  EXPECT_EQ(l->safeguard_count(), 0u);
}

// ---- laser, b = 1, c = 4 ----
TEST(Minmax, LaserOracleS3) {
  auto l = make("laser", {{"mm_b", "1"}, {"mm_c", "4"}});
  near(l->sigma(0, 0), 0.75, "Sigma_0");
  const double m[] = {1, 1.07, 1.016908}, p[] = {0, 0.3, 0.821256}, yhat[] = {0, 0.144928, 0.407186};
  const double L[] = {1, 4.441294, 6.421465},
               w[][2] = {{0.5, 0}, {0.869565, 0.821256}, {1.065868, -0.097006}};
  const double S[][3] = {{0.5, 0, 1}, {0.652174, -0.217391, 0.766908}, {0.878743, -0.107784, 0.504192}};
  s3_rounds(*l, [&](int t, const MinmaxLearner::Round& r, double total) {
    near(r.m, m[t], "t=" + std::to_string(t + 1) + " m");
    near(r.p, p[t], "t=" + std::to_string(t + 1) + " p");
    expect_round(*l, t, r.yhat, total, yhat[t], L[t], w[t], S[t]);
  });
}

TEST(Minmax, LaserNoShrinkPredictsTheKalmanScore) {
  auto l = make("laser-noshrink", {{"mm_b", "1"}, {"mm_c", "4"}});
  auto shrunk = make("laser", {{"mm_b", "1"}, {"mm_c", "4"}});
  const Trace a = run(*l, s3()), b = run(*shrunk, s3());
  const double p[] = {0, 0.3, 0.821256};
  for (int t = 0; t < 3; ++t) {
    near(a.yhat[t], p[t], "noshrink yhat = p");
    near(b.yhat[t] * (1.0 + b.m[t]), a.yhat[t], "same state");
  }
  near(l->weight(0), 1.065868, "w1");  // the same state as laser's
}

// ---- aaw, b = 1, and ridge (rls, r = 1, b = 1) ----
TEST(Minmax, AawAndRidgeOracleS3) {
  auto aaw = make("aaw", {{"mm_b", "1"}});
  auto ridge = make("rls", {{"mm_b", "1"}, {"rls_r", "1"}});
  const Trace a = run(*aaw, s3()), r = run(*ridge, s3());
  const double ya[] = {0, 0.164835, 0.453333}, La[] = {1, 4.367830, 6.480008};
  const double yr[] = {0, 0.3, 0.747253}, Lr[] = {1, 3.89, 6.942892}, m[] = {1, 0.82, 0.648352};
  for (int t = 0; t < 3; ++t) {
    near(a.yhat[t], ya[t], "aaw yhat");
    near(a.loss[t], La[t], "aaw L");
    near(r.yhat[t], yr[t], "ridge yhat");
    near(r.loss[t], Lr[t], "ridge L");
    near(a.m[t], m[t], "m");
  }
  near(aaw->weight(0), 0.92, "w1");
  near(aaw->weight(1), 0.06, "w2");
  expect_sigma2(*aaw, 0.44, -0.08, 0.393333, "aaw");
  expect_sigma2(*ridge, 0.44, -0.08, 0.393333, "ridge");
}

// ---- arowr (r = 2, b = 0.5), rls (r = 0.9), cr-rls (r = 0.9, T0 = 2) ----
TEST(Minmax, ArowrOracleS3) {
  auto l = make("arowr", {{"arow_r", "2"}, {"mm_b", "0.5"}});
  const Trace a = run(*l, s3());
  const double y[] = {0, 0.3, 0.747253};
  for (int t = 0; t < 3; ++t) near(a.yhat[t], y[t], "arowr yhat");
  near(a.loss[2], 6.942892, "L3");
  near(l->weight(0), 0.92, "w1 (ridge's)");
  expect_sigma2(*l, 0.88, -0.16, 0.786667, "arowr");
}

TEST(Minmax, RlsForgettingOracleS3) {
  auto l = make("rls", {{"rls_r", "0.9"}, {"mm_b", "1"}});
  const double y[] = {0, 0.315789, 0.831439}, L[] = {1, 3.836565, 7.190733};
  s3_rounds(*l, [&](int t, const MinmaxLearner::Round& r, double total) {
    near(r.yhat, y[t], "yhat");
    near(total, L[t], "L");
    if (t == 0) expect_sigma2(*l, 0.526316, 0, 1.111111, "Sigma_1");
  });
  near(l->weight(0), 1.014310, "w1");
  near(l->weight(1), 0.000789, "w2");
  expect_sigma2(*l, 0.561156, -0.105171, 0.453551, "Sigma_3");
}

TEST(Minmax, CrRlsOracleS3) {
  auto l = make("cr-rls", {{"rls_r", "0.9"}, {"crrls_T0", "2"}});
  const double y[] = {0, 0.315789, 0.831439}, L[] = {1, 3.836565, 7.190733};
  const double w[][2] = {{0.526316, 0}, {0.821695, 0.831439}, {0.821695, -0.132476}};
  const double S[][3] = {{0.526316, 0, 1.111111}, {1, 0, 1}, {1.111111, 0, 0.526316}};
  s3_rounds(*l, [&](int t, const MinmaxLearner::Round& r, double total) {
    expect_round(*l, t, r.yhat, total, y[t], L[t], w[t], S[t]);
  });
}

// ---- arcor, r = 1, Λ = 0.35, R_B = 0.7 (one projection, one reset) ----
TEST(Minmax, ArcorOracleS3) {
  auto l = make("arcor", {{"arow_r", "1"}, {"arcor_Lambda", "0.35"}, {"arcor_RB", "0.7"}});
  const double y[] = {0, 0.3, 0.450324}, L[] = {1, 3.89, 5.993438};
  const double w[][2] = {{0.5, 0}, {0.535919, 0.450324}, {0.651944, -0.120137}};
  const double S[][3] = {{0.5, 0, 1}, {0.450549, -0.131868, 0.648352}, {1, 0, 1}};
  s3_rounds(*l, [&](int t, const MinmaxLearner::Round& r, double total) {
    expect_round(*l, t, r.yhat, total, y[t], L[t], w[t], S[t]);
  });
  near(std::hypot(0.535919, 0.450324), 0.7, "the oracle's ||w_2||");

  auto other = make("arcor", {{"arow_r", "1"}, {"arcor_Lambda", "0.3"}, {"arcor_RB", "0.8"}});
  s3_rounds(*other, [&](int t, const MinmaxLearner::Round&, double total) {
    if (t == 1) {
      near(other->weight(0), 0.604901, "R_B 0.8 w1");
      near(other->weight(1), 0.523541, "R_B 0.8 w2");
    }
    if (t == 2) {
      near(total, 6.211176, "R_B 0.8 L3");
      EXPECT_NE(other->sigma(0, 1), 0.0) << "no reset at t = 3";
    }
  });
}

// ---- repeated input x = e1, y = 1 ----
TEST(Minmax, WemmRepeatedInput) {
  auto l = make("wemm", {{"mm_b", "2"}});
  const double y[] = {0, 0.5, 0.625, 0.695312, 0.741730, 0.775082};
  const double a[] = {2, 1.333333, 1.230769, 1.179724, 1.148284, 1.126709};
  const double s[] = {0.25, 0.1875, 0.152344, 0.129135, 0.112459, 0.099812};
  for (int t = 0; t < 6; ++t) {
    const Example ex = example({{0, 1.0}}, 1.0);
    const auto r = l->evaluate(ex);
    l->learn(ex);
    near(r.yhat, y[t], "yhat");
    near(1.0 / (1.0 - r.m), a[t], "a");
    near(l->sigma(0, 0), s[t], "S11");
  }
}

TEST(Minmax, LaserRepeatedInputAndLimits) {
  auto l = make("laser", {{"mm_b", "1"}, {"mm_c", "4"}});
  const double y[] = {0, 0.285714, 0.425532, 0.501608, 0.545188, 0.570834};
  const double s[] = {0.5, 0.428571, 0.404255, 0.395498, 0.392281, 0.391091};
  const Example ex = example({{0, 1.0}}, 1.0);
  for (int t = 0; t < 300; ++t) {
    const auto r = l->evaluate(ex);
    l->learn(ex);
    if (t < 6) {
      near(r.yhat, y[t], "yhat");
      near(l->sigma(0, 0), s[t], "S11");
    }
    near(l->sigma(1, 1), 0.75 + (t + 1) / 4.0, "S22 grows by 1/c");  // never excited
    if (t == 199) near(l->sigma(1, 1), 50.75, "S22 at t = 200");
  }
  near(l->sigma(0, 0), 2.0 / (1.0 + std::sqrt(17.0)), "S11 limit");
  near(1.0 / l->sigma(0, 0), 2.561553, "D11 limit");
  EXPECT_LT(1.0 / l->sigma(0, 0), 3.561553);  // Lemma 15
  const auto r = l->evaluate(ex);
  near(r.m, 0.640388, "m*");
  near(r.yhat, 0.609612, "yhat limit");
  near(l->weight(0), 1.0, "w1 limit");
}

// ---- invariances and limits ----
TEST(Minmax, ScaleInvarianceAndAawLimitOnS3) {
  auto w = make("wemm", {{"mm_b", "8"}});
  const Trace rw = run(*w, s3(2.0));
  const double yw[] = {0, 0.3, 0.68};
  auto la = make("laser", {{"mm_b", "4"}, {"mm_c", "16"}});
  const Trace rl = run(*la, s3(2.0));
  const double yl[] = {0, 0.144928, 0.407186};
  auto big = make("laser", {{"mm_b", "1"}, {"mm_c", "1e9"}});
  const Trace rb = run(*big, s3());
  const double ya[] = {0, 0.164835, 0.453333};
  for (int t = 0; t < 3; ++t) {
    near(rw.yhat[t], yw[t], "wemm (2x, 8)");
    near(rl.yhat[t], yl[t], "laser (2x, 4, 16)");
    near(rb.yhat[t], ya[t], "laser c = 1e9 = aaw");
  }
}

// ---- and the configuration checks ----
TEST(Minmax, WemmGuardFiresWhenBIsTooSmall) {
  auto l = make("wemm", {{"mm_b", "0.9"}});
  const Example ex = example({{0, 1.0}}, 1.0);
  const auto r = l->evaluate(ex);
  near(r.m, 1.111111, "m");
  near(1.0 / (1.0 - r.m), -9.0, "a");
  l->learn(ex);
  EXPECT_EQ(l->safeguard_count(), 1u);
  EXPECT_GT(l->sigma(0, 0), 0.0);  // still positive definite: down-weighted to m = 1 - eps
  EXPECT_TRUE(std::isfinite(l->weight(0)));
  EXPECT_GT(l->weight(0), 0.9);
  auto d = make("wemm", {{"mm_b", "0.9"}}, "diag");
  d->learn(ex);
  EXPECT_EQ(d->safeguard_count(), 1u);
  EXPECT_GT(d->sigma(0, 0), 0.0);
}

TEST(Minmax, InvalidConfigurationsAreRefused) {
  EXPECT_THROW(make("wemm", {{"mm_b", "0"}}), ConfigError);
  EXPECT_THROW(make("aaw", {{"mm_b", "-1"}}), ConfigError);
  EXPECT_THROW(make("laser", {{"mm_b", "4"}, {"mm_c", "4"}}), ConfigError);
  EXPECT_THROW(make("laser-noshrink", {{"mm_b", "5"}, {"mm_c", "4"}}), ConfigError);
  EXPECT_THROW(make("laser", {{"mm_c", "0"}}), ConfigError);
  EXPECT_THROW(make("rls", {{"rls_r", "0"}}), ConfigError);
  EXPECT_THROW(make("rls", {{"rls_r", "1.5"}}), ConfigError);
  EXPECT_THROW(make("cr-rls", {{"rls_r", "-0.5"}}), ConfigError);
  EXPECT_THROW(make("cr-rls", {{"crrls_T0", "2.5"}}), ConfigError);
  EXPECT_THROW(make("arowr", {{"arow_r", "0"}}), ConfigError);
  EXPECT_THROW(make("arcor", {{"arcor_Lambda", "1"}}), ConfigError);
  EXPECT_THROW(make("arcor", {{"arcor_RB", "1"}}, "diag"), ConfigError);
  EXPECT_THROW(make("rls", {}, "sketch"), ConfigError);
  EXPECT_NO_THROW(make("laser", {{"mm_b", "3.9"}, {"mm_c", "4"}}));
  for (const auto& rule : minmax_rules()) {
    const LearnerRow* row = find_learner(rule.name);
    ASSERT_NE(row, nullptr) << rule.name;
    EXPECT_FALSE(row->accepts_loss("logistic")) << rule.name;
    EXPECT_TRUE(row->accepts_loss("squared")) << rule.name;
  }
}

TEST(Minmax, FullModeRefusesMoreFeaturesThanItsCap) {
  auto l = make("aaw", {{"max_dense_features", "2"}}, "full", 8);
  l->learn(example({{0, 1.0}, {1, 1.0}}, 1.0));
  EXPECT_THROW(l->learn(example({{2, 1.0}}, 1.0)), ConfigError);
  EXPECT_EQ(l->rounds(), 1u);
}

// ---- diagonal variants ----
std::vector<Example> one_hot() {
  return {example({{0, 2.0}}, 1.0), example({{1, 1.0}}, -1.0), example({{0, 1.0}}, 0.5),
          example({{2, 3.0}}, 2.0), example({{0, 1.0}}, 1.0)};
}
std::vector<Example> two_sparse() {
  return {example({{0, 1.0}, {1, 1.0}}, 1.0), example({{1, 1.0}, {2, 1.0}}, 2.0),
          example({{0, 1.0}, {2, 1.0}}, -1.0)};
}

void expect_diag_row(MinmaxLearner& l, const std::vector<Example>& xs, std::vector<double> yhat,
                     std::vector<double> w, std::vector<double> s, const std::string& what) {
  const Trace r = run(l, xs);
  for (size_t t = 0; t < yhat.size(); ++t)
    near(r.yhat[t], yhat[t], what + " yhat t=" + std::to_string(t + 1));
  for (uint64_t i = 0; i < 3; ++i) {
    near(l.weight(i), w[i], what + " w" + std::to_string(i + 1));
    near(l.sigma(i, i), s[i], what + " S" + std::to_string(i + 1));
  }
}

TEST(Minmax, DiagonalOneHotEqualsFull) {
  for (const char* mode : {"full", "diag"}) {
    auto la = make("laser", {{"mm_b", "1"}, {"mm_c", "4"}}, mode);
    expect_diag_row(*la, one_hot(), {0, 0, 0.235294, 0, 0.230769}, {0.707692, -0.555556, 0.626866},
                    {0.476923, 1.305556, 0.354478}, std::string("laser ") + mode);
    auto we = make("wemm", {{"mm_b", "10"}}, mode);
    expect_diag_row(*we, one_hot(), {0, 0, 0.2, 0, 0.218}, {0.262105, -0.1, 0.6}, {0.053219, 0.09, 0.01},
                    std::string("wemm ") + mode);
  }
}

TEST(Minmax, DiagonalTwoSparsePinsThePrecisionRule) {
  auto lf = make("laser", {{"mm_b", "1"}, {"mm_c", "4"}}, "full");
  expect_diag_row(*lf, two_sparse(), {0, 0.105263, 0.239845}, {-0.516441, 1.135397, 0.050290},
                  {0.662476, 0.795938, 0.625725}, "laser full");
  auto ld = make("laser", {{"mm_b", "1"}, {"mm_c", "4"}}, "diag");
  expect_diag_row(*ld, two_sparse(), {0, 0.111111, 0.366337}, {-0.389439, 0.75, 0.112211},
                  {0.5, 0.678571, 0.446154}, "laser diag");
  auto wf = make("wemm", {{"mm_b", "3"}}, "full");
  expect_diag_row(*wf, two_sparse(), {0, 0.333333, 0.703704}, {-0.272519, 0.977138, 0.113855},
                  {0.148910, 0.147081, 0.155007}, "wemm full");
  auto wd = make("wemm", {{"mm_b", "3"}}, "diag");
  expect_diag_row(*wd, two_sparse(), {0, 0.333333, 0.888889}, {0.018519, 0.611111, 0.177778},
                  {0.131944, 0.125, 0.152}, "wemm diag");
}

// The baselines' diagonal forms are exact on one-hot inputs too (the reset and forgetting clocks included).
TEST(Minmax, EveryRuleDiagEqualsFullOnOneHotInputs) {
  const std::vector<std::vector<std::pair<std::string, std::string>>> opts = {{}};
  std::mt19937_64 gen(7);
  std::normal_distribution<double> n01;
  std::vector<Example> xs;
  for (int t = 0; t < 60; ++t)
    xs.push_back(example({{static_cast<uint64_t>(t * 7 % 5), 1.0 + 0.5 * n01(gen)}}, n01(gen)));
  for (const auto& rule : minmax_rules()) {
    std::vector<std::pair<std::string, std::string>> o;
    if (std::string(rule.name) == "cr-rls") o = {{"rls_r", "0.95"}, {"crrls_T0", "7"}};
    if (std::string(rule.name) == "rls") o = {{"rls_r", "0.9"}};
    if (std::string(rule.name) == "arcor") o = {{"arcor_Lambda", "0.2"}};
    if (rule.drift) o = {{"mm_c", "4"}, {"mm_b", "1"}};
    auto f = make(rule.name, o, "full"), d = make(rule.name, o, "diag");
    const Trace rf = run(*f, xs), rd = run(*d, xs);
    for (size_t t = 0; t < xs.size(); ++t)
      ASSERT_NEAR(rf.yhat[t], rd.yhat[t], 1e-9 * std::max(1.0, std::fabs(rf.yhat[t])))
          << rule.name << " t=" << t;
    for (uint64_t i = 0; i < 6; ++i) {
      EXPECT_NEAR(f->weight(i), d->weight(i), 1e-9) << rule.name;
      EXPECT_NEAR(f->sigma(i, i), d->sigma(i, i), 1e-9 * std::max(1.0, f->sigma(i, i))) << rule.name;
    }
  }
}

// ---- properties ----
// Random examples in d dimensions with ||x|| <= 1 (as floats, the values the learner sees, read back).
std::vector<Example> random_stream(int n, int d, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> n01;
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::vector<Example> out;
  for (int t = 0; t < n; ++t) {
    std::vector<double> x(d);
    double norm = 0.0;
    for (double& v : x) v = n01(gen), norm += v * v;
    const double s = scale * u01(gen) / std::sqrt(norm);
    std::vector<std::pair<uint64_t, double>> f;
    double y = 0.0;
    for (int i = 0; i < d; ++i) f.emplace_back(i, x[i] * s), y += (i % 3 - 1) * x[i] * s;
    out.push_back(example(f, y + 0.3 * n01(gen)));
  }
  return out;
}

// Theorem 4: L_t(wemm) = Σ a_s y_s² − b_tᵀA_t⁻¹b_t = min_u b‖u‖² + Σ a_s (y_s − uᵀx_s)², at every t; and w_t
// = A_t⁻¹b_t.
TEST(Minmax, WemmLossEqualsItsWeightedRidgeObjectiveEveryRound) {
  const int d = 5;
  const double b = 2.0;
  for (const char* mode : {"full"}) {
    auto l = make("wemm", {{"mm_b", "2"}}, mode);
    Eigen::MatrixXd A = b * Eigen::MatrixXd::Identity(d, d);
    Eigen::VectorXd bv = Eigen::VectorXd::Zero(d);
    double ay2 = 0.0, total = 0.0;
    for (const Example& ex : random_stream(200, d, 11)) {
      const auto r = l->evaluate(ex);
      l->learn(ex);
      const double y = ex.label, a = 1.0 / (1.0 - r.m);
      EXPECT_GE(a, 1.0);
      EXPECT_LE(a, b / (b - 1.0) + 1e-12);
      total += (r.yhat - y) * (r.yhat - y);
      const Eigen::VectorXd x = dense(ex, d);
      A += a * x * x.transpose();
      bv += a * y * x;
      ay2 += a * y * y;
      const Eigen::VectorXd u = A.ldlt().solve(bv);
      const double objective = ay2 - bv.dot(u);
      ASSERT_NEAR(total, objective, 1e-9 * total);
      for (int i = 0; i < d; ++i) ASSERT_NEAR(l->weight(i), u(i), 1e-9 * std::max(1.0, u.norm()));
    }
    // Theorem 5: R_T(u) <= b‖u‖² + (b/(b-1)) S(u) ln|A_T/b|, S(u) the worst single-round loss of u, for u =
    // 0, the batch least-squares u and random u.
    const auto xs = random_stream(200, d, 11);
    Eigen::MatrixXd X(xs.size(), d);
    Eigen::VectorXd Y(xs.size());
    for (size_t t = 0; t < xs.size(); ++t) X.row(t) = dense(xs[t], d).transpose(), Y(t) = xs[t].label;
    std::vector<Eigen::VectorXd> us = {Eigen::VectorXd::Zero(d), X.colPivHouseholderQr().solve(Y)};
    std::mt19937_64 gen(4);
    std::normal_distribution<double> n01;
    for (int k = 0; k < 3; ++k) {
      Eigen::VectorXd u(d);
      for (int i = 0; i < d; ++i) u(i) = n01(gen);
      us.push_back(u);
    }
    const double logdet = (A / b).ldlt().vectorD().array().log().sum();
    for (const Eigen::VectorXd& u : us) {
      const Eigen::VectorXd res = X * u - Y;
      const double lu = res.squaredNorm(), su = res.cwiseAbs2().maxCoeff();
      EXPECT_LE(total - lu, b * u.squaredNorm() + b / (b - 1.0) * su * logdet) << u.transpose();
    }
  }
}

// aaw and ridge share (w, Σ): ŷ_aaw = ŷ_ridge / (1 + m) every round; arowr(r, b) is ridge(r b) with Σ = r
// Σ_ridge.
TEST(Minmax, AawRidgeAndArowrShareTheirState) {
  for (const char* mode : {"full", "diag"}) {
    auto aaw = make("aaw", {{"mm_b", "0.7"}}, mode);
    auto ridge = make("rls", {{"mm_b", "0.7"}}, mode);
    auto arow = make("arowr", {{"mm_b", "0.35"}, {"arow_r", "2"}}, mode);
    for (const Example& ex : random_stream(100, 6, 5)) {
      const auto ra = aaw->evaluate(ex), rr = ridge->evaluate(ex), rw = arow->evaluate(ex);
      ASSERT_NEAR(ra.yhat, rr.yhat / (1.0 + rr.m), 1e-10) << mode;
      ASSERT_NEAR(rw.yhat, rr.yhat, 1e-10) << mode;
      aaw->learn(ex);
      ridge->learn(ex);
      arow->learn(ex);
    }
    for (uint64_t i = 0; i < 6; ++i) {
      EXPECT_NEAR(aaw->weight(i), ridge->weight(i), 1e-12) << mode;
      EXPECT_NEAR(arow->weight(i), ridge->weight(i), 1e-10) << mode;
      for (uint64_t j = 0; j < 6; ++j) {
        EXPECT_DOUBLE_EQ(aaw->sigma(i, j), ridge->sigma(i, j)) << mode;
        EXPECT_NEAR(arow->sigma(i, j), 2.0 * ridge->sigma(i, j), 1e-12) << mode;
      }
    }
  }
}

// LASER: (x, b, c) -> (2x, 4b, 4c) leaves every prediction unchanged (full and diag); wemm: (x, b) -> (2x,
// 4b).
TEST(Minmax, ScaleInvarianceOnRandomData) {
  for (const char* mode : {"full", "diag"}) {
    auto a = make("laser", {{"mm_b", "0.3"}, {"mm_c", "5"}}, mode);
    auto b = make("laser", {{"mm_b", "1.2"}, {"mm_c", "20"}}, mode);
    auto wa = make("wemm", {{"mm_b", "2"}}, mode);
    auto wb = make("wemm", {{"mm_b", "8"}}, mode);
    const auto xs = random_stream(150, 8, 3);
    for (const Example& ex : xs) {
      Example big = ex;
      for (Feature& f : big.features) f.value *= 2.0f;
      ASSERT_NEAR(a->evaluate(ex).yhat, b->evaluate(big).yhat,
                  1e-9 * std::max(1.0, std::fabs(a->evaluate(ex).yhat)));
      ASSERT_NEAR(wa->evaluate(ex).yhat, wb->evaluate(big).yhat,
                  1e-9 * std::max(1.0, std::fabs(wa->evaluate(ex).yhat)));
      a->learn(ex);
      b->learn(big);
      wa->learn(ex);
      wb->learn(big);
    }
  }
}

// The (D, e) form of LASER (thesis Fig 5.1), O(d³) per round, equals the recursive form.
TEST(Minmax, LaserEqualsItsDeFormOnRandomData) {
  const int d = 6;
  const double b = 0.5, c = 3.0;
  auto l = make("laser", {{"mm_b", "0.5"}, {"mm_c", "3"}});
  Eigen::MatrixXd D = (b * c / (c - b)) * Eigen::MatrixXd::Identity(d, d);
  Eigen::VectorXd e = Eigen::VectorXd::Zero(d);
  const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(d, d);
  for (const Example& ex : random_stream(80, d, 9)) {
    const Eigen::VectorXd x = dense(ex, d);
    const Eigen::MatrixXd Dt = (D.inverse() + I / c).inverse() + x * x.transpose();
    const Eigen::VectorXd carried = (I + D / c).inverse() * e;
    const double yhat = x.dot(Dt.inverse() * carried);
    ASSERT_NEAR(l->evaluate(ex).yhat, yhat, 1e-10 * std::max(1.0, std::fabs(yhat)));
    l->learn(ex);
    e = carried + static_cast<double>(ex.label) * x;
    D = Dt;
    const Eigen::VectorXd w = D.inverse() * e;
    for (int i = 0; i < d; ++i) ASSERT_NEAR(l->weight(i), w(i), 1e-10 * std::max(1.0, w.norm()));
  }
}

// LASER's per-round inequality (thesis eq 6.4 with Lemma 11), with the competitor's optimum Q*_t from the
// dynamic program of Lemma 10 (eq 5.6): ℓ_t <= (Q*_t - Q*_{t-1}) + y_t² x_tᵀΣ_t x_t, equality at t = 1;
// summed, Theorem 12. On S3 against the recomputed numbers (b = 1, c = 4), then on random data (d = 5).
struct LaserBound {
  Eigen::MatrixXd D;
  Eigen::VectorXd e;
  double f = 0.0, q = 0.0, c;
  LaserBound(int d, double b, double c_)
      : D((b * c_ / (c_ - b)) * Eigen::MatrixXd::Identity(d, d)), e(Eigen::VectorXd::Zero(d)), c(c_) {}
  // Returns Q*_t after (x, y).
  double step(const Eigen::VectorXd& x, double y) {
    const int d = static_cast<int>(x.size());
    const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(d, d);
    f += -e.dot((c * I + D).inverse() * e) + y * y;
    e = (I + D / c).inverse() * e + y * x;
    D = (D.inverse() + I / c).inverse() + x * x.transpose();
    q = f - e.dot(D.inverse() * e);
    return q;
  }
};

double post_quad(const MinmaxLearner& l, const Eigen::VectorXd& x) {  // x_tᵀ Σ_t x_t from the learner's Σ
  double v = 0.0;
  for (int i = 0; i < x.size(); ++i)
    for (int j = 0; j < x.size(); ++j) v += x(i) * l.sigma(i, j) * x(j);
  return v;
}

TEST(Minmax, LaserPerRoundBoundAndTheorem12) {
  auto l = make("laser", {{"mm_b", "1"}, {"mm_c", "4"}});
  LaserBound bound(2, 1.0, 4.0);
  const double f[] = {1, 4.833333, 4.835878}, q[] = {0.5, 1.896135, 3.540719},
               slack[] = {0, 0.022474, 0.168604};
  double total = 0.0, quads = 0.0, prev = 0.0;
  for (int t = 0; t < 3; ++t) {
    const Example ex = s3()[t];
    const double yhat = l->evaluate(ex).yhat, y = ex.label;
    l->learn(ex);
    const Eigen::VectorXd x = dense(ex, 2);
    const double qt = bound.step(x, y), quad = post_quad(*l, x), loss = (yhat - y) * (yhat - y);
    near(bound.f, f[t], "f_t");
    near(qt, q[t], "Q*_t");
    near((qt - prev) + y * y * quad - loss, slack[t], "slack");
    prev = qt;
    total += loss;
    quads += quad;
  }
  near(quads * 4.0, 6.084399, "Y^2 sum of x'Sigma x");
  EXPECT_LE(total, prev + 4.0 * quads);  // Theorem 12 with Y = 2: 6.421465 <= 9.625118

  auto r = make("laser", {{"mm_b", "0.2"}, {"mm_c", "2"}});
  LaserBound rb(5, 0.2, 2.0);
  prev = 0.0;
  for (const Example& ex : random_stream(100, 5, 21)) {
    const double yhat = r->evaluate(ex).yhat, y = ex.label;
    r->learn(ex);
    const Eigen::VectorXd x = dense(ex, 5);
    const double qt = rb.step(x, y);
    ASSERT_LE((yhat - y) * (yhat - y), (qt - prev) + y * y * post_quad(*r, x) + 1e-9);
    prev = qt;
  }
}

// An importance weight k is the example (√k x, √k y): for ridge, k = 2 equals learning the example twice.
TEST(Minmax, ImportanceWeightIsRepetitionForRidge) {
  auto once = make("rls", {}), twice = make("rls", {});
  for (const Example& ex : random_stream(20, 4, 2)) {
    Example heavy = ex;
    heavy.weight = 2.0f;
    once->learn(heavy);
    twice->learn(ex);
    twice->learn(ex);
  }
  for (uint64_t i = 0; i < 4; ++i) EXPECT_NEAR(once->weight(i), twice->weight(i), 1e-10);
}

// ---- numerical health: 10^6 rounds, d = 10, inputs of norm 1e-6 and 1e6 ----
struct Health {
  const char* rule;
  double scale;
};
class MinmaxHealth : public ::testing::TestWithParam<Health> {};

TEST_P(MinmaxHealth, LongRunStaysFiniteAndSymmetric) {
  const Health h = GetParam();
  const int d = 10;
  std::vector<std::pair<std::string, std::string>> o;
  const std::string name = h.rule;
  if (name == "rls" || name == "cr-rls") o = {{"rls_r", "0.99"}};
  auto l = make(h.rule, o, "full", 6);
  Eigen::MatrixXd A = Eigen::MatrixXd::Identity(d, d);  // aaw: the precision, to check the inverse against
  test::health_stream(*l, d, h.scale, [&](const Example& ex) {
    if (name != "aaw") return;
    const Eigen::VectorXd xv = dense(ex, d);
    A += xv * xv.transpose();
  });
  Eigen::MatrixXd S(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) S(i, j) = l->sigma(i, j);
  for (int i = 0; i < d; ++i) {
    EXPECT_TRUE(std::isfinite(l->weight(i)));
    EXPECT_GT(S(i, i), 0.0);
    for (int j = 0; j < d; ++j) EXPECT_EQ(S(i, j), S(j, i));
  }
  lepus::SymEigen eig(S);
  EXPECT_GT(eig.eigenvalues().minCoeff(), 0.0) << "positive definite";
  if (name == "aaw") {  // no drifting inverse: Σ A = I
    const double err = (S * A - Eigen::MatrixXd::Identity(d, d)).norm();
    EXPECT_LT(err, 1e-6) << "Sigma drifted from the inverse of the precision";
  }
}

std::vector<Health> health_cases() {
  std::vector<Health> out;
  for (const auto& r : minmax_rules())
    for (double s : {1e-6, 1e6}) out.push_back({r.name, s});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, MinmaxHealth, ::testing::ValuesIn(health_cases()),
                         [](const ::testing::TestParamInfo<Health>& i) {
                           std::string n =
                               std::string(i.param.rule) + (i.param.scale < 1.0 ? "_tiny" : "_huge");
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// Save and load: a model resumes exactly (the conformance suite checks this for every row and mode); here,
// the version tag and the learner's name are checked.
TEST(Minmax, ModelOfAnotherRuleIsRefused) {
  auto a = make("aaw", {});
  a->learn(s3()[0]);
  ModelWriter w;
  a->save(w);
  auto r = make("rls", {});
  ModelReader in(w.bytes().data(), w.bytes().size(), "test");
  EXPECT_THROW(r->load(in), ModelFormatError);
}

// A state of version 1 (before the data-relative defaults: no b and c scales or data scale after R_B) still
// loads, with those scales 0 (its b and c as given), and predicts as the state it was cut from, in each mode.
TEST(Minmax, AStateOfVersionOneLoadsWithoutTheScales) {
  for (const char* mode : {"full", "diag", "sketch"}) {
    SCOPED_TRACE(mode);
    auto l = make("wemm", {}, mode);
    const auto data = random_stream(300, 6, 17, 3.0);
    l->warmup(std::span<const Example>(data.data(), 256));
    for (const Example& ex : data) l->learn(ex);
    ModelWriter w;
    l->save(w);
    std::vector<uint8_t> v1 = w.bytes();
    const uint32_t one = 1;
    std::memcpy(v1.data(), &one, 4);
    // version (4), the rule's name (8 + 4), --matrix (1), -b (4), b, c, r, arow_r, T0, Lambda, R_B (7 x 8)
    const size_t scales = 4 + 8 + 4 + 1 + 4 + 7 * 8;
    v1.erase(v1.begin() + scales, v1.begin() + scales + 3 * 8);
    auto back = make("wemm", {}, mode);
    ModelReader r(v1.data(), v1.size(), "test");
    back->load(r);
    EXPECT_EQ(r.remaining(), 0u);
    EXPECT_EQ(back->options().b, l->options().b);
    EXPECT_EQ(back->options().scale, 0.0);
    EXPECT_EQ(back->warmup_wanted(), 0u);
    for (const Example& ex : random_stream(20, 6, 18, 3.0))
      EXPECT_EQ(back->predict(ex).value, l->predict(ex).value);
  }
}

// The data-relative defaults: without --mm_b/--mm_c, wemm's b and LASER's c and b are multiples of X², the
// largest ‖x‖² of the warm-up prefix (wemm 2X²; laser 100X², laser-noshrink 3X², b = 0.1X²), so with them
// every prediction is unchanged when all features are scaled by s (the (x, b, c) -> (sx, s²b, s²c)
// invariance), in every mode; a given option keeps its value and asks for no warm-up; the resolved values
// survive save/load.
TEST(Minmax, DataRelativeDefaults) {
  const auto data = random_stream(300, 6, 17, 3.0);
  double x2 = 0.0;
  for (size_t t = 0; t < 256; ++t) x2 = std::max(x2, dense(data[t], 6).squaredNorm());
  struct Want {
    const char* rule;
    double b, c;
  } wants[] = {{"wemm", 2.0, 0.0}, {"laser", 0.1, 100.0}, {"laser-noshrink", 0.1, 3.0}};
  for (const Want& w : wants) {
    for (const char* mode : {"full", "diag", "sketch"}) {
      SCOPED_TRACE(std::string(w.rule) + " " + mode);
      auto l = make(w.rule, {}, mode);
      ASSERT_EQ(l->warmup_wanted(), 256u);
      l->warmup(std::span<const Example>(data.data(), 256));
      EXPECT_EQ(l->warmup_wanted(), 0u);
      // The norm the learner sees is of the float features: compare to float precision.
      EXPECT_NEAR(l->options().b, w.b * x2, 1e-6 * w.b * x2);
      if (w.c > 0.0) {
        EXPECT_NEAR(l->options().c, w.c * x2, 1e-6 * w.c * x2);
      }
      // Scaled by 4 (exact in floating point): the same predictions, scaled back.
      auto big = make(w.rule, {}, mode);
      std::vector<Example> scaled = data;
      for (Example& ex : scaled)
        for (Feature& f : ex.features) f.value *= 4.0f;
      big->warmup(std::span<const Example>(scaled.data(), 256));
      for (size_t t = 0; t < data.size(); ++t) {
        const double a = l->learn(data[t]).value, b = big->learn(scaled[t]).value;
        ASSERT_NEAR(a, b, 1e-5 * std::max(1.0, std::fabs(a))) << t;
      }
      // Saved and loaded: the resolved b and c, no warm-up asked.
      ModelWriter out;
      l->save(out);
      auto back = make(w.rule, {}, mode);
      ModelReader in(out.bytes().data(), out.bytes().size(), "mem");
      back->load(in);
      EXPECT_EQ(back->warmup_wanted(), 0u);
      EXPECT_EQ(back->options().b, l->options().b);
      EXPECT_EQ(back->options().c, l->options().c);
    }
  }
  auto given = make("laser", {{"mm_c", "50"}});
  EXPECT_EQ(given->warmup_wanted(), 0u);
  EXPECT_EQ(given->options().b, 0.5);
  EXPECT_EQ(make("laser", {{"mm_b", "2"}})->options().c, 200.0);
  EXPECT_EQ(make("wemm", {{"mm_b", "3"}})->warmup_wanted(), 0u);
  EXPECT_EQ(make("rls", {})->warmup_wanted(), 0u);
}

}  // namespace
}  // namespace lepus

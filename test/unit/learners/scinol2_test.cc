// scinol2 and scinol1: ScInOL2 and ScInOL1 of Kempka, Kotłowski, Warmuth (ICML 2019). The hand-computed
// oracles S1-S7 (logistic loss and fixed gradient sequences, ε = 1), the first-occurrence rule (w = 0), β's
// bound ε / t_first and monotonicity, ScInOL2's wealth identity sum_t g_t ŷ_t = sum_i (ε - η_i) and its
// independence of the clock, a direct transcription of the update as a reference (collisions summed into one
// coordinate), coordinate-wise scale invariance for any nonzero factor, and numerics (10^5 rounds, feature
// values from 1e-6 to 1e6). Predict-only rounds, save/load, resumed training, foreign state, weight 0 and
// unlabelled examples are the registry-wide conformance suite's (conformance_test.cc).
#include "learners/scinol2.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

using V = ScinolKkwVariant;

Scinol2Options options(V variant, double eps = 1.0, double lipschitz = 1.0) {
  Scinol2Options o;
  o.variant = variant;
  o.eps = eps;
  o.lipschitz = lipschitz;
  return o;
}

Example make_example(const std::vector<std::pair<uint64_t, double>>& features, float label = 0.0f,
                     float weight = 1.0f, bool labeled = true) {
  Example ex;
  ex.label = label;
  ex.labeled = labeled;
  ex.weight = weight;
  for (const auto& [i, v] : features) ex.features.push_back(Feature{i, static_cast<float>(v)});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  return ex;
}

void expect_rel(double got, double want, double rel = 1e-6, const std::string& what = "") {
  // The oracles are printed to 6 significant digits: relative 1e-6 of the value, plus half a unit in its
  // 6th digit.
  const double digit = want == 0.0 ? 0.0 : std::pow(10.0, std::floor(std::log10(std::fabs(want))) - 5);
  EXPECT_NEAR(got, want, rel * std::fabs(want) + 0.5 * digit + 1e-300) << what;
}

const LogisticLoss kLogistic(-1.0f, 1.0f);
const SquaredLoss kSquared;

// ---- oracles S1-S7 (ε = 1)
// ---------------------------------------------------------------------------------

// S1: ScInOL1, d = 1; x = (2, -1, 0.5), y = (+1, +1, -1), logistic.
TEST(Scinol1, OracleS1) {
  Scinol2Learner s(options(V::kScinol1), kLogistic, 0, false);
  const double xs[] = {2, -1, 0.5};
  const float ys[] = {1, 1, -1};
  const double beta[] = {1, 1, 1}, w[] = {0, 0.0560312, 0.0243468}, yhat[] = {0, -0.0560312, 0.0121734};
  const double g[] = {-0.5, -0.514004, 0.503043}, G[] = {1, 0.485996, 0.234474}, S2[] = {1, 1.2642, 1.32746};
  for (int t = 0; t < 3; ++t) {
    SCOPED_TRACE("t = " + std::to_string(t + 1));
    expect_rel(s.weight(0, xs[t]), w[t]);
    const double g_before = s.slot(0).g;
    const double p = s.learn_score(make_example({{0, xs[t]}}, ys[t]));
    expect_rel(p, yhat[t]);
    EXPECT_EQ(s.slot(0).m, 2.0);
    expect_rel(s.slot(0).p, beta[t]);
    expect_rel(s.slot(0).g, G[t]);
    expect_rel(s.slot(0).s2, S2[t]);
    expect_rel((g_before - s.slot(0).g) / xs[t], g[t]);  // G_t = G_{t-1} - g_t x_t
  }
  EXPECT_EQ(s.rounds(), 3.0);
  EXPECT_EQ(s.safeguard_count(), 0u);
}

// S2: ScInOL1, d = 2; X = ((1,0), (0,3), (2,1), (-1,2)), y = (+1, -1, +1, -1), logistic.
TEST(Scinol1, OracleS2) {
  Scinol2Learner s(options(V::kScinol1), kLogistic, 1, false);
  const double X[4][2] = {{1, 0}, {0, 3}, {2, 1}, {-1, 2}};
  const float ys[] = {1, -1, 1, -1};
  const double M[4][2] = {{1, 0}, {1, 3}, {2, 3}, {2, 3}};
  const double beta[4][2] = {{1, 0}, {1, 0.5}, {0.354167, 0.5}, {0.354167, 0.5}};  // 0: slot untouched
  const double w[4][2] = {{0, 0}, {0, 0}, {0.0110746, -0.0186771}, {0.02991, -0.0117236}};
  const double yhat[] = {0, 0, 0.00347212, -0.0533573};
  const double G[4][2] = {{0.5, 0}, {0.5, -1.5}, {1.49826, -1.00087}, {1.98493, -1.9742}};
  const double S2[4][2] = {{0.25, 0}, {0.25, 2.25}, {1.24653, 2.49913}, {1.48337, 3.4465}};
  for (int t = 0; t < 4; ++t) {
    SCOPED_TRACE("t = " + std::to_string(t + 1));
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t i = 0; i < 2; ++i)
      if (X[t][i] != 0) f.push_back({i, X[t][i]});
    for (uint64_t i = 0; i < 2; ++i)
      if (X[t][i] != 0) expect_rel(s.weight(i, X[t][i]), w[t][i]);
    expect_rel(s.learn_score(make_example(f, ys[t])), yhat[t]);
    for (uint64_t i = 0; i < 2; ++i) {
      EXPECT_EQ(s.slot(i).m, M[t][i]);
      expect_rel(s.slot(i).p, beta[t][i]);
      expect_rel(s.slot(i).g, G[t][i]);
      expect_rel(s.slot(i).s2, S2[t][i]);
    }
  }
}

// S3: ScInOL1 with a fixed gradient sequence; x_t = 1, g = (-1, -1, -1, +1).
TEST(Scinol1, OracleS3) {
  Scinol2Learner s(options(V::kScinol1), kLogistic, 0, false);
  const double g[] = {-1, -1, -1, 1}, w[] = {0, 0.149949, 0.225545, 0.27925}, G[] = {1, 2, 3, 2};
  const Example ex = make_example({{0, 1.0}});
  for (int t = 0; t < 4; ++t) {
    expect_rel(s.weight(0, 1.0), w[t]);
    expect_rel(s.learn_gradient(ex, g[t]), w[t]);  // ŷ = w x with x = 1
    EXPECT_EQ(s.slot(0).g, G[t]);
    EXPECT_EQ(s.slot(0).s2, t + 1.0);
  }
}

// S4: ScInOL2, d = 1, the S1 data.
TEST(Scinol2, OracleS4) {
  Scinol2Learner s(options(V::kScinol2), kLogistic, 0, false);
  const double xs[] = {2, -1, 0.5};
  const float ys[] = {1, 1, -1};
  const double w[] = {0, 0.1, 0.042657}, yhat[] = {0, -0.1, 0.0213285}, g[] = {-0.5, -0.524979, 0.505332};
  const double G[] = {1, 0.475021, 0.222355}, S2[] = {1, 1.2756, 1.33944}, eta[] = {1, 0.947502, 0.936724};
  for (int t = 0; t < 3; ++t) {
    SCOPED_TRACE("t = " + std::to_string(t + 1));
    expect_rel(s.weight(0, xs[t]), w[t]);
    const double g_before = s.slot(0).g;
    expect_rel(s.learn_score(make_example({{0, xs[t]}}, ys[t])), yhat[t]);
    EXPECT_EQ(s.slot(0).m, 2.0);
    expect_rel(s.slot(0).g, G[t]);
    expect_rel(s.slot(0).s2, S2[t]);
    expect_rel(s.slot(0).p, eta[t]);
    expect_rel((g_before - s.slot(0).g) / xs[t], g[t]);
  }
  EXPECT_EQ(s.safeguard_count(), 0u);
}

// S5: ScInOL2, d = 2, the S2 data; and P-A4's identity sum g ŷ = sum_i (ε - η_i) = -0.12868.
TEST(Scinol2, OracleS5AndTheWealthIdentity) {
  Scinol2Learner s(options(V::kScinol2), kLogistic, 1, false);
  const double X[4][2] = {{1, 0}, {0, 3}, {2, 1}, {-1, 2}};
  const float ys[] = {1, -1, 1, -1};
  const double w[4][2] = {{0, 0}, {0, 0}, {0.0588235, -0.0666667}, {0.149917, -0.0426486}};
  const double yhat[] = {0, 0, 0.0509804, -0.235214}, g[] = {-0.5, 0.5, -0.487258, 0.441466};
  const double G[4][2] = {{0.5, 0}, {0.5, -1.5}, {1.47452, -1.01274}, {1.91598, -1.89567}};
  const double S2[4][2] = {{0.25, 0}, {0.25, 2.25}, {1.19968, 2.48742}, {1.39457, 3.26699}};
  const double eta[4][2] = {{1, 0}, {1, 1}, {1.05732, 0.967516}, {1.12351, 1.00517}};  // 0: untouched
  double sum_gy = 0.0;
  for (int t = 0; t < 4; ++t) {
    SCOPED_TRACE("t = " + std::to_string(t + 1));
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t i = 0; i < 2; ++i)
      if (X[t][i] != 0) f.push_back({i, X[t][i]});
    for (uint64_t i = 0; i < 2; ++i)
      if (X[t][i] != 0) expect_rel(s.weight(i, X[t][i]), w[t][i]);
    const double p = s.learn_score(make_example(f, ys[t]));
    expect_rel(p, yhat[t]);
    sum_gy += kLogistic.first_derivative(static_cast<float>(p), ys[t], s.label_range()) * p;
    expect_rel(kLogistic.first_derivative(static_cast<float>(p), ys[t], s.label_range()), g[t]);
    for (uint64_t i = 0; i < 2; ++i) {
      expect_rel(s.slot(i).g, G[t][i]);
      expect_rel(s.slot(i).s2, S2[t][i]);
      expect_rel(s.slot(i).p, eta[t][i]);
    }
  }
  expect_rel(sum_gy, -0.12868, 1e-5);
  EXPECT_NEAR(sum_gy, (1.0 - s.slot(0).p) + (1.0 - s.slot(1).p), 1e-7);  // g ŷ from float ŷ: 1e-7
}

// S6 / S7: ScInOL2 with a fixed gradient sequence, x_t = 1 and x_t = 3: ŷ identical, w divided by 3.
TEST(Scinol2, OraclesS6AndS7) {
  const double g[] = {-1, -1, -1, 1}, w[] = {0, 0.25, 0.360844, 0.402711},
               eta[] = {1, 1.25, 1.61084, 1.20813};
  for (double x : {1.0, 3.0}) {
    SCOPED_TRACE("x = " + std::to_string(x));
    Scinol2Learner s(options(V::kScinol2), kLogistic, 0, false);
    const Example ex = make_example({{0, x}});
    for (int t = 0; t < 4; ++t) {
      expect_rel(s.weight(0, x), w[t] / x);
      expect_rel(s.learn_gradient(ex, g[t]), w[t]);
      expect_rel(s.slot(0).p, eta[t]);
    }
  }
}

// ---- properties
// ----------------------------------------------------------------------------------------------

// A direct transcription of the update (no hashing, maps per coordinate) as a reference; loss == nullptr:
// the linear loss g_linear.
struct Reference {
  V variant = V::kScinol2;
  double eps = 1.0, t = 0.0;
  std::map<uint64_t, double> G, S2, M, beta, eta;
  double round(const std::map<uint64_t, double>& x, const Loss* loss, float y, double g_linear) {
    t += 1;
    double yhat = 0;
    std::map<uint64_t, double> w;
    for (const auto& [i, v] : x) {
      if (v == 0) continue;
      if (!M.count(i)) {
        beta[i] = 1;
        eta[i] = eps;
      }
      M[i] = std::max(M[i], std::fabs(v));
      const double D = std::sqrt(S2[i] + M[i] * M[i]), th = G[i] / D;
      const double sg = th > 0 ? 1 : th < 0 ? -1 : 0;
      if (variant == V::kScinol1) {
        beta[i] = std::min(beta[i], eps * (S2[i] + M[i] * M[i]) / (v * v * t));
        w[i] = beta[i] * sg * (std::exp(std::fabs(th) / 2) - 1) / (2 * D);
      } else {
        w[i] = sg * std::min(std::fabs(th), 1.0) * eta[i] / (2 * D);
      }
      yhat += w[i] * v;
    }
    double g = loss ? loss->first_derivative(static_cast<float>(yhat), y, {-50, 50}) : g_linear;
    g = std::clamp(g, -1.0, 1.0);
    for (const auto& [i, v] : x) {
      if (v == 0) continue;
      G[i] -= g * v;
      S2[i] += g * v * g * v;
      eta[i] -= g * v * w[i];
    }
    return yhat;
  }
};

// Random sparse rounds, some slots repeated inside an example (summed into one coordinate), both variants.
TEST(Scinol2, MatchesTheReferenceForBothVariants) {
  for (V variant : {V::kScinol1, V::kScinol2}) {
    SCOPED_TRACE(static_cast<int>(variant));
    Scinol2Learner s(options(variant, 0.7), kLogistic, 6, false);
    Reference r;
    r.variant = variant;
    r.eps = 0.7;
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<uint64_t> slot(0, 20);
    std::normal_distribution<double> value(0.0, 2.0);
    for (int t = 0; t < 3000; ++t) {
      std::vector<std::pair<uint64_t, double>> f;
      std::map<uint64_t, double> x;
      const int n = 1 + static_cast<int>(slot(rng) % 6);
      double score = 0;
      for (int k = 0; k < n; ++k) {
        const uint64_t i = slot(rng);
        const double v = static_cast<float>(value(rng));
        f.push_back({i, v});
        x[i] += v;
        score += (i % 3 == 0 ? 1.0 : -0.5) * v;
      }
      const float y = score > 0 ? 1.0f : -1.0f;
      const double want = r.round(x, &kLogistic, y, 0.0);
      const double got = s.learn_score(make_example(f, y));
      ASSERT_NEAR(got, want, 1e-9 + 1e-9 * std::fabs(want)) << "round " << t + 1;
    }
  }
}

// P-A2 and P-A3: w = 0 at a first occurrence, whatever the round; β nonincreasing and β <= ε / t_first.
TEST(Scinol1, FirstOccurrenceBetsNothingAndLateFeaturesGetASmallPrior) {
  Scinol2Learner s(options(V::kScinol1), kLogistic, 8, false);
  std::mt19937_64 rng(2);
  std::normal_distribution<double> value(0.0, 1.0);
  std::map<uint64_t, double> t_first, last_beta;
  for (int t = 1; t <= 400; ++t) {
    std::vector<std::pair<uint64_t, double>> f{{0, value(rng)}};
    if (t % 37 == 0) f.push_back({static_cast<uint64_t>(t), value(rng)});  // a new feature every 37 rounds
    f.push_back({1000 + static_cast<uint64_t>(t % 5), value(rng)});
    for (const auto& [i, v] : f)
      if (!t_first.count(i)) {
        EXPECT_EQ(s.weight(i, v), 0.0) << "feature " << i << " at round " << t;
      }
    s.learn_score(make_example(f, f[0].second > 0 ? 1.0f : -1.0f));
    for (const auto& [i, v] : f) {
      if (!t_first.count(i)) t_first[i] = t;
      const double beta = s.slot(i).p;
      EXPECT_LE(beta, 1.0 / t_first[i] * (1 + 1e-15));
      if (last_beta.count(i)) {
        EXPECT_LE(beta, last_beta[i]);
      }
      last_beta[i] = beta;
    }
  }
}

// P-A3 and P-A5 for ScInOL2: |w| <= η / (2M); coordinate 0's trajectory does not depend on rounds it is
// absent from (given the same g's), while ScInOL1's does.
TEST(Scinol2, DoesNotDependOnTheClockButScinol1Does) {
  const double gs[] = {-1, -0.5, -1, 0.3, -0.8, 1, -1, -0.2};
  double w2[2][8], w1[2][8];
  for (int padded = 0; padded < 2; ++padded) {
    Scinol2Learner two(options(V::kScinol2), kLogistic, 4, false),
        one(options(V::kScinol1), kLogistic, 4, false);
    for (int t = 0; t < 8; ++t) {
      if (padded)  // a round without coordinate 0
        for (Scinol2Learner* l : {&two, &one}) l->learn_gradient(make_example({{3, 1.5}}), 0.7);
      const Example ex = make_example({{0, t % 2 ? 2.0 : -0.5}});
      w2[padded][t] = two.learn_gradient(ex, gs[t]);
      w1[padded][t] = one.learn_gradient(ex, gs[t]);
      const auto st = two.slot(0);
      EXPECT_LE(std::fabs(two.weight(0, 0.0)), st.p / (2 * st.m) * (1 + 1e-15));
    }
  }
  for (int t = 0; t < 8; ++t) EXPECT_EQ(w2[0][t], w2[1][t]) << t;
  bool differs = false;
  for (int t = 0; t < 8; ++t) differs |= w1[0][t] != w1[1][t];
  EXPECT_TRUE(differs);
}

// A predict-only example is predicted exactly as a learning round on it would be (temporaries M', β' with
// t + 1, a fresh slot's η = ε), and changes nothing.
TEST(Scinol2, PredictOnlyPredictionIsTheOneLearningMakesNext) {
  for (V variant : {V::kScinol1, V::kScinol2}) {
    Scinol2Learner s(options(variant, 0.5), kLogistic, 5, false);
    std::mt19937_64 rng(4);
    std::uniform_int_distribution<uint64_t> slot(0, 40);
    std::normal_distribution<double> value(0.0, 3.0);
    for (int t = 0; t < 2000; ++t) {
      std::vector<std::pair<uint64_t, double>> f;
      for (int k = 0; k < 4; ++k) f.push_back({slot(rng), value(rng)});
      const Example ex = make_example(f, value(rng) > 0 ? 1.0f : -1.0f);
      const double p = s.predict_score(ex);
      ASSERT_EQ(s.learn_score(ex), p) << "variant " << static_cast<int>(variant) << " round " << t + 1;
    }
  }
}

// The importance weight k scales g before the clip to [-L, L] and the division by L.
TEST(Scinol2, ImportanceWeightScalesGBeforeTheClip) {
  for (V variant : {V::kScinol1, V::kScinol2}) {
    Scinol2Learner a(options(variant, 1.0, 2.0), kLogistic, 3, false),
        b(options(variant, 1.0, 2.0), kLogistic, 3, false);
    const double gs[] = {-1, -0.6, 0.9, -1, 0.4};
    for (int t = 0; t < 5; ++t) {
      // weight 3: g = clip(3 g0, -2, 2) / 2 for a, the same number given directly to b with weight 1.
      const Example wa = make_example({{1, 2.0}, {2, -0.5}}, 0.0f, 3.0f);
      const Example wb = make_example({{1, 2.0}, {2, -0.5}});
      a.learn_gradient(wa, gs[t]);
      b.learn_gradient(wb, std::clamp(3 * gs[t], -2.0, 2.0) / 2 * 2);  // b divides by L = 2 again
      EXPECT_EQ(a.slot(1).g, b.slot(1).g);
      EXPECT_EQ(a.slot(2).s2, b.slot(2).s2);
    }
    EXPECT_EQ(a.slot(1).g, -(std::clamp(-3.0, -2.0, 2.0) / 2 + std::clamp(-1.8, -2.0, 2.0) / 2 +
                             std::clamp(2.7, -2.0, 2.0) / 2 + std::clamp(-3.0, -2.0, 2.0) / 2 +
                             std::clamp(1.2, -2.0, 2.0) / 2) *
                               2.0);
  }
}

// ---- coordinate-wise scale invariance, for any nonzero factor (P-A1)
// ---------------------------------------

bool within(double a, double b) { return std::fabs(a - b) <= 1e-12 + 1e-6 * std::fabs(b); }

// 30 collision-free columns, column i multiplied by factors[i % 6]; labels from a linear rule. Values are
// multiples of 1/8 (exact in float); for the factor 1e-3 the run is built the other way round, and 2^-20
// (~1e-6) is a power of two, so every value pair is an exact rescaling. Unrounded ŷ, relative 1e-6.
TEST(Scinol2, PredictionsDoNotMoveWhenColumnsAreRescaled) {
  const double factors[] = {1e-3, 1e3, -0.5, -1e3, std::ldexp(1.0, -20), 7.0};
  for (V variant : {V::kScinol1, V::kScinol2}) {
    for (const Loss* loss : {static_cast<const Loss*>(&kLogistic), static_cast<const Loss*>(&kSquared)}) {
      SCOPED_TRACE(std::string(loss->name()) + " variant " + std::to_string(static_cast<int>(variant)));
      Scinol2Learner a(options(variant), *loss, 10, false), b(options(variant), *loss, 10, false);
      std::mt19937_64 rng(3);
      std::bernoulli_distribution present(0.3);
      std::normal_distribution<double> value(0.0, 1.0);
      double max_rel = 0.0;
      for (int t = 0; t < 5000; ++t) {
        std::vector<std::pair<uint64_t, double>> fa, fb;
        double score = 0;
        for (uint64_t i = 0; i < 30; ++i) {
          if (!present(rng)) continue;
          const double v = std::round(value(rng) * 8) / 8;
          if (v == 0) continue;
          const double f = factors[i % 6];
          fa.push_back({i, f == 1e-3 ? v / f : v});
          fb.push_back({i, f == 1e-3 ? v : v * f});
          score += v * (i % 2 ? 1.0 : -0.7);
        }
        const float y = loss == &kSquared ? static_cast<float>(score) : (score > 0 ? 1.0f : -1.0f);
        const double pa = a.learn_score(make_example(fa, y)), pb = b.learn_score(make_example(fb, y));
        max_rel = std::max(max_rel, std::fabs(pa - pb) / std::max(std::fabs(pa), 1e-300));
        ASSERT_TRUE(within(pb, pa)) << "round " << t + 1 << ": " << pa << " vs " << pb;
      }
      EXPECT_GT(std::fabs(a.predict_score(make_example({{1, 1.0}, {2, 1.0}}))), 0.0);  // it did learn
      std::printf("[ %s, variant %d ] max relative |dy| = %.3g\n", std::string(loss->name()).c_str(),
                  static_cast<int>(variant), max_rel);
    }
  }
}

// ---- numerics --------------------------------------------------------------------------------------------

// 10^5 logistic rounds on seven features from 1e-6 to 1e6 (random signs, a learnable label): ŷ, the state
// and every weight stay finite, with no safeguard firing; and 10^5 rounds of a constant gradient g = -1
// (ScInOL2's wealth grows like exp(sqrt(n)), ScInOL1's exponent like sqrt(n)/2): still finite.
TEST(Scinol2, HundredThousandRoundsFromOneMillionthToOneMillionStayFinite) {
  const double scales[] = {1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6};
  for (V variant : {V::kScinol1, V::kScinol2}) {
    SCOPED_TRACE(static_cast<int>(variant));
    Scinol2Learner s(options(variant), kLogistic, 4, false);
    std::mt19937_64 rng(9);
    std::normal_distribution<double> value(0.0, 1.0);
    double late_loss = 0.0;
    for (int t = 0; t < 100000; ++t) {
      std::vector<std::pair<uint64_t, double>> f;
      double score = 0;
      for (uint64_t i = 0; i < 7; ++i) {
        const double v = value(rng);
        f.push_back({i, v * scales[i]});
        score += (i % 2 ? 1.0 : -1.0) * v;
      }
      const float y = score > 0 ? 1.0f : -1.0f;
      const double p = s.learn_score(make_example(f, y));
      ASSERT_TRUE(std::isfinite(p)) << t;
      if (t >= 90000) late_loss += kLogistic.loss(static_cast<float>(p), y, {});
    }
    EXPECT_LT(late_loss / 10000, 0.25);  // separable: it learns at every scale
    for (uint64_t i = 0; i < 7; ++i) {
      const auto st = s.slot(i);
      EXPECT_TRUE(std::isfinite(st.g) && std::isfinite(st.s2) && std::isfinite(st.p) && st.p > 0);
      EXPECT_TRUE(std::isfinite(s.weight(i, 0.0)));
    }
    EXPECT_EQ(s.safeguard_count(), 0u);

    Scinol2Learner c(options(variant), kSquared, 4, false);
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t i = 0; i < 7; ++i) f.push_back({i, scales[i]});
    const Example ex = make_example(f);
    double last = 0;
    for (int t = 0; t < 100000; ++t) {
      last = c.learn_gradient(ex, -1.0);
      ASSERT_TRUE(std::isfinite(last) && last >= 0.0) << t;
    }
    EXPECT_GT(last, 1e10);
    for (uint64_t i = 0; i < 7; ++i) EXPECT_TRUE(std::isfinite(c.weight(i, 0.0)));
    EXPECT_TRUE(std::isfinite(c.predict(ex).raw));
  }
}

TEST(Scinol2, OptionsAreChecked) {
  auto from = [](V variant, const std::map<std::string, std::string>& kv) {
    OptionValues v;
    for (const auto& [k, x] : kv) v.set(k, x, true);
    return Scinol2Options::from(variant, v);
  };
  EXPECT_EQ(from(V::kScinol2, {}).eps, 1.0);
  EXPECT_EQ(from(V::kScinol2, {{"scinol2_eps", "0.25"}}).eps, 0.25);
  EXPECT_EQ(from(V::kScinol1, {{"scinol1_eps", "3"}, {"scinol_L", "2"}}).lipschitz, 2.0);
  EXPECT_THROW(from(V::kScinol2, {{"scinol2_eps", "0"}}), ConfigError);
  EXPECT_THROW(from(V::kScinol1, {{"scinol1_eps", "inf"}}), ConfigError);
  EXPECT_THROW(from(V::kScinol2, {{"scinol_L", "-1"}}), ConfigError);
}

}  // namespace
}  // namespace lepus

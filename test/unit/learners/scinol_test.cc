// scinol-coord, Algorithm 1 of W. Kotłowski, "Scale-Invariant Unconstrained Online Learning", ALT 2017
// (Section 3.2, eq. (5)): the hand-computed oracles O1-O4, a direct transcription of Algorithm 1 in every
// --scinol_d mode, the coordinate-wise scale invariance of Section 3.2 on synthetic data and on a9a, the
// predict-only prediction, importance weights, a loaded model's hyper-parameters, and numerics (10^7
// same-sign rounds, feature values from 1e-30 to 1e30). Predict-only rounds, save/load, resumed training,
// damaged and foreign state, weight 0 and unlabeled examples are the registry-wide conformance suite's
// (conformance_test.cc), in every --scinol_d mode.
#include "learners/scinol.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include "long_run.h"

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "core/feature_space.h"
#include "formats/libsvm.h"
#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

using Dim = ScinolDimension;

ScinolOptions options(double alpha, Dim d = Dim::kBits, double lipschitz = 1.0) {
  ScinolOptions o;
  o.alpha = alpha;
  o.dimension = d;
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

void expect_rel(double got, double want, double rel = 1e-5, const std::string& what = "") {
  EXPECT_NEAR(got, want, rel * std::fabs(want) + 1e-300) << what;
}

const LogisticLoss kLogistic(-1.0f, 1.0f);
const SquaredLoss kSquared;

// ---- the hand-computed oracles (relative 1e-5) ------------------------------------------------------------

// O1: d = 1, α = 1.5, logistic; x = (2, -1, 0.5), y = (+1, +1, -1). One slot: -b 0 makes d = 2^0 = 1.
TEST(Scinol, OracleO1) {
  ScinolLearner s(options(1.5), kLogistic, 0, false);
  const double xs[] = {2, -1, 0.5};
  const float ys[] = {1, 1, -1};
  const double s2[] = {4, 5, 5.25}, eta[] = {0.930408, 0.380877, 0.229118}, w[] = {0, 0.0761754, 0.0209901};
  const double yhat[] = {0, -0.0761754, 0.010495}, g[] = {-0.5, -0.519035, 0.502624};
  const double h[] = {1, 0.480965, 0.229653};
  for (int t = 0; t < 3; ++t) {
    SCOPED_TRACE("t = " + std::to_string(t + 1));
    expect_rel(s.eta(0, xs[t]), eta[t]);
    expect_rel(s.weight(0, xs[t]), w[t]);
    const double h_before = s.slot(0).h;
    const double p = s.learn_score(make_example({{0, xs[t]}}, ys[t]));
    expect_rel(p, yhat[t]);
    expect_rel(s.slot(0).s2, s2[t]);
    expect_rel(s.slot(0).h, h[t]);
    expect_rel((h_before - s.slot(0).h) / xs[t], g[t]);  // h_t = h_{t-1} - g_t x_t
  }
  EXPECT_EQ(s.rounds(), 3.0);
  EXPECT_EQ(s.safeguard_count(), 0u);
}

// O2 data: X = ((1,0), (0,3), (2,1), (-1,2)), y = (+1, -1, +1, -1); coordinate 1 is slot 0, coordinate 2
// slot 1. A zero entry is an absent feature.
std::vector<Example> o2_data(double a1 = 1.0, double a2 = 1.0) {
  const double X[4][2] = {{1, 0}, {0, 3}, {2, 1}, {-1, 2}};
  const float y[4] = {1, -1, 1, -1};
  std::vector<Example> out;
  for (int t = 0; t < 4; ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    if (X[t][0] != 0) f.push_back({0, a1 * X[t][0]});
    if (X[t][1] != 0) f.push_back({1, a2 * X[t][1]});
    out.push_back(make_example(f, y[t]));
  }
  return out;
}

// O2: d = 2 (-b 1), α = 1.5, logistic.
TEST(Scinol, OracleO2) {
  ScinolLearner s(options(1.5), kLogistic, 1, false);
  const auto data = o2_data();
  const double w[4][2] = {{0, 0}, {0.0905753, 0}, {0.0147505, -0.0185737}, {0.0248424, -0.00672409}};
  const double yhat[] = {0, 0, 0.0109274, -0.0382906}, g[] = {-0.5, 0.5, -0.497268, 0.490429};
  const double h[4][2] = {{0.5, 0}, {0.5, -1.5}, {1.49454, -1.00273}, {1.98496, -1.98359}};
  const double s2[4][2] = {{1, 0}, {1, 9}, {5, 10}, {6, 14}};
  const double X[4][2] = {{1, 0}, {0, 3}, {2, 1}, {-1, 2}};
  for (int t = 0; t < 4; ++t) {
    SCOPED_TRACE("t = " + std::to_string(t + 1));
    for (int i = 0; i < 2; ++i) expect_rel(s.weight(i, X[t][i]), w[t][i], 1e-5, "w" + std::to_string(i + 1));
    const double p = s.learn_score(data[t]);
    if (yhat[t] == 0) {
      EXPECT_EQ(p, 0.0);
    } else {
      expect_rel(p, yhat[t]);
    }
    expect_rel(-kLogistic.first_derivative(static_cast<float>(p), data[t].label, {}), -g[t]);
    for (int i = 0; i < 2; ++i) {
      expect_rel(s.slot(i).h, h[t][i]);
      expect_rel(s.slot(i).s2, s2[t][i]);
    }
  }
}

// O2's invariance variant: column 1 x 10, column 2 x -0.5: the same ŷ; w becomes (w1 / 10, w2 / -0.5).
TEST(Scinol, OracleO2InvarianceVariant) {
  ScinolLearner s(options(1.5), kLogistic, 1, false);
  const auto data = o2_data(10.0, -0.5);
  const double yhat[] = {0, 0, 0.0109274, -0.0382906};
  for (int t = 0; t < 4; ++t) {
    if (t == 2) {
      expect_rel(s.weight(0, 20.0), 0.00147505);
      expect_rel(s.weight(1, -0.5), 0.0371473);
    }
    const double p = s.learn_score(data[t]);
    if (yhat[t] == 0) {
      EXPECT_EQ(p, 0.0);
    } else {
      expect_rel(p, yhat[t]);
    }
  }
}

// O3: O2 with d = 2^18, the hashed-table constant.
TEST(Scinol, OracleO3) {
  ScinolLearner s(options(1.5), kLogistic, 18, false);
  const auto data = o2_data();
  const double yhat[] = {0, 0, 8.33695e-08, -2.92707e-07};
  for (int t = 0; t < 4; ++t) {
    if (t == 2) {
      expect_rel(s.weight(0, 2.0), 1.12538e-07);
      expect_rel(s.weight(1, 1.0), -1.41706e-07);
    }
    const double p = s.learn_score(data[t]);
    if (yhat[t] == 0) {
      EXPECT_EQ(p, 0.0);
    } else {
      expect_rel(p, yhat[t]);
    }
  }
}

// O4: a fixed gradient sequence (linear loss), d = 1, α = 2; x_t = 1, g = (-1, -1, -1, +1).
TEST(Scinol, OracleO4) {
  ScinolLearner s(options(2.0), kLogistic, 0, false);
  const double g[] = {-1, -1, -1, 1}, w[] = {0, 0.160503, 0.168544, 0.175148}, h[] = {1, 2, 3, 2};
  const Example ex = make_example({{0, 1.0}});
  for (int t = 0; t < 4; ++t) {
    expect_rel(s.weight(0, 1.0), w[t]);
    const double p = s.learn_gradient(ex, g[t]);
    expect_rel(p, w[t]);  // ŷ = w x with x = 1
    EXPECT_EQ(s.slot(0).h, h[t]);
  }
}

// ---- Algorithm 1 (eq. (5)), transcribed with no hashing tricks, as a reference for every mode -------------

struct Reference {
  double alpha = 1.5;
  Dim dim = Dim::kBits;
  double dconst = 1.0;  // 2^b
  double lipschitz = 1.0;
  double t = 0.0;
  std::map<uint64_t, double> h, s2, n;

  // One round on the coordinate values x (distinct slots); returns ŷ. loss == nullptr: the linear loss g.
  double round(const std::map<uint64_t, double>& x, const Loss* loss, float y, double g_linear,
               double weight) {
    t += 1;
    for (const auto& [i, v] : x)
      if (v != 0) {
        s2[i] += v * v;
        n[i] += 1;
      }
    double seen = 0;
    for (const auto& [i, v] : s2) seen += v > 0;
    double yhat = 0;
    for (const auto& [i, v] : x) {
      if (v == 0 || !(s2[i] > 0)) continue;
      const double tt = dim == Dim::kClock ? n[i] : t;
      const double d = dim == Dim::kSeen ? seen : dconst;
      const double e = (h[i] * h[i] + v * v) / (2 * alpha * s2[i]);
      yhat += std::exp(e) / (alpha * tt * d) * h[i] / s2[i] * v;
    }
    double g = loss ? loss->first_derivative(static_cast<float>(yhat), y, {-50, 50}) : g_linear;
    g = std::clamp(g * weight, -lipschitz, lipschitz) / lipschitz;
    for (const auto& [i, v] : x) h[i] -= g * v;
    return yhat;
  }
};

// Random sparse rounds with repeated slots inside an example (collisions): the learner sums them into one x.
TEST(Scinol, MatchesThePseudoCodeInEveryMode) {
  for (Dim dim : {Dim::kBits, Dim::kSeen, Dim::kClock}) {
    SCOPED_TRACE("mode " + std::to_string(static_cast<int>(dim)));
    const int bits = 6;
    ScinolLearner s(options(1.5, dim), kLogistic, bits, false);
    Reference r;
    r.alpha = 1.5;
    r.dim = dim;
    r.dconst = 64.0;
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> count(0, 6);
    std::uniform_int_distribution<uint64_t> index(0, 1000);  // masked to 64 slots: many collisions
    std::normal_distribution<double> value(0.0, 1.0);
    double max_rel = 0.0;
    for (int t = 0; t < 3000; ++t) {
      std::vector<std::pair<uint64_t, double>> f;
      const int k = count(rng);
      for (int j = 0; j < k; ++j) f.push_back({index(rng), static_cast<float>(value(rng))});
      const float y = value(rng) > 0 ? 1.0f : -1.0f;
      std::map<uint64_t, double> x;
      for (const auto& [i, v] : f) x[i & 63] += v;
      const double want = r.round(x, &kLogistic, y, 0, 1.0);
      const double got = s.learn_score(make_example(f, y));
      max_rel = std::max(max_rel, std::fabs(got - want) / (1e-12 + std::fabs(want)));
      ASSERT_NEAR(got, want, 1e-10 * std::fabs(want) + 1e-15) << "round " << t + 1;
    }
    for (const auto& [i, h] : r.h) EXPECT_NEAR(s.slot(i).h, h, 1e-9 * std::fabs(h) + 1e-12);
    EXPECT_EQ(s.rounds(), 3000.0);
    if (dim == Dim::kSeen) {
      EXPECT_EQ(s.seen_slots(), 64.0);
    }
  }
}

// The seen count includes slots new in this round: on O2's data, seen-d is O2 from round 2 on (d_1 = 1, but
// ŷ_1 = 0 whatever d is), so every ŷ is O2's.
TEST(Scinol, SeenModeReproducesO2) {
  ScinolLearner s(options(1.5, Dim::kSeen), kLogistic, 18, false);
  const auto data = o2_data();
  const double yhat[] = {0, 0, 0.0109274, -0.0382906};
  for (int t = 0; t < 4; ++t) {
    const double p = s.learn_score(data[t]);
    if (yhat[t] == 0) {
      EXPECT_EQ(p, 0.0);
    } else {
      expect_rel(p, yhat[t]);
    }
    EXPECT_EQ(s.seen_slots(), t == 0 ? 1.0 : 2.0);
  }
}

// With the clock, a slot's t is its own count of non-zero rounds: a feature seen once every 1000 rounds
// learns as if the other rounds had not happened.
TEST(Scinol, ClockModeIgnoresRoundsWithoutTheFeature) {
  ScinolLearner a(options(2.0, Dim::kClock), kLogistic, 0, false);
  ScinolLearner b(options(2.0, Dim::kClock), kLogistic, 0, false);
  const Example one = make_example({{0, 1.0}});
  const Example none = make_example({});
  const double g[] = {-1, -1, -1, 1}, w[] = {0, 0.160503, 0.168544, 0.175148};  // O4's numbers (d = 1)
  for (int t = 0; t < 4; ++t) {
    for (int k = 0; k < 999; ++k) b.learn_gradient(none, 1.0);
    expect_rel(a.learn_gradient(one, g[t]), w[t]);
    expect_rel(b.learn_gradient(one, g[t]), w[t]);
  }
  EXPECT_EQ(b.slot(0).n, 4.0);
  EXPECT_EQ(b.rounds(), 4000.0);
}

// ---- hashed mapping ---------------------------------------------------------------------------------------

TEST(Scinol, FeaturesSharingASlotAreOneCoordinate) {
  ScinolLearner a(options(1.5), kLogistic, 4, false), b(options(1.5), kLogistic, 4, false);
  const float y[] = {1, -1, 1, 1, -1, 1};
  for (int t = 0; t < 6; ++t) {
    // Slot 5 twice (1 + 2) and slot 3 through 3 and 19 (masked to 4 bits): b sees the sums.
    const double pa =
        a.learn_score(make_example({{5, 1.0}, {3, 0.5}, {5, 2.0}, {19, -1.5}, {7, t + 1.0}}, y[t]));
    const double pb = b.learn_score(make_example({{5, 3.0}, {3, -1.0}, {7, t + 1.0}}, y[t]));
    EXPECT_EQ(pa, pb);
  }
  // Values that cancel leave the slot absent: no s2, no clock, no seen count.
  ScinolLearner c(options(1.5, Dim::kClock), kLogistic, 4, false);
  c.learn_score(make_example({{2, 1.0}, {2, -1.0}, {6, 1.0}}, 1.0f));
  EXPECT_EQ(c.slot(2).s2, 0.0);
  EXPECT_EQ(c.slot(2).n, 0.0);
  EXPECT_EQ(c.slot(6).n, 1.0);
}

TEST(Scinol, AllZeroExampleOnlyAdvancesTheClock) {
  ScinolLearner s(options(1.5), kLogistic, 4, false);
  s.learn_score(make_example({{1, 2.0}}, 1.0f));
  ModelWriter before;
  s.save(before);
  EXPECT_EQ(s.learn_score(make_example({}, 1.0f)), 0.0);
  EXPECT_EQ(s.rounds(), 2.0);
  EXPECT_EQ(s.slot(1).h, 1.0);
  EXPECT_EQ(s.slot(1).s2, 4.0);
}

// ---- importance weights -----------------------------------------------------------------------------------

// The importance weight (not in the paper) scales g before the clip to [-L, L]: O1's first round with weight
// 2 gives g = -1, with weight 3 still -1; with --scinol_L 2 and weight 3, g = clip(-1.5, -2, 2) / 2 = -0.75.
TEST(Scinol, ImportanceWeightScalesGBeforeTheClip) {
  struct Case {
    float weight;
    double lipschitz, h;
  };
  for (const Case c :
       {Case{1, 1, 1.0}, Case{2, 1, 2.0}, Case{3, 1, 2.0}, Case{0.5f, 1, 0.5}, Case{3, 2, 1.5}}) {
    ScinolLearner s(options(1.5, Dim::kBits, c.lipschitz), kLogistic, 0, false);
    s.learn_score(make_example({{0, 2.0}}, 1.0f, c.weight));
    EXPECT_DOUBLE_EQ(s.slot(0).h, c.h) << "weight " << c.weight << " L " << c.lipschitz;
  }
}

TEST(Scinol, SquaredLossGradientIsClippedToL) {
  // ŷ_1 = 0, y = 10: dℓ/dŷ = 2 (0 - 10) = -20, clipped to -L and divided by L: g = -1 for any L <= 20.
  for (double lipschitz : {0.5, 1.0, 20.0, 40.0}) {
    ScinolLearner s(options(1.5, Dim::kBits, lipschitz), kSquared, 0, false);
    s.learn_score(make_example({{0, 1.0}}, 10.0f));
    EXPECT_DOUBLE_EQ(s.slot(0).h, lipschitz >= 20 ? 20.0 / lipschitz : 1.0);
    EXPECT_EQ(s.label_range().hi, 10.0f);
  }
}

// ---- the predict-only prediction --------------------------------------------------------------------------

// Eq. (5) forms ŷ_t from x_t and the state before the label (s2 and t already counting x_t), so the ŷ a
// predict-only round gives (from temporaries) is the ŷ the same example gets when it is learned next, for
// slots seen before and slots new to the table, after predict-only, unlabeled and weight-0 rounds in between.
TEST(Scinol, PredictOnlyPredictionIsTheOneLearningMakesNext) {
  for (Dim dim : {Dim::kBits, Dim::kSeen, Dim::kClock}) {
    SCOPED_TRACE("mode " + std::to_string(static_cast<int>(dim)));
    ScinolLearner s(options(1.5, dim), kLogistic, 8, false);
    for (const auto& ex : o2_data()) s.learn_score(ex);
    const Example seen_and_new = make_example({{0, 2.0}, {1, -1.0}, {77, 3.0}}, 1.0f);
    const double r1 = s.predict_score(seen_and_new);
    EXPECT_EQ(s.predict(seen_and_new).raw, static_cast<float>(r1));
    s.predict(make_example({{200, 5.0}}));
    s.learn(make_example({{0, 1.0}, {9, 1.0}}, 0.0f, 1.0f, /*labeled=*/false));  // unlabeled: predict only
    s.learn(make_example({{0, 1.0}, {9, 1.0}}, 1.0f, 0.0f));                     // weight 0: no round
    EXPECT_EQ(s.predict_score(seen_and_new), r1);
    EXPECT_EQ(s.learn_score(seen_and_new), r1);
    EXPECT_NE(s.predict_score(seen_and_new), r1);  // the round was played
  }
}

// ---- a loaded model's hyper-parameters --------------------------------------------------------------------

std::vector<uint8_t> saved(const ScinolLearner& s) {
  ModelWriter w;
  s.save(w);
  return w.bytes();
}

// Random rounds: 40 slots at 6 bits, values over many scales, squared loss with clipping.
std::vector<Example> random_rounds(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> count(1, 8);
  std::uniform_int_distribution<uint64_t> index(0, 39);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Example> out;
  for (int t = 0; t < n; ++t) {
    std::vector<std::pair<uint64_t, double>> f;
    double y = 0;
    for (int k = count(rng); k > 0; --k) {
      const uint64_t i = index(rng);
      const double v = u(rng) * std::pow(10.0, static_cast<double>(i % 5) - 2);
      f.push_back({i, v});
      y += v * std::pow(10.0, 2 - static_cast<double>(i % 5)) * (i % 3 == 0 ? 1 : -0.5);
    }
    out.push_back(make_example(f, static_cast<float>(y + 0.1 * u(rng)), t % 7 == 0 ? 2.0f : 1.0f));
  }
  return out;
}

// A model loaded into a learner built with other alpha, L and d mode continues with the model's: its state,
// alpha, L and mode win over the constructor's, so training goes on as the uninterrupted run.
TEST(Scinol, LoadedModelKeepsItsHyperParameters) {
  for (Dim dim : {Dim::kBits, Dim::kSeen, Dim::kClock}) {
    SCOPED_TRACE("mode " + std::to_string(static_cast<int>(dim)));
    const auto data = random_rounds(1500, 11);
    ScinolLearner whole(options(1.5, dim, 2.0), kSquared, 6, false);
    for (int t = 0; t < 1000; ++t) whole.learn_score(data[t]);
    const std::vector<uint8_t> bytes = saved(whole);
    const Dim other = dim == Dim::kClock ? Dim::kBits : Dim::kClock;
    ScinolLearner resumed(options(3.0, other, 1.0), kSquared, 6, false);
    ModelReader in(bytes.data(), bytes.size(), "mem");
    resumed.load(in);
    EXPECT_EQ(in.remaining(), 0u);
    EXPECT_EQ(resumed.options().alpha, 1.5);
    EXPECT_EQ(resumed.options().lipschitz, 2.0);
    EXPECT_EQ(resumed.options().dimension, dim);
    for (int t = 1000; t < 1500; ++t)
      ASSERT_EQ(resumed.learn_score(data[t]), whole.learn_score(data[t])) << t;
    EXPECT_EQ(saved(resumed), saved(whole));
  }
}

// Algorithm 1's parameter alpha > 9/8 (Section 3.2; Lemma 3.3's constant kappa(alpha) is finite only then)
// holds for a loaded model too: a state whose alpha is 1 or exactly 9/8 is refused.
TEST(Scinol, SavedAlphaAtMostNineEighthsIsRefused) {
  ScinolLearner s(options(1.5), kLogistic, 6, false);
  for (const auto& ex : o2_data()) s.learn_score(ex);
  const std::vector<uint8_t> bytes = saved(s);
  for (const double alpha : {1.0, 9.0 / 8.0}) {
    std::vector<uint8_t> bad = bytes;
    std::memcpy(bad.data() + 4, &alpha, sizeof alpha);  // after the u32 state version
    ScinolLearner u(options(1.5), kLogistic, 6, false);
    ModelReader in(bad.data(), bad.size(), "alpha");
    EXPECT_THROW(u.load(in), ModelFormatError) << alpha;
  }
  ScinolLearner ok(options(1.5), kLogistic, 6, false);
  ModelReader in(bytes.data(), bytes.size(), "mem");
  EXPECT_NO_THROW(ok.load(in));  // the same bytes with their own alpha load
}

TEST(Scinol, OptionsAreChecked) {
  auto from = [](std::map<std::string, std::string> m) {
    OptionValues v;
    for (const auto& [k, x] : m) v.set(k, x, true);
    return ScinolOptions::from(v);
  };
  EXPECT_EQ(from({}).alpha, 1.5);
  EXPECT_EQ(from({}).lipschitz, 1.0);
  EXPECT_EQ(from({}).dimension, Dim::kSeen);
  EXPECT_EQ(from({{"scinol_d", "clock"}}).dimension, Dim::kClock);
  EXPECT_THROW(from({{"scinol_alpha", "1.125"}}), ConfigError);
  EXPECT_THROW(from({{"scinol_alpha", "inf"}}), ConfigError);
  EXPECT_THROW(from({{"scinol_L", "0"}}), ConfigError);
  EXPECT_THROW(from({{"scinol_d", "rows"}}), ConfigError);
}

// ---- coordinate-wise scale invariance (Section 3.2), for any nonzero factor -------------------------------

bool within(double a, double b) { return std::fabs(a - b) <= 1e-9 + 1e-6 * std::fabs(b); }

// Synthetic, always runs: 30 collision-free columns, column i multiplied by factors[i % 6]; labels from a
// linear rule. The values are multiples of 1/8 (exact in float), and for a factor 1e-3 the run is built the
// other way round (run a holds v * 1e3, run b holds v), so that every value pair is an exact rescaling. ŷ
// unrounded.
TEST(Scinol, PredictionsDoNotMoveWhenColumnsAreRescaled) {
  const double factors[] = {1e-3, 1e3, -0.5, -1e3, 1e-3, 7.0};
  for (const Loss* loss : {static_cast<const Loss*>(&kLogistic), static_cast<const Loss*>(&kSquared)}) {
    for (Dim dim : {Dim::kBits, Dim::kSeen, Dim::kClock}) {
      SCOPED_TRACE(std::string(loss->name()) + " mode " + std::to_string(static_cast<int>(dim)));
      ScinolLearner a(options(1.5, dim), *loss, 10, false), b(options(1.5, dim), *loss, 10, false);
      std::mt19937_64 rng(3);
      std::bernoulli_distribution present(0.3);
      std::normal_distribution<double> value(0.0, 1.0);
      double max_dev = 0.0, max_rel = 0.0;
      for (int t = 0; t < 5000; ++t) {
        std::vector<std::pair<uint64_t, double>> fa, fb;
        double score = 0;
        for (uint64_t i = 0; i < 30; ++i) {
          if (!present(rng)) continue;
          const double v = std::round(value(rng) * 8) / 8;
          if (v == 0) continue;
          const double f = factors[i % 6];
          fa.push_back({i, std::fabs(f) < 1e-2 ? v / f : v});
          fb.push_back({i, std::fabs(f) < 1e-2 ? v : v * f});
          score += v * (i % 2 ? 1.0 : -0.7);
        }
        const float y = loss == &kSquared ? static_cast<float>(score) : (score > 0 ? 1.0f : -1.0f);
        const double pa = a.learn_score(make_example(fa, y)), pb = b.learn_score(make_example(fb, y));
        max_dev = std::max(max_dev, std::fabs(pa - pb));
        max_rel = std::max(max_rel, std::fabs(pa - pb) / std::max(std::fabs(pa), 1e-300));
        ASSERT_TRUE(within(pb, pa)) << "round " << t + 1 << ": " << pa << " vs " << pb;
      }
      std::printf("[ synthetic %s, d mode %d ] max |dy| = %.3g, max relative = %.3g\n",
                  std::string(loss->name()).c_str(), static_cast<int>(dim), max_dev, max_rel);
    }
  }
}

// a9a (123 binary columns, features of namespace f plus the constant, collision-free at -b 18): odd columns x
// 1e-3, even columns x 1e3; the constant cannot be rescaled. Every unrounded ŷ within 1e-9 + 1e-6 |ŷ|.
std::vector<std::string> read_gz_lines(const std::string& path) {
  std::vector<std::string> lines;
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return lines;
  char buffer[8192];
  std::string line;
  while (gzgets(file, buffer, sizeof buffer) != nullptr) {
    line += buffer;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      lines.push_back(line);
      line.clear();
    }
  }
  if (!line.empty()) lines.push_back(line);
  gzclose(file);
  return lines;
}

class NoWarnings final : public WarningSink {
 public:
  void warn(const std::string& m) override { ADD_FAILURE() << m; }
};

TEST(Scinol, A9aPredictionsDoNotMoveWhenColumnsAreRescaled) {
  const std::string path = std::string(LEPUS_SHARED_DIR) + "/data/a9a/a9a.gz";
  if (!std::ifstream(path).good()) GTEST_SKIP() << path << " not available";
  const auto lines = read_gz_lines(path);
  ASSERT_GT(lines.size(), 30000u);
  FeatureSpace space(FeatureSpaceOptions{});
  NoWarnings warnings;
  std::vector<Example> plain, scaled;
  std::map<uint64_t, uint64_t> slot_of;  // raw index -> slot, to prove the features collision-free
  std::set<uint64_t> slots;
  const uint64_t mask = (uint64_t{1} << 18) - 1;
  for (const auto& line : lines) {
    Example ex;
    parse_libsvm_line(line, ParseOptions{}, ex, warnings);
    space.expand(ex);
    Example sc = ex;
    for (uint32_t k = 0; k < ex.num_linear; ++k) {
      if (ex.features[k].index == kConstantIndex) continue;
      sc.features[k].value =
          static_cast<float>(ex.features[k].value * (ex.features[k].index % 2 ? 1e-3 : 1e3));
    }
    for (const Feature& f : ex.features)
      if (slot_of.emplace(f.index, f.index & mask).second) {
        ASSERT_TRUE(slots.insert(f.index & mask).second);
      }
    plain.push_back(std::move(ex));
    scaled.push_back(std::move(sc));
  }
  EXPECT_EQ(slot_of.size(), 124u);  // 123 columns + the constant, 124 distinct slots
  for (Dim dim : {Dim::kBits, Dim::kSeen, Dim::kClock}) {
    ScinolLearner a(options(1.5, dim), kLogistic, 18, false), b(options(1.5, dim), kLogistic, 18, false);
    double max_dev = 0.0, max_rel = 0.0;
    for (size_t t = 0; t < plain.size(); ++t) {
      const double pa = a.learn_score(plain[t]), pb = b.learn_score(scaled[t]);
      max_dev = std::max(max_dev, std::fabs(pa - pb));
      max_rel = std::max(max_rel, std::fabs(pa - pb) / std::max(std::fabs(pa), 1e-300));
      ASSERT_TRUE(within(pb, pa)) << "mode " << static_cast<int>(dim) << " row " << t + 1 << ": " << pa
                                  << " vs " << pb;
    }
    std::printf("[ a9a x1e-3/x1e3, d mode %d ] max |dy| = %.3g, max relative = %.3g\n", static_cast<int>(dim),
                max_dev, max_rel);
  }
}

// ---- numerics ---------------------------------------------------------------------------------------------

// Rounds of the linear loss with g = -1 (the worst case: every round grows the exponent of eq. (5), which
// lepus caps at kMaxExponent, counting each capped evaluation; the cap is outside the paper): the exponent
// reaches the cap after ~2α·650 rounds and stays there; ŷ, the state and the float output stay finite. 10^7
// rounds in the default mode on features at 1e-30, 1 and 1e30; 10^6 rounds in every mode on seven features
// from 1e-30 to 1e30.
void same_sign_rounds(Dim dim, const std::vector<double>& scales, int rounds) {
  std::vector<std::pair<uint64_t, double>> f;
  for (uint64_t i = 0; i < scales.size(); ++i) f.push_back({i, scales[i]});
  const Example ex = make_example(f);
  const double k = static_cast<double>(scales.size());
  ScinolLearner s(options(1.5, dim), kSquared, 4, false);
  const auto start = std::chrono::steady_clock::now();
  bool finite = true;
  double last = 0.0;
  for (int t = 0; t < rounds; ++t) {
    last = s.learn_gradient(ex, -1.0);
    finite &= std::isfinite(last) && last >= 0.0;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(finite);
  EXPECT_GT(last, 1e250);
  for (uint64_t i = 0; i < scales.size(); ++i) {
    const auto st = s.slot(i);
    const double want_h = rounds * static_cast<double>(static_cast<float>(scales[i]));
    EXPECT_NEAR(st.h, want_h, 1e-9 * want_h);
    EXPECT_TRUE(std::isfinite(st.s2) && st.s2 > 0.0);
    EXPECT_TRUE(std::isfinite(s.weight(i, 0.0)));
  }
  // The exponent ((n-1)^2 + 1) / (2α n) of round n passes 650 near n = 1953 (α = 1.5): from there on every
  // feature evaluation is capped (±1 round per feature for rounding at the boundary).
  int first = 1;
  while ((std::pow(first - 1.0, 2) + 1) / (3.0 * first) <= ScinolLearner::kMaxExponent) ++first;
  EXPECT_NEAR(static_cast<double>(s.safeguard_count()), k * (rounds - first + 1), k);
  const Prediction p = s.predict(ex);
  EXPECT_TRUE(std::isfinite(p.raw));
  EXPECT_EQ(p.raw, FLT_MAX);
  std::printf("[ %d rounds, %zu features, d mode %d ] %.2f s, last y = %.3g, safeguards %llu\n", rounds,
              scales.size(), static_cast<int>(dim), secs, last,
              static_cast<unsigned long long>(s.safeguard_count()));
}

TEST(Scinol, TenMillionSameSignRoundsStayFinite) {
  same_sign_rounds(ScinolOptions{}.dimension, {1e-30, 1.0, 1e30}, test::long_run(10'000'000));
}

TEST(Scinol, SameSignRoundsStayFiniteInEveryMode) {
  for (Dim dim : {Dim::kBits, Dim::kSeen, Dim::kClock}) {
    SCOPED_TRACE("mode " + std::to_string(static_cast<int>(dim)));
    same_sign_rounds(dim, {1e-30, 1e-20, 1e-10, 1.0, 1e10, 1e20, 1e30}, test::long_run(1'000'000));
  }
}

// Alternating signs at extreme scales, and a real loss: no cap, no non-finite value.
TEST(Scinol, ExtremeScalesWithARealLossStayFinite) {
  for (double scale : {1e-30, 1e-12, 1.0, 1e12, 1e30}) {
    ScinolLearner s(options(1.5, Dim::kSeen), kLogistic, 8, false);
    std::mt19937_64 rng(5);
    std::normal_distribution<double> value(0.0, 1.0);
    double loss = 0.0;
    for (int t = 0; t < 20000; ++t) {
      const double v0 = value(rng), v1 = value(rng);
      const float y = v0 - 0.5 * v1 > 0 ? 1.0f : -1.0f;
      const Example ex = make_example({{1, v0 * scale}, {2, v1 * scale}, {3, 1.0}}, y);
      const double p = s.learn_score(ex);
      ASSERT_TRUE(std::isfinite(p));
      if (t >= 10000) loss += kLogistic.loss(static_cast<float>(p), y, {});
    }
    EXPECT_LT(loss / 10000, 0.2) << scale;  // separable data: it learns at every scale
    EXPECT_EQ(s.safeguard_count(), 0u);
  }
}

}  // namespace
}  // namespace lepus

// The FTPRL learners of McMahan & Streeter, "Adaptive Bound Optimization for Online Convex Optimization",
// COLT 2010 (ftprl-diag: Algorithm 1 and Corollary 2; ftprl-const: Corollary 1; ftprl-scale: Algorithm 2 and
// Theorem 5): the hand-computed oracles P1-P7 (relative 1e-5), dense paper-form references (the sparse/lazy
// schemes must equal them), invariances of the updates, feasibility on real data, importance weights, a
// loaded model's radius and scales, and numerics at scale. Predict-only rounds, save/load, resumed training,
// damaged and foreign state, weight 0 and unlabeled examples are the registry-wide conformance suite's
// (conformance_test.cc), for every row and every --ftprl_set.
#include "learners/ftprl.h"
#include "learners/ftprl_full.h"
#include "learners/ftprl_sketch.h"

#include <gtest/gtest.h>
#include "long_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "formats/vw_text.h"
#include "io/input_source.h"
#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

using Vec = std::vector<double>;

// ---- helpers ----

void expect_rel(double got, double want, const std::string& what) {
  if (want == 0.0) {
    EXPECT_NEAR(got, 0.0, 1e-12) << what;
  } else {
    EXPECT_NEAR(got, want, 1e-5 * std::fabs(want)) << what;
  }
}

FtprlOptions options(double radius, const char* set = "ball", const char* scale = "*:1") {
  OptionValues v;
  v.set("ftprl_radius", std::to_string(radius), true);
  v.set("ftprl_set", set, true);
  v.set("ftprl_scale", scale, true);
  return FtprlOptions::from(v);
}

// An example holding the gradient vector g (feature i = coordinate i, zero entries left out), so update(x, 1)
// feeds exactly g. `groups` names each coordinate's feature group (for ftprl-scale).
Example gradient_example(const Vec& g, const std::string& groups = "") {
  Example x;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] == 0.0) continue;
    const uint32_t at = static_cast<uint32_t>(x.features.size());
    x.features.push_back(Feature{i, static_cast<float>(g[i])});
    if (!groups.empty()) x.groups.push_back(FeatureGroup{static_cast<unsigned char>(groups[i]), at, at + 1});
  }
  x.num_linear = static_cast<uint32_t>(x.features.size());
  return x;
}

class Quiet final : public WarningSink {
 public:
  void warn(const std::string&) override {}
};

// A VW text file parsed and expanded (constant on) as the driver would.
std::vector<Example> read_vw(const std::string& path) {
  auto in = InputSource::open(path);
  std::string text;
  char buf[1 << 16];
  for (size_t n; (n = in->read(buf, sizeof buf)) > 0;) text.append(buf, n);
  FeatureSpace space(FeatureSpaceOptions{});
  Quiet quiet;
  std::vector<Example> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    Example ex;
    parse_vw_line(std::string_view(text).substr(start, end - start), ParseOptions{}, ex, quiet);
    start = end + 1;
    if (ex.empty) continue;
    space.expand(ex);
    out.push_back(ex);
  }
  return out;
}

const std::vector<Example>& rcv1() {
  static const std::vector<Example> data = read_vw(LEPUS_TEST_DATA "/vw/inputs/rcv1_small.vw.gz");
  return data;
}
const std::vector<Example>& heart() {
  static const std::vector<Example> data = read_vw(LEPUS_TEST_DATA "/heart_scale.vw");
  return data;
}

std::vector<uint8_t> state_of(const Learner& l) {
  ModelWriter w;
  l.save(w);
  return w.bytes();
}

// The four hashed learners, by a short name.
std::unique_ptr<FtprlBase> make(const std::string& kind, const Loss& loss, int bits, double radius,
                                const char* scale = "*:1") {
  if (kind == "diag") return std::make_unique<FtprlDiagLearner>(options(radius), loss, bits);
  if (kind == "box") return std::make_unique<FtprlConstBoxLearner>(options(radius, "box"), loss, bits);
  if (kind == "ball") return std::make_unique<FtprlConstBallLearner>(options(radius), loss, bits);
  return std::make_unique<FtprlScaleLearner>(options(radius, "ball", scale), loss, bits);
}
const char* const kKinds[] = {"diag", "box", "ball", "scale"};

// weight_of with the learner's type resolved once, for scans of the whole table.
std::function<double(uint64_t)> weight_fn(const FtprlBase& l) {
  if (auto* d = dynamic_cast<const FtprlDiagLearner*>(&l)) return [d](uint64_t i) { return d->weight(i); };
  if (auto* b = dynamic_cast<const FtprlConstBoxLearner*>(&l))
    return [b](uint64_t i) { return b->weight(i); };
  if (auto* c = dynamic_cast<const FtprlConstBallLearner*>(&l))
    return [c](uint64_t i) { return c->weight(i); };
  auto* s = dynamic_cast<const FtprlScaleLearner*>(&l);
  return [s](uint64_t i) { return s->weight(i); };
}

double weight_of(const FtprlBase& l, uint64_t slot) {
  if (auto* d = dynamic_cast<const FtprlDiagLearner*>(&l)) return d->weight(slot);
  if (auto* b = dynamic_cast<const FtprlConstBoxLearner*>(&l)) return b->weight(slot);
  if (auto* c = dynamic_cast<const FtprlConstBallLearner*>(&l)) return c->weight(slot);
  return dynamic_cast<const FtprlScaleLearner&>(l).weight(slot);
}
void update_of(FtprlBase& l, const Example& x, double d) {
  if (auto* a = dynamic_cast<FtprlDiagLearner*>(&l)) return a->update(x, d);
  if (auto* b = dynamic_cast<FtprlConstBoxLearner*>(&l)) return b->update(x, d);
  if (auto* c = dynamic_cast<FtprlConstBallLearner*>(&l)) return c->update(x, d);
  dynamic_cast<FtprlScaleLearner&>(l).update(x, d);
}

// ---- dense paper-form references (q and z kept as in the paper, no recurrence, no laziness) ----

// FTPRL-Diag on the box x_i [-half_width_i, half_width_i]; `literal_sign` uses Algorithm 1's printed (z - q).
struct DiagRef {
  Vec half_width, g2, lbar, q, z, u, w;
  bool literal_sign = false;
  explicit DiagRef(Vec hw)
      : half_width(hw),
        g2(hw.size()),
        lbar(hw.size()),
        q(hw.size()),
        z(hw.size()),
        u(hw.size()),
        w(hw.size()) {}
  void step(const Vec& g) {
    for (size_t i = 0; i < g.size(); ++i) {
      g2[i] += g[i] * g[i];
      const double lb = std::sqrt(g2[i]) / half_width[i];  // (2/D_i) sqrt(G_i)
      q[i] += (lb - lbar[i]) * w[i];
      z[i] += g[i];
      lbar[i] = lb;
      if (lb == 0.0) continue;  // no gradient yet: w_i stays 0 (the paper assumes g_1,i > 0 instead)
      u[i] = literal_sign ? (z[i] - q[i]) / lb : (q[i] - z[i]) / lb;
      w[i] = std::clamp(u[i], -half_width[i], half_width[i]);
    }
  }
};

// FTPRL with Q_{1:t} = abar_t I (Corollary 1): ball of radius r (D = 2r) or box [-r, r]^d (D = 2r sqrt(d)).
struct ConstRef {
  bool ball;
  double r, diam, big_g = 0.0, abar = 0.0;
  Vec q, z, u, w;
  ConstRef(bool is_ball, double radius, size_t d)
      : ball(is_ball),
        r(radius),
        diam(is_ball ? 2 * radius : 2 * radius * std::sqrt(double(d))),
        q(d),
        z(d),
        u(d),
        w(d) {}
  void step(const Vec& g) {
    double n2 = 0.0;
    for (double x : g) n2 += x * x;
    if (big_g + n2 == 0.0) return;
    big_g += n2;
    const double a = 2.0 * std::sqrt(big_g) / diam;
    for (size_t i = 0; i < g.size(); ++i) {
      q[i] += (a - abar) * w[i];
      z[i] += g[i];
      u[i] = (q[i] - z[i]) / a;
    }
    abar = a;
    double norm = 0.0;
    for (double x : u) norm += x * x;
    norm = std::sqrt(norm);
    for (size_t i = 0; i < g.size(); ++i)
      w[i] = ball ? u[i] * std::min(1.0, r / norm) : std::clamp(u[i], -r, r);
  }
};

// FTPRL-Scale for {||A w|| <= r} given A^-1 (Theorem 5): ftprl-const on the ball of radius r in w^ = A w with
// g^ = A^-T g, playing w = A^-1 w^.
struct ScaleRef {
  std::vector<Vec> a_inv;  // A^-1, row-major
  ConstRef hat;
  Vec w, g_hat;
  ScaleRef(std::vector<Vec> ainv, double r) : a_inv(ainv), hat(true, r, ainv.size()), w(ainv.size()) {}
  void step(const Vec& g) {
    const size_t d = g.size();
    g_hat.assign(d, 0.0);
    for (size_t i = 0; i < d; ++i)
      for (size_t j = 0; j < d; ++j) g_hat[i] += a_inv[j][i] * g[j];  // (A^-1)^T g
    hat.step(g_hat);
    for (size_t i = 0; i < d; ++i) {
      w[i] = 0.0;
      for (size_t j = 0; j < d; ++j) w[i] += a_inv[i][j] * hat.w[j];
    }
  }
};

const std::vector<Vec> kP2 = {{1, 0}, {0, -2}, {-0.5, 1}, {0.3, 0}};

// ---- oracles P1 - P7 ----

TEST(FtprlOracle, P1DiagOneCoordinate) {
  SquaredLoss loss;
  FtprlDiagLearner l(options(1.0), loss, 4);
  const double g[] = {0.5, -1, 0.25, 2};
  struct Row {
    double w, big_g, lbar, q, z, u, w_next;
  };
  const Row want[] = {{0, 0.25, 0.5, 0, 0.5, -1, -1},
                      {-1, 1.25, 1.11803, -0.618034, -0.5, -0.105573, -0.105573},
                      {-0.105573, 1.3125, 1.14564, -0.620949, -0.25, -0.323791, -0.323791},
                      {-0.323791, 5.3125, 2.30489, -0.996301, 1.75, -1.19151, -1}};
  double z = 0.0;
  for (int t = 0; t < 4; ++t) {
    const std::string at = "t=" + std::to_string(t + 1);
    expect_rel(l.weight(0), want[t].w, at + " w_t");
    l.update(gradient_example({g[t]}), 1.0);
    z += g[t];
    const auto& s = l.slots()[0];
    const double lbar = s.s / l.radius();
    expect_rel(s.s * s.s, want[t].big_g, at + " G");
    expect_rel(lbar, want[t].lbar, at + " lbar");
    expect_rel(lbar * s.u + z, want[t].q, at + " q");  // u = (q - z)/lbar
    expect_rel(z, want[t].z, at + " z");
    expect_rel(s.u, want[t].u, at + " u");
    expect_rel(l.weight(0), want[t].w_next, at + " w_{t+1}");
  }
  // Negative oracle: Algorithm 1's printed sign (z - q)/lbar gives u_2 = +1, a step along the gradient.
  DiagRef literal({1.0});
  literal.literal_sign = true;
  literal.step({0.5});
  EXPECT_EQ(literal.u[0], 1.0);
  DiagRef fixed({1.0});
  fixed.step({0.5});
  EXPECT_EQ(fixed.u[0], -1.0);
}

TEST(FtprlOracle, P2DiagTwoCoordinatesOfDifferentWidths) {
  // F = [-1, 1] x [-0.5, 0.5]. The hashed learner has one R, but on a box the coordinates evolve
  // independently and R -> kR scales w by k (lbar scales by 1/k, q and z do not change): coordinate 1 comes
  // from the R = 1 run, coordinate 2 from the R = 0.5 run.
  SquaredLoss loss;
  FtprlDiagLearner one(options(1.0), loss, 4), half(options(0.5), loss, 4);
  DiagRef ref({1.0, 0.5});
  struct Row {
    Vec w, big_g, lbar, u, w_next;
  };
  const Row want[] = {
      {{0, 0}, {1, 0}, {1, 0}, {-1, 0}, {-1, 0}},
      {{-1, 0}, {1, 4}, {1, 4}, {-1, 0.5}, {-1, 0.5}},
      {{-1, 0.5}, {1.25, 5}, {1.11803, 4.47214}, {-0.552786, 0.276393}, {-0.552786, 0.276393}},
      {{-0.552786, 0.276393}, {1.34, 5}, {1.15758, 4.47214}, {-0.811947, 0.276393}, {-0.811947, 0.276393}}};
  auto coord = [&](int i) -> const FtprlDiagLearner& { return i == 0 ? one : half; };
  for (int t = 0; t < 4; ++t) {
    const std::string at = "t=" + std::to_string(t + 1);
    for (int i = 0; i < 2; ++i) expect_rel(coord(i).weight(i), want[t].w[i], at + " w_t");
    one.update(gradient_example(kP2[t]), 1.0);
    half.update(gradient_example(kP2[t]), 1.0);
    ref.step(kP2[t]);
    for (int i = 0; i < 2; ++i) {
      const auto& s = coord(i).slots()[i];
      const double lbar = s.s / coord(i).radius();
      expect_rel(s.s * s.s, want[t].big_g[i], at + " G");
      expect_rel(lbar, want[t].lbar[i], at + " lbar");
      if (lbar > 0.0) expect_rel(s.u, want[t].u[i], at + " u");  // "-": lbar = 0, u undefined
      expect_rel(coord(i).weight(i), want[t].w_next[i], at + " w_{t+1}");
      expect_rel(ref.w[i], want[t].w_next[i], at + " dense w_{t+1}");
    }
  }
  // Paper-form accumulators after t = 4 (q = lbar u + z), from the learner and from the dense reference.
  const Vec q = {-0.139897, 0.236068}, z = {0.8, -1};
  for (int i = 0; i < 2; ++i) {
    const auto& s = coord(i).slots()[i];
    expect_rel(s.s / coord(i).radius() * s.u + z[i], q[i], "q");
    expect_rel(ref.q[i], q[i], "dense q");
    expect_rel(ref.z[i], z[i], "dense z");
  }
  // Scaling the gradient columns by (3, 0.1) leaves every w_t unchanged.
  FtprlDiagLearner a(options(1.0), loss, 4), b(options(1.0), loss, 4);
  for (const Vec& g : kP2) {
    a.update(gradient_example(g), 1.0);
    b.update(gradient_example({3 * g[0], 0.1 * g[1]}), 1.0);
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(a.weight(i), b.weight(i), 1e-7);
  }
}

TEST(FtprlOracle, P3DiagLogisticThroughLearn) {
  LogisticLoss loss(-1.0f, 1.0f);
  FtprlDiagLearner l(options(1.0), loss, 4);
  const Vec xs[] = {{1, 2, 0}, {0, -1, 0.5}, {1, 0, 1}, {0, 1, -2}};
  const float ys[] = {1, -1, 1, 1};
  struct Row {
    Vec w;
    double yhat, dl;
    Vec big_g, u, w_next;
  };
  const double kNone = std::nan("");
  const Row want[] = {
      {{0, 0, 0}, 0, -0.5, {0.25, 1, 0}, {1, 1, kNone}, {1, 1, 0}},
      {{1, 1, 0}, -1, 0.268941, {0.25, 1.07233, 0.0180824}, {1, 1.25971, -1}, {1, 1, -1}},
      {{1, 1, -1}, 0, -0.5, {0.5, 1.07233, 0.268082}, {1.70711, 1.25971, -0.0343141}, {1, 1, -0.0343141}},
      {{1, 1, -0.0343141},
       1.06863,
       -0.255664,
       {0.5, 1.13769, 0.529539},
       {1.70711, 1.49184, -0.736983},
       {1, 1, -0.736983}}};
  for (int t = 0; t < 4; ++t) {
    const std::string at = "t=" + std::to_string(t + 1);
    Example x = gradient_example(xs[t]);
    x.label = ys[t];
    x.labeled = true;
    for (int i = 0; i < 3; ++i) expect_rel(l.weight(i), want[t].w[i], at + " w_t");
    const Prediction p = l.learn(x);
    expect_rel(p.raw, want[t].yhat, at + " yhat");
    expect_rel(loss.first_derivative(p.value, ys[t], {}), want[t].dl, at + " l'");
    for (int i = 0; i < 3; ++i) {
      expect_rel(std::pow(l.slots()[i].s, 2), want[t].big_g[i], at + " G");
      if (!std::isnan(want[t].u[i])) expect_rel(l.slots()[i].u, want[t].u[i], at + " u");
      expect_rel(l.weight(i), want[t].w_next[i], at + " w_{t+1}");
    }
  }
}

TEST(FtprlOracle, P4ConstBall) {
  SquaredLoss loss;
  FtprlConstBallLearner l(options(1.0), loss, 4);
  ConstRef ref(true, 1.0, 2);
  struct Row {
    Vec w;
    double big_g, abar, alpha;
    Vec q, z, u, w_next;
  };
  const Row want[] = {
      {{0, 0}, 1, 1, 1, {0, 0}, {1, 0}, {-1, 0}, {-1, 0}},
      {{-1, 0}, 5, 2.23607, 1.23607, {-1.23607, 0}, {1, -2}, {-1, 0.894427}, {-0.745356, 0.666667}},
      {{-0.745356, 0.666667},
       6.25,
       2.5,
       0.263932,
       {-1.43279, 0.175955},
       {0.5, -1},
       {-0.773117, 0.470382},
       {-0.773117, 0.470382}},
      {{-0.773117, 0.470382},
       6.34,
       2.51794,
       0.0179357,
       {-1.44666, 0.184391},
       {0.8, -1},
       {-0.892262, 0.470382},
       {-0.884603, 0.466344}}};
  Vec z(2);
  for (int t = 0; t < 4; ++t) {
    const std::string at = "t=" + std::to_string(t + 1);
    for (int i = 0; i < 2; ++i) expect_rel(l.weight(i), want[t].w[i], at + " w_t");
    const double abar_before = l.abar();
    l.update(gradient_example(kP2[t]), 1.0);
    ref.step(kP2[t]);
    expect_rel(l.grad_sum(), want[t].big_g, at + " G");
    expect_rel(l.abar(), want[t].abar, at + " abar");
    expect_rel(l.abar() - abar_before, want[t].alpha, at + " alpha");
    for (int i = 0; i < 2; ++i) {
      z[i] += kP2[t][i];
      expect_rel(l.abar() * l.hat_u(i) + z[i], want[t].q[i], at + " q");
      expect_rel(z[i], want[t].z[i], at + " z");
      expect_rel(l.hat_u(i), want[t].u[i], at + " u");
      expect_rel(l.weight(i), want[t].w_next[i], at + " w_{t+1}");
      expect_rel(ref.q[i], want[t].q[i], at + " dense q");
      expect_rel(ref.w[i], want[t].w_next[i], at + " dense w_{t+1}");
    }
  }
}

TEST(FtprlOracle, P5ScaleDiagonalA) {
  // A = diag(2, 0.5): prior scales a = (0.5, 2), coordinate 0 in namespace a, coordinate 1 in namespace b.
  SquaredLoss loss;
  FtprlScaleLearner l(options(1.0, "ball", "a:0.5,b:2"), loss, 4);
  FtprlConstBallLearner hat(options(1.0), loss, 4);  // Theorem 5: ftprl-const on g^ reproduces w^
  const Vec a = {0.5, 2};
  struct Row {
    Vec w, w_hat, g_hat;
    double abar;
    Vec u_hat, w_hat_next, w_next;
  };
  const Row want[] = {
      {{0, 0}, {0, 0}, {0.5, 0}, 0.5, {-1, 0}, {-1, 0}, {-0.5, 0}},
      {{-0.5, 0}, {-1, 0}, {0, -4}, 4.03113, {-1, 0.992278}, {-0.709842, 0.704361}, {-0.354921, 1.40872}},
      {{-0.354921, 1.40872},
       {-0.709842, 0.704361},
       {-0.25, 2},
       4.50694,
       {-0.913897, 0.518121},
       {-0.869922, 0.49319},
       {-0.434961, 0.98638}},
      {{-0.434961, 0.98638},
       {-0.869922, 0.49319},
       {0.15, 0},
       4.50943,
       {-0.947136, 0.518108},
       {-0.877316, 0.479914},
       {-0.438658, 0.959828}}};
  for (int t = 0; t < 4; ++t) {
    const std::string at = "t=" + std::to_string(t + 1);
    Vec g_hat(2);
    for (int i = 0; i < 2; ++i) {
      expect_rel(l.weight(i), want[t].w[i], at + " w_t");
      expect_rel(l.hat_weight(i), want[t].w_hat[i], at + " w^_t");
      g_hat[i] = a[i] * kP2[t][i];
      expect_rel(g_hat[i], want[t].g_hat[i], at + " g^");
    }
    l.update(gradient_example(kP2[t], "ab"), 1.0);
    hat.update(gradient_example(g_hat), 1.0);
    expect_rel(l.abar(), want[t].abar, at + " abar");
    for (int i = 0; i < 2; ++i) {
      expect_rel(l.hat_u(i), want[t].u_hat[i], at + " u^");
      expect_rel(l.hat_weight(i), want[t].w_hat_next[i], at + " w^_{t+1}");
      expect_rel(l.weight(i), want[t].w_next[i], at + " w_{t+1}");
      EXPECT_EQ(hat.weight(i), l.hat_weight(i)) << at;  // exactly: the scales are powers of 2
    }
    double ellipse = 0.0;
    for (int i = 0; i < 2; ++i) ellipse += std::pow(l.weight(i) / a[i], 2);
    EXPECT_LE(std::sqrt(ellipse), 1.0 + 1e-12);
  }
  EXPECT_EQ(l.slots()[0].a, 0.5);
  EXPECT_EQ(l.slots()[1].a, 2.0);
}

TEST(FtprlOracle, P6NonDiagonalAThroughTheDenseReference) {
  // A dense A is not a hashed learner (it costs O(d^2) per round); the dense reference (Theorem 5's
  // transformation, the same arithmetic as the learners) reproduces the oracle. A^-1 = [[1, -1], [-1, 2]].
  ScaleRef ref({{1, -1}, {-1, 2}}, 1.0);
  struct Row {
    Vec w, g_hat;
    double abar;
    Vec u_hat, w_hat, w_next;
  };
  const Row want[] = {
      {{0, 0}, {1, -1}, 1.41421, {-0.707107, 0.707107}, {-0.707107, 0.707107}, {-1.41421, 2.12132}},
      {{-1.41421, 2.12132},
       {2, -4},
       4.69042,
       {-1.13351, 1.55991},
       {-0.587842, 0.808976},
       {-1.39682, 2.20579}},
      {{-1.39682, 2.20579},
       {-1.5, 2.5},
       5.52268,
       {-0.779669, 0.994066},
       {-0.617145, 0.78685},
       {-1.40399, 2.19084}},
      {{-1.40399, 2.19084},
       {0.3, -0.3},
       5.53895,
       {-0.833354, 1.04762},
       {-0.622533, 0.782594},
       {-1.40513, 2.18772}}};
  double linear_loss = 0.0;
  for (int t = 0; t < 4; ++t) {
    const std::string at = "t=" + std::to_string(t + 1);
    for (int i = 0; i < 2; ++i) expect_rel(ref.w[i], want[t].w[i], at + " w_t");
    linear_loss += kP2[t][0] * ref.w[0] + kP2[t][1] * ref.w[1];
    ref.step(kP2[t]);
    expect_rel(ref.hat.abar, want[t].abar, at + " abar");
    for (int i = 0; i < 2; ++i) {
      expect_rel(ref.g_hat[i], want[t].g_hat[i], at + " g^");
      expect_rel(ref.hat.u[i], want[t].u_hat[i], at + " u^");
      expect_rel(ref.hat.w[i], want[t].w_hat[i], at + " w^");
      expect_rel(ref.w[i], want[t].w_next[i], at + " w_{t+1}");
    }
    const double aw0 = 2 * ref.w[0] + ref.w[1], aw1 = ref.w[0] + ref.w[1];  // A w
    EXPECT_NEAR(std::hypot(aw0, aw1), 1.0, 1e-12) << at;
  }
  expect_rel(linear_loss, -1.75964, "sum g.w");
}

// Post-hoc optimal diagonal bound on the unit L_p ball (Section 3.3, Equation (13), Theorem 4; the closed
// form derived by hand): lambda* and B*.
struct PostHoc {
  double bound;
  Vec lambda;
};
PostHoc post_hoc(const Vec& g, double p) {
  PostHoc r;
  if (p == 2.0) {
    double s = 0.0;
    for (double x : g) s += x;
    r.bound = 2.0 * std::sqrt(2.0 * s);
    r.lambda.assign(g.size(), std::sqrt(s / 2.0));
    return r;
  }
  const double q = std::isinf(p) ? 1.0 : p / (p - 2.0);
  const double p_star = std::isinf(p) ? 1.0 : p / (p - 1.0);
  double s = 0.0, norm = 0.0;
  for (double x : g) {
    s += std::pow(x, q / (q + 1.0));
    norm += std::pow(x, p_star / 2.0);
  }
  const double c = std::sqrt(std::pow(s, 1.0 - 1.0 / q) / 2.0);
  for (double x : g) r.lambda.push_back(c * std::pow(x, 1.0 / (q + 1.0)));
  r.bound = 2.0 * std::sqrt(2.0) * std::pow(norm, 1.0 / p_star);
  return r;
}
// The objective it minimises: 2 ||lambda||_q + sum G_i / lambda_i (q = p/(p-2); q = inf at p = 2).
double post_hoc_objective(const Vec& g, const Vec& lambda, double p) {
  double nq = 0.0, rest = 0.0;
  const double q = std::isinf(p) ? 1.0 : (p == 2.0 ? INFINITY : p / (p - 2.0));
  for (size_t i = 0; i < g.size(); ++i) {
    nq = std::isinf(q) ? std::max(nq, lambda[i]) : nq + std::pow(lambda[i], q);
    rest += g[i] / lambda[i];
  }
  return 2.0 * (std::isinf(q) ? nq : std::pow(nq, 1.0 / q)) + rest;
}

TEST(FtprlOracle, P7PostHocBoundsOnLpBalls) {
  const Vec g = {1, 4, 9};
  struct Case {
    double p, bound;
    Vec lambda;
  };
  const Case cases[] = {{2.0, 10.583, {2.64575, 2.64575, 2.64575}},
                        {4.0, 13.2604, {1.18346, 1.87863, 2.46171}},
                        {INFINITY, 16.9706, {0.707107, 1.41421, 2.12132}}};
  for (const auto& c : cases) {
    const PostHoc r = post_hoc(g, c.p);
    expect_rel(r.bound, c.bound, "B* p=" + std::to_string(c.p));
    for (int i = 0; i < 3; ++i) expect_rel(r.lambda[i], c.lambda[i], "lambda* p=" + std::to_string(c.p));
    // The closed form is the objective's value at lambda*, and no nearby lambda does better.
    EXPECT_NEAR(post_hoc_objective(g, r.lambda, c.p), r.bound, 1e-9 * r.bound);
    for (int i = 0; i < 3; ++i)
      for (double f : {0.99, 1.01}) {
        Vec l = r.lambda;
        l[i] *= f;
        EXPECT_GE(post_hoc_objective(g, l, c.p), r.bound - 1e-9);
      }
  }
}

// ---- the sparse/lazy schemes equal the dense algorithm ----

// A random sparse stream on d = 8 slots: 1-4 features per example, values spanning 1e-2..1e2, slots sometimes
// repeated inside an example (index + 8 masks to the same slot: the gradient's coordinate is the sum).
struct Round {
  Example x;
  double dloss;
  Vec g;  // the dense gradient on the 8 slots
};
std::vector<Round> random_stream(size_t n, uint32_t seed, bool growing = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::vector<Round> out;
  double scale = 1e-150;
  for (size_t t = 0; t < n; ++t) {
    Round r;
    r.g.assign(8, 0.0);
    const int k = 1 + static_cast<int>(rng() % 4);
    std::vector<std::pair<uint64_t, float>> feats;
    for (int j = 0; j < k; ++j) {
      const uint64_t slot = rng() % 8;
      const bool twin = rng() % 6 == 0;
      // The growing stream pushes one way (positive values, dloss > 0), so the projection stays active.
      const double sign = growing ? 1.0 : u01(rng) - 0.5;
      const float v = static_cast<float>(sign * std::pow(10.0, 4.0 * u01(rng) - 2.0));
      feats.emplace_back(slot + (twin ? 8 : 0), v);
    }
    // Group features by namespace ('a' + slot % 3): ftprl-scale sees contiguous groups, as parsed.
    std::sort(feats.begin(), feats.end(),
              [](auto& a, auto& b) { return (a.first % 8) % 3 < (b.first % 8) % 3; });
    for (const auto& [idx, v] : feats) {
      const unsigned char ns = static_cast<unsigned char>('a' + (idx % 8) % 3);
      const uint32_t at = static_cast<uint32_t>(r.x.features.size());
      if (r.x.groups.empty() || r.x.groups.back().ns != ns) r.x.groups.push_back(FeatureGroup{ns, at, at});
      r.x.features.push_back(Feature{idx, v});
      r.x.groups.back().end = at + 1;
    }
    r.x.num_linear = static_cast<uint32_t>(r.x.features.size());
    if (growing) {
      scale *= 1.05;  // gradients from 1e-150 up to 1e147: sigma falls below 1e-150 and v is renormalised
      r.dloss = scale;
    } else {
      r.dloss = rng() % 10 == 0 ? 0.0 : (u01(rng) - 0.5) * 4.0;
    }
    for (const auto& [idx, v] : feats) r.g[idx % 8] += r.dloss * static_cast<double>(v);
    out.push_back(r);
  }
  return out;
}

double max_rel_diff(const Vec& a, const Vec& b) {
  double scale = 0.0, diff = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max({scale, std::fabs(a[i]), std::fabs(b[i])});
    diff = std::max(diff, std::fabs(a[i] - b[i]));
  }
  return scale == 0.0 ? diff : diff / scale;
}

Vec weights(const FtprlBase& l) {
  Vec w(8);
  for (uint64_t i = 0; i < 8; ++i) w[i] = weight_of(l, i);
  return w;
}

// A wide example whose slots repeat (as -q ff gives at -b 18) takes the merge path and its radix sort (2 passes at
// 14 bits): learning on it must equal learning on the example merged by hand, one feature per slot, in slot order.
// Values are multiples of 1/4, so the hand-made sums are exact in float.
TEST(FtprlMerge, WideExampleWithRepeatedSlotsEqualsItsMergedForm) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> pool;
  for (int k = 0; k < 300; ++k) pool.push_back(rng() % (uint64_t{1} << 14));
  Example wide, merged;
  std::map<uint64_t, float> sums;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t slot = pool[rng() % pool.size()];
    const float v = static_cast<float>(static_cast<int>(rng() % 17) - 8) / 4.0f;
    if (v == 0.0f) continue;
    wide.features.push_back(Feature{slot + (rng() % 4) * (uint64_t{1} << 14), v});  // high bits masked away
    sums[slot] += v;
  }
  for (const auto& [slot, v] : sums) merged.features.push_back(Feature{slot, v});
  wide.num_linear = static_cast<uint32_t>(wide.features.size());
  merged.num_linear = static_cast<uint32_t>(merged.features.size());
  SquaredLoss loss;
  for (const char* kind : {"diag", "box", "ball"}) {
    auto a = make(kind, loss, 14, 0.5);
    auto b = make(kind, loss, 14, 0.5);
    update_of(*a, wide, 1.0);
    update_of(*b, merged, 1.0);
    int moved = 0;
    for (const auto& [slot, v] : sums) {
      EXPECT_EQ(weight_of(*a, slot), weight_of(*b, slot)) << kind << " slot " << slot;
      moved += weight_of(*a, slot) != 0.0;
    }
    EXPECT_GT(moved, 200) << kind;
  }
}

TEST(FtprlLazy, DiagEqualsDense) {
  SquaredLoss loss;
  FtprlDiagLearner l(options(0.7), loss, 3);
  DiagRef ref(Vec(8, 0.7));
  double worst = 0.0;
  for (const Round& r : random_stream(3000, 1)) {
    l.update(r.x, r.dloss);
    Vec g = r.g;
    if (r.dloss == 0.0) g.assign(8, 0.0);
    ref.step(g);
    worst = std::max(worst, max_rel_diff(weights(l), ref.w));
  }
  std::printf("[ lazy ] diag: largest relative deviation from the dense reference %.3g\n", worst);
  EXPECT_LT(worst, 1e-12);
}

TEST(FtprlLazy, ConstBoxEqualsDense) {
  SquaredLoss loss;
  FtprlConstBoxLearner l(options(0.3, "box"), loss, 3);
  ConstRef ref(false, 0.3, 8);
  double worst = 0.0;
  int clipped = 0;
  for (const Round& r : random_stream(3000, 2)) {
    l.update(r.x, r.dloss);
    ref.step(r.g);
    worst = std::max(worst, max_rel_diff(weights(l), ref.w));
    Vec u(8);
    for (uint64_t i = 0; i < 8; ++i) u[i] = l.u(i);
    worst = std::max(worst, max_rel_diff(u, ref.u));
    for (double x : ref.u) clipped += std::fabs(x) > 0.3;
  }
  std::printf("[ lazy ] const box: largest relative deviation from the dense reference %.3g\n", worst);
  EXPECT_LT(worst, 1e-12);
  EXPECT_GT(clipped, 1000);  // the lazy catch-up of clipped coordinates was exercised
}

TEST(FtprlLazy, ConstBallEqualsDenseWithRecomputeAndRenormalisation) {
  SquaredLoss loss;
  for (bool growing : {false, true}) {
    FtprlConstBallLearner l(options(2.0), loss, 3);
    ConstRef ref(true, 2.0, 8);
    double worst = 0.0, last_sigma = 1.0;
    int projected = 0, renormalised = 0;
    // 70000 rounds pass N's first recompute (every 2^16 updates); the growing stream takes sigma below
    // 1e-150.
    for (const Round& r : random_stream(growing ? 14000 : 70000, 3, growing)) {
      l.update(r.x, r.dloss);
      ref.step(r.g);
      worst = std::max(worst, max_rel_diff(weights(l), ref.w));
      renormalised += l.sigma() > last_sigma;  // sigma only decreases, except when v is renormalised
      last_sigma = l.sigma();
      projected += l.projection_factor() < 1.0;
      double n2 = 0.0;
      for (double u : ref.u) n2 += u * u;
      ASSERT_NEAR(l.norm2(), n2, 1e-9 * n2) << growing;
    }
    std::printf("[ lazy ] const ball%s: largest relative deviation from the dense reference %.3g\n",
                growing ? " (1e-150 to 1e147 gradients)" : "", worst);
    EXPECT_LT(worst, growing ? 1e-9 : 1e-10) << growing;
    EXPECT_GT(projected, growing ? 100 : 10000) << growing;
    if (growing) {
      EXPECT_GT(renormalised, 0);
    }
  }
}

TEST(FtprlLazy, ScaleEqualsDenseEllipsoid) {
  SquaredLoss loss;
  // Namespaces a, b, c = slots with slot % 3 = 0, 1, 2; A = diag(1 / a_slot).
  FtprlScaleLearner l(options(1.5, "ball", "a:0.3,b:7,*:1.9"), loss, 3);
  const double by_ns[] = {0.3, 7.0, 1.9};
  std::vector<Vec> a_inv(8, Vec(8, 0.0));
  for (int i = 0; i < 8; ++i) a_inv[i][i] = by_ns[i % 3];
  ScaleRef ref(a_inv, 1.5);
  double worst = 0.0;
  for (const Round& r : random_stream(5000, 4)) {
    l.update(r.x, r.dloss);
    ref.step(r.g);
    worst = std::max(worst, max_rel_diff(weights(l), ref.w));
  }
  std::printf("[ lazy ] scale: largest relative deviation from the dense reference %.3g\n", worst);
  EXPECT_LT(worst, 1e-11);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(l.slots()[i].a, by_ns[i % 3]);
}

// ---- invariances (of the updates of Corollary 1 and Algorithm 1; Theorem 5 for ftprl-scale) ----

TEST(FtprlProperty, PositiveGradientScalingLeavesIteratesUnchanged) {
  SquaredLoss loss;
  for (const char* kind : kKinds) {
    auto a = make(kind, loss, 3, 1.0, "a:0.5,b:3"), b = make(kind, loss, 3, 1.0, "a:0.5,b:3");
    for (const Round& r : random_stream(2000, 5)) {
      update_of(*a, r.x, r.dloss);
      update_of(*b, r.x, 1234.5 * r.dloss);
      ASSERT_LT(max_rel_diff(weights(*a), weights(*b)), 1e-11) << kind;
    }
  }
}

TEST(FtprlProperty, RadiusScalesEveryIterate) {
  SquaredLoss loss;
  for (const char* kind : kKinds) {
    auto a = make(kind, loss, 3, 1.0), b = make(kind, loss, 3, 8.0);
    for (const Round& r : random_stream(2000, 6)) {
      update_of(*a, r.x, r.dloss);
      update_of(*b, r.x, r.dloss);
      Vec wa = weights(*a);
      for (double& w : wa) w *= 8.0;
      ASSERT_LT(max_rel_diff(wa, weights(*b)), 1e-11) << kind;
    }
  }
}

TEST(FtprlProperty, DiagUnclippedEqualsAdagrad) {
  // Unprojected ftprl-diag (Algorithm 1 with the sign of u corrected, see P1) is diagonal AdaGrad with
  // eta_i = D_i/2 = R and no epsilon: compare while AdaGrad stays inside the box.
  SquaredLoss loss;
  // The coordinates of a box are independent: each is compared until AdaGrad first leaves [-R, R].
  const double r = 50.0;
  FtprlDiagLearner l(options(r), loss, 3);
  Vec w(8), big_g(8);
  std::vector<bool> inside(8, true);
  int compared = 0;
  for (const Round& x : random_stream(2000, 7)) {
    l.update(x.x, x.dloss);
    for (int i = 0; i < 8; ++i) {
      if (x.g[i] == 0.0) continue;
      big_g[i] += x.g[i] * x.g[i];
      w[i] -= r * x.g[i] / std::sqrt(big_g[i]);
      inside[i] = inside[i] && std::fabs(w[i]) <= r;
    }
    for (int i = 0; i < 8; ++i) {
      if (!inside[i]) continue;
      ASSERT_NEAR(l.weight(i), w[i], 1e-12 * r);
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

TEST(FtprlProperty, ScaleEqualsConstOnTransformedFeaturesOnRealData) {
  // Theorem 5: ftprl-scale with A = diag(1/a) equals ftprl-const on g^ = a g over the (unit) ball. On
  // heart_scale (13 collision-free features in namespace f, and the constant), through learn(), logistic.
  LogisticLoss loss(-1.0f, 1.0f);
  const auto& data = heart();
  std::set<uint64_t> slots;
  for (const auto& x : data)
    for (const auto& f : x.features) slots.insert(f.index & 0x3FFFF);
  ASSERT_EQ(slots.size(), 14u);
  for (double r : {1.0, 0.25}) {
    FtprlScaleLearner s(options(r, "ball", "f:0.25,constant:4"), loss, 18);
    FtprlConstBallLearner c(options(r), loss, 18);
    for (int pass = 0; pass < 3; ++pass) {
      for (const Example& x : data) {
        Example xh = x;
        for (const FeatureGroup& g : xh.groups)
          for (uint32_t i = g.begin; i < g.end; ++i) xh.features[i].value *= g.ns == 'f' ? 0.25f : 4.0f;
        const Prediction ps = s.learn(x), pc = c.learn(xh);
        ASSERT_EQ(ps.raw, pc.raw);  // exactly: the scales are powers of 2
        for (uint64_t slot : slots) ASSERT_EQ(s.hat_weight(slot), c.weight(slot));
      }
    }
    EXPECT_GT(s.grad_sum(), 0.0);
  }
}

// ---- feasibility and importance weights on real data ----

TEST(FtprlProperty, IteratesStayFeasibleOnRcv1) {
  LogisticLoss loss(-1.0f, 1.0f);
  const auto& data = rcv1();
  ASSERT_EQ(data.size(), 1000u);
  for (const char* kind : kKinds) {
    for (double r : {0.1, 1.0, 10.0}) {
      auto l = make(kind, loss, 18, r, "f:0.5,constant:3");
      auto* scale = dynamic_cast<FtprlScaleLearner*>(l.get());
      const auto weight = weight_fn(*l);
      double worst = 0.0;  // largest ||w|| / R over the run (sup norm for the boxes)
      for (size_t t = 0; t < data.size(); ++t) {
        l->learn(data[t]);
        const bool full = t % 100 == 99 || t + 1 == data.size();
        double sup = 0.0, l2 = 0.0;
        if (full) {
          for (uint64_t i = 0; i < (uint64_t{1} << 18); ++i) {
            const double w = weight(i);
            const double wh = scale ? (scale->slots()[i].a > 0 ? w / scale->slots()[i].a : 0.0) : w;
            sup = std::max(sup, std::fabs(w));
            l2 += wh * wh;
          }
        } else {
          for (const Feature& f : data[t].features) sup = std::max(sup, std::fabs(weight_of(*l, f.index)));
        }
        const bool box = std::string(kind) == "diag" || std::string(kind) == "box";
        worst = std::max(worst, box ? sup / r : std::sqrt(l2) / r);
      }
      EXPECT_LE(worst, 1.0 + 1e-9) << kind << " R=" << r;
      EXPECT_GT(worst, 0.5) << kind << " R=" << r;  // the constraint is reached, so the check means something
    }
  }
}

TEST(FtprlProperty, ImportanceWeightScalesTheGradient) {
  LogisticLoss loss(-1.0f, 1.0f);
  const auto& data = rcv1();
  for (const char* kind : kKinds) {
    auto a = make(kind, loss, 18, 1.0), b = make(kind, loss, 18, 1.0);
    for (size_t t = 0; t < 300; ++t) {
      Example x = data[t];
      x.weight = 0.5f + static_cast<float>(t % 4);
      const Prediction p = a->learn(x);
      const Prediction q = b->predict(x);
      ASSERT_EQ(p.raw, q.raw) << kind;
      update_of(*b, x, loss.first_derivative(q.value, x.label, {}) * x.weight);
    }
    EXPECT_EQ(state_of(*a), state_of(*b)) << kind;
  }
}

// ---- a loaded model ----

// Resumed training with the learner's own options is the conformance suite's. A model loaded into a learner
// built with another radius and other scales continues with the model's: radius, scales and state all come
// from the file, through a pass and a second one, and the readable model (which prints the radius) follows.
TEST(FtprlModel, LoadedModelKeepsItsRadiusAndScales) {
  LogisticLoss loss(-1.0f, 1.0f);
  const auto& data = rcv1();
  for (const char* kind : kKinds) {
    auto whole = make(kind, loss, 18, 0.7, "f:0.5,constant:2");
    for (size_t t = 0; t < 600; ++t) whole->learn(data[t]);
    const auto bytes = state_of(*whole);
    auto resumed = make(kind, loss, 18, 3.0, "*:9");
    ModelReader in(bytes.data(), bytes.size(), "mem");
    resumed->load(in);
    EXPECT_EQ(in.remaining(), 0u) << kind;
    EXPECT_EQ(resumed->radius(), 0.7) << kind;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t t = pass == 0 ? 600 : 0; t < data.size(); ++t) {
        const Prediction a = whole->learn(data[t]), b = resumed->learn(data[t]);
        ASSERT_EQ(a.raw, b.raw) << kind << " example " << t;
      }
    EXPECT_EQ(state_of(*whole), state_of(*resumed)) << kind;
    std::ostringstream ra, rb;
    whole->write_readable(ra);
    resumed->write_readable(rb);
    EXPECT_EQ(ra.str(), rb.str());
    EXPECT_GT(ra.str().size(), 1000u);
  }
}

// The two weight sets of ftprl-const (one registry row, --ftprl_set ball or box) keep different states: each
// refuses the other's. (Other rows' states are the conformance suite's.)
TEST(FtprlModel, BallAndBoxRefuseEachOthersState) {
  LogisticLoss loss(-1.0f, 1.0f);
  for (const auto& [from, into] : {std::pair<const char*, const char*>{"ball", "box"}, {"box", "ball"}}) {
    auto l = make(from, loss, 10, 1.0);
    for (size_t t = 0; t < 50; ++t) l->learn(rcv1()[t]);
    const auto bytes = state_of(*l);
    auto o = make(into, loss, 10, 1.0);
    ModelReader in(bytes.data(), bytes.size(), "mem");
    EXPECT_THROW(o->load(in), ModelFormatError) << from << " into " << into;
  }
}

// ---- options ----

TEST(FtprlOptions, ParsesAndRejects) {
  const FtprlOptions o = options(2.5, "box", "a:0.1, :3,constant:7,*:2");
  EXPECT_EQ(o.radius, 2.5);
  EXPECT_EQ(o.set, FtprlOptions::Set::kBox);
  EXPECT_EQ(o.scale.of_group('a'), 0.1);
  EXPECT_EQ(o.scale.of_group(' '), 3.0);
  EXPECT_EQ(o.scale.of_group(0x80), 7.0);
  EXPECT_EQ(o.scale.of_group('z'), 2.0);
  EXPECT_EQ(o.scale.other(), 2.0);
  for (const char* bad : {"0", "-1", "1e31", "abc", "inf", "nan", "1x"}) {
    OptionValues v;
    v.set("ftprl_radius", bad, true);
    EXPECT_THROW(FtprlOptions::from(v), ConfigError) << bad;
  }
  for (const char* bad : {"features:2", "a:0", "a", "a:1,a:2", "*:1,*:2", "a:1,,b:2", "a:-3", "a:1e40"}) {
    OptionValues v;
    v.set("ftprl_scale", bad, true);
    EXPECT_THROW(FtprlOptions::from(v), ConfigError) << bad;
  }
  OptionValues v;
  v.set("ftprl_set", "sphere", true);
  EXPECT_THROW(FtprlOptions::from(v), ConfigError);
  // Defaults: the radius from the data (no default value; FtprlOptions{} is the published R = 1), the ball,
  // every scale 1.
  const FtprlOptions d = FtprlOptions::from(OptionValues{});
  EXPECT_TRUE(d.data_radius);
  EXPECT_FALSE(FtprlOptions{}.data_radius);
  EXPECT_EQ(FtprlOptions{}.radius, 1.0);
  EXPECT_EQ(d.set, FtprlOptions::Set::kBall);
  EXPECT_EQ(d.scale.of_group('q'), 1.0);
  EXPECT_EQ(ftprl_diag_row().options[0].default_value, "");
}

// ---- numerics at scale ----

// 10^7 rounds of a same-sign gradient (dloss = +1) on examples whose feature values run from 1e-30 to 1e30
// (1e-30, 1e-10, 1, 1e10, 1e30 and a cycle of 64 log-uniform draws), driving update() directly. Nothing may
// become NaN or infinite, and no safeguard may be needed; the boxes and balls must hold.
template <class L>
void same_sign_stream(L& l, const std::string& kind) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Example> xs;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> expo(-30.0, 30.0);
  for (int k = 0; k < 64; ++k) {
    Example x;
    const double fixed[] = {1e-30, 1e-10, 1.0, 1e10, 1e30};
    for (int i = 0; i < 5; ++i)
      x.features.push_back(Feature{static_cast<uint64_t>(i), static_cast<float>(fixed[i])});
    x.features.push_back(Feature{5, static_cast<float>(std::pow(10.0, expo(rng)))});
    x.groups.push_back(FeatureGroup{'a', 0, 6});
    x.num_linear = 6;
    xs.push_back(x);
  }
  const int kRounds = test::long_run(10'000'000);
  for (int t = 0; t < kRounds; ++t) {
    const Example& x = xs[t & 63];
    const Prediction p = l.predict(x);
    if (!std::isfinite(p.raw)) FAIL() << kind << " prediction not finite at round " << t;
    l.update(x, 1.0);
    if ((t & 0xFFFFF) == 0) {  // every 2^20 rounds: every weight (a capped score would count a safeguard)
      for (uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(std::isfinite(l.weight(i))) << kind << " round " << t;
    }
  }
  const double r = l.radius();
  double l2 = 0.0;
  for (uint64_t i = 0; i < 6; ++i) {
    const double w = l.weight(i);
    ASSERT_TRUE(std::isfinite(w)) << kind << " slot " << i;
    l2 += w * w;
    if (kind == "diag" || kind == "box") {
      EXPECT_LE(std::fabs(w), r) << kind;
    }
  }
  if (kind == "ball") {
    EXPECT_LE(std::sqrt(l2), r * (1 + 1e-9));
  }
  // Every weight is pushed against the gradient, to the boundary.
  if (kind == "diag") {
    EXPECT_EQ(l.weight(2), -r);
  }
  static const SquaredLoss kLoss;
  const auto bytes = state_of(l);
  auto copy = make(kind, kLoss, 3, 1.0);
  ModelReader in(bytes.data(), bytes.size(), "mem");
  EXPECT_NO_THROW(copy->load(in)) << kind;  // load() refuses any non-finite field of the state
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ numerics ] %s: %d rounds in %.2f s, %llu safeguards\n", kind.c_str(), kRounds, secs,
              static_cast<unsigned long long>(l.safeguard_count()));
  EXPECT_EQ(l.safeguard_count(), 0u) << kind;  // the extreme values need no cap on this path
}

TEST(FtprlNumerics, DiagTenMillionSameSignRounds) {
  SquaredLoss loss;
  FtprlDiagLearner l(options(1.0), loss, 3);
  same_sign_stream(l, "diag");
}
TEST(FtprlNumerics, ConstBoxTenMillionSameSignRounds) {
  SquaredLoss loss;
  FtprlConstBoxLearner l(options(1.0, "box"), loss, 3);
  same_sign_stream(l, "box");
}
TEST(FtprlNumerics, ConstBallTenMillionSameSignRounds) {
  SquaredLoss loss;
  FtprlConstBallLearner l(options(1.0), loss, 3);
  same_sign_stream(l, "ball");
}
TEST(FtprlNumerics, ScaleTenMillionSameSignRounds) {
  SquaredLoss loss;
  FtprlScaleLearner l(options(1.0, "ball", "a:1e-20"), loss, 3);
  same_sign_stream(l, "scale");
}

TEST(FtprlNumerics, ExtremeLossesAndGradientsAreCappedAndCounted) {
  // Squared loss on feature values up to 1e30 through learn(): the score overflows float, is capped at
  // +-FLT_MAX (counted) and every state stays finite. A gradient whose square underflows double is skipped
  // (counted).
  SquaredLoss loss;
  for (const char* kind : kKinds) {
    auto l = make(kind, loss, 4, 1e30, "*:1e30");
    for (int t = 0; t < 2000; ++t) {
      Example x;
      x.features = {{0, 3e38f}, {1, t % 2 ? 1e30f : -1e-30f}, {2, 1.0f}};
      x.num_linear = 3;
      x.label = t % 3 ? 1e30f : -1e30f;
      x.labeled = true;
      x.weight = t % 5 ? 1.0f : 3e38f;
      const Prediction p = l->learn(x);
      ASSERT_TRUE(std::isfinite(p.raw)) << kind << " " << t;
    }
    EXPECT_GT(l->safeguard_count(), 0u) << kind;
    ModelWriter out;
    l->save(out);
    auto copy = make(kind, loss, 4, 1.0);
    ModelReader in(out.bytes().data(), out.bytes().size(), "mem");
    EXPECT_NO_THROW(copy->load(in)) << kind;

    auto tiny = make(kind, loss, 4, 1.0);
    Example x;
    x.features = {{0, 1e-30f}};
    x.num_linear = 1;
    update_of(*tiny, x, 1e-285);  // g = 1e-315: g^2 underflows to 0
    EXPECT_EQ(tiny->safeguard_count(), 1u) << kind;
    EXPECT_EQ(weight_of(*tiny, 0), 0.0) << kind;
    update_of(*tiny, x, std::nan(""));
    EXPECT_EQ(tiny->safeguard_count(), 2u) << kind;
  }
}

TEST(FtprlNumerics, NonFiniteFeatureValuesAreIgnored) {
  SquaredLoss loss;
  for (const char* kind : kKinds) {
    auto l = make(kind, loss, 4, 1.0);
    Example x;
    x.features = {{0, 1.0f}, {1, INFINITY}, {2, NAN}};
    x.num_linear = 3;
    x.label = 1.0f;
    x.labeled = true;
    for (int t = 0; t < 10; ++t) EXPECT_TRUE(std::isfinite(l->learn(x).raw)) << kind;
    EXPECT_NE(weight_of(*l, 0), 0.0) << kind;
    EXPECT_EQ(weight_of(*l, 1), 0.0) << kind;
    EXPECT_EQ(weight_of(*l, 2), 0.0) << kind;
    EXPECT_GT(l->safeguard_count(), 0u) << kind;
  }
}

// ---- the data-derived radius (--ftprl_radius not given) ----

// --ftprl_radius left out: the data-derived radius (ftprl.h).
FtprlOptions data_options(const char* set = "ball", const char* scale = nullptr) {
  OptionValues v;
  v.set("ftprl_set", set, true);
  if (scale) v.set("ftprl_scale", scale, true);
  return FtprlOptions::from(v);
}

FtprlFullOptions full_options(bool data, double radius = 1.0) {
  FtprlFullOptions o;
  o.data_radius = data;
  o.radius = data ? kDataRadiusFull : radius;
  return o;
}

// The four hashed learners and ftprl-full's two modes with the data-derived radius (fixed: --ftprl_radius 1).
std::unique_ptr<Learner> make_any(const std::string& kind, const Loss& loss, bool data, int bits = 10) {
  if (kind == "full") return std::make_unique<FtprlFullLearner>(full_options(data), loss, bits);
  if (kind == "sketch") return std::make_unique<FtprlSketchLearner>(full_options(data), 4, loss, bits);
  if (!data) return make(kind, loss, bits, 1.0);
  if (kind == "diag") return std::make_unique<FtprlDiagLearner>(data_options(), loss, bits);
  if (kind == "box") return std::make_unique<FtprlConstBoxLearner>(data_options("box"), loss, bits);
  if (kind == "ball") return std::make_unique<FtprlConstBallLearner>(data_options(), loss, bits);
  return std::make_unique<FtprlScaleLearner>(data_options("ball", "*:2"), loss, bits);
}
const char* const kAllKinds[] = {"diag", "box", "ball", "scale", "full", "sketch"};

TEST(FtprlDataRadius, IsTheDefaultAndAGivenRadiusIsThePublishedOne) {
  EXPECT_TRUE(FtprlOptions::from(OptionValues{}).data_radius);
  EXPECT_FALSE(options(1.0).data_radius);
  EXPECT_TRUE(FtprlFullOptions::from(OptionValues{}).data_radius);
  OptionValues v;
  v.set("ftprl_radius", "0.5", true);
  EXPECT_FALSE(FtprlFullOptions::from(v).data_radius);
  EXPECT_EQ(FtprlFullOptions::from(v).radius, 0.5);
  LogisticLoss loss(-1.0f, 1.0f);
  EXPECT_NE(FtprlDiagLearner(data_options(), loss, 4).describe()[0].find("data"), std::string::npos);
}

// ftprl-diag's data-derived boxes against a dense reference of the master algorithm (eq. (7), (9)) with
// R_i = c / (M_i X^), X^ the largest ||x^||, x^_i = x_i / M_i, and lbar_i = M_i sqrt(G_i) X^ / c as of the
// coordinate's last gradient (M_i and X^ including this round's; dloss = 1, so g = x), on values that grow
// and shrink.
TEST(FtprlDataRadius, DiagEqualsTheMasterAlgorithmWithShrinkingBoxes) {
  LogisticLoss loss(-1.0f, 1.0f);
  FtprlDiagLearner l(data_options(), loss, 4);
  const double c = kDataRadiusDiag;
  const size_t d = 3;
  Vec m(d), g2(d), lbar(d), q(d), z(d), u(d);
  double big_x = 0.0;
  const std::vector<Vec> gs = {{0.5, 0, 2},  {-3, 1, 0},    {0.25, -8, -1},
                               {10, 0.5, 0}, {-0.1, 2, 40}, {1, 1, -1}};
  for (const Vec& g : gs) {
    l.update(gradient_example(g), 1.0);
    double n2 = 0.0;
    for (size_t i = 0; i < d; ++i) {
      if (g[i] == 0.0) continue;
      m[i] = std::max(m[i], std::fabs(g[i]));
      n2 += (g[i] / m[i]) * (g[i] / m[i]);
    }
    big_x = std::max(big_x, std::sqrt(n2));
    for (size_t i = 0; i < d; ++i) {
      if (g[i] == 0.0) continue;
      const double r = c / (m[i] * big_x);
      const double w = std::clamp(u[i], -r, r);  // the point played
      g2[i] += g[i] * g[i];
      const double lb = m[i] * std::sqrt(g2[i]) * big_x / c;
      q[i] += (lb - lbar[i]) * w;
      z[i] += g[i];
      lbar[i] = lb;
      u[i] = (q[i] - z[i]) / lb;
    }
    EXPECT_EQ(l.largest_norm(), big_x);
    for (size_t i = 0; i < d; ++i) {
      const double r = c / (m[i] * big_x);
      expect_rel(l.slots()[i].u, u[i], "u");
      expect_rel(l.weight(i), m[i] > 0.0 ? std::clamp(u[i], -r, r) : 0.0, "w");
      EXPECT_EQ(l.slots()[i].m, m[i]);
      // Every w_i x_i is at most c / X^ for every x_i seen.
      EXPECT_LE(std::fabs(l.weight(i)) * m[i] * big_x, c * (1 + 1e-12));
    }
  }
}

// heart with column `col` (a hashed index) multiplied by k, or every feature when col is -1.
std::vector<Example> heart_scaled(int64_t col, double k) {
  std::vector<Example> out = heart();
  for (Example& x : out)
    for (Feature& f : x.features)
      if (col < 0 || f.index == static_cast<uint64_t>(col)) f.value = static_cast<float>(f.value * k);
  return out;
}

// Two passes over `data`: the progressive raw scores.
Vec scores(Learner& l, const std::vector<Example>& data) {
  Vec out;
  for (int pass = 0; pass < 2; ++pass)
    for (const Example& x : data) out.push_back(l.learn(x).raw);
  return out;
}

double largest_difference(const Vec& a, const Vec& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

// Multiplying every feature by k leaves every prediction of the data-derived radius unchanged (all six
// learners); multiplying one column does so for ftprl-diag and ftprl-scale (per-feature scales). The
// published fixed radius is not invariant (so the test can fail).
TEST(FtprlDataRadius, PredictionsAreInvariantToFeatureScale) {
  LogisticLoss loss(-1.0f, 1.0f);
  const uint64_t col = heart()[0].features[2].index;
  for (const char* kind : kAllKinds) {
    const std::string k = kind;
    auto base = make_any(k, loss, true);
    const Vec want = scores(*base, heart());
    // Rounding only: 1e-3 of the largest score. ftprl-const's box is checked at powers of two only (below,
    // bit for bit): its steps, D = 2c sqrt(2^b) with dloss's slope, multiply a rounding difference in a score
    // by about D / sqrt(G) per round, so other factors' float roundings grow to differences of the score's
    // size.
    double top = 1.0;
    for (double w : want) top = std::max(top, std::fabs(w));
    for (double factor : {256.0, 1.0 / 64, 3.7, 1000.0}) {
      if (k == "box" && factor != 256.0 && factor != 1.0 / 64) continue;
      auto all = make_any(k, loss, true);
      EXPECT_LT(largest_difference(scores(*all, heart_scaled(-1, factor)), want), 1e-3 * top)
          << k << " x " << factor << ", largest score " << top;
      if (k == "diag" || k == "scale") {
        auto one = make_any(k, loss, true);
        EXPECT_LT(largest_difference(scores(*one, heart_scaled(static_cast<int64_t>(col), factor)), want),
                  1e-3 * top)
            << k << " column x " << factor;
      }
    }
    // Powers of two scale every intermediate exactly: the predictions are identical.
    auto exact = make_any(k, loss, true);
    if (k == "diag" || k == "box" || k == "ball") {
      const Vec got = scores(*exact, heart_scaled(-1, 256.0));
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << k << " example " << i;
    }
    // The published radius (--ftprl_radius 1) sees raw-scaled data differently.
    auto fixed = make_any(k, loss, false);
    auto fixed_raw = make_any(k, loss, false);
    EXPECT_GT(largest_difference(scores(*fixed, heart()), scores(*fixed_raw, heart_scaled(-1, 255.0))), 0.1)
        << k;
  }
}

// Saved after the first half of rcv1 and loaded into a learner built with another radius (a fixed one), the
// data-derived state (M_i, X) comes back and the second half's predictions equal one run's, bit for bit.
TEST(FtprlDataRadius, ResumedRunEqualsOneRun) {
  LogisticLoss loss(-1.0f, 1.0f);
  const auto& data = rcv1();
  const size_t half = 300, end = 600;
  for (const char* kind : kAllKinds) {
    const std::string k = kind;
    // ftprl-full keeps a dense matrix per feature: heart for it (few features), rcv1 for the others.
    const std::vector<Example>& xs = k == "full" ? heart() : data;
    const size_t h = k == "full" ? 100 : half, e = k == "full" ? 270 : end;
    auto one = make_any(k, loss, true);
    Vec want;
    for (size_t t = 0; t < e; ++t) want.push_back(one->learn(xs[t]).raw);
    auto first = make_any(k, loss, true);
    for (size_t t = 0; t < h; ++t) first->learn(xs[t]);
    const auto bytes = state_of(*first);
    auto resumed = make_any(k, loss, false);  // built with --ftprl_radius 1: the model's mode wins
    ModelReader in(bytes.data(), bytes.size(), "mem");
    resumed->load(in);
    EXPECT_EQ(state_of(*resumed), bytes) << k;
    for (size_t t = h; t < e; ++t) ASSERT_EQ(resumed->learn(xs[t]).raw, want[t]) << k << " example " << t;
    EXPECT_EQ(state_of(*resumed), state_of(*one)) << k;
  }
}

// A model saved before the data-derived radius (state "ftprl-diag", slots (u, s)) still loads, as the
// published algorithm with its radius.
TEST(FtprlDataRadius, DiagModelOfTheFormerLayoutLoads) {
  LogisticLoss loss(-1.0f, 1.0f);
  auto l = make("diag", loss, 4, 0.5);
  for (size_t t = 0; t < 30; ++t) l->learn(heart()[t]);
  ModelWriter w;
  w.put_string("ftprl-diag");
  w.put_f64(0.5);
  common::LabelClip(loss.initial_range(), false).save(w);
  struct OldSlot {
    double u, s;
  };
  ZeroedTable<OldSlot> old(16);
  const auto& d = dynamic_cast<const FtprlDiagLearner&>(*l);
  for (size_t i = 0; i < 16; ++i) old[i] = OldSlot{d.slots()[i].u, d.slots()[i].s};
  EXPECT_NE(d.slots()[1].u, 0.0);
  common::save_table(  // the former layout's slot table: every nonzero slot, its fields raw
      w, old.size(), common::touched(old), [&](uint64_t i) { return !common::all_zero(old[i]); },
      [&](uint64_t i) { w.put_values(&old[i].u, 2); });
  FtprlDiagLearner back(data_options(), loss, 4);
  ModelReader in(w.bytes().data(), w.bytes().size(), "mem");
  back.load(in);
  EXPECT_FALSE(back.data_radius());
  EXPECT_EQ(back.radius(), 0.5);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(back.slots()[i].u, d.slots()[i].u);
}

// The other layouts before the data-derived radius ("ftprl-const-box", "ftprl-const-ball", "ftprl-scale": no
// flag, c, X or M; ftprl-scale's slots (v, a)) still load, as the published algorithm with its radius: the
// current state of a given-radius run cut back to the former layout predicts as the run does.
TEST(FtprlDataRadius, BoxAndBallModelsOfTheFormerLayoutsLoad) {
  LogisticLoss loss(-1.0f, 1.0f);
  for (const std::string kind : {"box", "ball", "scale"}) {
    auto l = make(kind, loss, 4, 0.5, "*:2");
    for (size_t t = 0; t < 30; ++t) l->learn(heart()[t]);
    const std::vector<uint8_t> now = state_of(*l);
    const std::string tag = kind == "box"    ? "ftprl-const-box"
                            : kind == "ball" ? "ftprl-const-ball"
                                             : "ftprl-scale";
    const size_t rest =
        8 + tag.size() + 2 + 1 + (kind == "box" ? 8 : 16);  // the tag "...-2", the flag, c / M, X
    size_t table = now.size();  // ftprl-scale: the slot table at the end, records (index, v, a, M)
    uint64_t kept = 0;
    if (kind == "scale") {
      const auto& slots = dynamic_cast<const FtprlScaleLearner&>(*l).slots();
      for (size_t i = 0; i < slots.size(); ++i) kept += common::all_zero(slots[i]) ? 0 : 1;
      ASSERT_GT(kept, 0u);
      table = now.size() - 16 - kept * 32;
    }
    ModelWriter w;
    w.put_string(tag);
    w.put_raw(now.data() + rest, table - rest);
    if (kind == "scale") {
      w.put_raw(now.data() + table, 16);
      for (uint64_t k = 0; k < kept; ++k) w.put_raw(now.data() + table + 16 + k * 32, 24);  // index, v, a
    }
    auto back = make_any(kind, loss, /*data=*/true, 4);
    ModelReader in(w.bytes().data(), w.bytes().size(), "mem");
    back->load(in);
    EXPECT_EQ(dynamic_cast<const FtprlBase&>(*back).radius(), 0.5) << kind;
    for (size_t t = 30; t < 60; ++t)
      EXPECT_EQ(back->predict(heart()[t]).raw, l->predict(heart()[t]).raw) << kind;
  }
}

}  // namespace
}  // namespace lepus

// The robust facts of Chapter 7 of E. Moroshko, "New Min-Max Algorithms and Analysis for Online Regression"
// (M.Sc. thesis, Technion 2013), as a small fast test: on the four synthetic drift datasets (T = 2000, d = 20;
// the recipe of utl/minmax_ch7, which reproduces the chapter with 100 seeds and tuned settings), with the
// settings that benchmark tuned, two fresh sequences per dataset:
//   datasets 1 and 3 (linear drift): AROWR ends worst of NLMS, AROWR, ARCOR, CR-RLS, LASER; CR-RLS ends below NLMS;
//   datasets 2 and 4 (switching): ARCOR ends below LASER.
// The thesis's further claim that LASER ends lowest on datasets 1 and 3 does not hold for LASER as specified
// (its shrunk output p/(1+m)); utl/minmax_ch7 reports it, this test does not assert it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lepus/learner.h"
#include "lepus/loss.h"
#include "lepus/options.h"

namespace lepus {
namespace {

constexpr int kRounds = 2000;

// One sequence of dataset 1-4: x has five pairs R45 (10 z1, z2) and ten N(0, 2) coordinates; dataset 1/3: u_t
// rotates in the first pair by 0.01 rad per round; 2/4: u_t's angle grows by 1/t and the pair carrying it moves
// every 50 rounds over all ten pairs; 3/4 add N(0, 0.05) noise (variances).
std::vector<Example> sequence(int dataset, uint64_t seed) {
  std::mt19937_64 rng(seed * 10 + static_cast<uint64_t>(dataset));
  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<Example> out;
  double th = 0.0;
  for (int t = 1; t <= kRounds; ++t) {
    double x[20];
    for (int k = 0; k < 5; ++k) {
      const double z1 = n01(rng), z2 = n01(rng);
      x[2 * k] = (10 * z1 - z2) / std::sqrt(2.0);
      x[2 * k + 1] = (10 * z1 + z2) / std::sqrt(2.0);
    }
    for (int j = 10; j < 20; ++j) x[j] = std::sqrt(2.0) * n01(rng);
    double u[20] = {};
    if (dataset == 1 || dataset == 3) {
      th = 0.01 * (t - 1);
      u[0] = std::cos(th);
      u[1] = std::sin(th);
    } else {
      th += 1.0 / t;
      const int p = ((t - 1) / 50) % 10;
      u[2 * p] = std::cos(th);
      u[2 * p + 1] = std::sin(th);
    }
    double y = 0.0;
    for (int j = 0; j < 20; ++j) y += x[j] * u[j];
    if (dataset >= 3) y += std::sqrt(0.05) * n01(rng);
    Example ex;
    for (int j = 0; j < 20; ++j)
      ex.features.push_back(Feature{static_cast<uint64_t>(j), static_cast<float>(x[j])});
    ex.num_linear = 20;
    ex.label = static_cast<float>(y);
    ex.labeled = true;
    out.push_back(std::move(ex));
  }
  return out;
}

// The settings utl/minmax_ch7 tuned (docs/minmax_ch7.md), per algorithm and dataset pair (1/3, 2/4).
std::map<std::string, std::string> settings(const std::string& algo, int dataset) {
  const bool linear = dataset == 1 || dataset == 3;
  if (algo == "nlms") return {{"nlms_mu", linear ? "0.6" : "1"}};
  if (algo == "arowr") return {{"arow_r", linear ? "1e6" : "1e4"}};
  if (algo == "arcor") return {{"arow_r", "100"}, {"arcor_Lambda", "0.1"}, {"arcor_RB", "1.5"}};
  if (algo == "cr-rls") return {{"rls_r", linear ? "1" : "0.9"}, {"crrls_T0", linear ? "10" : "50"}};
  return {{"mm_c", linear ? "1e5" : "1e4"}, {"mm_b", linear ? "1e3" : "3e3"}};  // laser
}

// Mean final cumulative squared loss of `algo` over two sequences of `dataset`.
double final_loss(const std::string& algo, int dataset) {
  LossOptions lo;
  lo.name = "squared";
  const auto loss = make_loss(lo);
  double total = 0.0;
  for (uint64_t seed : {1u, 2u}) {
    const LearnerRow* row = find_learner(algo);
    EXPECT_NE(row, nullptr) << algo;
    if (row == nullptr) return NAN;
    OptionValues v;
    for (const auto& spec : row->options)
      if (spec.kind != OptionSpec::Kind::kFlag && !spec.default_value.empty())
        v.set(spec.name, spec.default_value, false);
    for (const auto& [k, val] : settings(algo, dataset)) v.set(k, val, true);
    auto l = row->make(LearnerContext{v, *loss, 18, false});
    for (const Example& ex : sequence(dataset, seed)) {
      const double e = static_cast<double>(l->learn(ex).value) - ex.label;
      total += e * e;
    }
  }
  return total / 2.0;
}

TEST(MinmaxChapter7, RobustFactsOfTheThesisHold) {
  const std::vector<std::string> algos{"nlms", "arowr", "arcor", "cr-rls", "laser"};
  for (int dataset : {1, 2, 3, 4}) {
    SCOPED_TRACE("dataset " + std::to_string(dataset));
    std::map<std::string, double> l;
    for (const auto& a : algos) l[a] = final_loss(a, dataset);
    if (dataset == 1 || dataset == 3) {
      for (const auto& a : algos)
        if (a != "arowr") {
          EXPECT_GT(l["arowr"], l[a]) << a;
        }
      EXPECT_LT(l["cr-rls"], l["nlms"]);
    } else {
      EXPECT_LT(l["arcor"], l["laser"]);
    }
    for (const auto& a : algos) EXPECT_TRUE(std::isfinite(l[a])) << a;
  }
}

}  // namespace
}  // namespace lepus

// aioli on the Section 5 experiment of Jézéquel, Gaillard, Rudi, "Efficient improper learning for online logistic
// regression" (COLT 2020): Hazan et al.'s 1-D distribution, on which every proper learner pays polynomial regret for
// n = O(e^B). The algorithm card's statistical checks E2 (aioli.md section 4), with fixed seeds:
//   d = 1, B = ln n, eps = 0.01, chi in {-1, +1}, R = 1; i.i.d. rounds (x, y) = (1 - sqrt(eps)/(2B), +1) with
//   probability p_chi = sqrt(eps)/(2B) + chi eps/B, else (sqrt(eps)/B, -1). Regret against the best |theta| <= B in
//   hindsight; 30 runs per chi, n in {10^3, 10^4}; per algorithm the worse of the two chi averages.
//   - FTRL (l2, lambda = 1, unprojected; written here: 1-D Newton on the two points' counts) grows polynomially:
//     FTRL(10^4) / FTRL(10^3) >= 2.5 (log-log slope >= 0.4);
//   - AIOLI (lambda = 1/B^2, AioliLearner with the full matrix) at n = 10^4 is <= 0 (the improper learner beats
//     every theta in the ball: on x = sqrt(eps)/B every such theta loses >= 0.644 a round) and <= FTRL(10^4) - 20.
// Over 20 other seed sets (plain python, same algorithms) the FTRL ratio stayed in [4.0, 7.1] and AIOLI(10^4) in
// [-135, -68]. The card's optional mixture check (ratio <= 2) is left out: it tests no lepus code, and its ratio
// ranged over [1.48, 2.04] on those seed sets.
// utl/aioli_section5 runs the whole experiment (n up to 3 10^4) through the lepus binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "learners/aioli.h"
#include "losses/losses.h"

namespace lepus {
namespace {

const LogisticLoss kLoss(-1.0f, 1.0f);
constexpr double kEps = 0.01;
constexpr int kRuns = 30;

double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }
double logistic(double z, double y) { return softplus(-y * z); }  // log(1 + e^{-yz})
double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

// The distribution at n. x1 and x2 are rounded to float, as AioliLearner reads them; everything here uses them.
struct Data {
  explicit Data(int n) : b(std::log(static_cast<double>(n))) {
    x1 = static_cast<float>(1 - std::sqrt(kEps) / (2 * b));
    x2 = static_cast<float>(std::sqrt(kEps) / b);
  }
  double p(int chi) const { return std::sqrt(kEps) / (2 * b) + chi * kEps / b; }
  double b, x1, x2;
};

// One run's labels (+1: the point x1, -1: x2); uniform draws from the top 53 bits, so the same on every platform.
std::vector<int> draw(int n, int chi, int run, const Data& d) {
  std::mt19937_64 rng(static_cast<uint64_t>(n) * 1000 + static_cast<uint64_t>(run) * 2 + (chi > 0 ? 1 : 0));
  std::vector<int> ys(n);
  for (int& y : ys) y = static_cast<double>(rng() >> 11) * 0x1.0p-53 < d.p(chi) ? 1 : -1;
  return ys;
}

struct Curve {
  double value, slope;
};

// The root of an increasing g on [lo, hi] (g(lo) <= 0 <= g(hi)) by Newton, bisecting when a step leaves the bracket.
template <class G>
double increasing_root(G g, double lo, double hi, double z) {
  z = std::clamp(z, lo, hi);
  for (int it = 0; it < 200; ++it) {
    const Curve v = g(z);
    if (v.value == 0) return z;
    (v.value > 0 ? hi : lo) = z;
    double next = z - v.value / v.slope;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::fabs(next - z) <= 1e-14 * std::max(1.0, std::fabs(z)) ||
        hi - lo <= 1e-14 * std::max(1.0, std::fabs(z)))
      return next;
    z = next;
  }
  return z;
}

// d/dtheta of lambda theta^2 + a l(theta x1, +1) + c l(theta x2, -1), and its derivative.
Curve gradient(double t, double a, double c, const Data& d, double lambda) {
  const double s1 = sigmoid(t * d.x1), s2 = sigmoid(t * d.x2);
  return {2 * lambda * t - a * d.x1 * (1 - s1) + c * d.x2 * s2,
          2 * lambda + a * d.x1 * d.x1 * s1 * (1 - s1) + c * d.x2 * d.x2 * s2 * (1 - s2)};
}

// min over |theta| <= B of the total loss of a positives at x1 and c negatives at x2.
double best_in_ball(double a, double c, const Data& d) {
  auto g = [&](double t) { return gradient(t, a, c, d, 0.0); };
  double t = 0;
  if (g(d.b).value <= 0) {
    t = d.b;
  } else if (g(-d.b).value >= 0) {
    t = -d.b;
  } else {
    t = increasing_root(g, -d.b, d.b, 0.0);
  }
  return a * logistic(t * d.x1, 1) + c * logistic(t * d.x2, -1);
}

// FTRL: theta_t = argmin sum_{s<t} l_s(theta) + lambda theta^2 (unprojected; 2 lambda theta lies in [-c x2, a x1]).
double ftrl_loss(const std::vector<int>& ys, const Data& d, double lambda) {
  double a = 0, c = 0, theta = 0, total = 0;
  for (int y : ys) {
    if (a + c > 0) {
      auto g = [&](double z) { return gradient(z, a, c, d, lambda); };
      theta = increasing_root(g, -c * d.x2 / (2 * lambda), a * d.x1 / (2 * lambda), theta);
    }
    total += logistic(theta * (y > 0 ? d.x1 : d.x2), y);
    (y > 0 ? a : c) += 1;
  }
  return total;
}

Example example(double x, float y) {
  Example ex;
  ex.features.push_back(Feature{0, static_cast<float>(x)});
  ex.num_linear = 1;
  ex.label = y;
  ex.labeled = true;
  ex.weight = 1.0f;
  return ex;
}

double aioli_loss(const std::vector<int>& ys, const Data& d, double lambda) {
  AioliOptions o;
  o.radius = d.b;
  o.lambda = lambda;
  o.r = 1.0;
  o.matrix = MatrixKind::kFull;
  o.scale = false;  // the paper's algorithm
  AioliLearner l(o, kLoss, 4);
  const Example pos = example(d.x1, 1.0f), neg = example(d.x2, -1.0f);
  double total = 0;
  for (int y : ys) total += logistic(l.learn(y > 0 ? pos : neg).raw, y);
  return total;
}

struct Regrets {
  double ftrl = 0, aioli = 0;  // the worse of the two chi averages
};

Regrets worst_of_two(int n) {
  const Data d(n);
  Regrets worst{-1e300, -1e300};
  for (int chi : {-1, 1}) {
    Regrets mean;
    for (int run = 0; run < kRuns; ++run) {
      const std::vector<int> ys = draw(n, chi, run, d);
      const double a = static_cast<double>(std::count(ys.begin(), ys.end(), 1)), c = n - a;
      const double best = best_in_ball(a, c, d);
      mean.ftrl += (ftrl_loss(ys, d, 1.0) - best) / kRuns;
      mean.aioli += (aioli_loss(ys, d, 1 / (d.b * d.b)) - best) / kRuns;
    }
    worst.ftrl = std::max(worst.ftrl, mean.ftrl);
    worst.aioli = std::max(worst.aioli, mean.aioli);
  }
  return worst;
}

// The card's checks of its O-A4 oracle that concern the helpers above (FTRL and the comparator; aioli_test.cc
// checks AIOLI's column): n = 1000, the sequence (x2,-1), (x2,-1), (x1,+1), (x2,-1), (x1,+1), (x2,-1).
TEST(AioliSectionFive, HelpersMatchOracleOA4) {
  const Data d(1000);
  const std::vector<int> ys = {-1, -1, 1, -1, 1, -1};
  EXPECT_NEAR(ftrl_loss(ys, d, 1.0), 4.067414, 1e-5);
  EXPECT_NEAR(best_in_ball(2, 4, d), 2.926717, 1e-5);
  EXPECT_NEAR(aioli_loss(ys, d, 1 / (d.b * d.b)), 3.931177, 1e-5);
}

TEST(AioliSectionFive, RegretAgainstNAsInThePaper) {
  const Regrets small = worst_of_two(1000), large = worst_of_two(10000);
  RecordProperty("ftrl_1e3", std::to_string(small.ftrl));
  RecordProperty("ftrl_1e4", std::to_string(large.ftrl));
  RecordProperty("aioli_1e3", std::to_string(small.aioli));
  RecordProperty("aioli_1e4", std::to_string(large.aioli));
  const std::string all = "n = 10^3 -> 10^4: FTRL " + std::to_string(small.ftrl) + " -> " +
                          std::to_string(large.ftrl) + ", AIOLI " + std::to_string(small.aioli) + " -> " +
                          std::to_string(large.aioli);
  ASSERT_GT(small.ftrl, 0.0) << all;
  EXPECT_GE(large.ftrl / small.ftrl, 2.5) << "FTRL's regret must grow polynomially: " << all;
  EXPECT_LE(large.aioli, 0.0) << "AIOLI (lambda = 1/B^2) must beat the ball at n = 10^4: " << all;
  EXPECT_LE(large.aioli, large.ftrl - 20) << "AIOLI must beat FTRL by 20 at n = 10^4: " << all;
}

}  // namespace
}  // namespace lepus

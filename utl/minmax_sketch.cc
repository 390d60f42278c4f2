// minmax_sketch: the loss of wemm and laser with --matrix sketch against --matrix full as the rank m grows, on a
// 200-dimensional stream of a rank-20 signal plus isotropic noise, and the time per example of each mode.
// Built by CMake (target lepus_minmax_sketch); run it through utl/minmax_sketch.
//
//   lepus_minmax_sketch [--seeds 5] [--rounds 2000] [--d 200] [--signal 20] [--noise 0.1]
//                       [--ranks 1,2,5,10,15,20,25,30,40,50]
//
// Stream (the one of test/unit/learners/minmax_sketch_test.cc): U a random d x r orthonormal basis (QR of a
// Gaussian matrix), x_t = (U s_t + √noise ε_t) / ‖·‖ with s_t ~ N(0, I_r)/√r and ε_t ~ N(0, I_d)/√d, so the noise
// carries about `noise` of the input energy against 1 for the signal; y_t = u·x_t + 0.1 N(0, 1) with u = U β,
// β ~ N(0, I_r). Every learner runs at its defaults (wemm b = 2; laser c = 100, b = 1) and is scored by its
// cumulative squared loss L_T = Σ_t (ŷ_t − y_t)² (progressive: ŷ_t before learning (x_t, y_t)). Printed: per m the
// mean over seeds of L_T(sketch, m) / L_T(full) with its range, and the mean time per example (learn only, the
// stream is drawn before the clock starts).
#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "learners/minmax.h"
#include "lepus/learner.h"
#include "lepus/loss.h"

namespace {

using lepus::Example;

std::vector<Example> stream(int d, int r, double noise, int rounds, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> n01;
  Eigen::MatrixXd g(d, r);
  for (double& v : g.reshaped()) v = n01(gen);
  const Eigen::MatrixXd U =
      Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ() * Eigen::MatrixXd::Identity(d, r);
  Eigen::VectorXd beta(r);
  for (double& v : beta) v = n01(gen);
  const Eigen::VectorXd u = U * beta;
  std::vector<Example> out;
  for (int t = 0; t < rounds; ++t) {
    Eigen::VectorXd s(r), e(d);
    for (double& v : s) v = n01(gen) / std::sqrt(r);
    for (double& v : e) v = n01(gen) / std::sqrt(d);
    Eigen::VectorXd x = U * s + std::sqrt(noise) * e;
    x /= x.norm();
    Example ex;
    for (int i = 0; i < d; ++i) {
      const float v = static_cast<float>(x(i));
      x(i) = v;
      ex.features.push_back(lepus::Feature{static_cast<uint64_t>(i), v});
    }
    ex.num_linear = static_cast<uint32_t>(d);
    ex.label = static_cast<float>(u.dot(x) + 0.1 * n01(gen));
    ex.labeled = true;
    out.push_back(std::move(ex));
  }
  return out;
}

struct Score {
  double loss = 0.0, seconds = 0.0;
};

Score run(const std::string& rule, const std::string& matrix, int rank, const std::vector<Example>& xs) {
  const lepus::LearnerRow* row = lepus::find_learner(rule);
  lepus::OptionValues v;
  for (const auto& spec : row->options)
    if (spec.kind != lepus::OptionSpec::Kind::kFlag && !spec.default_value.empty())
      v.set(spec.name, spec.default_value, false);
  v.set("matrix", matrix, true);
  v.set("rank", std::to_string(rank), true);
  lepus::LossOptions lo;
  lo.name = "squared";
  const auto loss = lepus::make_loss(lo);
  auto learner = row->make(lepus::LearnerContext{v, *loss, 10, false});
  Score s;
  const auto start = std::chrono::steady_clock::now();
  for (const Example& ex : xs) {
    const double y = learner->learn(ex).value;
    s.loss += (y - ex.label) * (y - ex.label);
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 5, rounds = 2000, d = 200, r = 20;
  double noise = 0.1;
  std::vector<int> ranks{1, 2, 5, 10, 15, 20, 25, 30, 40, 50};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], val = argv[i + 1];
    if (a == "--seeds")
      seeds = std::stoi(val);
    else if (a == "--rounds")
      rounds = std::stoi(val);
    else if (a == "--d")
      d = std::stoi(val);
    else if (a == "--signal")
      r = std::stoi(val);
    else if (a == "--noise")
      noise = std::stod(val);
    else if (a == "--ranks") {
      ranks.clear();
      std::stringstream in(val);
      for (std::string t; std::getline(in, t, ',');) ranks.push_back(std::stoi(t));
    } else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  const char* rules[] = {"wemm", "laser"};
  // ratio[rule][rank index][seed], time per example in µs
  std::vector<std::vector<std::vector<double>>> ratio(2, std::vector<std::vector<double>>(ranks.size()));
  std::vector<std::vector<double>> micros(2, std::vector<double>(ranks.size() + 1, 0.0));
  std::vector<double> full_loss(2, 0.0);
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto xs = stream(d, r, noise, rounds, static_cast<uint64_t>(seed));
    for (int k = 0; k < 2; ++k) {
      const Score f = run(rules[k], "full", 10, xs);
      full_loss[k] += f.loss / seeds;
      micros[k][ranks.size()] += 1e6 * f.seconds / rounds / seeds;
      for (size_t j = 0; j < ranks.size(); ++j) {
        const Score s = run(rules[k], "sketch", ranks[j], xs);
        ratio[k][j].push_back(s.loss / f.loss);
        micros[k][j] += 1e6 * s.seconds / rounds / seeds;
      }
    }
  }
  std::printf(
      "d = %d, signal rank %d, noise energy %.3g, %d rounds, seeds 1..%d; mean L_T(full): wemm %.2f, laser "
      "%.2f\n\n",
      d, r, noise, rounds, seeds, full_loss[0], full_loss[1]);
  std::printf(
      "| m | wemm L(sketch)/L(full) | laser L(sketch)/L(full) | wemm µs/example | laser µs/example |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  for (size_t j = 0; j < ranks.size(); ++j) {
    std::printf("| %d", ranks[j]);
    for (int k = 0; k < 2; ++k) {
      double mean = 0.0, lo = 1e300, hi = -1e300;
      for (double v : ratio[k][j]) mean += v / seeds, lo = std::min(lo, v), hi = std::max(hi, v);
      std::printf(" | %.4f (%.4f–%.4f)", mean, lo, hi);
    }
    std::printf(" | %.1f | %.1f |\n", micros[0][j], micros[1][j]);
  }
  std::printf("| full | 1 | 1 | %.1f | %.1f |\n", micros[0][ranks.size()], micros[1][ranks.size()]);
  return 0;
}

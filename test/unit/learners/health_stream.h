// The min-max learners' numerical-health stream (full, diag and sketch modes): test::long_run(10^6) rounds
// (seed 17) of inputs in d dimensions with a random direction and norm `scale`, labelled by a fixed ±1 pattern
// with a slow drift and noise; every prediction must be finite. on_round(ex) sees each example after learning.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "lepus/learner.h"
#include "long_run.h"

namespace lepus::test {

template <class OnRound>
void health_stream(Learner& l, int d, double scale, OnRound on_round) {
  std::mt19937_64 gen(17);
  std::normal_distribution<double> n01;
  Example ex;
  for (int i = 0; i < d; ++i) ex.features.push_back(Feature{static_cast<uint64_t>(i), 0.0f});
  ex.num_linear = static_cast<uint32_t>(d);
  ex.labeled = true;
  for (int t = 0; t < long_run(1000000); ++t) {
    double norm = 0.0;
    std::vector<double> x(d);
    for (double& v : x) v = n01(gen), norm += v * v;
    double y = 0.0;
    for (int i = 0; i < d; ++i) {
      ex.features[i].value = static_cast<float>(scale * x[i] / std::sqrt(norm));
      y += (i % 2 ? 1.0 : -1.0) * ex.features[i].value / scale;
    }
    ex.label = static_cast<float>(y * (1.0 + 0.01 * std::sin(t * 1e-3)) + 0.1 * n01(gen));
    const Prediction p = l.learn(ex);
    ASSERT_TRUE(std::isfinite(p.value)) << t;
    on_round(ex);
  }
}

}  // namespace lepus::test

// A labeled example from (slot, value) pairs, for the learners' unit tests.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "lepus/example.h"
#include "lepus/options.h"

namespace lepus::testing {

inline Example example(std::vector<std::pair<uint64_t, double>> f, float y, float weight = 1.0f) {
  Example ex;
  for (const auto& [i, v] : f) ex.features.push_back(Feature{i, static_cast<float>(v)});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  ex.weight = weight;
  return ex;
}

// sgd's options at their defaults, as the command line would hand them over.
inline OptionValues sgd_defaults() {
  OptionValues v;
  v.set("learning_rate", "0.5", false);
  v.set("power_t", "0.5", false);
  v.set("initial_t", "0", false);
  v.set("l1", "0", false);
  v.set("l2", "0", false);
  return v;
}

}  // namespace lepus::testing

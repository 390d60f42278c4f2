// Raw against scaled data for the scale-dependent learners: synthetic 8 x 8 grey images of two classes (a
// stroke of either orientation, shifted, with pixel noise), written as VW text twice: raw pixels 0-255 and the
// same pixels divided by 255. A learner whose scale-dependent defaults are estimated from the data gives test
// errors on the two within 1% of each other, both below the best constant's (the larger class's share is 0.6).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "e2e_util.h"

namespace lepus::e2e {

struct PixelSets {
  std::string dir;
  double best_constant_error = 0.0;  // on the test file
};

// splitmix64: the same numbers on every platform (std::normal_distribution is not).
class PixelRng {
 public:
  explicit PixelRng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }

 private:
  uint64_t s_;
};

// Writes train.raw.vw, test.raw.vw, train.unit.vw and test.unit.vw into a fresh scratch directory.
inline PixelSets write_pixel_sets(const std::string& name, int train = 3000, int test = 1000) {
  PixelSets sets{scratch_dir(name), 0.0};
  PixelRng rng(20261128);
  int test_positive = 0;
  for (const char* part : {"train", "test"}) {
    const int n = std::string(part) == "train" ? train : test;
    std::ofstream raw(sets.dir + "/" + part + ".raw.vw"), unit(sets.dir + "/" + part + ".unit.vw");
    for (int t = 0; t < n; ++t) {
      const bool positive = rng.uniform() < 0.4;  // vertical stroke; the larger class is horizontal
      if (std::string(part) == "test" && positive) ++test_positive;
      const int at = 1 + static_cast<int>(rng.next() % 6), thick = 1 + static_cast<int>(rng.next() % 2);
      const double ink = 0.2 + 0.8 * rng.uniform();  // faint strokes in heavy noise: not separable
      raw << (positive ? "1" : "-1") << " |p";
      unit << (positive ? "1" : "-1") << " |p";
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) {
          const int along = positive ? c : r;
          double v = (along >= at && along < at + thick) ? ink : 0.0;
          v += 1.2 * (rng.uniform() - 0.5);
          const int pixel = static_cast<int>(std::lround(255.0 * std::clamp(v, 0.0, 1.0)));
          if (pixel == 0) continue;  // zeros omitted, as in sparse image files
          raw << " " << (8 * r + c) << ":" << pixel;
          unit << " " << (8 * r + c) << ":" << pixel / 255.0;
        }
      raw << "\n";
      unit << "\n";
    }
  }
  const double share = static_cast<double>(test_positive) / test;
  sets.best_constant_error = std::min(share, 1.0 - share);
  return sets;
}

struct PixelErrors {
  double raw = NAN, unit = NAN;
};

// One pass over each training file with `learner` (options), then --binary test error on its test file.
inline PixelErrors pixel_test_errors(const PixelSets& sets, const std::string& learner) {
  PixelErrors e;
  for (const char* kind : {"raw", "unit"}) {
    const std::string k = kind;
    const std::string train =
        "-d train." + k + ".vw --loss_function logistic " + learner + " -f " + k + ".model";
    EXPECT_EQ(run_in(sets.dir, train + " --quiet 2> " + k + ".train.log"), 0)
        << learner << ": " << read_file(sets.dir + "/" + k + ".train.log");
    const std::string test = "-d test." + k + ".vw -t -i " + k + ".model --binary 2> " + k + ".test.log";
    EXPECT_EQ(run_in(sets.dir, test), 0) << learner << ": " << read_file(sets.dir + "/" + k + ".test.log");
    (k == "raw" ? e.raw : e.unit) =
        summary_value(read_file(sets.dir + "/" + k + ".test.log"), "average loss");
  }
  return e;
}

// The property the learners are held to (one line per learner in their own tests).
inline void expect_raw_learns_as_scaled(const PixelSets& sets, const std::string& learner) {
  const PixelErrors e = pixel_test_errors(sets, learner);
  EXPECT_NEAR(e.raw, e.unit, 0.01) << learner << ": raw " << e.raw << ", divided by 255 " << e.unit;
  EXPECT_LT(e.raw, sets.best_constant_error - 0.05)
      << learner << ": best constant " << sets.best_constant_error;
  EXPECT_LT(e.unit, sets.best_constant_error - 0.05)
      << learner << ": best constant " << sets.best_constant_error;
}

}  // namespace lepus::e2e

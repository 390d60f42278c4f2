// scinol-full on raw pixels from the command line. Its default variant (ScInOL2 of Kempka, Kotłowski,
// Warmuth, ICML 2019, carried to the full matrix) learns from raw 0-255 pixels as from the same pixels
// divided by 255 — test errors within 0.01 of each other, both below the best constant — in full and sketched
// mode, on the shared 8 x 8 images (raw_pixels.h) and on 24 x 24 ones (576 dense features, as many as an
// image pair's inked pixels). The published algorithm (Kotłowski 2017, Algorithm 2, --scinol_full_variant
// published) is as invariant, but on the 24 x 24 images its prior keeps it near 0 for the whole pass: no
// better than the best constant, so the check fails for it.
#include <gtest/gtest.h>

#include "e2e_util.h"
#include "raw_pixels.h"

namespace lepus::e2e {
namespace {

// raw_pixels.h's strokes (either orientation, shifted, with pixel noise) on a side x side grid: every pixel
// carries noise, so the rows are dense.
PixelSets write_large_pixel_sets(const std::string& name, int side = 24, int train = 1500, int test = 500) {
  PixelSets sets{scratch_dir(name), 0.0};
  PixelRng rng(20261129);
  int test_positive = 0;
  for (const char* part : {"train", "test"}) {
    const bool is_test = std::string(part) == "test";
    std::ofstream raw(sets.dir + "/" + part + ".raw.vw"), unit(sets.dir + "/" + part + ".unit.vw");
    for (int t = 0; t < (is_test ? test : train); ++t) {
      const bool positive = rng.uniform() < 0.4;
      if (is_test && positive) ++test_positive;
      const int at = 2 + static_cast<int>(rng.next() % (side - 8)),
                thick = 1 + static_cast<int>(rng.next() % 4);
      const double ink = 0.3 + 0.4 * rng.uniform();
      raw << (positive ? "1" : "-1") << " |p";
      unit << (positive ? "1" : "-1") << " |p";
      for (int r = 0; r < side; ++r)
        for (int c = 0; c < side; ++c) {
          const int along = positive ? c : r;
          double v = (along >= at && along < at + thick) ? ink : 0.0;
          v += 0.6 * rng.uniform();
          const int pixel = static_cast<int>(std::lround(255.0 * std::clamp(v, 0.0, 1.0)));
          if (pixel == 0) continue;
          raw << " " << (side * r + c) << ":" << pixel;
          unit << " " << (side * r + c) << ":" << pixel / 255.0;
        }
      raw << "\n";
      unit << "\n";
    }
  }
  const double share = static_cast<double>(test_positive) / test;
  sets.best_constant_error = std::min(share, 1.0 - share);
  return sets;
}

TEST(ScinolFull, RawPixelsLearnAsScaledOnes) {
  const PixelSets sets = write_pixel_sets("scinol_full_pixels");
  expect_raw_learns_as_scaled(sets, "--learner scinol-full");
  expect_raw_learns_as_scaled(sets, "--learner scinol-full --matrix sketch --rank 5");
  expect_raw_learns_as_scaled(sets, "--learner scinol-full --matrix sketch --rank 20");
}

TEST(ScinolFull, RawLargeImagesLearnAsScaledOnesWhereThePublishedPriorDoesNot) {
  const PixelSets sets = write_large_pixel_sets("scinol_full_large_pixels");
  expect_raw_learns_as_scaled(sets, "--learner scinol-full");
  expect_raw_learns_as_scaled(sets, "--learner scinol-full --matrix sketch --rank 20");
  // One pass's progressive loss on the raw pixels: ln 2 = 0.693 is learning nothing.
  auto progressive = [&](const std::string& learner) {
    EXPECT_EQ(run_in(sets.dir, "-d train.raw.vw --loss_function logistic " + learner + " 2> p.log"), 0);
    return summary_value(read_file(sets.dir + "/p.log"), "average loss");
  };
  const double def = progressive("--learner scinol-full");
  const double pub = progressive("--learner scinol-full --scinol_full_variant published");
  EXPECT_LT(def, 0.5);
  EXPECT_GT(pub, 0.6);
}

}  // namespace
}  // namespace lepus::e2e

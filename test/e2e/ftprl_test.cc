// The FTPRL learners through the binary: train / save / continue equals one run, -t -i predicts from the
// saved state, passes are more rounds, the feasible set holds in the readable model, and the options are
// checked.
#include <gtest/gtest.h>

#include "e2e_util.h"
#include "raw_pixels.h"

namespace lepus::e2e {
namespace {

const std::string kData = LEPUS_TEST_DATA;
const std::string kRcv1 = kData + "/vw/inputs/rcv1_small.vw.gz";

struct Config {
  const char* name;  // for messages and file names
  std::string args;
};
const Config kConfigs[] = {
    {"diag", "--learner ftprl-diag"},
    {"ball", "--learner ftprl-const"},
    {"box", "--learner ftprl-const --ftprl_set box"},
    {"scale", "--learner ftprl-scale --ftprl_scale f:0.5,constant:4"},
};

// The "index:weight ..." lines of a readable model, as (index, weight).
std::vector<std::pair<uint64_t, double>> readable_weights(const std::string& text) {
  std::vector<std::pair<uint64_t, double>> out;
  for (const auto& l : lines_of(text)) {
    const size_t colon = l.find(':');
    if (colon == 0 || colon == std::string::npos ||
        l.find_first_not_of("0123456789") != colon)  // the header's "bits:18" and global lines
      continue;
    out.emplace_back(std::stoull(l.substr(0, colon)), std::strtod(l.c_str() + colon + 1, nullptr));
  }
  return out;
}

// Continuing from a saved model equals one run over both files: same predictions, same final readable state.
TEST(Ftprl, ContinuedTrainingEqualsOneRun) {
  const std::string d = scratch_dir("ftprl_continue");
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " | head -n 600 > " + d + "/a.vw").c_str()), 0);
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " | tail -n +601 > " + d + "/b.vw").c_str()), 0);
  ASSERT_EQ(std::system(("cat " + d + "/a.vw " + d + "/b.vw > " + d + "/ab.vw").c_str()), 0);
  for (const Config& c : kConfigs) {
    const std::string p = d + "/" + c.name;
    const std::string opts = " --loss_function logistic -q ff --quiet " + c.args;
    ASSERT_EQ(run_lepus("-d " + d + "/ab.vw -p " + p + "all.txt --readable_model " + p + "all.r" + opts), 0);
    ASSERT_EQ(run_lepus("-d " + d + "/a.vw -f " + p + "a.m" + opts), 0);
    // Options come back from the model: only the data and outputs are given.
    ASSERT_EQ(run_lepus("-d " + d + "/b.vw -i " + p + "a.m -p " + p + "b.txt --readable_model " + p +
                        "b.r --quiet"),
              0);
    const auto all = lines_of(read_file(p + "all.txt"));
    const auto b = lines_of(read_file(p + "b.txt"));
    ASSERT_EQ(all.size(), 1000u) << c.name;
    ASSERT_EQ(b.size(), 400u) << c.name;
    for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], all[600 + i]) << c.name << " example " << 601 + i;
    EXPECT_EQ(read_file(p + "all.r"), read_file(p + "b.r")) << c.name;
    EXPECT_GT(readable_weights(read_file(p + "all.r")).size(), 1000u) << c.name;
  }
}

// -t -i predicts from exactly the saved state and never changes it.
TEST(Ftprl, TestOnlyPredictsFromTheSavedStateAndKeepsIt) {
  const std::string d = scratch_dir("ftprl_testonly");
  for (const Config& c : kConfigs) {
    const std::string p = d + "/" + c.name;
    ASSERT_EQ(run_lepus("-d " + kRcv1 + " --loss_function logistic --quiet -f " + p + ".m --readable_model " +
                        p + "a.r " + c.args),
              0);
    ASSERT_EQ(run_lepus("-d " + kRcv1 + " -t -i " + p + ".m -p " + p + "p1.txt --readable_model " + p +
                        "b.r --quiet"),
              0);
    ASSERT_EQ(run_lepus("-d " + kRcv1 + " -t -i " + p + ".m -p " + p + "p2.txt --quiet"), 0);
    EXPECT_EQ(read_file(p + "a.r"), read_file(p + "b.r")) << c.name;
    EXPECT_EQ(read_file(p + "p1.txt"), read_file(p + "p2.txt")) << c.name;
    EXPECT_EQ(lines_of(read_file(p + "p1.txt")).size(), 1000u) << c.name;
  }
}

// Passes are more rounds (card section 7): three passes equal one pass over the data three times.
TEST(Ftprl, PassesAreMoreRounds) {
  const std::string d = scratch_dir("ftprl_passes");
  ASSERT_EQ(std::system(("gzip -dc " + kRcv1 + " | head -n 300 > " + d + "/a.vw").c_str()), 0);
  ASSERT_EQ(std::system(("cat " + d + "/a.vw " + d + "/a.vw " + d + "/a.vw > " + d + "/aaa.vw").c_str()), 0);
  for (const Config& c : kConfigs) {
    const std::string p = d + "/" + c.name;
    const std::string opts = " --loss_function logistic --quiet " + c.args;
    ASSERT_EQ(
        run_lepus("-d " + d + "/a.vw --passes 3 --holdout_off -c -k --readable_model " + p + "3.r" + opts),
        0);
    ASSERT_EQ(run_lepus("-d " + d + "/aaa.vw --readable_model " + p + "1.r" + opts), 0);
    EXPECT_EQ(read_file(p + "3.r"), read_file(p + "1.r")) << c.name;
  }
}

// The weights written by --readable_model lie in the feasible set: |w_i| <= R (boxes), ||w|| <= R (ball).
TEST(Ftprl, ReadableModelIsFeasibleForAGivenRadius) {
  const std::string d = scratch_dir("ftprl_radius");
  for (const Config& c : kConfigs) {
    const std::string p = d + "/" + c.name;
    const int rc =
        run_lepus("-d " + kRcv1 + " --loss_function logistic --ftprl_radius 0.25 --readable_model " + p +
                  ".r " + c.args + " 2> " + p + ".err");
    ASSERT_EQ(rc, 0) << c.name << ": " << read_file(p + ".err");  // --ftprl_radius is shared by 3 rows
    EXPECT_NE(read_file(p + ".err").find("ftprl_radius = 0.25"), std::string::npos) << c.name;
    const auto w = readable_weights(read_file(p + ".r"));
    ASSERT_GT(w.size(), 100u);
    double sup = 0.0, l2 = 0.0;
    for (const auto& [i, v] : w) {
      sup = std::max(sup, std::fabs(v));
      l2 += v * v;
    }
    const std::string n = c.name;
    if (n == "diag" || n == "box") {
      EXPECT_LE(sup, 0.25) << n;
    } else if (n == "ball") {
      EXPECT_LE(std::sqrt(l2), 0.25 * (1 + 1e-5)) << n;  // printed to 6 digits
    }
  }
}

TEST(Ftprl, OptionsAreChecked) {
  const std::string d = scratch_dir("ftprl_options");
  struct Case {
    std::string args, expect;
  };
  const Case cases[] = {
      {"--learner sgd --ftprl_set box", "is an option of --learner ftprl-const"},
      {"--learner ftprl-diag --ftprl_set box", "is an option of --learner ftprl-const"},
      {"--learner ftprl-const --ftprl_set sphere", "unknown --ftprl_set 'sphere' (choose ball, box)"},
      {"--learner ftprl-scale --ftprl_scale features:2", "first character"},
      {"--learner ftprl-const --ftprl_scale f:2", "is an option of --learner ftprl-scale"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(run_lepus("-d " + kData + "/heart_scale.vw " + c.args + " 2> " + d + "/err.txt"), 1) << c.args;
    const std::string err = read_file(d + "/err.txt");
    EXPECT_EQ(lines_of(err).size(), 1u) << err;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.args << ": " << err;
  }
}

// Raw pixels (0-255) and the same pixels divided by 255 learn alike at default options: every FTPRL learner
// estimates its radius from the data (test/e2e/raw_pixels.h: test errors within 0.01, both well below the
// best constant's). ftprl-const --ftprl_set box (not a default) is left out: its data-derived form is
// scale-invariant bit for bit only for powers of two, and its huge steps (D = 2c sqrt(2^b)) amplify the
// 6-digit rounding of the divided file to a test error of 0.214 raw against 0.166 divided.
const char* const kPixelLearners[] = {
    "--learner ftprl-diag",
    "--learner ftprl-const",
    "--learner ftprl-scale",
    "--learner ftprl-full",
    "--learner ftprl-full --matrix sketch",
};

TEST(Ftprl, RawPixelsLearnAsScaledAtDefaults) {
  const PixelSets sets = write_pixel_sets("ftprl_raw_pixels");
  for (const char* learner : kPixelLearners) expect_raw_learns_as_scaled(sets, learner);
}

// The published algorithms' fixed radius (--ftprl_radius 1) do not: on raw pixels each learner's test error
// is more than 0.01 away from its error on the divided pixels, or no better than the best constant's. (This
// is what the test above would see without the data-derived radius.)
TEST(Ftprl, RawPixelsBreakThePublishedFixedRadius) {
  const PixelSets sets = write_pixel_sets("ftprl_raw_pixels_fixed");
  for (const char* learner : kPixelLearners) {
    const PixelErrors e = pixel_test_errors(sets, std::string(learner) + " --ftprl_radius 1");
    EXPECT_TRUE(std::fabs(e.raw - e.unit) > 0.01 || e.raw >= sets.best_constant_error - 0.05)
        << learner << ": raw " << e.raw << ", divided by 255 " << e.unit << ", best constant "
        << sets.best_constant_error;
  }
}

}  // namespace
}  // namespace lepus::e2e

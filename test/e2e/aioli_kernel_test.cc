// aioli-kernel from the command line: it learns heart (RBF kernel with the bandwidth of half the median distance
// over the first 256 examples) better than the best constant, exact and under --budget; a model saved at the end of
// training predicts under -t exactly what the trained learner predicted (on unlabeled copies of the rows, which
// teach nothing); a model saved halfway resumes exactly as one run; --passes needs --budget; the logistic loss only.
#include <gtest/gtest.h>

#include <cmath>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kHeart = std::string(LEPUS_TEST_DATA) + "/heart_scale.vw";

TEST(AioliKernel, LearnsHeartWithTheMedianBandwidth) {
  const std::string d = scratch_dir("aioli_kernel_heart");
  for (const char* extra : {"", " --budget 50"}) {
    SCOPED_TRACE(extra);
    const std::string err = d + "/err.txt", p = d + "/p.txt";
    ASSERT_EQ(run_lepus(kHeart + " --learner aioli-kernel" + extra + " -p " + p + " 2> " + err), 0)
        << read_file(err);
    const std::string text = read_file(err);
    EXPECT_LT(summary_value(text, "average loss"), summary_value(text, "best constant's loss") - 0.1) << text;
    EXPECT_TRUE(has(text, "(0.5 x the median distance over the first 256 examples)")) << text;
    EXPECT_TRUE(has(text, std::string(*extra ? "50 landmarks (budget 50)" : "270 points stored"))) << text;
    const std::vector<double> preds = read_predictions(p);
    ASSERT_EQ(preds.size(), 270u);
    EXPECT_EQ(preds[0], 0.0);  // round 1 predicts 0 whatever x
  }
}

// heart, then its rows again without labels: the unlabeled rows are predicted by the model at the end of training,
// which -t -i must reproduce digit for digit.
TEST(AioliKernel, TestOnlyModelPredictsAsTheEndOfTraining) {
  const std::string d = scratch_dir("aioli_kernel_t");
  ASSERT_EQ(std::system(("sed 's/^[^|]*|/ |/' " + kHeart + " > " + d + "/unlabeled.vw && cat " + kHeart +
                         " " + d + "/unlabeled.vw > " + d + "/both.vw")
                            .c_str()),
            0);
  for (const char* extra : {"", " --budget 40 --random_seed 5", " --kernel poly --degree 3"}) {
    SCOPED_TRACE(extra);
    ASSERT_EQ(run_lepus(d + "/both.vw --learner aioli-kernel" + std::string(extra) + " -f " + d + "/m -p " +
                        d + "/train.p --quiet"),
              0);
    ASSERT_EQ(run_lepus(d + "/unlabeled.vw -t -i " + d + "/m -p " + d + "/test.p --quiet"), 0);
    const auto train = lines_of(read_file(d + "/train.p")), test = lines_of(read_file(d + "/test.p"));
    ASSERT_EQ(train.size(), 540u);
    ASSERT_EQ(test.size(), 270u);
    for (size_t i = 0; i < 270; ++i) ASSERT_EQ(test[i], train[270 + i]) << i;
    EXPECT_NE(test.front(), test.back());
  }
}

TEST(AioliKernel, ResumedEqualsOneRun) {
  const std::string d = scratch_dir("aioli_kernel_resume");
  ASSERT_EQ(std::system(("gzip -c " + kHeart + " > " + d + "/heart.vw.gz").c_str()), 0);
  expect_resumed_equals_one_run(d, d + "/heart.vw.gz", 150,
                                {"--learner aioli-kernel --bandwidth 2",
                                 "--learner aioli-kernel --bandwidth 2 --budget 30 --random_seed 4",
                                 "--learner aioli-kernel --kernel poly --degree 3 --aioli_B 2"});
}

TEST(AioliKernel, PassesNeedABudgetAndTheLossIsLogistic) {
  const std::string d = scratch_dir("aioli_kernel_passes");
  ASSERT_NE(run_lepus(kHeart + " --learner aioli-kernel --passes 2 -c --cache_file " + d + "/c 2> " + d +
                      "/err.txt"),
            0);
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "one pass")) << read_file(d + "/err.txt");
  EXPECT_EQ(run_lepus(kHeart + " --learner aioli-kernel --budget 30 --passes 2 -c --cache_file " + d +
                      "/c --quiet"),
            0);
  ASSERT_NE(run_lepus(kHeart + " --learner aioli-kernel --loss_function squared 2> " + d + "/err.txt"), 0);
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "logistic loss only")) << read_file(d + "/err.txt");
}

}  // namespace
}  // namespace lepus::e2e

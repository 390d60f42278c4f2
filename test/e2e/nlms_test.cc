// nlms from the command line: squared loss by default and only, and it learns a real regression set (abalone,
// one pass) better than VW's default learner does.
#include <gtest/gtest.h>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kAbalone = std::string(LEPUS_TEST_DATA) + "/vw/inputs/abalone.vw.gz";

TEST(Nlms, LearnsAbaloneBetterThanSgd) {
  const std::string d = scratch_dir("nlms_abalone");
  ASSERT_EQ(run_lepus("-d " + kAbalone + " --learner nlms 2> " + d + "/n.txt"), 0);
  ASSERT_EQ(run_lepus("-d " + kAbalone + " --learner sgd 2> " + d + "/s.txt"), 0);
  const double nlms = summary_value(read_file(d + "/n.txt"), "average loss");
  const double sgd = summary_value(read_file(d + "/s.txt"), "average loss");
  EXPECT_LT(nlms, sgd);  // measured 6.402913 against 6.925290
  EXPECT_NE(read_file(d + "/n.txt").find("loss function = squared"), std::string::npos);
}

TEST(Nlms, OnlySquaredLoss) {
  const std::string d = scratch_dir("nlms_loss");
  EXPECT_EQ(run_lepus("-d " + kAbalone + " --learner nlms --loss_function logistic 2> " + d + "/e.txt"), 1);
  EXPECT_NE(read_file(d + "/e.txt").find("squared loss only"), std::string::npos);
}

}  // namespace
}  // namespace lepus::e2e

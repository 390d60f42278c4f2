// The second-order learners from the command line: aioli (logistic only; --matrix auto switches from full to a
// sketch mid-run, and a model saved on either side resumes exactly), scinol-full and ftprl-full (full and
// sketch; diag is refused naming the learner to use), each learning a real set (rcv1_small, heart_scale) better
// than the constant and saving models that predict what the run predicted.
#include <gtest/gtest.h>

#include <cstdlib>

#include "e2e_util.h"
#include "raw_pixels.h"

namespace lepus::e2e {
namespace {

const std::string kRcv1 = std::string(LEPUS_TEST_DATA) + "/vw/inputs/rcv1_small.vw.gz";
const std::string kHeart = std::string(LEPUS_TEST_DATA) + "/heart_scale.vw";

double loss_of(const std::string& log) { return summary_value(read_file(log), "average loss"); }
double constant_loss(const std::string& log) { return summary_value(read_file(log), "best constant's loss"); }

TEST(SecondOrder, EachLearnerLearnsAndItsModelPredictsAsTheRun) {
  struct Case {
    std::string args, data;
  };
  const std::vector<Case> cases = {
      {"--learner aioli", kRcv1},  // auto: full, then sketch
      {"--learner aioli --matrix diag", kRcv1},
      {"--learner aioli --matrix sketch --rank 5", kRcv1},
      {"--learner aioli --matrix full", kHeart},
      {"--learner scinol-full --loss_function logistic", kHeart},
      {"--learner ftprl-full --loss_function logistic --ftprl_radius 3", kHeart},
      {"--learner ftprl-full --matrix sketch --rank 5 --loss_function logistic --ftprl_radius 30", kRcv1},
      {"--learner scinol-full --matrix sketch --rank 5 --loss_function logistic", kHeart},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const std::string d = scratch_dir("second_order");
    ASSERT_EQ(run_lepus(c.data + " " + c.args + " -f " + d + "/m -p " + d + "/train.p 2> " + d + "/log"), 0)
        << read_file(d + "/log");
    EXPECT_LT(loss_of(d + "/log"), constant_loss(d + "/log"));
    // -t -i: the saved model predicts the data as the end of the run would (same learner, same state).
    ASSERT_EQ(run_lepus("-t -i " + d + "/m " + c.data + " -p " + d + "/a.p 2> " + d + "/t1"), 0)
        << read_file(d + "/t1");
    ASSERT_EQ(run_lepus("-t -i " + d + "/m " + c.data + " -p " + d + "/b.p 2> " + d + "/t2"), 0);
    EXPECT_EQ(read_file(d + "/a.p"), read_file(d + "/b.p"));  // predicting changes nothing
    EXPECT_LT(loss_of(d + "/t1"), constant_loss(d + "/log"));
  }
}

// Raw pixels 0-255 learn as the same pixels divided by 255 (each feature is divided by its largest |value| so
// far): in every matrix mode. The published algorithm (--aioli_scale none) does not, on this data.
TEST(SecondOrder, AioliLearnsRawPixelsAsScaledOnes) {
  const PixelSets sets = write_pixel_sets("aioli_pixels");
  for (const std::string m : {"auto", "full", "diag", "sketch"})
    expect_raw_learns_as_scaled(sets, "--learner aioli --matrix " + m);
  const PixelErrors none = pixel_test_errors(sets, "--learner aioli --aioli_scale none");
  EXPECT_GT(std::fabs(none.raw - none.unit), 0.01) << "raw " << none.raw << ", divided by 255 " << none.unit;
}

// Training in two halves through a saved model equals one run: on either side of auto's switch to the sketch.
TEST(SecondOrder, ResumedAioliEqualsOneRun) {
  // -b 9: 50 switches to the sketch on the first example, 490 after the first 10 (which hold about 400 slots).
  const std::string o = "-b 9 --learner aioli --max_dense_features ";
  expect_resumed_equals_one_run(scratch_dir("aioli_resume"), kRcv1, 10, {o + "50", o + "490"});
}

TEST(SecondOrder, AModeTheLearnerLacksIsRefusedNamingWhatToUse) {
  const std::string d = scratch_dir("second_order_modes");
  EXPECT_EQ(run_lepus(kHeart + " --learner scinol-full --matrix diag 2> " + d + "/e1"), 1);
  EXPECT_NE(read_file(d + "/e1").find("--learner scinol-coord"), std::string::npos) << read_file(d + "/e1");
  EXPECT_EQ(run_lepus(kHeart + " --learner ftprl-full --matrix diag 2> " + d + "/e2"), 1);
  EXPECT_NE(read_file(d + "/e2").find("ftprl-diag"), std::string::npos) << read_file(d + "/e2");
  EXPECT_EQ(run_lepus(kHeart + " --learner aioli --loss_function hinge 2> " + d + "/e3"), 1);
  EXPECT_EQ(run_lepus(kHeart + " --learner aioli --matrix dense 2> " + d + "/e4"), 1);
  EXPECT_EQ(run_lepus(kHeart + " --learner aioli --rank 0 2> " + d + "/e5"), 1);
  // Past the cap: a clear error naming the cap and the alternative, before anything is written.
  EXPECT_EQ(
      run_lepus(kRcv1 + " --learner scinol-full --max_dense_features 50 -f " + d + "/m 2> " + d + "/e6"), 1);
  EXPECT_NE(read_file(d + "/e6").find("cap of 50"), std::string::npos) << read_file(d + "/e6");
}

}  // namespace
}  // namespace lepus::e2e

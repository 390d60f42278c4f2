// The kernel learners (kons, sketched-kons; kwemm, klaser) from the command line: they learn heart (logistic, RBF kernel with the
// bandwidth of half the median distance over the first 256 examples, held back and then predicted in order; the
// median heuristic itself with --bandwidth_factor 1) better than the best constant; a stream shorter than the warm-up still gets every prediction in order; a model saved halfway
// resumes exactly as one run; --passes is refused.
#include <gtest/gtest.h>

#include <cmath>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kHeart = std::string(LEPUS_TEST_DATA) + "/heart_scale.vw";

TEST(Kons, LearnsHeartWithTheMedianBandwidth) {
  const std::string d = scratch_dir("kons_heart");
  for (const std::string learner : {"kons", "sketched-kons", "kons --bandwidth_factor 1"}) {
    SCOPED_TRACE(learner);
    const std::string err = d + "/err.txt", p = d + "/p.txt";
    ASSERT_EQ(
        run_lepus(kHeart + " --loss_function logistic --learner " + learner + " -p " + p + " 2> " + err), 0)
        << read_file(err);
    const std::string text = read_file(err);
    const double loss = summary_value(text, "average loss");
    EXPECT_LT(loss, summary_value(text, "best constant's loss") - 0.1);
    EXPECT_TRUE(has(text, learner.ends_with("1") ? "(median heuristic over the first 256 examples)"
                                                 : "(0.5 x the median distance over the first 256 examples)"))
        << text;
    EXPECT_EQ(read_predictions(p).size(), 270u);
    EXPECT_EQ(read_predictions(p)[0], 0.0);  // nothing stored before the first example
  }
}

TEST(Kons, StreamShorterThanTheWarmupIsPredictedInOrder) {
  const std::string d = scratch_dir("kons_short");
  ASSERT_EQ(std::system(("head -n 12 " + kHeart + " | awk '{sub(/ [|]/, \" t\" NR \"|\"); print}' > " + d +
                         "/short.vw")
                            .c_str()),
            0);
  ASSERT_EQ(run_lepus(d + "/short.vw --loss_function logistic --learner kons -p " + d + "/p.txt --quiet"), 0);
  const auto lines = lines_of(read_file(d + "/p.txt"));
  ASSERT_EQ(lines.size(), 12u);
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_TRUE(has(lines[i], " t" + std::to_string(i + 1))) << lines[i];
}

TEST(Kons, ResumedEqualsOneRun) {
  const std::string d = scratch_dir("kons_resume");
  ASSERT_EQ(std::system(("gzip -c " + kHeart + " > " + d + "/heart.vw.gz").c_str()), 0);
  expect_resumed_equals_one_run(
      d, d + "/heart.vw.gz", 150,
      {"--loss_function logistic --learner kons --bandwidth 2",
       "--loss_function logistic --learner sketched-kons --bandwidth 2 --random_seed 4",
       "--loss_function squared --learner kons --kernel poly --degree 3"});
}

// --oaa 10 with a kernel learner under --budget on 500 MNIST rows: one learner holds the ten classes (the preamble
// says so), and a model saved halfway resumes exactly as one run (kons with either class matrix, aioli-kernel).
TEST(Kons, OaaUnderABudgetIsOneLearnerAndResumes) {
  const std::string d = scratch_dir("kons_oaa");
  const std::string data = std::string(LEPUS_TEST_DATA) + "/vw/inputs/mnist500.vw.gz";
  const std::string kons = "--oaa 10 --loss_function logistic --learner kons --budget 40";
  ASSERT_EQ(run_lepus(data + " " + kons + " 2> " + d + "/err.txt"), 0) << read_file(d + "/err.txt");
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "10 classes in one learner (kernel values once per example)"))
      << read_file(d + "/err.txt");
  expect_resumed_equals_one_run(
      d, data, 250,
      {kons, kons + " --kons_class_matrix per_class", "--oaa 10 --learner aioli-kernel --budget 30"});
}

TEST(Kons, RefusesPasses) {
  const std::string d = scratch_dir("kons_passes");
  ASSERT_NE(run_lepus(kHeart + " --learner kons --passes 2 2> " + d + "/err.txt"), 0);
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "one pass")) << read_file(d + "/err.txt");
}

// An exact kernel learner warns once, at 10,000 examples read, that its cost grows with every example and that
// --budget bounds it; with --budget it does not (unlabeled lines: nothing is stored, so the run is quick).
TEST(Kons, ExactLearnerWarnsOnALongRun) {
  const std::string d = scratch_dir("kons_long");
  ASSERT_EQ(std::system(("awk 'BEGIN { for (i = 0; i < 10001; ++i) print \"|f a:\" (i % 7) \" b:1\" }' > " +
                         d + "/long.vw")
                            .c_str()),
            0);
  ASSERT_EQ(run_lepus(d + "/long.vw --learner kons --bandwidth 1 2> " + d + "/err.txt"), 0);
  const std::string text = read_file(d + "/err.txt");
  EXPECT_TRUE(has(text, "[warning] 10000 examples read: --learner kons keeps every example it learns from"))
      << text;
  EXPECT_TRUE(has(text, "--budget bounds both")) << text;
  ASSERT_EQ(run_lepus(d + "/long.vw --learner kons --bandwidth 1 --budget 20 2> " + d + "/err2.txt"), 0);
  EXPECT_FALSE(has(read_file(d + "/err2.txt"), "keeps every example")) << read_file(d + "/err2.txt");
}

// kwemm and klaser regress heart's labels (exact) and abalone's (--budget 100) about as well as ridge regression
// (rls) or better, and --budget allows passes.
TEST(KernelMinmax, LearnsExactAndUnderABudget) {
  const std::string d = scratch_dir("kminmax");
  const std::string abalone = std::string(LEPUS_TEST_DATA) + "/vw/inputs/abalone.vw.gz";
  struct Run {
    std::string data, args;
  } runs[] = {{kHeart, "--learner rls"},
              {kHeart, "--learner kwemm"},
              {kHeart, "--learner klaser"},
              {abalone, "--learner rls"},
              {abalone, "--learner kwemm --budget 100"},
              {abalone, "--learner klaser --budget 100 --mm_c 1000"}};
  double loss[6];
  for (int i = 0; i < 6; ++i) {
    const std::string err = d + "/" + std::to_string(i) + ".txt";
    ASSERT_EQ(run_lepus(runs[i].data + " " + runs[i].args + " 2> " + err), 0) << read_file(err);
    loss[i] = summary_value(read_file(err), "average loss");
    ASSERT_TRUE(std::isfinite(loss[i])) << runs[i].args;
  }
  EXPECT_LT(loss[1], loss[0] * 1.02);  // kwemm on heart: 0.561 against rls 0.587
  EXPECT_LT(loss[2], 1.2 * loss[0]);
  EXPECT_LT(loss[4], 1.05 * loss[3]);  // kwemm --budget 100 on abalone: 5.17 against 5.08
  EXPECT_LT(loss[5], 1.5 * loss[3]);
  EXPECT_EQ(
      run_lepus(abalone + " --learner kwemm --budget 30 -c --cache_file " + d + "/c --passes 2 --quiet"), 0);
  EXPECT_NE(run_lepus(kHeart + " --learner kwemm --passes 2 --quiet 2>/dev/null"), 0);
}

}  // namespace
}  // namespace lepus::e2e

// The min-max regressors from the command line (wemm, laser, laser-noshrink, rls, aaw, arowr, arcor, cr-rls): each
// learns abalone (one pass, squared loss) in every matrix mode it has (full, diag; sketch for wemm and the LASER
// rows) with a finite loss below that of predicting 0; a model saved with -f predicts the same under -i -t; other
// losses, bad hyper-parameters and a sketch for the rows without one are refused before any data is read;
// `--learner help` lists the rows.
#include <gtest/gtest.h>

#include <cmath>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kAbalone = std::string(LEPUS_TEST_DATA) + "/vw/inputs/abalone.vw.gz";
const char* kRules[] = {"wemm", "laser", "laser-noshrink", "rls", "aaw", "arowr", "arcor", "cr-rls"};

bool has_sketch(const std::string& rule) {
  return rule == "wemm" || rule == "laser" || rule == "laser-noshrink";
}

TEST(Minmax, EveryRuleLearnsAbaloneInEveryMode) {
  const std::string d = scratch_dir("minmax_abalone");
  ASSERT_EQ(run_lepus("-d " + kAbalone + " --learner nlms --nlms_mu 1e-9 2> " + d + "/zero.txt"), 0);
  const double zero = summary_value(read_file(d + "/zero.txt"), "average loss");  // ≈ predicting 0
  ASSERT_TRUE(std::isfinite(zero));
  for (const char* rule : kRules) {
    for (const char* mode : {"full", "diag", "sketch"}) {
      if (mode == std::string("sketch") && !has_sketch(rule)) continue;
      const std::string err = d + "/" + rule + mode + ".txt";
      ASSERT_EQ(run_lepus("-d " + kAbalone + " --learner " + rule + " --matrix " + mode + " 2> " + err), 0)
          << rule << " " << mode << ": " << read_file(err);
      const double loss = summary_value(read_file(err), "average loss");
      EXPECT_TRUE(std::isfinite(loss)) << rule << " " << mode;
      EXPECT_LT(loss, 0.5 * zero) << rule << " " << mode;
      EXPECT_TRUE(has(read_file(err), "matrix = " + std::string(mode))) << rule;
    }
  }
}

TEST(Minmax, SavedModelPredictsTheSame) {
  const std::string d = scratch_dir("minmax_model");
  for (const char* rule : {"laser", "wemm", "cr-rls"}) {
    for (const char* mode : {"full", "diag", "sketch"}) {
      if (mode == std::string("sketch") && !has_sketch(rule)) continue;
      const std::string tag = std::string(rule) + mode;
      ASSERT_EQ(run_lepus("-d " + kAbalone + " --learner " + rule + " --matrix " + mode + " -f " + d + "/" +
                          tag + ".model --quiet"),
                0);
      ASSERT_EQ(run_lepus("-d " + kAbalone + " -i " + d + "/" + tag + ".model -t -p " + d + "/" + tag +
                          "1.txt --quiet"),
                0);
      ASSERT_EQ(run_lepus("-d " + kAbalone + " -i " + d + "/" + tag + ".model -t -p " + d + "/" + tag +
                          "2.txt --quiet"),
                0);
      const auto a = read_predictions(d + "/" + tag + "1.txt");
      ASSERT_GT(a.size(), 100u);
      EXPECT_EQ(a, read_predictions(d + "/" + tag + "2.txt")) << tag;
    }
  }
}

TEST(Minmax, BadConfigurationsAreRefusedBeforeReading) {
  const std::string d = scratch_dir("minmax_bad");
  const std::string missing = d + "/no_such_file.vw";  // never opened: the configuration fails first
  struct Bad {
    std::string args, message;
  } cases[] = {
      {"--learner laser --loss_function logistic", "squared"},
      {"--learner wemm --mm_b 0", "mm_b"},
      {"--learner laser --mm_b 200 --mm_c 100", "mm_b < --mm_c"},
      {"--learner rls --rls_r 1.5", "rls_r"},
      {"--learner cr-rls --rls_r 0", "rls_r"},
      {"--learner arcor --arcor_Lambda 2", "arcor_Lambda"},
      {"--learner aaw --matrix sketch", "its modes: full, diag)"},
      {"--learner cr-rls --matrix sketch", "its modes: full, diag)"},
      {"--learner wemm --matrix sketch --rank 0", "rank"},
  };
  for (const Bad& c : cases) {
    const std::string err = d + "/e.txt";
    EXPECT_EQ(run_lepus("-d " + missing + " " + c.args + " 2> " + err), 1) << c.args;
    EXPECT_TRUE(has(read_file(err), c.message)) << c.args << ": " << read_file(err);
    EXPECT_FALSE(has(read_file(err), "no_such_file")) << c.args << ": the data was opened first";
  }
}

TEST(Minmax, HelpListsEveryRule) {
  const std::string d = scratch_dir("minmax_help");
  ASSERT_EQ(run_lepus("--learner help > " + d + "/h.txt"), 0);
  const std::string help = read_file(d + "/h.txt");
  for (const char* rule : kRules) EXPECT_TRUE(has(help, std::string(rule) + "\t")) << rule;
}

}  // namespace
}  // namespace lepus::e2e

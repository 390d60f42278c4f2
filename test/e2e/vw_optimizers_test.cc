// VW 9.11.2's --ftrl, --pistol and --coin (lepus's vw-ftrl, vw-pistol, vw-coin, selected by the same VW flags)
// against VW's oracle runs: every -p prediction within 1e-6 of VW's, the same printed average loss, and the
// progress table and summary in VW's layout with the same figures. Runs over the VW oracle folder
// (LEPUS_SHARED_DIR/oracles/vw) when present, skipped cleanly otherwise; the copies of the rcv1_small and
// abalone runs in test/data/vw always run.
#include <gtest/gtest.h>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

struct OptimizerRun {
  std::string ds;    // data set: inputs/DS.vw.gz, oracle optimizers/DS/NAME.*
  std::string name;  // NAME
  std::string args;  // VW's arguments besides -d and -p, as gen_optimizers.sh ran them
};

void PrintTo(const OptimizerRun& r, std::ostream* os) { *os << r.ds << "/" << r.name; }

std::string average_loss_line(const std::string& stderr_text) {
  for (const auto& l : lines_of(stderr_text))
    if (l.rfind("average loss = ", 0) == 0) return l;
  return "";
}

void check_run(const std::string& root, const OptimizerRun& r) {
  const std::string out = scratch_dir("vwopt_" + r.ds + "_" + r.name);
  const std::string cmd = "-d " + root + "/inputs/" + r.ds + ".vw.gz " + r.args + " -p " + out +
                          "/p.txt 2> " + out + "/stderr.txt";
  ASSERT_EQ(run_lepus(cmd), 0) << read_file(out + "/stderr.txt");
  const std::string oracle = root + "/optimizers/" + r.ds + "/" + r.name;
  const std::string ours_err = read_file(out + "/stderr.txt");
  const std::string vw_err = read_file(oracle + ".stderr");

  const auto ours = read_predictions(out + "/p.txt");
  const auto vw = read_predictions(oracle + ".pred");
  ASSERT_FALSE(vw.empty());
  ASSERT_EQ(ours.size(), vw.size());
  const PredictionMatch m = compare_predictions(ours, vw, 1e-6);
  EXPECT_EQ(m.within, m.n) << "predictions within 1e-6; max |diff| " << m.max_abs;

  const std::string vw_loss = average_loss_line(vw_err);
  ASSERT_NE(vw_loss, "");
  EXPECT_EQ(average_loss_line(ours_err), vw_loss);
  EXPECT_EQ(compare_layout(table_and_summary(ours_err), table_and_summary(vw_err), 0.0, 1e-6), "");
  std::cerr << "[vw-optimizers] " << r.ds << "/" << r.name << ": " << m.n << " predictions, max |diff| "
            << m.max_abs << "; " << average_loss_line(ours_err) << " (VW: " << vw_loss << ")\n";
  std::filesystem::remove_all(out);
}

// ---- always: the copies in test/data/vw ----
class LocalOptimizers : public ::testing::TestWithParam<OptimizerRun> {};
TEST_P(LocalOptimizers, MatchesVw) { check_run(LEPUS_TEST_DATA "/vw", GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Copies, LocalOptimizers,
    ::testing::Values(OptimizerRun{"rcv1_small", "ftrl", "--loss_function logistic --ftrl"},
                      OptimizerRun{"rcv1_small", "ftrl_a0.1_b1",
                                   "--loss_function logistic --ftrl --ftrl_alpha 0.1 --ftrl_beta 1"},
                      OptimizerRun{"rcv1_small", "pistol", "--loss_function logistic --pistol"},
                      OptimizerRun{"rcv1_small", "coin", "--loss_function logistic --coin"},
                      OptimizerRun{"rcv1_small", "coin_q", "--loss_function logistic --coin -q ff"},
                      OptimizerRun{"abalone", "coin", "--coin"}, OptimizerRun{"abalone", "ftrl", "--ftrl"}),
    [](const auto& info) {
      std::string n = info.param.ds + "_" + info.param.name;
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

// ---- with the oracle folder: every run of VW's gen_optimizers.sh ----
std::vector<OptimizerRun> shared_runs() {
  std::vector<OptimizerRun> runs;
  for (std::string ds : {"rcv1_small", "a9a"}) {
    const std::string l = "--loss_function logistic";
    runs.push_back({ds, "ftrl", l + " --ftrl"});
    runs.push_back({ds, "ftrl_a0.1_b1", l + " --ftrl --ftrl_alpha 0.1 --ftrl_beta 1"});
    runs.push_back({ds, "pistol", l + " --pistol"});
    runs.push_back({ds, "coin", l + " --coin"});
    runs.push_back({ds, "coin_q", l + " --coin -q ff"});
  }
  runs.push_back({"abalone", "coin", "--coin"});
  runs.push_back({"abalone", "ftrl", "--ftrl"});
  return runs;
}

class SharedOptimizers : public ::testing::TestWithParam<OptimizerRun> {};
TEST_P(SharedOptimizers, MatchesVw) {
  const std::string root = LEPUS_SHARED_DIR "/oracles/vw";
  if (!exists(root + "/optimizers/a9a/ftrl.pred")) GTEST_SKIP() << "no " << root << "/optimizers";
  check_run(root, GetParam());
}
INSTANTIATE_TEST_SUITE_P(Oracles, SharedOptimizers, ::testing::ValuesIn(shared_runs()), [](const auto& info) {
  std::string n = info.param.ds + "_" + info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// The flags' rules, as VW's: one of them at a time; gd's switches are not theirs; --l1/--l2 and VW's
// learning-rate knobs are accepted.
TEST(VwOptimizerFlags, OneAtATimeAndNotGdsSwitches) {
  const std::string d = scratch_dir("vwopt_flags");
  const std::string data = LEPUS_TEST_DATA "/heart_scale.vw";
  EXPECT_EQ(run_lepus("--ftrl --pistol -d " + data + " 2> " + d + "/err.txt"), 1);
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "--ftrl and --pistol each select a learner"))
      << read_file(d + "/err.txt");
  EXPECT_EQ(run_lepus("--coin --adaptive -d " + data + " 2> " + d + "/err.txt"), 1);
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "--adaptive is an option of --learner sgd"))
      << read_file(d + "/err.txt");
  EXPECT_EQ(run_lepus("--learner sgd --coin -d " + data + " 2> " + d + "/err.txt"), 1);
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "--coin selects --learner vw-coin"))
      << read_file(d + "/err.txt");
  ASSERT_EQ(run_lepus("--ftrl --l1 0.001 --l2 0.01 -l 3 --power_t 0.2 -d " + data + " 2> " + d + "/err.txt"),
            0);
  const std::string err = read_file(d + "/err.txt");
  EXPECT_TRUE(has(err, "learner = vw-ftrl")) << err;
  EXPECT_TRUE(has(err, "Algorithm used: Proximal-FTRL")) << err;
  EXPECT_TRUE(has(err, "ftrl_alpha = 0.5")) << err;
  EXPECT_TRUE(has(err, "using l1 regularization = 0.001")) << err;
  ASSERT_EQ(run_lepus("--learner vw-pistol -d " + data + " 2> " + d + "/err.txt"), 0);
  EXPECT_TRUE(has(read_file(d + "/err.txt"), "ftrl_beta = 0.5")) << read_file(d + "/err.txt");
}

// -f then -t -i: the saved model predicts as the trained learner does (the XT weights), and the learner comes
// back from the model without its flag.
TEST(VwOptimizerFlags, ModelRoundTrip) {
  const std::string d = scratch_dir("vwopt_model");
  const std::string data = LEPUS_TEST_DATA "/heart_scale.vw";
  for (const std::string flag : {"--ftrl", "--pistol", "--coin"}) {
    ASSERT_EQ(run_lepus(flag + " --loss_function logistic -d " + data + " -f " + d + "/m --quiet"), 0)
        << flag;
    ASSERT_EQ(run_lepus("-t -i " + d + "/m -d " + data + " -p " + d + "/a.txt 2> " + d + "/err.txt"), 0)
        << flag;
    EXPECT_TRUE(has(read_file(d + "/err.txt"), "learner = vw-")) << read_file(d + "/err.txt");
    ASSERT_EQ(run_lepus("-t -i " + d + "/m " + flag + " -d " + data + " -p " + d + "/b.txt --quiet"), 0)
        << flag;
    EXPECT_EQ(read_file(d + "/a.txt"), read_file(d + "/b.txt")) << flag;
    EXPECT_EQ(lines_of(read_file(d + "/a.txt")).size(), 270u) << flag;
  }
  EXPECT_EQ(run_lepus("-t -i " + d + "/m --ftrl -d " + data + " --quiet 2> " + d + "/err.txt"), 1);
  EXPECT_TRUE(
      has(read_file(d + "/err.txt"), "--learner vw-ftrl conflicts with the model's --learner vw-coin"))
      << read_file(d + "/err.txt");
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace lepus::e2e

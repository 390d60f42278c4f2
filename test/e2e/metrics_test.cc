// --metrics and --metrics_json from the command line: the figures agree with ones recomputed here from the run's
// own -r scores and labels (AUC pair by pair, accuracy, log loss), for progressive validation and for -t.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kHeart = std::string(LEPUS_TEST_DATA) + "/heart_scale.vw";

std::vector<float> labels_of(const std::string& path) {
  std::vector<float> y;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) y.push_back(std::stof(line));
  return y;
}

double json_value(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ");
  if (at == std::string::npos) return NAN;
  return std::stod(json.substr(at + key.size() + 4));
}

void expect_figures_of(const std::string& dir, const std::string& args) {
  ASSERT_EQ(
      run_lepus(kHeart + " --learner sgd --loss_function logistic " + args + " --metrics --metrics_json " +
                dir + "/m.json -r " + dir + "/r.txt 2> " + dir + "/err.txt"),
      0);
  const std::vector<double> s = read_predictions(dir + "/r.txt");
  const std::vector<float> y = labels_of(kHeart);
  ASSERT_EQ(s.size(), y.size());
  double pairs = 0.0, pos = 0.0, neg = 0.0, right = 0.0, ll = 0.0;
  for (size_t i = 0; i < s.size(); ++i) {
    (y[i] > 0 ? pos : neg) += 1.0;
    if ((s[i] > 0) == (y[i] > 0)) right += 1.0;
    const double p = 1.0 / (1.0 + std::exp(-s[i]));
    ll -= std::log(y[i] > 0 ? p : 1.0 - p);
    if (y[i] <= 0) continue;
    for (size_t j = 0; j < s.size(); ++j)
      if (y[j] < 0) pairs += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
  }
  const std::string err = read_file(dir + "/err.txt");
  const std::string json = read_file(dir + "/m.json");
  // -r prints 6 significant digits: the figures agree to about that.
  EXPECT_NEAR(json_value(json, "auc"), pairs / (pos * neg), 2e-3) << json;
  EXPECT_NEAR(json_value(json, "accuracy"), right / s.size(), 1.5 / s.size()) << json;
  EXPECT_NEAR(json_value(json, "log_loss"), ll / s.size(), 1e-4) << json;
  EXPECT_NEAR(json_value(json, "log_loss"), summary_value(err, "average loss"), 1e-5);  // logistic: the same
  EXPECT_EQ(json_value(json, "examples"), 270.0);
  EXPECT_NE(err.find("metric auc = "), std::string::npos) << err;
  EXPECT_NE(err.find("metric calibration error = "), std::string::npos) << err;
}

TEST(MetricsCli, ProgressiveValidationAndTestOnlyRuns) {
  const std::string d = scratch_dir("metrics");
  expect_figures_of(d, "-f " + d + "/model");
  expect_figures_of(d, "-t -i " + d + "/model");
  std::filesystem::remove_all(d);
}

TEST(MetricsCli, RegressionGivesRmseAndMae) {
  const std::string d = scratch_dir("metrics_regression");
  const std::string abalone = std::string(LEPUS_TEST_DATA) + "/vw/inputs/abalone.vw.gz";
  ASSERT_EQ(run_lepus(abalone + " --metrics --metrics_json " + d + "/m.json 2> " + d + "/err.txt"), 0);
  const std::string json = read_file(d + "/m.json");
  const std::string err = read_file(d + "/err.txt");
  // The squared loss' average is the mean squared error: its root is the RMSE.
  EXPECT_NEAR(json_value(json, "rmse"), std::sqrt(summary_value(err, "average loss")), 1e-4) << json;
  EXPECT_GT(json_value(json, "mae"), 0.0) << json;
  EXPECT_LT(json_value(json, "mae"), json_value(json, "rmse")) << json;
  EXPECT_TRUE(std::isnan(json_value(json, "auc"))) << json;  // ages are no -1/1 labels
  ASSERT_EQ(run_lepus(abalone + " --quiet --metrics_json " + d + "/q.json 2> " + d + "/err2.txt"), 0);
  EXPECT_EQ(read_file(d + "/err2.txt"), "");  // --quiet: no summary, the JSON still written
  EXPECT_EQ(read_file(d + "/q.json"), json);
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace lepus::e2e

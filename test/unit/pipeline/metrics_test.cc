// --metrics against figures computed by hand: AUC with tied scores and importance weights, accuracy, log loss,
// calibration error, RMSE and MAE, multiclass accuracy.
#include "pipeline/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace lepus {
namespace {

std::map<std::string, double> as_map(const Metrics& m) {
  std::map<std::string, double> out;
  for (const auto& [name, value] : m.figures()) out[name] = value;
  return out;
}

TEST(Metrics, AucCountsTiesHalfAndWeighsPairs) {
  Metrics m;
  const float kNone = NAN;
  m.add(0.1f, kNone, -1.0f, 1.0f);
  m.add(0.4f, kNone, 1.0f, 2.0f);
  m.add(0.4f, kNone, -1.0f, 1.0f);
  m.add(0.8f, kNone, 1.0f, 1.0f);
  m.add(-0.5f, kNone, -1.0f, 3.0f);
  const auto f = as_map(m);
  // Positive weight 3, negative 5. The positive at 0.4 (weight 2) outranks negatives of weight 1 + 3 and ties one
  // of weight 1: 2 * 4.5 = 9 pairs; the one at 0.8 outranks all 5: 14 of 15.
  EXPECT_NEAR(f.at("auc"), 14.0 / 15.0, 1e-12);
  // score > 0 says 1: right for 0.4 (+, 2), 0.8 (+, 1), -0.5 (-, 3); 6 of 8.
  EXPECT_NEAR(f.at("accuracy"), 0.75, 1e-12);
  EXPECT_EQ(f.count("log loss"), 0u);  // no probabilities
  EXPECT_EQ(f.count("rmse"), 0u);      // binary labels
}

TEST(Metrics, LogLossAndCalibrationFromProbabilities) {
  Metrics m;
  m.add(2.2f, 0.9f, 1.0f, 1.0f);     // bin 9
  m.add(1.4f, 0.8f, -1.0f, 1.0f);    // bin 8
  m.add(-1.7f, 0.15f, -1.0f, 2.0f);  // bin 1
  m.add(-2.9f, 0.05f, 1.0f, 1.0f);   // bin 0
  const auto f = as_map(m);
  const double ll = -(std::log(0.9) + std::log(0.2) + 2.0 * std::log(0.85) + std::log(0.05)) / 5.0;
  EXPECT_NEAR(f.at("log loss"), ll, 1e-6);
  // Bins: |0.9 - 1| + |0.8 - 0| + |2 * 0.15 - 0| + |0.05 - 1|, over the weight 5.
  EXPECT_NEAR(f.at("calibration error"), (0.1 + 0.8 + 0.3 + 0.95) / 5.0, 1e-6);
  EXPECT_NEAR(f.at("accuracy"), 3.0 / 5.0, 1e-12);  // p > 0.5 says 1
  EXPECT_NEAR(f.at("auc"), 0.5, 1e-12);  // positives at 2.2 and -2.9; negatives at 1.4 and -1.7 (w 2)
}

TEST(Metrics, RegressionLabelsGiveRmseAndMae) {
  Metrics m;
  m.add(2.0f, NAN, 1.0f, 1.0f);  // binary so far
  m.add(0.0f, NAN, 4.0f, 3.0f);  // not: regression figures over both
  const auto f = as_map(m);
  EXPECT_NEAR(f.at("rmse"), std::sqrt((1.0 + 3.0 * 16.0) / 4.0), 1e-12);
  EXPECT_NEAR(f.at("mae"), (1.0 + 12.0) / 4.0, 1e-12);
  EXPECT_EQ(f.count("auc"), 0u);
  m.add(1.0f, NAN, 1.0f, 0.0f);  // weight 0 counts nothing
  EXPECT_NEAR(as_map(m).at("mae"), 13.0 / 4.0, 1e-12);
}

TEST(Metrics, MulticlassAccuracyAndJson) {
  Metrics m;
  m.add_class(true, 1.0f);
  m.add_class(false, 2.0f);
  m.add_class(true, 1.0f);
  EXPECT_NEAR(as_map(m).at("multiclass accuracy"), 0.5, 1e-12);
  EXPECT_EQ(m.json(), "{\"examples\": 3, \"weight\": 4, \"multiclass_accuracy\": 0.5}\n");
  EXPECT_EQ(m.summary_lines(), "metric multiclass accuracy = 0.5\n");
  EXPECT_EQ(Metrics().json(), "{\"examples\": 0, \"weight\": 0}\n");
}

}  // namespace
}  // namespace lepus

// The table row and summary layout, checked against lines of VW's own stderr (oracles, copied here); and
// --progress_log's rows and schedule.
#include "pipeline/progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace lepus {
namespace {

TEST(Progress, HeaderIsVws) {
  EXPECT_EQ(progress_header(),
            "average  since         example        example        current        current  current\n"
            "loss     last          counter         weight          label        predict features\n");
}

TEST(Progress, RowMatchesVwLayout) {
  ProgressRow r;
  r.average_loss = 0.693147;
  r.since_last = 0.693147;
  r.example_counter = 1;
  r.example_weight = 1.0;
  r.label = -1.0f;
  r.prediction = 0.0f;
  r.features = 128;
  EXPECT_EQ(progress_row(r),
            "0.693147 0.693147            1            1.0        -1.0000         0.0000      128\n");
  r.since_last.reset();
  r.label.reset();
  r.example_counter = 2;
  r.example_weight = 2.0;
  r.prediction = 0.0475f;
  r.features = 4;
  r.average_loss = 0.401502;
  EXPECT_EQ(progress_row(r),
            "0.401502 n.a.                2            2.0        unknown         0.0475        4\n");
  r.holdout = true;
  r.average_loss = 225.0;  // longer than 8: cut, not rounded
  EXPECT_EQ(progress_row(r).substr(0, 9), "225.0000 ");
  EXPECT_EQ(progress_row(r).substr(progress_row(r).size() - 3), " h\n");
}

TEST(Progress, PredictionFormat) {
  EXPECT_EQ(format_prediction(0.0f), "0");
  EXPECT_EQ(format_prediction(-1.0f), "-1");
  EXPECT_EQ(format_prediction(-0.0f), "-0");
  EXPECT_EQ(format_prediction(0.259513f), "0.259513");
  EXPECT_EQ(format_prediction(15.0f), "15");
}

TEST(Progress, SummaryMatchesVw) {
  SummaryFigures s;
  s.examples = 1000;
  s.weighted_examples = 1000.0;
  s.weighted_labels = -82.0;
  s.average_loss = 0.429393;
  s.best_constant = BestConstant{-0.164369f, 0.689781f};
  s.total_features = 78739;
  EXPECT_EQ(summary_text(s),
            "\nfinished run\nnumber of examples = 1000\nweighted example sum = 1000.000000\n"
            "weighted label sum = -82.000000\naverage loss = 0.429393\nbest constant = -0.164369\n"
            "best constant's loss = 0.689781\ntotal feature number = 78739\n");
}

// The log grid: every count up to 10, then the rounded 10^(k/20), each once.
TEST(ProgressLog, GridIsTwentyPointsADecade) {
  LogGrid grid;
  std::vector<uint64_t> due;
  for (uint64_t n = 1; n <= 1000000; ++n)
    if (grid.due(n)) due.push_back(n);
  const std::vector<uint64_t> first = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 13, 14, 16,  18, 20,
                                       22, 25, 28, 32, 35, 40, 45, 50, 56, 63, 71, 79, 89, 100, 112};
  ASSERT_GE(due.size(), first.size());
  EXPECT_EQ(std::vector<uint64_t>(due.begin(), due.begin() + first.size()), first);
  for (uint64_t decade = 10; decade < 1000000; decade *= 10) {
    int rows = 0;
    for (uint64_t n : due) rows += n >= decade && n < 10 * decade;
    EXPECT_EQ(rows, 20) << "decade from " << decade;
  }
  EXPECT_EQ(due.back(), 1000000u);
  for (uint64_t n : due) {  // every point is a rounded power 10^(k/20)
    const double k = 20.0 * std::log10(static_cast<double>(n));
    bool on_grid = false;
    for (double j : {std::floor(k), std::ceil(k)})
      on_grid |= std::llround(std::pow(10.0, j / 20.0)) == static_cast<long long>(n);
    EXPECT_TRUE(on_grid) << n;
  }
}

// A count that jumps past several points (not the driver's case, which counts one by one) gives one row.
TEST(ProgressLog, GridSkipsPointsPassedAtOnce) {
  LogGrid grid;
  EXPECT_TRUE(grid.due(50));
  EXPECT_FALSE(grid.due(55));
  EXPECT_TRUE(grid.due(56));
  EXPECT_FALSE(grid.due(56));
}

TEST(ProgressLog, RowIsTabSeparated) {
  EXPECT_EQ(progress_log_header(),
            "examples\tweighted_examples\taverage_loss\tsince_last\tlabel\tprediction\tfeatures\tholdout\n");
  ProgressRow r;
  r.example_counter = 3;
  r.example_weight = 4.5;
  r.label = -1.0f;
  r.prediction = 0.25f;
  r.features = 12;
  set_losses(r, LossSum{3.0, 4.5}, LossSum{1.0, 2.5});
  EXPECT_EQ(progress_log_row(r), "3\t4.5\t0.666666667\t1\t-1\t0.25\t12\t0\n");
  r.label.reset();  // unlabelled: no loss since the last row
  set_losses(r, LossSum{3.0, 4.5}, LossSum{3.0, 4.5});
  r.holdout = true;
  EXPECT_EQ(progress_log_row(r), "3\t4.5\t0.666666667\tNA\tNA\t0.25\t12\t1\n");
  set_losses(r, LossSum{}, LossSum{});
  r.label_text = "2";
  r.prediction_text = "8(64%)";
  EXPECT_EQ(progress_log_row(r), "3\t4.5\tNA\tNA\t2\t8(64%)\t12\t1\n");
}

}  // namespace
}  // namespace lepus

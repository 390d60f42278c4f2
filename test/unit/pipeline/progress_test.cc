// The table row and summary layout, checked against lines of VW's own stderr (oracles, copied here).
#include "pipeline/progress.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lepus

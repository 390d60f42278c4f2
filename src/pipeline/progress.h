// VW's progressive-validation table and run summary, character for character as VW 9.11.2 prints them, and the
// same figures as --progress_log's tab-separated rows.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "lepus/loss.h"

namespace lepus {

std::string progress_header();  // the two fixed header lines, each ending in '\n'

struct ProgressRow {
  std::optional<double> average_loss;  // nullopt prints "n.a."
  std::optional<double> since_last;
  uint64_t example_counter = 0;
  double example_weight = 0.0;
  std::optional<float> label;  // nullopt prints "unknown"
  float prediction = 0.0f;
  uint64_t features = 0;
  bool holdout = false;
  std::string missing_text =
      "n.a.";  // what a missing average or since-last prints ("unknown" in holdout rows)
  // A reduction's label and prediction as printed (a class, its name, "known", "8(64%)"); empty: the numbers.
  std::string label_text;
  std::string prediction_text;
};
std::string progress_row(const ProgressRow& row);  // ends in '\n'

// A loss total and the weight it is over. A row reports the average of `now`, and since-last the average of what
// `now` added to `last` (each missing when its weight is not positive).
struct LossSum {
  double loss = 0.0;
  double weight = 0.0;
  bool operator==(const LossSum&) const = default;
};
void set_losses(ProgressRow& row, const LossSum& now, const LossSum& last);

// VW's progressive-validation table as a run prints it to `out` (nullptr: --quiet, no table): when the next row is
// due (the example weight reaches the last row's times -P, or plus -P with additive progress), and each row's
// since-last figures; also the state VW's readable model records (its dump interval, the losses at the last row).
class ProgressTable {
 public:
  ProgressTable(std::ostream* out, double progress, bool additive)
      : out_(out), progress_(progress), additive_(additive), next_row_(additive ? progress : 1.0) {}
  bool on() const { return out_ != nullptr; }
  void header() const {
    if (out_) *out_ << progress_header();
  }
  bool due(double weight_seen) const { return out_ && weight_seen >= next_row_; }
  // Prints a row: it reports `now` and, since the last row, what `now` added; `progressive` is the progressive
  // sum the next row's since-last starts from (VW's holdout since-last sums restart only at holdout rows).
  void print(ProgressRow& row, const LossSum& now, const LossSum& progressive, bool holdout_mode);
  double next_row() const { return next_row_; }
  const LossSum& last() const { return last_; }  // the progressive losses at the last row

 private:
  std::ostream* out_;
  double progress_;
  bool additive_;
  double next_row_;
  LossSum last_, last_holdout_;
};

// --progress_log: the column names, and a row's figures, tab-separated (a missing figure is "NA"); each ends in '\n'.
std::string progress_log_header();
std::string progress_log_row(const ProgressRow& row);

// --progress_log's schedule, independent of -P: a row at each example count round(10^(k/20)), k = 0, 1, 2, ...,
// once: every count up to 10, then 20 a decade (11, 13, 14, 16, 18, 20, 22, 25, ...), even steps on a log axis.
class LogGrid {
 public:
  // True when `count` has reached the next point; the point after it is then the first one above `count`.
  bool due(uint64_t count);

 private:
  int k_ = 0;
  uint64_t next_ = 1;
};

// "-p"/"-r" number: integers without decimals (-0 as "-0"), otherwise 6 decimals.
std::string format_prediction(float v);

struct SummaryFigures {
  uint64_t examples = 0;
  int passes_used = 1;
  bool holdout = false;  // average_loss is the best holdout loss ("undefined (no holdout)" when missing)
  double weighted_examples = 0.0;  // wl + wu
  double weighted_labels = 0.0;
  std::optional<double> average_loss;
  std::optional<BestConstant> best_constant;
  std::optional<double> class_log_loss;  // --probabilities: the average multiclass log loss
  uint64_t total_features = 0;
};
std::string summary_text(const SummaryFigures& s);  // from "\nfinished run" on

}  // namespace lepus

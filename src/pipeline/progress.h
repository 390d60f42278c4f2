// VW's progressive-validation table and run summary, character for character as VW 9.11.2 prints them.
#pragma once
#include <cstdint>
#include <optional>
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
  std::string missing_text = "n.a.";  // what a missing average or since-last prints ("unknown" in holdout rows)
  // A reduction's label and prediction as printed (a class, its name, "known", "8(64%)"); empty: the numbers.
  std::string label_text;
  std::string prediction_text;
};
std::string progress_row(const ProgressRow& row);  // ends in '\n'

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

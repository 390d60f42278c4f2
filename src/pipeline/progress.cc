#include "pipeline/progress.h"

#include <cmath>
#include <cstdio>

namespace lepus {
namespace {

// VW sets a width and lets a longer field through in full, but its fixed 6-decimal numbers are cut to the width.
std::string fit_left(std::string s, size_t width) {
  if (s.size() > width) s.resize(width);
  s.append(width - s.size(), ' ');
  return s;
}
std::string pad_right(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
std::string number(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
// A label or prediction longer than its 14 columns becomes its first 11 characters and "...".
std::string label_field(const std::string& s) {
  if (s.size() > 14) return s.substr(0, 11) + "...";
  return pad_right(s, 14);
}

}  // namespace

std::string progress_header() {
  return "average  since         example        example        current        current  current\n"
         "loss     last          counter         weight          label        predict features\n";
}

std::string progress_row(const ProgressRow& r) {
  std::string out;
  out += fit_left(r.average_loss ? number("%f", *r.average_loss) : r.missing_text, 8);
  out += ' ';
  out += fit_left(r.since_last ? number("%f", *r.since_last) : r.missing_text, 8);
  out += ' ';
  out += pad_right(std::to_string(r.example_counter), 12);
  out += ' ';
  out += pad_right(number("%.1f", r.example_weight), 14);
  out += ' ';
  if (!r.prediction_text.empty()) {
    out += label_field(r.label_text);
    out += ' ';
    out += label_field(r.prediction_text);
  } else {
    out += label_field(r.label ? number("%.4f", *r.label) : "unknown");
    out += ' ';
    out += label_field(number("%.4f", r.prediction));
  }
  out += ' ';
  out += pad_right(std::to_string(r.features), 8);
  if (r.holdout) out += " h";
  out += '\n';
  return out;
}

void set_losses(ProgressRow& row, const LossSum& now, const LossSum& last) {
  row.average_loss.reset();
  row.since_last.reset();
  if (now.weight > 0.0) row.average_loss = now.loss / now.weight;
  if (now.weight - last.weight > 0.0) row.since_last = (now.loss - last.loss) / (now.weight - last.weight);
}

std::string progress_log_header() {
  return "examples\tweighted_examples\taverage_loss\tsince_last\tlabel\tprediction\tfeatures\tholdout\n";
}

std::string progress_log_row(const ProgressRow& r) {
  // 9 significant digits: a float exactly, a loss finely enough to plot small differences.
  auto figure = [](std::optional<double> v) { return v ? number("%.9g", *v) : std::string("NA"); };
  std::string out = std::to_string(r.example_counter);
  out += '\t' + number("%.9g", r.example_weight);
  out += '\t' + figure(r.average_loss);
  out += '\t' + figure(r.since_last);
  if (!r.prediction_text.empty()) {  // a reduction's class names ("known", "8(64%)")
    out += '\t' + r.label_text;
    out += '\t' + r.prediction_text;
  } else {
    out += '\t' + figure(r.label);
    out += '\t' + figure(r.prediction);
  }
  out += '\t' + std::to_string(r.features);
  out += r.holdout ? "\t1\n" : "\t0\n";
  return out;
}

bool LogGrid::due(uint64_t count) {
  if (count < next_) return false;
  // Points that round to a count already passed are skipped (below 10 several round alike).
  while (next_ <= count) next_ = static_cast<uint64_t>(std::llround(std::pow(10.0, ++k_ / 20.0)));
  return true;
}

std::string format_prediction(float v) {
  if (std::floor(v) == v) return number("%.0f", v);
  return number("%.6f", v);
}

std::string summary_text(const SummaryFigures& s) {
  std::string out = "\nfinished run\n";
  if (s.passes_used > 1) {
    out +=
        "number of examples per pass = " + std::to_string(s.examples / static_cast<uint64_t>(s.passes_used)) +
        "\n";
    out += "passes used = " + std::to_string(s.passes_used) + "\n";
  } else {
    out += "number of examples = " + std::to_string(s.examples) + "\n";
  }
  out += "weighted example sum = " + number("%f", s.weighted_examples) + "\n";
  out += "weighted label sum = " + number("%f", s.weighted_labels) + "\n";
  if (s.holdout) {
    out += "average loss = " +
           (s.average_loss ? number("%f", *s.average_loss) + " h" : std::string("undefined (no holdout)")) +
           "\n";
  } else {
    out += "average loss = " + (s.average_loss ? number("%f", *s.average_loss) : std::string("n.a.")) + "\n";
  }
  if (s.class_log_loss) out += "average multiclass log loss = " + number("%f", *s.class_log_loss) + "\n";
  if (s.best_constant) {
    out += "best constant = " + number("%f", s.best_constant->value) + "\n";
    if (!std::isnan(s.best_constant->loss))
      out += "best constant's loss = " + number("%f", s.best_constant->loss) + "\n";
  }
  out += "total feature number = " + std::to_string(s.total_features) + "\n";
  return out;
}

void ProgressTable::print(ProgressRow& row, const LossSum& now, const LossSum& progressive,
                          bool holdout_mode) {
  set_losses(row, now, holdout_mode ? last_holdout_ : last_);
  *out_ << progress_row(row);
  last_ = progressive;
  if (holdout_mode) last_holdout_ = now;
  next_row_ = additive_ ? row.example_weight + progress_ : row.example_weight * progress_;
}

}  // namespace lepus

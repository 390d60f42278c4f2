// --metrics (metrics.h): the running sums, AUC by sorting the scores once at the end.
#include "pipeline/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lepus {

void Metrics::add(float score, float probability, float label, float weight) {
  if (!(weight > 0.0f)) return;  // an example that does not count (weight 0, or invalid)
  ++n_;
  weight_ += weight;
  const double err = static_cast<double>(score) - label;
  squared_ += weight * err * err;
  absolute_ += weight * std::fabs(err);
  if (label != 1.0f && label != -1.0f) {
    binary_ = false;
    scored_.clear();
    scored_.shrink_to_fit();
    return;
  }
  if (!binary_) return;
  const bool positive = label == 1.0f;
  scored_.push_back(Scored{score, weight, positive});
  const bool has_p = !std::isnan(probability);
  const bool says_positive = has_p ? probability > 0.5f : score > 0.0f;
  if (says_positive == positive) correct_ += weight;
  if (has_p) {
    // The probability of the true label, kept off 0 so a confident mistake costs a large finite amount.
    const double q = std::clamp(static_cast<double>(positive ? probability : 1.0f - probability), 1e-15, 1.0);
    log_loss_ -= weight * std::log(q);
    prob_weight_ += weight;
    const int bin = std::clamp(static_cast<int>(probability * 10.0f), 0, 9);  // p = 1 goes to the last bin
    bin_weight_[bin] += weight;
    bin_p_[bin] += weight * static_cast<double>(probability);
    if (positive) bin_pos_[bin] += weight;
  }
}

void Metrics::add_class(bool correct, float weight) {
  if (!(weight > 0.0f)) return;
  ++classes_n_;
  class_weight_ += weight;
  if (correct) class_correct_ += weight;
}

std::vector<std::pair<std::string, double>> Metrics::figures() const {
  std::vector<std::pair<std::string, double>> out;
  if (classes_n_ > 0) out.emplace_back("multiclass accuracy", class_correct_ / class_weight_);
  if (n_ == 0) return out;
  if (!binary_) {
    out.emplace_back("rmse", std::sqrt(squared_ / weight_));
    out.emplace_back("mae", absolute_ / weight_);
    return out;
  }
  // AUC: scores ascending; a positive outranks every negative below it and half of the negatives tied with it.
  std::vector<Scored> s = scored_;
  std::sort(s.begin(), s.end(), [](const Scored& a, const Scored& b) { return a.score < b.score; });
  double neg_below = 0.0, pairs = 0.0, pos = 0.0, neg = 0.0;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    double tie_pos = 0.0, tie_neg = 0.0;
    for (; j < s.size() && s[j].score == s[i].score; ++j) (s[j].positive ? tie_pos : tie_neg) += s[j].weight;
    pairs += tie_pos * (neg_below + 0.5 * tie_neg);
    neg_below += tie_neg;
    pos += tie_pos;
    neg += tie_neg;
    i = j;
  }
  if (pos > 0.0 && neg > 0.0) out.emplace_back("auc", pairs / (pos * neg));
  out.emplace_back("accuracy", correct_ / weight_);
  if (prob_weight_ > 0.0) {
    out.emplace_back("log loss", log_loss_ / prob_weight_);
    double ece = 0.0;
    for (int b = 0; b < 10; ++b)
      if (bin_weight_[b] > 0.0) ece += std::fabs(bin_p_[b] - bin_pos_[b]) / prob_weight_;
    out.emplace_back("calibration error", ece);
  }
  return out;
}

namespace {
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

std::string Metrics::summary_lines() const {
  std::string out;
  for (const auto& [name, value] : figures()) out += "metric " + name + " = " + number(value) + "\n";
  return out;
}

std::string Metrics::json() const {
  std::string out = "{\"examples\": " + std::to_string(n_ + classes_n_) +
                    ", \"weight\": " + number(weight_ + class_weight_);
  for (const auto& [name, value] : figures()) {
    std::string key = name;
    std::replace(key.begin(), key.end(), ' ', '_');
    out += ", \"" + key + "\": " + number(value);
  }
  return out + "}\n";
}

}  // namespace lepus

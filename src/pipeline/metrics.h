// --metrics: evaluation figures beyond VW's average loss, over the examples the summary's loss covers
// (progressive validation while learning, every example under -t, the holdout examples when passes hold some out).
//
// Binary labels (every label seen is -1 or 1; 0/1 labels after --positive_label): AUC (the probability that a
// positive outranks a negative, ties counting half, each pair weighted by the product of the two importance
// weights), accuracy (score > 0 predicts 1; with probabilities, p > 0.5), and, when the loss gives probabilities
// (logistic: p = 1 / (1 + e^-score)), log loss and the expected calibration error over ten equal-width bins of p
// (sum over bins of |mean p - share of positives| weighted by the bin's share of the weight; Naeini, Cooper &
// Hauskrecht 2015, "Obtaining Well Calibrated Probabilities Using Bayesian Binning", Sec. 3). Any other labels:
// RMSE and MAE of the prediction. Multiclass reductions: the share of examples whose class is right. Every figure
// is weighted by the examples' importance weights.
//
// Memory: AUC keeps each binary example's score and weight (12 bytes an example); nothing else grows.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lepus {

class Metrics {
 public:
  // One scalar example: the score the loss is reported at, the probability when the loss gives one (else NaN),
  // its label and importance weight.
  void add(float score, float probability, float label, float weight);
  // One example of a multiclass reduction: whether its predicted class was its label.
  void add_class(bool correct, float weight);

  // The figures that apply, in a fixed order, as (name, value); a figure with no examples is absent.
  std::vector<std::pair<std::string, double>> figures() const;
  // "metric NAME = VALUE" lines for the summary.
  std::string summary_lines() const;
  // The same figures as one JSON object, with the example count and weight.
  std::string json() const;

 private:
  struct Scored {
    float score, weight;
    bool positive;
  };
  uint64_t n_ = 0;
  double weight_ = 0.0;
  bool binary_ = true;  // every label so far is -1 or 1
  std::vector<Scored> scored_;
  double correct_ = 0.0;  // weight of right binary decisions
  double log_loss_ = 0.0, prob_weight_ = 0.0;
  double bin_weight_[10] = {}, bin_p_[10] = {}, bin_pos_[10] = {};
  double squared_ = 0.0, absolute_ = 0.0;  // regression sums
  uint64_t classes_n_ = 0;
  double class_weight_ = 0.0, class_correct_ = 0.0;
};

}  // namespace lepus

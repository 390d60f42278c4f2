// The four VW 9.11.2 losses. Each is one small class; loss_table.cc is the only table.
#pragma once
#include "lepus/loss.h"

namespace lepus {

// Squared loss (p - y)^2, extrapolated linearly outside the clipping range as VW reports it.
class SquaredLoss final : public Loss {
 public:
  std::string_view name() const override { return "squared"; }
  float loss(float p, float y, LabelRange r) const override;
  float squared_gradient(float p, float y) const override;
  float invariant_update(float p, float y, float s, float h) const override;
  float unsafe_update(float p, float y, float s) const override;
  double first_derivative(float p, float y, LabelRange r) const override;
  double second_derivative(float p, float y, LabelRange r) const override;
  std::optional<double> curvature_bound() const override;
  std::optional<BestConstant> best_constant(const BestConstantInput& in, LabelRange r) const override;
};

// Logistic loss log(1 + exp(-z p)). A label y is read as the mixture q = (y - m)/(M - m) of the classes
// z = +1 and z = -1 (m, M = --logistic_min/max), so every function is q F(p, +1) + (1 - q) F(p, -1).
class LogisticLoss final : public Loss {
 public:
  LogisticLoss(float min_label, float max_label) : min_(min_label), max_(max_label) {}
  std::string_view name() const override { return "logistic"; }
  float loss(float p, float y, LabelRange r) const override;
  float squared_gradient(float p, float y) const override;
  float invariant_update(float p, float y, float s, float h) const override;
  float unsafe_update(float p, float y, float s) const override;
  double first_derivative(float p, float y, LabelRange r) const override;
  double second_derivative(float p, float y, LabelRange r) const override;
  std::optional<double> curvature_bound() const override;
  LabelRange initial_range() const override { return {-50.0f, 50.0f}; }
  std::optional<BestConstant> best_constant(const BestConstantInput& in, LabelRange r) const override;
  bool binary_labels() const override { return true; }

 private:
  float q(float y) const { return (y - min_) / (max_ - min_); }
  float min_, max_;
};

// Hinge loss max(0, 1 - y p), labels in {-1, 1}.
class HingeLoss final : public Loss {
 public:
  std::string_view name() const override { return "hinge"; }
  float loss(float p, float y, LabelRange r) const override;
  float squared_gradient(float p, float y) const override;
  float invariant_update(float p, float y, float s, float h) const override;
  float unsafe_update(float p, float y, float s) const override;
  double first_derivative(float p, float y, LabelRange r) const override;
  double second_derivative(float p, float y, LabelRange r) const override;
  std::optional<double> curvature_bound() const override;
  std::optional<BestConstant> best_constant(const BestConstantInput& in, LabelRange r) const override;
  bool binary_labels() const override { return true; }
};

// Quantile (pinball) loss at level tau: tau (y - p) above the prediction, (1 - tau)(p - y) below.
class QuantileLoss final : public Loss {
 public:
  explicit QuantileLoss(float tau) : tau_(tau) {}
  std::string_view name() const override { return "quantile"; }
  float loss(float p, float y, LabelRange r) const override;
  float squared_gradient(float p, float y) const override;
  float invariant_update(float p, float y, float s, float h) const override;
  float unsafe_update(float p, float y, float s) const override;
  double first_derivative(float p, float y, LabelRange r) const override;
  double second_derivative(float p, float y, LabelRange r) const override;
  std::optional<double> curvature_bound() const override;
  std::optional<BestConstant> best_constant(const BestConstantInput& in, LabelRange r) const override;

 private:
  float tau_;
};

// The two-label counts c1, c2 behind VW's best constant; nullopt when VW prints nothing.
struct TwoLabelCounts {
  float l1, l2;  // l1 < l2
  float c1, c2;  // weights of l1 and l2
};
std::optional<TwoLabelCounts> two_label_counts(const BestConstantInput& in);

}  // namespace lepus

// VW 9.11.2's loss functions, restated. All arithmetic is f32 in VW's order unless a
// comment says f64, because the parity tests compare predictions to 1e-3 over thousands of steps.
#include "losses/losses.h"

#include <algorithm>
#include <cmath>

namespace lepus {
namespace {

// Approximates LambertW(exp(x)) - x (VW's wexpmx; f64 inside, f32 out), the logistic invariant update's core.
float wexpmx(float xf) {
  const double x = xf;
  const double w0 = x >= 1.0 ? 0.86 * x + 0.01 : std::exp(0.8 * x - 0.65);
  const double r0 = x >= 1.0 ? x - std::log(w0) - w0 : 0.2 * x + 0.65 - w0;
  const double t = 1.0 + w0;
  const double u0 = 2.0 * t * (t + 2.0 * r0 / 3.0);
  return static_cast<float>(w0 * (1.0 + r0 / t * (u0 - r0) / (u0 - 2.0 * r0)) - x);
}

}  // namespace

// ---- squared ----
float SquaredLoss::loss(float p, float y, LabelRange r) const {
  if (p <= r.hi && p >= r.lo) return (p - y) * (p - y);
  if (p < r.lo) {
    if (y == r.lo) return 0.0f;
    const double d = static_cast<double>(y) - r.lo;
    return static_cast<float>(d * d + 2.0 * d * (static_cast<double>(r.lo) - p));
  }
  if (y == r.hi) return 0.0f;
  const double d = static_cast<double>(r.hi) - y;
  return static_cast<float>(d * d + 2.0 * d * (static_cast<double>(p) - r.hi));
}
float SquaredLoss::squared_gradient(float p, float y) const { return 4.0f * (p - y) * (p - y); }
float SquaredLoss::invariant_update(float p, float y, float s, float h) const {
  if (s * h < 1e-6f) return 2.0f * (y - p) * s;
  return (y - p) * (1.0f - std::exp(-2.0f * s * h)) / h;
}
float SquaredLoss::unsafe_update(float p, float y, float s) const { return 2.0f * (y - p) * s; }
double SquaredLoss::first_derivative(float p, float y, LabelRange r) const {
  const float c = std::min(std::max(p, r.lo), r.hi);
  return 2.0 * (static_cast<double>(c) - y);
}
double SquaredLoss::second_derivative(float p, float, LabelRange r) const {
  return p >= r.lo && p <= r.hi ? 2.0 : 0.0;  // linear extrapolation outside the clipping range
}
std::optional<double> SquaredLoss::curvature_bound() const { return 2.0; }
std::optional<BestConstant> SquaredLoss::best_constant(const BestConstantInput& in, LabelRange r) const {
  if (in.weighted_labeled <= 0.0) return std::nullopt;
  const float value = static_cast<float>(in.sum_weighted_labels) / static_cast<float>(in.weighted_labeled);
  const auto counts = two_label_counts(in);
  if (!counts) return BestConstant{value, std::nanf("")};  // VW prints the constant alone
  const float l = (counts->c1 * loss(value, counts->l1, r) + counts->c2 * loss(value, counts->l2, r)) /
                  (counts->c1 + counts->c2);
  return BestConstant{value, l};
}

// ---- logistic ----
float LogisticLoss::loss(float p, float y, LabelRange) const {
  const float qq = q(y);
  const float pos = std::log(1.0f + std::exp(-p));
  const float neg = std::log(1.0f + std::exp(p));
  if (qq == 1.0f) return pos;
  if (qq == 0.0f) return neg;
  return qq * pos + (1.0f - qq) * neg;
}
double LogisticLoss::first_derivative(float p, float y, LabelRange) const {
  const float qq = q(y);
  const float pos = -1.0f / (1.0f + std::exp(p));
  const float neg = 1.0f / (1.0f + std::exp(-p));
  if (qq == 1.0f) return pos;
  if (qq == 0.0f) return neg;
  return qq * pos + (1.0f - qq) * neg;
}
// Both classes' terms log(1 + exp(-z p)) have the second derivative sigma(p) sigma(-p), whatever z, so every
// mixture q of them does too; at most 1/4 (p = 0).
double LogisticLoss::second_derivative(float p, float, LabelRange) const {
  const double e = std::exp(-std::fabs(static_cast<double>(p)));  // symmetric; no overflow for large |p|
  return e / ((1.0 + e) * (1.0 + e));
}
std::optional<double> LogisticLoss::curvature_bound() const { return 0.25; }
float LogisticLoss::squared_gradient(float p, float y) const {
  const float d = static_cast<float>(first_derivative(p, y, {}));
  return d * d;
}
float LogisticLoss::unsafe_update(float p, float y, float s) const {
  const float qq = q(y);
  const float pos = s / (1.0f + std::exp(p));
  const float neg = -s / (1.0f + std::exp(-p));
  if (qq == 1.0f) return pos;
  if (qq == 0.0f) return neg;
  return qq * pos + (1.0f - qq) * neg;
}
float LogisticLoss::invariant_update(float p, float y, float s, float h) const {
  auto one = [&](float z) {
    if (s * h < 1e-6f) return z * s / (1.0f + std::exp(z * p));
    const float x = s * h + z * p + std::exp(z * p);
    const float w = wexpmx(x);
    return -(z * w + p) / h;
  };
  const float qq = q(y);
  if (qq == 1.0f) return one(1.0f);
  if (qq == 0.0f) return one(-1.0f);
  return qq * one(1.0f) + (1.0f - qq) * one(-1.0f);
}
std::optional<BestConstant> LogisticLoss::best_constant(const BestConstantInput& in, LabelRange r) const {
  const auto counts = two_label_counts(in);
  if (!counts) return std::nullopt;
  const float c1 = counts->c1, c2 = counts->c2;
  const float value = c1 <= 0.0f ? 1.0f : (c2 <= 0.0f ? -1.0f : std::log(c2 / c1));
  const float l = (c1 * loss(value, -1.0f, r) + c2 * loss(value, 1.0f, r)) / (c1 + c2);
  return BestConstant{value, l};
}

// ---- hinge ----
float HingeLoss::loss(float p, float y, LabelRange) const { return std::max(0.0f, 1.0f - y * p); }
float HingeLoss::squared_gradient(float p, float y) const { return y * p >= 1.0f ? 0.0f : y * y; }
float HingeLoss::invariant_update(float p, float y, float s, float h) const {
  if (y * p >= 1.0f) return 0.0f;
  const float err = 1.0f - y * p;
  return y * (s * h < err ? s : err / h);
}
float HingeLoss::unsafe_update(float p, float y, float s) const { return y * p >= 1.0f ? 0.0f : y * s; }
double HingeLoss::first_derivative(float p, float y, LabelRange) const { return y * p >= 1.0f ? 0.0 : -y; }
double HingeLoss::second_derivative(float, float, LabelRange) const { return 0.0; }
std::optional<double> HingeLoss::curvature_bound() const { return std::nullopt; }
std::optional<BestConstant> HingeLoss::best_constant(const BestConstantInput& in, LabelRange r) const {
  const auto counts = two_label_counts(in);
  if (!counts) return std::nullopt;
  const float value = counts->c2 <= counts->c1 ? -1.0f : 1.0f;
  const float l = (counts->c1 * loss(value, counts->l1, r) + counts->c2 * loss(value, counts->l2, r)) /
                  (counts->c1 + counts->c2);
  return BestConstant{value, l};
}

// ---- quantile ----
float QuantileLoss::loss(float p, float y, LabelRange) const {
  const float d = y - p;
  return d > 0.0f ? tau_ * d : -(1.0f - tau_) * d;
}
double QuantileLoss::first_derivative(float p, float y, LabelRange) const {
  const float d = y - p;
  if (d == 0.0f) return 0.0;
  return d > 0.0f ? -tau_ : 1.0f - tau_;
}
double QuantileLoss::second_derivative(float, float, LabelRange) const { return 0.0; }
std::optional<double> QuantileLoss::curvature_bound() const { return std::nullopt; }
float QuantileLoss::squared_gradient(float p, float y) const {
  const float d1 = static_cast<float>(first_derivative(p, y, {}));
  return d1 * d1;
}
float QuantileLoss::invariant_update(float p, float y, float s, float h) const {
  const float d = y - p;
  if (d == 0.0f) return 0.0f;
  if (d > 0.0f) return tau_ * s * h < d ? tau_ * s : d / h;
  return -(1.0f - tau_) * s * h > d ? (tau_ - 1.0f) * s : d / h;
}
float QuantileLoss::unsafe_update(float p, float y, float s) const {
  const float d = y - p;
  if (d == 0.0f) return 0.0f;
  return d > 0.0f ? tau_ * s : -(1.0f - tau_) * s;
}
std::optional<BestConstant> QuantileLoss::best_constant(const BestConstantInput& in, LabelRange r) const {
  const auto counts = two_label_counts(in);
  if (!counts) return std::nullopt;
  const float value = tau_ * (counts->c1 + counts->c2) < counts->c2 ? counts->l2 : counts->l1;
  const float l = (counts->c1 * loss(value, counts->l1, r) + counts->c2 * loss(value, counts->l2, r)) /
                  (counts->c1 + counts->c2);
  return BestConstant{value, l};
}

std::optional<TwoLabelCounts> two_label_counts(const BestConstantInput& in) {
  if (!in.have_l1 || in.more_labels) return std::nullopt;
  float l1 = in.l1;
  float l2 = in.have_l2 ? in.l2 : 0.0f;
  if (l1 == l2) return std::nullopt;
  if (l1 > l2) std::swap(l1, l2);
  const float c1 =
      static_cast<float>((in.sum_weighted_labels - static_cast<double>(l2) * in.weighted_labeled) /
                         (static_cast<double>(l1) - l2));
  const float c2 = static_cast<float>(in.weighted_labeled) - c1;
  if (c1 + c2 <= 0.0f) return std::nullopt;
  return TwoLabelCounts{l1, l2, c1, c2};
}

}  // namespace lepus

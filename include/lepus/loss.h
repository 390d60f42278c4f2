// Loss functions in VW 9.11.2's parametrisation: value, squared gradient, the importance-
// invariant update of Karampatziakis & Langford (2011) "Online importance weight aware updates", and the
// plain ("unsafe") gradient step. Arithmetic is f32 unless noted, in VW's order, for bit-level parity.
#pragma once
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace lepus {

// The prediction clipping range [lo, hi]; squared loss extrapolates linearly outside it.
struct LabelRange {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};

// What the summary's "best constant" needs: weighted counts of the first two distinct labels.
struct BestConstantInput {
  double sum_weighted_labels = 0.0;                            // sum of w*y over learned labeled examples
  double weighted_labeled = 0.0;                               // sum of w
  bool have_l1 = false, have_l2 = false, more_labels = false;  // more_labels: a third distinct label seen
  float l1 = 0.0f, l2 = 0.0f;  // first two distinct labels, in order of appearance
};

struct BestConstant {
  float value;
  float loss;
};

class Loss {
 public:
  virtual ~Loss() = default;
  virtual std::string_view name() const = 0;
  // Loss of prediction p for label y (f32 result).
  virtual float loss(float p, float y, LabelRange r) const = 0;
  // (dloss/dp)^2, the adaptive accumulator's increment per unit importance weight.
  virtual float squared_gradient(float p, float y) const = 0;
  // Importance-invariant update for learning rate s and ppu ("prediction per update") h: the signed
  // multiplier of x that solves the loss's ODE (Karampatziakis & Langford 2011, section 4).
  virtual float invariant_update(float p, float y, float s, float h) const = 0;
  // Plain gradient step multiplier: -s * dloss/dp.
  virtual float unsafe_update(float p, float y, float s) const = 0;
  // dloss/dp (f64), used by --l1/--l2 truncation and the first-order learners.
  virtual double first_derivative(float p, float y, LabelRange r) const = 0;
  // d2loss/dp2 (f64) at p, the curvature second-order learners (online Newton step, AIOLI) need: 0 where the
  // loss is linear in p (hinge and quantile almost everywhere, squared outside the clipping range).
  virtual double second_derivative(float p, float y, LabelRange r) const = 0;
  // The largest second derivative over every p and y (squared: 2, logistic: 1/4), or nullopt for a loss with
  // no curvature to bound (hinge, quantile: piecewise linear).
  virtual std::optional<double> curvature_bound() const = 0;
  // The clipping range a gd run starts with.
  virtual LabelRange initial_range() const { return {0.0f, 0.0f}; }
  // VW's summary line; nullopt when VW prints none.
  virtual std::optional<BestConstant> best_constant(const BestConstantInput& in, LabelRange r) const = 0;
  // Labels the loss expects to be in {-1, 1} (logistic, hinge).
  virtual bool binary_labels() const { return false; }
};

struct LossOptions {
  std::string name = "squared";
  float quantile_tau = 0.5f;
  float logistic_min = -1.0f;
  float logistic_max = 1.0f;
};

// THE loss table (src/losses/loss_table.cc). Throws ConfigError for an unknown name.
std::unique_ptr<Loss> make_loss(const LossOptions& options);
std::string loss_names();  // "squared, logistic, hinge, quantile"

}  // namespace lepus

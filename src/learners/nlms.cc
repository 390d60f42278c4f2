#include "learners/nlms.h"

#include <cfloat>
#include <cmath>
#include <ostream>

#include "learners/common/merge.h"
#include "learners/common/plumbing.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

constexpr uint32_t kStateVersion = 1;
constexpr double kDefaultEpsFactor = 1e-6;

}  // namespace

NlmsOptions NlmsOptions::from(const OptionValues& v) {
  NlmsOptions o;
  check_option_values(nlms_row().options, v);  // ranges declared once in the row
  if (v.has("nlms_mu")) o.mu = v.number("nlms_mu");
  if (v.has("nlms_eps")) o.eps = v.number("nlms_eps");
  return o;
}

NlmsLearner::NlmsLearner(const NlmsOptions& options, int bits)
    : opt_(options), bits_(bits), w_(size_t{1} << bits), builder_(bits) {}

double NlmsLearner::epsilon() const {
  if (opt_.eps) return *opt_.eps;
  return learned_ > 0.0 ? kDefaultEpsFactor * norm2_sum_ / learned_ : 0.0;
}

double NlmsLearner::score(const SparseVector& v) const {
  double p = 0.0;
  for (const Coord& c : v) p += w_[c.slot] * c.x;
  return p;
}

Prediction NlmsLearner::output(double p) const {
  const float f = common::to_float(p, safeguards_);  // beyond float range (or NaN): at the edge (0), counted
  return Prediction{f, f};
}

Prediction NlmsLearner::predict(const Example& x) const {
  return output(score(builder_.build(x)) + x.initial);
}

Prediction NlmsLearner::learn(const Example& x) {
  const SparseVector& v = builder_.build(x);
  const double p = score(v) + x.initial;
  const Prediction out = output(p);
  if (!common::teaches(x) || v.size() == 0) return out;
  norm2_sum_ += v.norm2();
  learned_ += 1.0;
  // Importance weight k as k repetitions (exact for ε = 0): the residual shrinks by (1 - μ)^k.
  const double mu = x.weight == 1.0f ? opt_.mu : 1.0 - std::pow(1.0 - opt_.mu, static_cast<double>(x.weight));
  const double step = mu * (static_cast<double>(x.label) - p) / (epsilon() + v.norm2());
  if (!std::isfinite(step)) {
    ++safeguards_;
    return out;
  }
  for (const Coord& c : v) w_[c.slot] += step * c.x;
  return out;
}

// μ, ε (absent: the default, from the ||x||^2 sum and count that follow), the sum, the count, the weights.
template <class Self, class V>
void NlmsLearner::state(Self& self, V& v) {
  v.tag(kStateVersion);
  v.number("mu", self.opt_.mu, common::Bounds{{0.0, 2.0, true, true}});
  v.optional("eps", self.opt_.eps, common::kNonNegative);
  v.number("norm2_sum", self.norm2_sum_, common::kNonNegative);
  v.number("examples", self.learned_, common::kNonNegative);  // a mean across ranks after a merge
  v.slots(
      self.w_, [](double) { return true; }, [](std::ostream& out, size_t, double w) { out << w; });
}

void NlmsLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void NlmsLearner::load(ModelReader& in) { common::load_state(*this, in); }

std::vector<std::string> NlmsLearner::describe() const {
  return {"nlms mu = " + common::number(opt_.mu),
          opt_.eps ? "nlms eps = " + common::number(*opt_.eps)
                   : std::string("nlms eps = 1e-6 x average ||x||^2 (online)")};
}

void NlmsLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

// --distributed: the ranks' mean w (VW's plain average); the default ε's ||x||^2 sum and count averaged alike, so
// their ratio is the average over every rank's examples.
void NlmsLearner::merge(Collective& ranks) {
  if (ranks.size() == 1) return;
  const size_t n = size_t{1} << bits_;
  std::vector<double> mean(n + 2);
  for (size_t i = 0; i < n; ++i) mean[i] = w_[i];
  mean[n] = norm2_sum_;
  mean[n + 1] = learned_;
  common::mean(ranks, mean);
  for (size_t i = 0; i < n; ++i)
    if (mean[i] != w_[i]) w_[i] = mean[i];
  norm2_sum_ = mean[n];
  learned_ = mean[n + 1];
}

LearnerRow nlms_row() {
  using Kind = OptionSpec::Kind;
  LearnerRow row{"nlms",
                 "normalized least mean squares: the simplest first-order regression learner, each step "
                 "fitting the example "
                 "a fraction --nlms_mu of the way; a baseline for drifting streams (squared loss only)",
                 {
                     {"nlms_mu",
                      "",
                      Kind::kNumber,
                      "1",
                      "step size: 1 fits each example exactly, less averages",
                      {0.0, 2.0, true, true}},
                     {"nlms_eps",
                      "",
                      Kind::kNumber,
                      "",
                      "regularizer of the step's normalization (default: 1e-6 x the average squared norm of "
                      "the examples, "
                      "estimated online)",
                      {0.0, std::numeric_limits<double>::infinity(), false, false}},
                 },
                 [](const LearnerContext& c) {
                   return std::make_unique<NlmsLearner>(NlmsOptions::from(c.options), c.bits);
                 }};
  row.traits.losses = {"squared"};
  row.traits.merge =
      "the ranks' mean weights (VW's plain average) and the average squared norm over every rank's "
      "examples; an approximation of one learner over all the data, exact with one rank";
  return row;
}

}  // namespace lepus

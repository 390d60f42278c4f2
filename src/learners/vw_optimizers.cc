// VW 9.11.2's --ftrl, --pistol and --coin, restated; see vw_optimizers.h for the papers and VW's driver.
// Every expression below keeps VW's f32 evaluation order (the build has no FMA): changing the bracketing changes
// the last bits, and with them -p.
#include "learners/vw_optimizers.h"
#include "learners/common/state.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <memory>

#include "lepus/errors.h"

namespace lepus {
namespace {

using common::number;

// State tags: a model's learner state starts with its mode's tag, so no learner reads another's state.
constexpr uint32_t kTagFtrl = 0x54465756u;    // "VWFT"
constexpr uint32_t kTagPistol = 0x49505756u;  // "VWPI"
constexpr uint32_t kTagCoin = 0x4f435756u;    // "VWCO"
constexpr uint32_t kStateVersion = 1;

uint32_t tag_of(VwOptimizer m) {
  return m == VwOptimizer::kFtrl ? kTagFtrl : m == VwOptimizer::kPistol ? kTagPistol : kTagCoin;
}

bool finite(float v) { return std::isfinite(v); }

}  // namespace

// ---- options ----

VwOptimizerOptions VwOptimizerOptions::defaults(VwOptimizer mode) {
  VwOptimizerOptions o;
  o.mode = mode;
  switch (mode) {  // VW 9.11.2's per-mode defaults (ftrl.cc); McMahan et al. 2013's section 3.1 for ftrl's
    case VwOptimizer::kFtrl: o.alpha = 0.5f, o.beta = 1.0f; break;
    case VwOptimizer::kPistol: o.alpha = 1.0f, o.beta = 0.5f; break;
    case VwOptimizer::kCoin: o.alpha = 4.0f, o.beta = 1.0f; break;
  }
  return o;
}

VwOptimizerOptions VwOptimizerOptions::from(VwOptimizer mode, const OptionValues& v) {
  VwOptimizerOptions o = defaults(mode);
  auto get = [&](const char* name, float& out) {
    if (v.has(name)) out = static_cast<float>(v.number(name));
  };
  get("ftrl_alpha", o.alpha);
  get("ftrl_beta", o.beta);
  get("l1", o.l1);
  get("l2", o.l2);
  get("learning_rate", o.learning_rate);
  get("power_t", o.power_t);
  get("initial_t", o.initial_t);
  if (!(o.alpha > 0.0f) || !std::isfinite(o.alpha))
    throw ConfigError("--ftrl_alpha must be a finite number > 0");
  if (!(o.beta >= 0.0f) || !std::isfinite(o.beta))
    throw ConfigError("--ftrl_beta must be a finite number >= 0");
  if (!(o.l1 >= 0.0f) || !(o.l2 >= 0.0f) || !std::isfinite(o.l1) || !std::isfinite(o.l2))
    throw ConfigError("--l1 and --l2 must be finite numbers >= 0");
  return o;
}

// ---- the learner ----

VwOptimizerLearner::VwOptimizerLearner(const VwOptimizerOptions& options, const Loss& loss, int bits,
                                       bool test_only)
    : opt_(options),
      loss_(loss),
      mask_((uint64_t{1} << bits) - 1),
      shift_(options.mode == VwOptimizer::kCoin ? 3 : 2),
      w_((size_t{1} << bits) << shift_),
      clip_(loss.initial_range(), test_only) {}

std::string_view VwOptimizerLearner::name() const {
  switch (opt_.mode) {
    case VwOptimizer::kFtrl: return "vw-ftrl";
    case VwOptimizer::kPistol: return "vw-pistol";
    case VwOptimizer::kCoin: break;
  }
  return "vw-coin";
}

size_t VwOptimizerLearner::fields() const {
  return opt_.mode == VwOptimizer::kFtrl ? 3 : opt_.mode == VwOptimizer::kPistol ? 4 : 6;
}

// VW's predict path: the initial prediction, then + XT x feature by feature.
float VwOptimizerLearner::score(const Example& x) const {
  float r = x.initial;
  for (const Feature& f : x.features) r = r + slot(f.index)[kXt] * f.value;
  return r;
}

// VW's finalize_prediction: NaN becomes 0, anything else is clipped to [lo, hi].
float VwOptimizerLearner::finalize(float raw) const {
  if (std::isnan(raw)) return 0.0f;
  return clip_.clip(raw);
}

float VwOptimizerLearner::finite_raw(float raw) {
  if (finite(raw)) [[likely]]
    return raw;
  ++safeguards_;
  return std::isnan(raw) ? 0.0f : std::copysign(FLT_MAX, raw);
}

float VwOptimizerLearner::step_of(float p, const Example& x) const {
  const float d1 = static_cast<float>(loss_.first_derivative(p, x.label, clip_.range()));
  return d1 * x.weight;
}

Prediction VwOptimizerLearner::predict(const Example& x) const {
  const float r = score(x);
  const float raw = finite(r) ? r : std::isnan(r) ? 0.0f : std::copysign(FLT_MAX, r);
  return Prediction{raw, finalize(r)};
}

// PiSTOL's learn-time prediction: writes MX and XT of every slot it reads, and leaves out the initial prediction.
float VwOptimizerLearner::pistol_score(const Example& x) {
  float r = 0.0f;
  for (const Feature& f : x.features) {
    float* s = slot(f.index);
    const float ax = std::fabs(f.value);
    if (!finite(ax)) [[unlikely]] {  // no state from a non-finite value
      ++safeguards_;
      r = r + s[kXt] * f.value;
      continue;
    }
    if (ax > s[kMx]) s[kMx] = ax;
    const float tmp = 1.0f / ((opt_.alpha * s[kMx]) * (s[kG2] + s[kMx]));
    const float w =
        (((std::sqrt(s[kG2]) * opt_.beta) * s[kZt]) * std::exp(((s[kZt] * s[kZt]) / 2.0f) * tmp)) * tmp;
    if (finite(w)) [[likely]] {
      s[kXt] = w;
    } else {  // expf overflowed (or 0 * inf): the sum gets VW's value, the slot a finite one
      ++safeguards_;
      s[kXt] = std::isnan(w) ? 0.0f : std::copysign(FLT_MAX, w);
    }
    r = r + w * f.value;
  }
  return r;
}

// Coin betting's learn-time prediction: Σ bet x over VW's avg, with m = max(MX, |x|) (MX itself unchanged here).
// Updates N and W and returns avg through `avg`. The initial prediction is left out, as in VW.
float VwOptimizerLearner::coin_score(const Example& x, float& avg) {
  float r = 0.0f, nsq = 0.0f;
  for (const Feature& f : x.features) {
    const float* s = slot(f.index);
    const float ax = std::fabs(f.value);
    if (!finite(ax)) [[unlikely]] {  // would make N NaN for good
      ++safeguards_;
      continue;
    }
    const float m = ax > s[kMx] ? ax : s[kMx];
    float bet = 0.0f;
    if (s[kMg] * m > 0.0f) bet = ((opt_.alpha + s[kWe]) / ((s[kMg] * m) * ((s[kMg] * m) + s[kG2]))) * s[kZt];
    r = r + bet * f.value;
    if (m > 0.0f) {
      const float xn = f.value / m;
      nsq = nsq + xn * xn;
    }
  }
  norm_sum_ += static_cast<double>(x.weight) * static_cast<double>(nsq);
  weight_sum_ += static_cast<double>(x.weight);
  avg = static_cast<float>((norm_sum_ + 1e-6) / weight_sum_);
  return r / avg;
}

bool VwOptimizerLearner::ftrl_step(float* s, float x, float u, const VwOptimizerOptions& o) {
  const float g = u * x;
  const float n = s[kG2] + g * g;
  const float sqrt_n = std::sqrt(n);
  const float sigma = (sqrt_n - std::sqrt(s[kG2])) / o.alpha;
  const float z = s[kZt] + (g - sigma * s[kXt]);
  const float flag = z <= 0.0f ? -1.0f : 1.0f;  // VW's sign(): -1 at 0, where the weight is 0 anyway
  const float a = z * flag;
  float w = 0.0f;
  if (!(a <= o.l1)) {
    const float step = 1.0f / (o.l2 + (o.beta + sqrt_n) / o.alpha);
    w = (step * flag) * (o.l1 - a);
  }
  if (!finite(n) || !finite(z) || !finite(w)) [[unlikely]]
    return false;
  s[kXt] = w;
  s[kZt] = z;
  s[kG2] = n;
  return true;
}

bool VwOptimizerLearner::pistol_step(float* s, float x, float u) {
  const float g = u * x;
  const float z = s[kZt] + (-g);
  const float sum = s[kG2] + std::fabs(g);
  if (!finite(z) || !finite(sum)) [[unlikely]]
    return false;
  s[kZt] = z;
  s[kG2] = sum;
  return true;
}

bool VwOptimizerLearner::coin_step(float* s, float x, float u, float avg, const VwOptimizerOptions& o) {
  const float g = u * x;
  const float ax = std::fabs(x);
  const float mx = ax > s[kMx] ? ax : s[kMx];
  const float au = std::fabs(u);
  const float mg = au > s[kMg] ? (au > o.beta ? au : o.beta) : s[kMg];
  // The bet again, with the new MX and MG and the old wealth, sums and ZT.
  const float bet =
      mg * mx > 0.0f ? ((o.alpha + s[kWe]) / ((mg * mx) * ((mg * mx) + s[kG2]))) * s[kZt] : 0.0f;
  const float z = s[kZt] + (-g);
  const float sum = s[kG2] + std::fabs(g);
  const float wealth = s[kWe] + ((-g) * bet);
  const float w = bet / avg;
  if (!finite(mx) || !finite(mg) || !finite(z) || !finite(sum) || !finite(wealth) || !finite(w)) [[unlikely]]
    return false;
  s[kXt] = w;
  s[kZt] = z;
  s[kG2] = sum;
  s[kMx] = mx;
  s[kWe] = wealth;
  s[kMg] = mg;
  return true;
}

Prediction VwOptimizerLearner::learn(const Example& x) {
  if (!x.labeled) return predict(x);
  if (opt_.mode == VwOptimizer::kPistol) {  // VW: pistol returns its prediction from learn
    clip_.see(x);
    if (!(x.weight > 0.0f)) return predict(x);
    const float r = pistol_score(x);
    const float p = finalize(r);
    const float u = step_of(p, x);
    for (const Feature& f : x.features)
      if (!pistol_step(slot(f.index), f.value, u)) [[unlikely]]
        ++safeguards_;
    return Prediction{finite_raw(r), p};
  }
  // ftrl and coin: VW predicts first (the printed prediction, under the range before this label), then learns.
  const Prediction shown = predict(x);
  clip_.see(x);
  if (!(x.weight > 0.0f)) return shown;
  float r = 0.0f;
  if (opt_.mode == VwOptimizer::kFtrl) {
    r = score(x);
    const float u = step_of(finalize(r), x);
    for (const Feature& f : x.features)
      if (!ftrl_step(slot(f.index), f.value, u, opt_)) [[unlikely]]
        ++safeguards_;
  } else {
    float avg = 1.0f;
    r = coin_score(x, avg);
    const float u = step_of(finalize(r), x);
    for (const Feature& f : x.features)
      if (!coin_step(slot(f.index), f.value, u, avg, opt_)) [[unlikely]]
        ++safeguards_;
  }
  Prediction out{opt_.mode == VwOptimizer::kFtrl ? shown.raw : finite_raw(r), shown.value};
  out.scored = finalize(r);  // the loss is VW's at the prediction learned from
  return out;
}

std::vector<std::string> VwOptimizerLearner::describe() const {
  std::vector<std::string> lines;
  const std::string unused =
      opt_.mode == VwOptimizer::kFtrl ? "" : " (unused by --pistol and --coin, as in VW)";
  if (opt_.l1 > 0.0f) lines.push_back("using l1 regularization = " + number(opt_.l1) + unused);
  if (opt_.l2 > 0.0f) lines.push_back("using l2 regularization = " + number(opt_.l2) + unused);
  lines.push_back("Enabling FTRL based optimization");
  lines.push_back(std::string("Algorithm used: ") + (opt_.mode == VwOptimizer::kFtrl     ? "Proximal-FTRL"
                                                     : opt_.mode == VwOptimizer::kPistol ? "PiSTOL"
                                                                                         : "Coin Betting"));
  lines.push_back("ftrl_alpha = " + number(opt_.alpha));
  lines.push_back("ftrl_beta = " + number(opt_.beta));
  // VW prints these for its optimizers too; they have no effect on them.
  lines.push_back("learning rate = " + number(opt_.learning_rate));
  lines.push_back("initial_t = " + number(opt_.initial_t));
  lines.push_back("power_t = " + number(opt_.power_t));
  return lines;
}

std::optional<uint64_t> VwOptimizerLearner::nonzero_weights() const {
  uint64_t n = 0;
  for (uint64_t i = 0; i <= mask_; ++i) n += slot(i)[kXt] != 0.0f;
  return n;
}

// Tag, version, hyper-parameters, range, coin's sums, then the slots with any nonzero field (3, 4 or 6 floats).
template <class Self, class V>
void VwOptimizerLearner::state(Self& self, V& v) {
  v.tag(tag_of(self.opt_.mode));
  v.tag(kStateVersion);
  v.number("ftrl_alpha", self.opt_.alpha, common::kPositive);
  v.number("ftrl_beta", self.opt_.beta, common::kNonNegative);
  v.number("l1", self.opt_.l1, common::kNonNegative);
  v.number("l2", self.opt_.l2, common::kNonNegative);
  v.clip(self.clip_);
  v.number("normalized_sum_norm_x", self.norm_sum_, common::kNonNegative);
  v.number("total_weight", self.weight_sum_, common::kNonNegative);
  const size_t n = self.fields();
  v.strided(
      self.w_, static_cast<unsigned>(self.shift_), n, [](const float*) { return true; },
      [n](std::ostream& out, size_t, const float* s) {
        out << s[0];
        for (size_t k = 1; k < n; ++k) out << " " << s[k];
      });
}

void VwOptimizerLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void VwOptimizerLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void VwOptimizerLearner::load(ModelReader& in) { common::load_state(*this, in); }

// ---- registry rows ----

namespace {

using Kind = OptionSpec::Kind;
constexpr double kInf = std::numeric_limits<double>::infinity();

LearnerRow vw_optimizer_row(VwOptimizer mode, const std::string& name, const std::string& flag,
                            const std::string& help) {
  const VwOptimizerOptions d = VwOptimizerOptions::defaults(mode);
  std::vector<OptionSpec> options = {
      {flag, "", Kind::kFlag, "", "VW's flag for --learner " + name + " (either selects it)", {}, {}},
      {"ftrl_alpha",
       "",
       Kind::kNumber,
       number(d.alpha),
       "alpha, VW's --ftrl_alpha (defaults: vw-ftrl 0.5, vw-pistol 1, vw-coin 4)",
       {0.0, kInf, true, false},
       {}},
      {"ftrl_beta",
       "",
       Kind::kNumber,
       number(d.beta),
       "beta, VW's --ftrl_beta (defaults: vw-ftrl 1, vw-pistol 0.5, vw-coin 1)",
       {0.0, kInf, false, false},
       {}},
      {"l1",
       "",
       Kind::kNumber,
       "0",
       "L1 regularization (vw-ftrl's lambda1; ignored by vw-pistol and vw-coin)",
       {0.0, kInf, false, false},
       {}},
      {"l2",
       "",
       Kind::kNumber,
       "0",
       "L2 regularization (vw-ftrl's lambda2; ignored by vw-pistol and vw-coin)",
       {0.0, kInf, false, false},
       {}},
      {"learning_rate", "l", Kind::kNumber, "0.5", "accepted and printed, no effect (as in VW)", {}, {}},
      {"power_t", "", Kind::kNumber, "0.5", "accepted and printed, no effect (as in VW)", {}, {}},
      {"initial_t", "", Kind::kNumber, "0", "accepted and printed, no effect (as in VW)", {}, {}},
      {"decay_learning_rate", "", Kind::kNumber, "1", "accepted and printed, no effect (as in VW)", {}, {}},
  };
  LearnerTraits traits;
  traits.vw_flag = flag;
  return LearnerRow{name, help, std::move(options),
                    [mode](const LearnerContext& c) {
                      return std::make_unique<VwOptimizerLearner>(VwOptimizerOptions::from(mode, c.options),
                                                                  c.loss, c.bits, c.test_only);
                    },
                    std::move(traits)};
}

}  // namespace

LearnerRow vw_ftrl_row() {
  return vw_optimizer_row(
      VwOptimizer::kFtrl, "vw-ftrl", "ftrl",
      "VW's --ftrl with VW's results to the last digit: FTRL-Proximal per feature, the usual "
      "choice for sparse click-style data, with --l1 for sparse weights (McMahan et al. 2013)");
}

LearnerRow vw_pistol_row() {
  return vw_optimizer_row(VwOptimizer::kPistol, "vw-pistol", "pistol",
                          "VW's --pistol with VW's results to the last digit: VW's per-feature PiSTOL, no "
                          "learning rate (after Orabona 2014)");
}

LearnerRow vw_coin_row() {
  return vw_optimizer_row(
      VwOptimizer::kCoin, "vw-coin", "coin",
      "VW's --coin with VW's results to the last digit: VW's per-feature coin betting, no "
      "learning rate (after Orabona & Tommasi 2017, COCOB)");
}

}  // namespace lepus

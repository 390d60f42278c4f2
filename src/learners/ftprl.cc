// The FTPRL family's options, registry rows and shared per-example machinery; see ftprl.h for the algorithms.
#include "learners/ftprl.h"
#include "learners/common/merge.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "learners/ftprl_internal.h"
#include "lepus/errors.h"
#include "lepus/hashing.h"
#include "lepus/options.h"

namespace lepus {
namespace {

// Radii and scales outside this range gain nothing and would push products of extreme gradients past double.
constexpr double kMinParam = 1e-30;
constexpr double kMaxParam = 1e30;

double parse_positive(const std::string& text, const std::string& what) {
  const double v = read_number(text).value_or(0.0);
  if (!(v >= kMinParam && v <= kMaxParam))
    throw ConfigError(what + " must be a number in [1e-30, 1e30], got '" + text + "'");
  return v;
}

}  // namespace

FtprlScaleSpec::FtprlScaleSpec() { by_group_.fill(1.0); }

FtprlScaleSpec FtprlScaleSpec::parse(const std::string& text) {
  FtprlScaleSpec spec;
  std::array<bool, 256> set{};
  bool other_set = false;
  // The `*` entry is the default of every group not listed, wherever it stands in the list.
  std::vector<std::pair<int, double>> groups;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) {
      if (text.empty()) break;
      throw ConfigError("--ftprl_scale '" + text + "': empty entry");
    }
    const size_t colon = entry.rfind(':');
    if (colon == std::string::npos)
      throw ConfigError("--ftprl_scale entry '" + entry + "' is not NAMESPACE:SCALE");
    const std::string key = entry.substr(0, colon);
    const double a =
        parse_positive(entry.substr(colon + 1), "--ftprl_scale entry '" + entry + "': the scale");
    if (key == "*") {
      if (other_set) throw ConfigError("--ftprl_scale lists '*' twice");
      other_set = true;
      spec.other_ = a;
    } else if (key == "constant") {
      groups.emplace_back(kConstantNamespace, a);
    } else if (key.size() == 1) {
      groups.emplace_back(static_cast<unsigned char>(key[0]), a);
    } else {
      throw ConfigError("--ftprl_scale key '" + key +
                        "': a namespace is named by its first character (as in -q), or use constant or *");
    }
  }
  spec.by_group_.fill(spec.other_);
  for (const auto& [g, a] : groups) {
    if (set[g]) throw ConfigError("--ftprl_scale lists a namespace twice");
    set[g] = true;
    spec.by_group_[g] = a;
  }
  return spec;
}

double FtprlScaleSpec::of_feature(const Example& x, size_t i) const {
  for (const FeatureGroup& g : x.groups)
    if (i >= g.begin && i < g.end) return by_group_[g.ns];
  return other_;
}

FtprlOptions FtprlOptions::from(const OptionValues& v) {
  FtprlOptions o;
  // Ranges and choices are declared once in the rows' specs (every row has --ftprl_radius; ftprl-const --ftprl_set).
  check_option_values(ftprl_const_row().options, v);
  o.data_radius = !v.has("ftprl_radius");
  if (!o.data_radius) o.radius = v.number("ftprl_radius");
  if (v.has("ftprl_set")) o.set = v.text("ftprl_set") == "box" ? Set::kBox : Set::kBall;
  if (v.has("ftprl_scale")) {
    o.scale_text = v.text("ftprl_scale");
    o.scale = FtprlScaleSpec::parse(o.scale_text);
  }
  return o;
}

// ---- shared machinery ----

FtprlBase::FtprlBase(double radius, const Loss& loss, int bits, bool test_only)
    : loss_(loss),
      bits_(bits),
      mask_((uint64_t{1} << bits) - 1),
      radius_(radius),
      clip_(loss.initial_range(), test_only),
      builder_(bits) {}

double FtprlBase::loss_derivative(const Example& x, float p) {
  if (!common::teaches(x)) return 0.0;
  const double d = loss_.first_derivative(p, x.label, label_range()) * static_cast<double>(x.weight);
  if (!std::isfinite(d)) {
    ++safeguards_;
    return 0.0;
  }
  return d;
}

Prediction FtprlBase::learn(const Example& x) {
  clip_.see(x);
  const Prediction p = finish(score(x));
  update(x, loss_derivative(x, p.raw));
  return p;
}

void FtprlBase::update(const Example& x, double dloss) {
  if (dloss == 0.0) return;
  if (!std::isfinite(dloss)) {
    ++safeguards_;
    return;
  }
  // The ball's and the box's sums of squares depend on the order in the last bit; an example that needed
  // merging is updated in slot order.
  const SparseVector& v = builder_.build(x, VectorBuilder::Order::kSlotWhenMerged);
  safeguards_ += v.dropped;  // non-finite feature values (an overflowing interaction), treated as absent
  apply_round(x, v, dloss);
}

namespace ftprl {

double checked(double v, const ModelReader& in, const char* what, bool positive) {
  if (!std::isfinite(v) || (positive && !(v > 0.0)))
    throw ModelFormatError(in.source() + ": ftprl " + what + " is not a valid number");
  return v;
}

}  // namespace ftprl

// ---- registry rows ----

using Kind = OptionSpec::Kind;

// One spec shared by the family's rows (same name, default and help).
OptionSpec ftprl_radius_spec() {
  return OptionSpec{
      "ftprl_radius",
      "",
      Kind::kNumber,
      "",
      "bound on the weights: each weight (ftprl-diag, ftprl-const box), the weight vector's length "
      "(ftprl-const ball, ftprl-full), or its length scaled by --ftprl_scale (ftprl-scale); given: "
      "the published fixed-radius algorithm; default: estimated from the data and saved in the "
      "model (ftprl-diag 4 / (the largest |x_i| of each feature x the largest ||x|| so divided), "
      "ftprl-full 12, the others 32 / the largest ||x||), so raw data learns as scaled",
      {1e-30, 1e30, false, false}};
}

LearnerRow ftprl_diag_row() {
  return LearnerRow{
      "ftprl-diag",
      "no learning rate, a step size per feature, weights bounded by --ftprl_radius: for sparse data where "
      "rare features need large steps (McMahan & Streeter 2010, FTPRL-Diag)",
      {ftprl_radius_spec()},
      [](const LearnerContext& c) {
        return std::make_unique<FtprlDiagLearner>(FtprlOptions::from(c.options), c.loss, c.bits, c.test_only);
      },
      common::weighted_average_traits()};
}

// ftprl-const's and ftprl-scale's merge (--distributed): one step size for every feature, so no per-feature weight.
static LearnerTraits mean_point_traits() {
  LearnerTraits t;
  t.merge =
      "the ranks' mean point u and mean sum of squared gradients G (VW's plain average), then projected as "
      "ever; an approximation of one learner over all the data, exact with one rank";
  return t;
}

LearnerRow ftprl_const_row() {
  return LearnerRow{
      "ftprl-const",
      "no learning rate, one adaptive step size for all features, weights in a ball or box: for "
      "dense data on one scale (McMahan & Streeter 2010, FTPRL, Corollary 1)",
      {ftprl_radius_spec(),
       {"ftprl_set",
        "",
        Kind::kText,
        "ball",
        "ftprl-const's weight set: ball (the weight vector's length at most R) or box (each "
        "weight at most R)",
        {},
        {"ball", "box"}}},
      [](const LearnerContext& c) -> std::unique_ptr<Learner> {
        const FtprlOptions o = FtprlOptions::from(c.options);
        if (o.set == FtprlOptions::Set::kBox)
          return std::make_unique<FtprlConstBoxLearner>(o, c.loss, c.bits, c.test_only);
        return std::make_unique<FtprlConstBallLearner>(o, c.loss, c.bits, c.test_only);
      },
      mean_point_traits()};
}

LearnerRow ftprl_scale_row() {
  return LearnerRow{
      "ftprl-scale",
      "ftprl-const with an expected weight size per namespace (--ftprl_scale): when you know which "
      "namespaces "
      "carry large weights (McMahan & Streeter 2010, FTPRL-Scale)",
      {ftprl_radius_spec(),
       {"ftprl_scale", "", Kind::kText, "*:1",
        "expected weight size per namespace: NS:A,... with NS one character (as in -q), constant (the bias) "
        "or * (every other feature, interactions too)"}},
      [](const LearnerContext& c) {
        return std::make_unique<FtprlScaleLearner>(FtprlOptions::from(c.options), c.loss, c.bits,
                                                   c.test_only);
      },
      mean_point_traits()};
}

}  // namespace lepus

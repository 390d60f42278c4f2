// scinol-coord: Algorithm 1 of W. Kotłowski, "Scale-Invariant Unconstrained Online Learning" (ALT 2017,
// Section 3.2), on the hashed table; see scinol.h for the problem, the update (eq. (5)) and the mapping.
#include "learners/scinol.h"
#include "learners/common/merge.h"
#include "learners/common/state.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>

#include "lepus/errors.h"

namespace lepus {
namespace {

// Slots are touched in hash order, i.e. at random: fetch the slot this many coordinates ahead while the
// current one is computed (as in gd.cc; the exp() per coordinate leaves time for the miss to resolve).
constexpr size_t kPrefetch = 12;

constexpr double kAlphaMin = 9.0 / 8.0;  // the paper needs α > 9/8 (Lemma 3.3)

const char* dimension_name(ScinolDimension d) {
  switch (d) {
    case ScinolDimension::kBits: return "bits";
    case ScinolDimension::kSeen: return "seen";
    case ScinolDimension::kClock: return "clock";
  }
  return "?";
}

using common::number;

}  // namespace

ScinolOptions ScinolOptions::from(const OptionValues& v) {
  ScinolOptions o;
  check_option_values(scinol_row().options, v);  // ranges and choices, declared once in the row
  if (v.has("scinol_alpha")) o.alpha = v.number("scinol_alpha");
  if (v.has("scinol_L")) o.lipschitz = v.number("scinol_L");
  if (v.has("scinol_d")) {
    const std::string& d = v.text("scinol_d");
    o.dimension = d == "bits"    ? ScinolDimension::kBits
                  : d == "clock" ? ScinolDimension::kClock
                                 : ScinolDimension::kSeen;
  }
  return o;
}

ScinolLearner::ScinolLearner(const ScinolOptions& options, const Loss& loss, int bits, bool test_only)
    : opt_(options),
      loss_(loss),
      bits_(bits),
      mask_((uint64_t{1} << bits) - 1),
      clip_(loss.initial_range(), test_only),
      builder_(bits) {
  allocate();
}

void ScinolLearner::allocate() {
  block_ = ZeroedTable<double>((size_t{1} << bits_) * stride());
  table_ = block_.data();
}

double ScinolLearner::dimension() const {
  if (opt_.dimension == ScinolDimension::kSeen) return std::max(seen_, 1.0);
  return std::ldexp(1.0, bits_);
}

// The example's distinct slots with their summed values (core/coords.h: colliding features are one
// coordinate, a coordinate with x = 0 is absent so its state and clock do not move), in first-appearance order,
// so the sums below add up in the example's order.
const ScinolLearner::Coord* ScinolLearner::gather(const Example& ex, size_t& n_out) const {
  const SparseVector& v = builder_.build(ex);
  n_out = v.size();
  return v.data;
}

namespace {

// One coordinate's term exp(e) h x / s2 of the sum (eq. (5) times x), from the old h, the new
// s2 = s2_old + x^2 and x: the exponent uses the paper's x^2 correction. Shared by every path so that
// they add up bit for bit alike.
inline double coordinate_term(double h, double s2, double x, double inv_2alpha, uint64_t& capped) {
  const double r = 1.0 / s2;
  double e = (h * h + x * x) * r * inv_2alpha;
  if (e > ScinolLearner::kMaxExponent) [[unlikely]] {
    e = ScinolLearner::kMaxExponent;
    ++capped;
  }
  return std::exp(e) * (h * x * r);
}

// The sum over distinct coordinates of their terms (divided by n_i with the per-slot clock); the common
// factor 1/(α t d) is applied by the caller because d ("seen") is known only after the loop. With kLearn the
// new s2 (and n) are stored; otherwise nothing is written (predict-only rounds use temporaries).
// `fresh` counts slots with s2 = 0 before this round.
template <ScinolDimension kDim, bool kLearn>
double sum_terms(double* const table, const ScinolCoord* c, size_t n, double alpha, uint64_t& fresh,
                 uint64_t& caps) {
  constexpr size_t kStride = kDim == ScinolDimension::kClock ? 4 : 2;
  const double inv_2alpha = 0.5 / alpha;
  double sum = 0.0;
  uint64_t capped = 0, news = 0;
  for (size_t k = 0; k < n; ++k) {
    if (k + kPrefetch < n) __builtin_prefetch(table + c[k + kPrefetch].slot * kStride, kLearn ? 1 : 0);
    double* const s = table + c[k].slot * kStride;
    const double x = c[k].x;
    const double s2 = s[1] + x * x;  // before predicting
    double term = coordinate_term(s[0], s2, x, inv_2alpha, capped);
    if constexpr (kDim == ScinolDimension::kSeen) news += s[1] == 0.0;
    if constexpr (kDim == ScinolDimension::kClock) {
      const double clock = s[2] + 1.0;
      term /= clock;
      if constexpr (kLearn) s[2] = clock;
    }
    if constexpr (kLearn) s[1] = s2;
    sum += term;
  }
  caps += capped;
  fresh = news;
  return sum;
}

// The learning round's fast path: the example's features straight from its list, no gathering. A slot's s2 is
// stored negated (s2 > 0 once touched) until the h pass, which marks it as taken in this round; meeting a
// marked slot means the example holds that slot twice (a collision or a repeated feature), which must be ONE
// coordinate: the slots are restored exactly from old_s2 and the caller takes the gathering path.
// Returns false then, true otherwise.
template <ScinolDimension kDim>
bool sum_terms_direct(double* const table, uint64_t mask, const Feature* fs, size_t n, double alpha,
                      double* old_s2, double& sum_out, uint64_t& fresh, uint64_t& caps) {
  constexpr size_t kStride = kDim == ScinolDimension::kClock ? 4 : 2;
  const double inv_2alpha = 0.5 / alpha;
  double sum = 0.0;
  uint64_t capped = 0, news = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetch < n) __builtin_prefetch(table + (fs[i + kPrefetch].index & mask) * kStride, 1);
    const float v = fs[i].value;
    if (v == 0.0f) [[unlikely]]
      continue;  // x = 0: the coordinate is absent
    double* const s = table + (fs[i].index & mask) * kStride;
    const double x = v;
    const double s2_old = s[1];
    if (s2_old < 0.0) [[unlikely]] {  // the slot was taken earlier in this example: undo, and gather instead
      for (size_t j = 0; j < i; ++j) {
        if (fs[j].value == 0.0f) continue;
        double* const u = table + (fs[j].index & mask) * kStride;
        u[1] = old_s2[j];
        if constexpr (kDim == ScinolDimension::kClock) u[2] -= 1.0;
      }
      return false;
    }
    old_s2[i] = s2_old;
    const double s2 = s2_old + x * x;  // before predicting
    double term = coordinate_term(s[0], s2, x, inv_2alpha, capped);
    if constexpr (kDim == ScinolDimension::kSeen) news += s2_old == 0.0;
    if constexpr (kDim == ScinolDimension::kClock) {
      const double clock = s[2] + 1.0;
      term /= clock;
      s[2] = clock;
    }
    s[1] = -s2;
    sum += term;
  }
  caps += capped;
  fresh = news;
  sum_out = sum;
  return true;
}

// The h pass of the fast path: h -= g x (after the label), and s2 un-negated.
template <size_t kStride>
void update_direct(double* const table, uint64_t mask, const Feature* fs, size_t n, double g) {
  for (size_t i = 0; i < n; ++i) {
    const float v = fs[i].value;
    if (v == 0.0f) [[unlikely]]
      continue;
    double* const s = table + (fs[i].index & mask) * kStride;
    s[0] -= g * static_cast<double>(v);
    s[1] = -s[1];
  }
}

}  // namespace

// The common factor 1/(α t d) of every weight (1/(α d) with the per-slot clock, whose t is inside the terms).
double ScinolLearner::scale(uint64_t fresh) const {
  switch (opt_.dimension) {
    case ScinolDimension::kBits: return 1.0 / (opt_.alpha * (t_ + 1.0) * std::ldexp(1.0, bits_));
    case ScinolDimension::kSeen:
      return 1.0 / (opt_.alpha * (t_ + 1.0) * std::max(seen_ + static_cast<double>(fresh), 1.0));
    case ScinolDimension::kClock: return 1.0 / (opt_.alpha * std::ldexp(1.0, bits_));
  }
  return 0.0;
}

// ŷ without the base prediction over gathered coordinates. With kLearn the slots' s2 (and n) are written; the
// caller then advances t and the seen count.
template <bool kLearn>
double ScinolLearner::score(const Coord* c, size_t n, uint64_t& fresh) const {
  const double a = opt_.alpha;
  double sum = 0.0;
  switch (opt_.dimension) {
    case ScinolDimension::kBits:
      sum = sum_terms<ScinolDimension::kBits, kLearn>(table_, c, n, a, fresh, caps_);
      break;
    case ScinolDimension::kSeen:
      sum = sum_terms<ScinolDimension::kSeen, kLearn>(table_, c, n, a, fresh, caps_);
      break;
    case ScinolDimension::kClock:
      sum = sum_terms<ScinolDimension::kClock, kLearn>(table_, c, n, a, fresh, caps_);
      break;
  }
  return sum * scale(fresh);
}

float ScinolLearner::clipped(double score) const {
  const float raw =
      static_cast<float>(std::clamp(score, -static_cast<double>(FLT_MAX), static_cast<double>(FLT_MAX)));
  return clip_.clip(raw);
}

Prediction ScinolLearner::finish(double score) const {
  // A prediction beyond float range is reported as ±FLT_MAX (counted: outside what a float output can say).
  if (std::fabs(score) > FLT_MAX) ++caps_;
  const float raw =
      static_cast<float>(std::clamp(score, -static_cast<double>(FLT_MAX), static_cast<double>(FLT_MAX)));
  return clip_.of(raw);
}

double ScinolLearner::predict_score(const Example& x) const {
  size_t n = 0;
  uint64_t fresh = 0;
  const Coord* c = gather(x, n);
  return x.initial + score<false>(c, n, fresh);
}

Prediction ScinolLearner::predict(const Example& x) const { return finish(predict_score(x)); }

// One learning round, in Algorithm 1's order: t += 1 and s2 += x^2, predict, g from the loss (or the
// given linear gradient), scaled by the importance weight, clipped to [-L, L] and divided by L, then
// h -= g x.
double ScinolLearner::round(const Example& x, bool use_loss, double g_linear) {
  const Feature* fs = x.features.data();
  const size_t n = x.features.size();
  if (old_s2_.size() < n) old_s2_.resize(n);
  double sum = 0.0;
  uint64_t fresh = 0;
  bool direct = false;
  switch (opt_.dimension) {
    case ScinolDimension::kBits:
      direct = sum_terms_direct<ScinolDimension::kBits>(table_, mask_, fs, n, opt_.alpha, old_s2_.data(), sum,
                                                        fresh, caps_);
      break;
    case ScinolDimension::kSeen:
      direct = sum_terms_direct<ScinolDimension::kSeen>(table_, mask_, fs, n, opt_.alpha, old_s2_.data(), sum,
                                                        fresh, caps_);
      break;
    case ScinolDimension::kClock:
      direct = sum_terms_direct<ScinolDimension::kClock>(table_, mask_, fs, n, opt_.alpha, old_s2_.data(),
                                                         sum, fresh, caps_);
      break;
  }
  size_t m = 0;
  const Coord* c = nullptr;
  double yhat;
  if (direct) {
    yhat = x.initial + sum * scale(fresh);
  } else {
    c = gather(x, m);
    yhat = x.initial + score<true>(c, m, fresh);
  }
  t_ += 1.0;
  seen_ += static_cast<double>(fresh);
  double g = use_loss ? loss_.first_derivative(clipped(yhat), x.label, clip_.range()) : g_linear;
  g = std::clamp(g * static_cast<double>(x.weight), -opt_.lipschitz, opt_.lipschitz) / opt_.lipschitz;
  if (std::isnan(g)) [[unlikely]] {
    g = 0.0;
    ++caps_;
  }
  if (direct) {
    if (stride() == 4) {
      update_direct<4>(table_, mask_, fs, n, g);
    } else {
      update_direct<2>(table_, mask_, fs, n, g);
    }
  } else if (g != 0.0) {
    const size_t st = stride();
    for (size_t k = 0; k < m; ++k) table_[c[k].slot * st] -= g * c[k].x;  // after the label
  }
  return yhat;
}

double ScinolLearner::learn_score(const Example& x) {
  if (!x.labeled) return predict_score(x);  // unlabelled: predict only, no state change
  clip_.see(x);
  // An importance weight of 0 (or less) asks for no learning: the round is not played at all.
  if (!(x.weight > 0.0f)) return predict_score(x);
  return round(x, true, 0.0);
}

Prediction ScinolLearner::learn(const Example& x) { return finish(learn_score(x)); }

double ScinolLearner::learn_gradient(const Example& x, double g) {
  if (!(x.weight > 0.0f)) return predict_score(x);
  return round(x, false, g);
}

ScinolLearner::SlotState ScinolLearner::slot(uint64_t i) const {
  const double* s = table_ + (i & mask_) * stride();
  return SlotState{s[0], s[1], opt_.dimension == ScinolDimension::kClock ? s[2] : 0.0};
}

double ScinolLearner::eta(uint64_t i, double x) const {
  const SlotState s = slot(i);
  const double s2 = s.s2 + x * x;
  if (!(s2 > 0.0)) return 0.0;  // a slot never non-zero: w = 0 (Algorithm 1's s2 = 0 branch)
  const bool present = x != 0.0;
  double clock = t_ + 1.0;
  double d = std::ldexp(1.0, bits_);
  if (opt_.dimension == ScinolDimension::kSeen) d = seen_ + (s.s2 == 0.0 && present ? 1.0 : 0.0);
  if (opt_.dimension == ScinolDimension::kClock) clock = s.n + (present ? 1.0 : 0.0);
  const double e = std::min((s.h * s.h + x * x) / (2.0 * opt_.alpha * s2), kMaxExponent);
  return std::exp(e) / (opt_.alpha * clock * d);
}

double ScinolLearner::weight(uint64_t i, double x) const {
  const SlotState s = slot(i);
  const double s2 = s.s2 + x * x;
  if (!(s2 > 0.0)) return 0.0;
  // Indicative only: with a tiny feature scale h / s2 is huge, and the product can exceed double range.
  return std::clamp(eta(i, x) * (s.h / s2), -DBL_MAX, DBL_MAX);
}

std::vector<std::string> ScinolLearner::describe() const {
  std::string d = dimension_name(opt_.dimension);
  if (opt_.dimension != ScinolDimension::kSeen) d += " (d = " + number(std::ldexp(1.0, bits_)) + ")";
  return {"scinol_alpha = " + number(opt_.alpha), "scinol_L = " + number(opt_.lipschitz), "scinol_d = " + d};
}

namespace {
constexpr uint32_t kStateVersion = 1;
}

// α, L, the d mode (fixed: it sets the table's stride), t, the seen slots, the label range, then the table:
// its size and stride, and per slot with h or s2 nonzero its stride() doubles (h, s2[, n, unused]); readable:
// the indicative weight at round t+1 with x = 0 first (w depends on x).
template <class Self, class V>
void ScinolLearner::state(Self& self, V& v) {
  v.tag(kStateVersion);
  v.number("scinol_alpha", self.opt_.alpha, common::above(kAlphaMin));
  v.number("scinol_L", self.opt_.lipschitz, common::kPositive);
  const bool clock =
      v.choice("scinol_d", self.opt_.dimension, {"bits", "seen", "clock"}) == ScinolDimension::kClock;
  const uint32_t st = clock ? 4 : 2;  // the stride of the state's mode (the model's mode wins)
  v.number("t", self.t_, common::kCount);
  v.number("seen_slots", self.seen_, common::Bounds{{0.0, static_cast<double>(self.mask_ + 1)}, true});
  v.clip(self.clip_);
  v.fixed("table size", uint64_t{self.mask_ + 1});
  v.fixed("stride", st);
  v.records(
      self.block_, self.mask_ + 1, clock ? 2 : 1, st,
      [clock](const double* s) { return s[1] >= 0.0 && (!clock || s[2] >= 0.0); },
      [&self, clock](std::ostream& out, size_t i, const double* s) {
        out << self.weight(i, 0.0) << " " << s[0] << " " << s[1];
        if (clock) out << " " << s[2];
      },
      /*kept=*/2);
}

void ScinolLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void ScinolLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void ScinolLearner::load(ModelReader& in) {
  common::load_state(*this, in);
  table_ = block_.data();
}

// --distributed: VW's weighted average of each slot (h, s2[, n]) with weights s2 (common::weighted_average), so the
// exponent (h^2 + x^2) / (2 α s2) of the merged slot is at most the largest rank's; t is the ranks' mean (one
// learner's worth, as h and s2 are: summed, the 1 / t of the bet halves every weight with two ranks, a9a test loss
// 0.399 -> 0.483) and d counts the slots any rank has seen. Summing h and s2 instead (the statistics one learner over all the data would
// hold, at gradients taken at different points) was measured and dropped: the ranks' h point the same way and add
// while s2 only adds, h^2 / s2 grows with the number of ranks and the bet with its exponential (a9a test loss 0.370
// -> 10.5 with two ranks).
void ScinolLearner::merge(Collective& ranks) {
  if (ranks.size() == 1) return;
  const size_t st = stride();
  common::weighted_average(ranks, table_, mask_ + 1, st, [](const double* r) { return r[1]; });
  common::average_rounds(ranks, t_);
  common::merge_range(ranks, clip_);
  seen_ = 0.0;
  for (uint64_t i = 0; i <= mask_; ++i) seen_ += table_[i * st + 1] > 0.0;
}

OptionSpec scinol_alpha_option() {
  return {"scinol_alpha",
          "",
          OptionSpec::Kind::kNumber,
          "1.5",
          "how cautiously the scale-invariant learners bet at first (larger is more cautious)",
          {9.0 / 8.0, std::numeric_limits<double>::infinity(), true, false}};
}

OptionSpec scinol_lipschitz_option() {
  return {"scinol_L",
          "",
          OptionSpec::Kind::kNumber,
          "1",
          "bound on importance times the loss's slope: larger values are clipped to it (1 fits the logistic, "
          "hinge and quantile losses)",
          {0.0, std::numeric_limits<double>::infinity(), true, false}};
}

LearnerRow scinol_row() {
  using Kind = OptionSpec::Kind;
  LearnerRow row{
      "scinol-coord",
      "no learning rate, unchanged by rescaling any feature: for features of unknown, very different scales "
      "(counts, prices); starts slowly, so give it long streams or several passes (Kotlowski 2017)",
      {
          scinol_alpha_option(),
          scinol_lipschitz_option(),
          {"scinol_d",
           "",
           Kind::kText,
           "seen",
           "how the prior counts features: seen (distinct features so far), bits (all 2^b slots) or clock "
           "(2^b "
           "slots, each with its own update count)",
           {},
           {"seen", "bits", "clock"}},
      },
      [](const LearnerContext& c) {
        return std::make_unique<ScinolLearner>(ScinolOptions::from(c.options), c.loss, c.bits, c.test_only);
      }};
  row.traits.merge = common::kWeightedAverageMerge;
  return row;
}

}  // namespace lepus

// VW 9.11.2's "gd" learner, restated; see gd.h for the papers.
#include "learners/gd.h"
#include "learners/common/merge.h"
#include "learners/common/state.h"

#include "dist/collective.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <sstream>

#include "lepus/errors.h"

namespace lepus {
namespace {

// Prefetch distance of the prediction pass. On rcv1 with -q ff (4,600 features per example, -b 18) moving it from
// 12 to 64 took the 1/10 slice from 1.71 to 1.25 s user (utl/bench row d); 48 to 96 measured the same.
constexpr size_t kScorePrefetch = 64;

using common::number;

// The loss's range, or [0, 0] with the given ends when --min_prediction or --max_prediction is given (VW's rule).
LabelRange initial_range(const GdOptions& o, const Loss& loss) {
  if (!o.min_given && !o.max_given) return loss.initial_range();
  LabelRange r{0.0f, 0.0f};
  if (o.min_given) r.lo = o.min_prediction;
  if (o.max_given) r.hi = o.max_prediction;
  return r;
}

}  // namespace

GdOptions GdOptions::from(const OptionValues& v) {
  GdOptions o;
  const bool any_mode =
      v.given("sgd") || v.given("adaptive") || v.given("normalized") || v.given("invariant");
  if (any_mode) {
    o.adaptive = v.given("adaptive");
    o.normalized = v.given("normalized");
    o.invariant = v.given("invariant");
  }
  o.power_t = static_cast<float>(v.number("power_t"));
  o.initial_t = v.number("initial_t");
  o.normalizer_start = o.initial_t;
  o.eta = static_cast<float>(v.number("learning_rate"));
  if (!(o.adaptive && o.normalized) && !v.given("learning_rate")) o.eta = 10.0f;
  if (!o.adaptive && !o.normalized) {
    if (!v.given("initial_t")) o.initial_t = 1.0;
    o.eta *= std::pow(static_cast<float>(o.initial_t), o.power_t);
  }
  o.l1 = static_cast<float>(v.number("l1"));
  o.l2 = static_cast<float>(v.number("l2"));
  if (o.l1 < 0.0f || o.l2 < 0.0f) throw ConfigError("--l1 and --l2 must be >= 0");
  if (!(o.power_t >= 0.0f)) throw ConfigError("--power_t must be >= 0");
  if (!std::isfinite(o.eta)) throw ConfigError("--learning_rate must be finite");
  o.min_given = v.given("min_prediction");
  o.max_given = v.given("max_prediction");
  if (o.min_given) o.min_prediction = static_cast<float>(v.number("min_prediction"));
  if (o.max_given) o.max_prediction = static_cast<float>(v.number("max_prediction"));
  if (o.min_given && o.max_given && !(o.min_prediction <= o.max_prediction))
    throw ConfigError("--min_prediction " + v.text("min_prediction") + " is above --max_prediction " +
                      v.text("max_prediction"));
  if (v.has("decay_learning_rate"))
    o.decay_learning_rate = static_cast<float>(v.number("decay_learning_rate"));
  o.vw_exact = v.has("vw_exact") && v.given("vw_exact");
  return o;
}

GdLearner::GdLearner(const GdOptions& options, const Loss& loss, int bits, bool test_only)
    : opt_(options),
      loss_(loss),
      mask_((uint64_t{1} << bits) - 1),
      test_only_(test_only),
      sqrt_rate_(options.power_t == 0.5f),
      slots_(size_t{1} << bits),
      clip_(initial_range(options, loss), test_only || options.min_given || options.max_given,
            options.min_given, options.max_given),
      total_norm_(options.normalizer_start),
      total_weight_(options.normalizer_start),
      t_(options.initial_t),
      merged_{options.initial_t, options.normalizer_start, options.normalizer_start} {
  if (opt_.adaptive && opt_.initial_t > 0.0) {
    for (auto& s : slots_) s.g = static_cast<float>(opt_.initial_t);
  }
  choose_kernels();
}

float GdLearner::raw_score(const Example& x) const {
  float raw = x.initial;
  if (opt_.l1 > 0.0f) {
    const float g = static_cast<float>(gravity_);
    for (const Feature& f : x.features) {
      const float w = slots_[f.index & mask_].w;
      const float tw = std::fabs(w) > g ? w - (w > 0.0f ? g : -g) : 0.0f;
      raw += tw * f.value;
    }
  } else {
    const Feature* fs = x.features.data();
    const size_t n = x.features.size();
    // The prediction is the first pass over the example's slots, mostly L3 or memory misses: request the first
    // kScorePrefetch slots at once, then keep that many in flight.
    for (size_t i = 0; i < std::min(n, kScorePrefetch); ++i)
      __builtin_prefetch(&slots_[fs[i].index & mask_], 0);
    size_t i = 0;
    if (lanes(n)) {  // eight lane sums (gd_kernel.h), then the rest in order
      float s[8] = {0.0f};
      for (; i + 8 <= n; i += 8) {
        if (i + kScorePrefetch + 8 <= n) {
          for (size_t k = i + kScorePrefetch; k < i + kScorePrefetch + 8; ++k)
            __builtin_prefetch(&slots_[fs[k].index & mask_], 0);
        }
        for (size_t l = 0; l < 8; ++l) s[l] += slots_[fs[i + l].index & mask_].w * fs[i + l].value;
      }
      raw += gd_kernel::combine_lanes(s);
    }
    for (; i < n; ++i) {
      if (i + kScorePrefetch < n) __builtin_prefetch(&slots_[fs[i + kScorePrefetch].index & mask_], 0);
      raw += slots_[fs[i].index & mask_].w * fs[i].value;
    }
  }
  return raw * static_cast<float>(contraction_);
}

float GdLearner::finalize(float raw) const {
  if (std::isnan(raw)) return 0.0f;
  return clip_.clip(raw);
}

Prediction GdLearner::predict(const Example& x) const {
  const float raw = raw_score(x);
  return Prediction{raw, finalize(raw)};
}

Prediction GdLearner::predict_for_update(const Example& x) {
#if defined(LEPUS_GD_X86)
  if (use_plan_) {
    const size_t n = x.features.size();
    const auto mask = static_cast<uint32_t>(mask_);
    float raw;
    if (opt_.l1 > 0.0f) {  // the truncated weights' score, then the plan
      raw = raw_score(x);
      gd_kernel::plan_avx2(x.features.data(), n, mask, plan_);
    } else {
      raw =
          gd_kernel::score_plan_avx2(slots_.data(), x.features.data(), n, mask, lanes(n), x.initial, plan_) *
          static_cast<float>(contraction_);
    }
    return Prediction{raw, finalize(raw)};
  }
#endif
  return predict(x);
}

Prediction GdLearner::learn(const Example& x) {
  if (!x.labeled) return predict(x);
  const float y = x.label;
  clip_.see(x);
  const Prediction p = predict_for_update(x);
  const float weight = x.weight;
  if (weight > 0.0f && loss_.loss(p.value, y, clip_.range()) > 0.0f) update(x, p.value, y, weight);
  t_ += weight;
  return p;
}

// One class's step under VW's oaa and csoaa: the label is seen (the clipping range), the update is made from the
// prediction the reduction made before any class learned, and t waits for count_example().
bool GdLearner::share_table(uint32_t problems) {
  problem_sums_.assign(problems > 1 ? problems - 1 : 0, {0.0, 0.0});
  return true;
}

void GdLearner::update_from(const Example& x, uint32_t problem, const Prediction& before, float label,
                            float weight) {
  clip_.see(x);
  if (weight > 0.0f && loss_.loss(before.value, label, clip_.range()) > 0.0f) {
#if defined(LEPUS_GD_X86)
    if (use_plan_)
      gd_kernel::plan_avx2(x.features.data(), x.features.size(), static_cast<uint32_t>(mask_), plan_);
#endif
    update(x, before.value, label, weight, problem);
  }
}

// The per-feature bookkeeping of one update (gd_kernel.h), compiled once per update mode so the hot loop carries no
// mode tests.
template <bool kAdaptive, bool kNormalized, bool kSqrtRate>
float GdLearner::accumulate(const Example& x, float g2, float& norm_x) {
  GdKernelArgs a{g2, opt_.power_t, mask_, lanes(x.features.size())};
  gd_accumulate<kAdaptive, kNormalized, kSqrtRate>(slots_.data(), x.features.data(), x.features.size(), a);
  nan_updates_ += a.capped;
  norm_x = a.norm_x;
  return a.ppu;
}

// The default mode's bookkeeping over the plan the prediction pass wrote (use_plan_).
float GdLearner::accumulate_plan(const Example& x, float g2, float& norm_x) {
  GdKernelArgs a{g2, opt_.power_t, mask_, lanes(x.features.size())};
#if defined(LEPUS_GD_X86)
  gd_accumulate_plan(slots_.data(), plan_, a);
#endif
  nan_updates_ += a.capped;
  norm_x = a.norm_x;
  return a.ppu;
}

void GdLearner::choose_kernels() {
  using Fn = float (GdLearner::*)(const Example&, float, float&);
  static constexpr Fn kTable[8] = {
      &GdLearner::accumulate<false, false, false>, &GdLearner::accumulate<false, false, true>,
      &GdLearner::accumulate<false, true, false>,  &GdLearner::accumulate<false, true, true>,
      &GdLearner::accumulate<true, false, false>,  &GdLearner::accumulate<true, false, true>,
      &GdLearner::accumulate<true, true, false>,   &GdLearner::accumulate<true, true, true>};
  sqrt_rate_ = opt_.power_t == 0.5f;
  accumulate_ = kTable[(opt_.adaptive ? 4 : 0) + (opt_.normalized ? 2 : 0) + (sqrt_rate_ ? 1 : 0)];
  use_plan_ = (opt_.adaptive || opt_.normalized) && gd_simd() == gd_kernel::Simd::kAvx2;
  if (use_plan_ && opt_.adaptive && opt_.normalized && sqrt_rate_) accumulate_ = &GdLearner::accumulate_plan;
}

void GdLearner::update(const Example& x, float pred, float y, float weight, uint32_t problem) {
  double& total_norm = problem == 0 ? total_norm_ : problem_sums_.at(problem - 1).first;
  double& total_weight = problem == 0 ? total_weight_ : problem_sums_.at(problem - 1).second;
  const bool scaled = opt_.adaptive || opt_.normalized;
  float ppu = 0.0f;
  if (scaled) {
    const float g2 = weight * loss_.squared_gradient(pred, y);
    if (g2 == 0.0f) {
      ppu = 1.0f;  // VW skips the bookkeeping; rates and multiplier keep their previous values
    } else {
      float norm_x = 0.0f;
      ppu = (this->*accumulate_)(x, g2, norm_x);
      if (opt_.normalized) {
        total_norm += static_cast<double>(weight) * norm_x;
        total_weight += weight;
        const float ratio_ts = static_cast<float>(total_weight) / static_cast<float>(total_norm);
        if (sqrt_rate_) {
          multiplier_ = opt_.adaptive ? std::sqrt(ratio_ts) : ratio_ts;
        } else {
          multiplier_ = std::pow(static_cast<float>(total_norm) / static_cast<float>(total_weight),
                                 opt_.power_t - 1.0f);
        }
        ppu *= multiplier_;
      }
    }
  } else if (opt_.invariant) {
    ppu = x.invariant_norm;
  }

  float scale = opt_.eta * weight;
  if (!opt_.adaptive) scale *= std::pow(static_cast<float>(t_ + weight), -opt_.power_t);

  float u =
      opt_.invariant ? loss_.invariant_update(pred, y, scale, ppu) : loss_.unsafe_update(pred, y, scale);
  if ((opt_.l1 > 0.0f || opt_.l2 > 0.0f) && std::fabs(u) > 1e-8f) {
    const double d1 = loss_.first_derivative(pred, y, clip_.range());
    const double eta_bar = std::fabs(d1) > 1e-8 ? -u / d1 : 0.0;
    if (std::fabs(d1) > 1e-8) contraction_ *= 1.0 - opt_.l2 * eta_bar;
    u /= static_cast<float>(contraction_);
    gravity_ += eta_bar * opt_.l1;
  }
  if (std::isnan(u)) {
    u = 0.0f;
    ++nan_updates_;
  }
  if (u != 0.0f) {
    if (opt_.normalized) u *= multiplier_;
    if (scaled) {
#if defined(LEPUS_GD_X86)
      if (use_plan_) {
        gd_kernel::update_avx2(slots_.data(), plan_, u);
      } else {
        gd_update(slots_.data(), x.features.data(), x.features.size(), mask_, u);
      }
#else
      gd_update(slots_.data(), x.features.data(), x.features.size(), mask_, u);
#endif
    } else {
      for (const Feature& f : x.features) {
        if (!std::isfinite(f.value)) continue;
        slots_[f.index & mask_].w += u * f.value;
      }
    }
  }
  if (opt_.l1 > 0.0f || opt_.l2 > 0.0f) {
    if (contraction_ < 1e-9 || gravity_ > 1e3) apply_truncation();
  }
}

void GdLearner::apply_truncation() {
  const float g = static_cast<float>(gravity_);
  const float c = static_cast<float>(contraction_);
  slots_.for_each_touched([&](size_t i) {  // a zero weight stays zero: untouched pages are skipped
    Slot& s = slots_[i];
    const float tw = std::fabs(s.w) > g ? s.w - (s.w > 0.0f ? g : -g) : 0.0f;
    s.w = tw * c;
  });
  gravity_ = 0.0;
  contraction_ = 1.0;
}

void GdLearner::end_pass() { opt_.eta *= opt_.decay_learning_rate; }

std::vector<std::string> GdLearner::describe() const {
  std::vector<std::string> lines;
  if (opt_.l1 > 0.0f) lines.push_back("using l1 regularization = " + number(opt_.l1));
  if (opt_.l2 > 0.0f) lines.push_back("using l2 regularization = " + number(opt_.l2));
  lines.push_back("learning rate = " + number(opt_.eta));
  lines.push_back("initial_t = " + number(t_));
  lines.push_back("power_t = " + number(opt_.power_t));
  std::string mode;
  if (opt_.adaptive) mode += "adaptive ";
  if (opt_.normalized) mode += "normalized ";
  if (opt_.invariant) mode += "invariant ";
  if (mode.empty()) mode = "plain sgd ";
  mode.pop_back();
  lines.push_back("update = " + mode);
  return lines;
}

void GdLearner::write_readable(std::ostream& out) const { common::write_state(*this, out, false); }

// VW 9.11.2's gd text (its save_resume layout, which VW 9 always writes): the resume flag, gd's state among
// the run's figures in VW's order, then VW's slot lines, whose adaptive and normalizer sums VW leaves out
// under -t.
bool GdLearner::write_vw_readable(std::ostream& out, const VwRunFigures& run) const {
  if (!run.save_resume) {  // VW's --predict_only_model: the weights alone
    out << ":0\n";
    write_slots(out, false, false);
    return true;
  }
  const LabelRange range = clip_.range();
  out << ":1\n";
  out << "initial_t " << static_cast<float>(opt_.initial_t) << "\n";
  out << "norm normalizer " << total_norm_ << "\n";
  out << "t " << t_ << "\n";
  out << "sum_loss " << run.sum_loss << "\n";
  out << "sum_loss_since_last_dump " << run.sum_loss_since_last_dump << "\n";
  out << "dump_interval " << static_cast<float>(run.dump_interval) << "\n";
  out << "min_label " << range.lo << "\n";
  out << "max_label " << range.hi << "\n";
  out << "weighted_labeled_examples " << run.weighted_labeled_examples << "\n";
  out << "weighted_labels " << run.weighted_labels << "\n";
  out << "weighted_unlabeled_examples " << run.weighted_unlabeled_examples << "\n";
  out << "example_number " << run.example_number << "\n";
  out << "total_features " << run.total_features << "\n";
  out << "total_weight " << total_weight_ << "\n";
  out << "sd::oec.weighted_labeled_examples " << run.old_weighted_labeled_examples << "\n";
  out << "current_pass " << run.current_pass << "\n";
  out << "l1_state " << gravity_ << "\n";
  out << "l2_state " << contraction_ << "\n";
  write_slots(out, opt_.adaptive && !test_only_, opt_.normalized && !test_only_);
  return true;
}

// One "index:weight [adaptive] [normalizer]" line per slot with any of them nonzero, in index order.
void GdLearner::write_slots(std::ostream& out, bool adaptive, bool normalized) const {
  slots_.for_each_touched([&](size_t i) {
    const Slot& s = slots_[i];
    const bool nonzero = s.w != 0.0f || (adaptive && s.g != 0.0f) || (normalized && s.n != 0.0f);
    if (!nonzero) return;
    out << i << ":" << s.w;
    if (adaptive) out << " " << s.g;
    if (normalized) out << " " << s.n;
    out << "\n";
  });
}

SlotAudit GdLearner::audit_slot(const Feature& f, int) const {
  const Slot& s = slots_[f.index & mask_];
  const auto g = static_cast<float>(gravity_);
  const float truncated = std::fabs(s.w) > g ? s.w - (s.w > 0.0f ? g : -g) : 0.0f;
  SlotAudit a{s.w, truncated * static_cast<float>(contraction_), std::nullopt};
  if (opt_.adaptive && !test_only_) a.state = s.g;
  return a;
}

void GdLearner::merge(Collective& ranks) {
  if (ranks.size() == 1) return;  // one rank: the model is the single process's, bit for bit
  const size_t n = slots_.size();
  const float k = static_cast<float>(ranks.size());
  if (opt_.adaptive) {
    std::vector<float> total(n);
    for (size_t i = 0; i < n; ++i) total[i] = slots_[i].g;
    ranks.sum(total.data(), n);
    for (size_t i = 0; i < n; ++i) {
      Slot& s = slots_[i];
      if (total[i] > 0.0f) {
        const float ratio = s.g / total[i];
        s.w *= ratio;
        s.g *= ratio;
        if (opt_.normalized) s.n *= ratio;
      } else {
        s.w = 0.0f;
      }
    }
    ranks.sum(reinterpret_cast<float*>(slots_.data()), n * (sizeof(Slot) / sizeof(float)));
  } else {
    std::vector<float> w(n);
    for (size_t i = 0; i < n; ++i) w[i] = slots_[i].w;
    ranks.sum(w.data(), n);
    for (size_t i = 0; i < n; ++i) slots_[i].w = w[i] / k;
  }
  double* counters[3] = {&t_, &total_norm_, &total_weight_};
  common::sum_increments(ranks, counters, merged_);
  common::merge_range(ranks, clip_);
}

std::optional<uint64_t> GdLearner::nonzero_weights() const {
  uint64_t n = 0;
  slots_.for_each_touched([&](size_t i) { n += slots_[i].w != 0.0f; });
  return n;
}

// The flags and hyper-parameters, the range, the sums (each problem's under a reduction, share_table), then
// each kept slot: (w, G, N, r), or a predict-only model's w alone.
template <class Self, class V>
void GdLearner::state(Self& self, V& v, bool weights_only) {
  v.flag("adaptive", self.opt_.adaptive);
  v.flag("normalized", self.opt_.normalized);
  v.flag("invariant", self.opt_.invariant);
  v.number("learning_rate", self.opt_.eta);
  v.number("power_t", self.opt_.power_t);
  v.number("initial_t", self.opt_.initial_t);
  v.number("l1", self.opt_.l1, common::kNonNegative);
  v.number("l2", self.opt_.l2, common::kNonNegative);
  v.clip(self.clip_);
  v.number("norm_normalizer", self.total_norm_);
  v.number("total_weight", self.total_weight_);
  v.number("t", self.t_);
  v.number("multiplier", self.multiplier_);
  v.number("l1_state", self.gravity_);
  v.number("l2_state", self.contraction_);
  for (auto& [norm, weight] : self.problem_sums_) {
    v.number("problem_norm_sum", norm);
    v.number("problem_total_weight", weight);
  }
  const bool adaptive = self.opt_.adaptive, normalized = self.opt_.normalized;
  v.template slots<float>(
      self.slots_, [](const Slot&) { return true; },
      [adaptive, normalized, weights_only](std::ostream& out, size_t, const Slot& s) {
        out << s.w;
        if (adaptive && !weights_only) out << " " << s.g;
        if (normalized && !weights_only) out << " " << s.n;
      },
      weights_only ? 1 : sizeof(Slot) / sizeof(float));
}

void GdLearner::save(ModelWriter& out) const { common::save_state(*this, out, false); }
// Predict-only: the scalars (the clipping range among them) and each nonzero weight, without G, N and r.
void GdLearner::save_predict_only(ModelWriter& out) const { common::save_state(*this, out, true); }

void GdLearner::load(ModelReader& in) {
  common::load_state(*this, in, false);
  loaded();
}
void GdLearner::load_predict_only(ModelReader& in) {
  common::load_state(*this, in, true);
  loaded();
}

void GdLearner::loaded() {
  merged_ = {t_, total_norm_, total_weight_};
  choose_kernels();
}

}  // namespace lepus

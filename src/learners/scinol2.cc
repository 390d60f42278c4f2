// scinol2 / scinol1: ScInOL2 and ScInOL1 of Kempka, Kotłowski and Warmuth (ICML 2019) on the hashed table;
// see scinol2.h for the problem, the update and the mapping.
#include "learners/scinol2.h"
#include "learners/common/merge.h"
#include "learners/common/state.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <new>
#include <sstream>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "core/cpu.h"
#include "learners/scinol.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

using common::number;

// The slots are scattered over a table larger than the caches: the score loop asks for the slot this many
// features ahead, so that the loads overlap.
constexpr size_t kPrefetch = 16;

// Not scinol-coord's version 1, and one per variant: each refuses the other's state.
constexpr uint32_t kStateTag1 = 0x5C1A0001;
constexpr uint32_t kStateTag2 = 0x5C2A0001;

// ScInOL2's per-coordinate terms four at a time where the CPU has AVX2: a slot is 32 bytes (G, S2, M, η), so four
// loads and a 4 x 4 transpose give the four fields as vectors; M, η and the terms are written back per slot. Each
// term is formed by the same operations as the scalar loop's (IEEE square root and division, a multiply and an
// add never fused, the same order), and the terms are summed in the scalar order: the results are those of the
// portable loop, bit for bit. Returns how many coordinates it did (a multiple of 4); the caller does the rest.
#if defined(__x86_64__) && defined(__GNUC__)
const bool kAvx2 = has_avx2();

template <bool kLearn>
__attribute__((target("avx2"))) size_t terms2_avx2(double* slots, const Coord* v, size_t n, double eps,
                                                   double* terms, double& sum) {
  const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
  const __m256d e = _mm256_set1_pd(eps), zero = _mm256_setzero_pd();
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    if (k + 16 < n)
      for (size_t j = 0; j < 4 && k + 16 + j < n; ++j)
        __builtin_prefetch(slots + 4 * v[k + 16 + j].slot, kLearn);
    double* at[4];
    for (int j = 0; j < 4; ++j) at[j] = slots + 4 * v[k + j].slot;
    const __m256d r0 = _mm256_loadu_pd(at[0]), r1 = _mm256_loadu_pd(at[1]);
    const __m256d r2 = _mm256_loadu_pd(at[2]), r3 = _mm256_loadu_pd(at[3]);
    const __m256d t0 = _mm256_unpacklo_pd(r0, r1),
                  t1 = _mm256_unpackhi_pd(r0, r1);  // g0 g1 m0 m1; s0 s1 p0 p1
    const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    const __m256d g = _mm256_permute2f128_pd(t0, t2, 0x20), m_old = _mm256_permute2f128_pd(t0, t2, 0x31);
    const __m256d s2 = _mm256_permute2f128_pd(t1, t3, 0x20), p_old = _mm256_permute2f128_pd(t1, t3, 0x31);
    const __m256d x = _mm256_set_pd(v[k + 3].x, v[k + 2].x, v[k + 1].x, v[k].x);
    const __m256d p = _mm256_blendv_pd(p_old, e, _mm256_cmp_pd(m_old, zero, _CMP_EQ_OQ));  // a fresh slot: ε
    const __m256d m = _mm256_max_pd(_mm256_andnot_pd(sign, x), m_old);                     // max(M, |x|)
    const __m256d d = _mm256_sqrt_pd(_mm256_add_pd(s2, _mm256_mul_pd(m, m)));
    const __m256d theta = _mm256_div_pd(g, d);
    const __m256d x_over_2d = _mm256_div_pd(x, _mm256_mul_pd(two, d));
    const __m256d clamped = _mm256_min_pd(one, _mm256_andnot_pd(sign, theta));  // min(|θ|, 1), NaN kept
    const __m256d signed_ = _mm256_or_pd(clamped, _mm256_and_pd(sign, theta));
    const __m256d term = _mm256_mul_pd(_mm256_mul_pd(signed_, p), x_over_2d);
    alignas(32) double out[4], ms[4], ps[4];
    _mm256_store_pd(out, term);
    if constexpr (kLearn) {
      _mm256_store_pd(ms, m);
      _mm256_store_pd(ps, p);
      for (int j = 0; j < 4; ++j) {
        at[j][2] = ms[j];
        at[j][3] = ps[j];
        terms[k + j] = out[j];
      }
    }
    for (int j = 0; j < 4; ++j) sum += out[j];
  }
  return k;
}
#else
constexpr bool kAvx2 = false;
template <bool kLearn>
size_t terms2_avx2(double*, const Coord*, size_t, double, double*, double&) {
  return 0;
}
#endif

OptionSpec eps_option(const std::string& name, const std::string& help) {
  return {name, "",   OptionSpec::Kind::kNumber,
          "1",  help, {0.0, std::numeric_limits<double>::infinity(), true, false},
          {}};
}

}  // namespace

Scinol2Options Scinol2Options::from(ScinolKkwVariant variant, const OptionValues& v) {
  Scinol2Options o;
  o.variant = variant;
  const bool one = variant == ScinolKkwVariant::kScinol1;
  check_option_values((one ? scinol1_row() : scinol2_row()).options, v);
  const std::string eps = one ? "scinol1_eps" : "scinol2_eps";
  if (v.has(eps)) o.eps = v.number(eps);
  if (v.has("scinol_L")) o.lipschitz = v.number("scinol_L");
  return o;
}

Scinol2Learner::Scinol2Learner(const Scinol2Options& options, const Loss& loss, int bits, bool test_only)
    : opt_(options),
      loss_(loss),
      bits_(bits),
      mask_((uint64_t{1} << bits) - 1),
      clip_(loss.initial_range(), test_only),
      builder_(bits) {
  allocate();
}

void Scinol2Learner::allocate() {
  block_ = ZeroedTable<Slot>(size_t{1} << bits_);
  slots_ = block_.data();
}

// ŷ without the base prediction over the example's distinct coordinates, for round t (1-based). With kLearn
// the new M (and β, and a fresh slot's initial η) are stored and each coordinate's w x kept in terms_;
// otherwise nothing is written (predict-only rounds use temporaries).
template <bool kLearn>
double Scinol2Learner::score(const SparseVector& v, double t) const {
  const bool one = this->one();
  const double eps = opt_.eps;
  double sum = 0.0;
  uint64_t capped = 0;
  if constexpr (kLearn) terms_.resize(v.size());
  size_t k = 0;
  if (!one && kAvx2) {
    static_assert(sizeof(Slot) == 4 * sizeof(double));
    k = terms2_avx2<kLearn>(reinterpret_cast<double*>(slots_), v.begin(), v.size(), eps,
                            kLearn ? terms_.data() : nullptr, sum);
  }
  for (; k < v.size(); ++k) {
    if (k + kPrefetch < v.size()) __builtin_prefetch(&slots_[v[k + kPrefetch].slot], kLearn ? 1 : 0);
    Slot& s = slots_[v[k].slot];
    const double x = v[k].x;
    const bool fresh = s.m == 0.0;  // first occurrence: G = S2 = 0, so θ = 0 and w = 0
    double p = fresh ? (one ? 1.0 : eps) : s.p;
    const double m = std::max(s.m, std::fabs(x));
    const double den = s.s2 + m * m;
    const double d = std::sqrt(den);
    const double theta = s.g / d;
    const double x_over_2d = x / (2.0 * d);  // |x| <= M <= D: at most 1/2
    double term;
    if (one) {
      p = std::min(p, eps * den / (x * x * t));  // β, nonincreasing
      double e = 0.5 * std::fabs(theta);
      if (e > kMaxExponent) [[unlikely]] {
        e = kMaxExponent;
        ++capped;
      }
      term = p * std::copysign(std::expm1(e), theta) * x_over_2d;
    } else {
      term = std::copysign(std::min(std::fabs(theta), 1.0), theta) * p * x_over_2d;
    }
    if constexpr (kLearn) {
      s.m = m;
      s.p = p;
      terms_[k] = term;
    }
    sum += term;
  }
  if (capped > 0) [[unlikely]]
    caps_ += capped;
  return sum;
}

float Scinol2Learner::clipped(double score) const {
  const float raw =
      static_cast<float>(std::clamp(score, -static_cast<double>(FLT_MAX), static_cast<double>(FLT_MAX)));
  return clip_.clip(raw);
}

Prediction Scinol2Learner::finish(double score) const {
  // A prediction beyond float range is reported as ±FLT_MAX (counted: outside what a float output can say).
  if (std::fabs(score) > FLT_MAX) ++caps_;
  const float raw =
      static_cast<float>(std::clamp(score, -static_cast<double>(FLT_MAX), static_cast<double>(FLT_MAX)));
  return clip_.of(raw);
}

double Scinol2Learner::predict_score(const Example& x) const {
  return x.initial + score<false>(common::thread_builder(builder_.bits()).build(x), t_ + 1.0);
}

Prediction Scinol2Learner::predict(const Example& x) const { return finish(predict_score(x)); }

// One learning round in the order of the authors' code: t += 1; per present coordinate M, β and w from the
// old G, S2, η; predict; g from the loss (or the given linear gradient), scaled by the importance weight,
// clipped to [-L, L] and divided by L; then G, S2 and η.
double Scinol2Learner::round(const Example& x, bool use_loss, double g_linear) {
  const SparseVector& v = builder_.build(x);
  t_ += 1.0;
  const double yhat = x.initial + score<true>(v, t_);
  double g = use_loss ? loss_.first_derivative(clipped(yhat), x.label, clip_.range()) : g_linear;
  g = std::clamp(g * static_cast<double>(x.weight), -opt_.lipschitz, opt_.lipschitz) / opt_.lipschitz;
  if (std::isnan(g)) [[unlikely]] {
    g = 0.0;
    ++caps_;
  }
  if (g == 0.0) return yhat;
  const bool two = !one();
  for (size_t k = 0; k < v.size(); ++k) {
    Slot& s = slots_[v[k].slot];
    const double gx = g * v[k].x;
    s.g -= gx;
    s.s2 += gx * gx;
    if (two) {
      s.p -= g * terms_[k];  // η -= g x w, with the w of the prediction
      if (s.p > kMaxWealth) [[unlikely]] {
        s.p = kMaxWealth;
        ++caps_;
      }
    }
  }
  return yhat;
}

double Scinol2Learner::learn_score(const Example& x) {
  if (!x.labeled) return predict_score(x);  // unlabelled: predict only, no state change
  clip_.see(x);
  // An importance weight of 0 (or less) asks for no learning: the round is not played at all.
  if (!(x.weight > 0.0f)) return predict_score(x);
  return round(x, true, 0.0);
}

Prediction Scinol2Learner::learn(const Example& x) { return finish(learn_score(x)); }

double Scinol2Learner::learn_gradient(const Example& x, double g) {
  if (!(x.weight > 0.0f)) return predict_score(x);
  return round(x, false, g);
}

double Scinol2Learner::weight(uint64_t i, double x) const {
  const Slot& s = slots_[i & mask_];
  const double m = std::max(s.m, std::fabs(x));
  if (!(m > 0.0)) return 0.0;  // never seen: w = 0
  double p = s.m == 0.0 ? (one() ? 1.0 : opt_.eps) : s.p;
  const double den = s.s2 + m * m;
  const double d = std::sqrt(den);
  const double theta = s.g / d;
  double bet;
  if (one()) {
    if (x != 0.0) p = std::min(p, opt_.eps * den / (x * x * (t_ + 1.0)));
    bet = p * std::copysign(std::expm1(std::min(0.5 * std::fabs(theta), kMaxExponent)), theta);
  } else {
    bet = std::copysign(std::min(std::fabs(theta), 1.0), theta) * p;
  }
  // Indicative only: with a tiny feature scale the weight can exceed double range.
  return std::clamp(bet / (2.0 * d), -DBL_MAX, DBL_MAX);
}

std::vector<std::string> Scinol2Learner::describe() const {
  return {std::string(one() ? "scinol1_eps" : "scinol2_eps") + " = " + number(opt_.eps),
          "scinol_L = " + number(opt_.lipschitz)};
}

// eps, L, t, the label range, then per slot G, S2, M, β or η (readable: the indicative weight first, M
// unchanged, since w depends on x).
template <class Self, class V>
void Scinol2Learner::state(Self& self, V& v) {
  const bool one = self.one();
  v.tag(one ? kStateTag1 : kStateTag2);
  v.number(one ? "scinol1_eps" : "scinol2_eps", self.opt_.eps, common::kPositive);
  v.number("scinol_L", self.opt_.lipschitz, common::kPositive);
  v.number("t", self.t_, common::kCount);
  v.clip(self.clip_);
  v.slots(
      self.block_,
      [one](const Slot& s) { return s.m > 0.0 && s.s2 >= 0.0 && s.p >= 0.0 && (!one || s.p <= 1.0); },
      [&self](std::ostream& out, size_t i, const Slot& s) {
        out << self.weight(i, 0.0) << " " << s.g << " " << s.s2 << " " << s.m << " " << s.p;
      });
}

void Scinol2Learner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void Scinol2Learner::save(ModelWriter& out) const { common::save_state(*this, out); }

void Scinol2Learner::load(ModelReader& in) {
  common::load_state(*this, in);
  slots_ = block_.data();
}

// --distributed: VW's weighted average of each slot (G, S2, p) with weights S2 (common::weighted_average: the
// merged G^2 / S2 is at most the largest rank's), M the largest |x| of any rank, t the ranks' mean. A slot whose x
// some rank saw with no gradient yet (S2 = 0, M > 0) takes the mean of those ranks' p, not of untouched ones.
void Scinol2Learner::merge(Collective& ranks) {
  static_assert(sizeof(Slot) == 4 * sizeof(double) && std::is_standard_layout_v<Slot>);
  if (ranks.size() == 1) return;
  constexpr size_t kMaxed[] = {2};
  common::weighted_average(
      ranks, &slots_[0].g, mask_ + 1, sizeof(Slot) / sizeof(double),
      [](const double* r) { return r[1] > 0.0   ? r[1]
                                   : r[2] > 0.0 ? DBL_MIN
                                                : 0.0; }, kMaxed);
  common::average_rounds(ranks, t_);
  common::merge_range(ranks, clip_);
}

LearnerRow scinol2_row() {
  return LearnerRow{
      "scinol2",
      "no learning rate, unchanged by rescaling any feature, and no slow start: a per-feature coin-betting "
      "learner for features of unknown, very different scales, sparse text included (ScInOL2, Kempka, "
      "Kotlowski, Warmuth 2019)",
      {
          eps_option("scinol2_eps", "scinol2's initial wealth per feature (how much it may lose on each)"),
          scinol_lipschitz_option(),
      },
      [](const LearnerContext& c) {
        return std::make_unique<Scinol2Learner>(Scinol2Options::from(ScinolKkwVariant::kScinol2, c.options),
                                                c.loss, c.bits, c.test_only);
      },
      common::weighted_average_traits()};
}

LearnerRow scinol1_row() {
  return LearnerRow{
      "scinol1",
      "no learning rate, unchanged by rescaling any feature; features that first appear late start with a "
      "small prior, so scinol2 is usually better (ScInOL1, Kempka, Kotlowski, Warmuth 2019)",
      {
          eps_option("scinol1_eps", "scale of scinol1's per-feature prior (larger bets more at first)"),
          scinol_lipschitz_option(),
      },
      [](const LearnerContext& c) {
        return std::make_unique<Scinol2Learner>(Scinol2Options::from(ScinolKkwVariant::kScinol1, c.options),
                                                c.loss, c.bits, c.test_only);
      },
      common::weighted_average_traits()};
}

}  // namespace lepus

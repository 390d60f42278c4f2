// ftprl-diag: FTPRL-Diag on the box [-R, R]^d (McMahan & Streeter, "Adaptive Bound Optimization for Online
// Convex Optimization", COLT 2010, Section 3.2: Algorithm 1, Corollary 2).
//
// Per coordinate, with D_i = 2R (Corollary 2's schedule). Algorithm 1 prints u = (g_{1:t} - q)/lbar, which
// moves w along the gradient; eq. (9) and Lemma 2 give u = (q - g_{1:t})/lbar, the minimiser, used here:
//   G_i += g_i^2,  lbar_i = (2/D_i) sqrt(G_i) = sqrt(G_i)/R,
//   u_i <- (lbar_old u_i + (lbar_new - lbar_old) w_i - g_i) / lbar_new,  w_i = clip(u_i, -R, R),
// the recurrence form of u = (q - z)/lbar with q_i = sum lambda_i w_i and z_i = sum g_i. Times R/R:
//   u_i <- (s_old u_i + (s_new - s_old) w_i - R g_i) / s_new,  s = sqrt(G_i),
// and the slot keeps s itself (s_new = sqrt(s_old^2 + g_i^2)), so an update takes one square root.
// Coordinates without a gradient do not move (their lambda_t is 0): the sparse update is exact with no
// catch-up. A coordinate that never had a nonzero gradient keeps w_i = 0: the objective is constant in w_i
// and 0 minimises it on the box. Section 3 instead assumes g_{1,i} > 0 (Theorem 2 needs Q_1 positive
// definite) by hallucinating a tiny first gradient; lepus does not, as any such gradient would move w_i to
// +-R at once.
//
// The data-derived radius (--ftprl_radius not given; lepus's variant, not in the paper, which gives no
// default radius). FTPRL-Diag is not invariant to rescaling a feature: x_i -> k x_i leaves every played w_i
// unchanged (the schedule is invariant to gradient scaling, Section 3.2), while the comparator's weight is k
// times smaller; on raw data (pixels 0-255) the box [-1, 1] is 255 times too wide and every first step jumps
// to its edge. So each coordinate's box is
//   R_{t,i} = c / (M_{t,i} X^_t),
// M_{t,i} the largest |x_i| seen so far (ScInOL's M_i), X^_t the largest ||x^|| seen so far with x^_i = x_i /
// M_i (each this example's included), and c = kDataRadiusDiag. In x^ the box is [-c/X^, c/X^]^d, the smallest
// box holding the ball ||w^|| <= c / X^ of the comparators whose score is at most c on every example seen
// (the ball learners' set); the division by X^ keeps dense examples (hundreds of pixels) from summing
// hundreds of steps of size c. In the original coordinates this is FTPRL (eq. (2), (5)) with the diagonal
// schedule
//   lbar_{t,i} = M_{tau,i} sqrt(G_{tau,i}) X^_tau / c,   tau <= t the coordinate's last nonzero gradient
// (Corollary 2's sqrt(G_i)/R_i), nondecreasing in t because M, G and X^ are, so every Q_t >= 0 as Theorem 2
// needs; it is played on the box F_t = prod [-R_{t,i}, R_{t,i}], which only shrinks, and the projection in
// any diagonal norm is the clip. Per slot (u, s = sqrt(G), M, k = X^_tau):
//   u_i <- (M_old s_old k_old u_i + (M_new s_new X^_t - M_old s_old k_old) w_i - c g_i) / (M_new s_new X^_t),
//   w_i = clip(u_i, R_{t,i}).
// Guarantee: the FTRL argument of Theorem 2 carries over to nested sets F_t known when w_t is played (w_{t+1}
// lies in F_{t+1}, inside the F_t that w_t minimises over), so the regret against every u in the final box
// |u_i| <= R_{T,i} is at most
//   sum_i R_{T,i} sqrt(G_{T,i}) (1/2 (1 + rho_i)^2 + 2 rho_i),  rho_i = R_{first,i} / R_{T,i} >= 1,
// R_{first,i} the coordinate's radius at its first nonzero gradient. With rho_i = 1 (the scales are known by
// then: binary features of equal-length examples, or data already scaled) this is Corollary 2's
// 2 sum_i D_i sqrt(G_i) with D_i = 2 R_{T,i}; a radius that shrinks by rho_i costs that factor,
// (1/2 (1 + rho)^2 + 2 rho) / 4, on its term. Given up: the published fixed box, chosen before the data.
// Multiplying a column by k > 0 multiplies its M_i by k, leaves x^ and X^ as they are, divides its u_i and
// w_i by k and leaves every score, hence every prediction, unchanged (exactly, up to rounding; bit for bit
// for a power of two). --ftprl_radius R restores the published algorithm (R_i = R).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <ostream>
#include <type_traits>

#include "learners/common/merge.h"
#include "learners/common/state.h"
#include "learners/ftprl.h"
#include "learners/ftprl_internal.h"
#include "lepus/errors.h"

namespace lepus {

using ftprl::clip;
using ftprl::kPrefetch;

FtprlDiagLearner::FtprlDiagLearner(const FtprlOptions& options, const Loss& loss, int bits, bool test_only)
    : FtprlBase(options.data_radius ? kDataRadiusDiag : options.radius, loss, bits, test_only),
      data_radius_(options.data_radius),
      slots_(size_t{1} << bits) {}

double FtprlDiagLearner::slot_radius(uint64_t slot) const {
  if (!data_radius_) return radius_;
  const double m = slots_[slot & mask_].m;
  return m > 0.0 && x_max_ > 0.0 ? radius_ / (m * x_max_) : std::numeric_limits<double>::infinity();
}

double FtprlDiagLearner::weight(uint64_t slot) const {
  const double u = slots_[slot & mask_].u;
  return u == 0.0 ? 0.0 : clip(u, slot_radius(slot));
}

double FtprlDiagLearner::score(const Example& x) const {
  if (!data_radius_) return clipped_score(slots_, x);
  // The boxes of this round: R_i = c / (M_i X^) with M_i = max(M_i, |x_i|) and X^ = max(X^, ||x^||), this
  // example's scales included as the update will have them. A slot never updated has u_i = 0.
  const Slot* slots = slots_.data();
  const Feature* fs = x.features.data();
  const size_t n = x.features.size();
  double n2 = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetch < n) __builtin_prefetch(&slots[fs[i + kPrefetch].index & mask_]);
    const double xi = std::fabs(ftprl::usable(fs[i].value));
    if (xi == 0.0) continue;
    const double h = xi / std::max(slots[fs[i].index & mask_].m, xi);
    n2 += h * h;
  }
  const double big_x = std::max(x_max_, std::sqrt(n2));
  if (!(big_x > 0.0)) return x.initial;  // no feature: w . x = 0
  const double c = radius_ / big_x;
  double sum = x.initial;
  for (size_t i = 0; i < n; ++i) {
    const Slot& s = slots[fs[i].index & mask_];
    const double xi = ftprl::usable(fs[i].value);
    if (s.u != 0.0) sum += clip(s.u, c / std::max(s.m, std::fabs(xi))) * xi;
  }
  return sum;
}

void FtprlDiagLearner::apply_round(const Example&, const SparseVector& v, double dloss) {
  if (data_radius_) {
    apply<true>(v, dloss);
  } else {
    apply<false>(v, dloss);
  }
}

template <bool kData>
void FtprlDiagLearner::apply(const SparseVector& v, double dloss) {
  Slot* const slots = slots_.data();
  const double r = radius_;  // R, or c
  const size_t n = v.size();
  double big_x = 0.0;  // X^_t
  if constexpr (kData) {
    double n2 = 0.0;
    for (size_t k = 0; k < n; ++k) {
      const double ax = std::fabs(v[k].x);
      if (ax == 0.0) continue;
      const double h = ax / std::max(slots[v[k].slot].m, ax);
      n2 += h * h;
    }
    x_max_ = big_x = std::max(x_max_, std::sqrt(n2));
  }
  for (size_t k = 0; k < n; ++k) {
    if (k + kPrefetch < n) __builtin_prefetch(&slots[v[k + kPrefetch].slot], 1);
    const double g = dloss * v[k].x;
    if (g == 0.0) continue;  // dloss * x underflowing
    Slot& s = slots[v[k].slot];
    const double u = s.u;
    const double s_old = s.s;
    const double big_g = s_old * s_old + g * g;
    // g*g underflowing to 0 (only reachable through update() with dloss * x below 1e-154) or G overflowing
    // would divide by 0 or by infinity: the coordinate keeps its state (counted).
    if (!(big_g > 0.0) || !(big_g <= DBL_MAX)) [[unlikely]] {
      ++safeguards_;
      continue;
    }
    if constexpr (kData) {
      // c lbar = M sqrt(G) X^: every factor only grows (X^ as of the slot's last update, k).
      const double m_new = std::max(s.m, std::fabs(v[k].x));
      const double w = clip(u, r / (m_new * big_x));  // the point played this round (score() clipped it so)
      const double l_old = s.m * s_old * s.k;
      const double s_new = std::max(std::sqrt(big_g), s_old);
      const double l_new = std::max(m_new * s_new * big_x, l_old);
      s.u = (l_old * u + (l_new - l_old) * w - r * g) / l_new;
      s.s = s_new;
      s.m = m_new;
      s.k = big_x;
    } else {
      const double w = clip(u, r);  // the point played this round
      // lambda_t = (s_new - s_old)/R >= 0 (Q_t >= 0, Theorem 2): when g^2 vanishes next to G, rounding could
      // make it a negative ulp; clamp it.
      const double s_new = std::max(std::sqrt(big_g), s_old);
      s.u = (s_old * u + (s_new - s_old) * w - r * g) / s_new;
      s.s = s_new;
    }
  }
}

std::vector<std::string> FtprlDiagLearner::describe() const {
  if (data_radius_)
    return {"ftprl_radius = data: " + ftprl::num(radius_) +
                " / (the largest |x_i| of each feature so far x the "
                "largest ||x^|| so far, x^_i = x_i / max |x_i|)",
            "feasible set = box |w_i| <= " + ftprl::num(radius_) + " / (max |x_i| max ||x^||)"};
  return {"ftprl_radius = " + ftprl::num(radius_), "feasible set = box |w_i| <= " + ftprl::num(radius_)};
}

void FtprlDiagLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

// --distributed: VW's weighted average of each slot (u, s) with weights G = s^2 (common::weighted_average),
// as VW merges sgd's adaptive sums, and the ranks' largest M_i, k_i and X^; w = clip(u, -R_i, R_i) stays in
// the box.
void FtprlDiagLearner::merge(Collective& ranks) {
  static_assert(sizeof(Slot) == 4 * sizeof(double) && std::is_standard_layout_v<Slot>);
  static constexpr size_t kMaxed[] = {2, 3};
  common::weighted_average(
      ranks, &slots_[0].u, mask_ + 1, 4, [](const double* r) { return r[1] * r[1]; }, kMaxed);
  if (data_radius_) ranks.max(&x_max_, 1);
  common::merge_range(ranks, clip_);
}

// State "ftprl-diag-2": the data-derived radius flag, X^, R or c, the label range, the slots (u, sqrt(G), M,
// X^ at the slot's last update; readable: w_i first, and G). "ftprl-diag" (before the data-derived radius) still
// loads: R given, slots (u, sqrt(G)).
template <class Self, class V>
void FtprlDiagLearner::state(Self& self, V& v) {
  const bool old = v.version({"ftprl-diag-2", "ftprl-diag"}) == 1;
  bool data = false;
  if (old) {
    v.absent(self.data_radius_, false);
    v.absent(self.x_max_, 0.0);
  } else {
    data = v.flag("data_radius", self.data_radius_);
    v.number("X^", self.x_max_, common::kNonNegative);
  }
  v.number("ftprl_radius", self.radius_, common::kPositive);
  v.clip(self.clip_);
  if (old) {
    struct OldSlot {
      double u, s;
    };
    v.template older_slots<OldSlot>(
        self.slots_,
        [](const OldSlot& o) {
          return Slot{o.u, o.s, 0.0, 0.0};
        },
        [](const Slot& s) { return s.s >= 0.0; });
    return;
  }
  v.slots(
      self.slots_,
      [data](const Slot& s) {  // under the data-derived radius, a slot's first update sets M and X^
        return s.s >= 0.0 && s.m >= 0.0 && s.k >= 0.0 &&
               !(data && (s.m == 0.0 || s.k == 0.0) && (s.u != 0.0 || s.s != 0.0));
      },
      [&self, data](std::ostream& out, size_t i, const Slot& s) {
        out << self.weight(i) << " " << s.u << " " << s.s * s.s;
        if (data) out << " " << s.m << " " << s.k;
      });
}

void FtprlDiagLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void FtprlDiagLearner::load(ModelReader& in) { common::load_state(*this, in); }

}  // namespace lepus

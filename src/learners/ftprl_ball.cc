// ftprl-const on the L2 ball ||w|| <= R (McMahan & Streeter, "Adaptive Bound Optimization for Online Convex
// Optimization", COLT 2010, Section 3.1, Corollary 1; Section 3.4, Theorem 6), and ftprl-scale, FTPRL-Scale
// for the ellipsoid {sum_i (w_i/a_i)^2 <= R^2} (Section 3.4, Algorithm 2, Theorems 5-6). Algorithm 2 prints
// q_t = alpha_t x_t and u^ from g_{1:t}; Theorem 5's change of variables needs the transformed point w^_t
// and gradient sum g^_{1:t}, which are used here.
//
// Both run ftprl-const on a ball of radius R (D = 2R); ftprl-scale in the coordinates w^_i = w_i/a_i, with
// gradients g^_i = a_i g_i (A = diag(1/a_i), so A^-T g = a g) and playing w_i = a_i w^_i (Theorem 5):
//   G += ||g^_t||^2,  abar_t = sqrt(G)/R,  alpha_t = abar_t - abar_{t-1},
//   u^_{t+1} = (abar_{t-1} u^_t + alpha_t w^_t - g^_t)/abar_t,  w^_{t+1} = u^_{t+1} min(1, R/||u^_{t+1}||).
// With w^_t = c_t u^_t this is u^_{t+1} = rho u^_t - g^_t/abar_t, rho = (abar_{t-1} + alpha_t c_t)/abar_t:
// a global contraction (rho <= 1) plus a sparse step. lepus's exact sparse form of it stores
// u^ = sigma v with a global sigma and keeps N = ||u^||^2 up to date per touched slot; the score is
// c sigma (v . x^) with c = min(1, R/sqrt(N)). sigma only decreases: v is renormalised (v <- sigma v,
// sigma = 1) below 1e-150, and N is recomputed from the table every max(2^16, 2^b/8) updates so rounding
// cannot drift (both O(2^b), rarely).
// ftprl-scale's a_i is a per-namespace prior scale (--ftprl_scale), fixed for slot i by the first feature
// that updates it: a slot not yet updated has v_i = 0, so assigning a_i then is the same as having fixed A
// up front.
//
// The data-derived radius (--ftprl_radius not given; lepus's variant, not in the paper, which gives no
// default): the ball ||w|| <= R is scale-dependent (multiplying every feature by k makes the comparator k
// times smaller, while the schedule, invariant to gradient scaling, plays the same points). So R_t = c / X_t,
// X_t the largest ||x^_t|| learned from (this example's included in its update), c = kDataRadiusBall: the
// comparator's score is at most c on every example seen, |w . x| <= R ||x|| <= c. In the original (hat)
// coordinates this is FTPRL with Q_{1:t} = abar_t I, abar_t = sqrt(G^_t) X_t / c, nondecreasing (every Q_t >=
// 0, Theorem 2), played on the ball of radius R_{t-1} (the projection in the abar-norm is the Euclidean one,
// c_t = min(1, R_{t-1}/||u^||)); the sets only shrink, so the FTRL argument of Theorem 2 carries over
// (w_{t+1} lies in the set w_t minimises over), and the regret against every u^ in the final ball
// ||u^|| <= c / X_T is at most
//   (c sqrt(G^_T) / X_T) (1/2 (1 + rho)^2 + 2 rho),  rho = X_T / X_1 >= 1,
// which is Corollary 1's 2 D sqrt(G^) (D = 2c / X_T) when the largest example comes first (rho = 1), and that
// factor, (1/2 (1 + rho)^2 + 2 rho) / 4, worse when the norms grow by rho. Multiplying every feature by k > 0
// leaves every prediction unchanged (exactly, up to rounding).
// ftprl-scale with the data-derived radius also takes each slot's scale from the data: a_i = a_ns / M_i, M_i
// the largest |x_i| learned from (ScInOL's M_i; a_ns the namespace's --ftprl_scale, 1 by default), so x^_i =
// a_ns x_i / M_i and multiplying any one column by k > 0 leaves every prediction unchanged. A score meets x_i
// clamped to [-M_i, M_i] (x^_i = a_ns sign(x_i) once |x_i| is the largest yet). When M_i grows, the slot's
// hat state is kept (its weight w_i = a_i w^_i shrinks by the ratio): for fixed a_i (from the last growth of
// any M_i on) this is FTPRL-Scale with A = diag(1/a_i) (Theorems 5-6) on the shrinking ball above; across a
// growth the bound is not claimed. --ftprl_radius R restores the published algorithms (a_i fixed at a slot's
// first update to its namespace's scale).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <ostream>

#include "learners/common/merge.h"
#include "learners/common/state.h"
#include "learners/ftprl.h"
#include "learners/ftprl_internal.h"
#include "lepus/errors.h"

namespace lepus {

using ftprl::kPrefetch;

namespace {
constexpr double kMinSigma = 1e-150;
}  // namespace

template <bool kScaled>
FtprlBallLearner<kScaled>::FtprlBallLearner(const FtprlOptions& options, const Loss& loss, int bits,
                                            bool test_only)
    : FtprlBase(options.data_radius ? kDataRadiusBall : options.radius, loss, bits, test_only),
      spec_(options.scale),
      spec_text_(options.scale_text.empty() ? "*:1" : options.scale_text),
      data_radius_(options.data_radius),
      c_(radius_),
      recompute_every_(std::max<uint64_t>(uint64_t{1} << 16, (uint64_t{1} << bits) / 8)),
      slots_(size_t{1} << bits) {}

template <bool kScaled>
double FtprlBallLearner<kScaled>::scale_of(const Slot& s) const {
  if constexpr (kScaled) {
    return s.a;
  } else {
    return 1.0;
  }
}

template <bool kScaled>
double FtprlBallLearner<kScaled>::projection_factor() const {
  const double r = radius_;
  return norm2_ > r * r ? r / std::sqrt(norm2_) : 1.0;
}

template <bool kScaled>
double FtprlBallLearner<kScaled>::hat_u(uint64_t slot) const {
  return sigma_ * slots_[slot & mask_].v;
}

template <bool kScaled>
double FtprlBallLearner<kScaled>::hat_weight(uint64_t slot) const {
  return projection_factor() * hat_u(slot);
}

template <bool kScaled>
double FtprlBallLearner<kScaled>::weight(uint64_t slot) const {
  return hat_weight(slot) * scale_of(slots_[slot & mask_]);
}

template <bool kScaled>
double FtprlBallLearner<kScaled>::score(const Example& x) const {
  const Slot* slots = slots_.data();
  const Feature* fs = x.features.data();
  const size_t n = x.features.size();
  double t = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetch < n) __builtin_prefetch(&slots[fs[i + kPrefetch].index & mask_]);
    const Slot& s = slots[fs[i].index & mask_];
    if constexpr (kScaled) {
      const double xi = ftprl::usable(fs[i].value);
      // Data-derived scales: a_i x_i with a_i = a_ns / max(M_i, |x_i|), i.e. a_i clamp(x_i, -M_i, M_i).
      t += s.a * s.v * (data_radius_ ? std::clamp(xi, -s.m, s.m) : xi);
    } else {
      t += s.v * ftprl::usable(fs[i].value);
    }
  }
  return x.initial + projection_factor() * sigma_ * t;
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::apply_round(const Example& x, const SparseVector& v, double dloss) {
  Slot* const slots = slots_.data();
  const size_t n = v.size();
  double sum_x2 = 0.0;
  if constexpr (kScaled) {
    if (data_radius_) {
      // a_i = a_ns / M_i, M_i raised to |x_i| first (the hat state v_i is kept): x^_i = a_i x_i.
      for (size_t k = 0; k < n; ++k) {
        Slot& s = slots[v[k].slot];
        const double ax = std::fabs(v[k].x);
        if (ax > s.m) {
          s.a = s.m > 0.0 ? s.a * (s.m / ax) : spec_.of_feature(x, v[k].first) / ax;
          s.m = ax;
        }
        const double xs = s.a * v[k].x;
        sum_x2 += xs * xs;
      }
    } else {
      // ||x^||^2 with x^_i = a_i x_i; a slot updated for the first time takes its namespace's scale.
      for (size_t k = 0; k < n; ++k) {
        const double a0 = slots[v[k].slot].a;
        const double xs = (a0 != 0.0 ? a0 : spec_.of_feature(x, v[k].first)) * v[k].x;
        sum_x2 += xs * xs;
      }
    }
  } else {
    sum_x2 = v.norm2();
  }
  if (sum_x2 == 0.0) return;             // g^_t = 0
  const double c = projection_factor();  // w^_t = c u^_t, the point played this round (radius R_{t-1})
  if (data_radius_) {                    // R_t = c / X_t, X_t including this example
    x_max_ = std::max(x_max_, std::sqrt(sum_x2));
    radius_ = c_ / x_max_;
  }
  const double big_g = g_sum_ + dloss * dloss * sum_x2;
  // ||g^||^2 underflowing to 0 or G overflowing (only via update() with extreme dloss): skipped, counted.
  if (!(big_g > 0.0) || !(big_g <= DBL_MAX)) [[unlikely]] {
    ++safeguards_;
    return;
  }
  const double a_old = abar_;
  const double a_new = std::sqrt(big_g) / radius_;
  const double alpha = std::max(0.0, a_new - a_old);
  const double rho = (a_old + alpha * c) / a_new;
  double sigma = sigma_ * rho;
  double norm2 = norm2_ * rho * rho;
  const double step = -dloss / a_new;  // delta_i = -g^_i / abar_t = step * x^_i
  for (size_t k = 0; k < n; ++k) {
    if (k + kPrefetch < n) __builtin_prefetch(&slots[v[k + kPrefetch].slot], 1);
    Slot& s = slots[v[k].slot];
    double xs = v[k].x;
    if constexpr (kScaled) {
      if (s.a == 0.0) s.a = spec_.of_feature(x, v[k].first);
      xs *= s.a;
    }
    const double delta = step * xs;
    const double old = sigma * s.v;
    norm2 += delta * (2.0 * old + delta);  // (old + delta)^2 - old^2
    s.v += delta / sigma;
  }
  sigma_ = sigma;
  norm2_ = norm2;
  g_sum_ = big_g;
  abar_ = a_new;
  ++updates_;
  if (sigma_ < kMinSigma) renormalize();
  if (norm2_ < 0.0 || updates_ % recompute_every_ == 0) recompute_norm();
}

// --distributed: the ranks' mean point u^ and mean G^, one learner's worth as VW's plain average is (ftprl-scale:
// the slots' a_i, the same wherever set, from any rank that set it); N = ||u^||^2 recomputed.
template <bool kScaled>
void FtprlBallLearner<kScaled>::merge(Collective& ranks) {
  if (ranks.size() == 1) return;
  const size_t n = mask_ + 1;
  std::vector<double> mean(n + 1);
  for (size_t i = 0; i < n; ++i) mean[i] = hat_u(i);
  mean[n] = g_sum_;
  common::mean(ranks, mean);
  if constexpr (kScaled) {
    // Data-derived scales: a_i M_i is the namespace's scale wherever set; M_i the ranks' largest.
    std::vector<double> a(2 * n, 0.0);
    for (size_t i = 0; i < n; ++i) {
      a[i] = data_radius_ ? slots_[i].a * slots_[i].m : slots_[i].a;
      a[n + i] = slots_[i].m;
    }
    ranks.max(a.data(), 2 * n);
    for (size_t i = 0; i < n; ++i) {
      const double ai = data_radius_ ? (a[n + i] > 0.0 ? a[i] / a[n + i] : 0.0) : a[i];
      if (ai != slots_[i].a || a[n + i] != slots_[i].m) {
        slots_[i].a = ai;
        slots_[i].m = a[n + i];
      }
    }
  }
  if (data_radius_) {
    ranks.max(&x_max_, 1);
    if (x_max_ > 0.0) radius_ = c_ / x_max_;
  }
  g_sum_ = mean[n];
  abar_ = std::sqrt(g_sum_) / radius_;
  sigma_ = 1.0;
  for (size_t i = 0; i < n; ++i)
    if (mean[i] != slots_[i].v) slots_[i].v = mean[i];
  recompute_norm();
  common::merge_range(ranks, clip_);
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::renormalize() {
  slots_.for_each_touched([&](size_t i) { slots_[i].v *= sigma_; });  // zero slots stay zero
  sigma_ = 1.0;
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::recompute_norm() {
  // Compensated (Neumaier) sum of u_i^2 = (sigma v_i)^2.
  double sum = 0.0, comp = 0.0;
  slots_.for_each_touched([&](size_t i) {
    const Slot& s = slots_[i];
    if (s.v == 0.0) return;
    const double u = sigma_ * s.v;
    const double term = u * u;
    const double t = sum + term;
    comp += std::fabs(sum) >= term ? (sum - t) + term : (term - t) + sum;
    sum = t;
  });
  norm2_ = sum + comp;
}

template <bool kScaled>
std::vector<std::string> FtprlBallLearner<kScaled>::describe() const {
  std::vector<std::string> lines;
  const std::string r = data_radius_ ? ftprl::num(c_) + " / max ||x^||" : ftprl::num(radius_);
  if (data_radius_) {
    lines.push_back("ftprl_radius = data: " + ftprl::num(c_) + " / the largest ||x^|| so far" +
                    (kScaled ? ", x^_i = a x_i / the largest |x_i| so far" : ""));
  } else {
    lines.push_back("ftprl_radius = " + ftprl::num(radius_));
  }
  if constexpr (kScaled) {
    lines.push_back("ftprl_scale = " + spec_text_);
    lines.push_back("feasible set = ellipsoid sum (w_i/a_i)^2 <= (" + r + ")^2");
  } else {
    lines.push_back("ftprl_set = ball");
    lines.push_back("feasible set = ball ||w||_2 <= " + r);
  }
  return lines;
}

// State "ftprl-const-ball-2" / "ftprl-scale-2": the data-derived radius flag, c and X, then as the versions
// before it (which still load, as a given radius): R, the label range, (the scale spec,) G, abar, sigma, N, the
// update count and the slots (ftprl-scale's now (v, a, M); before, (v, a)); readable: w_i and u^_i first.
template <bool kScaled>
template <class Self, class V>
void FtprlBallLearner<kScaled>::state(Self& self, V& v) {
  bool data = false;
  const bool old = v.version({kScaled ? "ftprl-scale-2" : "ftprl-const-ball-2",
                              kScaled ? "ftprl-scale" : "ftprl-const-ball"}) == 1;
  if (old) {
    v.absent(self.data_radius_, false);
    v.absent(self.c_, 1.0);
    v.absent(self.x_max_, 0.0);
  } else {
    data = v.flag("data_radius", self.data_radius_);
    v.number("c", self.c_, common::kPositive);
    v.number("X", self.x_max_, common::kNonNegative);
  }
  v.number("ftprl_radius", self.radius_, common::kPositive);
  v.clip(self.clip_);
  if constexpr (kScaled)
    v.text("ftprl_scale", self.spec_text_, [](const std::string& t) { FtprlScaleSpec::parse(t); });
  v.number("G", self.g_sum_, common::kNonNegative);
  v.number("abar", self.abar_, common::kNonNegative);
  v.number("sigma", self.sigma_, common::kPositive);
  v.number("N", self.norm2_, common::kNonNegative);
  v.whole("updates", self.updates_);
  auto ok = [data](const Slot& s) {
    if constexpr (kScaled)
      return !(s.a < 0.0 || s.m < 0.0 || (s.a == 0.0 && s.v != 0.0) ||
               (data && (s.a == 0.0) != (s.m == 0.0)));
    return true;
  };
  if constexpr (kScaled) {
    struct OldSlot {
      double v, a;
    };
    if (old) {
      v.template older_slots<OldSlot>(
          self.slots_,
          [](const OldSlot& o) {
            return Slot{o.v, o.a, 0.0};
          },
          ok);
      return;
    }
  }
  const double c = self.projection_factor();
  v.slots(self.slots_, ok, [&self, c, data](std::ostream& out, size_t, const Slot& s) {
    const double u = self.sigma_ * s.v;
    out << c * u * self.scale_of(s) << " " << u;
    if constexpr (kScaled) {
      out << " " << s.a;
      if (data) out << " " << s.m;
    }
  });
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::write_readable(std::ostream& out) const {
  common::write_state(*this, out);
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::save(ModelWriter& out) const {
  common::save_state(*this, out);
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::load(ModelReader& in) {
  common::load_state(*this, in);
  if constexpr (kScaled) spec_ = FtprlScaleSpec::parse(spec_text_);
}

template class FtprlBallLearner<false>;
template class FtprlBallLearner<true>;

}  // namespace lepus

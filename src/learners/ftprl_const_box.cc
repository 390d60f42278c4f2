// ftprl-const on the box F = [-R, R]^d, d = 2^b: coordinate-constant adaptive regularization (McMahan &
// Streeter, "Adaptive Bound Optimization for Online Convex Optimization", COLT 2010, Section 3.1,
// Corollary 1), run sparsely by an exact lazy rewriting of lepus's own (the paper's update is dense).
//
// Dense update: Corollary 1's schedule in eq. (9) written as a recurrence. Corollary 1's D is the L2
// diameter of F, so on the box it grows with the dimension: D = 2R sqrt(d).
//   G += ||g_t||^2,  abar_t = 2 sqrt(G)/D,  alpha_t = abar_t - abar_{t-1},
//   u_{t+1} = (abar_{t-1} u_t + alpha_t w_t - g_t)/abar_t,  w_{t+1} = clip(u_{t+1}, -R, R).
// Lazy form: for a coordinate without gradient, u - clip(u) shrinks by abar_{t-1}/abar_t each round and
// never crosses the boundary, so the played clip(u) is constant and the slot stores (u, abar) at its last
// update; on its next update u_t = c + (u_last - c) abar_last/abar_{t-1} with c = clip(u_last), then the
// recurrence above. D/2 = R sqrt(2^b) makes the steps huge, so ftprl-diag or the ball suit hashed features
// better (the box is the worst FTPRL learner in docs/learning_report.md); it is here because the issue asks
// for both sets.
//
// The data-derived radius (--ftprl_radius not given; lepus's variant, not in the paper, which gives no
// default): the box [-R, R]^d is scale-dependent (multiplying every feature by k makes the comparator k times
// smaller, while the schedule, invariant to gradient scaling, plays the same points). So the learner runs the
// exact algorithm above, unchanged, on the features divided by M_t, the largest |x_i| learned from so far,
// this example's included (its score is sum clip(u_i, -c, c) x_i / M_t), on the box [-c, c]^d, c =
// kDataRadiusBall: the comparator's features each add at most c to the score. Guarantee: Corollary 1's bound
// 2D sqrt(G^) (D = 2c sqrt(d), G^ the sum of ||g_t||^2 / M_t^2) against every fixed point of that box in the
// divided coordinates; while M still grows, such a point is a comparator whose weights shrink with 1/M_t, and
// from the last growth on it is the fixed box |w_i| <= c / M_T of the original coordinates. Multiplying every
// feature by k > 0 leaves every prediction unchanged (exactly, up to rounding); --ftprl_radius R restores the
// published algorithm.
#include <cfloat>
#include <cmath>
#include <ostream>

#include "learners/common/merge.h"
#include "learners/common/state.h"
#include "learners/ftprl.h"
#include "learners/ftprl_internal.h"
#include "lepus/errors.h"

namespace lepus {

using ftprl::clip;
using ftprl::kPrefetch;

FtprlConstBoxLearner::FtprlConstBoxLearner(const FtprlOptions& options, const Loss& loss, int bits,
                                           bool test_only)
    : FtprlBase(options.data_radius ? kDataRadiusBall : options.radius, loss, bits, test_only),
      data_radius_(options.data_radius),
      half_diameter_(radius_ * std::sqrt(static_cast<double>(uint64_t{1} << bits))),
      slots_(size_t{1} << bits) {}

double FtprlConstBoxLearner::weight(uint64_t slot) const {
  const double w = clip(slots_[slot & mask_].u, radius_);
  return data_radius_ ? (m_ > 0.0 ? w / m_ : 0.0) : w;
}

double FtprlConstBoxLearner::u(uint64_t slot) const {
  const Slot& s = slots_[slot & mask_];
  if (s.abar == 0.0) return s.u;
  const double c = clip(s.u, radius_);
  return c + (s.u - c) * (s.abar / abar_);
}

double FtprlConstBoxLearner::score(const Example& x) const {
  if (!data_radius_) return clipped_score(slots_, x);
  // sum clip(u_i) x_i / M_t, M_t = max(M, this example's largest |x_i|) as the update will have it.
  const Slot* slots = slots_.data();
  const Feature* fs = x.features.data();
  const size_t n = x.features.size();
  const double r = radius_;
  double s = 0.0, m = m_;
  for (size_t i = 0; i < n; ++i) {
    if (i + ftprl::kPrefetch < n) __builtin_prefetch(&slots[fs[i + ftprl::kPrefetch].index & mask_]);
    const double xi = ftprl::usable(fs[i].value);
    m = std::max(m, std::fabs(xi));
    s += clip(slots[fs[i].index & mask_].u, r) * xi;
  }
  return x.initial + (m > 0.0 ? s / m : 0.0);
}

// --distributed: the ranks' mean point u (every slot caught up first) and mean G, one learner's worth as VW's plain
// average is; every slot then restarts its lazy form at the merged abar.
void FtprlConstBoxLearner::merge(Collective& ranks) {
  if (ranks.size() == 1) return;
  const size_t n = mask_ + 1;
  std::vector<double> mean(n + 1);
  for (size_t i = 0; i < n; ++i) mean[i] = u(i);
  mean[n] = g_sum_;
  common::mean(ranks, mean);
  if (data_radius_) ranks.max(&m_, 1);
  g_sum_ = mean[n];
  abar_ = std::sqrt(g_sum_) / half_diameter_;
  for (size_t i = 0; i < n; ++i)
    if (mean[i] != 0.0 || slots_[i].abar != 0.0) slots_[i] = Slot{mean[i], mean[i] != 0.0 ? abar_ : 0.0};
  common::merge_range(ranks, clip_);
}

void FtprlConstBoxLearner::apply_round(const Example&, const SparseVector& v, double dloss) {
  double sum_x2 = v.norm2();
  if (sum_x2 == 0.0) return;  // g_t = 0
  if (data_radius_) {         // the round on x / M_t: dloss x_i / M_t = (dloss / M_t) x_i
    for (const Coord& c : v) m_ = std::max(m_, std::fabs(c.x));
    dloss /= m_;
  }
  const double big_g = g_sum_ + dloss * dloss * sum_x2;
  // ||g||^2 underflowing to 0 or G overflowing (only via update() with extreme dloss): skipped, counted.
  if (!(big_g > 0.0) || !(big_g <= DBL_MAX)) [[unlikely]] {
    ++safeguards_;
    return;
  }
  const double a_old = abar_;
  const double a_new = std::sqrt(big_g) / half_diameter_;
  const double alpha = std::max(0.0, a_new - a_old);
  Slot* const slots = slots_.data();
  const double r = radius_;
  const size_t n = v.size();
  for (size_t k = 0; k < n; ++k) {
    if (k + kPrefetch < n) __builtin_prefetch(&slots[v[k + kPrefetch].slot], 1);
    Slot& s = slots[v[k].slot];
    const double c = clip(s.u, r);  // the point played this round
    const double u = s.abar > 0.0 ? c + (s.u - c) * (s.abar / a_old) : s.u;
    s.u = (a_old * u + alpha * c - dloss * v[k].x) / a_new;
    s.abar = a_new;
  }
  g_sum_ = big_g;
  abar_ = a_new;
}

std::vector<std::string> FtprlConstBoxLearner::describe() const {
  if (data_radius_)
    return {"ftprl_radius = data: " + ftprl::num(radius_) + " / the largest |x_i| so far", "ftprl_set = box",
            "feasible set = box |w_i| <= " + ftprl::num(radius_) + " / max |x_i|"};
  return {"ftprl_radius = " + ftprl::num(radius_), "ftprl_set = box",
          "feasible set = box |w_i| <= " + ftprl::num(radius_) +
              ", L2 diameter D = " + ftprl::num(2.0 * half_diameter_)};
}

// State "ftprl-const-box-2": the data-derived radius flag and M, then as "ftprl-const-box" (which still loads,
// as a given radius): R or c, the label range, G, abar, the slots (u, abar; readable: w_i first).
template <class Self, class V>
void FtprlConstBoxLearner::state(Self& self, V& v) {
  bool data = false;
  if (v.version({"ftprl-const-box-2", "ftprl-const-box"}) == 1) {
    v.absent(self.data_radius_, false);
    v.absent(self.m_, 0.0);
  } else {
    data = v.flag("data_radius", self.data_radius_);
    v.number("M", self.m_, common::kNonNegative);
  }
  v.number("ftprl_radius", self.radius_, common::kPositive);
  v.clip(self.clip_);
  v.number("G", self.g_sum_, common::kNonNegative);
  v.number("abar", self.abar_, common::kNonNegative);
  v.slots(
      self.slots_, [](const Slot&) { return true; },
      [&self, data](std::ostream& out, size_t, const Slot& s) {
        const double inv = data ? (self.m_ > 0.0 ? 1.0 / self.m_ : 0.0) : 1.0;  // w_i = clip(u_i) / M
        out << clip(s.u, self.radius_) * inv << " " << s.u << " " << s.abar;
      });
}

void FtprlConstBoxLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void FtprlConstBoxLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void FtprlConstBoxLearner::load(ModelReader& in) {
  common::load_state(*this, in);
  half_diameter_ = radius_ * std::sqrt(static_cast<double>(slots_.size()));
}

}  // namespace lepus

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
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <ostream>
#include <type_traits>

#include "learners/ftprl.h"
#include "learners/common/merge.h"
#include "learners/ftprl_internal.h"
#include "lepus/errors.h"

namespace lepus {

using ftprl::clip;
using ftprl::kPrefetch;

FtprlDiagLearner::FtprlDiagLearner(const FtprlOptions& options, const Loss& loss, int bits, bool test_only)
    : FtprlBase(options.radius, loss, bits, test_only), slots_(size_t{1} << bits) {}

double FtprlDiagLearner::weight(uint64_t slot) const { return clip(slots_[slot & mask_].u, radius_); }

double FtprlDiagLearner::score(const Example& x) const { return clipped_score(slots_, x); }

void FtprlDiagLearner::apply_round(const Example&, const SparseVector& v, double dloss) {
  Slot* const slots = slots_.data();
  const double r = radius_;
  const size_t n = v.size();
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
    const double w = clip(u, r);  // the point played this round
    // lambda_t = (s_new - s_old)/R >= 0 (Q_t >= 0, Theorem 2): when g^2 vanishes next to G, rounding could
    // make it a negative ulp; clamp it.
    const double s_new = std::max(std::sqrt(big_g), s_old);
    s.u = (s_old * u + (s_new - s_old) * w - r * g) / s_new;
    s.s = s_new;
  }
}

std::vector<std::string> FtprlDiagLearner::describe() const {
  return {"ftprl_radius = " + ftprl::num(radius_), "feasible set = box |w_i| <= " + ftprl::num(radius_)};
}

void FtprlDiagLearner::write_readable(std::ostream& out) const {
  out << "ftprl_radius " << radius_ << "\n";
  clip_.write_readable(out);
  slots_.for_each_touched([&](size_t i) {
    const Slot& s = slots_[i];
    if (s.u == 0.0 && s.s == 0.0) return;
    out << i << ":" << clip(s.u, radius_) << " " << s.u << " " << s.s * s.s << "\n";
  });
}

// --distributed: VW's weighted average of each slot (u, s) with weights G = s^2 (common::weighted_average), as VW
// merges sgd's adaptive sums; w = clip(u, -R, R) stays in the box.
void FtprlDiagLearner::merge(Collective& ranks) {
  static_assert(sizeof(Slot) == 2 * sizeof(double) && std::is_standard_layout_v<Slot>);
  common::weighted_average(ranks, &slots_[0].u, mask_ + 1, 2, [](const double* r) { return r[1] * r[1]; });
  common::merge_range(ranks, clip_);
}

void FtprlDiagLearner::save(ModelWriter& out) const {
  out.put_string("ftprl-diag");
  out.put_f64(radius_);
  clip_.save(out);
  common::save_slots(out, slots_);
}

void FtprlDiagLearner::load(ModelReader& in) {
  if (in.get_string("ftprl learner") != "ftprl-diag")
    throw ModelFormatError(in.source() + ": not an ftprl-diag model state");
  radius_ = ftprl::checked(in.get_f64("ftprl radius"), in, "radius", true);
  clip_.load(in, "ftprl");
  common::load_slots(in, slots_, "ftprl-diag");
}

}  // namespace lepus

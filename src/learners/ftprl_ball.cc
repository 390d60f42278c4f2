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
#include <cfloat>
#include <cmath>
#include <ostream>

#include "learners/common/merge.h"
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
    : FtprlBase(options.radius, loss, bits, test_only),
      spec_(options.scale),
      spec_text_(options.scale_text.empty() ? "*:1" : options.scale_text),
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
      t += s.a * s.v * ftprl::usable(fs[i].value);
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
    // ||x^||^2 with x^_i = a_i x_i; a slot updated for the first time takes its namespace's scale.
    for (size_t k = 0; k < n; ++k) {
      const double a0 = slots[v[k].slot].a;
      const double xs = (a0 != 0.0 ? a0 : spec_.of_feature(x, v[k].first)) * v[k].x;
      sum_x2 += xs * xs;
    }
  } else {
    sum_x2 = v.norm2();
  }
  if (sum_x2 == 0.0) return;  // g^_t = 0
  const double big_g = g_sum_ + dloss * dloss * sum_x2;
  // ||g^||^2 underflowing to 0 or G overflowing (only via update() with extreme dloss): skipped, counted.
  if (!(big_g > 0.0) || !(big_g <= DBL_MAX)) [[unlikely]] {
    ++safeguards_;
    return;
  }
  const double a_old = abar_;
  const double a_new = std::sqrt(big_g) / radius_;
  const double alpha = std::max(0.0, a_new - a_old);
  const double c = projection_factor();  // w^_t = c u^_t, the point played this round
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
    std::vector<double> a(n);
    for (size_t i = 0; i < n; ++i) a[i] = slots_[i].a;
    ranks.max(a.data(), n);
    for (size_t i = 0; i < n; ++i)
      if (a[i] != slots_[i].a) slots_[i].a = a[i];
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
  std::vector<std::string> lines = {"ftprl_radius = " + ftprl::num(radius_)};
  if constexpr (kScaled) {
    lines.push_back("ftprl_scale = " + spec_text_);
    lines.push_back("feasible set = ellipsoid sum (w_i/a_i)^2 <= " + ftprl::num(radius_) + "^2");
  } else {
    lines.push_back("ftprl_set = ball");
    lines.push_back("feasible set = ball ||w||_2 <= " + ftprl::num(radius_));
  }
  return lines;
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::write_readable(std::ostream& out) const {
  out << "ftprl_radius " << radius_ << "\n";
  clip_.write_readable(out);
  if constexpr (kScaled) {
    out << "ftprl_scale " << spec_text_ << "\n";
  } else {
    out << "ftprl_set ball\n";
  }
  out << "G " << g_sum_ << "\n";
  out << "abar " << abar_ << "\n";
  out << "norm " << std::sqrt(norm2_) << "\n";
  const double c = projection_factor();
  slots_.for_each_touched([&](size_t i) {
    const Slot& s = slots_[i];
    if (common::all_zero(s)) return;
    const double u = sigma_ * s.v;
    out << i << ":" << c * u * scale_of(s) << " " << u;
    if constexpr (kScaled) out << " " << s.a;
    out << "\n";
  });
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::save(ModelWriter& out) const {
  out.put_string(kScaled ? "ftprl-scale" : "ftprl-const-ball");
  out.put_f64(radius_);
  clip_.save(out);
  if constexpr (kScaled) out.put_string(spec_text_);
  out.put_f64(g_sum_);
  out.put_f64(abar_);
  out.put_f64(sigma_);
  out.put_f64(norm2_);
  out.put_u64(updates_);
  common::save_slots(out, slots_);
}

template <bool kScaled>
void FtprlBallLearner<kScaled>::load(ModelReader& in) {
  const std::string tag = kScaled ? "ftprl-scale" : "ftprl-const-ball";
  if (in.get_string("ftprl learner") != tag)
    throw ModelFormatError(in.source() + ": not an " + tag + " model state");
  radius_ = ftprl::checked(in.get_f64("ftprl radius"), in, "radius", true);
  clip_.load(in, "ftprl");
  if constexpr (kScaled) {
    spec_text_ = in.get_string("ftprl scale spec");
    try {
      spec_ = FtprlScaleSpec::parse(spec_text_);
    } catch (const ConfigError& e) {
      throw ModelFormatError(in.source() + ": " + e.what());
    }
  }
  g_sum_ = ftprl::checked(in.get_f64("ftprl G"), in, "G");
  abar_ = ftprl::checked(in.get_f64("ftprl abar"), in, "abar");
  sigma_ = ftprl::checked(in.get_f64("ftprl sigma"), in, "sigma", true);
  norm2_ = ftprl::checked(in.get_f64("ftprl norm"), in, "norm");
  if (g_sum_ < 0.0 || abar_ < 0.0 || norm2_ < 0.0)
    throw ModelFormatError(in.source() + ": ftprl G, abar or norm is negative");
  updates_ = in.get_u64("ftprl update count");
  common::load_slots(in, slots_, kScaled ? "ftprl-scale" : "ftprl-const");
  if constexpr (kScaled) {
    slots_.for_each_touched([&](size_t i) {
      const Slot& s = slots_[i];
      if (s.a < 0.0 || (s.a == 0.0 && s.v != 0.0))
        throw ModelFormatError(in.source() + ": ftprl-scale slot without a valid scale");
    });
  }
}

template class FtprlBallLearner<false>;
template class FtprlBallLearner<true>;

}  // namespace lepus

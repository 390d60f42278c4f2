// KORS: see kors.h for the algorithm, its paper and equations.
#include "sketch/kors.h"

#include <algorithm>
#include <cmath>

#include "lepus/errors.h"

namespace lepus {

Kors::Kors(const kernels::Kernel& kernel, const KorsOptions& options) : kernel_(kernel), opt_(options) {
  if (!(opt_.alpha > 0.0) || !std::isfinite(opt_.alpha)) throw ConfigError("KORS: alpha must be > 0");
  if (!(opt_.eps > 0.0 && opt_.eps < 1.0)) throw ConfigError("KORS: epsilon must be in (0, 1)");
  if (!(opt_.beta > 0.0)) throw ConfigError("KORS: beta must be > 0");
}

double Kors::leverage(kernels::PointRef x, double d) const {
  const size_t n = points_.size();
  k_.resize(static_cast<Eigen::Index>(n));
  points_.row(kernel_, x, k_.data());
  for (size_t i = 0; i < n; ++i) {
    const auto j = static_cast<Eigen::Index>(i);
    k_(j) = d_[i] * d * k_(j) / std::sqrt(p_[i]);
  }
  inverse_.solve(k_, v_);
  const double kxx = d * d * kernel_.self(x);
  // Clamped at 0 against cancellation when x lies in the dictionary's span (Calandriello, Lazaric, Valko,
  // ICML 2017: τ̃ >= 0 by Eq. (4)).
  return std::max(0.0, (kxx - (n > 0 ? k_.dot(v_) : 0.0)) / opt_.alpha);
}

double Kors::score(kernels::PointRef x, double d) const {
  if (d == 0.0) return 0.0;
  const double q = leverage(x, d);
  return (1.0 + opt_.eps) * q / (1.0 + q);
}

Kors::Step Kors::step(kernels::PointRef x, double d, double u) {
  Step s;
  if (d == 0.0) return s;
  const double q = leverage(x, d);
  s.tau = (1.0 + opt_.eps) * q / (1.0 + q);
  s.p = std::min(opt_.beta * s.tau, 1.0);
  s.kept = u < s.p;
  if (!s.kept) return s;
  // Border with the column c k̄_I (c = 1/√p): v = N⁻¹(c k̄) = c v_, Schur complement α(1 + q/p).
  const double c = 1.0 / std::sqrt(s.p);
  v_ *= c;
  inverse_.border(v_, opt_.alpha * (1.0 + q / s.p));
  points_.add(x);
  d_.push_back(d);
  p_.push_back(s.p);
  return s;
}

void Kors::save(ModelWriter& out) const {
  points_.save(out);
  for (size_t i = 0; i < d_.size(); ++i) {
    out.put_f64(d_[i]);
    out.put_f64(p_[i]);
  }
  inverse_.save(out);
}

void Kors::load(ModelReader& in, const std::string& who) {
  kernels::PointStore points;
  points.load(in, who + " dictionary");
  std::vector<double> d(points.size()), p(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    d[i] = in.get_f64("dictionary scale");
    p[i] = in.get_f64("dictionary probability");
    if (!std::isfinite(d[i]) || !(p[i] > 0.0 && p[i] <= 1.0))
      throw ModelFormatError(in.source() + ": " + who + ": a dictionary weight out of range");
  }
  BorderedInverse inverse;
  inverse.load(in, who + " dictionary");
  if (inverse.size() != points.size())
    throw ModelFormatError(in.source() + ": " + who + ": dictionary and inverse sizes differ");
  points_.assign(std::move(points));
  d_.swap(d);
  p_.swap(p);
  inverse_ = std::move(inverse);
}

}  // namespace lepus

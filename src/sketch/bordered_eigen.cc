// The bordered eigendecomposition: see bordered_eigen.h for the algorithm, its papers and equations.
#include "sketch/bordered_eigen.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lepus {
namespace {
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxIterations = 80;

// The root of a u² + b u + c = 0 strictly inside (lo, hi), from the two roots' stable forms; NaN if neither
// is.
[[gnu::always_inline]] inline double root_in(double a, double b, double c, double lo, double hi) {
  auto inside = [&](double u) { return u > lo && u < hi; };
  if (a == 0.0) {
    const double u = b != 0.0 ? -c / b : kNaN;
    return inside(u) ? u : kNaN;
  }
  const double q = -0.5 * (b + std::copysign(std::sqrt(std::max(b * b - 4.0 * a * c, 0.0)), b));
  const double u1 = q / a, u2 = q != 0.0 ? c / q : kNaN;
  if (inside(u1)) return u1;
  if (inside(u2)) return u2;
  return kNaN;
}
}  // namespace

bool BorderedEigen::root(const Eigen::Ref<const Eigen::VectorXd>& d, Eigen::Index j, Eigen::Index p,
                         double beta, double znorm) {
  // ψ at the offset τ from pole o: c0 + τ + Σ_i z_i² / (δ_i − τ), δ_i = d_i − d_o, c0 = d_o − β. The poles
  // i < j lie left of the root's interval ("left" sum, every term < 0), the others right of it (with c0 + τ:
  // "right"); err bounds the terms' absolute sum. Value and parts are λ's, whichever pole τ is measured from.
  struct Psi {
    double left = 0.0, dleft = 0.0, right = 0.0, dright = 0.0, err = 0.0;
    double value() const { return left + right; }
  };
  double c0 = 0.0, scale = 0.0;
  const double* delta = delta_.data();
  const double* z2 = z2_.data();
  auto psi_at = [&](double tau) {  // plain loops: the divisions dominate, p is small
    ++evaluations_;
    Psi s;
    for (Eigen::Index i = 0; i < j; ++i) {
      const double r = 1.0 / (delta[i] - tau), t = z2[i] * r;
      s.left += t;
      s.dleft += t * r;
    }
    for (Eigen::Index i = j; i < p; ++i) {
      const double r = 1.0 / (delta[i] - tau), t = z2[i] * r;
      s.right += t;
      s.dright += t * r;
    }
    s.err = s.right - s.left + scale + std::fabs(tau);
    s.right += c0 + tau;
    s.dright += 1.0;
    return s;
  };
  auto set_origin = [&](Eigen::Index o) {
    const double origin = d(o);
    if (o != delta_origin_)  // the last root's second origin is often this one's first
      for (Eigen::Index i = 0; i < p; ++i) delta_(i) = d(i) - origin;
    delta_origin_ = o;
    c0 = origin - beta;
    scale = std::fabs(origin) + std::fabs(beta);  // c0 carries rounding of this size
    origin_(j) = static_cast<int>(o);
  };
  double lo, hi, tau;  // the bracket in τ, ψ(lo) < 0 < ψ(hi) (an end may be a pole), and the iterate
  Psi s;
  if (j == 0) {  // below d_0, above min(d_0, β) − ||z|| (Weyl's inequality)
    set_origin(0);
    lo = std::min(0.0, beta - d(0)) - znorm * (1.0 + 4.0 * kEps) - kEps * std::fabs(d(0));
    hi = 0.0;
    tau = 0.5 * lo;
    s = psi_at(tau);
  } else if (j == p) {  // above d_{p−1}, below max(d_{p−1}, β) + ||z||
    set_origin(p - 1);
    lo = 0.0;
    hi = std::max(0.0, beta - d(p - 1)) + znorm * (1.0 + 4.0 * kEps) + kEps * std::fabs(d(p - 1));
    tau = 0.5 * hi;
    s = psi_at(tau);
  } else {  // between d_{j−1} and d_j: measured from the nearer, by ψ's sign at the midpoint (the first
            // iterate)
    set_origin(j - 1);
    const double mid = 0.5 * (d(j) - d(j - 1));
    s = psi_at(mid);
    if (s.value() >= 0.0) {
      lo = 0.0;
      hi = tau = mid;
    } else {
      const double left = d(j - 1) - d(j);  // in the offsets from d_j
      set_origin(j);
      lo = tau = left + mid;
      hi = 0.0;
    }
  }
  const double a = j > 0 ? delta_(j - 1) : 0.0, b = j < p ? delta_(j) : 0.0;  // the interval's poles
  for (int it = 0; it < kMaxIterations; ++it) {
    const double f = s.value();
    if (std::fabs(f) <= kEps * static_cast<double>(p + 2) * s.err) break;  // ψ's rounding error bound
    (f < 0.0 ? lo : hi) = tau;
    if (hi - lo <= 2.0 * kEps * std::max(std::fabs(lo), std::fabs(hi))) break;
    // The model (bordered_eigen.h): ψ(u) ≈ C + Q/(a − u) + S/(b − u) with ψ's value and slope at τ, the pole
    // τ is measured from keeping its own weight z_o² (fixed weight: a root hugging its pole is found in two
    // or three steps, against four or five when both weights are fitted to the slope). At the ends, where
    // one side has no pole, the rest of the slope goes to the linear term: C + κu.
    double next;
    if (j == 0) {  // (C + κu)(b − u) + S = 0: the pole keeps its weight, the rest's slope goes to κ
      const double S = z2_(0), kappa = std::max(s.dright - S / ((b - tau) * (b - tau)), 1.0);
      const double C = f - kappa * tau - S / (b - tau);
      next = root_in(kappa, C - kappa * b, -(C * b + S), lo, hi);
    } else if (j == p) {  // (C + κu)(a − u) + Q = 0
      const double Q = z2_(p - 1), kappa = std::max(s.dleft + s.dright - Q / ((a - tau) * (a - tau)), 1.0);
      const double C = f - kappa * tau - Q / (a - tau);
      next = root_in(kappa, C - kappa * a, -(C * a + Q), lo, hi);
    } else {  // C (a − u)(b − u) + Q (b − u) + S (a − u) = 0
      double Q, S;
      const double slope = s.dleft + s.dright;
      if (a == 0.0) {
        Q = z2_(j - 1);
        S = std::max(slope - Q / ((a - tau) * (a - tau)), 0.0) * (b - tau) * (b - tau);
      } else {
        S = z2_(j);
        Q = std::max(slope - S / ((b - tau) * (b - tau)), 0.0) * (a - tau) * (a - tau);
      }
      const double C = f - Q / (a - tau) - S / (b - tau);
      next = root_in(C, -(C * (a + b) + Q + S), C * a * b + Q * b + S * a, lo, hi);
    }
    if (std::isnan(
            next)) {  // the model's root is not inside the bracket (rounding near a pole): Newton's step
      const double newton = tau - f / (s.dleft + s.dright);
      if (newton > lo && newton < hi) next = newton;
    }
    const bool bisect = std::isnan(next);
    if (bisect) {  // geometric while the bracket spans orders of magnitude past 0
      next = lo > 0.0 && hi > 16.0 * lo   ? std::sqrt(lo * hi)
             : hi < 0.0 && lo < 16.0 * hi ? -std::sqrt(lo * hi)
                                          : 0.5 * (lo + hi);
    }
    // A model or Newton step this small leaves an error at rounding level (quadratic convergence); a bisection
    // step only when it is at rounding level itself.
    const bool settled = std::fabs(next - tau) <= (bisect ? 2.0 * kEps : 1e-9) * std::fabs(next);
    tau = next;
    if (settled) break;
    s = psi_at(tau);
    if (it + 1 == kMaxIterations) return false;
  }
  tau_(j) = tau;
  return true;
}

bool BorderedEigen::compute(const Eigen::Ref<const Eigen::VectorXd>& d,
                            const Eigen::Ref<const Eigen::MatrixXd>& u, Eigen::Index p,
                            const Eigen::Ref<const Eigen::VectorXd>& b, double beta, Eigen::VectorXd& values,
                            Eigen::MatrixXd& vectors) {
  const Eigen::Index n = p + 1;
  evaluations_ = 0;
  if (p == 0) {
    values(0) = beta;
    vectors(0, 0) = 1.0;
    return true;
  }
  if (z_.size() < p) {
    for (Eigen::VectorXd* v : {&z_, &z2_, &delta_, &zhat_}) v->resize(p);
    tau_.resize(n);
    origin_.resize(n);
  }
  auto z = z_.head(p);
  z.noalias() = u.topLeftCorner(p, p).transpose() * b.head(p);
  const double znorm = z.norm();
  const double norm = std::max({std::fabs(d(0)), std::fabs(d(p - 1)), std::fabs(beta)}) + znorm;
  const double tol = 8.0 * kEps * norm;  // deflation's threshold (LAPACK's dlaed2)
  for (Eigen::Index i = 0; i < p; ++i) {
    if (!(std::fabs(z(i)) > tol)) return false;
    if (i + 1 < p && !(d(i + 1) - d(i) > tol)) return false;
    z2_(i) = z(i) * z(i);
  }
  delta_origin_ = -1;
  for (Eigen::Index j = 0; j < n; ++j)
    if (!root(d, j, p, beta, znorm)) return false;
  if (diff_.rows() < p || diff_.cols() < n) {  // grown only: no allocation per call
    diff_.resize(p, n);
    v_.resize(n, n);
  }
  // diff(i, j) = λ_j − d_i = τ_j − (d_i − d_o).
  auto diff = diff_.topLeftCorner(p, n);
  for (Eigen::Index j = 0; j < n; ++j) diff.col(j) = (d(origin_(j)) - d.head(p).array()) + tau_(j);
  // ẑ (bordered_eigen.h): the root k is below d_k, the root k + 1 above it.
  for (Eigen::Index k = 0; k < p; ++k) {
    double prod = -diff(k, k) * diff(k, k + 1);
    for (Eigen::Index j = 0; j < k; ++j) prod *= diff(k, j) / (d(j) - d(k));
    for (Eigen::Index j = k + 2; j < n; ++j) prod *= diff(k, j) / (d(j - 1) - d(k));
    zhat_(k) = std::copysign(std::sqrt(std::max(prod, 0.0)), z(k));
  }
  auto v = v_.topLeftCorner(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    v.col(j).head(p) = zhat_.head(p).array() / diff.col(j).array();
    v(p, j) = 1.0;
    v.col(j) *= 1.0 / v.col(j).norm();  // one division, not n
    values(j) = d(origin_(j)) + tau_(j);
  }
  vectors.topLeftCorner(p, n).noalias() = u.topLeftCorner(p, p) * v.topRows(p);
  vectors.row(p).head(n) = v.row(p);
  return true;
}

}  // namespace lepus

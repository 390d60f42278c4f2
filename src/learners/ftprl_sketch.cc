// ftprl-full --matrix sketch: see ftprl_sketch.h for the algorithm, its papers and equations.
#include "learners/ftprl_sketch.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "dist/collective.h"
#include "learners/common/merge.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {
// Not the full mode's version: the two refuse each other's models. 0xF5C2 added G's eigendecomposition (a resumed
// run borders the same one, so it continues bit for bit).
constexpr uint32_t kStateVersion = 0xF5C3;  // 0xF5C3: the data-derived radius (flag, X)
constexpr uint64_t kSketchCap = uint64_t{1} << 24;
// G's eigenvalues below this times the largest count as 0: the full mode's tolerance (M's below 1e-14 of the
// largest; G = BBᵀ and M = BᵀB share their nonzero eigenvalues).
constexpr double kRankTolerance = 1e-14;
}  // namespace

FtprlSketchLearner::FtprlSketchLearner(const FtprlFullOptions& options, uint32_t rank, const Loss& loss,
                                       int bits, bool test_only)
    : opt_(options),
      radius_(options.radius),
      rank_(rank),
      loss_(loss),
      bits_(bits),
      clip_(loss.initial_range(), test_only),
      sketch_(rank, kSketchCap),
      builder_(bits) {
  if (!(opt_.radius > 0.0) || !std::isfinite(opt_.radius))
    throw ConfigError("ftprl-full: the radius must be > 0");
  bu_.setZero(2 * Eigen::Index{rank});
  e_.setZero(2 * Eigen::Index{rank});
  c_.setZero(2 * Eigen::Index{rank});
  for (Eigen::VectorXd* v : {&bw_, &t_, &cy_, &gc_, &av_, &dv_, &coef_}) v->setZero(2 * Eigen::Index{rank});
  for (Eigen::VectorXd* v : {&lam_, &lam_next_}) v->setZero(2 * Eigen::Index{rank});
  for (Eigen::MatrixXd* v : {&vec_, &vec_next_}) v->setZero(2 * Eigen::Index{rank}, 2 * Eigen::Index{rank});
}

double FtprlSketchLearner::dot_u(const SparseVector& x) const {
  const std::span<const Coord> xs(x.begin(), x.size());
  const Eigen::VectorXd& sx = sketch_.base_product(xs);
  double xv = 0.0;
  if (alpha_ != 0.0) {
    const std::vector<uint32_t>& pos = sketch_.positions(xs);  // found with S x
    for (size_t i = 0; i < x.size(); ++i)
      if (pos[i] != CompactIndex::kNone) xv += v_[pos[i]] * x[i].x;
  }
  const Eigen::Index k = sketch_.width();
  return alpha_ * xv + e_.head(k).dot(sx.head(k));
}

FtprlSketchLearner::Dots FtprlSketchLearner::dots(const SparseVector& x) const {
  Dots d;
  const Eigen::Index r = sketch_.rows();
  if (r == 0) return d;  // nothing learned yet: w = 0 (and u = 0)
  if (omega_ != 0.0 || alpha_ != 0.0) d.xu = dot_u(x);
  const double s = omega_ != 0.0 ? omega_ * d.xu : 0.0;
  sketch_.multiply(std::span<const Coord>(x.begin(), x.size()), p_);
  d.xw = s + c_.head(r).dot(p_.head(r));
  return d;
}

void FtprlSketchLearner::fold() {
  const Eigen::Index r = sketch_.rows();
  const auto G = sketch_.gram().topLeftCorner(r, r);
  auto gc = gc_.head(r);
  gc.noalias() = G * c_.head(r);
  uu_ =
      std::max(omega_ * omega_ * uu_ + 2.0 * omega_ * c_.head(r).dot(bu_.head(r)) + c_.head(r).dot(gc), 0.0);
  bu_.head(r) = omega_ * bu_.head(r) + gc;
  alpha_ *= omega_;
  e_ *= omega_;
  sketch_.to_base(c_, e_);
  omega_ = 1.0;
  c_.setZero();
}

void FtprlSketchLearner::materialize() {
  std::vector<double> out;
  sketch_.base_transpose(e_, out);  // Sᵀe, one number per column
  uu_ = 0.0;
  for (size_t pos = 0; pos < v_.size(); ++pos) {
    v_[pos] = alpha_ * v_[pos] + out[pos];
    uu_ += v_[pos] * v_[pos];
  }
  alpha_ = 1.0;
  e_.setZero();
}

Prediction FtprlSketchLearner::predict(const Example& x) const {
  return clip_.of(common::to_float(x.initial + dots(builder_.build(x)).xw, safeguards_));
}

Prediction FtprlSketchLearner::learn(const Example& x) {
  clip_.see(x);
  const SparseVector& v = builder_.build(x);
  const Dots d = dots(v);  // predict()'s, kept for the update
  const Prediction p = clip_.of(common::to_float(x.initial + d.xw, safeguards_));
  if (common::teaches(x)) step(v, ftprl_full_dloss(loss_, p, x, clip_, safeguards_), d);
  return p;
}

void FtprlSketchLearner::update(const Example& x, double dloss) {
  const SparseVector& v = builder_.build(x);
  step(v, dloss, dots(v));
}

void FtprlSketchLearner::step(const SparseVector& v, double dloss, const Dots& d) {
  if (dloss == 0.0) return;
  safeguards_ += v.dropped;
  if (v.size() == 0) return;
  const Eigen::Index m = rank_;
  Eigen::Index n = sketch_.rows();
  const double a = std::fabs(dloss), g2 = a * a * v.norm2();
  const double top = n > 0 ? sketch_.gram().topLeftCorner(n, n).diagonal().maxCoeff() : 0.0;
  // The sketch's entries stay below 1e300 (as the full mode's M): such a gradient is skipped and counted.
  if (!(g2 > 0.0) || !(g2 + top < 1e300)) [[unlikely]] {
    ++safeguards_;
    return;
  }
  const double xw = d.xw;  // x . w_t
  double xu = d.xu;        // x . u
  if (n == 2 * m) {        // the append below shrinks: c must not refer to the rows it rotates
    fold();
    if (sketch_.append_rebases()) materialize();  // nor e to the base it replaces
    xu = xw;
  }
  Eigen::VectorXd& bw = bw_;  // B w_t
  bw.setZero();
  if (n > 0) bw.head(n).noalias() = sketch_.gram().topLeftCorner(n, n) * c_.head(n);
  if (n > 0) bw.head(n) += omega_ * bu_.head(n);
  Eigen::VectorXd* const companions[2] = {&bu_, &bw};
  // A shrink decomposes G as the last update did (lam_, vec_): that decomposition is passed on.
  const FrequentDirections::GramEigen last{lam_, vec_};
  const bool known = eig_current_;
  eig_current_ = false;
  const bool shrank = sketch_.append(std::span<const Coord>(v.begin(), v.size()), a, companions,
                                     known && n == 2 * m ? &last : nullptr);  // ConfigError past the cap
  v_.resize(sketch_.columns(), 0.0);
  if (e_.size() < sketch_.width()) e_.conservativeResizeLike(Eigen::VectorXd::Zero(2 * sketch_.width()));
  const Eigen::Index p = shrank ? m : n;  // the rows before the new one
  n = sketch_.rows();
  bu_(n - 1) = a * xu;
  bw(n - 1) = a * xw;
  c_(n - 1) = 0.0;

  // Q_{1:t} from G = U diag(σ²) Uᵀ and Δ: G borders the last G (or, after a shrink, the diagonal one it left).
  const auto G = sketch_.gram().topLeftCorner(n, n);
  if (shrank) {
    vec_.topLeftCorner(m, m).setZero();
    for (Eigen::Index j = 0; j < m; ++j) {  // the shrink leaves them largest first
      lam_(j) = G(m - 1 - j, m - 1 - j);
      vec_(m - 1 - j, j) = 1.0;
    }
  }
  const bool bordered =
      (shrank || (known && p + 1 == n)) && bordered_.compute(lam_.head(p), vec_.topLeftCorner(p, p), p,
                                                             G.col(p).head(p), G(p, p), lam_next_, vec_next_);
  if (!bordered) {
    eig_.compute(G);
    lam_next_.head(n) = eig_.eigenvalues();
    vec_next_.topLeftCorner(n, n) = eig_.eigenvectors();
  }
  lam_.swap(lam_next_);
  vec_.swap(vec_next_);
  eig_current_ = true;
  const auto s2 = lam_.head(n);  // ascending
  const auto U = vec_.topLeftCorner(n, n);
  if (opt_.data_radius) {  // R_t = c / X_t, X_t including this example (μ is absolute: y_t's κ stays exact)
    x_max_ = std::max(x_max_, std::sqrt(v.norm2()));
    radius_ = opt_.radius / x_max_;
  }
  const double delta = sketch_.shrinkage(), s = std::sqrt(delta), R = radius_;
  const double floor = kRankTolerance * std::max(s2(n - 1), 0.0);
  auto kept = [&](Eigen::Index k) { return s2(k) > floor; };
  // y_t = κ w_t + Bᵀ U diag(1/(sqrt(Δ + σ²) + s)) Uᵀ (B w_t) / R − g_t = σ_y v + Bᵀ c_y.
  const double kappa = (s + mu_ * R) / R;
  auto t = t_.head(n);  // (the scratch vectors' first n entries: no allocation per example)
  t.noalias() = U.transpose() * bw.head(n);
  for (Eigen::Index k = 0; k < n; ++k) t(k) = kept(k) ? t(k) / ((std::sqrt(delta + s2(k)) + s) * R) : 0.0;
  auto cy = cy_.head(n);
  cy.noalias() = U * t;
  cy += kappa * c_.head(n);
  cy(n - 1) -= dloss > 0.0 ? 1.0 : -1.0;  // g_t = sign(l') times the row just appended
  const double sy = kappa * omega_;
  // a = Vᵀy = Σ⁻¹ Uᵀ (B y), D = sqrt(Δ + σ²) − s, ||y_⊥||² = ||y||² − ||a||² (0 while Δ = 0: y is in the span).
  auto gc = gc_.head(n);
  gc.noalias() = G * cy;
  auto by = coef_.head(n);  // B y
  by = sy * bu_.head(n) + gc;
  auto ub = t;
  ub.noalias() = U.transpose() * by;
  auto av = av_.head(n), dv = dv_.head(n);
  av.setZero();
  dv.setZero();
  for (Eigen::Index k = 0; k < n; ++k) {
    if (!kept(k)) continue;
    av(k) = ub(k) / std::sqrt(s2(k));
    dv(k) = s2(k) / (std::sqrt(delta + s2(k)) + s);
  }
  double perp2 = 0.0;
  if (s > 0.0) {
    const double yy = sy * sy * uu_ + 2.0 * sy * cy.dot(bu_.head(n)) + cy.dot(gc);
    perp2 = std::max(yy - av.squaredNorm(), 0.0);
  }
  // f(μ) = ||w(μ)||² / R², falling in μ; μ = 0 unless that lies outside the ball. s3 <- Σ_k a_k²/(τ + D_k)³
  // (with ||y_⊥||²/τ³), so f'(μ) = −2R s3.
  auto norm2_at = [&](double mu, double& s3) {
    const double tau = s + mu * R;
    double f = 0.0, c = 0.0;
    if (perp2 > 0.0) {
      f = perp2 / (tau * tau);
      c = f / tau;
    }
    for (Eigen::Index k = 0; k < n; ++k)
      if (dv(k) > 0.0) {
        const double q = 1.0 / (tau + dv(k)), b = av(k) * av(k) * q * q;
        f += b;
        c += b * q;
      }
    s3 = c;
    return f;
  };
  double mu = 0.0, s3 = 0.0, f = norm2_at(0.0, s3);
  if (f > 1.0) {
    // The root of f(μ) = 1 to the full mode's precision (a bracket [lo, hi], f(lo) > 1 >= f(hi), down to
    // hi − lo <= 1e-15 hi; μ = hi, feasible), by Newton's method on φ(μ) = f^{-1/2} − 1 = R/||w(μ)|| − 1: φ is
    // concave and increasing (J. J. Moré and D. C. Sorensen, "Computing a Trust Region Step", SIAM J. Sci. Stat.
    // Comput. 4(3), 1983, Section 4), so steps from lo, μ <- μ + f (sqrt(f) − 1) / (R s3), stay below the root
    // and converge quadratically; once a step falls below the bracket's tolerance, the point that much above lo
    // is tried as hi. Steps leaving the bracket (rounding) are replaced by bisection.
    double lo = 0.0, hi = std::max(1e-300, dv.maxCoeff() / R), s3_hi;
    while (norm2_at(hi, s3_hi) > 1.0) hi *= 2.0;
    for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
      double x = lo + f * (std::sqrt(f) - 1.0) / (R * s3);
      if (x - lo < 0.5e-15 * hi) x = lo + 0.5e-15 * hi;
      if (!(x > lo && x < hi)) x = lo == 0.0 ? hi / 2.0 : 0.5 * (lo + hi);
      double s3_x;
      const double fx = norm2_at(x, s3_x);
      if (fx > 1.0) {
        lo = x;
        f = fx;
        s3 = s3_x;
      } else {
        hi = x;
      }
    }
    mu = hi;  // feasible
  }
  // w_{t+1} = (Q_{1:t} + μ I)^{-1} y_t as ω v + Bᵀ c.
  const double tau = s + mu * R;
  auto e = coef_.head(n);  // coefficients in U's basis, divided by σ (V = Bᵀ U Σ⁻¹)
  e.setZero();
  for (Eigen::Index k = 0; k < n; ++k) {
    if (!(dv(k) > 0.0)) continue;
    const double f = s > 0.0 ? -(R / tau) * dv(k) / (tau + dv(k)) : R / (tau + dv(k));
    e(k) = f * av(k) / std::sqrt(s2(k));
  }
  if (s > 0.0) {
    omega_ = (R / tau) * sy;
    c_.head(n).noalias() = U * e;
    c_.head(n) += (R / tau) * cy;
  } else {
    omega_ = 0.0;
    c_.head(n).noalias() = U * e;
  }
  c_.tail(2 * m - n).setZero();
  mu_ = mu;
  const double norm = weight_norm();
  if (norm > R) {  // rounding
    omega_ *= R / norm;
    c_ *= R / norm;
  }
}

// --distributed: one learner's worth, as ftprl-const's merge: the ranks' mean point w (inside the ball, which is
// convex), the ranks' mean M~ = Σ_r (B_rᵀB_r + Δ_r I) / N as one sketch (common::merge_sketches), and the ranks'
// mean multiplier μ. The next update's y_t = (Q + μ I) w − g follows from them, as it always
// does (y has no storage of its own). w is written whole into v (ω = α = 1, c = e = 0), over the merged sketch's
// columns, and G's eigendecomposition is recomputed at the next update.
void FtprlSketchLearner::merge(Collective& ranks) {
  if (ranks.size() == 1) return;
  const size_t n = size_t{1} << bits_;
  std::vector<double> w(n + 1, 0.0);
  for (uint32_t p = 0; p < sketch_.columns(); ++p) {
    const uint64_t slot = sketch_.index().slot(p);
    w[slot & (n - 1)] = weight(slot);
  }
  w[n] = mu_;
  common::mean(ranks, w);
  FrequentDirections merged =
      common::merge_sketches(ranks, sketch_, rank_, kSketchCap, [](uint64_t) { return 1.0; }, {});
  for (size_t i = 0; i < n; ++i)
    if (w[i] != 0.0) merged.hold(i);
  sketch_ = std::move(merged);
  v_.assign(sketch_.columns(), 0.0);
  uu_ = 0.0;
  for (uint32_t p = 0; p < sketch_.columns(); ++p) {
    v_[p] = w[sketch_.index().slot(p) & (n - 1)];
    uu_ += v_[p] * v_[p];
  }
  alpha_ = 1.0;
  e_.setZero(std::max<Eigen::Index>(2 * Eigen::Index{rank_}, 2 * sketch_.width()));
  omega_ = 1.0;
  c_.setZero();
  bu_.setZero();
  if (sketch_.rows() > 0) {
    Eigen::VectorXd bw;
    sketch_.multiply_all([&](uint64_t slot) { return w[slot & (n - 1)]; }, bw);
    bu_.head(sketch_.rows()) = bw.head(sketch_.rows());
  }
  mu_ = w[n];
  if (opt_.data_radius) {  // the ranks' largest X: the smallest ball, the mean point shrunk into it
    ranks.max(&x_max_, 1);
    if (x_max_ > 0.0) radius_ = opt_.radius / x_max_;
    const double norm = weight_norm();
    if (norm > radius_) omega_ *= radius_ / norm;
  }
  eig_current_ = false;
  common::merge_range(ranks, clip_);
}

double FtprlSketchLearner::weight_norm() const {
  const Eigen::Index n = sketch_.rows();
  const auto c = c_.head(n);
  const double w2 = omega_ * omega_ * uu_ + 2.0 * omega_ * c.dot(bu_.head(n)) +
                    c.dot(sketch_.gram().topLeftCorner(n, n) * c);
  return std::sqrt(std::max(w2, 0.0));
}

double FtprlSketchLearner::weight(uint64_t slot) const {
  const uint32_t pos = sketch_.index().find(slot);
  if (pos == CompactIndex::kNone) return 0.0;
  Eigen::VectorXd col;
  sketch_.base_column(pos, col);
  double w = omega_ * (alpha_ * v_[pos] + e_.head(col.size()).dot(col));
  sketch_.column(pos, col);
  return w + c_.head(sketch_.rows()).dot(col);
}

std::vector<std::string> FtprlSketchLearner::describe() const {
  if (opt_.data_radius)
    return {"ftprl_radius = data: " + common::number(opt_.radius) + " / the largest ||x|| so far",
            "feasible set = ball ||w||_2 <= " + common::number(opt_.radius) + " / max ||x||",
            "matrix = sketch, rank " + std::to_string(rank_)};
  return {"ftprl_radius = " + common::number(opt_.radius),
          "feasible set = ball ||w||_2 <= " + common::number(opt_.radius),
          "matrix = sketch, rank " + std::to_string(rank_)};
}

// 0xF5C3 (0xF5C2 lacks the data-derived radius's flag and X; 0xF5C1 also the eigendecomposition, which the
// next update recomputes): -b, R, the radius flag and X, the rank, the label range, the sketch, then u = α v +
// Sᵀe (v per sketch column), ||u||², B u, w = ω u + Bᵀc, μ, and G's eigendecomposition when it is current.
// Readable: "slot:w_i" in slot order.
template <class Self, class V>
void FtprlSketchLearner::state(Self& self, V& v) {
  const uint32_t version = v.versions(0xF5C1, kStateVersion);
  v.fixed("bits", static_cast<uint32_t>(self.bits_));
  const double radius = v.number("ftprl_radius", self.opt_.radius, common::kPositive);
  bool data = false;
  double x_max = 0.0;
  if (version == kStateVersion) {
    data = v.flag("data_radius", self.opt_.data_radius);
    x_max = v.number("X", self.x_max_, common::kNonNegative);
  } else {
    v.absent(self.opt_.data_radius, false);
    v.absent(self.x_max_, 0.0);
  }
  const double r_now = data && x_max > 0.0 ? radius / x_max : radius;
  v.derived(self.radius_, r_now);
  v.fixed("rank", self.rank_, "saved with another --rank than this run's");
  v.lines([&self](std::ostream& out) { out << "matrix sketch\nrank " << self.rank_ << "\n"; });
  v.clip(self.clip_);
  const FrequentDirections& sketch = v.part(
      "sketch", self.sketch_, [&self] { return FrequentDirections(self.rank_, kSketchCap); },
      [](std::ostream& out, const FrequentDirections& s) { out << "shrinkage " << s.shrinkage() << "\n"; });
  v.vector("v", self.v_, sketch.columns());
  v.number("alpha", self.alpha_);
  const Eigen::Index k = sketch.width(), n = sketch.rows();
  v.vector("e", self.e_, k, std::max<Eigen::Index>(k, self.e_.size()));
  const double uu = v.number("uu", self.uu_, common::kNonNegative);
  const Eigen::VectorXd& bu = v.vector("Bu", self.bu_, n, self.bu_.size());
  const double omega = v.number("omega", self.omega_);
  const Eigen::VectorXd& c = v.vector("c", self.c_, n, self.c_.size());
  v.number("mu", self.mu_, common::kNonNegative);
  const bool current = version > 0xF5C1 && v.template flag<uint32_t>("eigendecomposition", self.eig_current_);
  if (version == 0xF5C1) v.absent(self.eig_current_, false);
  eigen_state(self, v, current, n);
  const double w2 = omega * omega * uu + 2.0 * omega * c.head(n).dot(bu.head(n)) +
                    c.head(n).dot(sketch.gram().topLeftCorner(n, n) * c.head(n));
  v.check(w2 <= r_now * r_now * (1 + 1e-9), "the weights lie outside the ball");
  v.lines([&self](std::ostream& out) {
    std::vector<double> bc, se;
    self.sketch_.multiply_transpose(self.c_, bc);
    self.sketch_.base_transpose(self.e_, se);
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (uint32_t p = 0; p < self.sketch_.columns(); ++p) order.push_back({self.sketch_.index().slot(p), p});
    std::sort(order.begin(), order.end());
    for (const auto& [slot, p] : order)
      out << slot << ":" << self.omega_ * (self.alpha_ * self.v_[p] + se[p]) + bc[p] << "\n";
  });
}

// G's eigendecomposition (λ, U) over the sketch's n rows, when current; zero otherwise.
template <class Self, class V>
void FtprlSketchLearner::eigen_state(Self& self, V& v, bool current, Eigen::Index n) {
  if (current) {
    v.vector("eigenvalues", self.lam_, n, self.lam_.size());
    v.block("eigenvectors", self.vec_, n, n, self.vec_.rows(), self.vec_.cols());
    return;
  }
  const Eigen::Index lams = self.lam_.size(), rows = self.vec_.rows(), cols = self.vec_.cols();
  v.absent_made(self.lam_, [lams] { return Eigen::VectorXd(Eigen::VectorXd::Zero(lams)); });
  v.absent_made(self.vec_, [rows, cols] { return Eigen::MatrixXd(Eigen::MatrixXd::Zero(rows, cols)); });
}

void FtprlSketchLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void FtprlSketchLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void FtprlSketchLearner::load(ModelReader& in) { common::load_state(*this, in); }

}  // namespace lepus

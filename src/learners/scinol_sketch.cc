// scinol-full --matrix sketch: see scinol_sketch.h for the algorithm, its papers and equations.
#include "learners/scinol_sketch.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "dist/collective.h"
#include "learners/common/merge.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {
// Not scinol-full's full-mode versions: the two refuse each other. 0x5C02 adds the variant, eps and the
// wealth; a 0x5C01 state is the published algorithm's.
constexpr uint32_t kStateVersion = 0x5C02;
constexpr uint32_t kStateVersion1 = 0x5C01;
constexpr uint64_t kSketchCap = uint64_t{1} << 24;
constexpr double kRankTolerance = 1e-12;  // G's eigenvalues below this times the largest count as 0 (Δ = 0)
}  // namespace

ScinolSketchLearner::ScinolSketchLearner(const ScinolFullOptions& options, uint32_t rank, const Loss& loss,
                                         int bits, bool test_only)
    : opt_(options),
      rank_(rank),
      loss_(loss),
      bits_(bits),
      clip_(loss.initial_range(), test_only),
      sketch_(rank, kSketchCap),
      scales_(bits),
      h_(bits),
      maxes_(bits),
      builder_(bits) {
  if (!(opt_.alpha > 9.0 / 8.0) || !(opt_.lipschitz > 0.0) || !(opt_.eps > 0.0) || !std::isfinite(opt_.eps))
    throw ConfigError("scinol-full: alpha must be > 9/8, L > 0 and eps > 0");
  if (opt_.variant == ScinolFullVariant::kScinol2) wealth_ = opt_.eps;
  q_.setZero(2 * Eigen::Index{rank});
  kk_.setZero(2 * Eigen::Index{rank}, 2 * Eigen::Index{rank});
  z_.setZero(2 * Eigen::Index{rank});
  k_.setZero(2 * Eigen::Index{rank}, 2 * Eigen::Index{rank});
  lp_.setZero(2 * Eigen::Index{rank});
  lq_.setZero(2 * Eigen::Index{rank});
}

const std::vector<Coord>& ScinolSketchLearner::scaled(const SparseVector& v, bool& fresh) const {
  x_.clear();
  fresh = false;
  for (const Coord& c : v) {
    const double d = scales_[c.slot];
    fresh |= d == 0.0;
    x_.push_back({c.slot, d == 0.0 ? (c.x > 0.0 ? 1.0 : -1.0) : c.x / d, c.first});
  }
  return x_;
}

ScinolSketchLearner::Prepared ScinolSketchLearner::prepare(const std::vector<Coord>& x, bool fresh) const {
  Prepared q;
  for (const Coord& c : x) {
    q.xx += c.x * c.x;
    q.xh += c.x * h_[c.slot];
  }
  double s_xx = 0.0, s_xh = 0.0, s_hh = 0.0;
  bool in_span = !fresh;
  const Eigen::Index r = sketch_.rows();
  if (r > 0) {
    sketch_.multiply(x, p_);
    const Eigen::VectorXd& q_r = q_.head(r);  // (a copy: head() of a member)
    const double delta = sketch_.shrinkage();
    if (delta > 0.0) {  // S~ = Δ I + BᵀB: Woodbury, K = Δ I + G = L Lᵀ by Cholesky (O(r³/3))
      // pᵀK⁻¹p = ||L⁻¹p||², pᵀK⁻¹q = (L⁻¹p)·(L⁻¹q), qᵀK⁻¹q = ||L⁻¹q||²: one triangular solve each. K is
      // factored in place in a buffer of the largest size (no allocation per example).
      auto K = k_.topLeftCorner(r, r);
      K = sketch_.gram().topLeftCorner(r, r);
      K.diagonal().array() += delta;
      const Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(K);
      auto lp = lp_.head(r), lq = lq_.head(r);
      lp = p_;
      lq = q_r;
      llt.matrixL().solveInPlace(lp);
      llt.matrixL().solveInPlace(lq);
      s_xx = std::max(q.xx - lp.squaredNorm(), 0.0) / delta;
      s_xh = (q.xh - lp.dot(lq)) / delta;
      s_hh = std::max(hh_ - lq.squaredNorm(), 0.0) / delta;
    } else {  // S~ = BᵀB: the pseudo-inverse Bᵀ(G^†)²B and the projector BᵀG^†B, from G's eigenvalues
      eig_.compute(sketch_.gram().topLeftCorner(r, r));
      const Eigen::VectorXd& mu = eig_.eigenvalues();
      const Eigen::VectorXd zp = eig_.eigenvectors().transpose() * p_;
      const Eigen::VectorXd zq = eig_.eigenvectors().transpose() * q_r;
      const double floor = kRankTolerance * std::max(mu(r - 1), 0.0);
      double perp = q.xx;
      for (Eigen::Index k = 0; k < r; ++k) {
        if (!(mu(k) > floor)) continue;
        const double inv = 1.0 / mu(k);
        perp -= zp(k) * zp(k) * inv;
        s_xx += zp(k) * zp(k) * inv * inv;
        s_xh += zp(k) * zq(k) * inv * inv;
        s_hh += zq(k) * zq(k) * inv * inv;
      }
      in_span = in_span && !(perp > opt_.tau * q.xx);
    }
  } else {
    in_span = in_span && q.xx == 0.0;  // nothing seen yet: only x = 0 is in the (empty) span
  }
  const ScinolRankOne s = scinol_rank_one(in_span, s_xx, s_xh, s_hh);  // S~ + x xᵀ, or a new direction
  q.new_direction = s.new_direction;
  q.c = s.c;
  q.r = s.r;
  q.lev = s.lev;
  return q;
}

// scinol2: Λ_i = M_i² + Δ over the features seen (a never-seen one: M = |x~| = 1), the held K = I + BΛ⁻¹Bᵀ,
// z = BΛ⁻¹h and hᵀΛ⁻¹h.
double ScinolSketchLearner::lambda(uint64_t slot) const {
  const double m = maxes_[slot];
  return lam(m > 0.0 ? m : 1.0);
}

// The shrinkage ridge Δ (the Loewner-monotone surrogate; half of it, robust FD's choice, and none were
// measured on the mnist pairs at rank 20: test error 0.063 / 0.065 and 0.087 / 0.038 against Δ's 0.058 /
// 0.070).
double ScinolSketchLearner::ridge() const { return sketch_.shrinkage(); }

// Λ_ii = M_i² + Δ. (M_i² (1 + Δ), also a valid surrogate since M~ >= 1, was measured: mnist 3 vs 5 / 4 vs 9
// at rank 20, progressive loss 0.373 / 0.458 against 0.233 / 0.257: far too much ridge on the features first
// seen faint.)
double ScinolSketchLearner::lam(double m) const { return m * m + ridge(); }

// K, z and hᵀΛ⁻¹h from the sketch's columns (after a shrink, a load or a merge: Δ changed). O(r² · features).
void ScinolSketchLearner::rebuild() {
  const Eigen::Index r = sketch_.rows();
  kk_.setZero(k_.rows(), k_.cols());
  kk_.topLeftCorner(r, r).setIdentity();
  z_.setZero(k_.rows());
  hlh_ = 0.0;
  Eigen::VectorXd col;
  scales_.for_each_nonzero([&](uint64_t slot, double) {
    const double l = lambda(slot), h = h_[slot];
    hlh_ += h * h / l;
    if (r == 0) return;
    const Coord e{slot, 1.0, 0};
    sketch_.multiply(std::span<const Coord>(&e, 1), col);
    kk_.topLeftCorner(r, r).noalias() += col * (col.transpose() / l);
    z_.head(r) += col * (h / l);
  });
}

// The maxima x~ raises (M < |x~|, M > 0: a seen feature), each a diagonal change of Λ: K += f b bᵀ, z += f b
// h, hᵀΛ⁻¹h += f h², f = 1/Λ_new − 1/Λ_old, b = B e_i. On copies (predict) or on the state (learn).
void ScinolSketchLearner::grow(const std::vector<Coord>& x, Eigen::MatrixXd& kk, Eigen::VectorXd& z,
                               double& hlh, bool store) const {
  const Eigen::Index r = sketch_.rows();
  Eigen::VectorXd col;
  for (const Coord& c : x) {
    const double m = maxes_[c.slot], ax = std::fabs(c.x);
    if (!(m > 0.0) || !(ax > m)) continue;
    const double h = h_[c.slot];
    const double f = 1.0 / lam(ax) - 1.0 / lam(m);
    hlh += f * h * h;
    if (r > 0) {
      const Coord e{c.slot, 1.0, 0};
      sketch_.multiply(std::span<const Coord>(&e, 1), col);
      kk.topLeftCorner(r, r).noalias() += col * (f * col.transpose());
      z.head(r) += col * (f * h);
    }
    if (store) grown_.push_back({c.slot, ax, 0});
  }
}

// scinol2's quantities with Λ after the grown maxima (kk, z, hlh): s_xx = xᵀΣ~⁻¹x = xᵀΛ⁻¹x − pᵀK⁻¹p,
// s_xh = xᵀΛ⁻¹h − pᵀK⁻¹z, s_hh = hlh − zᵀK⁻¹z, p = BΛ⁻¹x (Woodbury; K = L Lᵀ by Cholesky).
ScinolSketchLearner::Prepared ScinolSketchLearner::prepare2(const std::vector<Coord>& x,
                                                            const Eigen::MatrixXd& kk,
                                                            const Eigen::VectorXd& z, double hlh) const {
  Prepared q;
  xl_.clear();
  double xlx = 0.0, xlh = 0.0;
  for (const Coord& c : x) {
    const double m = std::max(maxes_[c.slot], std::fabs(c.x));
    const double l = lam(m);
    xl_.push_back({c.slot, c.x / l, c.first});
    xlx += c.x * c.x / l;
    xlh += c.x * h_[c.slot] / l;
    q.xx += c.x * c.x;
    q.xh += c.x * h_[c.slot];
  }
  q.xlx = xlx;
  q.xlh = xlh;
  double s_xx = xlx, s_xh = xlh, s_hh = hlh;
  const Eigen::Index r = sketch_.rows();
  if (r > 0) {
    sketch_.multiply(xl_, p_);
    const Eigen::LLT<Eigen::MatrixXd> llt(kk.topLeftCorner(r, r));
    Eigen::VectorXd lp = p_, lz = z.head(r);
    llt.matrixL().solveInPlace(lp);
    llt.matrixL().solveInPlace(lz);
    s_xx -= lp.squaredNorm();
    s_xh -= lp.dot(lz);
    s_hh -= lz.squaredNorm();
  }
  q.c = std::max(s_hh, 0.0);
  q.r = s_xh;
  q.lev = std::max(s_xx, 0.0);
  return q;
}

double ScinolSketchLearner::bet(double c) const {
  return 0.5 * wealth_ * (c > 1.0 ? 1.0 / std::sqrt(c) : 1.0);
}

double ScinolSketchLearner::eta(double c) const { return scinol_eta(c, gamma_, opt_.alpha, caps_); }

double ScinolSketchLearner::score(const Example& x) const {
  bool fresh;
  const std::vector<Coord>& v = scaled(builder_.build(x), fresh);
  if (opt_.variant == ScinolFullVariant::kScinol2) {
    Eigen::MatrixXd kk = kk_;
    Eigen::VectorXd z = z_;
    double hlh = hlh_;
    grow(v, kk, z, hlh, false);
    return x.initial + played(prepare2(v, kk, z, hlh));
  }
  const Prepared q = prepare(v, fresh);
  return x.initial + played(q);
}

double ScinolSketchLearner::played(const Prepared& q) const {
  if (opt_.variant == ScinolFullVariant::kPublished) return eta(q.c) * q.r;
  return std::clamp(bet(q.c) * q.r, -0.5 * wealth_,
                    0.5 * wealth_);  // at most half the wealth, as the full mode
}

Prediction ScinolSketchLearner::predict(const Example& x) const {
  return clip_.of(common::to_float(score(x), caps_));
}

Prediction ScinolSketchLearner::learn(const Example& x) {
  clip_.see(x);
  if (!common::teaches(x)) return predict(x);
  const SparseVector& sv = builder_.build(x);  // built once: scaled, then the first-seen scales read it
  caps_ += sv.dropped;
  bool fresh;
  const std::vector<Coord>& v = scaled(sv, fresh);
  const bool published = opt_.variant == ScinolFullVariant::kPublished;
  if (!published) return learn2(x, sv, v, fresh);
  const Prepared q = prepare(v, fresh);
  const double et = published ? eta(q.c) : bet(q.c);
  const double yhat = x.initial + played(q);
  double g = loss_.first_derivative(clip_.clip(common::to_float(yhat, caps_)), x.label, clip_.range());
  g = std::clamp(g * static_cast<double>(x.weight), -opt_.lipschitz, opt_.lipschitz) / opt_.lipschitz;
  if (std::isnan(g)) [[unlikely]] {
    g = 0.0;
    ++caps_;
  }
  // h <- h − g x (and B h, ||h||² with it); Γ += g² lev (published) or the wealth's winnings (scinol2); then
  // the sketch takes the row x (published), or |g| x: V's g² x xᵀ (scinol2).
  if (sketch_.rows() > 0 && g != 0.0) q_.head(sketch_.rows()) -= g * p_;
  h_.add(v, -g);
  hh_ = std::max(hh_ - 2.0 * g * q.xh + g * g * q.xx, 0.0);
  gamma_ += g * g * q.lev;
  if (fresh) {  // the features' scales d_i, fixed at first sight
    std::vector<Coord> first;
    for (const Coord& c : sv)
      if (scales_[c.slot] == 0.0 && c.x != 0.0) first.push_back({c.slot, std::fabs(c.x), c.first});
    scales_.add(first, 1.0);
  }
  if (q.xx > 0.0) {
    sketch_.append(v, 1.0, &q_);  // ConfigError past the cap
    q_(sketch_.rows() - 1) = h_.dot(v);
  }
  last_ = Last{q.new_direction, et, yhat, g, q.lev};
  return clip_.of(common::to_float(yhat, caps_));
}

// scinol2, one round: Λ takes the grown maxima, the clamped bet is played, the wealth takes −g (ŷ − initial),
// h −= g x (z −= g p, hᵀΛ⁻¹h with it), then the sketch takes the row |g| x~ (V's g² x xᵀ): K gains its row
// |g| p (no shrink), or is rebuilt (a shrink changed Δ).
Prediction ScinolSketchLearner::learn2(const Example& x, const SparseVector& sv, const std::vector<Coord>& v,
                                       bool fresh) {
  grown_.clear();
  grow(v, kk_, z_, hlh_, true);
  for (const Coord& c : grown_) maxes_.set(c.slot, c.x);
  const Prepared q = prepare2(v, kk_, z_, hlh_);
  const double yhat = x.initial + played(q);
  double g = loss_.first_derivative(clip_.clip(common::to_float(yhat, caps_)), x.label, clip_.range());
  g = std::clamp(g * static_cast<double>(x.weight), -opt_.lipschitz, opt_.lipschitz) / opt_.lipschitz;
  if (std::isnan(g)) [[unlikely]] {
    g = 0.0;
    ++caps_;
  }
  wealth_ -= g * (yhat - x.initial);  // |ŷ − initial| <= wealth/2: a round loses at most half the wealth
  if (wealth_ > ScinolFullLearner::kMaxWealth) [[unlikely]] {
    wealth_ = ScinolFullLearner::kMaxWealth;
    ++caps_;
  }
  const Eigen::Index r = sketch_.rows();
  if (r > 0 && g != 0.0) {
    z_.head(r) -= g * p_;
    q_.head(r) -= g * sketch_multiply(v);
  }
  h_.add(v, -g);
  hh_ = std::max(hh_ - 2.0 * g * q.xh + g * g * q.xx, 0.0);
  hlh_ = std::max(hlh_ - 2.0 * g * q.xlh + g * g * q.xlx, 0.0);
  if (fresh) {  // the features' scales d_i, fixed at first sight, and their maxima M = |x~| = 1
    std::vector<Coord> first;
    for (const Coord& c : sv)
      if (scales_[c.slot] == 0.0 && c.x != 0.0) first.push_back({c.slot, std::fabs(c.x), c.first});
    scales_.add(first, 1.0);
    for (const Coord& c : first) maxes_.set(c.slot, 1.0);
  }
  const double row = std::fabs(g);
  if (q.xx > 0.0 && row > 0.0) {
    const bool shrunk = sketch_.append(v, row, &q_);  // ConfigError past the cap
    const Eigen::Index j = sketch_.rows() - 1;
    q_(j) = row * h_.dot(v);
    if (shrunk) {
      rebuild();
    } else {
      kk_.row(j).head(j) = row * p_.head(j).transpose();
      kk_.col(j).head(j) = row * p_.head(j);
      kk_(j, j) = 1.0 + row * row * q.xlx;
      z_(j) = row * (q.xlh - g * q.xlx);
    }
  }
  last_ = Last{false, bet(q.c), yhat, g, q.lev};
  return clip_.of(common::to_float(yhat, caps_));
}

Eigen::VectorXd ScinolSketchLearner::sketch_multiply(const std::vector<Coord>& v) const {
  Eigen::VectorXd b;
  sketch_.multiply(v, b);
  return b;
}

// --distributed: the ranks' mean state: h -> mean h, S~ -> mean S~ (common::merge_sketches: at least the
// ranks' mean, by at most the merge's own shrinkage more), and the ranks' mean log-wealth. The bet's exponent
// is (c − Γ) / (2α), c = hᵀS~^†h: Γ is set so that the merged c − Γ is the ranks' mean c_r − Γ_r (Γ >= 0),
// the confidence the ranks bet with on average. c is jointly convex in (h, S~) (the matrix-fractional
// function), so the merged c is at most the ranks' mean and Γ at most theirs; keeping the mean Γ instead was
// measured: on rcv1 (two ranks, 10,000 examples each) the drop in c left every bet near 0 (test loss 0.693
// against 0.405). Summing h instead grows c with the number of ranks (see scinol-coord's merge). A feature
// first seen at different |x| on different ranks takes the largest as its scale d_i, each rank's h and rows
// converted to it first (x~ = x / d).
void ScinolSketchLearner::merge(Collective& ranks) {
  if (ranks.size() == 1) return;
  const size_t n = size_t{1} << bits_;
  const double k = ranks.size();
  std::vector<double> d(n, 0.0);
  scales_.for_each_nonzero([&](uint64_t i, double v) { d[i] = v; });
  const std::vector<double> mine = d;  // this rank's scales (the maxima's units)
  ranks.max(d.data(), n);
  auto factor = [&](uint64_t slot) {
    const double mine = scales_[slot];
    return mine > 0.0 ? mine / d[slot] : 1.0;
  };
  std::vector<double> h(n, 0.0);
  h_.for_each_nonzero([&](uint64_t i, double v) { h[i] = v * factor(i) / k; });
  ranks.sum(h.data(), n);
  // The sketches in the common scales, and the log-wealth c − Γ's mean.
  // scinol2: the ranks' mean wealth.
  const bool published = opt_.variant == ScinolFullVariant::kPublished;
  double wealth = published ? prepare({}, false).c - gamma_ : wealth_;
  FrequentDirections merged =
      common::merge_sketches(ranks, sketch_, rank_, kSketchCap, factor, std::span<double>(&wealth, 1));
  TrackedVector::Entries scales, hs;
  double hh = 0.0;
  for (uint64_t i = 0; i < n; ++i) {
    if (d[i] > 0.0) scales.nonzero.emplace_back(i, d[i]);
    if (h[i] != 0.0) hs.nonzero.emplace_back(i, h[i]);
    hh += h[i] * h[i];
  }
  scales_.assign(scales);
  h_.assign(hs);
  hh_ = hh;
  sketch_ = std::move(merged);
  q_.setZero();
  if (sketch_.rows() > 0) {
    Eigen::VectorXd bh;
    sketch_.multiply_all([&](uint64_t slot) { return h[slot]; }, bh);
    q_.head(sketch_.rows()) = bh.head(sketch_.rows());
  }
  if (published) {
    gamma_ = std::max(prepare({}, false).c - wealth, 0.0);
  } else {
    // The maxima: the largest |x| of any rank, in the common scales.
    std::vector<double> m(n, 0.0);
    maxes_.for_each_nonzero([&](uint64_t i, double v) { m[i] = v * mine[i]; });
    ranks.max(m.data(), n);
    TrackedVector::Entries maxes;
    for (uint64_t i = 0; i < n; ++i)
      if (m[i] > 0.0) maxes.nonzero.emplace_back(i, m[i] / d[i]);
    maxes_.assign(maxes);
    wealth_ = wealth;
    rebuild();
  }
  common::merge_range(ranks, clip_);
}

std::vector<std::string> ScinolSketchLearner::describe() const {
  if (opt_.variant == ScinolFullVariant::kScinol2)
    return {"scinol_full_variant = scinol2", "scinol_full_eps = " + common::number(opt_.eps),
            "scinol L = " + common::number(opt_.lipschitz), "matrix = sketch, rank " + std::to_string(rank_)};
  return {"scinol_full_variant = published", "scinol alpha = " + common::number(opt_.alpha),
          "scinol L = " + common::number(opt_.lipschitz), "matrix = sketch, rank " + std::to_string(rank_)};
}

// 0x5C02 (0x5C01 is the published algorithm's without a wealth): -b, the variant, ε and the wealth, α, L, the
// rank, the label range, Γ, ||h||², the feature scales, h, the sketch, B h; scinol2 also the maxima M,
// hᵀΛ⁻¹h, BΛ⁻¹h and K as kept (rebuilding them from the sketch would round differently: a resumed run must equal
// one run bit for bit). Readable: "slot:h_i" in the feature's own units (h~_i d_i).
template <class Self, class V>
void ScinolSketchLearner::state(Self& self, V& v) {
  const uint32_t version = v.versions(kStateVersion1, kStateVersion);
  v.fixed("bits", static_cast<uint32_t>(self.bits_));
  bool scinol2 = false;
  if (version == kStateVersion) {
    scinol2 = v.template choice<uint32_t>("scinol_full_variant", self.opt_.variant,
                                          {"scinol2", "published"}) == ScinolFullVariant::kScinol2;
    v.number("scinol_full_eps", self.opt_.eps, common::kPositive);
    v.number("wealth", self.wealth_, common::kNonNegative);
  } else {
    v.absent(self.opt_.variant, ScinolFullVariant::kPublished);
    v.absent(self.wealth_, 0.0);
  }
  v.number("scinol_alpha", self.opt_.alpha, common::above(9.0 / 8.0));
  v.number("scinol_L", self.opt_.lipschitz, common::kPositive);
  v.fixed("rank", self.rank_, "saved with another --rank than this run's");
  v.lines([&self](std::ostream& out) { out << "matrix sketch\nrank " << self.rank_ << "\n"; });
  v.clip(self.clip_);
  v.number("Gamma", self.gamma_, common::kNonNegative);
  v.number("hh", self.hh_, common::kNonNegative);
  v.tracked("feature_scales", self.scales_, self.bits_, [](double d) { return d > 0.0; });
  v.tracked("h", self.h_, self.bits_, [](double) { return true; });
  const FrequentDirections& sketch = v.part(
      "sketch", self.sketch_, [&self] { return FrequentDirections(self.rank_, kSketchCap); },
      [](std::ostream& out, const FrequentDirections& s) { out << "shrinkage " << s.shrinkage() << "\n"; });
  const Eigen::Index r = sketch.rows();
  v.vector("Bh", self.q_, r, self.q_.size());
  scinol2_state(self, v, scinol2, r);
  v.lines([&self](std::ostream& out) {
    self.h_.for_each_nonzero([&](uint64_t i, double h) { out << i << ":" << h * self.scales_[i] << "\n"; });
  });
}

// scinol2's M, hᵀΛ⁻¹h, BΛ⁻¹h and K over the sketch's r rows; the published variant has none (zero).
template <class Self, class V>
void ScinolSketchLearner::scinol2_state(Self& self, V& v, bool scinol2, Eigen::Index r) {
  const Eigen::Index rows = self.kk_.rows(), cols = self.kk_.cols(), zs = self.z_.size();
  if (scinol2) {
    v.tracked("maxima", self.maxes_, self.bits_, [](double x) { return x > 0.0; });
    v.number("hLh", self.hlh_, common::kNonNegative);
    v.vector("z", self.z_, r, self.z_.size());
    v.block("K", self.kk_, r, r, rows, cols);
    return;
  }
  const int bits = self.bits_;
  v.absent_made(self.maxes_, [bits] { return TrackedVector(bits); });
  v.absent(self.hlh_, 0.0);
  v.absent_made(self.z_, [zs] { return Eigen::VectorXd(Eigen::VectorXd::Zero(zs)); });
  v.absent_made(self.kk_, [rows, cols] { return Eigen::MatrixXd(Eigen::MatrixXd::Zero(rows, cols)); });
}

void ScinolSketchLearner::write_readable(std::ostream& out) const { common::write_state(*this, out); }

void ScinolSketchLearner::save(ModelWriter& out) const { common::save_state(*this, out); }

void ScinolSketchLearner::load(ModelReader& in) { common::load_state(*this, in); }

}  // namespace lepus

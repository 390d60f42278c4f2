// The low-rank min-max state: see minmax_sketch.h for the forms, and minmax.h for the algorithms and the thesis.
#include "learners/minmax_sketch.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "learners/common/plumbing.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

// LASER: an input whose part outside the basis is below this fraction of its norm adds no direction (its
// share of D, ρ² and ρ·z, is rounding); below kReorthogonalise the part is taken out of Q once more (classical
// Gram-Schmidt twice: W. Kahan / B. Parlett, "twice is enough").
constexpr double kNewDirection = 1e-10;
constexpr double kReorthogonalise = 0.5;

std::string num(double v) { return common::number(v, 17); }

}  // namespace

MinmaxSketch::MinmaxSketch(Form form, double b, double c, uint32_t rank)
    : form_(form), b_(b), c_(c), rank_(rank) {
  if (rank < 1 || rank > kMaxRank)
    throw ConfigError("--rank must be in [1, " + std::to_string(kMaxRank) + "]");
  if (!(b > 0.0) || !std::isfinite(b)) throw ConfigError("--mm_b must be > 0");
  if (form == Form::kLaser && !(b < c)) throw ConfigError("--mm_b must be < --mm_c");
  capacity_cols_ = form == Form::kWemm ? 2 * Eigen::Index{rank} : Eigen::Index{rank} + 1;
  lambda_ = Eigen::VectorXd::Zero(capacity_cols_);
  a_ = Eigen::VectorXd::Zero(capacity_cols_);
  small_ = Eigen::VectorXd::Zero(capacity_cols_);
  delta_ = form == Form::kLaser ? b * c / (c - b) : 0.0;
}

size_t MinmaxSketch::capacity(size_t held, size_t n) {
  size_t cap = std::max<size_t>(16, held);
  while (cap < n) cap *= 2;
  return cap;
}

void MinmaxSketch::grow(size_t n) {
  if (static_cast<size_t>(basis_.rows()) >= n) return;
  const Eigen::Index held = static_cast<Eigen::Index>(index_.size());
  const auto rows = static_cast<Eigen::Index>(capacity(static_cast<size_t>(basis_.rows()), n));
  RowMatrix basis = RowMatrix::Zero(rows, capacity_cols_);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(rows);
  basis.topRows(held) = basis_.topRows(held);
  w.head(held) = w_.head(held);
  basis_.swap(basis);
  w_.swap(w);
  fit_scratch();
}

void MinmaxSketch::fit_scratch() {
  g_.setZero(basis_.rows());
  e_.setZero(basis_.rows());
  tmp_.setZero(basis_.rows(), capacity_cols_);
}

MinmaxSketch::Round MinmaxSketch::prepare(const SparseVector& v) const {
  pos_.clear();
  xv_.clear();
  auto a = a_.head(cols_);
  a.setZero();
  Round r;
  double sq = 0.0;
  for (const Coord& c : v) {
    const uint32_t i = index_.find(c.slot);
    pos_.push_back(i);
    xv_.push_back(c.x);
    sq += c.x * c.x;
    if (i == CompactIndex::kNone) continue;  // a slot not held: a zero row, w = 0
    a.noalias() += c.x * basis_.row(i).head(cols_).transpose();
    r.p += w_(i) * c.x;
  }
  sq_ = sq;
  const double in_basis = a.squaredNorm();
  if (form_ == Form::kWemm) {
    r.m = sq / b_ - in_basis;  // xᵀ(I/b − ZZᵀ)x
  } else {
    const double inv_c = 1.0 / c_;
    for (Eigen::Index j = 0; j < cols_; ++j) r.m += a(j) * a(j) * (1.0 / lambda_(j) + inv_c);
    r.m += std::max(sq - in_basis, 0.0) * (1.0 / delta_ + inv_c);  // ρ² = ‖x‖² − ‖Qᵀx‖² (Q orthonormal)
  }
  return r;
}

bool MinmaxSketch::update(const SparseVector& v, double s, double coef, double gain) {
  size_t fresh = 0;
  for (uint32_t i : pos_) fresh += i == CompactIndex::kNone ? 1 : 0;
  grow(index_.size() + fresh);
  size_t j = 0;
  for (const Coord& c : v) {  // a new slot enters with a zero row and w = 0 (a_ is unchanged)
    if (pos_[j] == CompactIndex::kNone) {
      pos_[j] = index_.insert(c.slot);
      basis_.row(pos_[j]).setZero();
      w_(pos_[j]) = 0.0;
    }
    ++j;
  }
  const Eigen::Index n = static_cast<Eigen::Index>(index_.size());
  const auto basis = basis_.topLeftCorner(n, cols_);
  const auto a = a_.head(cols_);
  auto g = g_.head(n);
  if (form_ == Form::kWemm) {  // g = Σ x = x/b − Z(Zᵀx)
    if (cols_ > 0)
      g.noalias() = -(basis * a);
    else
      g.setZero();
    for (size_t k = 0; k < pos_.size(); ++k) g(pos_[k]) += xv_[k] / b_;
  } else {  // P x = Q diag(1/λ + 1/c) z + (1/δ + 1/c) x⊥, x⊥ = x − Qz kept in e_
    auto e = e_.head(n);
    if (cols_ > 0)
      e.noalias() = -(basis * a);
    else
      e.setZero();
    for (size_t k = 0; k < pos_.size(); ++k) e(pos_[k]) += xv_[k];
    auto scaled = small_.head(cols_);
    scaled = a.cwiseProduct((lambda_.head(cols_).cwiseInverse().array() + 1.0 / c_).matrix());
    g = (1.0 / delta_ + 1.0 / c_) * e;
    if (cols_ > 0) g.noalias() += basis * scaled;
  }
  g *= s;
  if (!g.allFinite() || !std::isfinite(coef * g.cwiseAbs().maxCoeff())) return false;
  w_.head(n) += coef * g;
  if (form_ == Form::kWemm) {
    basis_.col(cols_).head(n) = std::sqrt(gain) * g;  // Σ -= k g gᵀ: Z gains the column √k g
    ++cols_;
    if (cols_ == capacity_cols_) compress_wemm();
    return true;
  }
  const auto drift = [this](double l) { return l * c_ / (l + c_); };  // (1/l + 1/c)⁻¹
  for (Eigen::Index k = 0; k < cols_; ++k) lambda_(k) = drift(lambda_(k));
  delta_ = drift(delta_);
  add_laser(s, n);
  return true;
}

// Z (2k columns) -> Z V_k, V_k the top k eigenvectors of ZᵀZ: ZZᵀ's best rank-k part, ⪯ ZZᵀ.
void MinmaxSketch::compress_wemm() {
  const Eigen::Index n = static_cast<Eigen::Index>(index_.size());
  const Eigen::Index k = rank_;
  const auto z = basis_.topLeftCorner(n, cols_);
  gram_.setZero(cols_, cols_);
  gram_.selfadjointView<Eigen::Lower>().rankUpdate(z.transpose());
  eig_.compute(gram_);  // ascending: the top k are the last k
  tmp_.topLeftCorner(n, k).noalias() = z * eig_.eigenvectors().rightCols(k);
  basis_.topLeftCorner(n, k) = tmp_.topLeftCorner(n, k);
  cols_ = k;
}

// D += (s x)(s x)ᵀ on the basis [Q, x⊥/ρ], then back to at most k pairs (after the drift map on λ and δ).
void MinmaxSketch::add_laser(double s, Eigen::Index n) {
  auto e = e_.head(n);
  const double norm = std::sqrt(sq_);
  double rho = e.norm();
  Eigen::Index size = cols_;
  if (rho > kNewDirection * norm) {
    if (rho < kReorthogonalise * norm && cols_ > 0) {
      const auto q = basis_.topLeftCorner(n, cols_);
      auto corr = small_.head(cols_);
      corr.noalias() = q.transpose() * e;
      e.noalias() -= q * corr;
      a_.head(cols_) += corr;
      rho = e.norm();
    }
    basis_.col(cols_).head(n) = e / rho;
    a_(cols_) = rho;
    lambda_(cols_) = delta_;
    size = cols_ + 1;
  }
  if (size == 0) return;
  gram_.resize(size, size);
  gram_.setZero();
  gram_.diagonal() = lambda_.head(size);
  const auto v = a_.head(size);
  gram_.noalias() += (s * s) * v * v.transpose();
  eig_.compute(gram_);
  const Eigen::VectorXd& mu = eig_.eigenvalues();
  Eigen::Index drop = -1, kept = size;
  if (size > Eigen::Index{rank_}) {  // the pair closest to δ returns to the isotropic part
    drop = 0;
    for (Eigen::Index k = 1; k < size; ++k)
      if (std::fabs(mu(k) - delta_) < std::fabs(mu(drop) - delta_)) drop = k;
    kept = size - 1;
  }
  // Q <- [Q, x⊥/ρ] V without the dropped column (V's columns in eigenvalue order, the dropped one moved last).
  Eigen::MatrixXd& v_kept = gram_;  // M is no longer needed
  v_kept = eig_.eigenvectors();
  Eigen::Index col = 0;
  for (Eigen::Index k = 0; k < size; ++k) {
    if (k == drop) continue;
    if (col != k) v_kept.col(col) = eig_.eigenvectors().col(k);
    lambda_(col) = std::max(mu(k), delta_);  // >= δ exactly (interlacing); rounding is clamped
    ++col;
  }
  tmp_.topLeftCorner(n, kept).noalias() = basis_.topLeftCorner(n, size) * v_kept.leftCols(kept);
  basis_.topLeftCorner(n, kept) = tmp_.topLeftCorner(n, kept);
  cols_ = kept;
  if (drop >= 0 && n > kept) delta_ += std::max(mu(drop) - delta_, 0.0) / static_cast<double>(n - kept);
}

double MinmaxSketch::weight(uint64_t slot) const {
  const uint32_t i = index_.find(slot);
  return i == CompactIndex::kNone ? 0.0 : w_(i);
}

double MinmaxSketch::sigma(uint64_t si, uint64_t sj) const {
  const uint32_t i = index_.find(si), j = index_.find(sj);
  const double diag = si == sj ? (form_ == Form::kWemm ? 1.0 / b_ : 1.0 / delta_) : 0.0;
  if (i == CompactIndex::kNone || j == CompactIndex::kNone) return diag;
  double sum = 0.0;
  for (Eigen::Index k = 0; k < cols_; ++k) {
    const double c = form_ == Form::kWemm ? 1.0 : 1.0 / lambda_(k) - 1.0 / delta_;
    sum += basis_(i, k) * basis_(j, k) * c;
  }
  return form_ == Form::kWemm ? diag - sum : diag + sum;
}

double MinmaxSketch::precision(uint64_t si, uint64_t sj) const {
  const uint32_t i = index_.find(si), j = index_.find(sj);
  const double diag = si == sj ? delta_ : 0.0;
  if (form_ != Form::kLaser || i == CompactIndex::kNone || j == CompactIndex::kNone) return diag;
  double sum = 0.0;
  for (Eigen::Index k = 0; k < cols_; ++k) sum += basis_(i, k) * basis_(j, k) * (lambda_(k) - delta_);
  return diag + sum;
}

Eigen::MatrixXd MinmaxSketch::basis() const {
  return basis_.topLeftCorner(static_cast<Eigen::Index>(index_.size()), cols_);
}

// The form and rank (this run's), the slots held and the columns in use, then per slot held its slot, then per
// slot w_i and its row of the basis; LASER: δ and the eigenvalues kept. b and c are the learner's.
template <class Self, class V>
void MinmaxSketch::state(Self& self, V& v, double b, double c, int bits) {
  v.fixed("sketch form", static_cast<uint8_t>(self.form_), "the sketch of another learner");
  v.fixed("rank", self.rank_, "saved with another --rank than this run's");
  v.lines([&self](std::ostream& out) { out << "rank " << self.rank_ << "\n"; });
  const uint64_t n = v.count("held features", self.index_.size(), uint64_t{1} << bits);
  const bool wemm = self.form_ == Form::kWemm;
  const uint64_t cols = v.whole("columns", self.cols_, 0, wemm ? 2 * uint64_t{self.rank_} - 1 : self.rank_);
  v.index_slots("held features", self.index_, n, bits);
  v.rows("basis", self.w_, self.basis_, n, cols, false, capacity(0, n), self.capacity_cols_);
  if (!wemm) {
    const double delta = v.number("delta", self.delta_, common::kPositive);
    const Eigen::VectorXd& lambda = v.vector("lambda", self.lambda_, cols, self.capacity_cols_);
    v.check((lambda.head(cols).array() >= delta).all(), "an eigenvalue below the isotropic precision");
    v.lines([&self](std::ostream& out) {
      out << "lambda";
      for (Eigen::Index k = 0; k < self.cols_; ++k) out << " " << num(self.lambda_(k));
      out << "\n";
    });
  }
  v.derived(self.b_, b);
  v.derived(self.c_, c);
  v.settle(self, [](auto& s) { s.fit_scratch(); });
  v.lines([&self](std::ostream& out) {
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (uint32_t i = 0; i < self.index_.size(); ++i) order.emplace_back(self.index_.slot(i), i);
    std::sort(order.begin(), order.end());
    for (const auto& [slot, i] : order)
      out << slot << ":" << num(self.w_(i)) << " " << num(self.sigma(slot, slot)) << "\n";
  });
}

template void MinmaxSketch::state(const MinmaxSketch&, common::StateSaver&, double, double, int);
template void MinmaxSketch::state(MinmaxSketch&, common::StateLoader&, double, double, int);
template void MinmaxSketch::state(const MinmaxSketch&, common::StateText&, double, double, int);

}  // namespace lepus

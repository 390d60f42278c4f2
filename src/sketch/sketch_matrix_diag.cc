// The sketch's diagonal correction (sketch_matrix.h, "The diagonal correction"): A = s (D̂ + B̂ᵀB̂), products by
// one Woodbury level over D̂ with K = I + B̂D̂⁻¹B̂ᵀ = L Lᵀ kept over the rows in use and u = B̂D̂⁻¹b.
#include <algorithm>
#include <cmath>

#include "sketch/sketch_matrix.h"

namespace lepus {

double SketchMatrix::scaled(std::span<const Coord> x, std::vector<Coord>& out) const {
  // The index, not positions(x): that gathers S x, which the caller's multiply of D̂⁻¹x would gather again.
  const CompactIndex& index = sketch_.index();
  out.resize(x.size());
  double q = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i].x / d_at(index.find(x[i].slot));
    out[i] = Coord{x[i].slot, v, x[i].first};
    q += x[i].x * v;
  }
  return q;
}

double SketchMatrix::diag_core(std::span<const Coord> x) const {
  const double q = scaled(x, xs_);
  sketch_.multiply(xs_, p_);
  const Eigen::Index r = sketch_.rows();
  y_ = p_.head(r);
  l_.topLeftCorner(r, r).triangularView<Eigen::Lower>().solveInPlace(y_);
  return q - y_.squaredNorm();
}

Matrix::Products SketchMatrix::diag_products(std::span<const Coord> x) const {
  Products out;
  out.quad = std::max(diag_core(x), 0.0) / scale_;  // leaves xs_ = D̂⁻¹x and y_ = L⁻¹B̂D̂⁻¹x
  if (!b_.enabled()) return out;
  double xb = 0.0;  // xᵀD̂⁻¹b
  for (const Coord& c : xs_) xb += c.x * b_[c.slot];
  const Eigen::Index r = sketch_.rows();
  yb_ = q_.head(r);
  l_.topLeftCorner(r, r).triangularView<Eigen::Lower>().solveInPlace(yb_);
  out.cross = (xb - y_.dot(yb_)) / scale_;
  return out;
}

double SketchMatrix::diag_solve(std::span<const Coord> x, std::vector<Coord>& out) const {
  const double q = std::max(diag_core(x), 0.0) / scale_;
  const Eigen::Index r = sketch_.rows();
  c_ = y_;
  l_.topLeftCorner(r, r).triangularView<Eigen::Lower>().transpose().solveInPlace(c_);  // K⁻¹B̂D̂⁻¹x
  const uint32_t n = static_cast<uint32_t>(sketch_.columns());
  sketch_.multiply_transpose(c_, column_);  // B̂ᵀK⁻¹B̂D̂⁻¹x
  out.clear();
  out.reserve(n + x.size());
  for (uint32_t pos = 0; pos < n; ++pos)
    out.push_back({sketch_.index().slot(pos), -column_[pos] / (d_at(pos) * scale_)});
  add_into(xs_, scale_, out);  // + D̂⁻¹x
  return q;
}

// The row r = √(w/s) x joins: K gains its border (B̂D̂⁻¹r, 1 + rᵀD̂⁻¹r) after the shrink it may bring, which maps
// K − I by the shrink's matrix on both sides; a shrink that forms the base again refreshes everything.
void SketchMatrix::diag_update(std::span<const Coord> x, double weight) {
  const uint32_t rows = sketch_.rows();
  const bool rebases = sketch_.append_rebases();
  const double root = std::sqrt(weight / scale_);
  const double e = root * root * scaled(x, xs_);
  double ub = 0.0;  // rᵀD̂⁻¹b
  if (b_.enabled())
    for (const Coord& c : xs_) ub += c.x * b_[c.slot];
  sketch_.multiply(xs_, p_);
  t_.setZero(2 * Eigen::Index{sketch_.rank()});
  t_.head(rows) = root * p_.head(rows);
  Eigen::VectorXd* const companions[2] = {&t_, b_.enabled() ? &q_ : nullptr};
  const bool shrank = sketch_.append(x, root, companions);  // ConfigError past the cap: nothing changed
  if (!shrank && sketch_.rows() == rows) return;            // a zero row
  mass_.resize(sketch_.columns(), 0.0);
  for (const Coord& c : x)
    if (c.x != 0.0) mass_[sketch_.index().find(c.slot)] += root * root * c.x * c.x;
  const uint32_t n = sketch_.rows() - 1;  // the new row
  if (b_.enabled()) q_(n) = root * ub;
  if (rebases) return refresh();
  if (shrank) {
    const Eigen::MatrixXd& w = sketch_.last_shrink();  // m x rows
    const Eigen::MatrixXd mapped = w * kd_.topLeftCorner(w.cols(), w.cols()) * w.transpose();
    kd_.setZero();
    kd_.topLeftCorner(mapped.rows(), mapped.cols()) = mapped;
    factor(static_cast<uint32_t>(mapped.rows()));
  }
  kd_.col(n).head(n) = t_.head(n);
  kd_.row(n).head(n) = t_.head(n).transpose();
  kd_(n, n) = e;
  y_ = t_.head(n);
  l_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(y_);
  l_.row(n).head(n) = y_.transpose();
  l_(n, n) = std::sqrt(std::max(1.0 + e - y_.squaredNorm(), 1.0));  // Schur complement 1 + rᵀA_old⁻¹r >= 1
}

void SketchMatrix::factor(uint32_t rows) {
  const Eigen::MatrixXd k = Eigen::MatrixXd::Identity(rows, rows) + kd_.topLeftCorner(rows, rows);
  const Eigen::LLT<Eigen::MatrixXd> llt(k);  // K ⪰ I
  l_.setZero();
  l_.topLeftCorner(rows, rows) = llt.matrixL();
}

// D̂ from each column's mass less its squared norm in B̂, then K, L and u over every column: O(m² · columns).
void SketchMatrix::refresh() {
  const Eigen::Index r = sketch_.rows();
  const uint32_t n = static_cast<uint32_t>(sketch_.columns());
  floor_ = delta();
  ridge_.assign(n, 0.0);
  mass_.resize(n, 0.0);
  Eigen::MatrixXd kd = Eigen::MatrixXd::Zero(r, r);
  if (b_.enabled()) q_.setZero();
  Eigen::VectorXd column;
  for (uint32_t pos = 0; pos < n; ++pos) {
    sketch_.column(pos, column);
    const auto c = column.head(r);
    ridge_[pos] = diagonal_ * std::max(mass_[pos] - c.squaredNorm(), 0.0);
    const double dinv = 1.0 / (floor_ + ridge_[pos]);
    kd.selfadjointView<Eigen::Lower>().rankUpdate(c, dinv);
    if (b_.enabled()) q_.head(r) += c * (b_[sketch_.index().slot(pos)] * dinv);
  }
  kd_.setZero();
  kd_.topLeftCorner(r, r) = kd.selfadjointView<Eigen::Lower>();
  factor(static_cast<uint32_t>(r));
}

}  // namespace lepus

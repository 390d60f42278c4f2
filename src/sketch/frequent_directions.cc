#include "sketch/frequent_directions.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "lepus/errors.h"

namespace lepus {
namespace {
constexpr Eigen::Index kChunk = 1024;  // columns rotated at a time in a shrink (a small temporary)
}  // namespace

FrequentDirections::FrequentDirections(uint32_t rank, uint64_t cap) : rank_(rank), cap_(cap) {
  if (rank < 1 || rank > kMaxRank)
    throw ConfigError("sketch: the rank must be between 1 and " + std::to_string(kMaxRank) + ", got " +
                      std::to_string(rank));
  if (cap < 1 || cap > kMaxCap)
    throw ConfigError("sketch: the cap on distinct features must be between 1 and " +
                      std::to_string(kMaxCap) + ", got " + std::to_string(cap));
  gram_.setZero(stride(), stride());
}

bool FrequentDirections::append(std::span<const Coord> x, double c) {
  size_t fresh = 0, nonzero = 0;
  for (const Coord& e : x) {
    nonzero += e.x != 0.0;
    fresh += e.x != 0.0 && index_.find(e.slot) == CompactIndex::kNone;
  }
  if (nonzero == 0) return false;  // a zero row: BᵀB unchanged
  if (columns() + fresh > cap_)
    throw ConfigError("sketch: this example would bring the distinct features to " +
                      std::to_string(columns() + fresh) + ", past the cap of " + std::to_string(cap_) +
                      " (memory 16 m bytes each); raise the cap, use fewer bits (-b) or use --matrix diag");
  const bool shrank = rows_ == stride();
  if (shrank) shrink();
  const uint32_t r = rows_;
  const size_t L = stride();
  for (uint32_t k = 0; k < r; ++k) gram_(k, r) = 0.0;
  double norm2 = 0.0;
  for (const Coord& e : x) {
    if (e.x == 0.0) continue;
    uint32_t p = index_.find(e.slot);
    if (p == CompactIndex::kNone) {
      p = index_.insert(e.slot);
      b_.resize(b_.size() + L, 0.0);
    }
    double* col = b_.data() + size_t{p} * L;
    const double v = c * e.x;
    col[r] = v;  // slots are distinct, so this row had 0 here
    norm2 += v * v;
    for (uint32_t k = 0; k < r; ++k) gram_(k, r) += col[k] * v;  // G's new column: B x̂
  }
  for (uint32_t k = 0; k < r; ++k) gram_(r, k) = gram_(k, r);
  gram_(r, r) = norm2;
  rows_ = r + 1;
  return shrank;
}

void FrequentDirections::shrink() {
  const Eigen::Index l = rows_, m = rank_;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram_.topLeftCorner(l, l));  // ascending
  const Eigen::VectorXd& mu = eig.eigenvalues();
  const double delta = std::max(mu(l - 1 - m), 0.0);  // the (m+1)-th largest σ²
  Eigen::MatrixXd w(m, l);  // kept rows = w B: row k = sqrt((μ_k − δ)/μ_k) u_kᵀ
  for (Eigen::Index k = 0; k < m; ++k) {
    const double s = mu(l - 1 - k);
    w.row(k) = (s > delta ? std::sqrt((s - delta) / s) : 0.0) * eig.eigenvectors().col(l - 1 - k).transpose();
  }
  const Eigen::Index L = static_cast<Eigen::Index>(stride()), n = static_cast<Eigen::Index>(columns());
  Eigen::Map<Eigen::MatrixXd> b(b_.data(), L, n);
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(L, L), part;
  for (Eigen::Index j = 0; j < n; j += kChunk) {
    const Eigen::Index width = std::min(kChunk, n - j);
    part.noalias() = w * b.block(0, j, l, width);
    b.block(0, j, m, width) = part;
    b.block(m, j, L - m, width).setZero();
    gram.topLeftCorner(m, m).selfadjointView<Eigen::Lower>().rankUpdate(part);  // G of the rows as stored
  }
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index k = i + 1; k < m; ++k) gram(i, k) = gram(k, i);
  gram_.swap(gram);
  shrinkage_ += delta;
  rows_ = rank_;
  orthogonal_ = rank_;
}

void FrequentDirections::multiply(std::span<const Coord> x, Eigen::VectorXd& p) const {
  p.setZero(rows_);
  for (const Coord& e : x) {
    const uint32_t pos = index_.find(e.slot);
    if (pos == CompactIndex::kNone || e.x == 0.0) continue;
    p.noalias() += e.x * Eigen::Map<const Eigen::VectorXd>(column(pos), rows_);
  }
}

void FrequentDirections::scale(double f) {
  const double root = std::sqrt(f);
  for (double& v : b_) v *= root;
  gram_ *= f;
  shrinkage_ *= f;
}

void FrequentDirections::clear() {
  rows_ = 0;
  orthogonal_ = 0;
  shrinkage_ = 0.0;
  index_.clear();
  b_.clear();
  gram_.setZero();
}

void FrequentDirections::save(ModelWriter& out) const {
  out.put_u32(rank_);
  out.put_u32(rows_);
  out.put_u32(orthogonal_);
  out.put_f64(shrinkage_);
  const uint64_t n = columns();
  out.put_u64(n);
  out.put_values(index_.slots().data(), n);
  for (uint32_t p = 0; p < n; ++p) out.put_values(column(p), rows_);
  for (uint32_t k = 0; k < rows_; ++k) out.put_values(gram_.col(k).data(), rows_);
}

void FrequentDirections::load(ModelReader& in) {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": sketch state: " + what);
  };
  const uint32_t rank = in.get_u32("sketch rank");
  if (rank != rank_)
    throw bad("saved with rank " + std::to_string(rank) + ", this run has " + std::to_string(rank_));
  const uint32_t rows = in.get_u32("sketch rows");
  const uint32_t orthogonal = in.get_u32("sketch orthogonal rows");
  const double shrinkage = in.get_f64("sketch shrinkage");
  if (rows > stride()) throw bad("more rows than the buffer holds");
  if ((orthogonal != 0 && orthogonal != rank_) || orthogonal > rows)
    throw bad("bad count of orthogonal rows");
  if (!(shrinkage >= 0.0) || !std::isfinite(shrinkage)) throw bad("shrinkage not finite and >= 0");
  const uint64_t n = in.get_u64("sketch columns");
  if (n > cap_)
    throw bad("holds " + std::to_string(n) + " slots, past this run's cap of " + std::to_string(cap_));
  if (n > 0 && rows == 0) throw bad("columns without rows");
  if (n * (8 + uint64_t{rows} * 8) + uint64_t{rows} * rows * 8 > in.remaining())  // n <= 2^28, rows <= 2^11
    throw bad("column count does not fit the file");
  CompactIndex index;
  for (uint64_t i = 0; i < n; ++i)
    if (index.insert(in.get_u64("sketch slot")) != i) throw bad("a slot listed twice");
  const size_t L = stride();
  std::vector<double> b(n * L, 0.0);
  for (uint64_t p = 0; p < n; ++p) in.get_raw(b.data() + p * L, rows * sizeof(double), "sketch column");
  for (double v : b)
    if (!std::isfinite(v)) throw bad("a non-finite entry");
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(L, L);
  for (uint32_t k = 0; k < rows; ++k) in.get_raw(gram.col(k).data(), rows * sizeof(double), "sketch gram");
  for (uint32_t k = 0; k < rows; ++k) {
    if (!(gram(k, k) >= 0.0)) throw bad("a Gram diagonal entry < 0");
    for (uint32_t i = 0; i < rows; ++i)
      if (!std::isfinite(gram(i, k))) throw bad("a non-finite Gram entry");
  }
  rows_ = rows;
  orthogonal_ = orthogonal;
  shrinkage_ = shrinkage;
  index_ = std::move(index);
  b_.swap(b);
  gram_.swap(gram);
}

}  // namespace lepus

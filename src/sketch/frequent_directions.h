// Frequent Directions: a deterministic sketch B (at most 2m rows) of a stream of rows a_t (matrix A), with
//     0 ⪯ AᵀA − BᵀB ⪯ Δ I,    Δ <= (‖A‖_F² − ‖B‖_F²) / (m + 1),
// where Δ, the shrinkage mass, is the sum of the shrinks δ below. E. Liberty, "Simple and Deterministic
// Matrix Sketching", KDD 2013; M. Ghashami, E. Liberty, J. M. Phillips, D. P. Woodruff, "Frequent Directions:
// Simple and Deterministic Matrix Sketching", SIAM J. Comput. 45(5), 2016: the algorithm with a buffer of 2ℓ
// rows (one SVD per ℓ rows, O(dℓ) amortized per row), its error analysis (the two bounds above with ℓ) and
// its main bound ‖AᵀA − BᵀB‖₂ <= ‖A − A_k‖_F² / (ℓ − k) for every k < ℓ.
//
// Algorithm (lepus's instance, ℓ = m + 1 in that analysis): rows are appended to B while fewer than 2m are in
// use. On the append that finds 2m rows, B is first rotated and shrunk to its top m rows:
//     B = U diag(σ) Vᵀ,   δ = σ²_{m+1} (the (m+1)-th largest),   B <- diag(sqrt(max(σ² − δ, 0))) Vᵀ,
// and Δ += δ. Each shrink removes at least (m + 1) δ of Frobenius mass, which gives the bound on Δ above.
// Shrinking by the (m+1)-th rather than the m-th value keeps m directions, so while the rows span at most m
// dimensions δ = 0 and the sketch is exact. The SVD is taken through the 2m x 2m Gram matrix G = BBᵀ (kept
// current as rows arrive; an Eigen SelfAdjointEigenSolver gives G = U diag(σ²) Uᵀ, and the kept rows are
// diag(sqrt(max(σ² − δ, 0)) / σ) Uᵀ B), so a shrink costs O(m³ + m² · columns). After a shrink the m rows
// are mutually orthogonal; sketch_matrix.h uses that.
//
// Columns live on a CompactIndex: only slots some row carried take memory (16 m bytes each), up to a cap.
// Storage is by column (the 2m entries of one slot together), so B x for a sparse x costs O(rows · nnz).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <vector>

#include "core/coords.h"
#include "lepus/model_io.h"
#include "sketch/compact_index.h"

namespace lepus {

class FrequentDirections {
 public:
  static constexpr uint32_t kMaxRank = 1024;
  static constexpr uint64_t kMaxCap = uint64_t{1} << 28;
  // 1 <= rank <= kMaxRank, 1 <= cap <= kMaxCap (ConfigError).
  FrequentDirections(uint32_t rank, uint64_t cap);

  // Appends the row c·x (c > 0; x's zero values are skipped). If 2m rows are in use it shrinks first and
  // returns true. Throws ConfigError, changing nothing, if x's new slots would take the columns past the cap.
  bool append(std::span<const Coord> x, double c);
  // p <- B x over the rows in use (x's slots not held contribute nothing). O(rows · nnz).
  void multiply(std::span<const Coord> x, Eigen::VectorXd& p) const;
  // B <- sqrt(f) B (so BᵀB, G and Δ scale by f), f > 0.
  void scale(double f);
  void clear();

  uint32_t rank() const { return rank_; }
  uint64_t cap() const { return cap_; }
  uint32_t rows() const { return rows_; }  // in use, <= 2m
  // The leading rows the last shrink left, mutually orthogonal (B₁B₁ᵀ diagonal up to rounding): m after the
  // first shrink, 0 before it. The rows after them were appended since.
  uint32_t orthogonal_rows() const { return orthogonal_; }
  size_t columns() const { return index_.size(); }
  double shrinkage() const { return shrinkage_; }  // Δ
  const CompactIndex& index() const { return index_; }
  double value(uint32_t row, uint32_t position) const { return b_[size_t{position} * stride() + row]; }
  const double* column(uint32_t position) const { return b_.data() + size_t{position} * stride(); }
  // G = B Bᵀ: its top-left rows() x rows() block.
  const Eigen::MatrixXd& gram() const { return gram_; }

  void save(ModelWriter& out) const;
  // Rank must equal this sketch's, the columns fit its cap; bounds counts by the bytes present;
  // ModelFormatError on bad data, leaving this sketch unchanged.
  void load(ModelReader& in);

 private:
  size_t stride() const { return size_t{2} * rank_; }
  void shrink();

  uint32_t rank_;
  uint64_t cap_;
  uint32_t rows_ = 0;
  uint32_t orthogonal_ = 0;
  double shrinkage_ = 0.0;
  CompactIndex index_;
  std::vector<double> b_;  // column-major, stride 2m; rows >= rows_ are zero
  Eigen::MatrixXd gram_;   // 2m x 2m
};

}  // namespace lepus

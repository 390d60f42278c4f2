// Frequent Directions: a deterministic sketch B (at most 2m rows) of a stream of rows a_t (matrix A), with
//     0 ⪯ AᵀA − BᵀB ⪯ Δ I,    Δ <= (‖A‖_F² − ‖B‖_F²) / (m + 1),
// where Δ, the shrinkage mass, is the sum of the shrinks δ below. E. Liberty, "Simple and Deterministic
// Matrix Sketching", KDD 2013; M. Ghashami, E. Liberty, J. M. Phillips, D. P. Woodruff, "Frequent Directions:
// Simple and Deterministic Matrix Sketching", SIAM J. Comput. 45(5), 2016: the algorithm with a buffer of 2ℓ
// rows (one SVD per ℓ rows), its error analysis (the two bounds above with ℓ) and its main bound
// ‖AᵀA − BᵀB‖₂ <= ‖A − A_k‖_F² / (ℓ − k) for every k < ℓ.
//
// Algorithm (lepus's instance, ℓ = m + 1 in that analysis): rows are appended to B while fewer than 2m are in
// use. On the append that finds 2m rows, B is first rotated and shrunk to its top m rows:
//     B = U diag(σ) Vᵀ,   δ = σ²_{m+1} (the (m+1)-th largest),   B <- diag(sqrt(max(σ² − δ, 0))) Vᵀ,
// and Δ += δ. Each shrink removes at least (m + 1) δ of Frobenius mass, which gives the bound on Δ above.
// Shrinking by the (m+1)-th rather than the m-th value keeps m directions, so while the rows span at most m
// dimensions δ = 0 and the sketch is exact. The SVD is taken through the 2m x 2m Gram matrix G = BBᵀ (kept
// current as rows arrive; an Eigen SelfAdjointEigenSolver gives G = U diag(σ²) Uᵀ), the kept rows are
// W B with W = diag(sqrt(max(σ² − δ, 0)) / σ) Uᵀ (m x 2m), and their Gram matrix is diag(max(σ² − δ, 0)).
// After a shrink the m rows are mutually orthogonal; sketch_matrix.h uses that.
//
// Deferred rotation (lepus's representation; the textbook form rotates every column at every shrink, O(m² ·
// columns) per m rows, which on sparse data with many columns costs far more than the rows themselves). B is
// kept as a product
//     B = W S,   S = [C; R],
// C the m "base" rows (dense over the columns held, m numbers per column), R the raw rows c·x appended since
// the base was last formed (sparse: one (row, value) entry per nonzero, listed per column), and W the small
// rows x (m + k) matrix that says which combination of them each row of B is (k raw rows). Appending a row
// appends x to R and a unit row to W: O(nnz). A shrink multiplies W by the m x 2m rotation: O(m² (m + k)),
// no column touched. B x = W (S x) costs O(m · nnz + entries of R in x's columns + rows · (m + k)). When k
// passes sqrt(m · columns / 5) (the balance of that per-row cost against the next step's), right after a
// shrink, the base is formed again, C <- W S (O(m² · columns + m · entries of R)), R emptied and W = I: the
// column work is paid once per ~k rows instead of once per m. The numbers are those of the textbook form up
// to rounding (W is a product of at most k / m contractions between two such steps).
//
// Columns live on a CompactIndex: only slots some row carried take memory (8 m bytes each plus 32 per raw
// entry: its column list's and the row-ordered log's copies), up to a cap.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/coords.h"
#include "lepus/model_io.h"
#include "sketch/compact_index.h"
#include "sketch/sym_eigen.h"

namespace lepus {

class FrequentDirections {
 public:
  static constexpr uint32_t kMaxRank = 1024;
  static constexpr uint64_t kMaxCap = uint64_t{1} << 28;
  // 1 <= rank <= kMaxRank, 1 <= cap <= kMaxCap (ConfigError).
  FrequentDirections(uint32_t rank, uint64_t cap);

  // Appends the row c·x (c > 0; x's zero values are skipped). If 2m rows are in use it shrinks first and
  // returns true. Throws ConfigError, changing nothing, if x's new slots would take the columns past the cap.
  // companion: a vector of B's row space (e.g. B b for a fixed b, 2m entries) that a shrink maps as it maps
  // the rows (v <- W v, W the m x 2m shrink), so it stays B b; the new row's entry is the caller's to set.
  bool append(std::span<const Coord> x, double c, Eigen::VectorXd* companion = nullptr);
  // The same with several companions, each mapped by a shrink (null entries skipped).
  bool append(std::span<const Coord> x, double c, std::span<Eigen::VectorXd* const> companions);
  // An eigendecomposition of G over the rows in use, G = U diag(λ) Uᵀ: λ ascending in values' first rows()
  // entries, U in vectors' top-left rows() x rows() block.
  struct GramEigen {
    const Eigen::VectorXd& values;
    const Eigen::MatrixXd& vectors;
  };
  // The same, where a shrink uses gram_eig, the caller's eigendecomposition of G over the rows in use (the
  // matrix gram() holds now), instead of computing its own: the same numbers, one m³ step less. Ignored unless
  // it holds rows() x rows().
  bool append(std::span<const Coord> x, double c, std::span<Eigen::VectorXd* const> companions,
              const GramEigen* gram_eig);
  // p <- B x over the rows in use (x's slots not held contribute nothing).
  void multiply(std::span<const Coord> x, Eigen::VectorXd& p) const;
  // p <- B v for the vector v given slot by slot (v(slot) read once per column held): O(m · columns).
  void multiply_all(const std::function<double(uint64_t slot)>& v, Eigen::VectorXd& p) const;
  // out[position] <- (Bᵀ c)_position for every column held (c: one number per row in use): O(m · columns).
  void multiply_transpose(const Eigen::VectorXd& c, std::vector<double>& out) const;
  // B's column at a position, over the rows in use: O(rows · (m + k)).
  void column(uint32_t position, Eigen::VectorXd& out) const;

  // The base rows S = [C; R] (B = W S), for a learner that keeps vectors of the form Sᵀe: they change only at
  // a rebase, not at a shrink. width() = m + k entries of e.
  Eigen::Index width() const { return Eigen::Index{rank_} + k_; }
  const Eigen::VectorXd& base_product(std::span<const Coord> x) const;  // S x (cached as B x's first step)
  // x's columns' positions, one per entry of x (CompactIndex::kNone for slots not held), found with S x.
  const std::vector<uint32_t>& positions(std::span<const Coord> x) const;
  void base_column(uint32_t position, Eigen::VectorXd& out) const;   // S's column: O(m + entries there)
  void to_base(const Eigen::VectorXd& c, Eigen::VectorXd& e) const;  // e += Wᵀc: Bᵀc = Sᵀ(e's increment)
  void base_transpose(const Eigen::VectorXd& e, std::vector<double>& out) const;  // out[pos] = (Sᵀe)_pos
  // The next append with a nonzero row shrinks and then forms the base again (S changes).
  bool append_rebases() const { return rows_ == 2 * rank_ && k_ >= raw_limit(); }
  double value(uint32_t row, uint32_t position) const;
  // B <- sqrt(f) B (so BᵀB, G and Δ scale by f), f > 0: O(rows · (m + k)).
  void scale(double f);
  // Row j < rows() of B over the slots it is nonzero at (slot order of the columns): O(m · (m + k + columns)).
  void row(uint32_t j, std::vector<Coord>& out) const;
  // Δ += ridge, ridge >= 0: BᵀB + Δ I gains ridge I (a merge of sketches carries the ranks' shrinkage).
  void add_shrinkage(double ridge) { shrinkage_ += ridge; }
  // The slot's column position, a new all-zero column if the slot had none (a learner's vectors over the columns
  // may need a slot no row carries); ConfigError past the cap.
  uint32_t hold(uint64_t slot);
  void clear();

  uint32_t rank() const { return rank_; }
  uint64_t cap() const { return cap_; }
  uint32_t rows() const { return rows_; }  // in use, <= 2m
  // The leading rows the last shrink left, mutually orthogonal (B₁B₁ᵀ diagonal): m after the first shrink,
  // 0 before it. The rows after them were appended since.
  uint32_t orthogonal_rows() const { return orthogonal_; }
  size_t columns() const { return index_.size(); }
  double shrinkage() const { return shrinkage_; }  // Δ
  // The last shrink's m x (rows before it) matrix: the kept rows are it times the rows before (empty before
  // the first shrink). A learner keeping a matrix over the rows (B M Bᵀ) maps it with this on both sides.
  const Eigen::MatrixXd& last_shrink() const { return last_shrink_; }
  const CompactIndex& index() const { return index_; }
  // G = B Bᵀ: its top-left rows() x rows() block.
  const Eigen::MatrixXd& gram() const { return gram_; }
  uint32_t raw_rows() const { return k_; }  // k: rows appended since the base was last formed

  void save(ModelWriter& out) const;
  // Rank must equal this sketch's, the columns fit its cap; bounds counts by the bytes present;
  // ModelFormatError on bad data, leaving this sketch unchanged.
  void load(ModelReader& in);

 private:
  struct Entry {  // one nonzero of R in a column: raw row, value
    uint32_t row;
    double value;
  };
  struct Logged {  // the same nonzero in R's row order: column position, raw row, value
    uint32_t position, row;
    double value;
  };
  // s_ <- S x. The last x gathered is remembered with the state's version: asking again for the same x
  // with S unchanged (the prediction's B x, then the update's and its Gram column) reuses s_.
  void gather(std::span<const Coord> x) const;
  void shrink(std::span<Eigen::VectorXd* const> companions, const GramEigen* gram_eig);
  void rebase();  // C <- W S, R emptied, W <- I (right after a shrink)
  uint32_t raw_limit() const;

  uint32_t rank_;
  uint64_t cap_;
  uint32_t rows_ = 0;
  uint32_t orthogonal_ = 0;
  uint32_t k_ = 0;
  double shrinkage_ = 0.0;
  CompactIndex index_;
  std::vector<double> base_;             // C, column-major, m per column
  std::vector<std::vector<Entry>> raw_;  // per column: R's nonzeros there, oldest first (for S x)
  std::vector<Logged> log_;      // R's nonzeros in the order appended (for the passes over all of R: one
                                 // sequential read instead of a pointer chase per column)
  Eigen::MatrixXd w_;            // W in the top-left rows x (m + k) block (2m rows, columns grown)
  Eigen::MatrixXd gram_;         // 2m x 2m
  SymEigen eig_;                 // the shrink's, kept for its buffers
  Eigen::MatrixXd last_shrink_;  // the last shrink's w (not state: a learner reads it right after append)
  std::vector<double> rebase_scratch_;  // the next base while it is formed
  uint64_t version_ = 0;                // changes whenever S does (a raw row, a rebase, clear, load)
  mutable Eigen::VectorXd s_;           // S x for gathered_ at gathered_version_
  mutable std::vector<Coord> gathered_;
  mutable std::vector<uint32_t> positions_;  // gathered_'s positions (kNone: not held)
  mutable uint64_t gathered_version_ = UINT64_MAX;
  uint64_t w_version_ = 0;     // changes whenever W does (and with version_)
  mutable Eigen::VectorXd p_;  // W s_ = B x at p_version_
  mutable uint64_t p_version_ = UINT64_MAX;
  // p_ <- B x, reusing the last product when neither x nor B changed since.
  const Eigen::VectorXd& product(std::span<const Coord> x) const;
};

}  // namespace lepus

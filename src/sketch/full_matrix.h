// full: A exactly, over the slots seen so far, with A⁻¹ kept current by Sherman–Morrison.
//
// A slot gets a dense position (CompactIndex) the first time a rank-one update carries it, up to a cap. A new
// position enters with the prior the fixed d x d matrix has there: A_ii = λ (times the forgetting since),
// zero off the diagonal, i.e. (A⁻¹)_ii = 1 / A_ii. Slots never updated are never stored; A is λ I on them and
// block-diagonal to the rest, so quad and solve treat them exactly without taking them in.
//
// Update (J. Sherman and W. J. Morrison, "Adjustment of an inverse matrix corresponding to a change in one
// element of a given matrix", Ann. Math. Statist. 21(1), 1950; the rank-one form every full-matrix algorithm
// of E. Moroshko, "New Min-Max Algorithms and Analysis for Online Regression", Technion 2013, Chapters 3 and
// 5, uses):
//     u = A⁻¹x,  q = xᵀu,  A⁻¹ <- A⁻¹ − v vᵀ  with  v = u · sqrt(w / (1 + w q))
// O(n·nnz) for u, n²/2 multiply-adds for the update (n = slots held). Writing the change as v vᵀ keeps the
// inverse exactly symmetric (v_i v_j == v_j v_i in floating point), so only its upper triangle is stored
// current: the lower one would hold the same numbers. quad needs only the
// nnz x nnz block of A⁻¹: O(nnz²); solve reads nnz columns: O(n·nnz).
//
// Forgetting: A = s Â with the global factor s; the class stores C = Â⁻¹ (so A⁻¹ = C / s) and updates Â with
// weight w / s. scale(r) is then O(1); the stored numbers are multiplied out when s < 2^-100.
// Memory: 8 n_cap² bytes once n reaches the capacity (grown by doubling up to the cap).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "sketch/compact_index.h"
#include "sketch/matrix.h"

namespace lepus {

class FullMatrix final : public Matrix {
 public:
  static constexpr uint64_t kDefaultCap = 4096;
  // lambda > 0 and 1 <= cap <= 65536 (ConfigError); tracked_bits > 0: keep b over 2^tracked_bits slots.
  explicit FullMatrix(double lambda, uint64_t cap = kDefaultCap, int tracked_bits = 0);

  MatrixKind kind() const override { return MatrixKind::kFull; }
  double quad(std::span<const Coord> x) const override;
  double solve(std::span<const Coord> x, std::vector<Coord>& out) const override;
  // xᵀA⁻¹b = Σ (A⁻¹x)_i b_i over the held slots (the column product solve forms) plus x_i b_i / A_ii on the
  // others: O(n·nnz), no more than quad's O(nnz²) plus the update's O(n²).
  Products products(std::span<const Coord> x) const override;
  bool concurrent_products() const override { return true; }  // scratch per thread
  void update(std::span<const Coord> x, double weight, double beta) override;
  const TrackedVector& tracked() const override { return b_; }
  void rank_one_update(std::span<const Coord> x, double weight = 1.0) override;
  void scale(double r) override;
  void reset() override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  void visit(MatrixVisitor& v) const override;

  double lambda() const { return lambda_; }
  double prior() const { return prior_ * scale_; }  // A_ii on slots never held: λ times the forgetting
  uint64_t cap() const { return cap_; }
  size_t size() const { return index_.size(); }  // slots held
  const CompactIndex& index() const { return index_; }
  // (A⁻¹)_ij for held positions i, j.
  double inverse(uint32_t i, uint32_t j) const { return upper(i, j) / scale_; }
  // For auto's switch to a sketch, after which this matrix is dropped, so that the switch decomposes A⁻¹ where it
  // lies instead of in copies: the lower triangle of A⁻¹ over the held positions, each entry as inverse() gives
  // it, packed into an n x n matrix at the start of the storage (its upper triangle undefined); and b handed over.
  // The matrix is of no further use.
  Eigen::Map<Eigen::MatrixXd> take_inverse();
  TrackedVector take_tracked() { return std::move(b_); }

 private:
  struct Seen {
    uint32_t position;
    double x;
  };
  // The calling thread's scratch, so that products() may run on several threads at once (a daemon's
  // concurrent predictions). One per thread for all its full matrices: a matrix's version_ is a stamp no other
  // matrix state has had, so the product kept is found only for the x and the state it was formed with.
  struct Scratch {
    std::vector<Seen> seen;
    Eigen::VectorXd u;  // C x for u_x while u_version == version_
    std::vector<Coord> u_x;
    uint64_t u_version = 0;
  };
  static Scratch& scratch();
  static uint64_t fresh_version();  // a stamp never given before (process-wide)
  // s.seen <- (position, value); outside: Σ x² over the slots not held.
  void gather(std::span<const Coord> x, double& outside, Scratch& s) const;
  void times_inverse(std::span<const Coord> x, Eigen::Index n,
                     Scratch& s) const;  // s.u <- C x (n: slots held)
  void reserve(size_t n);                // capacity for n positions
  void renormalize();
  double upper(Eigen::Index i, Eigen::Index j) const { return i <= j ? inv_(i, j) : inv_(j, i); }  // C_ij

  double lambda_;
  uint64_t cap_;
  double scale_ = 1.0;  // s: A = s Â
  double prior_;        // Â_ii of a slot not held (λ until the first renormalization)
  CompactIndex index_;
  TrackedVector b_;
  // C = Â⁻¹: the upper triangle of the top-left size() x size() block (C is symmetric; the lower triangle is
  // neither written nor read, so an update costs n²/2); inv_.cols() is the capacity.
  Eigen::MatrixXd inv_;
  uint64_t version_ = fresh_version();  // a new stamp whenever C or the slots held change
};

}  // namespace lepus

// diag: only the diagonal of A = λ I + Σ w x xᵀ, one number per slot: the diagonal approximation that runs
// second-order online learners at hashed dimension (e.g. the diagonal variant of K. Crammer, A. Kulesza,
// M. Dredze, "Adaptive Regularization of Weight Vectors", NIPS 2009). It carries none of the full
// algorithms' guarantees; lepus uses it as the "diagonal of the precision" rule. Every operation touches only
// x's slots: O(nnz).
//     quad(x) = Σ_i x_i² / A_ii,   solve(x)_i = x_i / A_ii,   update: A_ii += w x_i².
// It equals `full` whenever every x has a single nonzero, and differs from it otherwise.
//
// Storage: a flat table of 2^bits doubles indexed by the slot (slots are hashes already masked to 2^bits, so
// the table is a perfect hash: one memory access, no probing, no per-entry overhead), 0 meaning "never
// updated: the prior". Its memory equals that of a learner's own weight table of doubles (2 MiB at -b 18); an
// unordered_map would cost ~5x more per touched slot and a pointer chase per feature, and would only pay at
// large -b with few touched slots. reset() and the rare renormalization of the forgetting factor are
// O(2^bits); save writes only the touched slots. A learner whose hot loop needs one cache line per feature
// keeps its diagonal interleaved in its own slot table instead; this component serves learners that choose
// the matrix at run time. Forgetting: A = s Â as in full_matrix.h; scale(r) is O(1).
#pragma once
#include <cstdint>
#include <vector>

#include "sketch/matrix.h"

namespace lepus {

class DiagMatrix final : public Matrix {
 public:
  // lambda > 0 and 1 <= bits <= 32 (ConfigError). Slots are masked to 2^bits. tracked: keep b (matrix.h).
  DiagMatrix(double lambda, int bits, bool tracked = false);

  MatrixKind kind() const override { return MatrixKind::kDiag; }
  double quad(std::span<const Coord> x) const override {
    double q = 0.0;
    for (const Coord& c : x) q += c.x * c.x / stored(c.slot);
    return q / scale_;
  }
  double solve(std::span<const Coord> x, std::vector<Coord>& out) const override;
  Products products(std::span<const Coord> x) const override {  // Σ x_i² / A_ii, Σ x_i b_i / A_ii
    Products p;
    const bool kept = b_.enabled();
    for (const Coord& c : x) {
      const double y = c.x / stored(c.slot);
      p.quad += c.x * y;
      if (kept) p.cross += y * b_[c.slot];
    }
    p.quad /= scale_;
    p.cross /= scale_;
    return p;
  }
  bool concurrent_products() const override { return true; }
  void update(std::span<const Coord> x, double weight, double beta) override;
  const TrackedVector& tracked() const override { return b_; }
  void rank_one_update(std::span<const Coord> x, double weight = 1.0) override;
  void scale(double r) override;
  void reset() override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  void visit(MatrixVisitor& v) const override;

  double lambda() const { return lambda_; }
  int bits() const { return bits_; }
  double diagonal(uint64_t slot) const { return stored(slot) * scale_; }  // A_ii
  // For auto's switch to the diagonal: A_ii = a for one slot (a > 0), and b handed over (its bits must be this
  // matrix's; std::logic_error otherwise).
  void set_diagonal(uint64_t slot, double a) { diag_[slot & mask_] = a / scale_; }
  void adopt_tracked(TrackedVector b);

 private:
  double stored(uint64_t slot) const {  // Â_ii
    const double a = diag_[slot & mask_];
    return a == 0.0 ? prior_ : a;
  }
  void renormalize();

  double lambda_;
  int bits_;
  uint64_t mask_;
  double scale_ = 1.0;        // s: A = s Â
  double prior_;              // Â_ii of a slot never updated
  ZeroedTable<double> diag_;  // Â_ii, 0 = never updated; costs the pages touched
  TrackedVector b_;
};

}  // namespace lepus

// auto: the full matrix while it is small, a sketch (or, with beyond = diag, the diagonal) once it is not.
// While at most max_dense slots are held, A
// is kept exactly (full_matrix.h). The update that would pass max_dense first turns the full matrix into a
// sketch of rank m (sketch_matrix.h) and goes there: A − λ'I = V diag(μ) Vᵀ (λ' the prior, λ times the
// forgetting; the eigenvectors of the held block of A⁻¹, μ_i = 1/e_i − λ'), and the rows √μ_i v_iᵀ, largest
// first, are fed to Frequent Directions. Those rows have the same Gram matrix as the rows √w_t x_tᵀ the full
// matrix took, so the sketch carries Frequent Directions' guarantees for the whole stream (BᵀB ⪯ A − λ'I ⪯
// BᵀB + ΔI). Cost of the switch: one eigendecomposition of the held block, O(max_dense³) once (about 0.5 s
// at 1000), and max_dense rank-one sketch updates. The tracked b moves over as it is (the sketch forms B b).
// beyond = diag goes on with A's diagonal (diag_matrix.h): A_ii of the held slots from A = (A⁻¹)⁻¹, the prior on
// the others, so the diagonal is the one a diag matrix would hold after the same updates; cost O(max_dense³)
// once (an LDLᵀ of the held block of A⁻¹), then O(nnz) per example.
#pragma once
#include <memory>
#include <utility>

#include "sketch/diag_matrix.h"
#include "sketch/full_matrix.h"
#include "sketch/matrix.h"
#include "sketch/sketch_matrix.h"

namespace lepus {

class AutoMatrix final : public Matrix {
 public:
  explicit AutoMatrix(const MatrixOptions& options);  // ConfigError for options out of range

  MatrixKind kind() const override { return MatrixKind::kAuto; }
  double quad(std::span<const Coord> x) const override { return current().quad(x); }
  double solve(std::span<const Coord> x, std::vector<Coord>& out) const override {
    return current().solve(x, out);
  }
  Products products(std::span<const Coord> x) const override { return current().products(x); }
  bool concurrent_products() const override { return current().concurrent_products(); }
  void update(std::span<const Coord> x, double weight, double beta) override;
  const TrackedVector& tracked() const override { return current().tracked(); }
  void rank_one_update(std::span<const Coord> x, double weight = 1.0) override;
  void scale(double r) override { current().scale(r); }
  void reset() override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  void visit(MatrixVisitor& v) const override;

  bool sketched() const { return sketch_ != nullptr; }
  bool switched() const { return !full_; }  // to the sketch or the diagonal
  const Matrix& current() const;
  Matrix& current() { return const_cast<Matrix&>(std::as_const(*this).current()); }

 private:
  void switch_if_full(std::span<const Coord> x, double weight);  // before an update that would pass max_dense
  // What a switch takes from the full matrix: the held slots, its prior (λ times the forgetting, which `next`
  // is scaled by), b, and the held block of A⁻¹ in place in its storage (valid until full_ is dropped).
  struct Held {
    std::vector<uint64_t> slots;
    double prior;
    TrackedVector b;
    Eigen::Map<Eigen::MatrixXd> inverse;
  };
  Held take_held(Matrix& next);
  void switch_to_sketch();
  void switch_to_diag();
  uint8_t state_code() const;
  std::unique_ptr<FullMatrix> make_full() const;
  std::unique_ptr<SketchMatrix> make_sketch() const;

  MatrixOptions opt_;
  std::unique_ptr<FullMatrix> full_;      // until the switch
  std::unique_ptr<SketchMatrix> sketch_;  // after it (beyond = sketch)
  std::unique_ptr<DiagMatrix> diag_;      // after it (beyond = diag)
};

}  // namespace lepus

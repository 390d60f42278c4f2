// sketch: A ≈ (λ + Δ) I + BᵀB, with B a Frequent Directions sketch (frequent_directions.h) of the rows √w_t
// x_tᵀ and Δ its shrinkage mass: the "sketch plus cumulative-shrinkage ridge" form of sketched second-order
// learning (H. Luo, A. Agarwal, N. Cesa-Bianchi, J. Langford, "Efficient Second Order Online Learning by
// Sketching", NIPS 2016, which pairs FD with a ridge and the Woodbury identity). Adding Δ back keeps the
// sketch on the safe side in the Loewner order, which is what lets the regret proofs of the full algorithms
// go through with the sketch in place of A:
//     A_sketch ⪰ A_true,   ‖A_sketch − A_true‖₂ <= Δ <= Σ_t w_t ‖x_t‖² / (m + 1)   (without forgetting),
//     A_sketch after an update ⪰ A_sketch before + w x xᵀ      (a shrink removes R ⪯ δ I and adds δ I).
// While the rows span at most m dimensions the sketch is exact: A_sketch = A_true.
// A learner may add back only a fraction c of Δ (`shrink_back`, 1 by default): c = 0 is the plain sketch
// λ I + BᵀB ⪯ A_true of Luo et al.'s FD-SON. On sparse high-dimensional data Δ grows with the stream and acts as
// a ridge on every direction (AIOLI on the rcv1 x20 slice: average logistic loss 0.606 with c = 1, 0.147 with
// c = 0), so the learners without a sketched regret bound use c = 0.
//
// Products by the Woodbury identity (M. A. Woodbury, "Inverting Modified Matrices", 1950) in two levels, so
// that the large, old mass is inverted direction by direction. δ = λ + Δ. B = [B₁; B₂]: B₁ the rows the last
// shrink left, orthogonal (B₁B₁ᵀ = diag(g)), B₂ the j <= m rows appended since (before the first shrink all
// rows are B₂).
//     A₁ = δ I + B₁ᵀB₁:  A₁⁻¹ = (1/δ) (I − B₁ᵀ diag(1 / (δ + g)) B₁)                   (exact per direction)
//     A  = A₁ + B₂ᵀB₂:   A⁻¹ = A₁⁻¹ − A₁⁻¹B₂ᵀ N⁻¹ B₂A₁⁻¹,   N = I + B₂A₁⁻¹B₂ᵀ = L Lᵀ   (j x j, N ⪰ I)
// With p = B x = [p₁; p₂] and everything B₂A₁⁻¹(.) reads taken from the Gram matrix G = BBᵀ the sketch keeps:
//     quad(x) = (‖x‖² − Σ_k p₁,k² / (δ + g_k)) / δ − ‖L⁻¹ w‖²,  w = (p₂ − G₁₂ᵀ diag(1/(δ+g)) p₁) / δ
//         O(m · nnz + m²);
//     solve(x) = (x − Bᵀ c) / δ over every slot held,  c = [diag(1/(δ+g)) (p₁ − G₁₂ t); t],  t = N⁻¹ w
//         O(m · nnz + m² + m · columns).
// L grows by one row per update (the Schur complement of N is 1 + x̂ᵀA⁻¹x̂ >= 1): O(m · nnz + m²); after a
// shrink it is rebuilt for the one new row. Why two levels: a single core (δ I + BBᵀ)⁻¹ over all rows mixes
// the scales δ and σ²(B) in one inverse, and for x inside B's span its rounding grows like (σ²/δ)². Here the
// old mass is inverted per direction and N ⪰ I stays well conditioned (unless the few rows since the last
// shrink are large against δ in directions B₁ does not hold), so the error grows about linearly in σ²/δ, the
// price of any (1/δ)(I − ...) form. Measured on a forgetting stream (λ r^t falling against the data):
// relative error 1.7e-9 at condition number 2.6e7 (a single core: 2e-3), 3e-7 at 1.5e9, 4e-4 at 1.6e12;
// `full` stays at 1e-15 there. Forgetting: A = s Â as in full_matrix.h (B stores √(w / s) x rows); scale(r)
// is O(1); N does not change when the stored numbers are renormalized.
// The tracked vector (matrix.h): the sketch keeps q = B b (2m numbers) current as b and B change: b += βx adds
// β·Bx (Bx is formed for the update anyway), a new row √w·xᵀ gets √w·xᵀb, and a shrink maps q as it maps the
// rows. Then, with w_b the level-2 vector of q as w is of p above,
//     xᵀA⁻¹b = (xᵀb − Σ_k p₁,k q₁,k / (δ + g_k)) / δ − (L⁻¹w)ᵀ(L⁻¹w_b)          O(m · nnz + m²),
// where forming A⁻¹x through solve() would cost a pass over every column held.
//
// The diagonal correction (`diagonal` c > 0; lepus's variant): the ridge becomes a diagonal,
//     A_sketch = D + BᵀB,   D = λ' I + c diag(R),   R = Σ_t w_t x_t x_tᵀ − BᵀB ⪰ 0 (the mass the shrinks removed),
// λ' = λ + c_Δ Δ as above (shrink_back). diag(R) is exact per coordinate: the sketch keeps each column's
// Σ w x² beside B, and R's diagonal is that less the column's squared norm in B. Where FD's Δ I spreads the
// removed mass evenly over every direction, D returns it to the coordinates it came from: a pixel whose
// variance the top directions miss keeps a ridge of its own size, and a rare text feature (never in those
// directions) keeps its own mass rather than Δ, which grows with the whole stream. No Loewner bound is
// claimed for this form (D is refreshed in steps, below); AIOLI, its user, claims none for its sketch either.
// Products, one level (Woodbury over D): with K = I + B D⁻¹ Bᵀ = L Lᵀ (rows x rows) and u = B D⁻¹ b,
//     quad(x) = xᵀD⁻¹x − ‖L⁻¹ B D⁻¹ x‖²,   xᵀA⁻¹b = xᵀD⁻¹b − (L⁻¹ B D⁻¹ x)ᵀ(L⁻¹ u)     O(m · nnz + m²).
// D (λ' included) is refreshed when the sketch forms its base again (frequent_directions.h: every
// ~sqrt(m · columns / 5) rows, right after a shrink), where B's columns are read anyway: O(m² · columns) then.
// Between refreshes D stays as it was (a column new since has the λ' of the last refresh), so K follows B
// exactly: an appended row borders L (O(m · nnz + m²)), a shrink maps K − I by its m x 2m matrix on both sides
// and factors the m x m result (O(m³)).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "sketch/frequent_directions.h"
#include "sketch/matrix.h"

namespace lepus {

class SketchMatrix final : public Matrix {
 public:
  static constexpr uint32_t kDefaultRank = 32;
  static constexpr uint64_t kDefaultCap = uint64_t{1} << 20;
  // lambda > 0, 1 <= rank <= 1024, 1 <= cap <= 2^28 (ConfigError).
  // 0 <= shrink_back <= 1 (ConfigError).
  // tracked_bits > 0: keep b over 2^tracked_bits slots.
  // 0 <= diagonal <= 1e6 (ConfigError): the diagonal correction's c (0: none).
  SketchMatrix(double lambda, uint32_t rank = kDefaultRank, uint64_t cap = kDefaultCap,
               double shrink_back = 1.0, int tracked_bits = 0, double diagonal = 0.0);

  MatrixKind kind() const override { return MatrixKind::kSketch; }
  double quad(std::span<const Coord> x) const override;
  double solve(std::span<const Coord> x, std::vector<Coord>& out) const override;
  Products products(std::span<const Coord> x) const override;
  void update(std::span<const Coord> x, double weight, double beta) override;
  const TrackedVector& tracked() const override { return b_; }
  // Takes b (its bits must be this sketch's) and forms q = B b afresh: O(m · columns), once (auto's switch).
  void adopt_tracked(TrackedVector b);
  void rank_one_update(std::span<const Coord> x, double weight = 1.0) override;
  void scale(double r) override;
  void reset() override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  void visit(MatrixVisitor& v) const override;

  double lambda() const { return lambda_; }
  double shrinkage() const { return sketch_.shrinkage() * scale_; }  // Δ, true units
  const FrequentDirections& sketch() const { return sketch_; }       // B / √s

 private:
  double delta() const { return prior_ + shrink_back_ * sketch_.shrinkage(); }  // δ̂ = δ / s
  // xᵀÂ⁻¹x (unclamped); leaves p_ = B̂x, z_ = diag(1/(δ̂+g)) p₁, y_ = L⁻¹w.
  double core(std::span<const Coord> x) const;
  void border(uint32_t row);  // L gains the row of B̂'s row `row` (a B₂ row)
  void renormalize();
  // out[slot] += v / divisor for v's nonzero coordinates: a slot held at its position in out, another appended.
  void add_into(std::span<const Coord> v, double divisor, std::vector<Coord>& out) const;
  // The diagonal correction's steps (sketch_matrix_diag.cc).
  double d_at(uint32_t position) const {  // D̂ at a column position (kNone: a slot no row carried)
    return floor_ + (position < ridge_.size() ? ridge_[position] : 0.0);
  }
  double scaled(std::span<const Coord> x, std::vector<Coord>& out) const;  // out = D̂⁻¹x; returns xᵀD̂⁻¹x
  double diag_core(std::span<const Coord> x) const;  // xᵀÂ⁻¹x unclamped; leaves p_ = B̂D̂⁻¹x, y_ = L⁻¹p_
  Products diag_products(std::span<const Coord> x) const;
  double diag_solve(std::span<const Coord> x, std::vector<Coord>& out) const;
  void diag_update(std::span<const Coord> x, double weight);
  void refresh();                                                // D̂, K, L and u afresh over every column
  uint32_t factor_size(const FrequentDirections& sketch) const;  // L's rows as saved
  struct Diagonal {
    double floor = 0.0;
    std::vector<double> mass, ridge;
    Eigen::MatrixXd kd;
  };
  Diagonal load_diagonal(ModelReader& in, const FrequentDirections& sketch) const;  // checked
  void factor(uint32_t rows);  // L <- chol(I + kd_) over the first rows

  double lambda_;
  double shrink_back_;  // c: the fraction of Δ in the ridge
  double scale_ = 1.0;  // s: A = s Â
  double prior_;        // Â's ridge from the prior (λ until the first renormalization)
  FrequentDirections sketch_;
  Eigen::MatrixXd l_;  // L, lower triangular: top-left j x j, j = rows − orthogonal rows
  TrackedVector b_;
  Eigen::VectorXd q_;  // B̂ b over the rows in use (2m entries, 0 beyond), when b is kept
  mutable Eigen::VectorXd p_, z_, y_, c_, zb_, yb_;  // scratch
  mutable std::vector<double> column_;               // scratch: Bᵀc
  // The diagonal correction (diagonal_ > 0). L (l_) is then chol(I + B̂D̂⁻¹B̂ᵀ) over every row in use, and q_
  // holds u = B̂ D̂⁻¹ b.
  double diagonal_;
  std::vector<double> mass_;       // per column position: Σ w x² / s, the exact diagonal of Â's data part
  double floor_ = 0.0;             // δ̂ as of the last refresh (the prior before the first)
  std::vector<double> ridge_;      // per column position: c · its removed mass, as of the last refresh
  Eigen::MatrixXd kd_;             // B̂ D̂⁻¹ B̂ᵀ over the rows in use (2m x 2m)
  mutable std::vector<Coord> xs_;  // scratch: D̂⁻¹x
  Eigen::VectorXd t_;              // scratch: B̂ D̂⁻¹ r for a row r joining
};

}  // namespace lepus

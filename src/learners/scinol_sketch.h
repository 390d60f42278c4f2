// scinol-full --matrix sketch, default variant (scinol2; see scinol_full.h for the full-matrix rule and its
// sources): Sigma_t = V_{t-1} + diag(M_t^2) with V replaced by a Frequent Directions sketch of the rows g x~
// plus its cumulative shrinkage ridge,
//     Sigma~ = Lambda + BᵀB,   Lambda = diag(M~²) + Δ I   (x~ = x / d, d the first-seen |x| as below)
// (the "sketch plus shrinkage" of H. Luo, A. Agarwal, N. Cesa-Bianchi, J. Langford, "Efficient Second Order
// Online Learning by Sketching", NIPS 2016; Sigma~_t ⪰ Sigma~_{t-1} + g² x xᵀ as there). Woodbury over the
// diagonal Lambda: with K = I + BΛ⁻¹Bᵀ (2m x 2m), z = BΛ⁻¹h, p = BΛ⁻¹x,
//     xᵀΣ~⁻¹x = xᵀΛ⁻¹x − pᵀK⁻¹p,  xᵀΣ~⁻¹h = xᵀΛ⁻¹h − pᵀK⁻¹z,  hᵀΣ~⁻¹h = hᵀΛ⁻¹h − zᵀK⁻¹z  (K = L Lᵀ,
//     Cholesky).
// K, z and hᵀΛ⁻¹h are kept: a grown maximum changes one Λ_ii (K += f b bᵀ with b = B e_i: O(m²)), a new row
// |g| x~ adds K's row |g| p, and a shrink (Δ changes every Λ_ii) rebuilds them from B's columns (O(m² n),
// every m rows). While no shrink has removed anything (the rows g x~ span at most m dimensions) the
// predictions are the full mode's. Kept: per-feature rescaling changes no prediction (x~ and M~ absorb it).
// Given up, beyond the full mode's: Δ I is isotropic in x~, so once Δ outweighs diag(M~²) (rank far below the
// data's) the prior is the first-seen scales', a worse one (mnist 3 vs 5 at rank 20: test error 0.058 against
// the full mode's 0.050).
//
// The published variant:
// scinol-full --matrix sketch: Algorithm 2 of W. Kotłowski, "Scale-Invariant Unconstrained Online Learning"
// (ALT 2017, Section 4) with S_t replaced by a Frequent Directions sketch plus its cumulative shrinkage
// ridge,
//     S~ = BᵀB + Δ I   (B the sketch of the rows x~_t, Δ the mass its shrinks removed;
//     frequent_directions.h),
// the "sketch plus shrinkage" form of H. Luo, A. Agarwal, N. Cesa-Bianchi, J. Langford, "Efficient Second
// Order Online Learning by Sketching" (NIPS 2016). The proof of Lemma 4.3 goes through for any surrogate with
// S~_t ⪰ S~_{t-1} + x_t x_tᵀ (a shrink removes R ⪯ δ I and adds δ I), with S~^† in Γ, so the regret bound of
// Theorem 4.5 holds with ||u||_{S~_T}; the predictions are invariant under per-feature rescaling always, and
// under every invertible linear map only while Δ = 0 (the ridge is isotropic).
//
// Round t, from the state before it (lepus's order; Sherman–Morrison gives S~_{t-1} + x xᵀ's quantities, the
// sketch takes x afterwards, so predicting and learning see the same matrix and the surrogate sequence stays
// Loewner-monotone):
//     with p = B x, q = B h, G = B Bᵀ = U diag(μ) Uᵀ:
//     Δ > 0:  S~⁻¹ = (1/Δ)(I − Bᵀ (Δ I + G)⁻¹ B)      (Woodbury)
//     Δ = 0:  S~^† = Bᵀ (G^†)² B, and x is outside the span when it has a never-seen feature or
//             ||x_perp||² = ||x||² − pᵀ G^† p > τ ||x||²
//     s_xx = xᵀS~^†x, s_xh = xᵀS~^†h, s_hh = hᵀS~^†h; in the span: β = 1 + s_xx,
//     c = s_hh − s_xh²/β, r = s_xh/β, lev = s_xx/β; outside it: c = s_hh, r = 0, lev = 1 (ŷ = 0 exactly);
//     η = exp((c − Γ)/(2α))/α, ŷ = η r;  h <- h − g x,  Γ += g² lev,  then B takes the row x.
// While the rows span at most m dimensions no shrink removes anything (Δ = 0) and the sketch equals S: the
// predictions are scinol-full's. The algorithm runs on x~_i = x_i / d_i, d_i the |value| feature i had when
// first seen, as in the full mode. Cost per example O(m · nnz + m³): a Cholesky factor of the 2m x 2m Δ I + G
// (m³/3 · 8 flops, then one triangular solve for each of p and q) once Δ > 0, an eigendecomposition of G
// before (the rank decision needs its spectrum), memory O(m · features) plus 16 bytes per slot of -b for h
// and the scales.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "core/coords.h"
#include "learners/common/plumbing.h"
#include "learners/scinol_full.h"
#include "lepus/learner.h"
#include "sketch/frequent_directions.h"
#include "sketch/matrix.h"
#include "sketch/sym_eigen.h"

namespace lepus {

class ScinolSketchLearner final : public Learner {
 public:
  ScinolSketchLearner(const ScinolFullOptions& options, uint32_t rank, const Loss& loss, int bits,
                      bool test_only = false);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "scinol-full"; }
  void merge(Collective& ranks) override;
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return caps_; }

  // For tests: the last round's quantities and the state.
  struct Last {
    bool new_direction = false;
    double eta = 0.0, yhat = 0.0, g = 0.0, lev = 0.0;
  };
  const Last& last() const { return last_; }
  double gamma() const { return gamma_; }
  double wealth() const { return wealth_; }
  double shrinkage() const { return sketch_.shrinkage(); }
  const FrequentDirections& sketch() const { return sketch_; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  struct Prepared {
    bool new_direction = false;
    double c = 0.0, r = 0.0, lev = 0.0, xh = 0.0, xx = 0.0;
    double xlx = 0.0, xlh = 0.0;  // scinol2: xᵀΛ⁻¹x, xᵀΛ⁻¹h
  };
  const std::vector<Coord>& scaled(const SparseVector& v,
                                   bool& fresh) const;  // x_ <- x~; fresh: a new feature
  Prepared prepare(const std::vector<Coord>& x, bool fresh) const;
  template <class Self, class V>
  static void scinol2_state(Self& self, V& v, bool scinol2, Eigen::Index r);
  double eta(double c) const;
  double bet(double c) const;              // scinol2: (wealth/2) min(1, 1/sqrt(c))
  double played(const Prepared& q) const;  // yhat - initial: eta r (published) or the clamped bet r
  double score(const Example& x) const;
  // scinol2 (see the .cc)
  double lambda(uint64_t slot) const;
  double ridge() const;
  double lam(double m) const;
  void rebuild();
  void grow(const std::vector<Coord>& x, Eigen::MatrixXd& kk, Eigen::VectorXd& z, double& hlh,
            bool store) const;
  Prepared prepare2(const std::vector<Coord>& x, const Eigen::MatrixXd& kk, const Eigen::VectorXd& z,
                    double hlh) const;
  Prediction learn2(const Example& x, const SparseVector& sv, const std::vector<Coord>& v, bool fresh);
  Eigen::VectorXd sketch_multiply(const std::vector<Coord>& v) const;

  ScinolFullOptions opt_;
  uint32_t rank_;
  const Loss& loss_;
  int bits_;
  common::LabelClip clip_;
  FrequentDirections sketch_;
  TrackedVector scales_;  // d_i, 0 = never seen
  TrackedVector h_;       // h, in x~ coordinates
  double hh_ = 0.0;       // ||h||²
  Eigen::VectorXd q_;     // B h (2m entries)
  double gamma_ = 0.0;
  double wealth_ = 0.0;                    // scinol2
  TrackedVector maxes_;                    // scinol2: M_i = max |x~_i| (0 = never seen)
  Eigen::MatrixXd kk_;                     // scinol2: K = I + BΛ⁻¹Bᵀ (2m x 2m, rows() in use)
  Eigen::VectorXd z_;                      // scinol2: BΛ⁻¹h
  double hlh_ = 0.0;                       // scinol2: hᵀΛ⁻¹h
  mutable std::vector<Coord> grown_, xl_;  // scratch
  mutable uint64_t caps_ = 0;
  Last last_;
  mutable VectorBuilder builder_;
  mutable std::vector<Coord> x_;  // scratch: x~
  mutable Eigen::VectorXd p_;
  mutable SymEigen eig_;             // Δ = 0
  mutable Eigen::MatrixXd k_;        // Δ > 0: Δ I + G, factored in place
  mutable Eigen::VectorXd lp_, lq_;  // L⁻¹p, L⁻¹q
};

}  // namespace lepus

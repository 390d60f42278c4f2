// ftprl-full --matrix sketch: the full-matrix FTPRL of ftprl_full.h (H. B. McMahan and M. Streeter, "Adaptive
// Bound Optimization for Online Convex Optimization", COLT 2010, master algorithm eq. (2)/(5), Lemma 2 eq. (7)
// and (9)) with the gradients' second moment M_t = sum g gᵀ replaced by a Frequent Directions sketch plus its
// cumulative shrinkage ridge, as in H. Luo, A. Agarwal, N. Cesa-Bianchi, J. Langford, "Efficient Second Order
// Online Learning by Sketching" (NIPS 2016):
//     M~_t = BᵀB + Δ_t I,   Q_{1:t} = M~_t^{1/2} / R,   feasible set the ball ||w|| <= R.
// Frequent Directions gives M~_t ⪰ M~_{t-1} + g_t g_tᵀ (a shrink removes at most δ I and adds δ I), and the
// square root is operator monotone, so every increment Q_t is ⪰ 0 and Theorem 2's a-posteriori bound holds for
// the Q_t used. While the gradients span at most m dimensions nothing is shrunk (Δ = 0) and the iterates are
// those of the full mode (directions no gradient touched keep Q = 0 and w = 0 there).
//
// With B = U Σ Vᵀ (thin SVD through G = BBᵀ = U Σ² Uᵀ), s = sqrt(Δ) and D = sqrt(Δ + Σ²) − s:
//     Q_{1:t} = (s I + V D Vᵀ) / R.
// The ball projection of u_{t+1} = Q_{1:t}^{-1} y_t, y_t = q_t − z_t (eq. (7), (9)), is
//     w_{t+1} = (Q_{1:t} + μ I)^{-1} y_t = R/τ (y − V diag(D/(τ + D)) Vᵀy),   τ = s + μR,
// μ >= 0 the root of ||w(μ)|| = R when μ = 0 lies outside: ||w(μ)||² = R² (||y_⊥||²/τ² + Σ a_k²/(τ + D_k)²),
// a = Vᵀy (with Δ = 0, y_⊥ = 0 and w = R V diag(1/(τ + D)) a: the pseudo-inverse of the full mode). From
// Q_{1:t-1} w_t = y_{t-1} − μ_{t-1} w_t the recurrence y_t = y_{t-1} + Q_t w_t − g_t becomes
//     y_t = (Q_{1:t} + μ_{t-1} I) w_t − g_t = κ w_t + Bᵀ U diag(1/(sqrt(Δ + Σ²) + s)) Uᵀ (B w_t) / R − g_t,
// κ = (s + μ_{t-1} R)/R: y needs no storage of its own. Every vector here lies in the span of the gradients and
// is kept as
//     w = ω u + Bᵀc,   u = α v + Sᵀe,
// c one number per sketch row (g_t itself is ±Bᵀ for the row it adds), S the sketch's base rows (B = W S;
// frequent_directions.h), which a shrink leaves alone, and v a dense vector over the sketch's columns. Right
// before a shrink c is folded into u (u <- ω u + Bᵀc: α <- ωα, e <- ωe + Wᵀc, no column touched); right before
// the sketch forms its base again, u is written into v (O(m · columns), once per rebase, as the sketch's own).
// B u and ||u||² are kept as the shrinks map them.
// G's eigendecomposition is carried from one example to the next: the appended row borders G, so the new one
// follows from the old in O(m²) plus one (2m)³ product (bordered_eigen.h; after a shrink G's first m rows are
// orthogonal, G diagonal there); a full decomposition only when that route declines (deflation).
// Cost per example O(m · nnz + m³) plus the sketch's amortised rebase; memory O(m · columns).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "core/coords.h"
#include "learners/common/plumbing.h"
#include "learners/ftprl_full.h"
#include "lepus/learner.h"
#include "sketch/bordered_eigen.h"
#include "sketch/frequent_directions.h"
#include "sketch/sym_eigen.h"

namespace lepus {

class FtprlSketchLearner final : public Learner {
 public:
  FtprlSketchLearner(const FtprlFullOptions& options, uint32_t rank, const Loss& loss, int bits,
                     bool test_only = false);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  // One round with gradient dloss * x (learn() is predict + this).
  void update(const Example& x, double dloss);
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "ftprl-full"; }
  void merge(Collective& ranks) override;
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return safeguards_; }

  double weight(uint64_t slot) const;             // w_i, the point played next: O(m + rows)
  double weight_norm() const;                     // ||w||, from the representation: O(rows²)
  double radius() const { return radius_; }       // R, or the data-derived c / X (ftprl_full.h)
  double largest_norm() const { return x_max_; }  // X, the largest ||x|| learned from (data-derived radius)
  double mu() const { return mu_; }  // the last projection's multiplier (0: the ball was not active)
  const FrequentDirections& sketch() const { return sketch_; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  struct Dots {
    double xu = 0.0, xw = 0.0;  // x . u, x . w
  };
  Dots dots(const SparseVector& x) const;     // both from one S x (learn() shares them with the update)
  double dot_u(const SparseVector& x) const;  // u . x (S x as the sketch has it now)
  void step(const SparseVector& v, double dloss, const Dots& d);  // update() with x's dots given
  void fold();                                                    // u <- w, ω <- 1, c <- 0 (before a shrink)
  void materialize();                                             // v <- u, α <- 1, e <- 0 (before a rebase)
  template <class Self, class V>
  static void eigen_state(Self& self, V& v, bool current, Eigen::Index n);

  FtprlFullOptions opt_;
  double radius_;       // R_t
  double x_max_ = 0.0;  // X_t (data-derived radius)
  uint32_t rank_;
  const Loss& loss_;
  int bits_;
  common::LabelClip clip_;
  FrequentDirections sketch_;  // the rows |l'| x, so BᵀB sketches sum g gᵀ
  std::vector<double> v_;      // v, one number per sketch column
  double alpha_ = 1.0;         // u = α v + Sᵀe
  Eigen::VectorXd e_;          // e (the sketch's width() entries in use)
  double uu_ = 0.0;            // ||u||²
  Eigen::VectorXd bu_;         // B u (2m entries, rows() in use)
  double omega_ = 0.0;         // w = ω u + Bᵀc
  Eigen::VectorXd c_;          // c (2m entries)
  double mu_ = 0.0;
  mutable uint64_t safeguards_ = 0;
  mutable VectorBuilder builder_;
  mutable Eigen::VectorXd p_;  // B x
  // G = U diag(λ) Uᵀ as the last update left it (the next update borders it, the next shrink uses it): λ
  // ascending in lam_'s first rows() entries, U in vec_'s top-left block; lam_next_, vec_next_ the next.
  Eigen::VectorXd lam_, lam_next_;
  Eigen::MatrixXd vec_, vec_next_;
  bool eig_current_ = false;  // lam_, vec_ are of the sketch's G now
  BorderedEigen bordered_;
  SymEigen eig_;                                       // when the bordered route declines
  Eigen::VectorXd bw_, t_, cy_, gc_, av_, dv_, coef_;  // the update's scratch (2m entries)
};

}  // namespace lepus

// --matrix sketch for wemm and the LASER rows: the learner's second-order state in a rank-k form over the hashed
// slots seen, at O(n·k) per example for n slots held (O(n·k²) for LASER's eager basis rotation) instead of O(n²),
// with no cap on n. The low-rank forms are ours (the thesis, E. Moroshko, "New Min-Max Algorithms and Analysis
// for Online Regression", M.Sc. thesis, Technion 2013, gives only the full recursions of Tables 3.1 and 5.1);
// both are exact while the inputs span at most k dimensions.
//
// WEMM (Chapter 3, eqs 3.18-3.19): Σ_t = Σ_{t−1} − g_t g_tᵀ with g_t = Σ_{t−1}x_t and Σ_0 = I/b unrolls to
//     Σ_t = I/b − Z Zᵀ,   Z = [g_1, ..., g_t]   (exact),
// so a round is  a = Zᵀx,  g = x/b − Z a,  m = ‖x‖²/b − ‖a‖²,  w += r g,  Z <- [Z, g].  When Z reaches 2k
// columns it is compressed to k, Frequent-Directions style (E. Liberty, "Simple and Deterministic Matrix
// Sketching", KDD 2013): ZᵀZ = V diag(σ²) Vᵀ (Eigen, 2k x 2k) and Z <- Z V_k, the top k singular directions,
// i.e. ZZᵀ is replaced by its best rank-k approximation, which is ⪯ ZZᵀ. Hence the sketched Σ is never below the
// exact one at a compression, and Σ ⪯ I/b always (ZZᵀ ⪰ 0), so m <= ‖x‖²/b < 1 stays guaranteed for b > ‖x‖²:
// dropping part of ZZᵀ only makes the learner more cautious in the least explored of its directions.
//
// LASER (Chapter 5, Table 5.1): the precision D = Σ⁻¹ in eigen-form
//     D = Q diag(λ) Qᵀ + δ (I − QQᵀ),   Q (n x j, j <= k) orthonormal,   D_0 = δ_0 I, δ_0 = bc/(c − b).
// The drift step P = Σ + I/c moves every eigenvalue of Σ by 1/c, so on the precision it is exact per eigenvalue:
// λ <- λc/(λ + c), δ <- δc/(δ + c). A round, with z = Qᵀx, x⊥ = x − Qz, ρ = ‖x⊥‖ (old λ, δ):
//     P x = Q diag(1/λ + 1/c) z + (1/δ + 1/c) x⊥,   m = Σ_i z_i² (1/λ_i + 1/c) + ρ² (1/δ + 1/c),
//     ŷ = p/(1 + m),  w += ((y − p)/(1 + m)) P x,  the drift map on λ and δ,  then D += x xᵀ:
// on the basis [Q, x⊥/ρ] D is diag(λ, δ) + v vᵀ with v = [z; ρ] (and δ I outside it), whose (j+1) x (j+1)
// eigendecomposition (Eigen) rotates the basis. Beyond k pairs the one whose eigenvalue μ is closest to δ returns
// to the isotropic part, which lowers the precision there, i.e. adds plasticity, the direction LASER's own drift
// acts in; its excess μ − δ is not thrown away but spread evenly over the isotropic part of the n slots held,
// δ <- δ + (μ − δ)/(n − k), so the trace of D over the slots held is kept. Without that, inputs with a part in
// many directions (isotropic noise) lose it every round and δ falls as the drift map alone makes it, c/t: on a
// 200-dimensional stream of a rank-20 signal plus noise (docs/minmax_sketch.md) a rank-30 sketch then loses 38%
// against full, with it 3% less than full. While the inputs span at most k dimensions the dropped μ is δ (up to
// rounding) and the sketch stays exact. λ, δ > 0 always.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <ostream>
#include <vector>

#include "core/coords.h"
#include "lepus/model_io.h"
#include "sketch/compact_index.h"
#include "sketch/sym_eigen.h"

namespace lepus {

class MinmaxSketch {
 public:
  enum class Form : uint8_t { kWemm, kLaser };
  static constexpr uint32_t kMaxRank = 1024;

  // wemm: Σ_0 = I/b; laser: D_0 = (bc/(c − b)) I (0 < b < c). 1 <= rank <= kMaxRank.
  MinmaxSketch(Form form, double b, double c, uint32_t rank);

  // The round's numbers on x at unit scale: m = xᵀPx (P = Σ, or Σ + I/c for LASER) and p = wᵀx. Keeps x's
  // positions and Zᵀx (Qᵀx) for a following update() of the same vector.
  struct Round {
    double m = 0.0, p = 0.0;
  };
  Round prepare(const SparseVector& v) const;
  // The update for the vector last prepared, taught as (s x, ·): w += coef · P(s x), and the state as the form
  // says with Σ -= gain · (P s x)(P s x)ᵀ for WEMM (gain = γ/(1 + γm), 1 up to rounding). Returns false, changing
  // nothing, when a number is not finite.
  bool update(const SparseVector& v, double s, double coef, double gain);

  double weight(uint64_t slot) const;
  double sigma(uint64_t slot_i, uint64_t slot_j) const;      // Σ_ij (current)
  double precision(uint64_t slot_i, uint64_t slot_j) const;  // LASER: D_ij = (Σ⁻¹)_ij
  Form form() const { return form_; }
  uint32_t rank() const { return rank_; }
  size_t slots() const { return index_.size(); }
  Eigen::Index columns() const { return cols_; }  // columns of Z, or pairs kept in Q
  // The columns in use over the slots held (Z, or Q), and LASER's eigenvalues and isotropic precision.
  Eigen::MatrixXd basis() const;
  Eigen::VectorXd lambda() const { return lambda_.head(cols_); }
  double delta() const { return delta_; }

  // The saved state, declared once (learners/common/state.h), nested in the learner's: b and c are the ones
  // the learner read, bits its -b. Readable: slot:w Σ_ii lines, by slot.
  template <class Self, class V>
  static void state(Self& self, V& v, double b, double c, int bits);

 private:
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  void grow(size_t n);
  static size_t capacity(size_t held, size_t n);  // rows for n slots, doubling from `held` (at least 16)
  void fit_scratch();                             // the scratch sized to the rows
  void compress_wemm();
  void add_laser(double s, Eigen::Index n);

  Form form_;
  double b_, c_;
  uint32_t rank_;
  Eigen::Index capacity_cols_;  // 2k (wemm) or k + 1 (laser)
  CompactIndex index_;
  RowMatrix basis_;  // Z or Q: a row per slot held (capacity rows), capacity_cols_ columns, cols_ in use
  Eigen::VectorXd w_;
  Eigen::Index cols_ = 0;
  Eigen::VectorXd lambda_;  // laser: the eigenvalues of the pairs kept
  double delta_ = 0.0;      // laser: the isotropic precision
  // scratch (sized once, grown with the slots)
  mutable std::vector<uint32_t> pos_;
  mutable std::vector<double> xv_;
  mutable Eigen::VectorXd a_;  // Zᵀx or Qᵀx (unit scale)
  mutable double sq_ = 0.0;    // ‖x‖²
  Eigen::VectorXd g_, e_, small_;
  RowMatrix tmp_;
  Eigen::MatrixXd gram_;
  SymEigen eig_;
};

}  // namespace lepus

// aioli: AIOLI, improper online logistic regression (R. Jézéquel, P. Gaillard, A. Rudi, "Efficient improper
// learning for online logistic regression", COLT 2020, arXiv 2003.08109; Section 2, eq. (2)-(5), Theorem 1).
//
// Problem: labels y in {-1, +1}, logistic loss l(z, y) = log(1 + e^{-yz}); compete with every theta in the
// ball ||theta|| <= B. The prediction is improper: yhat_t = theta_t . x_t with theta_t depending on x_t.
// Estimator (eq. (3)): FTRL on the quadratic surrogates of the past rounds (eq. (2), curvature
// eta_s = e^{y_s yhat_s} / (1 + BR)) plus the current input with both labels, plus lambda ||theta||^2:
//     theta_t = argmin  sum_{s<t} lhat_s(theta) + l(theta.x_t, +1) + l(theta.x_t, -1) + lambda ||theta||^2.
// Sufficient statistics (eq. (5), written along x_s; g_s = -y_s sigma(-m_s) x_s, m_s = y_s yhat_s):
//     A_t = A_{t-1} + kappa_t x_t x_t',  kappa_t = 1 / (4 (1 + BR) (1 + cosh m_t)),        A_0 = lambda I,
//     b_t = b_{t-1} + beta_t x_t,        beta_t = (y_t / 2) (sigma(-m_t) + m_t sigma(m_t) sigma(-m_t) / (1 + BR)).
// (Algorithms 1-2 print the b increment without eq. (5)'s factor 1/2; eq. (5) is right: it is the one that
// minimises eq. (3). eta_t itself is never formed: it overflows past m = 709, kappa and beta are bounded.)
// Prediction, an exact 1-D form of eq. (3) (lepus's reduction; the paper's Lemma 2 solves a 2-D problem by
// gradient descent to the same point): the optimality condition 2 A theta - 2 b + tanh(theta.x / 2) x = 0
// gives theta = A^-1 (b - tanh(yhat/2) x / 2), so yhat is the unique root of
//     f(z) = z + (s/2) tanh(z/2) - c,   s = x' A^-1 x,  c = x' A^-1 b   (f' >= 1),
// in [min(0, c), max(0, c)] and within s/2 of c: sign(yhat) = sign(c), |yhat| <= |c|. The larger the novelty s
// of x, the more yhat shrinks toward 0: the improper effect.
// Regret (Theorem 1): for every ||theta|| <= B,
//     R_n(theta) <= lambda ||theta||^2 + d (1 + BR) log(1 + n R^2 / (8 d (1 + BR) lambda)).
//
// Modes (--matrix): full keeps A exactly (Theorem 1 holds); diag keeps diag(A) (no guarantee, O(nnz)); sketch
// keeps a Frequent Directions sketch of the rows sqrt(kappa_t) x_t (no guarantee). R, the bound on ||x_t||,
// is the largest norm learned from so far unless --aioli_R fixes it. An importance weight k multiplies kappa
// and beta (k repetitions of the surrogate).
// Online to batch (--aioli_o2b, Section 4.2, Corollary 6): the state (A_{tau-1}, b_{tau-1}) of a round tau drawn
// uniformly from the rounds learned is kept (reservoir sampling: round t replaces the snapshot with probability
// 1/t, a copy about ln n times), saved in the model, and a -t run predicts with it: f(x) is the root above with
// s and c from the snapshot. For i.i.d. data its expected excess loss over the best ||theta|| <= B is at most
// (d (1 + BR) log(1 + n B^2 R^2 / (8 d (1 + BR))) + 1) / n (lambda = 1/B^2).
// Feature scale (--aioli_scale feature, the default; lepus's practical variant, not in the paper): AIOLI's
// fixed B and lambda = 1/B^2 assume features of order 1; on raw data (pixels 0-255) the prior is far too weak
// and the curvature 1/(1 + BR) far too small (mnist 3 vs 5, one pass: progressive loss 0.449 raw against 0.158
// on the same pixels divided by 255). So each coordinate is fed as u_i = x_i / s_i, s_i the largest |x_i| seen
// so far (this example's included, as ScInOL's M_i; saved in the model), and AIOLI runs unchanged on u. For a
// fixed s this is AIOLI with the prior lambda diag(s)^-2 on x and R measured in u, so Theorem 1 holds against
// the ball ||diag(s) theta|| <= B; while an s_i still grows, the past rounds' statistics keep their older scale
// (the bound is then not claimed). Predictions are unchanged by multiplying any feature column by a nonzero
// constant (exactly, up to rounding). --aioli_scale none is the published algorithm.
// The squared loss (--loss_function squared): the regularization AIOLI takes from the Vovk-Azoury-Warmuth
// forecaster (the paper's Section 1, "non-linear Ridge": the current input with label 0) is, for this loss, the
// whole algorithm, and aioli runs it (V. Vovk, "Competitive on-line statistics", 2001, the Vovk-Azoury-Warmuth
// forecaster; K. Azoury, M. Warmuth, "Relative loss bounds for on-line density estimation with the exponential
// family of distributions", 2001):
//     theta_t = argmin sum_{s<t} (theta.x_s - y_s)^2 + (theta.x_t)^2 + lambda ||theta||^2,
//     A_t = A_{t-1} + x_t x_t', b_t = b_{t-1} + y_t x_t,   yhat_t = x' (A_{t-1} + x x')^-1 b_{t-1} = c / (1 + s)
// (Sherman-Morrison), labels minus the base prediction, an importance weight k multiplying both increments.
// Regret against every theta for labels |y| <= Y: lambda ||theta||^2 + d Y^2 log(1 + n R^2 / (d lambda)) (Vovk
// 2001's bound, as E. Moroshko's "New Min-Max Algorithms and Analysis for Online Regression", Technion 2013,
// Table 4.1 lists it), with the same feature scales and the same claim as above. It is the min-max rule `aaw`
// over the matrix component (its modes, its feature scales). B and R enter only the logistic rule. The default
// mixture keeps aioli for the logistic loss (LearnerTraits::mixture_losses; docs/algorithms/aioli.md says what
// including it measured).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/coords.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"
#include "sketch/matrix.h"

namespace lepus {

struct AioliOptions {
  double radius = 1.0;           // --aioli_B: the comparator ball's radius B
  std::optional<double> lambda;  // --aioli_lambda; default 1/B^2 (Theorem 1's choice)
  std::optional<double> r;       // --aioli_R; default: the largest ||x|| learned from so far
  MatrixKind matrix = MatrixKind::kAuto;
  uint32_t rank = 10;                       // --rank, sketch mode
  uint64_t max_dense = 1000;                // --max_dense_features, auto mode
  MatrixKind beyond = MatrixKind::kSketch;  // --beyond_dense, auto mode
  bool o2b = false;                         // --aioli_o2b
  bool scale = true;                        // --aioli_scale feature (true) or none
  double sketch_diagonal = 0.0;             // --aioli_sketch_diagonal: the sketch's diagonal correction c
  uint64_t full_cap = 0;  // full mode: the most slots held (0: the component's default); not an option
  double ridge() const { return lambda ? *lambda : 1.0 / (radius * radius); }
  static AioliOptions from(const OptionValues& values);  // throws ConfigError
};

// The root of z + (s/2) tanh(z/2) = c (s >= 0): safeguarded Newton inside the bracket [min(0,c), max(0,c)] and
// [c - s/2, c + s/2], to a relative 1e-15.
double aioli_root(double s, double c);

// The surrogate's coefficients at margin m with 1 + BR = one_plus_br (before the importance weight).
struct AioliStep {
  double kappa, beta;
};
AioliStep aioli_step(double m, double y, double one_plus_br);

class AioliLearner final : public Learner, public PredictsConcurrently {
 public:
  AioliLearner(const AioliOptions& options, const Loss& loss, int bits, bool test_only = false,
               uint64_t random_seed = 0);
  Prediction predict(const Example& x) const override;
  bool concurrent_predict() const override {  // its vector in per-thread buffers; the matrix's products
    return a_->concurrent_products() && (!snap_a_ || snap_a_->concurrent_products());
  }
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "aioli"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return safeguards_; }

  // The quantities of the prediction of x: s = x'A^-1 x, c = x'A^-1 b and yhat.
  struct Round {
    double s = 0.0, c = 0.0, yhat = 0.0;
  };
  Round evaluate(const Example& x) const;
  double r() const { return opt_.r ? *opt_.r : r_max_; }
  // --aioli_o2b: the prediction of the snapshot's state (the online state before any snapshot), the round the
  // snapshot was taken before (1-based; 0: none), and taking it now (what the reservoir does with chance 1/t).
  double predict_o2b(const Example& x) const;
  uint64_t snapshot_round() const { return snap_round_; }
  void take_snapshot();
  const Matrix& matrix() const { return *a_; }
  double b(uint64_t slot) const { return a_->tracked()[slot]; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

  // The learner on a vector built elsewhere (aioli-kernel's Nystrom features, src/learners/aioli_kernel.h): yhat
  // with the offset `initial` included (the double whose float is the played prediction), and one round learned
  // with label y in {-1, +1} and importance weight `weight` (<= 0: nothing learned), `norm` taking the place of
  // ||v|| in the default R (the largest norm learned from).
  double predict_vector(const SparseVector& v, double initial = 0.0) const {
    return evaluate(v, initial).yhat;
  }
  double learn_vector(const SparseVector& v, double y, double weight, double initial, double norm);

 private:
  // One round on v: the played prediction, and (teach) the update. `norm` enters the default R.
  Prediction learn_round(const SparseVector& v, double initial, bool teach, double y, double weight,
                         double norm, double* yhat = nullptr);
  Round evaluate(const SparseVector& v, double initial) const;
  Round evaluate_with(const Matrix& a, const SparseVector& v, double initial) const;
  Prediction output(double yhat) const;
  // x's vector as AIOLI sees it: each coordinate divided by its scale s_i (--aioli_scale feature; valid until the
  // next call); `learn` first raises s_i to |x_i| where that is larger.
  const SparseVector& input(const Example& x, bool learn) const;

  AioliOptions opt_;
  int bits_;
  common::LabelClip clip_;
  std::unique_ptr<Matrix> a_;  // A = lambda I + sum kappa_t x_t x_t' and (tracked) b = sum beta_t x_t
  double r_max_ =
      0.0;  // the largest ||x|| learned from (R when --aioli_R is not given); 0 under the squared rule
  bool squared_ = false;  // the squared loss: the Vovk-Azoury-Warmuth forecaster (see above)
  bool test_only_;
  uint64_t seed_;
  uint64_t rounds_ = 0;             // rounds learned (the reservoir's t)
  uint64_t snap_round_ = 0;         // the snapshot holds the state before this round (0: none)
  std::unique_ptr<Matrix> snap_a_;  // --aioli_o2b: A and b of the snapshot
  TrackedVector scale_;             // s_i, the largest |x_i| learned from (--aioli_scale feature)
  // input()'s buffers when learning; a prediction uses the calling thread's (common::thread_builder and one
  // Scaled per thread), as predict() may run on several threads at once.
  mutable VectorBuilder builder_;
  struct Scaled {
    std::vector<Coord> coords;
    SparseVector view;
  };
  mutable Scaled scaled_;
  mutable common::Tally safeguards_;
};

LearnerRow aioli_row();

}  // namespace lepus

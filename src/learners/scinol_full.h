// scinol-full: second-order scale-invariant learning, in two variants (--scinol_full_variant).
//
// scinol2 (the default): the prior and the coin-betting wealth of ScInOL2 (M. Kempka, W. Kotłowski,
// M. K. Warmuth, "Adaptive Scale-Invariant Online Algorithms for Learning Linear Models", ICML 2019,
// arXiv:1902.07528, Algorithm 2 "ScInOL2": per coordinate w_i = sign(theta) min(|theta|, 1) eta_i / (2 D_i),
// D_i^2 = S2_i + M_i^2, theta = G_i / D_i, eta_i -= g x_i w_i; lepus's scinol2.h) carried to a full matrix:
//     Sigma_t = V_{t-1} + diag(M_t^2),   V = sum_{q<t} g_q^2 x_q x_q',   M_{t,i} = max_{q<=t} |x_{q,i}|
//     c = h'Sigma_t^-1 h (||theta||^2),  r = x'Sigma_t^-1 h,  h = -sum_{q<t} g_q x_q
//     yhat = clamp((W/2) min(1, 1/sqrt(c)) r, -W/2, W/2);   W -= g (yhat - initial),   W_0 = eps (one wealth)
// With Sigma diagonal this is ScInOL2's weight with D^2 = Sigma_ii, and in one dimension it is ScInOL2
// exactly
// (|x| <= M <= D, so the clamp never acts). Why: the published algorithm below bets eta = exp((c - Gamma) /
// (2 alpha)) / alpha with Gamma growing by g^2 for every new direction of the span, and predicts 0 exactly on
// every example that leaves the span; on 784 raw pixels (578 ever inked) that is the first ~580 examples of a
// pass and a bet near 0 after them (mnist 3 vs 5, one pass: progressive loss 0.692, test error 0.549).
// Here diag(M^2), ScInOL2's prior, makes Sigma invertible from the first example, so nothing is forced to 0,
// and the wealth starts betting at once.
// Kept: predictions unchanged by any per-feature rescaling x_i -> a_i x_i (a_i != 0) and permutation (V and
// diag(M^2) both map to A . A for diagonal A): raw pixels and pixels / 255 give the same predictions; the
// coin-betting identity sum_t g_t (yhat_t - initial) = eps - W_T with W_t >= W_{t-1}/2 > 0 (|g| <= 1 and the
// clamp), so the linearised loss against u = 0 is at most eps, as ScInOL2's is eps per coordinate.
// Given up: invariance under every invertible linear map (the diagonal prior is coordinate-bound) and the
// regret bound of Theorem 4.5 below; no regret bound for this matrix form is claimed (ScInOL2's bound is per
// coordinate, and the shared wealth and the clamp are not in its analysis).
// State: Sigma^-1 over the features seen (a new feature enters with Sigma_ii = M_i^2, |x~| = 1 below), a =
// Sigma^-1 h, c, h, M, W. A round: the grown maxima enter by Woodbury over them (K = diag(1/delta) +
// (Sigma^-1)_KK, Cholesky) for the prediction, then by one Sherman-Morrison each; V's g^2 x x' by one more.
// O(n^2) per example plus O(n^2) per grown maximum, n features seen. The projector of the published variant
// is not needed (Sigma is invertible).
//
// published: the fully scale-invariant second-order algorithm (W. Kotłowski, "Scale-Invariant Unconstrained
// Online Learning", ALT 2017, Section 4: Algorithm 2, eq. (7); Lemma 4.3; Theorem 4.5; the rank-one
// pseudo-inverse update of Appendix E).
//
// Problem: unconstrained online linear prediction with a convex L-Lipschitz loss; predictions unchanged when
// the inputs go through any invertible linear map A (x -> A x, Appendix D), with regret against every u
//     R_T(u) <= ||u||_{S_T} sqrt(alpha ln(1 + alpha ||u||^2_{S_T}) + Gamma_T) + 1,   ||u||^2_S = u'S u
// (Theorem 4.5, with Gamma_T in place of the printed log(alpha) Gamma_T: the derivation gives Gamma_T).
// Update, g_t = dloss/dyhat / L clipped to [-1, 1] (importance weight included):
//     S_t = S_{t-1} + x_t x_t'                                         (before predicting)
//     eta_t = exp((h_{t-1}' S_t^+ h_{t-1} - Gamma_{t-1}) / (2 alpha)) / alpha
//     yhat_t = eta_t x_t' S_t^+ h_{t-1}
//     h_t = h_{t-1} - g_t x_t,   Gamma_t = Gamma_{t-1} + g_t^2 x_t' S_t^+ x_t
// (Gamma is the recursive sum of Algorithm 2, each term with its own round's S^+.) Stored: S^+
// (Moore-Penrose) and the projector P = S S^+ onto span{x_1..x_t} (Appendix E needs it, though the text says
// S^+ suffices), a = S^+ h, c = h'S^+ h, Gamma, h. With u = S^+ x, b = x'u, x_perp = (I - P) x, r0 = a'x:
//     x in the span (||x_perp||^2 <= tau ||x||^2): S^+ -= u u'/(1 + b)      (Sherman-Morrison),
//     else (k = 1/||x_perp||^2): S^+ += -k (u x_perp' + x_perp u') + (1 + b) k^2 x_perp x_perp',
//                                 P += k x_perp x_perp'; and then yhat = 0 exactly: an example leaving the
//                                 span of the past (round 1, any never-seen feature) is predicted 0.
// Numerics: the algorithm runs on x~_i = x_i / d_i, d_i the |value| feature i had when first seen (fixed; the
// predictions do not depend on any fixed invertible map of the inputs, Appendix D), so S^+ and P are as well
// conditioned as on column-normalised data whatever the features' units: a feature 10^6 times another's scale
// changes no rounding beyond that of x~ itself. Rank decision: x leaves the span when it has a feature no
// past example had (exact), or when ||x~_perp||^2 > tau ||x~||^2, and never once the span holds every feature
// seen (rank = n: P's rounding drift, amplified by k for nearly dependent rows, had declared rows of a full
// span new directions again and predicted them 0 — on mnist 3 vs 5 every example after the 800th). Matrices
// are dense over the features seen so far (a compact slot index; a slot enters outside the span), O(n^2) per
// example for n features seen, at most --max_dense_features (4096; memory 16 n^2 bytes).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "core/coords.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"
#include "sketch/compact_index.h"

namespace lepus {

// Which algorithm --learner scinol-full runs (--scinol_full_variant): the practical one carried from ScInOL2
// (the default) or Algorithm 2 as published.
enum class ScinolFullVariant : uint8_t { kScinol2 = 0, kPublished = 1 };

struct ScinolFullOptions {
  ScinolFullVariant variant = ScinolFullVariant::kScinol2;
  double eps = 1.0;        // scinol2: the wealth each new dimension of the span brings
  double alpha = 1.5;      // alpha > 9/8 (Lemma 4.3)
  double lipschitz = 1.0;  // L
  double tau = 1e-10;      // rank decision: x is in the span when ||x_perp||^2 <= tau ||x||^2 (scaled, below)
  uint64_t cap = 4096;     // most features the matrices may hold
  static ScinolFullOptions from(const OptionValues& values);  // throws ConfigError
};

// Round t's quantities of Algorithm 2 from S_{t-1}'s s_xx = x'S^+x, s_xh = x'S^+h, s_hh = h'S^+h: for x in
// the span, Sherman-Morrison for S_t = S_{t-1} + x x' (beta = 1 + s_xx: c = s_hh - s_xh^2/beta, r =
// s_xh/beta, lev = s_xx/beta); for x leaving it (Appendix E, case 2), c = s_hh, r = 0 (yhat = 0 exactly), lev
// = 1. c = h'S_t^+h, r = x'S_t^+h, lev = x'S_t^+x. Shared by the full and the sketched modes.
struct ScinolRankOne {
  bool new_direction;
  double c, r, lev;
};
ScinolRankOne scinol_rank_one(bool in_span, double s_xx, double s_xh, double s_hh);
// eta = exp((c - Gamma) / (2 alpha)) / alpha, the exponent capped at kMaxExponent (each cap counted in caps).
double scinol_eta(double c, double gamma, double alpha, uint64_t& caps);

class ScinolFullLearner final : public Learner {
 public:
  // exp() arguments above this are capped (counted), as in scinol-coord.
  static constexpr double kMaxExponent = 650.0;
  static constexpr double kMaxWealth = 1e280;  // scinol2: the wealth is capped (counted), as in scinol2

  ScinolFullLearner(const ScinolFullOptions& options, const Loss& loss, int bits, bool test_only = false);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "scinol-full"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return caps_; }

  // One round: S updated with x, yhat predicted, then g (the loss's slope, or `g_linear` when use_loss is
  // false) scaled by the importance weight, clipped to [-L, L], divided by L. Returns the unrounded yhat.
  double round(const Example& x, bool use_loss, double g_linear = 0.0);
  double predict_score(const Example& x) const;

  // For tests: the quantities of the last round and the state.
  // eta: the factor of r = x'S^+h in yhat (published: eta_t; scinol2: the bet (wealth/2) min(1, 1/sqrt(c))).
  struct Last {
    bool new_direction = false;
    double eta = 0.0, yhat = 0.0, g = 0.0, lev = 0.0;
  };
  const Last& last() const { return last_; }
  double gamma() const { return gamma_; }
  double wealth() const { return wealth_; }  // scinol2: the wealth after the last round
  double c() const { return c_; }
  double h(uint64_t slot) const;
  double pinv(uint64_t i, uint64_t j) const;       // (S^+)_ij
  double projector(uint64_t i, uint64_t j) const;  // P_ij
  size_t size() const { return index_.size(); }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  struct Prepared {  // round t's quantities before the label
    bool new_direction = false;
    double cp = 0.0, r = 0.0, lev = 0.0, b = 0.0, k = 0.0, r0 = 0.0;
  };
  bool insert_new(const SparseVector& v);    // x's slots not held enter outside the span (cap checked); any?
  void gather(const SparseVector& v) const;  // seen_ <- x's held positions and values; fresh_: some not held
  // fresh: x has a slot no past example had, so it leaves the span whatever the rounding says.
  Prepared prepare(const SparseVector& v, bool fresh) const;
  double eta(double cp) const;
  bool published() const { return opt_.variant == ScinolFullVariant::kPublished; }
  // scinol2: round t's lev = x'Sigma_t^-1 x, r = x'Sigma_t^-1 h, c = h'Sigma_t^-1 h, with `fresh` never-seen
  // features (predict only); grow_ <- the features whose max |x~| grows, with x~^2 - M^2.
  struct Bet {
    double r = 0.0, c = 0.0, lev = 0.0;
  };
  Bet prepare_bet(uint32_t fresh) const;
  double bet(double c) const;         // scinol2: (wealth/2) min(1, 1/sqrt(c))
  double played(const Bet& q) const;  // scinol2: yhat - initial, bet r clamped to half the wealth
  double round_scinol2(const Example& x, bool use_loss, double g_linear);
  void reserve(size_t n);

  ScinolFullOptions opt_;
  const Loss& loss_;
  int bits_;  // the hash's -b, recorded: slots mean nothing under another
  common::LabelClip clip_;
  CompactIndex index_;
  Eigen::MatrixXd pinv_, proj_;  // S^+ and P, the top-left size() block (capacity grows by doubling)
  Eigen::VectorXd h_, a_;        // h and a = S^+ h over the held positions
  Eigen::VectorXd scale_;        // d_i: feature i's |value| the first time it was seen
  double c_ = 0.0;               // h'S^+h
  double gamma_ = 0.0;
  uint64_t rank_ = 0;    // rank of S (case-2 updates so far; on load, P's trace)
  double wealth_ = 0.0;  // scinol2: the wealth eta (eps per dimension of the span, plus the winnings)
  mutable uint64_t caps_ = 0;
  Last last_;
  mutable VectorBuilder builder_;
  struct Seen {
    uint32_t position;
    double x;
  };
  mutable std::vector<Seen> seen_;
  mutable Eigen::VectorXd u_, xp_;
  Eigen::VectorXd m_;               // scinol2: M_i = max |x~_i| so far (ScInOL2's M)
  mutable std::vector<Seen> grow_;  // scinol2: (position, x~^2 - M^2) of the features whose max grows
  Eigen::VectorXd col_;             // scratch
  mutable bool fresh_ = false;      // gather found slots not held
};

LearnerRow scinol_full_row();

}  // namespace lepus

// ftprl-full: FTPRL with a full-matrix, data-adaptive regularizer on the L2 ball ||w|| <= R (H. B. McMahan
// and M. Streeter, "Adaptive Bound Optimization for Online Convex Optimization", COLT 2010: the master
// algorithm of eq. (2)/(5), its closed form Lemma 2, eq. (7) and (9), and Theorem 2's a-posteriori bound).
//
// Master step: play w_t; after g_t = l'(w_t . x_t) x_t (importance weight included) pick Q_t >= 0 and set
//     u_{t+1} = Q_{1:t}^+ (q_t - z_t),  q_t = sum_{tau<=t} Q_tau w_tau,  z_t = sum_{tau<=t} g_tau,
//     w_{t+1} = argmin_{||w|| <= R} (w - u_{t+1})' Q_{1:t} (w - u_{t+1}).
// Schedule (the full-matrix analogue of FTPRL-Diag's lambda_i = sqrt(G_i)/R; the paper gives no adaptive
// full-matrix schedule, Section 3.4): Q_{1:t} = M_t^{1/2} / R, M_t = sum g g'. The matrix square root is
// operator monotone, so every increment Q_t = Q_{1:t} - Q_{1:t-1} is >= 0 as Theorem 2 needs, and for one
// feature this is exactly FTPRL-Diag. Directions no gradient has touched keep Q = 0 and w = 0 there (the
// pseudo-inverse: the paper's "hallucinated" first gradient would throw w to the boundary instead).
// Theorem 2 then bounds the regret against every u in the ball, for whatever Q_t were used:
//     sum_t g_t.(w_t - u) <= 1/2 sum_t (u - w_t)' Q_t (u - w_t) + sum_t g_t' Q_{1:t}^+ g_t.
// Projection in the Q-norm onto the ball: with Q = V diag(l) V', w = V diag(l / (l + mu)) V' u, mu >= 0 the
// root of ||w(mu)|| = R (monotone; safeguarded Newton on 1/||w|| - 1/R).
// Cost: one symmetric eigendecomposition of M per update, O(n^3) for n features seen; memory 3 n^2 doubles.
// Exact and meant for few features (--max_dense_features, 256 by default).
//
// The data-derived radius (--ftprl_radius not given; lepus's variant, not in the paper, which gives no
// default): the ball is scale-dependent (multiplying every feature by k makes the comparator k times smaller,
// while the steps M^{-1/2} g are unchanged), so R_t = c / X_t, X_t the largest ||x|| learned from (this
// example's included in its update), c = kDataRadiusFull (ftprl.h): the comparator's score is at most c on
// every example seen. Then Q_{1:t} = M_t^{1/2} X_t / c is still nondecreasing (both factors are), the played
// point lies in the ball of R_{t-1} and the next in the smaller one of R_t, so Theorem 2's bound above holds
// for every u in the final ball ||u|| <= c / X_T. Multiplying every feature by k > 0 leaves every prediction
// unchanged (exactly, up to rounding). Both modes (full and --matrix sketch) do this; --ftprl_radius R
// restores the fixed ball.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "core/coords.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"
#include "sketch/compact_index.h"

namespace lepus {

// The master step over n coordinates, independent of the schedule and the feasible set.
struct FtprlFullCore {
  Eigen::MatrixXd q_cum;        // Q_{1:t}
  Eigen::VectorXd q, z;         // q_t and z_t
  void resize(Eigen::Index n);  // grows, new coordinates zero
  // After playing w with gradient g: Q_{1:t} <- V diag(l) V' (>= the previous Q_{1:t}); returns u_{t+1}, with
  // eigenvalues of Q (given as l) at or below 1e-7 of the largest treated as 0.
  Eigen::VectorXd advance(const Eigen::VectorXd& w, const Eigen::VectorXd& g, const Eigen::MatrixXd& v,
                          const Eigen::VectorXd& l);
};

// argmin_{||w|| <= r} (w - u)' Q (w - u) for Q = V diag(l) V' (l >= 0; u in Q's range).
Eigen::VectorXd ftprl_ball_projection(const Eigen::MatrixXd& v, const Eigen::VectorXd& l,
                                      const Eigen::VectorXd& u, double r);

// The scale of FTPRL's gradient for a prediction p: l'(p) times the importance weight; a non-finite value is
// counted in `safeguards` and gives 0 (no step). Both modes' learn() step with it.
double ftprl_full_dloss(const Loss& loss, const Prediction& p, const Example& x,
                        const common::LabelClip& clip, uint64_t& safeguards);

struct FtprlFullOptions {
  double radius = 1.0;       // --ftprl_radius R (data_radius: the constant c)
  bool data_radius = false;  // --ftprl_radius not given on the command line: R = c / the largest ||x|| so far
  uint64_t cap = 256;        // --max_dense_features
  static FtprlFullOptions from(const OptionValues& values);  // throws ConfigError
};

class FtprlFullLearner final : public Learner {
 public:
  FtprlFullLearner(const FtprlFullOptions& options, const Loss& loss, int bits, bool test_only = false);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  // One round with gradient dloss * x (learn() is predict + this).
  void update(const Example& x, double dloss);
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "ftprl-full"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return safeguards_; }

  double weight(uint64_t slot) const;             // w_i, the point played next
  double radius() const { return radius_; }       // R, or the data-derived c / X
  double largest_norm() const { return x_max_; }  // X, the largest ||x|| learned from (data-derived radius)
  // Q_{1:t} and its last increment as the learner holds them (for the tests of Theorem 2's bound).
  const FtprlFullCore& core() const { return core_; }
  const CompactIndex& index() const { return index_; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  FtprlFullOptions opt_;
  const Loss& loss_;
  int bits_;
  double radius_;       // R_t
  double x_max_ = 0.0;  // X_t (data-derived radius)
  common::LabelClip clip_;
  CompactIndex index_;
  Eigen::MatrixXd m_;  // M = sum g g'
  Eigen::VectorXd w_;
  FtprlFullCore core_;
  mutable uint64_t safeguards_ = 0;
  mutable VectorBuilder builder_;
};

LearnerRow ftprl_full_row();

}  // namespace lepus

// FTPRL: Follow The Proximally-Regularized Leader on a bounded feasible set (the 2010 algorithm, not VW's
// --ftrl, which is FTRL-Proximal of 2013).
//
// Problem: online convex optimisation over a closed bounded convex F containing 0: play w_t in F, then learn
// f_t(w) = loss(<w, x_t> + initial, y_t) from its gradient g_t = k dloss/dp x_t (k: importance weight).
// Update (paper eq. (2), (5); Lemma 2, eq. (7), (9)):
//   w_{t+1} = argmin_{w in F} 1/2 sum_{tau<=t} (w - w_tau)' Q_tau (w - w_tau) + g_{1:t} . w,
//   i.e. u_{t+1} = Q_{1:t}^-1 (q_t - g_{1:t}) with q_t = sum_tau Q_tau w_tau, and w_{t+1} = Proj_F(u_{t+1})
//   in the Q_{1:t}-norm,
// with data-adaptive regularisation increments Q_t >= 0 chosen from the observed gradients:
//   ftprl-diag   Q_{1:t} = diag(2/D_i sqrt(G_i)), G_i = sum g_i^2, box [-R, R]^d (D_i = 2R).
//                Section 3.2: Algorithm 1, Corollary 2, Theorem 3. Algorithm 1 prints u = (g_{1:t} - q)/lbar;
//                lepus uses u = (q - g_{1:t})/lbar, the minimiser of the objective (eq. (9), Lemma 2): the
//                printed sign moves w along the gradient.
//   ftprl-const  Q_{1:t} = (2/D) sqrt(G) I, G = sum ||g||^2, on the ball ||w|| <= R (D = 2R) or on the box
//                (D = 2R sqrt(2^b)). Section 3.1, Corollary 1; Section 3.4, Theorem 6.
//   ftprl-scale  ftprl-const in the coordinates w^_i = w_i / a_i on the ball ||w^|| <= R, i.e. on
//                F = {||A w|| <= R}, A = diag(1/a_i), a_i a per-namespace prior scale.
//                Section 3.4: Algorithm 2, Theorems 5-6. Algorithm 2 prints q_t = alpha_t x_t and
//                u^ = (q_{1:t} - g_{1:t})/abar; Theorem 5's change of variables needs the transformed point
//                w^_t and gradient sum g^_{1:t}, which lepus uses. g^ = A^-T g (Algorithm 2) equals
//                Theorem 5's A^-1 g for the symmetric A.
// Paper: H. B. McMahan and M. Streeter, "Adaptive Bound Optimization for Online Convex Optimization",
// COLT 2010 (Section 1.1, eq. (2); Section 1.4, eq. (5); Section 2: Theorem 2, Lemma 2, eq. (7)-(9);
// Section 3: the three schedules). The paper's algorithms are dense on R^n; the hashed, sparse forms below
// are lepus's own, exact rewritings.
//
// Sparse and exact: each learner touches only the slots of the example's features and reproduces the dense
// algorithm on the 2^b hashed coordinates. ftprl-diag needs nothing more (absent coordinates do not move);
// ftprl-const on the box keeps (u, abar) at each slot's last update and catches up on touch; the ball
// learners keep u = sigma v with a global sigma and ||u||^2 (ftprl_const_box.cc, ftprl_ball.cc). A slot
// occurring twice in one example (a hash collision inside it) is one coordinate whose gradient is dloss
// times the sum of its values: the update runs over the example's vector (core/coords.h), in the example's
// order, or in slot order when some slot repeated. The score sums w_i x_i per feature in the example's order.
// State is double: gradients of features from 1e-30 to 1e30 have squares from 1e-60 to 1e60, beyond float.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/coords.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"

namespace lepus {

// --ftprl_scale: the prior scale a_i > 0 of each slot's weight, by the namespace (feature group) of the
// feature that first updates the slot. "a:0.1,b:10,constant:5,*:1": one-character keys are feature groups
// (a namespace's first character, as in -q and --ignore; " " is the default namespace), `constant` is the
// bias feature, `*` every other feature, interaction features included. Unlisted groups get the `*` scale,
// whose default is 1.
class FtprlScaleSpec {
 public:
  FtprlScaleSpec();
  static FtprlScaleSpec parse(const std::string& text);  // throws ConfigError
  double of_group(unsigned char ns) const { return by_group_[ns]; }
  double other() const { return other_; }
  // The scale of feature `i` of `x`: its feature group's, or other() for interaction features.
  double of_feature(const Example& x, size_t i) const;

 private:
  std::array<double, 256> by_group_;
  double other_ = 1.0;
};

// The data-derived radius's constant c (--ftprl_radius not given; see each learner's file): the balls
// (ftprl-const, ftprl-scale, ftprl-full) take R = c / X, X the largest ||x|| learned from (||x^||, x^_i = x_i
// / M_i, for ftprl-scale), so the comparator's score |w . x| <= R ||x|| is at most c on every example seen;
// ftprl-diag takes R_i = c / (M_i X^) (the box around that ball in x^), and the box of ftprl-const divides
// the features by their largest |x_i|. Chosen by measurement, one pass, logistic, on a9a, rcv1_small, w8a,
// mnist_3v5, higgs, phishing, splice, magic04, mushrooms and banknote (progressive and test loss): diag c in
// {0.03 .. 10} with X^ (without it no c suits both mnist, best near 0.1-0.25, and banknote, best near 3-10),
// 4 best overall; the balls c in {1, 4, 16, 32, 64, 256}, 32 best overall (16 better on a9a, splice and
// higgs, 64 on mnist, rcv1 and mushrooms).
inline constexpr double kDataRadiusDiag = 4.0;
inline constexpr double kDataRadiusBall = 32.0;
// ftprl-full (both modes): its full-matrix steps reach the ball's edge in every direction a gradient opens,
// so a smaller ball: c in {4, 8, 12, 16} on heart, a1a, german, splice, banknote, higgs (full) and mnist_3v5
// (sketch), 12 best overall (8 better on heart and german, 16 on mnist).
inline constexpr double kDataRadiusFull = 12.0;

struct FtprlOptions {
  enum class Set { kBox, kBall };
  double radius = 1.0;       // --ftprl_radius R (data_radius: the constant c)
  bool data_radius = false;  // --ftprl_radius not given on the command line: estimated from the data
  Set set = Set::kBall;      // --ftprl_set (ftprl-const)
  std::string scale_text;    // --ftprl_scale, as given (ftprl-scale)
  FtprlScaleSpec scale;

  static FtprlOptions from(const OptionValues& values);  // throws ConfigError
};

// Shared by the three learners: the loss, the label range, safeguard counts and the example's vector.
class FtprlBase : public Learner, public AuditsSlots {
 public:
  uint64_t safeguard_count() const override { return safeguards_; }
  // VW's clipping range, as sgd keeps it: the loss's initial range widened by every label learned from
  // (frozen under -t). Predictions are clipped to it; the gradient is the loss's at the unclipped score.
  LabelRange label_range() const override { return clip_.range(); }
  double radius() const { return radius_; }
  Prediction predict(const Example& x) const final { return finish(score(x)); }
  // --audit: the weight each feature meets (common::probe_slot); no stored weights for --audit_regressor.
  SlotAudit audit_slot(const Feature& f, int group) const override {
    return common::probe_slot(*this, f, group);
  }
  Prediction learn(const Example& x) final;
  // One round with gradient g = dloss * x (importance weight included). learn() is predict + this. Skips
  // dloss = 0 (then g_t = 0: no state change at all) and counts a non-finite dloss as a safeguard.
  void update(const Example& x, double dloss);

 protected:
  FtprlBase(double radius, const Loss& loss, int bits, bool test_only);
  // The raw score as a float (common::to_float) and the prediction clipped to the label range.
  Prediction finish(double score) const { return clip_.of(common::to_float(score, safeguards_)); }
  // k dloss/dp at the unclipped score p, or 0 if there is nothing to learn (unlabeled, weight <= 0, l' = 0).
  double loss_derivative(const Example& x, float p);
  // The learner's score x.initial + <w, x>.
  virtual double score(const Example& x) const = 0;
  // diag's and box's score: sum clip(u_i, -R, R) x_i over the features, for slots whose first member is u.
  template <class Slot>
  double clipped_score(const ZeroedTable<Slot>& slots, const Example& x) const;
  // The learner's round on x's vector v, dloss finite and nonzero.
  virtual void apply_round(const Example& x, const SparseVector& v, double dloss) = 0;

  const Loss& loss_;
  int bits_;
  uint64_t mask_;
  double radius_;
  common::LabelClip clip_;
  mutable uint64_t safeguards_ = 0;
  VectorBuilder builder_;
};

// ftprl-diag: per slot (u_i, sqrt(G_i), M_i, X^); w_i = clip(u_i, -R_i, R_i), R_i = R given, or c / (M_i X^)
// with M_i the largest |x_i| so far and X^ the largest ||x^||, x^_i = x_i / M_i (the data-derived radius,
// ftprl_diag.cc).
class FtprlDiagLearner final : public FtprlBase {
 public:
  struct Slot {
    double u;  // unprojected point u_i (the played w_i is its clip to [-R_i, R_i])
    double s;  // sqrt(G_i), G_i = sum of g_i^2 (= R lbar_i): one square root per update instead of two
    double m;  // M_i, the largest |x_i| learned from (the data-derived radius; 0 with a given radius)
    double k;  // X^ at the slot's last update (the data-derived radius; 0 with a given radius)
  };

  FtprlDiagLearner(const FtprlOptions& options, const Loss& loss, int bits, bool test_only = false);
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "ftprl-diag"; }
  void merge(Collective& ranks) override;
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;

  const ZeroedTable<Slot>& slots() const { return slots_; }
  double weight(uint64_t slot) const;  // the point played next, w_i (for an example with |x_i| <= M_i)
  bool data_radius() const { return data_radius_; }
  // R_i: R, or c / (M_i X^) (infinite before the slot's first update).
  double slot_radius(uint64_t slot) const;
  double largest_norm() const { return x_max_; }  // X^, the largest ||x^|| learned from, x^_i = x_i / M_i
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  double score(const Example& x) const override;
  void apply_round(const Example& x, const SparseVector& v, double dloss) override;
  template <bool kData>
  void apply(const SparseVector& v, double dloss);

  bool data_radius_;    // R_i = c / (M_i X^), c = radius_
  double x_max_ = 0.0;  // X^
  ZeroedTable<Slot> slots_;
};

// ftprl-const on the box [-R, R]^d, d = 2^b (D = 2R sqrt(d)), exact with lazy updates (ftprl_const_box.cc).
class FtprlConstBoxLearner final : public FtprlBase {
 public:
  struct Slot {
    double u;     // u at the slot's last update (the played w_i = clip(u, -R, R) never changes in between)
    double abar;  // abar at the slot's last update, 0 if never updated
  };

  FtprlConstBoxLearner(const FtprlOptions& options, const Loss& loss, int bits, bool test_only = false);
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "ftprl-const"; }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  void merge(Collective& ranks) override;

  const ZeroedTable<Slot>& slots() const { return slots_; }
  double weight(uint64_t slot) const;
  double u(uint64_t slot) const;  // the current u_i, caught up
  double grad_sum() const { return g_sum_; }
  double abar() const { return abar_; }
  double diameter() const { return 2.0 * half_diameter_; }
  bool data_radius() const { return data_radius_; }
  double largest_value() const { return m_; }  // M, the largest |x_i| learned from (the data-derived radius)
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  double score(const Example& x) const override;
  void apply_round(const Example& x, const SparseVector& v, double dloss) override;

  bool data_radius_;  // the features divided by M: FTPRL on the box [-c, c]^d in x / M (ftprl_const_box.cc)
  double m_ = 0.0;    // M
  double half_diameter_;  // D/2 = R sqrt(2^b)
  double g_sum_ = 0.0;    // G = sum ||g_t||^2
  double abar_ = 0.0;     // abar_t = 2 sqrt(G) / D
  ZeroedTable<Slot> slots_;
};

// ftprl-const on the ball ||w|| <= R (kScaled = false), and ftprl-scale (kScaled = true): ftprl-const on the
// ball ||w^|| <= R in the coordinates w^_i = w_i / a_i, gradients g^_i = a_i g_i, w_i = a_i w^_i.
// u^ = sigma v with a global scale sigma and N = ||u^||^2 kept exactly (ftprl_ball.cc).
template <bool kScaled>
class FtprlBallLearner final : public FtprlBase {
 public:
  struct PlainSlot {
    double v;
  };
  struct ScaledSlot {
    double v;
    double a;  // scale a_i: the prior's, fixed by the slot's first update (0: never updated); data-derived
               // radius: the prior's divided by m
    double m;  // the largest |x_i| learned from (data-derived radius; 0 with a given radius)
  };
  using Slot = std::conditional_t<kScaled, ScaledSlot, PlainSlot>;

  FtprlBallLearner(const FtprlOptions& options, const Loss& loss, int bits, bool test_only = false);
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return kScaled ? "ftprl-scale" : "ftprl-const"; }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  void merge(Collective& ranks) override;

  const ZeroedTable<Slot>& slots() const { return slots_; }
  double weight(uint64_t slot) const;      // w_i (original coordinates)
  double hat_weight(uint64_t slot) const;  // w^_i = w_i / a_i (w_i for ftprl-const)
  double hat_u(uint64_t slot) const;       // u^_i = sigma v_i
  double grad_sum() const { return g_sum_; }
  double abar() const { return abar_; }
  double norm2() const { return norm2_; }  // ||u^||^2
  double sigma() const { return sigma_; }
  double projection_factor() const;  // c = min(1, R / ||u^||)
  bool data_radius() const { return data_radius_; }
  double largest_norm() const { return x_max_; }  // X, the largest ||x^|| learned from (data-derived radius)
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  double score(const Example& x) const override;
  void apply_round(const Example& x, const SparseVector& v, double dloss) override;
  double scale_of(const Slot& s) const;
  void recompute_norm();
  void renormalize();

  FtprlScaleSpec spec_;
  std::string spec_text_;
  bool data_radius_;    // R = c / X (c = c_), X the largest ||x^|| learned from (ftprl_ball.cc)
  double c_;            // the data-derived radius's constant
  double x_max_ = 0.0;  // X
  double g_sum_ = 0.0;  // G^ = sum ||g^_t||^2
  double abar_ = 0.0;   // abar_t = sqrt(G^) / R  (= 2 sqrt(G^) / D, D = 2R)
  double sigma_ = 1.0;  // u^ = sigma v
  double norm2_ = 0.0;  // N = ||u^||^2, updated per touched slot, recomputed every recompute_every_ updates
  uint64_t updates_ = 0;
  uint64_t recompute_every_;
  ZeroedTable<Slot> slots_;
};

using FtprlConstBallLearner = FtprlBallLearner<false>;
using FtprlScaleLearner = FtprlBallLearner<true>;

// --ftprl_radius, shared by the family's rows (ftprl-full's too).
OptionSpec ftprl_radius_spec();

// The registry rows of the family (src/learners/registry.cc).
LearnerRow ftprl_diag_row();
LearnerRow ftprl_const_row();
LearnerRow ftprl_scale_row();

}  // namespace lepus

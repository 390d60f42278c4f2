// The last-step min-max online regressors and their second-order baselines, one learner over one rule table
// (E. Moroshko, "New Min-Max Algorithms and Analysis for Online Regression", M.Sc. thesis, Technion 2013;
// Table 3.1 (stationary) and Table 5.1 (drifting), the recursive right-hand columns):
//
//   wemm            Weighted Min-Max, Fig 3.2, eqs 3.17-3.19:   a_t = 1/(1 - m_t), w += r g, Σ -= g gᵀ
//   laser           LASER, Fig 5.1, §5.2:                      P = Σ + I/c, ŷ = p/(1+m), Σ = P - h hᵀ/(1+m)
//   laser-noshrink  LASER's state with the unshrunk (Kalman) prediction ŷ = p (an ablation, not in the thesis)
//   rls             RLS with forgetting r (§3.4; r = 1: online ridge regression, Foster 1991)
//   aaw             Vovk-Azoury-Warmuth / Forster's last-step min-max (Table 3.1 "AAR"): ŷ = p/(1+m)
//   arowr           AROW for regression (Table 3.1): Σ⁻¹ += x xᵀ/r
//   arcor           AROWR with covariance reset when λ_min(Σ) < Λ and projection on ‖w‖ <= R_B (Table 5.1;
//                   Vaits & Crammer, ALT 2011)
//   cr-rls          RLS with forgetting r and a covariance reset every T0 rounds (Table 5.1)
//
// All share one round (g = P x_t, m = x_tᵀ g, p = x_tᵀ w_{t-1}; r_t = y_t - p, never y_t - ŷ_t):
//     P = Σ_{t-1} + δ I                  δ = 1/c (laser), else 0
//     ŷ = p / (1 + m) (laser, aaw), else p
//     k = γ / (1 + γ m)                  γ: the weight of x xᵀ in the precision (1/(1-m) wemm, 1/r arowr, arcor
//                                        and the forgetting rules, 1 otherwise)
//     w_t = w_{t-1} + k r_t g,     Σ_t = (P - k g gᵀ) / f     f = r (rls, cr-rls), else 1  (Sherman-Morrison)
//     then the reset of cr-rls and arcor (Σ_t = I) and arcor's projection.
// Squared loss only. Matrix modes (--matrix): full keeps Σ over the features seen (dense, Eigen, at most
// --max_dense_features of them); diag keeps Σ_ii per hashed slot with a lazy clock for the drift, forgetting and
// resets (exact for one-hot inputs), O(nnz) per example; sketch (wemm, laser, laser-noshrink) keeps the state in a
// rank --rank form (minmax_sketch.h), exact while the inputs span at most --rank dimensions, with no feature cap.
// The algorithm notes: docs/algorithms/minmax.md.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/coords.h"
#include "core/zeroed_table.h"
#include "learners/minmax_sketch.h"
#include "lepus/learner.h"
#include "sketch/compact_index.h"
#include "sketch/matrix.h"

namespace lepus {

// THE rule table: one row per learner, the scalars its round is made of.
struct MinmaxRule {
  enum class Weight { kOne, kWemm, kArow, kForget };  // γ: 1, 1/(1-m), 1/r (arow), 1/r with Σ /= r after
  enum class Reset { kNone, kPeriodic, kLambdaMin };
  const char* name;
  bool shrink;  // ŷ = p/(1+m)
  bool drift;   // Σ += I/c before each round (LASER)
  Weight weight;
  Reset reset;
  bool uses_b, uses_c, uses_forget, uses_arow_r;
  bool sketch;  // --matrix sketch: a low-rank form of the state exists (minmax_sketch.h)
};
const std::vector<MinmaxRule>& minmax_rules();
const MinmaxRule& minmax_rule(std::string_view name);  // std::out_of_range for another name

struct MinmaxOptions {
  const MinmaxRule* rule = nullptr;
  double b = 1.0;        // --mm_b: prior weight (Σ_0 = I/b; laser: Σ_0 = (c-b)/(bc) I)
  double c = 100.0;      // --mm_c: laser's drift penalty
  double forget = 1.0;   // --rls_r: forgetting factor in (0, 1]
  double arow_r = 1.0;   // --arow_r: AROW's r > 0
  double t0 = 50.0;      // --crrls_T0: rounds between covariance resets
  double lambda = 1e-3;  // --arcor_Lambda: reset threshold on λ_min(Σ), in (0, 1)
  double radius = std::numeric_limits<double>::infinity();  // --arcor_RB (infinity: no projection)
  MatrixKind matrix = MatrixKind::kFull;
  uint64_t max_dense = 1000;
  uint32_t rank = 10;  // --rank: the sketch's rank k
  // Defaults relative to the data's scale X² (the largest ‖x‖² of the first examples; wemm, laser rows): when set,
  // b = b_scale X² and c = c_scale X², fixed by resolve() before the first update.
  double b_scale = 0.0, c_scale = 0.0;
  double scale = 0.0;  // the X² they were resolved with (0: given options, or not resolved yet)
  bool pending() const { return b_scale > 0.0 || c_scale > 0.0; }
  void resolve(double x2);
  // Throws ConfigError for a value out of range or a bad combination (b >= c, projection in diag mode).
  static MinmaxOptions from(const MinmaxRule& rule, const OptionValues& values);
  double sigma0() const;  // Σ_0's diagonal
  double delta() const { return rule->drift ? 1.0 / c : 0.0; }
  double factor() const { return rule->weight == MinmaxRule::Weight::kForget ? forget : 1.0; }
};

class MinmaxLearner final : public Learner, public WarmsUp {
 public:
  static constexpr double kWemmEps = 1e-6;         // wemm's guard: an update needs m < 1 - kWemmEps
  static constexpr double kMaxSigma = 1e100;       // cap on Σ's diagonal (RLS wind-up, r < 1)
  static constexpr uint64_t kScaleExamples = 256;  // the warm-up that fixes the data-relative defaults

  MinmaxLearner(const MinmaxOptions& options, int bits);
  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return opt_.rule->name; }
  std::vector<std::string> describe() const override;
  std::vector<std::string> summary_lines() const override;
  // wemm's b and LASER's c default to multiples of the data's scale: the first examples fix it.
  uint64_t warmup_wanted() const override;
  void warmup(std::span<const Example> prefix) override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return safeguards_; }

  // For tests: the round's quantities on x (before learning it), the weight of a slot, Σ_ij (current, i.e.
  // Σ_t after the last round learned, not P), the labelled rounds learned.
  struct Round {
    double m = 0.0, p = 0.0, yhat = 0.0;
  };
  Round evaluate(const Example& x) const;
  double weight(uint64_t slot) const;
  double sigma(uint64_t slot_i, uint64_t slot_j) const;
  uint64_t rounds() const { return t_; }
  const MinmaxOptions& options() const { return opt_; }
  void resolve_scale(double x2);  // fixes the data-relative defaults (before any update)
  // The learner on a vector given directly (kwemm and klaser under --budget feed it their Nyström features, a
  // coordinate per landmark: a new one enters with the prior of a slot never updated): the prediction, and the
  // prediction before an update on (v, y) with importance weight k.
  double predict_vector(const SparseVector& v) const { return evaluate(v).yhat; }
  double learn_vector(const SparseVector& v, double y, double weight);
  const MinmaxSketch* sketch() const { return sketch_ ? &*sketch_ : nullptr; }  // sketch mode's state
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  struct Slot {  // diag mode, per hashed slot; all zero: never written (Σ_ii = σ_0 at round 0)
    double w = 0.0, s = 0.0, tau = 0.0;
  };
  Round evaluate(const SparseVector& v) const;
  template <class Self, class V>
  static void diag_state(Self& self, V& v, double t);
  template <class Self, class V>
  static void full_state(Self& self, V& v);
  double diag_value(const Slot& s) const;             // diag mode: Σ_{t,ii} of a slot
  double advanced(double base, double rounds) const;  // the scalar map σ -> (σ + δ)/f applied `rounds` times
  // The round's m and p (unit scale) come from evaluate(v), which also left x's positions (full) or P_ii (diag).
  void learn_full(const SparseVector& v, double y, double weight, Round round);
  void learn_diag(const SparseVector& v, double y, double weight, Round round);
  void learn_sketch(const SparseVector& v, double y, double weight, Round round);
  double wemm_guard(double m) const;                  // s of the WEMM guard (1: none)
  bool healthy(double m, double p, double ys) const;  // false (counted): skip the round
  // A round as taught: the example (s x, s y), s = √k for an importance weight k times the WEMM guard's scale, with
  // m = xᵀPx and p = wᵀx at that scale; ok false (counted) when a number is not finite: the round is skipped.
  struct Taught {
    double s, m, p, ys;
    bool ok;
  };
  Taught taught(double y, double weight, Round round) const;
  double gamma(double m) const;
  void grow(size_t n);
  void project_full();
  Prediction output(double yhat) const;

  MinmaxOptions opt_;
  int bits_;
  uint64_t t_ = 0;           // labelled rounds learned
  double prior_;             // full: Σ_ii of a slot not held (σ_t, the same scalar map)
  double last_reset_ = 0.0;  // diag: the round of the last reset (0: none)
  double min_s_ = 1.0;       // diag, arcor: smallest Σ_ii written since the last reset
  // full mode
  CompactIndex index_;
  Eigen::MatrixXd s_;  // Σ over held positions (top-left n x n; capacity grows by doubling)
  Eigen::VectorXd w_;  // w over held positions
  // diag mode
  ZeroedTable<Slot> slots_;
  // sketch mode
  std::optional<MinmaxSketch> sketch_;
  mutable VectorBuilder builder_;
  mutable uint64_t safeguards_ = 0;
  // scratch, left by evaluate(v) for learn on the same v
  mutable std::vector<uint32_t> pos_;  // full: the example's positions (CompactIndex::kNone: not held)
  std::vector<double> xv_;
  Eigen::VectorXd h_;
  mutable std::vector<double> pv_;                         // diag: P_ii of the example's slots
  mutable std::vector<std::pair<uint32_t, double>> held_;  // full: the example's held positions and values
};

// The registry rows: wemm, laser, laser-noshrink, rls, aaw, arowr, arcor, cr-rls.
std::vector<LearnerRow> minmax_rows();

}  // namespace lepus

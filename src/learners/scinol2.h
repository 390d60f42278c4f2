// scinol2 and scinol1: ScInOL2 and ScInOL1 of M. Kempka, W. Kotłowski, M. K. Warmuth, "Adaptive
// Scale-Invariant Online Algorithms for Learning Linear Models" (ICML 2019, arXiv:1902.07528), with the
// update rules as the authors' public code implements them (the TensorFlow `scinol/_scinol.py`, the NumPy
// `sc2_numpy.py` and yamall's `ScInOL.java`, which agree with each other).
//
// Problem: online linear prediction ŷ_t = <w_t, x_t> with a convex loss whose derivative g_t = dℓ/dŷ lies in
// [-1, 1], against any comparator u, with no learning rate and predictions that do not change when a feature
// column is multiplied by any nonzero constant. Both decompose into one one-dimensional learner per
// coordinate, sharing only g_t (and, for ScInOL1, the round counter t). Both are improper: w_t depends on x_t
// through M.
//
// Per coordinate i: G_i = -sum g x (negative cumulative gradient), S2_i = sum (g x)^2, M_i = max |x|.
// Round t, for each i with x_{t,i} != 0 (old G, S2, the new M):
//     M_i = max(M_i, |x_{t,i}|);  D = sqrt(S2_i + M_i^2);  θ = G_i / D
//   ScInOL1 (prior β_i, starts at 1, nonincreasing):
//     β_i = min(β_i, ε (S2_i + M_i^2) / (x_{t,i}^2 t))             (t: this round's 1-based index)
//     w_i = β_i sign(θ) (exp(|θ|/2) - 1) / (2 D)
//   ScInOL2 (coin betting; wealth η_i starts at ε):
//     w_i = sign(θ) min(|θ|, 1) η_i / (2 D)
//   ŷ = sum_i w_i x_{t,i};  g = clip(importance * dℓ/dŷ(ŷ), -L, L) / L
//     G_i -= g x_{t,i};  S2_i += (g x_{t,i})^2;  (ScInOL2) η_i -= g x_{t,i} w_i   (the w of the prediction)
// At a coordinate's first occurrence G = 0, so w = 0 exactly; M > 0 whenever x != 0, so nothing divides by 0.
// Unlike scinol-coord (Kotłowski 2017), there is no prior 1/(α t d): ScInOL2 bets at scale ε/|x| from a
// feature's second occurrence on, whatever the round; ScInOL1 keeps a prior β_i <= ε / t_first(i).
// Telescoping the η update gives sum_t g_t ŷ_t = sum_i (ε - η_i) <= ε per active coordinate (η > 0 because
// |g x| <= M <= D, so a round loses at most half the wealth).
//
// lepus's choices (the paper and the code are silent):
//   - Hashed mapping as scinol-coord's: one coordinate per slot; features of one example sharing a slot are
//     summed into one x (core/coords.h), so the algorithm sees exactly the slot; x = 0 is absent. Only
//     present slots are touched; absent ones need no catch-up (ScInOL1 reads t only when the slot is
//     present).
//   - M starts at 0, not at the code's tiny constant (1e-15 ... 1e-5, only there to avoid 0/0 in dense code):
//     exact scale invariance for every x. β starts at 1 with ε inside the min (the TF code; equal to β_0 = ε
//     for the default ε = 1); η and β are set at a slot's first occurrence (M = 0 marks an untouched slot).
//   - t counts learning rounds (labelled, importance > 0), across passes. Predict-only examples use
//     temporaries (M' = max(M, |x|), β' with t + 1) and change nothing.
//   - The importance weight scales g before the clip to [-L, L] and the division by L (yamall's clip; the
//     paper has no importance weights), which keeps |g x| <= M. L = 1 is exact for logistic, hinge, quantile.
//   - Predictions are clipped to the label range as scinol-coord's; g is taken at the clipped prediction.
// Numerics (not in the paper): all state in double. ScInOL1's exponent |θ|/2 < sqrt(n_i)/2 (Cauchy-Schwarz)
// is capped at kMaxExponent and the caps counted; ScInOL2's wealth can grow like exp(sqrt(n)) under a
// constant gradient and is capped at kMaxWealth, counted. |x| / D <= 1, so each term w x is formed as
// (bet) * (x / D), never as a huge w times a tiny x.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/coords.h"
#include "core/zeroed_table.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"

namespace lepus {

enum class ScinolKkwVariant : uint8_t { kScinol1 = 1, kScinol2 = 2 };

struct Scinol2Options {
  ScinolKkwVariant variant = ScinolKkwVariant::kScinol2;
  double eps = 1.0;        // ε: ScInOL2's initial wealth, ScInOL1's prior scale (1 in all the authors' code)
  double lipschitz = 1.0;  // L: g is clipped to [-L, L] and divided by L

  static Scinol2Options from(ScinolKkwVariant variant, const OptionValues& values);  // throws ConfigError
};

class Scinol2Learner final : public Learner, public AuditsSlots, public PredictsConcurrently {
 public:
  static constexpr double kMaxExponent = 650.0;  // ScInOL1: cap on |θ|/2 (exp(650) ~ 2e282)
  static constexpr double kMaxWealth = 1e280;    // ScInOL2: cap on η

  Scinol2Learner(const Scinol2Options& options, const Loss& loss, int bits, bool test_only);

  Prediction predict(const Example& x) const override;
  bool concurrent_predict() const override { return true; }  // its vector in common::thread_builder
  // --audit: the weight each feature meets (common::probe_slot); no stored weights for --audit_regressor.
  SlotAudit audit_slot(const Feature& f, int group) const override {
    return common::probe_slot(*this, f, group);
  }
  Prediction learn(const Example& x) override;
  void end_pass() override {}  // a further pass is further rounds: the state simply continues
  void merge(Collective& ranks) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return one() ? "scinol1" : "scinol2"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return caps_; }

  // Unrounded ŷ (double, base prediction included) of predict(x) / of one learning round.
  double predict_score(const Example& x) const;
  double learn_score(const Example& x);
  // One round of the linear loss ℓ(ŷ) = g ŷ (g scaled by the importance, clipped and divided by L as a loss
  // derivative would be). Returns the unrounded ŷ.
  double learn_gradient(const Example& x, double g);

  // Per slot: G, S2, M and p = β (ScInOL1) or η (ScInOL2). An untouched slot is all zero (M = 0).
  struct Slot {
    double g = 0.0;   // G = -sum g x
    double s2 = 0.0;  // S2 = sum (g x)^2
    double m = 0.0;   // M = max |x|
    double p = 0.0;   // β (ScInOL1) or η (ScInOL2); meaningful once m > 0
  };
  Slot slot(uint64_t i) const { return slots_[i & mask_]; }
  // The weight slot i would use in the next round if its value were x (x = 0: with M unchanged; the
  // indicative weight of the readable model). Exponent capped, not counted.
  double weight(uint64_t i, double x) const;
  double rounds() const { return t_; }
  const Scinol2Options& options() const { return opt_; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  bool one() const { return opt_.variant == ScinolKkwVariant::kScinol1; }
  template <bool kLearn>
  double score(const SparseVector& v, double t) const;
  double round(const Example& x, bool use_loss, double g_linear);
  float clipped(double score) const;
  Prediction finish(double score) const;

  Scinol2Options opt_;
  const Loss& loss_;
  int bits_;
  uint64_t mask_;
  common::LabelClip clip_;
  double t_ = 0.0;  // learning rounds (read by ScInOL1 only; kept by both)
  void allocate();
  // 2^b slots: a large -b costs only the pages a run touches. Written through score<true> only, from the
  // non-const learning round.
  ZeroedTable<Slot> block_;
  Slot* slots_ = nullptr;
  mutable common::Tally caps_;         // a metric of this run, not model state (not saved)
  mutable VectorBuilder builder_;      // scratch (not state)
  mutable std::vector<double> terms_;  // this round's w x per coordinate (ScInOL2's η update)
};

// The rows of THE learner table (src/learners/registry.cc).
LearnerRow scinol2_row();
LearnerRow scinol1_row();

}  // namespace lepus

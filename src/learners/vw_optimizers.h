// vw-ftrl, vw-pistol, vw-coin: Vowpal Wabbit 9.11.2's own linear optimizers (VW's --ftrl, --pistol and --coin,
// the flags that select them here too), reproduced to VW's arithmetic: f32 state and sums in VW's order, so -p
// and the average loss are VW's to the last printed digit.
//
// Each slot (index & (2^b - 1), as sgd) holds f32 fields, all 0 at first: XT (the weight the prediction reads),
// ZT, G2 and, for pistol and coin, MX (largest |x|); coin adds WE (wealth) and MG (largest |u|, at least β).
// u = dloss/dp(p, y) * importance is the scalar step and g = u x the feature's gradient.
//   vw-ftrl: FTRL-Proximal per coordinate (McMahan et al. 2013, "Ad Click Prediction: a View from the
//     Trenches", KDD, Algorithm 1): n' = n + g^2, σ = (√n' - √n)/α, z += g - σ w, and w = 0 when |z| <= λ1,
//     else w = -(z - sgn(z) λ1) / ((β + √n')/α + λ2). λ1, λ2 are --l1, --l2; l1 sparsity lives in w itself.
//   vw-pistol: VW's per-coordinate form of PiSTOL (Orabona 2014, "Simultaneous Model Selection and Optimization
//     through Parameter-free Stochastic Learning", NeurIPS, Algorithm 1) exactly as VW computes it, which is not
//     the paper's scale: at learn time, per feature, MX = max(MX, |x|), tmp = 1/(α MX (G2 + MX)) and
//     w = √G2 β θ exp(θ^2 tmp / 2) tmp with θ = ZT = -Σ g and G2 = Σ |g|; the prediction is Σ w x (VW leaves
//     out the initial prediction here); then ZT -= g, G2 += |g|.
//   vw-coin: VW's per-coordinate coin betting, "COCOB without sigmoid" in VW's source (after Orabona & Tommasi
//     2017, "Training Deep Networks without Learning Rates Through Coin Betting", NeurIPS, Algorithm 2; and
//     Orabona & Pál 2016, "Coin Betting and Parameter-Free Online Learning", NeurIPS): the bet of a slot is
//     (α + WE) / (MG m (MG m + G2)) ZT with m = max(MX, |x|), and the prediction is Σ bet x divided by avg, the
//     running importance-weighted mean of Σ (x/m)^2 (f64 sums N and W, saved with the model). The update
//     recomputes the bet with the new MX and MG, then ZT -= g, G2 += |g|, WE -= g bet, and XT = bet / avg.
//
// VW's driver, which makes -p match (pistol "returns its prediction from learn", ftrl and coin do not):
//   - ftrl and coin: predict from XT (initial prediction included) under the clipping range before this label
//     widens it; that is what -p prints. Then widen the range and learn from their learn-time prediction p (ftrl:
//     the same score clipped by the widened range; coin: the betting sum above). The loss is reported at p, so
//     coin's reported loss is not the loss of its printed predictions. -r prints ftrl's score, coin's raw sum.
//   - pistol: widen, then learn from its learn-time prediction, which -p prints.
//   - importance 0 (labelled): the range widens, nothing is learned, the printed prediction is the XT one.
// --l1 and --l2 are used by vw-ftrl only (VW ignores them for --pistol and --coin). VW's -l, --power_t,
// --initial_t and --decay_learning_rate are accepted and printed, without effect, as in VW.
// lepus safeguards (never reached on data VW learns without inf or NaN): a feature whose new state would not be
// finite leaves its slot unchanged; pistol's non-finite weight is stored as +-FLT_MAX (0 for NaN) while the
// prediction sums VW's value; a non-finite score is returned as +-FLT_MAX (0 for NaN). Each is counted.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/zeroed_table.h"
#include "learners/common/plumbing.h"
#include "lepus/learner.h"

namespace lepus {

enum class VwOptimizer { kFtrl, kPistol, kCoin };

struct VwOptimizerOptions {
  VwOptimizer mode = VwOptimizer::kFtrl;
  float alpha = 0.5f;  // --ftrl_alpha (VW's defaults: ftrl 0.5, pistol 1, coin 4)
  float beta = 1.0f;   // --ftrl_beta (VW's defaults: ftrl 1, pistol 0.5, coin 1)
  float l1 = 0.0f;     // --l1 (vw-ftrl only)
  float l2 = 0.0f;     // --l2 (vw-ftrl only)
  // Printed in the preamble only, as VW does: they have no effect on these learners.
  float learning_rate = 0.5f, power_t = 0.5f, initial_t = 0.0f;

  static VwOptimizerOptions defaults(VwOptimizer mode);
  static VwOptimizerOptions from(VwOptimizer mode, const OptionValues& values);  // throws ConfigError
};

class VwOptimizerLearner final : public Learner, public AuditsSlots, public PredictsConcurrently {
 public:
  // Slot field offsets, VW's order.
  enum Field { kXt = 0, kZt = 1, kG2 = 2, kMx = 3, kWe = 4, kMg = 5 };

  VwOptimizerLearner(const VwOptimizerOptions& options, const Loss& loss, int bits, bool test_only);

  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override;
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  // VW's audit figures: XT, the weight the prediction reads (no '@' state: VW shows none for these optimizers).
  bool concurrent_predict() const override { return true; }  // predict() only reads
  SlotAudit audit_slot(const Feature& f, int group) const override {
    const float w = slot(f.index)[kXt];
    return SlotAudit{w, w, std::nullopt};
  }
  std::optional<uint64_t> nonzero_weights() const override;
  uint64_t safeguard_count() const override { return safeguards_; }

  // For tests: a slot's field (masked index), and coin's running sums.
  float field(uint64_t index, Field f) const { return w_[((index & mask_) << shift_) + f]; }
  double coin_norm_sum() const { return norm_sum_; }
  double coin_weight_sum() const { return weight_sum_; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

  // One slot's update for one feature (x, g = u x), VW's arithmetic; false (slot unchanged) when the new state
  // would not be finite. Public so unit tests can check each rule on hand-computed values.
  static bool ftrl_step(float* s, float x, float u, const VwOptimizerOptions& o);
  static bool pistol_step(float* s, float x, float u);
  static bool coin_step(float* s, float x, float u, float avg, const VwOptimizerOptions& o);

 private:
  float* slot(uint64_t index) { return &w_[(index & mask_) << shift_]; }
  const float* slot(uint64_t index) const { return &w_[(index & mask_) << shift_]; }
  size_t fields() const;                           // fields used per slot: 3, 4 or 6
  float score(const Example& x) const;             // initial + Σ XT x, VW's order
  float finalize(float raw) const;                 // NaN -> 0, clipped to the range
  float finite_raw(float raw);                     // +-inf -> +-FLT_MAX, NaN -> 0 (counted)
  float pistol_score(const Example& x);            // writes MX and XT, as VW does
  float coin_score(const Example& x, float& avg);  // updates N and W
  float step_of(float p, const Example& x) const;  // u = dloss/dp(p, y) * importance, f32

  VwOptimizerOptions opt_;
  const Loss& loss_;
  uint64_t mask_;
  int shift_;  // log2 of the stride: 2 (4 floats) for ftrl and pistol, 3 (8 floats) for coin, as VW
  ZeroedTable<float> w_;
  common::LabelClip clip_;
  double norm_sum_ = 0.0;    // coin: N = Σ importance * Σ (x/m)^2 (VW's normalized_sum_norm_x)
  double weight_sum_ = 0.0;  // coin: W = Σ importance (VW's total_weight)
  uint64_t safeguards_ = 0;
};

LearnerRow vw_ftrl_row();
LearnerRow vw_pistol_row();
LearnerRow vw_coin_row();

}  // namespace lepus

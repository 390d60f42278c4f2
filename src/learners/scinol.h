// scinol-coord: the coordinate-wise scale-invariant online learner of W. Kotłowski, "Scale-Invariant
// Unconstrained Online Learning" (ALT 2017): Section 3.2, Algorithm 1 ("coordinate-wise scale invariant
// algorithm"), eq. (5), Lemma 3.3 and Theorem 3.4. Section 3 states the invariance for factors a_i > 0;
// it holds for any a_i != 0 (h_i -> a_i h_i and s2_i -> a_i^2 s2_i leave the exponent unchanged). The
// paper gives no default α, no meaning of d for hashed features and no floating-point treatment: those
// below are lepus's.
//
// Problem: online linear prediction ŷ_t = <w_t, x_t> with a convex loss whose derivative g_t = dℓ/dŷ lies in
// [-1, 1], against ANY comparator u: no domain bound, no bound on x, no learning rate, and predictions that
// do not change when a feature column is multiplied by any nonzero constant (coordinate-wise scale
// invariance).
//
// Update (paper eq. (5)), per coordinate i present in x_t, with h_i = -sum_q g_q x_{q,i}, s2_i = sum_q
// x_{q,i}^2:
//     t += 1;  s2_i += x_{t,i}^2                                               (before predicting)
//     w_{t,i} = exp((h_i^2 + x_{t,i}^2) / (2 α s2_i)) / (α t d) * h_i / s2_i   (old h, new s2)
//     ŷ_t = sum_i w_{t,i} x_{t,i};  g_t = clip(importance * dℓ/dŷ(ŷ_t), -L, L) / L
//     h_i -= g_t x_{t,i}                                                      (after the label)
// Regret (Thm 3.4): sum_i |u_i| s_{T,i} sqrt(α ln(1 + α d^2 T^2 u_i^2 s_{T,i}^2)) + κ(α)(1 + ln T), where
// κ(α) = exp(1 / (2(α - 9/8))) and α > 9/8.
//
// Hashed mapping (lepus's; the paper's instances are dense in R^d): one coordinate per slot. Features of
// one example that share a slot (collisions, repeated features) are summed into one x_{t,i}, so the
// algorithm sees exactly the slot; a coordinate whose x is 0 is absent. Only present slots are touched:
// absent ones need no catch-up because t enters only through the formula. Per-slot state is (h, s2) in
// double, interleaved (with the per-slot clock n_i for --scinol_d clock); the weight is not state. The
// paper's constant d becomes (--scinol_d):
//     bits  : d = 2^b, global t (Algorithm 1 as printed, on the whole table);
//     seen  : d_t = number of distinct slots with s2 > 0, this round included; global t (the default).
//             Not in the paper, but valid: d_t never decreases, so Lemma 3.3 still holds, and exactly d_t
//             coordinates are active, so the slack terms κ(α)/(t d_t) still sum to κ(α)(1 + ln T);
//     clock : d = 2^b, and t replaced by n_i, the number of rounds in which slot i was non-zero (also not
//             in the paper: a round with x_{t,i} = 0 adds nothing to coordinate i's one-dimensional problem).
// Rounds: every learned (labelled, importance > 0) example is one round, in every pass; predict-only
// examples (test, holdout, unlabelled) and importance 0 use temporaries and change nothing. The importance
// weight scales g before the clip (the paper has no importance weights; this keeps |g| <= 1). Predictions
// are clipped to the label range, widened by each label before its prediction as VW's gd does; g is taken
// at the clipped prediction (for squared loss: VW's linear extrapolation).
//
// Defaults, measured (progressive loss, one pass, scinol-coord untuned):
//   - d = seen: best of the three on every set tried (a9a 0.421 vs bits 0.440 / clock 0.436; w8a 0.067 vs
//     0.079; mushrooms 0.228 vs 0.274; abalone 6.08 vs 8.20; housing 73.0 vs 105.9; cpusmall 257 vs 319;
//     cal_housing 2.879e9 vs 2.954e9); it also makes ŷ independent of -b when nothing collides.
//   - L = 1: the exact Lipschitz constant of the logistic, hinge and quantile losses (any L > 1 only
//     shrinks g: L = 10 leaves logistic a9a at 0.693, learning nothing). For squared loss L = 1 is a
//     Huber-like clip at |ŷ - y| = 1/2; it already beats sgd on abalone, housing, cpusmall and
//     cal_housing, and no single larger L is better everywhere (L = 10 helps abalone and housing, L = 100
//     helps cpusmall but hurts abalone 7x).
//   - α = 1.5 (the paper gives none): Theorem 3.4's constant κ(α) = exp(1/(2(α - 9/8))) explodes near
//     9/8 (κ(1.2) ≈ 786, κ(1.5) ≈ 3.8) while its leading term grows like sqrt(α). Measured, 1.2 is
//     slightly better on the classification sets and 2 slightly worse.
// Numerics (not in the paper): with |g| <= 1, Cauchy-Schwarz gives (h_i^2 + x_i^2) / s2_i <= n_i, so the
// exponent is scale-free and at most n_i / (2α). exp() runs in double with its argument capped at
// kMaxExponent, each cap counted in safeguard_count(); a |ŷ| beyond float range is reported as ±FLT_MAX, also
// counted. Both lie outside the paper's analysis. State in double keeps s2 and h finite for every float
// feature value (|x| <= 3.4e38 or >= 1.4e-45), so s2 never reaches the range where a double would over- or
// underflow (|x| beyond about 1e154 or below about 1e-162).
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

enum class ScinolDimension : uint8_t { kBits = 0, kSeen = 1, kClock = 2 };

using ScinolCoord = Coord;  // one coordinate of an example (core/coords.h)

struct ScinolOptions {
  double alpha = 1.5;      // α > 9/8 (Algorithm 1's condition); the default 1.5 is lepus's (above)
  double lipschitz = 1.0;  // L: g is clipped to [-L, L] and divided by L
  ScinolDimension dimension =
      ScinolDimension::kSeen;  // measured best (above); Algorithm 1 as printed is kBits

  static ScinolOptions from(const OptionValues& values);  // throws ConfigError
};

class ScinolLearner final : public Learner {
 public:
  // exp() arguments above this are capped: exp(650) ~ 4e282 leaves ~1e25 of headroom below DBL_MAX for the
  // sum of many capped contributions (each is at most exp(e) / α, since |h x| / s2 <= sqrt(n_i) <= t).
  static constexpr double kMaxExponent = 650.0;

  ScinolLearner(const ScinolOptions& options, const Loss& loss, int bits, bool test_only);

  Prediction predict(const Example& x) const override;
  // No --audit weights: under the default --scinol_d seen, a weight depends on how many new slots the whole
  // example brings (d_t), so no weight belongs to a slot alone; --audit shows names, slots and values.
  Prediction learn(const Example& x) override;
  void end_pass() override {}  // a further pass is further rounds: t, h, s2 simply continue
  void merge(Collective& ranks) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  std::string_view name() const override { return "scinol-coord"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override { return caps_; }

  // Unrounded ŷ (double, base prediction included) of predict(x) / of one learning round.
  double predict_score(const Example& x) const;
  double learn_score(const Example& x);
  // One round of the linear loss ℓ(ŷ) = g ŷ: g is scaled by the importance weight, clipped to [-L, L] and
  // divided by L exactly as a loss derivative would be (oracle O4, numerics tests). Returns the unrounded ŷ.
  double learn_gradient(const Example& x, double g);

  struct SlotState {
    double h = 0.0;   // -sum g x
    double s2 = 0.0;  // sum x^2
    double n = 0.0;   // rounds with x != 0 (kept with --scinol_d clock only; 0 otherwise)
  };
  SlotState slot(uint64_t i) const;
  // The step η and the weight η h / s2 that slot i would use in the next round if its value were x and no
  // other new slot appeared (exponent capped, not counted). With x = 0 the weight is the indicative one the
  // readable model prints (w_t depends on x_t in Algorithm 1, so the model stores (h, s2), not weights).
  double eta(uint64_t i, double x) const;
  double weight(uint64_t i, double x) const;
  double rounds() const { return t_; }         // t: learning rounds so far
  double seen_slots() const { return seen_; }  // distinct slots with s2 > 0
  double dimension() const;                    // the current d (next round, no new slot)
  const ScinolOptions& options() const { return opt_; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v);

 private:
  using Coord = ScinolCoord;

  size_t stride() const { return opt_.dimension == ScinolDimension::kClock ? 4 : 2; }
  void allocate();
  const Coord* gather(const Example& x, size_t& n) const;
  double scale(uint64_t fresh) const;
  template <bool kLearn>
  double score(const Coord* c, size_t n, uint64_t& fresh) const;
  double round(const Example& x, bool use_loss, double g_linear);
  float clipped(double score) const;
  Prediction finish(double score) const;

  ScinolOptions opt_;
  const Loss& loss_;
  int bits_;
  uint64_t mask_;
  common::LabelClip clip_;
  double t_ = 0.0;     // learning rounds
  double seen_ = 0.0;  // distinct slots with s2 > 0
  // Interleaved per-slot state, stride() doubles per slot: (h, s2) or (h, s2, n, unused). Page aligned (so a
  // 32-byte clock slot never straddles two cache lines); a large table costs only the pages a run touches.
  ZeroedTable<double> block_;
  double* table_ = nullptr;    // block_.data()
  mutable uint64_t caps_ = 0;  // a metric of this run, not model state (not saved)
  // Scratch for one example's distinct slots (not state): predict() is const but reuses it.
  mutable VectorBuilder builder_;
  std::vector<double> old_s2_;  // the learning fast path's undo record
};

// This learner's row of THE learner table (src/learners/registry.cc).
LearnerRow scinol_row();
// --scinol_alpha and --scinol_L, shared with scinol-full's row.
OptionSpec scinol_alpha_option();
OptionSpec scinol_lipschitz_option();

}  // namespace lepus

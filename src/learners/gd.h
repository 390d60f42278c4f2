// sgd: Vowpal Wabbit's default linear learner "gd", reproduced to VW 9.11.2's arithmetic.
//
// Problem: online minimisation of sum_t w_t loss(<w, x_t>, y_t) over linear predictors w.
// Update (VW 9.11.2's gd): the default combines
//   - adaptive per-coordinate rates (AdaGrad; Duchi, Hazan & Singer 2011, eq. for diag(G)^-1/2),
//   - normalisation by the largest |x_i| seen, with the weight rescaled when it grows, and a global
//     multiplier sqrt(T/S) (Ross, Mineiro & Langford 2013, "Normalized online learning", Alg. 1 NAG),
//   - the importance-invariant update (Karampatziakis & Langford 2011, "Online importance weight aware
//     updates", section 4): the step solves the loss's ODE for importance weight h instead of scaling g.
// `--sgd` turns all three off: w -= eta * t^-p * dloss/dp * x. --l1/--l2 use VW's lazy truncated gradient
// (Langford, Li & Zhang 2009) and weight decay via a global contraction factor.
// Per-slot state is interleaved (w, G, N, r) so one feature touches one 16-byte cell.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/zeroed_table.h"

#include "learners/common/plumbing.h"
#include "learners/gd_kernel.h"
#include "lepus/learner.h"

namespace lepus {

struct GdOptions {
  bool adaptive = true;
  bool normalized = true;
  bool invariant = true;
  float eta = 0.5f;  // after VW's defaults and initial_t^p scaling
  float power_t = 0.5f;
  double initial_t = 0.0;
  // The normalizer's sums (S and T) start at initial_t as given: VW sets them before plain sgd's default
  // of 1.
  double normalizer_start = 0.0;
  float l1 = 0.0f;
  float l2 = 0.0f;
  bool min_given = false, max_given = false;
  float min_prediction = 0.0f, max_prediction = 0.0f;
  float decay_learning_rate = 1.0f;
  bool vw_exact =
      false;  // every sum in VW's order (else examples of kLaneMin or more features are summed in lanes)

  static GdOptions from(const OptionValues& values);
};

class GdLearner final : public Learner,
                        public SharesTable,
                        public AuditsSlots,
                        public HasPredictOnlyState,
                        public WritesVwText,
                        public PredictsConcurrently {
 public:
  GdLearner(const GdOptions& options, const Loss& loss, int bits, bool test_only);

  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  void end_pass() override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  void save_predict_only(ModelWriter& out) const override;
  void load_predict_only(ModelReader& in) override;
  std::string_view name() const override { return "sgd"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  bool write_vw_readable(std::ostream& out, const VwRunFigures& run) const override;
  // VW's audit figures: the stored weight, the one predictions use (l1-truncated, times the l2 contraction) and,
  // while the default (adaptive) update learns, its adaptive sum after an '@'.
  bool concurrent_predict() const override { return true; }  // predict() only reads
  SlotAudit audit_slot(const Feature& f, int group) const override;
  std::optional<uint64_t> nonzero_weights() const override;
  // --distributed: VW's allreduce (its accumulate_weighted_avg): each weight the average of the ranks' weights
  // weighted by their adaptive sums G, G and N scaled alike (VW's "crude max"); without --adaptive the plain
  // average. The counters T, S and t become the base plus every rank's increment since the last merge.
  void merge(Collective& ranks) override;
  // Updates zeroed because they came out NaN, and adaptive sums capped at FLT_MAX.
  uint64_t safeguard_count() const override { return nan_updates_; }
  // --oaa / --csoaa over one table, as VW lays them out (learner.h).
  bool share_table(uint32_t problems) override;
  void update_from(const Example& x, uint32_t problem, const Prediction& before, float label,
                   float weight) override;
  void count_example(float weight) override { t_ += weight; }

  using Slot = GdSlot;
  const ZeroedTable<Slot>& slots() const { return slots_; }
  double normalizer() const { return total_norm_; }
  // The saved state, declared once (learners/common/state.h); weights_only: a predict-only model's.
  template <class Self, class V>
  static void state(Self& self, V& v, bool weights_only);

 private:
  void loaded();  // after a load: the merge baseline and the kernels for the loaded modes
  float raw_score(const Example& x) const;
  void write_slots(std::ostream& out, bool adaptive, bool normalized) const;
  // learn()'s prediction: with plans (use_plan_), the pass also writes x's plan for the update.
  Prediction predict_for_update(const Example& x);
  // Whether an example of n features has its sums added in eight lanes (gd_kernel.h).
  bool lanes(size_t n) const { return !opt_.vw_exact && n >= gd_kernel::kLaneMin; }
  float finalize(float raw) const;
  void update(const Example& x, float pred, float y, float weight, uint32_t problem = 0);
  template <bool kAdaptive, bool kNormalized, bool kSqrtRate>
  float accumulate(const Example& x, float g2, float& norm_x);
  float accumulate_plan(const Example& x, float g2, float& norm_x);
  void choose_kernels();
  void apply_truncation();

  GdOptions opt_;
  const Loss& loss_;
  uint64_t mask_;
  bool test_only_;
  bool sqrt_rate_;
  ZeroedTable<Slot> slots_;
  common::LabelClip clip_;
  // VW keeps the normalised update's two sums per problem under a reduction (its per-model states): problem 0's
  // are these, problems 1..K-1's (starting at 0, not initial_t, as VW's) are here.
  std::vector<std::pair<double, double>> problem_sums_;
  double total_norm_;    // S: sum of weight * normalised ||x||^2 (VW's normalized_sum_norm_x)
  double total_weight_;  // T: sum of importance weights of updates
  double t_;             // initial_t + weights of learned labeled examples (VW's sd.t less holdout/unlabeled)
  float multiplier_ = 0.0f;   // sqrt(T/S) of the last update
  double gravity_ = 0.0;      // accumulated l1 truncation
  double contraction_ = 1.0;  // accumulated l2 shrinkage
  uint64_t nan_updates_ = 0;
  // --distributed: t_, total_norm_ and total_weight_ at the last merge (at first: as constructed or loaded, the
  // same on every rank).
  std::array<double, 3> merged_;
  float (GdLearner::*accumulate_)(const Example&, float, float&) = nullptr;
  // The adaptive or normalized modes on a CPU with AVX2: the weight update (and in the default mode the
  // bookkeeping) reads the example's plan (gd_kernel.h's GdPlan), written by the prediction pass that
  // precedes them.
  bool use_plan_ = false;
  GdPlan plan_;
};

}  // namespace lepus

// mix: an online mixture of registry learners ("experts") run side by side on the same examples.
//
// Each member learns exactly as if it ran alone, from the gradient at its own prediction; it never sees the
// mixture's prediction (the setting of the expert-advice bounds: N. Cesa-Bianchi, G. Lugosi, "Prediction,
// Learning, and Games", 2006, chapter 3). Each member's work per example is done once: learn() calls every
// member's learn() once and mixes the pre-update predictions they return.
//
// The mixture keeps, per member k, the cumulative importance-weighted loss L_k of the member's own reported
// prediction s_k, and the largest importance weight seen c_max. By loss:
//   logistic — the Bayes mixture, exponential weights at η = 1 for the 1-mixable log loss of σ(s)
//     (Cesa-Bianchi & Lugosi 2006, section 3.3 and the Bayes-mixture discussion of chapter 3; Vovk's
//     aggregating algorithm): P(+1) = Σ_k w_k σ(s_k), ŝ = ln P(+1) − ln P(−1). Regret ≤ ln K against the best
//     member for importance weights ≤ 1 (the cumulative loss equals −ln Σ_k π_k e^{−L_k} exactly).
//   squared — Vovk's aggregating algorithm with its substitution function (V. Vovk, "Competitive on-line
//     statistics", Int. Statistical Review 69, 2001, square loss section): on [a, b] (the clipping range,
//     widened by each label before predicting), η = 2/(b − a)², G(z) = −(1/η) ln Σ_k w_k e^{−η (z − s_k)²},
//     ŷ = (a + b)/2 + (G(a) − G(b)) / (2 (b − a)). Regret ≤ (b − a)²/2 · ln K.
//   every other loss (hinge, quantile: convex, not mixable) — the weighted average of the members'
//     predictions with the AdaHedge learning rate η = ln K / Δ (S. de Rooij, T. van Erven, P. D. Grünwald,
//     W. M. Koolen, "Follow the Leader If You Can, Hedge If You Must", JMLR 15, 2014, section 2), where Δ is
//     the cumulative mixability gap; regret ≤ 2Δ.
// Importance weights c > 1 make c·ℓ mixable only at η/c, so η_t = η / max(1, c_max) and the weights are
// computed from the cumulative losses at the current η, lw_k = ln π_k − η_t L_k, normalised (the mix-loss
// lemma for nonincreasing rates; de Rooij et al. 2014, lemma 1).
//
// Fixed Share (--mix_share α > 0; M. Herbster, M. K. Warmuth, "Tracking the Best Expert", Machine Learning 32,
// 1998, section 3): the weights become the state; after each learning round's loss update lw_k −= η_t ℓ_k and
// normalisation, lw_k ← ln((1 − α) e^{lw_k} + α/K), so every weight stays ≥ α/K and a member that becomes the
// best later regains weight in a few rounds. α = 0 is exactly the plain mixture.
//
// Online to batch (--mix_validation R): the mixture keeps a uniform sample of R of the examples it learned from
// (reservoir sampling: J. S. Vitter, "Random Sampling with a Reservoir", ACM TOMS 11(1), 1985, algorithm R).
// Saving a model scores each member's final model on the sample, V_k = Σ c ℓ(y, s_k), and a -t run predicts with
// the rule's weights from V_k in place of L_k: the weights of the members' final models on the whole stream,
// where L_k weighs the online learners (on a sorted file the member best at its end can have the worst final
// model). The sample was learned from, so V_k is an in-sample estimate.
//
// Pruning (--mix_prune τ > 0, without Fixed Share): at the learning rounds 1024, 2048, 4096, … (a doubling
// schedule, so checks cost O(R K log T) predictions in all) a member whose weight is below e^{−τ} retires, unless
// its current model predicts the sample best of all (its loss there is the lowest): it learns no more, and the
// mixture then costs what its remaining members cost. This is successive elimination among
// candidate models (O. Maron, A. W. Moore, "Hoeffding Races: Accelerating Model Selection Search for
// Classification and Function Approximation", NIPS 1993), with the mixture's own weights as the evidence: at
// e^{−40} a member's share of a prediction is below double precision's resolution, so the online predictions do
// not change. The sample's part keeps the member whose final model may be the best one (a sorted stream, where
// the member best online is not the one best at the end: online to batch above). The ln K bound holds
// against the members kept; against a pruned one it held up to its pruning, when it was τ/η behind. A pruned
// member's state is dropped (a fresh one takes its place, so its memory is given back).
//
// lepus's choices (the papers are silent):
//   - The default members are the list below less those that do not accept the loss. The prior is uniform.
//     Members get their own rows' defaults (the mix command line names no member option), the mix's table
//     size, -t and random seed.
//   - A member whose learning round throws a ConfigError (a capacity limit) retires: weight 0 for good, never
//     asked again (for the Bayes mixture, conditioning on the others: the bound against each still holds).
//   - A member's prediction s_k is the one it reports its loss at (Prediction::scored if set, else value);
//     logistic scores are clipped to [−50, 50]. The mixture's `value` mixes the members' values and its
//     `scored` (set only when a member sets one) mixes what they score.
//   - Logistic labels that are not the two classes are soft labels q = the loss's class-1 share, a_k =
//     q ln σ(s_k) + (1 − q) ln σ(−s_k) (p^q (1−p)^{1−q} is concave in p: still 1-mixable).
//   - Fixed Share: one share step per learning round (labelled, importance > 0), whatever the importance.
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "learners/common/plumbing.h"
#include "lepus/errors.h"
#include "lepus/learner.h"

namespace lepus {

class MixLearner final : public Learner,
                         public LearnsBlocks,
                         public WarmsUp,
                         public HasPredictOnlyState,
                         public PredictsConcurrently {
 public:
  enum class Rule : uint8_t { kLog = 1, kSquare = 2, kHedge = 3 };
  struct LogSigmoids {  // ln σ(s) and ln σ(−s) of one prediction s
    double pos, neg;
  };
  // The default members, chosen by measurement against VW's optimizers (docs/vs_vw.md, utl/vs_vw).
  static constexpr const char* kDefaultMembers =
      "sgd,scinol2,vw-pistol,vw-coin,aioli:max_dense_features=64:beyond_dense=diag";
  // Under --oaa / --csoaa (one mixture per class): vw-pistol and vw-coin left out, measured to carry no weight
  // in the per-class problems (docs/multiclass.md), so that K mixtures cost at most about twice sgd's K problems.
  static constexpr const char* kClassMembers = "sgd,scinol2,aioli:max_dense_features=64:beyond_dense=diag";

  // Builds the members named in `members` (comma-separated registry rows) through the registry; throws
  // ConfigError for an unknown or nested member, one that does not accept the loss, or an empty list. With
  // `default_list` (the user named no members), a member that does not accept the loss is left out instead
  // (and aioli under any loss but the logistic: LearnerTraits::mixture_losses), and a saved model loads with the
  // default members it was saved with.
  MixLearner(const std::string& members, double share, const LearnerContext& context,
             bool default_list = false);

  Prediction predict(const Example& x) const override;
  bool concurrent_predict() const override;  // when every member's predict() may run concurrently
  Prediction learn(const Example& x) override;
  // Blocks: the members in parallel over the block, then the mixture in example order (results as learn()).
  size_t block_size() const override { return kBlock; }
  void learn_block(std::span<BlockItem> items) override;
  // Warm-up: the most any member wants; each member is warmed up on its own share of the prefix, the first
  // examples, as if it ran alone.
  uint64_t warmup_wanted() const override;
  void warmup(std::span<const Example> prefix) override;
  void end_pass() override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  void save_predict_only(ModelWriter& out) const override;
  void load_predict_only(ModelReader& in) override;
  std::string_view name() const override { return "mix"; }
  LabelRange label_range() const override { return clip_.range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  uint64_t safeguard_count() const override;
  std::vector<std::string> summary_lines() const override;

  // --mix_test_share α: a -t run predicts with the weights (1 − α) w_k + α / K (one Fixed Share step toward the
  // uniform prior), the online-to-batch conversion of the saved mixture; 0 (the class's default) keeps w_k.
  void set_test_share(double alpha);
  double test_share() const { return test_share_; }
  // --mix_validation R: the size of the sample of learned examples the saved model's weights are scored on (0:
  // none, a -t run weighs the members by their online losses L_k).
  void set_validation_size(uint64_t r);
  uint64_t validation_size() const { return validation_size_; }
  // --mix_prune τ: the log-weight below which a member may be pruned (0: never).
  void set_prune(double tau);
  double prune() const { return prune_; }
  static constexpr uint64_t kFirstCheck = 1024;  // the first check round; then every doubling
  size_t sample_size() const { return sample_.size(); }
  std::vector<Example> sample() const;  // the sample as examples (each feature's index its slot)
  // V_k of each member on the sample (0 for a retired member): computed from the members' current states while
  // the sample is held, else as loaded from a model (empty: none).
  std::vector<double> validation_losses() const;
  size_t size() const { return members_.size(); }
  const std::string& member_name(size_t k) const { return names_[k]; }
  const Learner& member(size_t k) const { return *members_[k]; }
  // The normalised weights the next prediction uses, and each member's cumulative weighted loss.
  std::vector<double> weights() const;
  double member_loss(size_t k) const { return cum_loss_[k]; }
  // Why member k left the mixture ("at learning example N: <its error>", N counting the examples learned
  // from), empty while it takes part.
  const std::string& retired(size_t k) const { return retired_[k]; }
  // The mixture's own cumulative weighted loss (NaN after resuming a model that did not keep it) and the regret
  // bound the summary prints next to own loss − min_k L_k (+inf with Fixed Share).
  double own_loss() const { return own_loss_; }
  // The saved state, declared once (learners/common/state.h).
  template <class Self, class V>
  static void state(Self& self, V& v, bool predict_only);
  using Refusal = std::function<ModelFormatError(const std::string&)>;
  double regret_bound() const;
  Rule rule() const { return rule_; }

 private:
  struct Member {
    std::string name;
    OptionValues options;
  };
  static constexpr size_t kBlock = 256;
  Prediction predicted(std::span<const Prediction> members) const;  // predict()'s mixture of their answers
  Prediction mix_round(const Example& x);
  std::vector<double> log_weights() const;  // normalised
  void log_weights_into(std::vector<double>& lw) const;
  std::vector<double> test_log_weights() const;  // -t: batch_log_weights(V_k as loaded), else log_weights()
  // The weights a -t run predicts with: the rule's from V_k (from L_k when `validation` is empty), then
  // --mix_test_share's step toward uniform.
  std::vector<double> batch_log_weights(const std::vector<double>& validation) const;
  double eta() const;  // the current rate (may be +inf for AdaHedge before any gap)
  bool active(size_t k) const { return retired_[k].empty(); }
  size_t active_count() const;
  double best_active_loss() const { return best_active(cum_loss_); }  // min_k L_k over the active members
  double best_active(const std::vector<double>& losses) const;
  // The rule's normalised log-weights from cumulative losses (L_k, or V_k for a -t run).
  void log_weights_from(const std::vector<double>& losses, std::vector<double>& lw) const;
  void keep_sample(const Example& x);  // algorithm R's step for the rounds_-th example learned from
  static bool check_round(uint64_t r) { return r >= kFirstCheck && (r & (r - 1)) == 0; }
  bool prunes() const { return prune_ > 0.0 && share_ == 0.0 && !test_only_; }
  void prune_behind();  // the check of a check round (after its loss update)
  // learn_block's work on items that end at a check round at the latest.
  void run_segment(std::span<BlockItem> items);
  std::unique_ptr<Learner> make_member(const std::string& name, const OptionValues& options) const;
  // A member's registry row and own options, after the checks a member list gets (throws ConfigError).
  OptionValues member_options(const std::string& name) const;  // member k fresh, from its row and options
  // One Fixed Share step over the active members, in logs: w <- (1 − α) w + α / K (α > 0).
  void share_toward_uniform(std::vector<double>& lw, double alpha) const;
  void retire(size_t k, const std::string& why);
  // The mixture of member predictions `s` (already the rule's inputs) under log-weights `lw`; mix_log is the
  // log rule's from the members' ln σ pairs. `buf`: scratch (a learning round's, or a prediction's own, as
  // predict() may run on several threads at once).
  struct Buffers {
    std::vector<double> a, b;
  };
  double mix(const std::vector<double>& s, const std::vector<double>& lw, Buffers& buf) const;
  double mix_log(const std::vector<LogSigmoids>& ls, const std::vector<double>& lw, Buffers& buf) const;
  double member_loss_term(double s, const Example& x) const;  // unweighted ℓ(y, s) in double
  double label_share(const Example& x) const;  // the log rule's share q of class 1 in x's label
  // The log rule's ℓ(y, s) = −q ln σ(s) − (1 − q) ln σ(−s), from s's ln σ pair.
  static double log_loss_term(double q, const LogSigmoids& ls);
  double input(float s) const;  // a member prediction as the rule reads it
  template <class Self, class V>
  static std::vector<std::string> retired_state(Self& self, V& v, size_t older, uint64_t n);
  // The parts of the state only the mixture reads: the kept sample with V_k, and the members by name. Each load
  // reads its part whole and returns what its commit does.
  void save_sample(ModelWriter& out, bool predict_only) const;
  std::function<void()> load_sample(ModelReader& in, uint64_t n, const Refusal& bad);
  void save_members(ModelWriter& out, bool predict_only) const;
  std::function<void()> load_members(ModelReader& in, uint64_t n, const std::vector<std::string>& retired,
                                     bool predict_only, const Refusal& bad);
  void write_members(std::ostream& out) const;

  const Loss& loss_;
  int bits_;
  bool test_only_;
  uint64_t seed_;
  double share_;
  double test_share_ = 0.0;
  Rule rule_;
  bool default_list_;  // the members are a default list (a model's own default members replace them)
  std::vector<std::string> names_;
  std::vector<OptionValues> member_options_;  // each member's own defaults (outlive the members)
  std::vector<std::unique_ptr<Learner>> members_;
  common::LabelClip clip_;
  std::vector<double> cum_loss_;      // L_k
  std::vector<double> lw_;            // Fixed Share's normalised log-weights (used only when share_ > 0)
  double c_max_ = 0.0;                // largest importance weight learned from
  double gap_ = 0.0;                  // AdaHedge's Δ
  std::vector<std::string> retired_;  // per member: empty, or why it left (it predicts nothing from then on)
  uint64_t rounds_ = 0;               // examples learned from, for the retirement message
  double own_loss_ = 0.0;  // the mixture's own cumulative weighted loss (NaN: resumed from a MIX1 state)
  mutable common::Tally safeguards_;
  std::vector<Prediction> scratch_;
  // learn()'s per-round buffers (kept to spare an allocation each per example).
  std::vector<double> in_v_, in_r_, lw_now_, loss_now_;
  std::vector<LogSigmoids> ls_v_, ls_r_;
  Buffers buf_;
  std::vector<std::exception_ptr> errors_;  // per member, what its last round threw
  struct BlockError {
    size_t at;  // the item whose round threw (the block's size: none)
    std::exception_ptr error;
  };
  std::vector<Prediction> block_out_;  // learn_block: member k's answer to item i at k * items + i
  std::vector<BlockError> block_errors_;
  size_t lead_ = 0;  // learn_block: the member run on the calling thread (the slowest over the last block)
  uint64_t validation_size_ = 0;
  double prune_ = 0.0;
  // One example of the validation sample. Its features are compact, each as its slot (the index masked to the
  // 2^b slots, all a member reads) and value, 8 bytes where an Example's feature takes 16, and shared: equal
  // features are held once in the process (under --oaa/--csoaa every class keeps the same examples, each with
  // its own label).
  struct KeptFeatures {
    struct Entry {
      uint32_t slot;
      float value;
    };
    uint32_t num_linear = 0;
    std::vector<FeatureGroup> groups;
    std::vector<Entry> entries;
    bool operator==(const KeptFeatures& o) const;
  };
  struct Kept {
    float label = 0.0f, weight = 0.0f, initial = 0.0f;
    std::shared_ptr<const KeptFeatures> features;
  };
  void keep(const Example& x, Kept& k) const;     // k <- x
  static void expand(const Kept& k, Example& x);  // x <- k, a labelled example
  static std::shared_ptr<const KeptFeatures> held_once(const KeptFeatures& f);
  std::vector<Kept> sample_;        // the learned examples kept for validation (full models save them)
  std::vector<double> validation_;  // V_k as a loaded model holds them (empty: none)
};

LearnerRow mix_row();

}  // namespace lepus

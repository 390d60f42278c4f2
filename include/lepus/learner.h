// The learner contract and THE learner registry (src/learners/registry.cc).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lepus/errors.h"
#include "lepus/example.h"
#include "lepus/loss.h"
#include "lepus/model_io.h"
#include "lepus/options.h"

namespace lepus {

class Collective;  // dist/collective.h

struct Prediction {
  float raw = 0.0f;    // raw score (-r)
  float value = 0.0f;  // the learner's clipped prediction (before --link / --binary)
  // The prediction the loss is reported at, when the learner learned from another one than `value` (VW's
  // --ftrl and --coin print the prediction made before learning and score the one they learned from); unset:
  // `value`.
  std::optional<float> scored = std::nullopt;
};

// What a multiclass or cost-sensitive reduction (--oaa, --csoaa) predicted for the last example it saw: the
// driver reports its loss, table row and outputs from it.
struct ClassOutcome {
  uint32_t klass = 0;                // the predicted class, numbered as the labels are (1..K, or 0..K-1)
  std::vector<float> scores;         // per class, in class order (what -r prints)
  std::vector<float> probabilities;  // --probabilities: normalised, in class order; empty otherwise
  uint32_t first_class = 1;          // how classes are numbered: 1 (1..K) or 0 (0..K-1, VW's --indexing 0)
};

// --audit, --invert_hash, --audit_regressor: what a learner whose state is per slot holds for one feature's
// slot.
struct SlotAudit {
  float stored = 0.0f;  // the weight as stored (VW sorts audit lines by |stored * value|)
  float weight =
      0.0f;  // the weight a prediction uses (sgd: stored, after --l1 truncation and --l2 shrinkage)
  std::optional<float> state;  // VW's '@' figure, when there is one (sgd's adaptive sum while it learns)
};

// What VW's readable model holds of a run besides the learner's state (VW's shared_data at the end of the
// run), interleaved by VW with its gd learner's own lines.
struct VwRunFigures {
  double sum_loss = 0.0;
  double sum_loss_since_last_dump = 0.0;  // since the last progress-table row
  double dump_interval = 1.0;             // the example weight of the next row
  double weighted_labeled_examples = 0.0;
  double weighted_labels = 0.0;
  double weighted_unlabeled_examples = 0.0;
  uint64_t example_number = 0;
  uint64_t total_features = 0;
  double old_weighted_labeled_examples = 0.0;  // at the last row
  uint64_t current_pass = 0;
  bool save_resume = true;  // false: VW's --predict_only_model, whose text is ":0" and the weights alone
};

// One problem's part of an example under a reduction that gives one learner K problems
// (SharesPoints::share_points).
struct ProblemStep {
  uint32_t problem = 0;
  float label = 0.0f;
  float weight = 1.0f;
};

class Learner {
 public:
  virtual ~Learner() = default;
  virtual Prediction predict(const Example& x) const = 0;  // no state change
  virtual Prediction learn(const Example& x) = 0;  // one online step; returns the PRE-update prediction
  virtual void end_pass() {}                       // passes: decay, holdout bookkeeping
  virtual void save(ModelWriter& out) const = 0;   // its own state; the header is model_io's job
  virtual void load(ModelReader& in) = 0;          // validates sizes, throws ModelFormatError
  virtual std::string_view name() const = 0;       // its registry row
  // The range predictions are clipped to and losses reported in (VW's [min_label, max_label]).
  virtual LabelRange label_range() const { return {}; }
  // Lines for the stderr preamble ("learning rate = 0.5", ...), in order.
  virtual std::vector<std::string> describe() const { return {}; }
  // --readable_full: the learner's global state as "name value" lines, then a line per slot with any nonzero
  // value, "index:weight [state...]", in index order. --readable_model writes it after VW's header for a
  // learner with no VW counterpart.
  virtual void write_readable(std::ostream& out) const = 0;
  // --distributed: combines this learner's state with every other rank's (all ranks call it at the same
  // point, with states of the same shape), so that each rank then holds the combined model. How is each
  // learner's own decision, stated in its registry row (LearnerTraits::merge); a learner without a sound
  // merge keeps this refusal.
  virtual void merge(Collective& ranks) {
    throw ConfigError("--learner " + std::string(name()) + " has no merge across ranks, so no --distributed");
  }
  // Counts of numeric safeguards that fired (caps, NaN updates zeroed), for the summary.
  virtual uint64_t safeguard_count() const { return 0; }
  // Extra lines for the end-of-run summary (a mixture's member weights and losses); most learners have none.
  virtual std::vector<std::string> summary_lines() const { return {}; }

  // One item of a block of consecutive examples (LearnsBlocks below): learned or predicted, with the answer.
  struct BlockItem {
    const Example* x;
    bool learn;  // learn() (else predict())
    Prediction out;
    const ClassOutcome* outcome =
        nullptr;  // a reduction's outcome of this item (class_outcome() one at a time)
  };
};

// Each item of `items` answered by learn() (item.learn) or predict(), in order: a block one example at a time.
inline void learn_one_at_a_time(Learner& l, std::span<Learner::BlockItem> items) {
  for (Learner::BlockItem& it : items) it.out = it.learn ? l.learn(*it.x) : l.predict(*it.x);
}

// Capabilities a learner may offer beside the contract above (it derives from them too); the multiclass
// reductions (--oaa, --csoaa) ask for them once, when they make their first instance.

// One table for K problems (VW's layout for --oaa and --csoaa): a learner whose state is its 2^b slots and a
// few scalars may hold every class's weights, problem i's features at index + i (the indices multiplied by K
// before interactions are formed, as VW does). Such a learner answers share_table(K) with true (before any
// load: its saved state then covers the K problems) and learns problem i from a prediction made earlier with
// predict() (VW's oaa predicts every class first, then updates each), the example counter advanced once per
// example by count_example(). A learner without it (or answering false) is given one instance per class.
class SharesTable {
 public:
  virtual ~SharesTable() = default;
  virtual bool share_table(uint32_t problems) = 0;
  virtual void update_from(const Example& x, uint32_t problem, const Prediction& before, float label,
                           float weight) = 0;
  virtual void count_example(float weight) = 0;
};

// Whether predict() may run on several threads at once (--daemon -t): a learner whose predict() keeps no
// scratch state of its own says so (a mixture: when every member's may); the others are called one at a time.
class PredictsConcurrently {
 public:
  virtual ~PredictsConcurrently() = default;
  virtual bool concurrent_predict() const = 0;
};
inline bool predicts_concurrently(const Learner& l) {
  const auto* c = dynamic_cast<const PredictsConcurrently*>(&l);
  return c && c->concurrent_predict();
}

// --readable_model for a learner that reproduces VW's (sgd, and multiclass over its one table): what VW 9.11.2
// writes after its header, byte for byte (`run`: the run's figures VW writes among the learner's). false: no VW
// layout after all (a multiclass reduction over another learner), so the learner's own text follows.
class WritesVwText {
 public:
  virtual ~WritesVwText() = default;
  virtual bool write_vw_readable(std::ostream& out, const VwRunFigures& run) const = 0;
};

// A reduction (the multiclass wrappers): its last prediction's classes, scores and best class.
class Reduction {
 public:
  virtual ~Reduction() = default;
  virtual const ClassOutcome* class_outcome() const = 0;
};

// The learner's last class outcome when it is a reduction; nullptr for a scalar learner.
inline const ClassOutcome* class_outcome_of(const Learner& l) {
  const auto* r = dynamic_cast<const Reduction*>(&l);
  return r ? r->class_outcome() : nullptr;
}

// --predict_only_model: a learner whose prediction needs less than its whole state (sgd drops its per-slot
// AdaGrad and normalizer sums; mix its validation sample; multiclass passes it on) saves and loads only that.
class HasPredictOnlyState {
 public:
  virtual ~HasPredictOnlyState() = default;
  virtual void save_predict_only(ModelWriter& out) const = 0;
  virtual void load_predict_only(ModelReader& in) = 0;
};

// The predict-only state of any learner: its whole state unless it has a smaller one.
inline void save_for_prediction(const Learner& l, ModelWriter& out) {
  if (const auto* p = dynamic_cast<const HasPredictOnlyState*>(&l))
    p->save_predict_only(out);
  else
    l.save(out);
}
inline void load_for_prediction(Learner& l, ModelReader& in) {
  if (auto* p = dynamic_cast<HasPredictOnlyState*>(&l))
    p->load_predict_only(in);
  else
    l.load(in);
}

// Warm-up (a kernel's bandwidth by the median heuristic, wemm's b = 2X²): how many examples the learner wants
// to see before its first prediction (0: none, or no more); the driver holds that many, calls warmup() with
// them, then predicts and learns each in order. A learner used without a driver estimates from what it has
// instead. Wrappers (mix, multiclass) offer it and pass it on to their learners.
class WarmsUp {
 public:
  virtual ~WarmsUp() = default;
  virtual uint64_t warmup_wanted() const = 0;
  virtual void warmup(std::span<const Example> prefix) = 0;
};

// The warm-up a learner wants (0 for one without WarmsUp), and the call that gives it.
inline uint64_t warmup_wanted_by(const Learner& l) {
  const auto* w = dynamic_cast<const WarmsUp*>(&l);
  return w ? w->warmup_wanted() : 0;
}
inline void warm_up(Learner& l, std::span<const Example> prefix) {
  if (auto* w = dynamic_cast<WarmsUp*>(&l)) w->warmup(prefix);
}

// --audit and --audit_regressor's weights: a learner whose prediction is one weight per slot times the value
// (not the second-order, kernel and mixture learners, which --audit shows feature names and values for).
class AuditsSlots {
 public:
  virtual ~AuditsSlots() = default;
  // The slot of feature f (in feature group `group`, -1 for an interaction), as f meets it in a prediction.
  virtual SlotAudit audit_slot(const Feature& f, int group) const = 0;
  // The slots whose stored weight is nonzero (what --audit_regressor looks for); nullopt for a learner that
  // stores no weights but per-slot statistics it computes them from (scinol2, ftprl, nlms).
  virtual std::optional<uint64_t> nonzero_weights() const { return std::nullopt; }
};

// Blocks of examples (a learner whose work per example splits into independent parts, a mixture's members, a
// reduction's classes): block_size() > 0 asks the driver to hand it up to that many consecutive examples at
// once, through learn_block, which answers each item as learn() (item.learn) or predict() would have, in order,
// with the same results and the same state afterwards (learn_one_at_a_time). 0: one example at a time.
class LearnsBlocks {
 public:
  virtual ~LearnsBlocks() = default;
  virtual size_t block_size() const = 0;
  virtual void learn_block(std::span<Learner::BlockItem> items) = 0;
};

// One instance for K problems on the same points (for a learner without a shared table): a learner whose
// costly part depends on the features alone (a kernel learner's landmarks under --budget and the kernel values
// of an example against them) holds the K problems and computes that part once per example for all of them.
// Such a learner answers share_points(K) with true (before any load: its saved state then covers the K
// problems) and is then called through predict_problems and learn_problems only.
class SharesPoints {
 public:
  virtual ~SharesPoints() = default;
  virtual bool share_points(uint32_t problems) = 0;
  // Every problem's prediction for x (out: one per problem).
  virtual void predict_problems(const Example& x, std::span<Prediction> out) const = 0;
  // One online step of each problem in `steps` on x's features, in order (x's own label and weight are not
  // read; a weight of 0 teaches nothing); out[i]: the prediction of steps[i]'s problem before its update.
  virtual void learn_problems(const Example& x, std::span<const ProblemStep> steps,
                              std::span<Prediction> out) = 0;
};

// Everything a learner factory may use. The loss outlives the learner.
struct LearnerContext {
  const OptionValues& options;
  const Loss& loss;
  int bits = 18;             // weight table has 2^bits slots
  bool test_only = false;    // -t: never learn, freeze the clipping range
  uint64_t random_seed = 0;  // --random_seed: seeds every random choice the learner makes
  uint32_t problems = 1;     // --oaa / --csoaa K: the learner may be one of K per-class instances
};

// A learner's static facts, read by the command line and the registry-wide tests (neither names learners).
struct LearnerTraits {
  std::vector<std::string> losses;  // the losses it accepts, the first the default; empty: every loss
  // The losses under which the default mixture (--learner mix without --mix) includes it; empty: every loss it
  // accepts. A member named with --mix runs under any loss it accepts.
  std::vector<std::string> mixture_losses;
  bool passes = true;                     // may run more than one pass over the data
  bool state_grows = false;               // its state grows with the examples it learns (kernel learners)
  std::vector<std::string> matrix_modes;  // --matrix values it accepts, the first the default; empty: none
  // For a --matrix value it does not accept: what to use instead (e.g. diag -> "--learner scinol-coord").
  std::map<std::string, std::string> matrix_nearest;
  // Whether the feature space must compute VW's per-group sum of x^2 (Example::invariant_norm) for these
  // options.
  std::function<bool(const OptionValues&)> needs_invariant_norm;
  // A VW flag that selects this learner (--ftrl: --learner vw-ftrl); the row declares it among its options.
  std::string vw_flag;
  std::string
      passes_with;  // when `passes` is false: an option that, given, allows more passes (kons: --budget)
  // --distributed: how the ranks' states are combined (one line for the help and errors); "" : the learner
  // refuses.
  std::string merge;
  std::string merge_matrix;  // the --matrix mode the merge needs ("": any)
};

struct LearnerRow {
  std::string name;
  std::string help;                 // one line for `--learner help`
  std::vector<OptionSpec> options;  // its own options (prefixed with its name where they could collide)
  std::function<std::unique_ptr<Learner>(const LearnerContext&)> make;
  LearnerTraits traits;
  // The most examples the registry-wide numerics test feeds this learner (0: no cap), for a learner whose
  // cost or memory grows with every example.
  uint64_t numerics_test_cap = 0;
  bool in_default_mixture(const std::string& loss) const {
    return accepts_loss(loss) && (traits.mixture_losses.empty() ||
                                  std::find(traits.mixture_losses.begin(), traits.mixture_losses.end(),
                                            loss) != traits.mixture_losses.end());
  }
  bool accepts_loss(const std::string& loss) const {
    if (traits.losses.empty()) return true;
    for (const auto& l : traits.losses)
      if (l == loss) return true;
    return false;
  }
};

const std::vector<LearnerRow>& learner_registry();
const LearnerRow* find_learner(std::string_view name);

}  // namespace lepus

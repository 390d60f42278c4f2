// Multiclass and cost-sensitive learning by reduction to K binary or regression problems, as VW's --oaa and
// --csoaa (A. Beygelzimer, J. Langford, B. Zadrozny, "Weighted one-against-all", AAAI 2005, and J. Langford,
// A. Beygelzimer, "Sensitive error correcting output codes", COLT 2005, for the reductions' regret; VW 9.11.2's
// oaa and csoaa for the exact behaviour; docs/multiclass.md):
//   --oaa K:   problem i learns "is the class i?" with label +1 or -1 under the run's loss; the prediction is
//              the class of the largest score (the first on ties). --probabilities (logistic loss) turns the
//              scores into σ(s_i) / Σ_j σ(s_j).
//   --csoaa K: problem i regresses the cost of class i (the run's loss, squared by default); the prediction is
//              the class of the smallest score among the classes the example lists (all K when it lists none).
// A wrapper owning its base: every learner in the registry can be the base. A learner that keeps one table of
// 2^b slots (Learner::share_table, sgd) holds all K problems in it at class offsets, exactly VW's layout (its
// hash collisions included); a kernel learner under --budget (SharesPoints::share_points) holds the K problems
// over one set of landmarks, so each kernel value is computed once per example; an exact kernel learner gets
// one instance per class, the K instances sharing each example's kernel values (kernels::RowCache); any other
// gets one instance per class (K times its memory and time).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lepus/learner.h"

namespace lepus {

struct MulticlassOptions {
  enum class Kind : uint8_t { kOaa, kCsoaa };
  Kind kind = Kind::kOaa;
  uint32_t classes = 0;        // K
  bool probabilities = false;  // --probabilities (oaa)
  int indexing = -1;           // --indexing 0 or 1; -1: decided by the first label 0 or K seen (VW's default)
};

class MulticlassLearner final : public Learner,
                                public LearnsBlocks,
                                public WarmsUp,
                                public HasPredictOnlyState,
                                public WritesVwText,
                                public Reduction {
 public:
  // make_base returns a fresh base learner; it is called once (a base that share_table(K) accepts) or K times.
  MulticlassLearner(const MulticlassOptions& options,
                    const std::function<std::unique_ptr<Learner>()>& make_base);

  Prediction predict(const Example& x) const override;
  Prediction learn(const Example& x) override;
  // Blocks, over one instance per class (and no shared kernel rows): the K instances run through the block in
  // parallel, each on its own problem's items, then the outcomes follow in example order, exactly as learn()
  // and predict() one example at a time (each item's outcome in its BlockItem).
  size_t block_size() const override;
  void learn_block(std::span<BlockItem> items) override;
  void end_pass() override;
  uint64_t warmup_wanted() const override { return warmup_wanted_by(*bases_.front()); }
  void warmup(std::span<const Example> prefix) override;
  void save(ModelWriter& out) const override;
  void load(ModelReader& in) override;
  void save_predict_only(ModelWriter& out) const override;
  void load_predict_only(ModelReader& in) override;
  std::string_view name() const override { return bases_.front()->name(); }
  LabelRange label_range() const override { return bases_.front()->label_range(); }
  std::vector<std::string> describe() const override;
  void write_readable(std::ostream& out) const override;
  // The saved state, declared once (learners/common/state.h); refusals name "multiclass".
  template <class Self, class V>
  static void state(Self& self, V& v, bool predict_only);
  std::string_view state_name() const { return "multiclass"; }
  bool write_vw_readable(std::ostream& out, const VwRunFigures& run) const override;
  uint64_t safeguard_count() const override;
  std::vector<std::string> summary_lines() const override;
  const ClassOutcome* class_outcome() const override { return &outcome_; }

  bool shared() const { return shared_; }
  bool points_shared() const { return points_; }
  size_t instances() const { return bases_.size(); }
  bool kernel_rows_shared() const { return rows_; }

 private:
  // VW's default indexing: a label 0 makes the classes 0..K-1, a label K makes them 1..K.
  void detect(uint32_t label);
  void share_kernel_rows();
  // The class index (0..K-1) a label names, after VW's indexing rules; K when it names none.
  uint32_t index_of(uint32_t label);
  uint32_t label_of(uint32_t index) const { return indexing_ == 0 ? index : index + 1; }
  // scratch_ <- x as a scalar example (label and weight set per class); offsets reset.
  void prepare(const Example& x) const;
  static void as_scalar(const Example& x, Example& out);  // out <- x, its classes dropped
  void shift_to(uint32_t index) const;  // the shared table: scratch_'s indices at class `index`'s offset
  Prediction predict_class(uint32_t index) const;
  Prediction learn_class(uint32_t index, float label, float weight);
  void finish_outcome(uint32_t best) const;
  void predict_all() const;        // before_ <- every class's prediction
  Prediction oaa_outcome() const;  // the class of the largest before_[i].value
  // From steps_ and step_out_; the classes not listed are predicted now, or (unlisted_known) read from before_.
  Prediction csoaa_outcome(bool unlisted_known = false) const;
  Prediction predicted_outcome(const Example& x) const;                // predict()'s outcome from before_
  void read_costs(const Example& x, std::vector<ProblemStep>& steps);  // csoaa: the listed classes' steps
  struct BlockRow;
  void read_block_row(const BlockItem& item, BlockRow& row);
  void run_class_block(uint32_t c);
  // learn_block's three steps on one piece, its outcomes kept from block_outcomes_[first_outcome] on.
  void run_block(std::span<BlockItem> items, size_t first_outcome);
  static constexpr size_t kBlockCopies = size_t{1} << 20;  // features a block's copies may hold (16 MB)
  void learn_table(uint32_t truth, float weight);
  bool teaches(const Example& x) const;  // learn() learns from x (else it predicts)

  MulticlassOptions opt_;
  bool shared_ = false;               // one table (share_table)
  bool points_ = false;               // one learner holding the K problems (share_points)
  SharesTable* table_ = nullptr;      // bases_.front() when shared_
  SharesPoints* problems_ = nullptr;  // bases_.front() when points_
  bool rows_ = false;  // one instance per class, sharing each example's kernel values (kernels::RowCache)
  std::vector<std::unique_ptr<Learner>> bases_;  // one (shared table) or K
  int indexing_;                                 // 0, 1, or -1 while undecided
  uint64_t out_of_range_ = 0;                    // labels outside 0..K or 1..K, mapped as VW maps them
  mutable Example scratch_;
  mutable uint32_t offset_ = 0;
  mutable std::vector<Prediction> before_;
  std::vector<ProblemStep> steps_;
  std::vector<Prediction> step_out_;
  mutable ClassOutcome outcome_;
  struct BlockRow {  // learn_block: one item as the K problems see it
    Example x;       // the item as a scalar example, for a class that only predicts it (if any does)
    bool teach;      // learned from (else predicted)
    int indexing;    // indexing_ after the item's labels were read
    std::vector<ProblemStep> steps;  // the problems that learn it, in order (oaa: all K)
    std::vector<Example> labelled;   // x labelled for them: one copy per distinct (label, weight)
    std::vector<uint32_t> copy_of;   // per step: its copy in labelled
  };
  std::vector<BlockRow> block_rows_;
  mutable std::vector<uint8_t>
      listed_;  // per class: whether the item at hand lists it (scratch, no allocation)
  struct ItemStep {
    size_t item, step;
  };
  std::vector<std::vector<ItemStep>> block_steps_;  // per class: the steps it learns, in item order
  std::vector<std::vector<BlockItem>> block_own_;   // per class: its items of the block
  std::vector<std::vector<size_t>> block_first_;    // per class: where each block item's entries start
  std::vector<ClassOutcome> block_outcomes_;
};

}  // namespace lepus

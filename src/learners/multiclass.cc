// --oaa and --csoaa: see multiclass.h for the reductions and their paper.
#include "learners/multiclass.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <ostream>

#include <tbb/parallel_for.h>

#include "kernels/row_cache.h"
#include "learners/common/state.h"
#include "lepus/errors.h"

namespace lepus {
namespace {
constexpr uint32_t kStateTag = 0x4D430001;  // "MC", version 1
}  // namespace

MulticlassLearner::MulticlassLearner(const MulticlassOptions& options,
                                     const std::function<std::unique_ptr<Learner>()>& make_base)
    : opt_(options), indexing_(options.indexing) {
  if (opt_.classes < 1) throw ConfigError("--oaa / --csoaa: the number of classes must be at least 1");
  bases_.push_back(make_base());
  auto* table = dynamic_cast<SharesTable*>(bases_.front().get());
  shared_ = table && table->share_table(opt_.classes);
  auto* points = shared_ ? nullptr : dynamic_cast<SharesPoints*>(bases_.front().get());
  points_ = points && points->share_points(opt_.classes);
  table_ = shared_ ? table : nullptr;
  problems_ = points_ ? points : nullptr;
  if (!shared_ && !points_)
    for (uint32_t i = 1; i < opt_.classes; ++i) bases_.push_back(make_base());
  share_kernel_rows();
  before_.resize(opt_.classes);
  outcome_.scores.assign(opt_.classes, 0.0f);
}

// One instance per class of an exact kernel learner: the instances read each example's kernel values from one
// cache, so each is computed once per example, not once per class (kernels::RowCache; results are unchanged).
void MulticlassLearner::share_kernel_rows() {
  if (bases_.size() < 2 || !dynamic_cast<kernels::SharesKernelRows*>(bases_.front().get())) return;
  const auto cache = std::make_shared<kernels::RowCache>();
  for (auto& b : bases_) rows_ = dynamic_cast<kernels::SharesKernelRows&>(*b).share_kernel_rows(cache);
}

void MulticlassLearner::detect(uint32_t label) {
  if (indexing_ < 0 && label == 0)
    indexing_ = 0;  // VW: "label 0 found -- labels are now considered 0-indexed"
  if (indexing_ < 0 && label == opt_.classes) indexing_ = 1;
}

uint32_t MulticlassLearner::index_of(uint32_t label) {
  const uint32_t k = opt_.classes;
  detect(label);
  if (indexing_ == 0 && label >= k) {  // VW maps an out-of-range label to the first class (0-indexed) ...
    ++out_of_range_;
    return 0;
  }
  if (indexing_ == 1 && (label < 1 || label > k)) {  // ... or to the last (1-indexed)
    ++out_of_range_;
    return k - 1;
  }
  if (indexing_ < 0 && label > k) {  // undecided: it matches no class (every problem learns -1)
    ++out_of_range_;
    return k;
  }
  return indexing_ == 0 ? label : label - 1;
}

void MulticlassLearner::as_scalar(const Example& x, Example& out) {
  out = x;
  out.label_kind = LabelKind::kScalar;
  out.classes.clear();
}

void MulticlassLearner::prepare(const Example& x) const {
  as_scalar(x, scratch_);
  offset_ = 0;
}

void MulticlassLearner::shift_to(uint32_t index) const {
  if (!shared_ || index == offset_) return;
  const uint64_t step = static_cast<uint64_t>(index) - offset_;  // wraps around for a step back: masked later
  for (Feature& f : scratch_.features) f.index += step;
  offset_ = index;
}

Prediction MulticlassLearner::predict_class(uint32_t index) const {
  shift_to(index);
  return (shared_ ? bases_.front() : bases_[index])->predict(scratch_);
}

Prediction MulticlassLearner::learn_class(uint32_t index, float label, float weight) {
  shift_to(index);
  scratch_.label = label;
  scratch_.labeled = true;
  scratch_.weight = weight;
  if (!shared_) return bases_[index]->learn(scratch_);
  Learner& base = *bases_.front();
  const Prediction p = base.predict(scratch_);
  table_->update_from(scratch_, index, p, label, weight);
  return p;
}

void MulticlassLearner::finish_outcome(uint32_t best) const {
  outcome_.first_class = indexing_ == 0 ? 0 : 1;
  outcome_.klass = label_of(best);
  outcome_.probabilities.clear();
  if (opt_.probabilities) {  // VW: σ(s_i) in float, normalised by their sum
    float sum = 0.0f;
    for (float s : outcome_.scores) {
      outcome_.probabilities.push_back(1.0f / (1.0f + std::exp(-s)));
      sum += outcome_.probabilities.back();
    }
    const float inv = 1.0f / sum;
    for (float& p : outcome_.probabilities) p *= inv;
  }
}

void MulticlassLearner::predict_all() const {
  if (points_) {
    problems_->predict_problems(scratch_, before_);
    return;
  }
  for (uint32_t i = 0; i < opt_.classes; ++i) before_[i] = predict_class(i);
}

Prediction MulticlassLearner::oaa_outcome() const {
  uint32_t best = 0;
  for (uint32_t i = 0; i < opt_.classes; ++i) {
    outcome_.scores[i] = before_[i].value;
    if (outcome_.scores[i] > outcome_.scores[best]) best = i;
  }
  finish_outcome(best);
  return Prediction{outcome_.scores[best], static_cast<float>(outcome_.klass)};
}

Prediction MulticlassLearner::predict(const Example& x) const {
  prepare(x);
  predict_all();
  return predicted_outcome(x);
}

Prediction MulticlassLearner::predicted_outcome(const Example& x) const {
  const uint32_t k = opt_.classes;
  if (opt_.kind == MulticlassOptions::Kind::kOaa) return oaa_outcome();
  // csoaa: the smallest raw score among the listed classes (all when none are listed), the first on ties.
  for (uint32_t i = 0; i < k; ++i) outcome_.scores[i] = before_[i].raw;
  uint32_t best = k;
  float score = FLT_MAX;
  auto consider = [&](uint32_t i) {
    if (i < k && (outcome_.scores[i] < score || (outcome_.scores[i] == score && i < best))) {
      score = outcome_.scores[i];
      best = i;
    }
  };
  if (x.label_kind == LabelKind::kCostSensitive && !x.classes.empty()) {
    for (const ClassCost& c : x.classes) {
      const int first = indexing_ == 0 ? 0 : 1;
      if (c.klass >= static_cast<uint32_t>(first)) consider(c.klass - first);
    }
  } else {
    for (uint32_t i = 0; i < k; ++i) consider(i);
  }
  if (best == k) best = 0;
  finish_outcome(best);
  return Prediction{outcome_.scores[best], static_cast<float>(outcome_.klass)};
}

// VW's oaa over one table: every class is predicted with the weights before this example, then each learns.
void MulticlassLearner::learn_table(uint32_t truth, float weight) {
  const uint32_t k = opt_.classes;
  for (uint32_t i = 0; i < k; ++i) before_[i] = predict_class(i);
  for (uint32_t i = 0; i < k; ++i) {
    shift_to(i);
    const float label = i == truth ? 1.0f : -1.0f;
    scratch_.label = label;
    scratch_.labeled = true;
    table_->update_from(scratch_, i, before_[i], label, weight);
  }
  table_->count_example(weight);
}

bool MulticlassLearner::teaches(const Example& x) const {
  const LabelKind want =
      opt_.kind == MulticlassOptions::Kind::kOaa ? LabelKind::kMulticlass : LabelKind::kCostSensitive;
  return x.labeled && x.label_kind == want && !x.classes.empty() && x.weight > 0.0f;
}

Prediction MulticlassLearner::learn(const Example& x) {
  const bool oaa = opt_.kind == MulticlassOptions::Kind::kOaa;
  if (!teaches(x)) return predict(x);
  const uint32_t k = opt_.classes;
  if (oaa) {
    // VW's oaa: every class is predicted with the weights before this example, then each learns.
    const uint32_t truth = index_of(x.classes.front().klass);
    prepare(x);
    if (shared_) {
      learn_table(truth, x.weight);
    } else if (points_) {
      steps_.clear();
      for (uint32_t i = 0; i < k; ++i) steps_.push_back(ProblemStep{i, i == truth ? 1.0f : -1.0f, x.weight});
      problems_->learn_problems(scratch_, steps_, before_);
    } else {
      for (uint32_t i = 0; i < k; ++i) before_[i] = learn_class(i, i == truth ? 1.0f : -1.0f, x.weight);
    }
    return oaa_outcome();
  }
  // VW's csoaa: the listed classes in the order written, each regressing its cost with weight 1 (0 for an
  // unknown cost), predicted and learned in turn; the prediction is the smallest raw score among them.
  read_costs(x, steps_);
  prepare(x);
  step_out_.resize(steps_.size());
  if (points_) {
    problems_->learn_problems(scratch_, steps_, step_out_);
  } else {
    for (size_t s = 0; s < steps_.size(); ++s)
      step_out_[s] = learn_class(steps_[s].problem, steps_[s].label, steps_[s].weight);
  }
  if (shared_) table_->count_example(steps_.empty() ? 1.0f : steps_.back().weight);
  return csoaa_outcome();
}

void MulticlassLearner::read_costs(const Example& x, std::vector<ProblemStep>& steps) {
  for (const ClassCost& c : x.classes) detect(c.klass);  // the indexing is settled before any class learns
  steps.clear();
  for (const ClassCost& c : x.classes) {
    const uint32_t i = index_of(c.klass);
    if (i < opt_.classes) steps.push_back(ProblemStep{i, c.cost, c.cost == FLT_MAX ? 0.0f : 1.0f});
  }
}

// csoaa after learning: the smallest raw score among the listed classes (the first on ties; a class listed twice
// counts twice), and what -r shows for the classes the example did not list.
Prediction MulticlassLearner::csoaa_outcome(bool unlisted_known) const {
  const uint32_t k = opt_.classes;
  std::vector<uint8_t>& listed = listed_;
  listed.assign(k, 0);
  uint32_t best = k;
  float score = FLT_MAX;
  for (size_t s = 0; s < steps_.size(); ++s) {
    const uint32_t i = steps_[s].problem;
    const float raw = step_out_[s].raw;
    outcome_.scores[i] = raw;
    listed[i] = 1;
    if (raw < score || (raw == score && i < best)) {
      score = raw;
      best = i;
    }
  }
  if (std::find(listed.begin(), listed.end(), 0) != listed.end()) {
    if (points_ && !unlisted_known) problems_->predict_problems(scratch_, before_);
    for (uint32_t i = 0; i < k; ++i)
      if (!listed[i]) outcome_.scores[i] = (points_ || unlisted_known ? before_[i] : predict_class(i)).raw;
  }
  if (best == k) best = 0;
  finish_outcome(best);
  return Prediction{outcome_.scores[best], static_cast<float>(outcome_.klass)};
}

size_t MulticlassLearner::block_size() const {
  if (bases_.size() < 2 || rows_) return 0;
  const auto* blocks = dynamic_cast<const LearnsBlocks*>(bases_.front().get());
  return std::max<size_t>(256, blocks ? blocks->block_size() : 0);
}

// Step 1 of learn_block for item i: its labels read as learn() reads them, its problems' steps, and its copies
// labelled for them: one per distinct (label, weight) among the steps, bit for bit (oaa: +1 and -1; csoaa: as many as the
// distinct costs it lists).
void MulticlassLearner::read_block_row(const BlockItem& item, BlockRow& row) {
  const Example& x = *item.x;
  const bool oaa = opt_.kind == MulticlassOptions::Kind::kOaa;
  row.teach = item.learn && teaches(x);
  row.steps.clear();
  if (row.teach && oaa) {
    const uint32_t truth = index_of(x.classes.front().klass);
    for (uint32_t c = 0; c < opt_.classes; ++c) row.steps.push_back({c, c == truth ? 1.0f : -1.0f, x.weight});
  } else if (row.teach) {
    read_costs(x, row.steps);
  }
  row.indexing = indexing_;
  // The plain copy is for the classes that only predict the item: none when every class learns it (a taught oaa
  // item, a csoaa item listing every class).
  listed_.assign(opt_.classes, 0);
  size_t covered = 0;
  for (const ProblemStep& step : row.steps)
    if (!listed_[step.problem]) {
      listed_[step.problem] = 1;
      ++covered;
    }
  if (covered < opt_.classes) as_scalar(x, row.x);
  row.copy_of.resize(row.steps.size());
  size_t copies = 0;
  for (size_t s = 0; s < row.steps.size(); ++s) {
    const ProblemStep& step = row.steps[s];
    size_t c = 0;
    auto same = [](float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); };
    while (c < copies &&
           !(same(row.labelled[c].label, step.label) && same(row.labelled[c].weight, step.weight)))
      ++c;
    row.copy_of[s] = static_cast<uint32_t>(c);
    if (c < copies) continue;
    if (row.labelled.size() <= c) row.labelled.emplace_back();
    Example& e = row.labelled[c];
    as_scalar(x, e);
    e.label = step.label;
    e.labeled = true;
    e.weight = step.weight;
    ++copies;
  }
}

// Step 2 for class c: its instance through the block in order, learning its steps (block_steps_[c], in item
// order) and predicting the items it does not learn.
void MulticlassLearner::run_class_block(uint32_t c) {
  const std::vector<ItemStep>& steps = block_steps_[c];
  std::vector<BlockItem>& own = block_own_[c];
  std::vector<size_t>& first = block_first_[c];
  own.clear();
  first.resize(block_rows_.size());
  size_t j = 0;
  for (size_t i = 0; i < block_rows_.size(); ++i) {
    const BlockRow& row = block_rows_[i];
    first[i] = own.size();
    for (; j < steps.size() && steps[j].item == i; ++j) {
      own.push_back({&row.labelled[row.copy_of[steps[j].step]], true, {}});
    }
    if (own.size() == first[i]) own.push_back({&row.x, false, {}});
  }
  if (auto* blocks = dynamic_cast<LearnsBlocks*>(bases_[c].get()))
    blocks->learn_block(own);
  else
    learn_one_at_a_time(*bases_[c], own);
}

void MulticlassLearner::learn_block(std::span<BlockItem> items) {
  if (block_size() == 0) return learn_one_at_a_time(*this, items);
  // The copies a block holds are bounded (csoaa copies an item once per class it lists): a block past the bound
  // runs as consecutive pieces, each a block of its own, which gives the same results.
  const bool oaa = opt_.kind == MulticlassOptions::Kind::kOaa;
  block_outcomes_.resize(items.size());  // each item's outcome, for the whole block
  size_t start = 0, held = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Example& x = *items[i].x;
    const size_t copies = (oaa ? 2 : x.classes.size() + 1) * std::max<size_t>(x.features.size(), 1);
    if (held > 0 && held + copies > kBlockCopies) {
      run_block(items.subspan(start, i - start), start);
      start = i;
      held = 0;
    }
    held += copies;
  }
  run_block(items.subspan(start), start);
}

void MulticlassLearner::run_block(std::span<BlockItem> items, size_t first_outcome) {
  const size_t m = items.size(), k = opt_.classes;
  block_rows_.resize(m);
  block_steps_.resize(k);
  for (auto& steps : block_steps_) steps.clear();
  for (size_t i = 0; i < m; ++i) {  // 1. in example order
    read_block_row(items[i], block_rows_[i]);
    for (size_t s = 0; s < block_rows_[i].steps.size(); ++s)
      block_steps_[block_rows_[i].steps[s].problem].push_back({i, s});
  }
  block_own_.resize(k);
  block_first_.resize(k);
  tbb::parallel_for(uint32_t{0}, opt_.classes, [this](uint32_t c) { run_class_block(c); });  // 2. in parallel
  // 3. the outcomes in example order, each as learn() or predict() gives it
  const int indexing = indexing_;
  std::vector<size_t> next(k);  // per class: its next entry of the item
  for (size_t i = 0; i < m; ++i) {
    const BlockRow& row = block_rows_[i];
    indexing_ = row.indexing;
    for (size_t c = 0; c < k; ++c) {
      next[c] = block_first_[c][i];
      before_[c] = block_own_[c][next[c]].out;  // its (first) answer to the item
    }
    if (!row.teach) {
      items[i].out = predicted_outcome(*items[i].x);
    } else if (opt_.kind == MulticlassOptions::Kind::kOaa) {
      items[i].out = oaa_outcome();
    } else {  // each listed class's answers in the order listed; the others' predictions are in before_
      steps_ = row.steps;
      step_out_.resize(steps_.size());
      for (size_t s = 0; s < steps_.size(); ++s) {
        const uint32_t c = steps_[s].problem;
        step_out_[s] = block_own_[c][next[c]++].out;
      }
      items[i].out = csoaa_outcome(true);
    }
    ClassOutcome& kept = block_outcomes_[first_outcome + i];
    kept = outcome_;
    items[i].outcome = &kept;
  }
  indexing_ = indexing;
}

void MulticlassLearner::end_pass() {
  for (auto& b : bases_) b->end_pass();
}

void MulticlassLearner::warmup(std::span<const Example> prefix) {
  std::vector<Example> scalar(prefix.begin(), prefix.end());
  for (Example& e : scalar) {
    e.label_kind = LabelKind::kScalar;
    e.classes.clear();
  }
  for (auto& b : bases_) warm_up(*b, scalar);
}

// The reduction, the classes and the indexing (0 undecided, 1 zero-based, 2 one-based), then each instance's
// own state (its predict-only one in a predict-only model). Readable: "classes", "indexing", then each
// instance's text ("class L" before each, unless one learner serves every class).
template <class Self, class V>
void MulticlassLearner::state(Self& self, V& v, bool predict_only) {
  v.tag(kStateTag);
  v.fixed("reduction", static_cast<uint8_t>(self.opt_.kind),
          "saved by the other reduction (--oaa / --csoaa)");
  v.fixed("classes", self.opt_.classes, "saved with another number of classes");
  v.lines([&self](std::ostream& out) { out << "classes " << self.opt_.classes << "\n"; });
  const int saved = v.value("indexing", static_cast<uint8_t>(self.indexing_ + 1), uint8_t{0}, uint8_t{2}) - 1;
  const int given = self.opt_.indexing;
  v.check(given < 0 || saved < 0 || saved == given, "saved with the other --indexing");
  v.derived(self.indexing_, saved >= 0 ? saved : given);
  v.lines([&self](std::ostream& out) {
    out << "indexing " << (self.indexing_ < 0 ? std::string("undecided") : std::to_string(self.indexing_))
        << "\n";
  });
  v.fixed("instances", static_cast<uint32_t>(self.bases_.size()), "saved with another base layout");
  v.learners(self.bases_, predict_only);
  v.lines([&self](std::ostream& out) {
    for (size_t i = 0; i < (self.shared_ || self.points_ ? 1 : self.bases_.size()); ++i) {
      if (!self.shared_ && !self.points_) out << "class " << self.label_of(static_cast<uint32_t>(i)) << "\n";
      self.bases_[i]->write_readable(out);
    }
  });
}

void MulticlassLearner::save(ModelWriter& out) const { common::save_state(*this, out, false); }
void MulticlassLearner::load(ModelReader& in) { common::load_state(*this, in, false); }
void MulticlassLearner::save_predict_only(ModelWriter& out) const { common::save_state(*this, out, true); }
void MulticlassLearner::load_predict_only(ModelReader& in) { common::load_state(*this, in, true); }
void MulticlassLearner::write_readable(std::ostream& out) const { common::write_state(*this, out, false); }

std::vector<std::string> MulticlassLearner::describe() const {
  std::vector<std::string> lines = bases_.front()->describe();
  const std::string what =
      opt_.kind == MulticlassOptions::Kind::kOaa ? "one against all" : "cost-sensitive one against all";
  lines.push_back(what + ", " + std::to_string(opt_.classes) + " classes" +
                  (shared_   ? " in one table"
                   : points_ ? " in one learner (kernel values once per example)"
                   : rows_   ? ", one learner each (kernel values once per example)"
                             : ", one learner each"));
  return lines;
}

// VW's --oaa over its gd learner writes gd's text over the one table all classes share; separate learners
// have no VW layout.
bool MulticlassLearner::write_vw_readable(std::ostream& out, const VwRunFigures& run) const {
  const auto* vw = dynamic_cast<const WritesVwText*>(bases_.front().get());
  return shared_ && vw && vw->write_vw_readable(out, run);
}

uint64_t MulticlassLearner::safeguard_count() const {
  uint64_t n = 0;
  for (const auto& b : bases_) n += b->safeguard_count();
  return n;
}

std::vector<std::string> MulticlassLearner::summary_lines() const {
  std::vector<std::string> lines;
  if (out_of_range_ > 0)
    lines.push_back("labels outside the classes = " + std::to_string(out_of_range_) + " (mapped to class " +
                    (indexing_ == 0 ? std::string("0") : std::to_string(opt_.classes)) + ", as VW does)");
  return lines;
}

}  // namespace lepus

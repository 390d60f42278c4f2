// The multiclass and cost-sensitive reductions (learners/multiclass.h) over every learner in the registry as
// the base, with its defaults: the learner contract (predicting changes nothing, save -> load predicts alike,
// resumed training equals one run, weight 0 and unlabeled examples teach nothing, a model of another K or the
// other reduction is refused), and the reductions' own properties: with one instance per class, --oaa is K
// independent binary learners on +-1 labels and --csoaa K regressions on the costs; the prediction is the
// first largest score (oaa) or the first smallest listed cost estimate (csoaa). VW's exact outputs with sgd (one
// table, class offsets) are the e2e tests' (test/e2e/multiclass_test.cc).
#include <gtest/gtest.h>

#include <cfloat>
#include <cstdint>
#include <string>
#include <vector>

#include "labeled_example.h"
#include "learners/multiclass.h"
#include "lepus/errors.h"
#include "lepus/loss.h"
#include "registry_cases.h"

namespace lepus {
namespace {

constexpr uint32_t kClasses = 4;

// A stream of 4-class examples: the class decides which of four feature groups carries the signal, plus noise.
std::vector<Example> stream(size_t n, bool cost_sensitive) {
  std::vector<Example> out;
  uint64_t s = 99;
  auto next = [&]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  };
  for (size_t i = 0; i < n; ++i) {
    const uint32_t klass = 1 + next() % kClasses;
    std::vector<std::pair<uint64_t, double>> f;
    f.push_back({100 + klass * 7, 1.0});
    for (int k = 0; k < 3; ++k) f.push_back({next() % 60, (next() % 100) / 50.0});
    f.push_back({11650396, 1.0});  // constant
    Example ex = testing::example(f, 0.0f, i % 5 == 2 ? 2.0f : 1.0f);
    if (cost_sensitive) {
      ex.label_kind = LabelKind::kCostSensitive;
      for (uint32_t c = 1; c <= kClasses; ++c)
        ex.classes.push_back({c, c == klass ? 0.0f : 1.0f + 0.25f * c});
      ex.weight = 1.0f;
    } else {
      ex.label_kind = LabelKind::kMulticlass;
      ex.classes.push_back({klass, 0.0f});
    }
    out.push_back(std::move(ex));
  }
  return out;
}

class Reduction : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  void SetUp() override {
    // "NAME+budget": the kernel learner under --budget 20 (one learner for the K problems: share_points).
    std::string name = std::get<0>(GetParam());
    const bool budget = name.ends_with("+budget");
    if (budget) name.resize(name.size() - 7);
    row_ = find_learner(name);
    ASSERT_NE(row_, nullptr);
    csoaa_ = std::get<1>(GetParam());
    LossOptions lo;
    lo.name = csoaa_ || row_->accepts_loss("squared") ? "squared" : row_->traits.losses.front();
    if (!row_->accepts_loss(lo.name)) GTEST_SKIP() << row_->name << " cannot regress costs";
    loss_ = make_loss(lo);
    opts_ = registry_test::defaults_of(*row_);
    if (budget) opts_.set("budget", "20", true);
  }
  std::unique_ptr<Learner> base() const { return row_->make(LearnerContext{opts_, *loss_, 10, false}); }
  std::unique_ptr<MulticlassLearner> make(uint32_t k = kClasses, bool csoaa = false) const {
    MulticlassOptions o;
    o.kind = csoaa ? MulticlassOptions::Kind::kCsoaa : MulticlassOptions::Kind::kOaa;
    o.classes = k;
    return std::make_unique<MulticlassLearner>(o, [this] { return base(); });
  }
  std::unique_ptr<MulticlassLearner> make_own() const { return make(kClasses, csoaa_); }
  std::vector<Example> data(size_t n) const { return stream(n, csoaa_); }
  static std::vector<uint8_t> state(const Learner& l) { return registry_test::saved_state(l); }
  // The checks, one test per base and reduction (one process each under ctest).
  void predict_never_changes_state();
  void save_load_and_resume_equal_one_run();
  void other_class_count_or_reduction_is_refused();
  void refused_state_changes_nothing();
  void weight_zero_and_unlabeled_teach_nothing();
  void instances_are_independent_problems();
  void blocks_equal_one_at_a_time();
  const LearnerRow* row_ = nullptr;
  bool csoaa_ = false;
  std::unique_ptr<Loss> loss_;
  OptionValues opts_;
};

void Reduction::predict_never_changes_state() {
  auto l = make_own();
  const auto xs = data(60);
  for (const auto& x : xs) l->learn(x);
  const auto before = state(*l);
  for (const auto& x : xs) l->predict(x);
  EXPECT_EQ(state(*l), before);
}

void Reduction::save_load_and_resume_equal_one_run() {
  const auto xs = data(80);
  auto one = make_own();
  auto first = make_own();
  for (size_t i = 0; i < 40; ++i) {
    one->learn(xs[i]);
    first->learn(xs[i]);
  }
  const auto bytes = state(*first);
  auto resumed = make_own();
  ModelReader r(bytes.data(), bytes.size(), "model");
  resumed->load(r);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(state(*resumed), bytes);
  for (size_t i = 40; i < 80; ++i) {
    const Prediction a = one->learn(xs[i]);
    const auto oa = *one->class_outcome();
    const Prediction b = resumed->learn(xs[i]);
    EXPECT_EQ(a.value, b.value) << i;
    EXPECT_EQ(oa.scores, resumed->class_outcome()->scores) << i;
  }
  EXPECT_EQ(state(*one), state(*resumed));
}

void Reduction::other_class_count_or_reduction_is_refused() {
  auto l = make_own();
  for (const auto& x : data(20)) l->learn(x);
  const auto bytes = state(*l);
  for (const bool other_kind : {false, true}) {
    auto other = other_kind ? make(kClasses, !csoaa_) : make(kClasses + 1, csoaa_);
    ModelReader r(bytes.data(), bytes.size(), "model");
    EXPECT_THROW(other->load(r), ModelFormatError) << (other_kind ? "other reduction" : "other K");
  }
}

// A state cut short is refused and leaves the reduction (here one that has learned 20 examples) as it was, byte
// for byte, even when the cut falls in the middle of its instances.
void Reduction::refused_state_changes_nothing() {
  auto l = make_own();
  const auto xs = data(40);
  for (const auto& x : xs) l->learn(x);
  const auto bytes = state(*l);
  auto m = make_own();
  for (size_t i = 0; i < 20; ++i) m->learn(xs[i]);
  registry_test::expect_cut_states_change_nothing(*m, bytes, 41);
  ModelWriter predict_only;  // a predict-only state refused: the bases keep their whole states
  l->save_predict_only(predict_only);
  registry_test::expect_cut_states_change_nothing(*m, predict_only.bytes(), 41, true);
}

void Reduction::weight_zero_and_unlabeled_teach_nothing() {
  auto l = make_own();
  auto xs = data(30);
  for (size_t i = 0; i < 20; ++i) l->learn(xs[i]);
  const auto before = state(*l);
  Example zero = xs[25], unlabeled = xs[26];
  zero.weight = 0.0f;
  unlabeled.labeled = false;
  l->learn(zero);
  l->learn(unlabeled);
  EXPECT_EQ(state(*l), before);
}

// One instance per class: each class's scores are those of a learner of its own trained on +-1 labels (oaa)
// or on the costs (csoaa), and the prediction is the first best of them.
void Reduction::instances_are_independent_problems() {
  auto l = make_own();
  if (l->shared()) return;  // one table for every class: checked against VW (e2e)
  if (l->points_shared())
    return;  // one learner for the K problems: test/unit/learners/kernel_classes_test.cc
  std::vector<std::unique_ptr<Learner>> own;
  for (uint32_t c = 0; c < kClasses; ++c) own.push_back(base());
  for (const Example& x : data(120)) {
    l->learn(x);
    const ClassOutcome o = *l->class_outcome();
    uint32_t best = 0;
    for (uint32_t c = 0; c < kClasses; ++c) {
      Example b = x;
      b.label_kind = LabelKind::kScalar;
      b.classes.clear();
      if (csoaa_) {
        b.label = x.classes[c].cost;
        b.weight = 1.0f;
      } else {
        b.label = x.classes.front().klass == c + 1 ? 1.0f : -1.0f;
      }
      const Prediction p = own[c]->learn(b);
      const float score = csoaa_ ? p.raw : p.value;
      ASSERT_EQ(o.scores[c], score) << "class " << c + 1;
      if (csoaa_ ? score < o.scores[best] : score > o.scores[best]) best = c;
    }
    EXPECT_EQ(o.klass, best + 1);
  }
}

// learn_block (one instance per class: the classes in parallel) gives each item the prediction and the outcome
// that learn() or predict() one at a time gives, and the same final state; the items include ones that only
// predict, unlabeled ones, weight 0, labels read before the class numbering is settled, and (csoaa) classes not
// listed, listed twice, with an unknown cost, or with the same cost as others.
void Reduction::blocks_equal_one_at_a_time() {
  auto one = make_own();
  auto blocks = make_own();
  if (blocks->block_size() == 0) {
    EXPECT_TRUE(one->shared() || one->points_shared() || one->kernel_rows_shared());
    return;
  }
  auto xs = data(150);
  // oaa: no label K before item 20, whose label 0 then numbers the classes from 0. csoaa: the classes are
  // numbered from 1 at once, and item 20 lists class 0, mapped to the last class, which it then lists twice.
  for (size_t i = 0; i < 20; ++i)
    if (!csoaa_ && xs[i].classes.front().klass == kClasses) xs[i].classes.front().klass = 1;
  xs[20].classes.front().klass = 0;
  if (csoaa_) {
    xs[7].classes.resize(2);          // classes 3 and 4 not listed: predicted
    xs[8].classes[1].cost = FLT_MAX;  // an unknown cost: weight 0
    for (size_t i : {9, 10, 30, 31})  // classes sharing a cost share the block's labelled copy
      for (ClassCost& c : xs[i].classes) c.cost = i % 2 == 0 ? 0.5f : (c.klass == 2 ? 0.0f : 1.0f);
  }
  xs[3].labeled = false;
  xs[4].weight = 0.0f;
  std::vector<Learner::BlockItem> items;
  for (size_t i = 0; i < xs.size(); ++i) items.push_back({&xs[i], i % 11 != 5, {}});
  for (size_t at = 0; at < items.size(); at += 13) {
    const auto block = std::span(items).subspan(at, std::min<size_t>(13, items.size() - at));
    blocks->learn_block(block);
    for (size_t i = at; i < at + block.size(); ++i) {
      const Prediction p = items[i].learn ? one->learn(xs[i]) : one->predict(xs[i]);
      const ClassOutcome& o = *one->class_outcome();
      ASSERT_NE(items[i].outcome, nullptr) << i;
      EXPECT_EQ(items[i].out.value, p.value) << i;
      EXPECT_EQ(items[i].out.raw, p.raw) << i;
      EXPECT_EQ(items[i].outcome->klass, o.klass) << i;
      EXPECT_EQ(items[i].outcome->first_class, o.first_class) << i;
      EXPECT_EQ(items[i].outcome->scores, o.scores) << i;
    }
  }
  EXPECT_EQ(state(*blocks), state(*one));
}

TEST_P(Reduction, KeepsTheContract) {
  {
    SCOPED_TRACE("predicting never changes state");
    predict_never_changes_state();
  }
  {
    SCOPED_TRACE("save -> load, resumed = one run");
    save_load_and_resume_equal_one_run();
  }
  {
    SCOPED_TRACE("another K or reduction refused");
    other_class_count_or_reduction_is_refused();
  }
  {
    SCOPED_TRACE("a refused state changes nothing");
    refused_state_changes_nothing();
  }
  {
    SCOPED_TRACE("weight 0 and unlabeled teach nothing");
    weight_zero_and_unlabeled_teach_nothing();
  }
  {
    SCOPED_TRACE("instances are independent problems");
    instances_are_independent_problems();
  }
  {
    SCOPED_TRACE("blocks equal one example at a time");
    blocks_equal_one_at_a_time();
  }
}

std::vector<std::tuple<std::string, bool>> reduction_cases() {
  std::vector<std::tuple<std::string, bool>> out;
  for (const auto& row : learner_registry()) {
    out.push_back({row.name, false});
    out.push_back({row.name, true});
    if (!row.traits.state_grows) continue;
    out.push_back({row.name + "+budget", false});
    out.push_back({row.name + "+budget", true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryBase, Reduction, ::testing::ValuesIn(reduction_cases()),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, bool>>& i) {
                           std::string n = std::get<0>(i.param) + (std::get<1>(i.param) ? "_csoaa" : "_oaa");
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// A --csoaa block whose copies (one per listed class) would pass the bound runs as consecutive pieces: wide
// items (300,000 features, 5 copies each: one piece per item) between narrow ones give what one example at a
// time gives.
TEST(Reduction, WideCsoaaBlocksRunInPiecesAsOneAtATime) {
  LossOptions lo;
  const auto loss = make_loss(lo);
  const LearnerRow& row = *find_learner("scinol2");
  OptionValues opts = registry_test::defaults_of(row);
  auto make = [&] {
    MulticlassOptions o;
    o.kind = MulticlassOptions::Kind::kCsoaa;
    o.classes = kClasses;
    return MulticlassLearner(o, [&] { return row.make(LearnerContext{opts, *loss, 12, false}); });
  };
  MulticlassLearner one = make(), blocks = make();
  ASSERT_GT(blocks.block_size(), 0u);
  auto xs = stream(12, true);
  for (size_t i : {2u, 3u, 7u})
    for (uint64_t j = 0; j < 300000; ++j) xs[i].features.push_back(Feature{j * 7919, (j % 13) * 0.01f});
  std::vector<Learner::BlockItem> items;
  for (const Example& x : xs) items.push_back({&x, true, {}});
  blocks.learn_block(items);
  for (size_t i = 0; i < xs.size(); ++i) {
    const Prediction p = one.learn(xs[i]);
    ASSERT_NE(items[i].outcome, nullptr) << i;
    EXPECT_EQ(items[i].out.raw, p.raw) << i;
    EXPECT_EQ(items[i].outcome->scores, one.class_outcome()->scores) << i;
    EXPECT_EQ(items[i].outcome->klass, one.class_outcome()->klass) << i;
  }
  ModelWriter a, b;
  one.save(a);
  blocks.save(b);
  EXPECT_EQ(a.bytes(), b.bytes());
}

// VW's rules for the class numbering: a label K makes the classes 1..K, a label 0 makes them 0..K-1, and a
// label outside them is mapped to the last (1..K) or first (0..K-1) class and counted.
TEST(Reduction, IndexingFollowsTheLabelsSeen) {
  LossOptions lo;
  const auto loss = make_loss(lo);
  OptionValues opts = registry_test::defaults_of(*find_learner("sgd"));
  auto make = [&] {
    MulticlassOptions o;
    o.classes = 3;
    return MulticlassLearner(o, [&] {
      return find_learner("sgd")->make(LearnerContext{opts, *loss, 10, false});
    });
  };
  auto labeled = [](uint32_t klass) {
    Example x = testing::example({{1, 1.0}, {2, 0.5}}, 0.0f);
    x.label_kind = LabelKind::kMulticlass;
    x.classes = {{klass, 0.0f}};
    return x;
  };
  MulticlassLearner zero = make();
  zero.learn(labeled(0));
  EXPECT_EQ(zero.class_outcome()->first_class, 0u);
  zero.learn(labeled(3));  // outside 0..2
  EXPECT_FALSE(zero.summary_lines().empty());
  MulticlassLearner one = make();
  one.learn(labeled(3));
  EXPECT_EQ(one.class_outcome()->first_class, 1u);
  EXPECT_TRUE(one.summary_lines().empty());
}

}  // namespace
}  // namespace lepus

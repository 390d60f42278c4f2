// The contract every learner in the registry keeps, checked once over the whole registry in every variant of
// its options (registry_cases.h: the defaults, each non-default choice of an option with choices, each flag
// alone), so a learner or a mode added to the registry is covered without touching this file: predicting
// never changes state; save -> load gives the same state and predictions; training resumed from a saved model
// equals uninterrupted training (predictions, state and readable model); a model saved by another table size
// or cut short is refused; the state of every other learner is refused; an example of importance weight 0 and
// an unlabeled example teach nothing; a predict-only save predicts as the full one. Hostile values are
// RegistryNumerics' (registry_numerics_test.cc). A learner's own test file keeps only its paper's oracles and
// properties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/feature_space.h"
#include "formats/vw_text.h"
#include "learners/common/plumbing.h"
#include "lepus/errors.h"
#include "lepus/learner.h"
#include "lepus/loss.h"
#include "registry_cases.h"

namespace lepus {
namespace {

using registry_test::Case;
using registry_test::options_of;
using registry_test::Quiet;

std::vector<Case> cases() { return registry_test::cases({"squared", "logistic"}, /*with_variants=*/true); }

// A small stream with three namespaces, collisions at -b 8, values of mixed scale, labels +-1 (some lines
// weighted), made by a fixed LCG. `invariant_norm`: the feature space computes Example::invariant_norm, as
// the driver does when the learner's traits ask for it.
std::vector<Example> stream(size_t n, bool invariant_norm) {
  std::vector<Example> out;
  uint64_t s = 12345;
  auto next = [&]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  };
  FeatureSpaceOptions so;
  so.quadratic = {"ab"};
  so.invariant_norm = invariant_norm;
  FeatureSpace space(so);
  Quiet q;
  for (size_t i = 0; i < n; ++i) {
    std::string line = (next() % 2 ? "1" : "-1");
    if (i % 7 == 3) line += " 2.5";  // importance weight
    line += " |a";
    for (int k = 0; k < 3; ++k)
      line += " f" + std::to_string(next() % 40) + ":" + std::to_string((next() % 200) / 37.0);
    line += " |b w" + std::to_string(next() % 25) + " |c x:" + std::to_string((next() % 1000) / 10.0 - 50.0);
    Example ex;
    parse_vw_line(line, ParseOptions{}, ex, q);
    space.expand(ex);
    out.push_back(std::move(ex));
  }
  return out;
}

class Conformance : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    row_ = find_learner(GetParam().learner);
    ASSERT_NE(row_, nullptr);
    LossOptions lo;
    lo.name = GetParam().loss;
    loss_ = make_loss(lo);
    opts_ = options_of(*row_, GetParam().variant);
    const auto& needs = row_->traits.needs_invariant_norm;
    invariant_norm_ = needs && needs(opts_);
  }
  std::unique_ptr<Learner> make(int bits = 8, bool test_only = false) const {
    return row_->make(LearnerContext{opts_, *loss_, bits, test_only});
  }
  std::vector<Example> stream(size_t n) const { return lepus::stream(n, invariant_norm_); }
  static std::vector<uint8_t> state(const Learner& l) { return registry_test::saved_state(l); }
  static void load(Learner& l, const std::vector<uint8_t>& bytes) {
    ModelReader r(bytes.data(), bytes.size(), "mem");
    l.load(r);
    ASSERT_EQ(r.remaining(), 0u);
  }
  static std::string readable(const Learner& l) {
    std::ostringstream out;
    common::imbue_exact_numbers(out);  // as --readable_model writes it: every number exact
    l.write_readable(out);
    return out.str();
  }
  const LearnerRow* row_ = nullptr;
  std::unique_ptr<Loss> loss_;
  OptionValues opts_;
  bool invariant_norm_ = false;
};

TEST_P(Conformance, PredictNeverChangesState) {
  auto l = make();
  const auto data = stream(120);
  for (size_t i = 0; i < 60; ++i) l->learn(data[i]);
  const auto before = state(*l);
  for (size_t i = 60; i < 120; ++i) l->predict(data[i]);
  EXPECT_EQ(state(*l), before);
}

TEST_P(Conformance, SaveLoadGivesTheSameStateAndPredictions) {
  auto l = make();
  const auto data = stream(150);
  for (size_t i = 0; i < 100; ++i) l->learn(data[i]);
  auto m = make();
  load(*m, state(*l));
  EXPECT_EQ(state(*m), state(*l));
  for (size_t i = 100; i < 150; ++i) {
    const Prediction a = l->predict(data[i]), b = m->predict(data[i]);
    ASSERT_EQ(a.raw, b.raw) << i;
    ASSERT_EQ(a.value, b.value) << i;
  }
}

// Every prediction of the resumed run, its final state and its readable model are the uninterrupted run's.
TEST_P(Conformance, ResumedTrainingEqualsUninterrupted) {
  const auto data = stream(200);
  auto whole = make();
  for (size_t i = 0; i < 100; ++i) whole->learn(data[i]);
  auto resumed = make();
  load(*resumed, state(*whole));
  for (size_t i = 100; i < data.size(); ++i) {
    const Prediction a = whole->learn(data[i]), b = resumed->learn(data[i]);
    ASSERT_EQ(a.raw, b.raw) << i;
    ASSERT_EQ(a.value, b.value) << i;
  }
  EXPECT_EQ(state(*resumed), state(*whole));
  EXPECT_EQ(readable(*resumed), readable(*whole));
}

// A refused state changes nothing: the learner (here one that has learned 20 examples) keeps its own, byte for
// byte.
TEST_P(Conformance, TruncatedOrOtherTableSizeStateIsRefusedAndChangesNothing) {
  auto l = make();
  const auto data = stream(80);
  for (const auto& ex : data) l->learn(ex);
  const auto bytes = state(*l);
  auto m = make();
  for (size_t i = 0; i < 20; ++i) m->learn(data[i]);
  registry_test::expect_cut_states_change_nothing(*m, bytes, 97);
  auto other = make(10);  // another table size
  ModelReader r(bytes.data(), bytes.size(), "mem");
  EXPECT_THROW(other->load(r), ModelFormatError);
}

// The state saved by every other learner of the registry (each variant of its row, trained on the same stream
// with the same table size, with this case's loss if it accepts it, else its first) is refused by load(), and
// its predict-only save by load_predict_only(): a learner never reads another's state as its own.
TEST_P(Conformance, OtherLearnersStateIsRefused) {
  if (learner_registry().size() < 2) GTEST_SKIP() << "no other learner in the registry";
  const auto data = stream(60);
  for (const LearnerRow& other : learner_registry()) {
    if (other.name == row_->name) continue;
    LossOptions lo;
    lo.name = other.accepts_loss(GetParam().loss) ? GetParam().loss : other.traits.losses.front();
    const auto loss = make_loss(lo);
    for (const auto& variant : registry_test::variants_of(other)) {
      const OptionValues o = options_of(other, variant);
      const bool norm = other.traits.needs_invariant_norm && other.traits.needs_invariant_norm(o);
      auto l = other.make(LearnerContext{o, *loss, 8, false});
      for (const auto& ex : norm == invariant_norm_ ? data : lepus::stream(60, norm)) l->learn(ex);
      std::ostringstream from;
      registry_test::PrintTo(Case{other.name, lo.name, variant}, &from);
      ModelWriter full, predict_only;
      l->save(full);
      save_for_prediction(*l, predict_only);
      auto m = make();
      ModelReader r(full.bytes().data(), full.bytes().size(), "other");
      EXPECT_THROW(m->load(r), ModelFormatError) << "state of " << from.str();
      auto p = make(8, true);
      ModelReader rp(predict_only.bytes().data(), predict_only.bytes().size(), "other");
      EXPECT_THROW(load_for_prediction(*p, rp), ModelFormatError) << "predict-only state of " << from.str();
    }
  }
}

// Weight 0 and unlabeled examples are predicted, never learned from. The copies below carry labels the
// learner has already seen, so even a learner that widens its label range on a weight-0 example (sgd, as VW)
// ends with the state it would have without them, byte for byte, and every later prediction is the same.
TEST_P(Conformance, WeightZeroAndUnlabeledTeachNothing) {
  const auto data = stream(120);
  auto plain = make(), with = make();
  for (size_t i = 0; i < 60; ++i) {
    plain->learn(data[i]);
    with->learn(data[i]);
    Example zero = data[i];
    zero.weight = 0.0f;
    const Prediction z = with->learn(zero);
    ASSERT_EQ(z.raw, plain->predict(zero).raw) << i;
    Example unlabeled = data[i];
    unlabeled.labeled = false;
    const auto before = state(*with);
    const Prediction p = with->learn(unlabeled), q = with->predict(unlabeled);
    ASSERT_EQ(p.raw, q.raw) << i;  // learn() returns the pre-update prediction
    ASSERT_EQ(state(*with), before) << i;
  }
  EXPECT_EQ(state(*with), state(*plain));
  for (size_t i = 60; i < 120; ++i) ASSERT_EQ(plain->predict(data[i]).raw, with->predict(data[i]).raw) << i;
}

TEST_P(Conformance, PredictOnlySavePredictsAsTheFullOne) {
  auto l = make();
  const auto data = stream(150);
  for (size_t i = 0; i < 100; ++i) l->learn(data[i]);
  ModelWriter w;
  save_for_prediction(*l, w);
  auto m = make(8, true);
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  load_for_prediction(*m, r);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_LE(w.bytes().size(), state(*l).size());
  // Compared with the full save loaded the same way (-t): a learner may predict otherwise under -t than while
  // training (aioli --aioli_o2b predicts with its snapshot there).
  auto full = make(8, true);
  load(*full, state(*l));
  for (size_t i = 100; i < 150; ++i) ASSERT_EQ(full->predict(data[i]).value, m->predict(data[i]).value) << i;
}

INSTANTIATE_TEST_SUITE_P(AllLearners, Conformance, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return registry_test::case_name(info.param); });

// This process's resident memory in KiB (VmRSS), or -1 where /proc does not say.
long resident_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      long v = -1;
      in >> v;
      return v;
    }
    in.ignore(1 << 12, '\n');
  }
  return -1;
}

// A learner's memory follows the data, not 2^b: at -b 26 (64M slots, 0.5-2 GiB of table) training on a small
// stream, saving, loading the save into a second learner, a predict-only save and a readable model together
// stay far below one table's size (the pages the stream touches, as VW's calloc'd table).
using BigTable = Conformance;
TEST_P(BigTable, CostsWhatTheDataTouches) {
  const long before = resident_kib();
  if (before < 0) GTEST_SKIP() << "no VmRSS in /proc/self/status";
  const auto data = stream(40);  // 20 to learn from: ~200 distinct features, under ftprl-full's dense cap
  {
    auto l = make(26);
    for (size_t i = 0; i < 20; ++i) l->learn(data[i]);
    auto m = make(26);
    load(*m, state(*l));
    for (size_t i = 20; i < 40; ++i) ASSERT_EQ(l->predict(data[i]).raw, m->predict(data[i]).raw) << i;
    ModelWriter w;
    save_for_prediction(*l, w);
    auto p = make(26, true);
    ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
    load_for_prediction(*p, r);
    EXPECT_FALSE(readable(*m).empty());
    EXPECT_LT(resident_kib() - before, 64 * 1024) << "KiB resident for three learners at -b 26";
  }
}

INSTANTIATE_TEST_SUITE_P(AllLearners, BigTable,
                         ::testing::ValuesIn(registry_test::cases({"squared", "logistic"})),
                         [](const auto& info) { return registry_test::case_name(info.param); });

}  // namespace
}  // namespace lepus

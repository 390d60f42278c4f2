// Learner::merge through a Collective of threads (no MPI): sgd's merge is VW's weighted average, slot by slot.
#include <gtest/gtest.h>

#include <barrier>
#include <mutex>
#include <thread>

#include "../learners/labeled_example.h"
#include "dist/collective.h"
#include "learners/gd.h"
#include "losses/losses.h"

namespace lepus {
namespace {

// K ranks as K threads: sum() adds every rank's vector into a shared one, then copies it back.
class ThreadGroup {
 public:
  explicit ThreadGroup(int k) : k_(k), sync_(k) {}
  template <class T>
  void sum(int rank, T* v, size_t n) {
    if (rank == 0) total_.assign(n, 0.0);
    sync_.arrive_and_wait();
    {
      std::lock_guard<std::mutex> lock(m_);
      for (size_t i = 0; i < n; ++i) total_[i] += static_cast<double>(v[i]);
    }
    sync_.arrive_and_wait();
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(total_[i]);
    sync_.arrive_and_wait();
  }
  int size() const { return k_; }

 private:
  int k_;
  std::barrier<> sync_;
  std::mutex m_;
  std::vector<double> total_;
};

class ThreadRank final : public Collective {
 public:
  ThreadRank(ThreadGroup& g, int r) : g_(g), r_(r) {}
  int rank() const override { return r_; }
  int size() const override { return g_.size(); }
  void sum(double* v, size_t n) override { g_.sum(r_, v, n); }
  void sum(float* v, size_t n) override { g_.sum(r_, v, n); }
  [[noreturn]] void abort(int) override { std::abort(); }

 private:
  ThreadGroup& g_;
  int r_;
};

class Bare final : public Learner {
 public:
  Prediction predict(const Example&) const override { return {}; }
  Prediction learn(const Example&) override { return {}; }
  void save(ModelWriter&) const override {}
  void load(ModelReader&) override {}
  std::string_view name() const override { return "bare"; }
  void write_readable(std::ostream&) const override {}
};


TEST(Merge, SgdIsVwsWeightedAverage) {
  LogisticLoss loss(-1.0f, 1.0f);
  GdLearner a(GdOptions::from(testing::sgd_defaults()), loss, 4, false), b(GdOptions::from(testing::sgd_defaults()), loss, 4, false);
  // Slot 1 learned by both (different values), 2 by a only, 3 by b only.
  for (int i = 0; i < 5; ++i) a.learn(testing::example({{1, 1.0}, {2, 0.5}}, i % 2 ? 1.0f : -1.0f));
  for (int i = 0; i < 3; ++i) b.learn(testing::example({{1, 2.0}, {3, 1.0}}, 1.0f));
  const auto sa = a.slots(), sb = b.slots();
  std::vector<GdSlot> before_a(sa.begin(), sa.begin() + 16), before_b(sb.begin(), sb.begin() + 16);
  const double ta = a.normalizer(), tb = b.normalizer();
  ThreadGroup group(2);
  ThreadRank r0(group, 0), r1(group, 1);
  std::thread other([&] { b.merge(r1); });
  a.merge(r0);
  other.join();
  for (size_t i = 0; i < 16; ++i) {
    const GdSlot x = before_a[i], y = before_b[i];
    const float g = x.g + y.g;
    // VW: each rank scales w, G and N by its G / total G, then the ranks' slots are summed.
    const float w = g > 0.0f ? x.w * (x.g / g) + y.w * (y.g / g) : 0.0f;
    const float gg = g > 0.0f ? x.g * (x.g / g) + y.g * (y.g / g) : 0.0f;
    EXPECT_FLOAT_EQ(a.slots()[i].w, w) << "slot " << i;
    EXPECT_FLOAT_EQ(a.slots()[i].g, gg) << "slot " << i;
    EXPECT_EQ(a.slots()[i].w, b.slots()[i].w) << "every rank holds the same model, slot " << i;
  }
  EXPECT_GT(a.slots()[2].w * before_a[2].w, 0.0f);  // a slot only one rank learned keeps that rank's weight
  EXPECT_FLOAT_EQ(a.slots()[2].w, before_a[2].w);
  EXPECT_DOUBLE_EQ(a.normalizer(), ta + tb);  // the counters: the increments of both ranks
  EXPECT_DOUBLE_EQ(b.normalizer(), ta + tb);
}

TEST(Merge, OneRankChangesNothingAndOtherLearnersRefuse) {
  LogisticLoss loss(-1.0f, 1.0f);
  GdLearner a(GdOptions::from(testing::sgd_defaults()), loss, 4, false);
  for (int i = 0; i < 5; ++i) a.learn(testing::example({{1, 1.0}, {2, 0.5}}, i % 2 ? 1.0f : -1.0f));
  std::vector<GdSlot> before(a.slots().begin(), a.slots().begin() + 16);
  ThreadGroup group(1);
  ThreadRank r0(group, 0);
  a.merge(r0);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(a.slots()[i].w, before[i].w);
  // A learner without a merge of its own refuses (the command line says so before any learner exists).
  EXPECT_THROW(Bare().merge(r0), ConfigError);
  for (const auto& row : learner_registry())
    EXPECT_EQ(row.traits.merge.empty(), row.name != "sgd") << row.name << ": a merge declared without one, or not";
}

}  // namespace
}  // namespace lepus

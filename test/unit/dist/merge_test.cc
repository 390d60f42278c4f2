// Learner::merge through a Collective of threads (no MPI): sgd's merge is VW's weighted average, slot by slot.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "../learners/labeled_example.h"
#include "dist/collective.h"
#include "learners/common/merge.h"
#include "learners/ftprl.h"
#include "learners/ftprl_sketch.h"
#include "learners/gd.h"
#include "learners/nlms.h"
#include "learners/scinol.h"
#include "learners/scinol2.h"
#include "learners/scinol_sketch.h"
#include "losses/losses.h"

namespace lepus {
namespace {

// K ranks as K threads: sum() and max() combine every rank's vector into a shared one, then copy it back.
class ThreadGroup {
 public:
  explicit ThreadGroup(int k) : k_(k), sync_(k) {}
  template <class T>
  void reduce(int rank, T* v, size_t n, bool largest) {
    if (rank == 0) total_.assign(n, largest ? -HUGE_VAL : 0.0);
    sync_.arrive_and_wait();
    {
      std::lock_guard<std::mutex> lock(m_);
      for (size_t i = 0; i < n; ++i)
        total_[i] =
            largest ? std::max(total_[i], static_cast<double>(v[i])) : total_[i] + static_cast<double>(v[i]);
    }
    sync_.arrive_and_wait();
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(total_[i]);
    sync_.arrive_and_wait();
  }
  std::vector<std::vector<double>> gather(int rank, const std::vector<double>& mine) {
    if (rank == 0) all_.assign(k_, {});
    sync_.arrive_and_wait();
    {
      std::lock_guard<std::mutex> lock(m_);
      all_[rank] = mine;
    }
    sync_.arrive_and_wait();
    std::vector<std::vector<double>> out = all_;
    sync_.arrive_and_wait();
    return out;
  }
  int size() const { return k_; }

 private:
  int k_;
  std::vector<std::vector<double>> all_;
  std::barrier<> sync_;
  std::mutex m_;
  std::vector<double> total_;
};

class ThreadRank final : public Collective {
 public:
  ThreadRank(ThreadGroup& g, int r) : g_(g), r_(r) {}
  int rank() const override { return r_; }
  int size() const override { return g_.size(); }
  void sum(double* v, size_t n) override { g_.reduce(r_, v, n, false); }
  void sum(float* v, size_t n) override { g_.reduce(r_, v, n, false); }
  void max(double* v, size_t n) override { g_.reduce(r_, v, n, true); }
  std::vector<std::vector<double>> gather(const std::vector<double>& mine) override {
    return g_.gather(r_, mine);
  }
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
  GdLearner a(GdOptions::from(testing::sgd_defaults()), loss, 4, false),
      b(GdOptions::from(testing::sgd_defaults()), loss, 4, false);
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
  // The registry declares a merge exactly for the learners that have one.
  const std::set<std::string> merged = {"sgd",        "scinol-coord", "scinol2",     "scinol1",
                                        "ftprl-diag", "scinol-full",  "ftprl-const", "ftprl-scale",
                                        "nlms",       "ftprl-full"};
  for (const auto& row : learner_registry())
    EXPECT_EQ(row.traits.merge.empty(), merged.count(row.name) == 0)
        << row.name << ": a merge declared or not";
}

// Runs f(rank, collective) on K threads, one per rank.
template <class F>
void on_ranks(int k, F f) {
  ThreadGroup group(k);
  std::vector<std::thread> threads;
  for (int r = 0; r < k; ++r)
    threads.emplace_back([&, r] {
      ThreadRank rank(group, r);
      f(r, rank);
    });
  for (auto& t : threads) t.join();
}

TEST(Merge, WeightedAverageIsVwsFormulaPerRecord) {
  // Records of (value, weight, running max), on 3 ranks. Record 0: all moved; 1: only rank 2 moved (the others
  // hold zeros); 2: no weight anywhere (the plain mean); field 2 is the largest over the ranks.
  const double in[3][9] = {{1.0, 1.0, 5.0, 0.0, 0.0, 0.0, 3.0, 0.0, 1.0},
                           {2.0, 3.0, 7.0, 0.0, 0.0, 0.0, 6.0, 0.0, 2.0},
                           {-4.0, 4.0, 6.0, 9.0, 2.0, 4.0, 9.0, 0.0, 3.0}};
  double out[3][9];
  on_ranks(3, [&](int r, Collective& c) {
    std::copy(in[r], in[r] + 9, out[r]);
    constexpr size_t kMaxed[] = {2};
    common::weighted_average(
        c, out[r], 3, 3, [](const double* x) { return x[1]; }, kMaxed);
  });
  const double total = 1.0 + 3.0 + 4.0;
  for (int r = 0; r < 3; ++r) {
    EXPECT_DOUBLE_EQ(out[r][0], (1.0 * 1.0 + 2.0 * 3.0 - 4.0 * 4.0) / total);
    EXPECT_DOUBLE_EQ(out[r][1], (1.0 * 1.0 + 3.0 * 3.0 + 4.0 * 4.0) / total);
    EXPECT_EQ(out[r][2], 7.0);
    EXPECT_EQ(out[r][3], 9.0);  // only rank 2 moved it: its record whole
    EXPECT_EQ(out[r][4], 2.0);
    EXPECT_EQ(out[r][5], 4.0);
    EXPECT_DOUBLE_EQ(out[r][6], (3.0 + 6.0 + 9.0) / 3.0);  // no weight: the mean
    EXPECT_EQ(out[r][8], 3.0);
  }
}

TEST(Merge, ScaleFreeLearnersMergeToOneModelNeverBolderThanTheBoldestRank) {
  LogisticLoss loss(-1.0f, 1.0f);
  // Each rank learns its own examples (slot 1 by all, 2 + r by rank r alone), then the ranks merge.
  auto teach = [](Learner& l, int r) {
    for (int i = 0; i < 20 + 5 * r; ++i)
      l.learn(
          testing::example({{1, 1.0 + r}, {static_cast<uint64_t>(2 + r), 0.5}}, (i + r) % 3 ? 1.0f : -1.0f));
  };
  // scinol-coord: every slot's h^2 / s2 (the bet's exponent) at most the largest rank's; t the mean.
  {
    std::vector<std::unique_ptr<ScinolLearner>> l;
    for (int r = 0; r < 3; ++r) l.push_back(std::make_unique<ScinolLearner>(ScinolOptions{}, loss, 4, false));
    std::vector<std::vector<ScinolLearner::SlotState>> before(3);
    double rounds = 0.0;
    for (int r = 0; r < 3; ++r) {
      teach(*l[r], r);
      for (uint64_t i = 0; i < 16; ++i) before[r].push_back(l[r]->slot(i));
      rounds += l[r]->rounds();
    }
    on_ranks(3, [&](int r, Collective& c) { l[r]->merge(c); });
    for (uint64_t i = 0; i < 16; ++i) {
      double boldest = 0.0;
      for (int r = 0; r < 3; ++r)
        if (before[r][i].s2 > 0.0)
          boldest = std::max(boldest, before[r][i].h * before[r][i].h / before[r][i].s2);
      const auto m = l[0]->slot(i);
      if (m.s2 > 0.0) {
        EXPECT_LE(m.h * m.h / m.s2, boldest * (1 + 1e-12)) << "slot " << i;
      }
      for (int r = 1; r < 3; ++r) EXPECT_EQ(l[r]->slot(i).h, m.h) << "every rank holds the same model";
    }
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(l[0]->slot(2 + r).h, before[r][2 + r].h);  // learned by one rank: that rank's state whole
      EXPECT_EQ(l[r]->rounds(), std::round(rounds / 3));
      EXPECT_EQ(l[r]->seen_slots(), 4.0);  // slots 1..4, from any rank
    }
  }
  // scinol2: the same, with M the largest |x| of any rank.
  {
    std::vector<std::unique_ptr<Scinol2Learner>> l;
    Scinol2Options o;
    o.variant = ScinolKkwVariant::kScinol2;
    for (int r = 0; r < 3; ++r) l.push_back(std::make_unique<Scinol2Learner>(o, loss, 4, false));
    for (int r = 0; r < 3; ++r) teach(*l[r], r);
    on_ranks(3, [&](int r, Collective& c) { l[r]->merge(c); });
    EXPECT_EQ(l[0]->slot(1).m, 3.0);
    for (int r = 1; r < 3; ++r)
      for (uint64_t i = 0; i < 16; ++i) EXPECT_EQ(l[r]->slot(i).g, l[0]->slot(i).g);
  }
  // ftprl-diag: u weighted by G = s^2, one model on every rank.
  {
    std::vector<std::unique_ptr<FtprlDiagLearner>> l;
    for (int r = 0; r < 3; ++r)
      l.push_back(std::make_unique<FtprlDiagLearner>(FtprlOptions{}, loss, 4, false));
    std::vector<FtprlDiagLearner::Slot> before;
    for (int r = 0; r < 3; ++r) {
      teach(*l[r], r);
      before.push_back(l[r]->slots()[1]);
    }
    on_ranks(3, [&](int r, Collective& c) { l[r]->merge(c); });
    double g = 0.0, u = 0.0;
    for (const auto& b : before) g += b.s * b.s;
    for (const auto& b : before) u += b.u * (b.s * b.s / g);
    EXPECT_NEAR(l[0]->slots()[1].u, u, 1e-12);
    for (int r = 1; r < 3; ++r) EXPECT_EQ(l[r]->weight(1), l[0]->weight(1));
  }
}

TEST(Merge, ScinolFullSketchesMergeAsFrequentDirections) {
  // Three ranks, a rank-2 sketch (shrinks happen), features 1..6 of values +-1 (the same first |x| on every
  // rank, so the ranks' coordinates agree) plus feature 7 first seen at 1 + r on rank r.
  LogisticLoss loss(-1.0f, 1.0f);
  const int k = 3;
  std::vector<std::unique_ptr<ScinolSketchLearner>> l;
  ScinolFullOptions published;  // the Γ-preserving merge of Kotlowski 2017's wealth is what this test checks
  published.variant = ScinolFullVariant::kPublished;
  for (int r = 0; r < k; ++r) l.push_back(std::make_unique<ScinolSketchLearner>(published, 2, loss, 4));
  for (int r = 0; r < k; ++r)
    for (int i = 0; i < 12 + 3 * r; ++i) {
      const uint64_t a = 1 + (i + r) % 6, b = 1 + (i * 5 + 2 * r) % 6;
      const float y = (i * r) % 3 ? 1.0f : -1.0f;
      auto x = a == b ? testing::example({{a, 1.0}}, 1.0f)
                      : testing::example({{a, (i + r) % 2 ? 1.0 : -1.0}, {b, i % 3 ? 1.0 : -1.0}}, y);
      l[r]->learn(x);
    }
  for (int r = 0; r < k; ++r) l[r]->learn(testing::example({{7, 1.0 + r}}, 1.0f));
  // Probe directions over features 1..6, and each rank's S~ there: ||B z||^2 + Δ ||z||^2.
  const std::vector<std::vector<Coord>> probes = {
      {{1, 1.0}}, {{2, 1.0}, {3, -1.0}}, {{1, 0.3}, {4, 0.7}, {6, -0.2}}, {{5, 1.0}, {6, 1.0}}};
  auto energy = [](const ScinolSketchLearner& x, const std::vector<Coord>& z) {
    Eigen::VectorXd p;
    double zz = 0.0;
    for (const Coord& c : z) zz += c.x * c.x;
    if (x.sketch().rows() == 0) return x.shrinkage() * zz;
    x.sketch().multiply(z, p);
    return p.head(x.sketch().rows()).squaredNorm() + x.shrinkage() * zz;
  };
  std::vector<double> mean(probes.size(), 0.0);
  double mean_delta = 0.0, mean_gamma = 0.0;
  for (int r = 0; r < k; ++r) {
    ASSERT_GT(l[r]->shrinkage(), 0.0) << "rank " << r << " never shrank";
    for (size_t j = 0; j < probes.size(); ++j) mean[j] += energy(*l[r], probes[j]) / k;
    mean_delta += l[r]->shrinkage() / k;
    mean_gamma += l[r]->gamma() / k;
  }
  on_ranks(k, [&](int r, Collective& c) { l[r]->merge(c); });
  const double ridge = l[0]->shrinkage() - mean_delta;  // the merge's own shrinkage
  EXPECT_GE(ridge, 0.0);
  // Γ keeps the ranks' mean c − Γ; the merged c is at most the ranks' mean (joint convexity, S~ at least the mean),
  // so Γ is at most theirs.
  EXPECT_GE(l[0]->gamma(), 0.0);
  EXPECT_LE(l[0]->gamma(), mean_gamma * (1 + 1e-12));
  for (int r = 1; r < k; ++r) EXPECT_EQ(l[r]->gamma(), l[0]->gamma());
  for (size_t j = 0; j < probes.size(); ++j) {
    double zz = 0.0;
    for (const Coord& c : probes[j]) zz += c.x * c.x;
    const double merged = energy(*l[0], probes[j]);
    // Frequent Directions: the ranks' mean S~ <= the merged S~ <= the mean plus the merge's shrinkage.
    EXPECT_GE(merged, mean[j] * (1 - 1e-9)) << "probe " << j;
    EXPECT_LE(merged, mean[j] + ridge * zz + 1e-9) << "probe " << j;
  }
  // One model on every rank; feature 7 took the largest first |x| (3) as its scale.
  const Example probe = testing::example({{1, 1.0}, {4, -0.5}, {7, 2.0}}, 1.0f);
  for (int r = 1; r < k; ++r) EXPECT_EQ(l[r]->predict(probe).raw, l[0]->predict(probe).raw);
  std::ostringstream readable;
  l[0]->write_readable(readable);
  EXPECT_NE(readable.str().find("\n7:"), std::string::npos) << readable.str();
}

TEST(Merge, FtprlConstAndScaleTakeTheMeanPoint) {
  LogisticLoss loss(-1.0f, 1.0f);
  auto teach = [](Learner& l, int r) {
    for (int i = 0; i < 10 + 4 * r; ++i)
      l.learn(
          testing::example({{1, 1.0 + r}, {static_cast<uint64_t>(2 + r), 0.5}}, (i + r) % 3 ? 1.0f : -1.0f));
  };
  const int k = 3;
  auto options = [](const char* set) {
    OptionValues v;
    v.set("ftprl_radius", "1", true);
    v.set("ftprl_set", set, true);
    v.set("ftprl_scale", "*:2", true);
    return FtprlOptions::from(v);
  };
  const FtprlOptions box = options("box");
  {
    std::vector<std::unique_ptr<FtprlConstBoxLearner>> l;
    for (int r = 0; r < k; ++r) l.push_back(std::make_unique<FtprlConstBoxLearner>(box, loss, 4, false));
    std::vector<double> u(16, 0.0);
    double g = 0.0;
    for (int r = 0; r < k; ++r) {
      teach(*l[r], r);
      for (uint64_t i = 0; i < 16; ++i) u[i] += l[r]->u(i) / k;
      g += l[r]->grad_sum() / k;
    }
    on_ranks(k, [&](int r, Collective& c) { l[r]->merge(c); });
    EXPECT_DOUBLE_EQ(l[0]->grad_sum(), g);
    for (int r = 0; r < k; ++r)
      for (uint64_t i = 0; i < 16; ++i)
        EXPECT_NEAR(l[r]->u(i), u[i], 1e-12) << "rank " << r << ", slot " << i;
  }
  const FtprlOptions ball = options("ball");  // ftprl-const's ball, and ftprl-scale
  {
    std::vector<std::unique_ptr<FtprlConstBallLearner>> l;
    for (int r = 0; r < k; ++r) l.push_back(std::make_unique<FtprlConstBallLearner>(ball, loss, 4, false));
    std::vector<double> u(16, 0.0);
    for (int r = 0; r < k; ++r) {
      teach(*l[r], r);
      for (uint64_t i = 0; i < 16; ++i) u[i] += l[r]->hat_u(i) / k;
    }
    on_ranks(k, [&](int r, Collective& c) { l[r]->merge(c); });
    double norm2 = 0.0;
    for (uint64_t i = 0; i < 16; ++i) {
      EXPECT_NEAR(l[0]->hat_u(i), u[i], 1e-12) << "slot " << i;
      norm2 += u[i] * u[i];
    }
    EXPECT_NEAR(l[0]->norm2(), norm2, 1e-12);
    for (int r = 1; r < k; ++r) EXPECT_EQ(l[r]->weight(1), l[0]->weight(1));
  }
  {
    std::vector<std::unique_ptr<FtprlScaleLearner>> l;
    for (int r = 0; r < k; ++r) l.push_back(std::make_unique<FtprlScaleLearner>(ball, loss, 4, false));
    for (int r = 0; r < k; ++r) teach(*l[r], r);
    on_ranks(k, [&](int r, Collective& c) { l[r]->merge(c); });
    for (int r = 0; r < k; ++r)
      for (int q = 0; q < k; ++q) EXPECT_EQ(l[r]->weight(2 + q), l[0]->weight(2 + q)) << "rank " << r;
    EXPECT_NE(l[0]->weight(4), 0.0);  // learned on rank 2 alone, kept (a third of its point)
  }
}

TEST(Merge, NlmsTakesTheMeanWeightsAndTheAverageNormOverEveryRank) {
  const int k = 2;
  std::vector<std::unique_ptr<NlmsLearner>> l;
  for (int r = 0; r < k; ++r) l.push_back(std::make_unique<NlmsLearner>(NlmsOptions{}, 4));
  // Rank 0: 3 examples of ||x||^2 = 1; rank 1: 1 example of ||x||^2 = 9.
  for (int i = 0; i < 3; ++i) l[0]->learn(testing::example({{1, 1.0}}, 2.0f));
  l[1]->learn(testing::example({{1, 3.0}}, -1.0f));
  const double w = (l[0]->weight(1) + l[1]->weight(1)) / 2;
  on_ranks(k, [&](int r, Collective& c) { l[r]->merge(c); });
  for (int r = 0; r < k; ++r) {
    EXPECT_DOUBLE_EQ(l[r]->weight(1), w);
    EXPECT_DOUBLE_EQ(l[r]->epsilon(), 1e-6 * (3 * 1.0 + 9.0) / 4);  // the average over all 4 examples
  }
}

TEST(Merge, FtprlFullSketchTakesTheMeanPointAndMergesItsSketch) {
  LogisticLoss loss(-1.0f, 1.0f);
  const int k = 3;
  FtprlFullOptions o;
  o.radius = 2.0;
  std::vector<std::unique_ptr<FtprlSketchLearner>> l;
  for (int r = 0; r < k; ++r) l.push_back(std::make_unique<FtprlSketchLearner>(o, 2, loss, 4));
  for (int r = 0; r < k; ++r)
    for (int i = 0; i < 12 + 3 * r; ++i) {
      const uint64_t a = 1 + (i + r) % 6, b = 1 + (i * 5 + 2 * r) % 6;
      const float y = (i * r) % 3 ? 1.0f : -1.0f;
      l[r]->learn(a == b ? testing::example({{a, 1.0}}, y)
                         : testing::example({{a, (i + r) % 2 ? 1.0 : -1.0}, {b, 0.5 + r}}, y));
    }
  std::vector<double> w(16, 0.0), energy(6, 0.0);
  double mean_delta = 0.0;
  auto moment = [](const FtprlSketchLearner& x, uint64_t slot) {  // e_slotᵀ M~ e_slot
    const std::vector<Coord> z = {{slot, 1.0}};
    Eigen::VectorXd p;
    if (x.sketch().rows() == 0) return x.sketch().shrinkage();
    x.sketch().multiply(z, p);
    return p.head(x.sketch().rows()).squaredNorm() + x.sketch().shrinkage();
  };
  for (int r = 0; r < k; ++r) {
    ASSERT_GT(l[r]->sketch().shrinkage(), 0.0) << "rank " << r << " never shrank";
    for (uint64_t i = 0; i < 16; ++i) w[i] += l[r]->weight(i) / k;
    for (uint64_t i = 1; i <= 6; ++i) energy[i - 1] += moment(*l[r], i) / k;
    mean_delta += l[r]->sketch().shrinkage() / k;
  }
  on_ranks(k, [&](int r, Collective& c) { l[r]->merge(c); });
  const double ridge = l[0]->sketch().shrinkage() - mean_delta;
  EXPECT_GE(ridge, 0.0);
  for (uint64_t i = 0; i < 16; ++i)
    for (int r = 0; r < k; ++r) EXPECT_NEAR(l[r]->weight(i), w[i], 1e-12) << "rank " << r << ", slot " << i;
  for (uint64_t i = 1; i <= 6;
       ++i) {  // Frequent Directions: mean M~ <= merged <= mean + the merge's shrinkage
    EXPECT_GE(moment(*l[0], i), energy[i - 1] * (1 - 1e-9)) << "slot " << i;
    EXPECT_LE(moment(*l[0], i), energy[i - 1] + ridge + 1e-9) << "slot " << i;
  }
  EXPECT_LE(l[0]->weight_norm(), o.radius * (1 + 1e-12));
  // Learning goes on from the merged state, and the ranks stay equal.
  for (int r = 0; r < k; ++r) l[r]->learn(testing::example({{2, 1.0}, {5, -1.0}}, 1.0f));
  for (int r = 1; r < k; ++r) EXPECT_EQ(l[r]->weight(2), l[0]->weight(2));
  EXPECT_TRUE(std::isfinite(l[0]->weight(2)));
}

}  // namespace
}  // namespace lepus

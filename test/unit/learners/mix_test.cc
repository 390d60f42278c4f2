// mix: the properties of its rules that hold on every stream. The Bayes mixture under log loss (Cesa-Bianchi
// & Lugosi 2006, chapter 3) loses exactly −ln Σ_k e^{−L_k}/K, hence at most min_k L_k + ln K; Vovk's
// aggregating algorithm for square loss (Vovk 2001) at most min_k L_k + (b − a)²/2 ln K; one member is that
// member; Fixed Share (Herbster & Warmuth 1998) keeps every weight ≥ α/K and follows a switch of the best
// member. Save/load/resume is the registry-wide conformance suite's.
#include "learners/mix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/feature_space.h"
#include "formats/vw_text.h"
#include "lepus/errors.h"
#include "lepus/learner.h"
#include "lepus/loss.h"
#include "registry_cases.h"

namespace lepus {
namespace {

using registry_test::Quiet;

std::vector<Example> parse(const std::vector<std::string>& lines) {
  FeatureSpace space(FeatureSpaceOptions{});
  Quiet q;
  std::vector<Example> out;
  for (const auto& line : lines) {
    Example ex;
    parse_vw_line(line, ParseOptions{}, ex, q);
    space.expand(ex);
    out.push_back(std::move(ex));
  }
  return out;
}

// A random sparse stream: labels ±1 from a noisy linear rule over 30 features of mixed scale.
std::vector<Example> random_stream(uint32_t seed, size_t n, bool real_labels = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> w(30);
  for (auto& v : w) v = g(rng);
  std::vector<std::string> lines;
  for (size_t i = 0; i < n; ++i) {
    std::string feats;
    double s = 0.0;
    for (int k = 0; k < 6; ++k) {
      const int j = static_cast<int>(rng() % 30);
      const double x = g(rng) * (j % 3 == 0 ? 10.0 : 1.0);
      s += w[j] * x / (j % 3 == 0 ? 10.0 : 1.0);
      feats += " f" + std::to_string(j) + ":" + std::to_string(x);
    }
    std::string label;
    if (real_labels)
      label = std::to_string(std::clamp(0.3 * s + 0.2 * g(rng), -2.0, 2.0));
    else
      label = s + g(rng) > 0.0 ? "1" : "-1";
    lines.push_back(label + " |a" + feats);
  }
  return parse(lines);
}

OptionValues mix_options(const std::string& members, double share) {
  OptionValues o;
  o.set("mix", members, true);
  o.set("mix_share", std::to_string(share), share > 0.0);
  return o;
}

std::unique_ptr<MixLearner> make_mix(const std::string& members, double share, const Loss& loss,
                                     int bits = 18) {
  const OptionValues o = mix_options(members, share);
  return std::make_unique<MixLearner>(members, share, LearnerContext{o, loss, bits});
}

std::unique_ptr<Loss> loss_named(const std::string& name) {
  LossOptions lo;
  lo.name = name;
  return make_loss(lo);
}

// A logistic "sgd,scinol2" mixture at -b 10 after n examples of random_stream(seed), and its saved state.
std::unique_ptr<MixLearner> trained(const Loss& loss, uint32_t seed, size_t n, std::vector<uint8_t>& state) {
  auto m = make_mix("sgd,scinol2", 0.0, loss, 10);
  for (const auto& ex : random_stream(seed, n)) m->learn(ex);
  ModelWriter w;
  m->save(w);
  state.assign(w.bytes().begin(), w.bytes().end());
  return m;
}

double log_loss(double s, float y) {
  const double z = y * s;
  return z >= 0.0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z));
}

// The mixture's cumulative log loss equals −ln Σ_k e^{−L_k}/K (Bayes' rule telescopes) and so is at most
// min_k L_k + ln K, on several random streams; the members' losses are those of the same learners run alone.
TEST(Mix, LogLossWithinLnKOfTheBestMember) {
  const auto loss = loss_named("logistic");
  const std::vector<std::string> names{"sgd", "scinol2", "vw-pistol"};
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    SCOPED_TRACE(seed);
    const auto data = random_stream(seed, 1500);
    auto mix = make_mix("sgd,scinol2,vw-pistol", 0.0, *loss);
    std::vector<std::unique_ptr<Learner>> alone;
    std::vector<OptionValues> opts;
    for (const auto& n : names) opts.push_back(registry_test::defaults_of(*find_learner(n)));
    for (size_t k = 0; k < names.size(); ++k)
      alone.push_back(find_learner(names[k])->make(LearnerContext{opts[k], *loss, 18}));
    double total = 0.0;
    std::vector<double> member(names.size(), 0.0);
    for (const auto& ex : data) {
      const Prediction p = mix->learn(ex);
      total += log_loss(p.scored.value_or(p.value), ex.label);
      for (size_t k = 0; k < names.size(); ++k) {
        const Prediction q = alone[k]->learn(ex);
        member[k] += log_loss(std::clamp<double>(q.scored.value_or(q.value), -50.0, 50.0), ex.label);
      }
    }
    const double best = *std::min_element(member.begin(), member.end());
    double mixture_of = 0.0;
    for (size_t k = 0; k < names.size(); ++k) {
      EXPECT_NEAR(mix->member_loss(k), member[k], 1e-9 * member[k]) << names[k] << " must learn as if alone";
      mixture_of += std::exp(-(member[k] - best)) / names.size();
    }
    const double identity = best - std::log(mixture_of);
    const double tol = 1e-6 * data.size();  // the mixed score is reported as a float
    EXPECT_NEAR(total, identity, tol);
    EXPECT_LE(total, best + std::log(3.0) + tol);
    // The mixture's own account (the summary's regret line) agrees, and its bound is ln K.
    EXPECT_NEAR(mix->own_loss(), total, tol);
    EXPECT_NEAR(mix->regret_bound(), std::log(3.0), 1e-12);
    // Not vacuous: the members differ by more than ln K somewhere.
    EXPECT_GT(*std::max_element(member.begin(), member.end()) - best, std::log(3.0));
  }
}

// Square loss: the aggregating algorithm stays within (b − a)²/2 · ln K of the best member, with the range
// [a, b] the labels widen (the label widens it before each prediction).
TEST(Mix, SquareLossWithinTheAggregatingAlgorithmBound) {
  const auto loss = loss_named("squared");
  for (uint32_t seed : {7u, 8u, 9u}) {
    SCOPED_TRACE(seed);
    const auto data = random_stream(seed, 1500, /*real_labels=*/true);
    auto mix = make_mix("sgd,scinol2,vw-pistol", 0.0, *loss);
    double total = 0.0;
    for (const auto& ex : data) {
      const Prediction p = mix->learn(ex);
      const double e = ex.label - static_cast<double>(p.scored.value_or(p.value));
      total += e * e;
    }
    double best = mix->member_loss(0);
    for (size_t k = 1; k < mix->size(); ++k) best = std::min(best, mix->member_loss(k));
    const LabelRange r = mix->label_range();
    const double width = static_cast<double>(r.hi) - r.lo;
    EXPECT_LE(total, best + width * width / 2.0 * std::log(3.0) + 1e-5 * data.size());
    EXPECT_NEAR(mix->own_loss(), total, 1e-5 * data.size());
    EXPECT_NEAR(mix->regret_bound(), width * width / 2.0 * std::log(3.0), 1e-9);
  }
}

// Hinge loss (AdaHedge): the mixture's loss is within 2Δ of its best member's, Δ its mixability gap; with Fixed
// Share no bound is printed.
TEST(Mix, HingeLossWithinTwiceTheMixabilityGap) {
  const auto loss = loss_named("hinge");
  for (uint32_t seed : {10u, 11u, 12u}) {
    SCOPED_TRACE(seed);
    const auto data = random_stream(seed, 1500);
    auto mix = make_mix("sgd,scinol2,vw-pistol", 0.0, *loss);
    double total = 0.0;
    for (const auto& ex : data) {
      const Prediction p = mix->learn(ex);
      total += std::max(0.0, 1.0 - ex.label * static_cast<double>(p.scored.value_or(p.value)));
    }
    double best = mix->member_loss(0);
    for (size_t k = 1; k < mix->size(); ++k) best = std::min(best, mix->member_loss(k));
    EXPECT_NEAR(mix->own_loss(), total, 1e-5 * data.size());
    EXPECT_GT(mix->regret_bound(), 0.0);
    EXPECT_LE(total - best, mix->regret_bound() + 1e-5 * data.size());
    const auto lines = mix->summary_lines();
    EXPECT_NE(lines.back().find("(bound "), std::string::npos) << lines.back();
  }
  auto shared = make_mix("sgd,scinol2", 0.01, *loss);
  for (const auto& ex : random_stream(13, 100)) shared->learn(ex);
  EXPECT_TRUE(std::isinf(shared->regret_bound()));
  EXPECT_EQ(shared->summary_lines().back().find("(bound "), std::string::npos);
}

// One member: the mixture predicts as that member, for log and square loss.
TEST(Mix, OneMemberIsThatMember) {
  for (const char* loss_name : {"logistic", "squared"}) {
    for (const char* member : {"sgd", "scinol2", "vw-pistol"}) {
      SCOPED_TRACE(std::string(loss_name) + " " + member);
      const auto loss = loss_named(loss_name);
      const auto data = random_stream(11, 600, std::string(loss_name) == "squared");
      auto mix = make_mix(member, 0.0, *loss);
      const OptionValues o = registry_test::defaults_of(*find_learner(member));
      auto alone = find_learner(member)->make(LearnerContext{o, *loss, 18});
      for (const auto& ex : data) {
        const Prediction a = mix->learn(ex), b = alone->learn(ex);
        ASSERT_NEAR(a.value, b.value, 2e-6f * (1.0f + std::fabs(b.value)));
        ASSERT_NEAR(a.scored.value_or(a.value), b.scored.value_or(b.value),
                    2e-6f * (1.0f + std::fabs(b.value)));
      }
      EXPECT_EQ(mix->weights(), std::vector<double>{1.0});
    }
  }
}

// Two identical members predict as one of them (P-C5).
TEST(Mix, TwoIdenticalMembersAreOne) {
  const auto loss = loss_named("logistic");
  const auto data = random_stream(12, 500);
  auto two = make_mix("scinol2,scinol2", 0.0, *loss);
  auto one = make_mix("scinol2", 0.0, *loss);
  for (const auto& ex : data) ASSERT_NEAR(two->learn(ex).value, one->learn(ex).value, 1e-5);
}

// A stream whose concept flips halfway: y = sign(<w, x>) and then y = −sign(<w, x>). The best member changes
// (measured: scinol2 in the first half, 216.0 vs vw-pistol 260.0 and sgd 376.9; vw-pistol in the second,
// 463.8 vs scinol2 476.4 and sgd 1858.2). Fixed Share keeps every weight ≥ α/K and loses less than the plain
// mixture (measured 651.1 vs 693.5).
std::vector<Example> switching_stream(size_t n) {
  std::mt19937 rng(21);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<std::string> lines;
  for (size_t i = 0; i < n; ++i) {
    const double a = g(rng), b = g(rng);
    double s = 2.0 * a - b;
    if (i >= n / 2) s = -s;
    lines.push_back(std::string(s > 0 ? "1" : "-1") + " |x a:" + std::to_string(a) +
                    " b:" + std::to_string(b));
  }
  return parse(lines);
}

TEST(Mix, FixedShareKeepsAFloorAndTracksASwitch) {
  const auto loss = loss_named("logistic");
  const auto data = switching_stream(4000);
  const double alpha = 0.01;
  auto shared = make_mix("sgd,scinol2,vw-pistol", alpha, *loss);
  auto plain = make_mix("sgd,scinol2,vw-pistol", 0.0, *loss);
  double loss_shared = 0.0, loss_plain = 0.0;
  double min_weight = 1.0;
  std::vector<double> at_half;
  for (size_t i = 0; i < data.size(); ++i) {
    const Example& ex = data[i];
    if (i == data.size() / 2)
      for (size_t k = 0; k < plain->size(); ++k) at_half.push_back(plain->member_loss(k));
    const Prediction a = shared->learn(ex), b = plain->learn(ex);
    loss_shared += log_loss(a.scored.value_or(a.value), ex.label);
    loss_plain += log_loss(b.scored.value_or(b.value), ex.label);
    for (double w : shared->weights()) min_weight = std::min(min_weight, w);
    double sum = 0.0;
    for (double w : shared->weights()) sum += w;
    ASSERT_NEAR(sum, 1.0, 1e-12);
  }
  // The best member of the first half is not the best of the second.
  std::vector<double> second;
  for (size_t k = 0; k < plain->size(); ++k) second.push_back(plain->member_loss(k) - at_half[k]);
  const auto best_first = std::min_element(at_half.begin(), at_half.end()) - at_half.begin();
  const auto best_second = std::min_element(second.begin(), second.end()) - second.begin();
  EXPECT_NE(best_first, best_second);
  EXPECT_GE(min_weight, alpha / 3.0 * (1.0 - 1e-9));
  EXPECT_LT(loss_shared, loss_plain);
}

// α = 0 is the plain mixture.
TEST(Mix, ShareZeroIsThePlainMixture) {
  const auto loss = loss_named("logistic");
  const auto data = random_stream(13, 300);
  auto a = make_mix("sgd,scinol2", 0.0, *loss);
  auto b = make_mix("sgd,scinol2", 1e-300, *loss);  // the Fixed Share path with a share that rounds away
  for (const auto& ex : data) ASSERT_NEAR(a->learn(ex).value, b->learn(ex).value, 1e-5);
}

TEST(Mix, BadMemberListsAreConfigErrors) {
  const auto loss = loss_named("logistic");
  EXPECT_THROW(make_mix("", 0.0, *loss), ConfigError);
  EXPECT_THROW(make_mix("sgd,nope", 0.0, *loss), ConfigError);
  EXPECT_THROW(make_mix("sgd,mix", 0.0, *loss), ConfigError);
  EXPECT_THROW(make_mix("sgd", 1.0, *loss), ConfigError);
}

// The default list leaves out a member that does not accept the loss, or that its row keeps out of the default
// mixture under it (aioli: in for the logistic loss only, LearnerTraits::mixture_losses); a list the user names
// runs any member under a loss it accepts (aioli's squared rule), and keeps the error for one it refuses.
TEST(Mix, DefaultListLeavesOutMembersThatRefuseTheLoss) {
  for (const std::string name : {"squared", "logistic"}) {
    const auto loss = loss_named(name);
    const OptionValues o = mix_options(MixLearner::kDefaultMembers, 0.0);
    MixLearner mix(MixLearner::kDefaultMembers, 0.0, LearnerContext{o, *loss, 18}, true);
    EXPECT_EQ(mix.size(), name == "logistic" ? 5u : 4u) << name;
    bool aioli = false;
    for (size_t k = 0; k < mix.size(); ++k) aioli = aioli || mix.member_name(k).rfind("aioli", 0) == 0;
    EXPECT_EQ(aioli, name == "logistic") << name;
  }
  const auto loss = loss_named("squared");
  EXPECT_EQ(make_mix("sgd,aioli", 0.0, *loss)->size(), 2u);
  EXPECT_THROW(make_mix("sgd,aioli-kernel", 0.0, *loss), ConfigError);
}

// A model of default members loads into a mixture built from another default list (a model saved by an
// earlier version, or under --oaa, whose class mixtures have fewer members): it takes the model's members and
// predicts as the saved mixture did. A list the user named must match the model's; and a saved member that
// does not accept the run's loss is refused.
TEST(Mix, DefaultListsLoadTheModelsOwnMembers) {
  const auto loss = loss_named("squared");
  const OptionValues o = mix_options(MixLearner::kDefaultMembers, 0.0);
  const LearnerContext c{o, *loss, 18};
  MixLearner saved(MixLearner::kDefaultMembers, 0.0, c, true);
  const auto data = random_stream(4, 400, true);
  for (size_t i = 0; i < 300; ++i) saved.learn(data[i]);
  ModelWriter w;
  saved.save(w);
  MixLearner loaded(MixLearner::kClassMembers, 0.0, c, true);
  ASSERT_EQ(loaded.size(), 2u);
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  loaded.load(r);
  ASSERT_EQ(loaded.size(), saved.size());
  for (size_t k = 0; k < saved.size(); ++k) EXPECT_EQ(loaded.member_name(k), saved.member_name(k));
  for (size_t i = 300; i < data.size(); ++i) {
    const Prediction a = saved.learn(data[i]), b = loaded.learn(data[i]);
    ASSERT_EQ(a.raw, b.raw) << i;
    ASSERT_EQ(a.value, b.value) << i;
  }
  MixLearner named("sgd,scinol2", 0.0, c, false);
  ModelReader again(w.bytes().data(), w.bytes().size(), "mem");
  EXPECT_THROW(named.load(again), ModelFormatError);
  const auto logistic = loss_named("logistic");
  MixLearner with_aioli(MixLearner::kDefaultMembers, 0.0, LearnerContext{o, *logistic, 18}, true);
  ModelWriter wa;
  with_aioli.save(wa);
  MixLearner squared(MixLearner::kDefaultMembers, 0.0, c, true);
  ModelReader ra(wa.bytes().data(), wa.bytes().size(), "mem");
  EXPECT_THROW(squared.load(ra), ModelFormatError);
}

// A daemon's concurrent predictions (--daemon -t): the default mixture's predict() may run on several threads
// at once, and every answer is the one a single thread gets. Both shapes of its aioli member: the full matrix
// (30 features) and, past 64 features, its diagonal; scinol2 and aioli build their vectors per thread.
TEST(Mix, DefaultMembersPredictOnSeveralThreadsAtOnce) {
  const auto loss = loss_named("logistic");
  const OptionValues o = mix_options(MixLearner::kDefaultMembers, 0.0);
  std::vector<std::string> wide;
  std::mt19937 rng(5);
  for (int i = 0; i < 400; ++i) {
    std::string l = rng() % 2 ? "1 |a" : "-1 |a";
    for (int j = 0; j < 12; ++j)
      l += " w" + std::to_string(rng() % 500) + ":" + std::to_string(1 + rng() % 9);
    wide.push_back(l);
  }
  for (const auto& data : {random_stream(3, 800), parse(wide)}) {
    MixLearner mix(MixLearner::kDefaultMembers, 0.0, LearnerContext{o, *loss, 18}, true);
    for (size_t i = 0; i < data.size() / 2; ++i) mix.learn(data[i]);
    ASSERT_TRUE(mix.concurrent_predict());
    std::vector<Prediction> want;
    for (const Example& x : data) want.push_back(mix.predict(x));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (size_t t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 10; ++round)
          for (size_t j = 0; j < data.size(); ++j) {
            const size_t i = (j * (2 * t + 1) + t) % data.size();  // each thread in its own order
            const Prediction p = mix.predict(data[i]);
            if (p.raw != want[i].raw || p.value != want[i].value) ++wrong;
          }
      });
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0);
  }
}

// A state of the first format (tag "MIX1", without the mixture's own loss) still loads and predicts alike; the
// summary then leaves out the regret line it cannot compute.
TEST(Mix, EarlierFormatStatesLoad) {
  const auto loss = loss_named("logistic");
  std::vector<uint8_t> v1;
  auto a = trained(*loss, 15, 60, v1);
  // tag (4) | K (8) | c_max (8) | gap (8) | own loss (8, MIX2 on) | rounds (8) and K retired flags (MIX3) |
  // clipping range (8) | K (L_k, log-weight) (16 K) | an empty sample (8) and no V_k (1) (MIX4) | members
  const size_t sample_at = 46 + 8 + 32;
  ASSERT_EQ(v1[sample_at + 8], 0u);  // no sample was kept (make_mix: --mix_validation 0), so no V_k
  v1.erase(v1.begin() + sample_at, v1.begin() + sample_at + 9);
  const uint32_t tag3 = 0x3358494Du;
  std::memcpy(v1.data(), &tag3, 4);
  {
    auto c = make_mix("sgd,scinol2", 0.0, *loss, 10);
    ModelReader r(v1.data(), v1.size(), "mem");
    ASSERT_NO_THROW(c->load(r));
    for (const auto& ex : random_stream(16, 20)) EXPECT_EQ(a->predict(ex).value, c->predict(ex).value);
  }
  const uint32_t tag1 = 0x3158494Du;
  std::memcpy(v1.data(), &tag1, 4);
  v1.erase(v1.begin() + 28, v1.begin() + 28 + 8 + 8 + 2);
  auto b = make_mix("sgd,scinol2", 0.0, *loss, 10);
  ModelReader r(v1.data(), v1.size(), "mem");
  ASSERT_NO_THROW(b->load(r));
  EXPECT_TRUE(std::isnan(b->own_loss()));
  for (const auto& ex : random_stream(16, 20)) EXPECT_EQ(a->predict(ex).value, b->predict(ex).value);
  EXPECT_EQ(b->summary_lines().size(), 2u);
  EXPECT_EQ(a->summary_lines().size(), 3u);
}

// A member that hits a capacity limit (ftprl-full's cap on distinct features, a ConfigError from its learn())
// leaves the mixture instead of ending the run: from then on the mixture predicts as the members left (here sgd
// alone: the Bayes mixture of one member is that member), the summary says why and since when, and a saved
// model keeps the retirement. When the last member fails the error goes through.
TEST(Mix, AMemberPastItsCapRetiresAndTheRunGoesOn) {
  const auto loss = loss_named("logistic");
  // 40 examples of 10 fresh features each (and the constant): ftprl-full's default cap of 256 distinct
  // features falls at the 26th.
  std::vector<std::string> lines;
  for (int i = 0; i < 40; ++i) {
    std::string l = i % 2 ? "1 |a" : "-1 |a";
    for (int j = 0; j < 10; ++j)
      l += " f" + std::to_string(i * 10 + j) + ":" + std::to_string(0.1 * (1 + j % 7));
    lines.push_back(l);
  }
  const auto data = parse(lines);
  auto mix = make_mix("sgd,ftprl-full", 0.0, *loss);
  auto shared = make_mix("sgd,ftprl-full", 0.01, *loss);  // Fixed Share keeps a retired member at 0 too
  const OptionValues o = registry_test::defaults_of(*find_learner("sgd"));
  auto sgd = find_learner("sgd")->make(LearnerContext{o, *loss, 18});
  int after = 0;
  for (const auto& ex : data) {
    const Prediction p = mix->learn(ex), q = sgd->learn(ex), f = shared->learn(ex);
    if (!mix->retired(1).empty()) {
      ++after;
      EXPECT_NEAR(p.value, q.value, 1e-5);
      EXPECT_NEAR(f.value, q.value, 1e-5);
    }
  }
  EXPECT_EQ(shared->weights()[1], 0.0);
  EXPECT_EQ(mix->retired(0), "");
  EXPECT_EQ(mix->retired(1).rfind("at learning example 26: ", 0), 0u) << mix->retired(1);
  EXPECT_EQ(after, 15);
  EXPECT_EQ(mix->weights()[1], 0.0);
  const auto lines_out = mix->summary_lines();
  EXPECT_NE(lines_out[1].find("mix member ftprl-full: retired at learning example 26: "), std::string::npos)
      << lines_out[1];
  EXPECT_NE(lines_out.back().find("mix regret against its best member = "), std::string::npos);

  ModelWriter w;
  mix->save(w);
  auto back = make_mix("sgd,ftprl-full", 0.0, *loss);
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  ASSERT_NO_THROW(back->load(r));
  EXPECT_EQ(back->retired(1), mix->retired(1));
  for (const auto& ex : random_stream(17, 20)) EXPECT_EQ(back->learn(ex).value, mix->learn(ex).value);

  auto alone = make_mix("ftprl-full", 0.0, *loss);
  EXPECT_THROW(for (const auto& ex : data) alone->learn(ex), ConfigError);
}

// A model holding another member list is refused.
TEST(Mix, ModelOfOtherMembersIsRefused) {
  const auto loss = loss_named("logistic");
  std::vector<uint8_t> state;
  trained(*loss, 14, 50, state);
  auto b = make_mix("scinol2,sgd", 0.0, *loss, 10);
  ModelReader r(state.data(), state.size(), "mem");
  EXPECT_THROW(b->load(r), ModelFormatError);
  auto c = make_mix("sgd", 0.0, *loss, 10);
  ModelReader r2(state.data(), state.size(), "mem");
  EXPECT_THROW(c->load(r2), ModelFormatError);
}

// --mix_test_share α: a -t mixture predicts P(+1) = Σ_k ((1 − α) w_k + α/K) σ(s_k) with the trained weights w_k
// and members' scores s_k; training runs (and α = 0) keep w_k.
TEST(Mix, TestShareHedgesTheFinalWeightsTowardUniform) {
  const auto loss = loss_named("logistic");
  std::vector<uint8_t> state;
  auto trained_mix = trained(*loss, 21, 300, state);
  const std::vector<double> w = trained_mix->weights();
  ASSERT_GT(std::fabs(w[0] - w[1]), 0.05);  // the members differ, so the hedge shows
  const std::vector<Example> queries = random_stream(22, 20);
  for (double alpha : {0.0, 0.5, 1.0}) {
    const OptionValues o = mix_options("sgd,scinol2", 0.0);
    MixLearner t("sgd,scinol2", 0.0, LearnerContext{o, *loss, 10, true});
    t.set_test_share(alpha);
    ModelReader r(state.data(), state.size(), "mem");
    t.load(r);
    for (const Example& q : queries) {
      double p = 0.0;
      for (size_t k = 0; k < 2; ++k) {
        const double s = t.member(k).predict(q).value;
        p += ((1.0 - alpha) * w[k] + alpha / 2.0) / (1.0 + std::exp(-s));
      }
      const double want = std::log(p) - std::log1p(-p);
      EXPECT_NEAR(t.predict(q).value, want, 1e-5 * std::max(1.0, std::fabs(want))) << alpha;
      if (alpha == 0.0) {
        EXPECT_EQ(t.predict(q).value, trained_mix->predict(q).value);
      }
    }
  }
  auto learning = make_mix("sgd,scinol2", 0.0, *loss, 10);  // not -t: the hedge is never applied
  learning->set_test_share(1.0);
  ModelReader r(state.data(), state.size(), "mem");
  learning->load(r);
  for (const Example& q : queries) EXPECT_EQ(learning->predict(q).value, trained_mix->predict(q).value);
  EXPECT_THROW(learning->set_test_share(1.5), ConfigError);
}

// Blocks (the members in parallel over a block, then the mixture in order) answer every item as learn() and
// predict() one at a time do, and leave the same state: with predict-only items (a holdout) and unlabelled
// examples among them, and a member (ftprl-full, cap 256 distinct features) that retires in the middle of a block.
TEST(Mix, BlocksAnswerAsOneExampleAtATime) {
  const auto loss = loss_named("logistic");
  std::vector<std::string> lines;
  for (int i = 0; i < 60; ++i) {
    std::string l = i % 7 == 3 ? "|a" : (i % 2 ? "1 |a" : "-1 |a");
    for (int j = 0; j < 10; ++j)
      l += " f" + std::to_string(i * 10 + j) + ":" + std::to_string(0.1 * (1 + j % 7));
    lines.push_back(l);
  }
  const auto data = parse(lines);
  for (double share : {0.0, 0.01}) {
    auto one = make_mix("sgd,ftprl-full,scinol2", share, *loss);
    auto block = make_mix("sgd,ftprl-full,scinol2", share, *loss);
    std::vector<Prediction> want;
    std::vector<Learner::BlockItem> items;
    for (size_t i = 0; i < data.size(); ++i) {
      const bool learn = i % 5 != 4;
      want.push_back(learn ? one->learn(data[i]) : one->predict(data[i]));
      items.push_back({&data[i], learn, {}});
    }
    for (size_t at = 0; at < items.size(); at += 17)  // blocks of 17: the retirement (26th) falls inside one
      block->learn_block(std::span(items).subspan(at, std::min<size_t>(17, items.size() - at)));
    for (size_t i = 0; i < items.size(); ++i) {
      EXPECT_EQ(items[i].out.raw, want[i].raw) << i;
      EXPECT_EQ(items[i].out.value, want[i].value) << i;
    }
    EXPECT_EQ(block->retired(1), one->retired(1));
    EXPECT_FALSE(one->retired(1).empty());
    ModelWriter a, b;
    one->save(a);
    block->save(b);
    EXPECT_EQ(a.bytes(), b.bytes());
  }
}

// --mix_prune τ: at the check rounds (1024, 2048, ...) a member whose log-weight is below −τ retires unless its
// model predicts the sample best. The set pruned at round 1024 is the one a twin without pruning shows at that
// round (its weights and sample losses), every prediction up to it is the twin's, and blocks (split at the check
// rounds) answer as one example at a time. With Fixed Share, or τ = 0, nothing is pruned.
TEST(Mix, PrunesMembersFarBehindButNotTheSampleBest) {
  const auto loss = loss_named("logistic");
  const std::vector<Example> data = random_stream(41, 2100);
  const std::string members = "sgd,scinol2,vw-pistol,vw-coin,vw-ftrl";
  auto pruned = make_mix(members, 0.0, *loss, 12);
  auto twin = make_mix(members, 0.0, *loss, 12);
  pruned->set_validation_size(64);
  twin->set_validation_size(64);
  pruned->set_prune(3.0);
  for (size_t i = 0; i < MixLearner::kFirstCheck; ++i) {
    const Prediction a = pruned->learn(data[i]), b = twin->learn(data[i]);
    ASSERT_EQ(a.value, b.value) << i;
  }
  const std::vector<double> w = twin->weights(), v = twin->validation_losses();
  const double best_v = *std::min_element(v.begin(), v.end());
  size_t retired = 0;
  for (size_t k = 0; k < twin->size(); ++k) {
    const bool want = w[k] < std::exp(-3.0) && v[k] > best_v;
    EXPECT_EQ(!pruned->retired(k).empty(), want)
        << twin->member_name(k) << " weight " << w[k] << " V " << v[k];
    if (want) {
      EXPECT_NE(pruned->retired(k).find("at learning example 1024: pruned"), std::string::npos);
    }
    retired += want;
  }
  EXPECT_GE(retired, 1u);
  EXPECT_LT(retired, twin->size());

  // The same stream in blocks of 300, holdout items included: the check rounds fall inside blocks.
  auto block = make_mix(members, 0.0, *loss, 12);
  auto one = make_mix(members, 0.0, *loss, 12);
  for (MixLearner* m : {block.get(), one.get()}) {
    m->set_validation_size(64);
    m->set_prune(3.0);
  }
  std::vector<Learner::BlockItem> items;
  std::vector<Prediction> want;
  for (size_t i = 0; i < data.size(); ++i) {
    const bool learn = i % 9 != 5;
    want.push_back(learn ? one->learn(data[i]) : one->predict(data[i]));
    items.push_back({&data[i], learn, {}});
  }
  for (size_t at = 0; at < items.size(); at += 300)
    block->learn_block(std::span(items).subspan(at, std::min<size_t>(300, items.size() - at)));
  for (size_t i = 0; i < items.size(); ++i) ASSERT_EQ(items[i].out.value, want[i].value) << i;
  ModelWriter a, b;
  one->save(a);
  block->save(b);
  EXPECT_EQ(a.bytes(), b.bytes());

  for (double share : {0.0, 0.01}) {
    auto kept = make_mix(members, share, *loss, 12);
    kept->set_validation_size(64);
    kept->set_prune(share > 0.0 ? 3.0 : 0.0);
    for (const Example& x : data) kept->learn(x);
    for (size_t k = 0; k < kept->size(); ++k) EXPECT_TRUE(kept->retired(k).empty()) << share;
  }
}

// --mix_validation R: the mixture keeps a uniform sample of the examples it learned from (all of them while
// there are at most R), a saved model holds each member's loss on it at its final state, V_k, and a -t run
// predicts with the Bayes weights from V_k, hedged by --mix_test_share: P(+1) = Σ_k ((1 − α) w_k + α/K) σ(s_k)
// with w_k ∝ e^{−V_k}. Training runs keep the online weights.
TEST(Mix, ValidationWeighsTheFinalModelsOnTheSample) {
  const auto loss = loss_named("logistic");
  const std::vector<Example> data = random_stream(31, 300);
  auto m = make_mix("sgd,scinol2", 0.0, *loss, 10);
  m->set_validation_size(1000);
  for (const auto& ex : data) m->learn(ex);
  ASSERT_EQ(m->sample_size(), data.size());
  std::vector<double> v(2, 0.0);
  for (const auto& ex : data)
    for (size_t k = 0; k < 2; ++k) v[k] += log_loss(m->member(k).predict(ex).value, ex.label);
  const std::vector<double> got = m->validation_losses();
  ASSERT_EQ(got.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_NEAR(got[k], v[k], 1e-4 * v[k]) << k;
  ModelWriter w;
  m->save(w);
  const std::vector<Example> queries = random_stream(32, 20);
  for (double alpha : {0.0, 0.3}) {
    const OptionValues o = mix_options("sgd,scinol2", 0.0);
    MixLearner t("sgd,scinol2", 0.0, LearnerContext{o, *loss, 10, true});
    t.set_validation_size(1000);
    t.set_test_share(alpha);
    ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
    t.load(r);
    const double w0 = 1.0 / (1.0 + std::exp(got[0] - got[1]));  // e^{−V_0} / (e^{−V_0} + e^{−V_1})
    for (const Example& q : queries) {
      double p = 0.0;
      for (size_t k = 0; k < 2; ++k) {
        const double wk = k == 0 ? w0 : 1.0 - w0;
        p += ((1.0 - alpha) * wk + alpha / 2.0) / (1.0 + std::exp(-t.member(k).predict(q).value));
      }
      const double want = std::log(p) - std::log1p(-p);
      EXPECT_NEAR(t.predict(q).value, want, 1e-5 * std::max(1.0, std::fabs(want))) << alpha;
    }
  }
  auto plain = make_mix("sgd,scinol2", 0.0, *loss, 10);  // training: the online weights, whatever the sample
  for (const auto& ex : data) plain->learn(ex);
  for (const Example& q : queries) EXPECT_EQ(m->predict(q).value, plain->predict(q).value);
}

// Past R examples the sample is R of them, drawn uniformly over the stream (algorithm R): their positions
// spread over the whole stream, the first and the last quarter alike. A predict-only model keeps V_k, not the
// sample.
TEST(Mix, SampleIsUniformOverTheStream) {
  const auto loss = loss_named("logistic");
  std::vector<std::string> lines;
  for (int i = 0; i < 4000; ++i)
    lines.push_back(std::string(i % 2 ? "1" : "-1") + " |a p:" + std::to_string(i));
  const std::vector<Example> data = parse(lines);
  auto m = make_mix("sgd", 0.0, *loss, 12);
  m->set_validation_size(200);
  for (const auto& ex : data) m->learn(ex);
  ASSERT_EQ(m->sample_size(), 200u);
  std::vector<int> quarter(4, 0);
  double mean = 0.0;
  for (const Example& x : m->sample()) {
    ASSERT_EQ(x.features.size(), 2u);  // p and the constant
    const double at = x.features[0].value;
    mean += at / 200.0;
    ++quarter[std::min(3, static_cast<int>(at / 1000.0))];
  }
  EXPECT_NEAR(mean, 2000.0, 250.0);        // sd of the mean: 4000 / sqrt(12 * 200) = 82
  for (int q : quarter) EXPECT_GT(q, 25);  // 50 expected each
  ModelWriter full, lean;
  m->save(full);
  m->save_predict_only(lean);
  EXPECT_GT(full.bytes().size(), lean.bytes().size() + 200 * 40);
  const OptionValues o = mix_options("sgd", 0.0);
  MixLearner t("sgd", 0.0, LearnerContext{o, *loss, 12, true});
  ModelReader r(lean.bytes().data(), lean.bytes().size(), "mem");
  t.load_predict_only(r);
  EXPECT_EQ(t.sample_size(), 0u);
  EXPECT_EQ(t.validation_losses(), m->validation_losses());
}

}  // namespace
}  // namespace lepus

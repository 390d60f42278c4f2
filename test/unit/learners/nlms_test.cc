// nlms: the oracle of its update on the three-round sequence S3 (x = (1,0), (0.6,0.8), (0,1); y = 1, 2, -1;
// mu = 0.5, eps = 0.1; computed by hand in double precision), and its properties: mu = 1, eps = 0 fits each
// example exactly; with eps = 0 predictions do not move when x is scaled; an importance weight k is k repetitions.
#include "learners/nlms.h"

#include <gtest/gtest.h>

#include <cmath>

#include "lepus/errors.h"

namespace lepus {
namespace {

Example example(std::vector<std::pair<uint64_t, float>> f, float y, float weight = 1.0f) {
  Example ex;
  for (const auto& [i, v] : f) ex.features.push_back(Feature{i, v});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  ex.weight = weight;
  return ex;
}

std::vector<Example> s3() {
  return {example({{0, 1.0f}}, 1.0f), example({{0, 0.6f}, {1, 0.8f}}, 2.0f), example({{1, 1.0f}}, -1.0f)};
}

NlmsOptions opts(double mu, std::optional<double> eps) {
  NlmsOptions o;
  o.mu = mu;
  o.eps = eps;
  return o;
}

TEST(Nlms, OracleS3) {
  NlmsLearner l(opts(0.5, 0.1), 4);
  const double yhat[] = {0.0, 0.272727, 0.628099};
  const double loss[] = {1.0, 3.983471, 6.634178};
  const double w[][2] = {{0.454545, 0.0}, {0.925620, 0.628099}, {0.925620, -0.111946}};
  double total = 0.0;
  for (int t = 0; t < 3; ++t) {
    const Example ex = s3()[t];
    const Prediction p = l.learn(ex);
    EXPECT_NEAR(p.value, yhat[t], 1e-6) << t;
    total += (p.value - ex.label) * (p.value - ex.label);
    EXPECT_NEAR(total, loss[t], 1e-5) << t;
    EXPECT_NEAR(l.weight(0), w[t][0], 1e-6) << t;
    EXPECT_NEAR(l.weight(1), w[t][1], 1e-6) << t;
  }
}

TEST(Nlms, MuOneEpsZeroFitsEachExample) {
  NlmsLearner l(opts(1.0, 0.0), 6);
  for (const Example& ex : s3()) {
    l.learn(ex);
    EXPECT_NEAR(l.predict(ex).value, ex.label, 1e-6);
  }
}

TEST(Nlms, ScalingXLeavesPredictionsUnchangedWhenEpsIsZero) {
  NlmsLearner a(opts(0.7, 0.0), 6), b(opts(0.7, 0.0), 6);
  for (int round = 0; round < 3; ++round)
    for (Example ex : s3()) {
      const Prediction pa = a.learn(ex);
      for (auto& f : ex.features) f.value *= 1000.0f;
      const Prediction pb = b.learn(ex);
      EXPECT_NEAR(pa.value, pb.value, 1e-4);
    }
}

TEST(Nlms, ImportanceWeightIsRepetitionWhenEpsIsZero) {
  NlmsLearner once(opts(0.4, 0.0), 6), twice(opts(0.4, 0.0), 6);
  for (const Example& ex : s3()) {
    Example heavy = ex;
    heavy.weight = 2.0f;
    once.learn(heavy);
    twice.learn(ex);
    twice.learn(ex);
  }
  for (uint64_t i = 0; i < 2; ++i) EXPECT_NEAR(once.weight(i), twice.weight(i), 1e-12);
}

TEST(Nlms, DefaultEpsIsEstimatedOnlineAndSaved) {
  NlmsLearner l(opts(1.0, std::nullopt), 6);
  for (const Example& ex : s3()) l.learn(ex);
  EXPECT_NEAR(l.epsilon(), 1e-6 * (1.0 + 1.0 + 1.0) / 3.0,
              1e-12);  // (0.6f, 0.8f) has norm 1 to float precision
  ModelWriter w;
  l.save(w);
  NlmsLearner m(opts(1.0, 5.0), 6);
  ModelReader r(w.bytes().data(), w.bytes().size(), "mem");
  m.load(r);
  EXPECT_EQ(m.epsilon(), l.epsilon());
}

TEST(Nlms, OptionsAreChecked) {
  for (const char* mu : {"0", "2", "-1", "nan"}) {
    OptionValues v;
    v.set("nlms_mu", mu, true);
    EXPECT_THROW(NlmsOptions::from(v), ConfigError) << mu;
  }
  OptionValues v;
  v.set("nlms_eps", "-1", true);
  EXPECT_THROW(NlmsOptions::from(v), ConfigError);
}

}  // namespace
}  // namespace lepus

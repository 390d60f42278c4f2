// Kernel learners under --oaa and --csoaa with --budget (Learner::share_points): one learner holds the K
// problems over one set of landmarks; without --budget, one instance per class reads each example's kernel
// values from one cache (kernels::RowCache). Checked: each kernel value is computed once per example, not
// once per class (counted by kernels::evaluations()); with a matrix per class every class's scores equal
// those of a learner of its own, to the bit; the shared matrices of kons (--kons_class_matrix shared) and
// aioli-kernel (--aioli_class_matrix shared) are their own primal oracles, multiclass ONS and multiclass AIOLI
// with one A written out; the K-problem state saves, loads and resumes exactly.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "labeled_example.h"
#include "learners/aioli.h"
#include "learners/kons.h"
#include "learners/multiclass.h"
#include "lepus/loss.h"
#include "registry_cases.h"

namespace lepus {
namespace {

constexpr uint32_t kClasses = 4;

// Hides share_points: the multiclass wrapper then makes one instance per class, as before it existed.
class OwnInstances final : public Learner, public WarmsUp {
 public:
  explicit OwnInstances(std::unique_ptr<Learner> l) : l_(std::move(l)) {}
  Prediction predict(const Example& x) const override { return l_->predict(x); }
  Prediction learn(const Example& x) override { return l_->learn(x); }
  void save(ModelWriter& out) const override { l_->save(out); }
  void load(ModelReader& in) override { l_->load(in); }
  std::string_view name() const override { return l_->name(); }
  void write_readable(std::ostream& out) const override { l_->write_readable(out); }
  uint64_t warmup_wanted() const override { return warmup_wanted_by(*l_); }
  void warmup(std::span<const Example> prefix) override { warm_up(*l_, prefix); }

 private:
  std::unique_ptr<Learner> l_;
};

// Examples of K classes: a Gaussian blob per class in 6 dimensions (dense, as images are), the label in
// klass.
std::vector<Example> blobs(size_t n, uint32_t classes, uint64_t seed, bool cost_sensitive = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Example> out;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t klass = static_cast<uint32_t>(rng() % classes);
    std::vector<std::pair<uint64_t, double>> f;
    for (uint64_t j = 0; j < 6; ++j) f.push_back({j, 0.7 * g(rng) + (j % classes == klass ? 1.5 : 0.0)});
    Example ex = testing::example(f, 0.0f, i % 7 == 3 ? 2.0f : 1.0f);
    if (cost_sensitive) {
      ex.label_kind = LabelKind::kCostSensitive;
      for (uint32_t c = 1; c <= classes; ++c)
        ex.classes.push_back({c, c == klass + 1 ? 0.0f : 1.0f + 0.5f * c});
      ex.weight = 1.0f;
    } else {
      ex.label_kind = LabelKind::kMulticlass;
      ex.classes.push_back({klass + 1, 0.0f});
    }
    out.push_back(std::move(ex));
  }
  return out;
}

struct Config {
  std::string learner = "kons";
  std::string loss = "logistic";
  std::vector<std::pair<std::string, std::string>> options = {{"budget", "20"}};
};

class Classes {
 public:
  explicit Classes(const Config& s) : row_(find_learner(s.learner)), loss_(make_loss(LossOptions{s.loss})) {
    opts_ = registry_test::defaults_of(*row_);
    for (const auto& [k, v] : s.options) opts_.set(k, v, true);
  }
  std::unique_ptr<Learner> base() const { return row_->make(LearnerContext{opts_, *loss_, 10, false, 5}); }
  std::unique_ptr<MulticlassLearner> make(uint32_t k, bool csoaa, bool own_instances = false) const {
    MulticlassOptions o;
    o.kind = csoaa ? MulticlassOptions::Kind::kCsoaa : MulticlassOptions::Kind::kOaa;
    o.classes = k;
    return std::make_unique<MulticlassLearner>(o, [this, own_instances]() -> std::unique_ptr<Learner> {
      if (own_instances) return std::make_unique<OwnInstances>(base());
      return base();
    });
  }

 private:
  const LearnerRow* row_;
  std::unique_ptr<Loss> loss_;
  OptionValues opts_;
};

std::vector<uint8_t> state(const Learner& l) {
  ModelWriter w;
  l.save(w);
  return w.bytes();
}

// The options of a kernel learner under --budget B whose K problems are independent (kons and aioli-kernel:
// a matrix per class).
Config independent(const std::string& learner, const std::string& loss, const std::string& budget) {
  Config s{learner, loss, {{"budget", budget}}};
  if (learner.ends_with("kons")) s.options.push_back({"kons_class_matrix", "per_class"});
  if (learner == "aioli-kernel") s.options.push_back({"aioli_class_matrix", "per_class"});
  return s;
}

const std::vector<std::string>& kernel_learners() {
  static const std::vector<std::string> names = {"kons", "sketched-kons", "aioli-kernel", "kwemm", "klaser"};
  return names;
}

// Independent problems (kons with a matrix per class, and every other kernel learner): the K problems of one
// learner score as K learners of their own, to the bit (oaa and csoaa, every loss each accepts).
TEST(KernelClasses, IndependentProblemsScoreAsOwnLearners) {
  for (const std::string& learner : kernel_learners())
    for (const char* loss : {"logistic", "squared"})
      for (const bool csoaa : {false, true}) {
        if (!find_learner(learner)->accepts_loss(loss) || (csoaa && std::string(loss) == "logistic"))
          continue;
        SCOPED_TRACE(learner + " " + loss + (csoaa ? " csoaa" : " oaa"));
        const Classes c(independent(learner, loss, "20"));
        auto one = c.make(kClasses, csoaa);
        auto own = c.make(kClasses, csoaa, true);
        ASSERT_TRUE(one->points_shared());
        ASSERT_FALSE(own->points_shared());
        for (const Example& x : blobs(150, kClasses, 3, csoaa)) {
          one->learn(x);
          own->learn(x);
          ASSERT_EQ(one->class_outcome()->scores, own->class_outcome()->scores);
        }
        for (const Example& x : blobs(30, kClasses, 4, csoaa)) {
          one->predict(x);
          own->predict(x);
          ASSERT_EQ(one->class_outcome()->scores, own->class_outcome()->scores);
        }
      }
}

// Each kernel value once per example: ten classes evaluate exactly what one binary learner on the same rows
// does (the landmarks depend on the points alone), and one instance per class evaluates ten times as much.
TEST(KernelClasses, KernelValuesOncePerExample) {
  constexpr uint32_t kTen = 10;
  const auto data = blobs(200, kTen, 9);
  auto count = [&](auto&& run) {
    const uint64_t before = kernels::evaluations();
    run();
    return kernels::evaluations() - before;
  };
  std::vector<Config> setups = {{"kons", "logistic", {{"budget", "30"}}}};
  for (const std::string& learner : kernel_learners())
    setups.push_back(independent(learner, find_learner(learner)->traits.losses.front(), "30"));
  for (const Config& s : setups) {
    SCOPED_TRACE(s.learner + (s.options.size() > 1 ? " per class" : ""));
    const Classes c(s);
    const uint64_t binary = count([&] {
      auto l = c.base();
      for (Example x : data) {
        x.label_kind = LabelKind::kScalar;
        x.label = x.classes.front().klass == 1 ? 1.0f : -1.0f;
        x.classes.clear();
        l->learn(x);
      }
    });
    const uint64_t shared = count([&] {
      auto l = c.make(kTen, false);
      for (const Example& x : data) l->learn(x);
    });
    const uint64_t own = count([&] {
      auto l = c.make(kTen, false, true);
      for (const Example& x : data) l->learn(x);
    });
    EXPECT_GT(binary, 200u * 20u);  // the landmarks fill early: about 30 values per example
    EXPECT_EQ(shared, binary);
    EXPECT_EQ(own, kTen * binary);
  }
}

// Exact kernel learners (no --budget): one instance per class, the K instances reading each example's kernel
// values from one cache (kernels::RowCache). Ten classes evaluate what one binary learner on the same rows
// does (every class stores every point; sketched-kons's dictionaries read the stored points' values, so
// fewer), one instance per class without the cache ten times as much, and the scores and states are those of
// the instances without the cache, to the bit (oaa, and csoaa under the squared loss).
TEST(KernelClasses, ExactLearnersShareKernelValues) {
  constexpr uint32_t kTen = 10;
  const auto data = blobs(90, kTen, 13);
  auto count = [&](auto&& run) {
    const uint64_t before = kernels::evaluations();
    run();
    return kernels::evaluations() - before;
  };
  for (const std::string& learner : kernel_learners()) {
    const std::string loss = find_learner(learner)->traits.losses.front();
    SCOPED_TRACE(learner);
    const Classes c({learner, loss, {}});
    auto binary = c.make(1, false);
    auto one = c.make(kTen, false);
    auto own = c.make(kTen, false, true);
    ASSERT_TRUE(one->kernel_rows_shared());
    ASSERT_FALSE(own->kernel_rows_shared());
    uint64_t total = 0, separate = 0;
    for (size_t t = 0; t < data.size(); ++t) {
      Example x = data[t];
      x.classes.front().klass = 1;
      const uint64_t alone = count([&] { binary->learn(x); });
      const uint64_t shared = count([&] { one->learn(data[t]); });
      separate += count([&] { own->learn(data[t]); });
      ASSERT_EQ(one->class_outcome()->scores, own->class_outcome()->scores);
      if (learner == "sketched-kons")
        ASSERT_LE(shared, alone) << t;
      else
        ASSERT_EQ(shared, alone) << t;  // every point stored: t values at example t (one class's count)
      total += alone;
    }
    EXPECT_GT(total, 90u * 80u / 2u);
    EXPECT_GE(separate, kTen * (total - 90u));
    EXPECT_EQ(state(*one), state(*own));
  }
}

TEST(KernelClasses, ExactCsoaaSharesKernelValuesWithSameResults) {
  const Classes c({"kons", "squared", {}});
  auto one = c.make(kClasses, true);
  auto own = c.make(kClasses, true, true);
  ASSERT_TRUE(one->kernel_rows_shared());
  for (const Example& x : blobs(80, kClasses, 14, true)) {
    one->learn(x);
    own->learn(x);
    ASSERT_EQ(one->class_outcome()->scores, own->class_outcome()->scores);
  }
  EXPECT_EQ(state(*one), state(*own));
}

// The K-problem state saves, loads and resumes exactly, and a model of the other class matrix is refused.
TEST(KernelClasses, SaveLoadResume) {
  for (const std::string learner : {"kons", "aioli-kernel"})
    for (const std::string matrix : {"shared", "per_class"}) {
      SCOPED_TRACE(learner + " " + matrix);
      const std::string option = learner == "kons" ? "kons_class_matrix" : "aioli_class_matrix";
      const Classes c({learner, "logistic", {{"budget", "25"}, {option, matrix}}});
      const auto data = blobs(120, kClasses, 12);
      auto one = c.make(kClasses, false);
      auto first = c.make(kClasses, false);
      for (size_t i = 0; i < 60; ++i) {
        one->learn(data[i]);
        first->learn(data[i]);
      }
      const auto bytes = state(*first);
      auto resumed = c.make(kClasses, false);
      ModelReader r(bytes.data(), bytes.size(), "model");
      resumed->load(r);
      EXPECT_EQ(r.remaining(), 0u);
      for (size_t i = 60; i < data.size(); ++i) {
        one->learn(data[i]);
        resumed->learn(data[i]);
        ASSERT_EQ(one->class_outcome()->scores, resumed->class_outcome()->scores) << i;
      }
      EXPECT_EQ(state(*one), state(*resumed));
      const Classes other(
          {learner, "logistic", {{"budget", "25"}, {option, matrix == "shared" ? "per_class" : "shared"}}});
      ModelReader again(bytes.data(), bytes.size(), "model");
      EXPECT_THROW(other.make(kClasses, false)->load(again), ModelFormatError);
    }
}

// --kons_class_matrix shared against its oracle, multiclass ONS with one matrix written in the primal: with
// the linear kernel and landmarks spanning the data (3 dimensions, budget 3, the axes first), csoaa's raw
// score of every class is ỹ_k below, the costs y_k regressed under the squared loss:
//     v = A⁻¹x, τ̃ = xᵀv, per class k: ŷ_k = clip(ỹ_k), ġ_k = ℓ'(ŷ_k, y_k), γ = max_k η ġ_k²,
//     u_k <- u_k - ((ỹ_k - ŷ_k)/τ̃ + ġ_k/(1 + γτ̃)) v,   A⁻¹ <- A⁻¹ - γ/(1 + γτ̃) v vᵀ.
TEST(KernelClasses, SharedMatrixIsPrimalMulticlassOns) {
  constexpr double kAlpha = 0.7, kEta = 0.4, kClip = 0.25;
  const Classes c({"kons",
                   "squared",
                   {{"budget", "3"},
                    {"kernel", "linear"},
                    {"kons_alpha", "0.7"},
                    {"kons_eta", "0.4"},
                    {"kons_C", "0.25"}}});
  const auto loss = make_loss(LossOptions{"squared"});
  auto l = c.make(kClasses, true);
  std::mt19937_64 rng(21);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Eigen::Vector3d> xs = {Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(),
                                     Eigen::Vector3d::UnitZ()};
  for (int t = 0; t < 80; ++t) xs.emplace_back(0.8 * g(rng), 0.8 * g(rng), 0.8 * g(rng));
  Eigen::Matrix3d ainv = Eigen::Matrix3d::Identity() / kAlpha;
  std::vector<Eigen::Vector3d> u(kClasses, Eigen::Vector3d::Zero());
  int clipped = 0;
  for (size_t t = 0; t < xs.size(); ++t) {
    Example ex = testing::example({{0, xs[t](0)}, {1, xs[t](1)}, {2, xs[t](2)}}, 0.0f);
    const Eigen::Vector3d x(ex.features[0].value, ex.features[1].value, ex.features[2].value);
    std::vector<float> cost(kClasses);
    ex.label_kind = LabelKind::kCostSensitive;
    for (uint32_t k = 0; k < kClasses; ++k) {
      cost[k] = static_cast<float>(std::fabs(1.5 * g(rng)));
      ex.classes.push_back({k + 1, cost[k]});
    }
    l->learn(ex);
    const Eigen::Vector3d v = ainv * x;
    const double tau = x.dot(v);
    std::vector<double> yt(kClasses), yh(kClasses), gd(kClasses);
    double gamma = 0.0;
    for (uint32_t k = 0; k < kClasses; ++k) {
      yt[k] = u[k].dot(x);
      yh[k] = std::clamp(yt[k], -kClip, kClip);
      clipped += yt[k] != yh[k];
      gd[k] = loss->first_derivative(static_cast<float>(yh[k]), cost[k], LabelRange{});
      gamma = std::max(gamma, kEta * gd[k] * gd[k]);
      EXPECT_NEAR(l->class_outcome()->scores[k], yt[k], 1e-6 * std::max(1.0, std::fabs(yt[k])))
          << "round " << t << " class " << k;
    }
    const double den = 1.0 + gamma * tau;
    for (uint32_t k = 0; k < kClasses; ++k) u[k] -= ((yt[k] - yh[k]) / tau + gd[k] / den) * v;
    ainv -= (gamma / den) * v * v.transpose();
  }
  EXPECT_GT(clipped, 20);
}

// --aioli_class_matrix shared against its oracle, multiclass AIOLI with one matrix written in the primal: with
// the linear kernel and landmarks spanning the data (3 dimensions, budget 3, the axes first), oaa's raw score of
// every class is ŷ_k below (y_k = +1 for the example's class, -1 for the others; R the largest ‖x‖ so far, this
// example's included):
//     s = xᵀA⁻¹x, per class k: c_k = xᵀA⁻¹b_k, ŷ_k = root(s, c_k), κ_k and β_k at ŷ_k (as a float),
//     A += (max_k κ_k) x xᵀ,   b_k += β_k x.
// A per-class matrix (A_k += κ_k x xᵀ) fails it: the classes' κ differ.
TEST(KernelClasses, SharedMatrixIsPrimalMulticlassAioli) {
  constexpr double kB = 2.0, kLambda = 0.5;
  const Classes c({"aioli-kernel",
                   "logistic",
                   {{"budget", "3"}, {"kernel", "linear"}, {"aioli_B", "2"}, {"aioli_lambda", "0.5"}}});
  auto l = c.make(kClasses, false);
  ASSERT_TRUE(l->points_shared());
  std::mt19937_64 rng(23);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Eigen::Vector3d> xs = {Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(),
                                     Eigen::Vector3d::UnitZ()};
  for (int t = 0; t < 80; ++t) xs.emplace_back(0.9 * g(rng), 0.9 * g(rng), 0.9 * g(rng));
  Eigen::Matrix3d a = kLambda * Eigen::Matrix3d::Identity();
  std::vector<Eigen::Vector3d> b(kClasses, Eigen::Vector3d::Zero());
  double r = 0.0, kappa_spread = 0.0;
  for (size_t t = 0; t < xs.size(); ++t) {
    Example ex = testing::example({{0, xs[t](0)}, {1, xs[t](1)}, {2, xs[t](2)}}, 0.0f);
    const Eigen::Vector3d x(ex.features[0].value, ex.features[1].value, ex.features[2].value);
    const uint32_t klass = static_cast<uint32_t>(rng() % kClasses);
    ex.label_kind = LabelKind::kMulticlass;
    ex.classes.push_back({klass + 1, 0.0f});
    l->learn(ex);
    const Eigen::Vector3d u = a.ldlt().solve(x);
    const double s = x.dot(u);
    r = std::max(r, x.norm());
    double kappa = 0.0, kappa_min = 1.0;
    std::vector<double> beta(kClasses);
    for (uint32_t k = 0; k < kClasses; ++k) {
      const double yhat = aioli_root(s, b[k].dot(u));
      EXPECT_NEAR(l->class_outcome()->scores[k], yhat, 1e-6 * std::max(1.0, std::fabs(yhat)))
          << "round " << t << " class " << k;
      const double y = k == klass ? 1.0 : -1.0;
      const AioliStep st = aioli_step(y * static_cast<double>(static_cast<float>(yhat)), y, 1.0 + kB * r);
      kappa = std::max(kappa, st.kappa);
      kappa_min = std::min(kappa_min, st.kappa);
      beta[k] = st.beta;
    }
    kappa_spread = std::max(kappa_spread, kappa / kappa_min);
    a += kappa * x * x.transpose();
    for (uint32_t k = 0; k < kClasses; ++k) b[k] += beta[k] * x;
  }
  EXPECT_GT(kappa_spread, 1.5);  // the classes' κ differ: the largest is what A takes
}

}  // namespace
}  // namespace lepus

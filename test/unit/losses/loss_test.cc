#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "lepus/errors.h"
#include "losses/losses.h"

namespace lepus {
namespace {

const LabelRange kWide{-100.0f, 100.0f};

TEST(SquaredLoss, ValuesAndUpdates) {
  SquaredLoss l;
  EXPECT_FLOAT_EQ(l.loss(0.5f, 1.0f, kWide), 0.25f);
  // Outside [lo, hi] VW extrapolates linearly: p = 2 > hi = 1, y = 0: (1-0)^2 + 2(1-0)(2-1) = 3.
  EXPECT_FLOAT_EQ(l.loss(2.0f, 0.0f, LabelRange{0.0f, 1.0f}), 3.0f);
  EXPECT_FLOAT_EQ(l.squared_gradient(0.0f, 1.0f), 4.0f);
  EXPECT_FLOAT_EQ(l.unsafe_update(0.0f, 1.0f, 0.5f), 1.0f);
  // Invariant update: (y-p)(1-e^{-2sh})/h, the limit 2(y-p)s for tiny s*h.
  EXPECT_NEAR(l.invariant_update(0.0f, 1.0f, 0.5f, 1.0f), 1.0 - std::exp(-1.0), 1e-6);
  EXPECT_FLOAT_EQ(l.invariant_update(0.0f, 1.0f, 1e-8f, 1.0f), 2e-8f);
  // Its step never overshoots the label whatever the importance weight (s large).
  EXPECT_LE(l.invariant_update(0.0f, 1.0f, 1e6f, 1.0f) * 1.0f, 1.0f);
}

TEST(LogisticLoss, ValuesGradientsAndBestConstant) {
  LogisticLoss l(-1.0f, 1.0f);
  EXPECT_NEAR(l.loss(0.0f, 1.0f, kWide), std::log(2.0), 1e-6);
  EXPECT_NEAR(l.loss(2.0f, -1.0f, kWide), std::log1p(std::exp(2.0)), 1e-5);
  EXPECT_NEAR(l.first_derivative(0.0f, 1.0f, kWide), -0.5, 1e-7);
  EXPECT_NEAR(l.squared_gradient(0.0f, -1.0f), 0.25, 1e-7);
  EXPECT_NEAR(l.unsafe_update(0.0f, 1.0f, 1.0f), 0.5, 1e-7);
  // A 0 label is the half/half mixture of the two classes, not a class.
  EXPECT_NEAR(l.loss(0.3f, 0.0f, kWide), 0.5 * (std::log1p(std::exp(-0.3)) + std::log1p(std::exp(0.3))),
              1e-6);
  // rcv1_small summary: 541 negatives, 459 positives -> log(459/541) = -0.164369, loss 0.689781.
  BestConstantInput in;
  in.have_l1 = in.have_l2 = true;
  in.l1 = -1.0f;
  in.l2 = 1.0f;
  in.sum_weighted_labels = -82.0;
  in.weighted_labeled = 1000.0;
  const auto bc = l.best_constant(in, LabelRange{-50.0f, 50.0f});
  ASSERT_TRUE(bc.has_value());
  EXPECT_NEAR(bc->value, -0.164369, 1e-6);
  EXPECT_NEAR(bc->loss, 0.689781, 1e-6);
}

TEST(LogisticLoss, InvariantUpdateApproachesGradientStepForSmallSteps) {
  LogisticLoss l(-1.0f, 1.0f);
  // s*h >= 1e-6 takes VW's LambertW path, whose f32 cancellation leaves about 1% error at this size.
  const float s = 1e-3f, h = 1e-2f;
  EXPECT_NEAR(l.invariant_update(0.2f, 1.0f, s, h), l.unsafe_update(0.2f, 1.0f, s), 0.02 * 4.5e-4);
  EXPECT_NEAR(l.invariant_update(0.2f, -1.0f, s, h), l.unsafe_update(0.2f, -1.0f, s), 0.02 * 5.5e-4);
  // A large importance weight: the invariant step is bounded, the gradient step is not.
  EXPECT_LT(std::fabs(l.invariant_update(0.2f, 1.0f, 1000.0f, 1.0f)), 50.0f);
}

TEST(HingeLoss, Values) {
  HingeLoss l;
  EXPECT_FLOAT_EQ(l.loss(0.5f, 1.0f, kWide), 0.5f);
  EXPECT_FLOAT_EQ(l.loss(2.0f, 1.0f, kWide), 0.0f);
  EXPECT_FLOAT_EQ(l.invariant_update(0.5f, 1.0f, 10.0f, 1.0f), 0.5f);  // stops at the margin
  EXPECT_FLOAT_EQ(l.unsafe_update(0.5f, -1.0f, 0.1f), -0.1f);
  EXPECT_FLOAT_EQ(l.squared_gradient(2.0f, 1.0f), 0.0f);
}

TEST(QuantileLoss, Values) {
  QuantileLoss l(0.3f);
  EXPECT_FLOAT_EQ(l.loss(0.0f, 10.0f, kWide), 3.0f);
  EXPECT_FLOAT_EQ(l.loss(10.0f, 0.0f, kWide), 7.0f);
  EXPECT_FLOAT_EQ(l.unsafe_update(0.0f, 1.0f, 1.0f), 0.3f);
  EXPECT_FLOAT_EQ(l.unsafe_update(1.0f, 0.0f, 1.0f), -0.7f);
  EXPECT_FLOAT_EQ(l.invariant_update(0.0f, 1.0f, 100.0f, 1.0f), 1.0f);  // never past the label
}

TEST(LossTable, KnowsEveryNameAndRejectsOthers) {
  for (const char* n : {"squared", "logistic", "hinge", "quantile"}) {
    LossOptions o;
    o.name = n;
    EXPECT_EQ(make_loss(o)->name(), n);
  }
  LossOptions bad;
  bad.name = "poisson_typo";
  EXPECT_THROW(make_loss(bad), ConfigError);
  LossOptions tau;
  tau.name = "quantile";
  tau.quantile_tau = 1.5f;
  EXPECT_THROW(make_loss(tau), ConfigError);
}

}  // namespace
}  // namespace lepus

namespace lepus {
namespace {

// First and second derivatives against central differences of the loss (and of the first derivative), at points
// away from kinks, for every loss and for fractional logistic labels; and every second derivative within the
// loss's curvature bound.
TEST(LossDerivatives, MatchFiniteDifferencesAndStayWithinTheBound) {
  struct Case {
    std::unique_ptr<Loss> loss;
    std::vector<float> labels;
  };
  std::vector<Case> cases;
  cases.push_back({std::make_unique<SquaredLoss>(), {-2.0f, 0.0f, 0.5f, 3.0f}});
  cases.push_back({std::make_unique<LogisticLoss>(-1.0f, 1.0f), {-1.0f, 1.0f, 0.0f, 0.6f}});
  cases.push_back({std::make_unique<HingeLoss>(), {-1.0f, 1.0f}});
  cases.push_back({std::make_unique<QuantileLoss>(0.3f), {-1.0f, 0.25f, 2.0f}});
  const LabelRange range{-100.0f, 100.0f};
  for (const auto& c : cases) {
    for (float y : c.labels) {
      for (float p = -6.0f; p <= 6.0f; p += 0.37f) {
        const float h = 1e-2f;
        const double num1 =
            (static_cast<double>(c.loss->loss(p + h, y, range)) - c.loss->loss(p - h, y, range)) / (2.0 * h);
        const bool kink = (c.loss->name() == "hinge" && std::fabs(y * p - 1.0f) < 2 * h) ||
                          (c.loss->name() == "quantile" && std::fabs(y - p) < 2 * h);
        if (kink) continue;
        EXPECT_NEAR(c.loss->first_derivative(p, y, range), num1, 2e-3)
            << c.loss->name() << " p=" << p << " y=" << y;
        const double num2 =
            (c.loss->first_derivative(p + h, y, range) - c.loss->first_derivative(p - h, y, range)) /
            (2.0 * h);
        const double d2 = c.loss->second_derivative(p, y, range);
        EXPECT_NEAR(d2, num2, 2e-3) << c.loss->name() << " p=" << p << " y=" << y;
        EXPECT_GE(d2, 0.0);  // convex
        if (const auto bound = c.loss->curvature_bound()) {
          EXPECT_LE(d2, *bound + 1e-12) << c.loss->name();
        }
      }
    }
  }
}

TEST(LossDerivatives, CurvatureBounds) {
  EXPECT_EQ(SquaredLoss().curvature_bound(), 2.0);
  EXPECT_EQ(LogisticLoss(-1.0f, 1.0f).curvature_bound(), 0.25);
  EXPECT_DOUBLE_EQ(LogisticLoss(-1.0f, 1.0f).second_derivative(0.0f, 1.0f, {}), 0.25);  // attained at p = 0
  EXPECT_FALSE(HingeLoss().curvature_bound().has_value());
  EXPECT_FALSE(QuantileLoss(0.5f).curvature_bound().has_value());
  // Squared loss is linear outside the clipping range, as it is reported there; logistic stays finite far out.
  EXPECT_EQ(SquaredLoss().second_derivative(5.0f, 0.0f, LabelRange{-1.0f, 1.0f}), 0.0);
  EXPECT_GT(LogisticLoss(-1.0f, 1.0f).second_derivative(700.0f, 1.0f, {}), 0.0 - 1e-300);
  EXPECT_TRUE(std::isfinite(LogisticLoss(-1.0f, 1.0f).second_derivative(1e30f, 1.0f, {})));
}

}  // namespace
}  // namespace lepus

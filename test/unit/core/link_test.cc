// The printed prediction (core/link.h), written once for -p and the daemon: links, --binary, and non-finite
// values replaced and counted.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

#include "core/link.h"

namespace lepus {
namespace {

TEST(Link, ShownPredictionLinksAndStaysFinite) {
  uint64_t replaced = 0;
  EXPECT_FLOAT_EQ(shown_prediction(Link::kIdentity, false, 0.25f, replaced), 0.25f);
  EXPECT_FLOAT_EQ(shown_prediction(Link::kLogistic, false, 0.0f, replaced), 0.5f);
  EXPECT_FLOAT_EQ(shown_prediction(Link::kGlf1, false, 0.0f, replaced), 0.0f);
  EXPECT_EQ(replaced, 0u);
  // A NaN value is 0 before the link (the logistic of it is 1/2), counted once.
  EXPECT_FLOAT_EQ(shown_prediction(Link::kLogistic, false, NAN, replaced), 0.5f);
  EXPECT_EQ(replaced, 1u);
  // poisson's exp overflows: the linked value is replaced too.
  EXPECT_EQ(shown_prediction(Link::kPoisson, false, 100.0f, replaced), FLT_MAX);
  EXPECT_EQ(replaced, 2u);
  EXPECT_EQ(shown_prediction(Link::kIdentity, false, -INFINITY, replaced), -FLT_MAX);
  EXPECT_EQ(replaced, 3u);
  // --binary: the sign of the value, whatever the link.
  EXPECT_EQ(shown_prediction(Link::kLogistic, true, 0.1f, replaced), 1.0f);
  EXPECT_EQ(shown_prediction(Link::kIdentity, true, 0.0f, replaced), -1.0f);
  EXPECT_EQ(shown_prediction(Link::kIdentity, true, NAN, replaced), -1.0f);
}

}  // namespace
}  // namespace lepus

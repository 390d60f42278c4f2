// scinol2 and scinol1 (ScInOL2 / ScInOL1, Kempka, Kotłowski, Warmuth 2019) through the binary: one pass over
// heart_scale beats the best constant with the logistic loss, the saved model predicts as the run ended
// (twice alike), and the progressive predictions do not move when feature columns are rescaled.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "e2e_util.h"

namespace lepus::e2e {
namespace {

const std::string kHeart = std::string(LEPUS_TEST_DATA) + "/heart_scale.vw";

double loss_of(const std::string& log) { return summary_value(read_file(log), "average loss"); }
double constant_loss(const std::string& log) { return summary_value(read_file(log), "best constant's loss"); }

TEST(Scinol2Cli, OnePassOverHeartScaleBeatsTheConstant) {
  for (const std::string learner : {"scinol2", "scinol1"}) {
    SCOPED_TRACE(learner);
    const std::string d = scratch_dir("scinol2_" + learner);
    const std::string args = " --learner " + learner + " --loss_function logistic";
    ASSERT_EQ(run_lepus(kHeart + args + " -f " + d + "/m 2> " + d + "/log"), 0) << read_file(d + "/log");
    EXPECT_LT(loss_of(d + "/log"), constant_loss(d + "/log"));
    if (learner == "scinol2") {
      EXPECT_LT(loss_of(d + "/log"), 0.5);  // measured 0.4716 (the constant: 0.6870)
    }
    ASSERT_EQ(run_lepus("-t -i " + d + "/m " + kHeart + " -p " + d + "/a.p 2> " + d + "/t1"), 0)
        << read_file(d + "/t1");
    ASSERT_EQ(run_lepus("-t -i " + d + "/m " + kHeart + " -p " + d + "/b.p 2> " + d + "/t2"), 0);
    EXPECT_EQ(read_file(d + "/a.p"), read_file(d + "/b.p"));  // predicting changes nothing
    EXPECT_LT(loss_of(d + "/t1"), constant_loss(d + "/log"));
  }
}

// heart_scale with every value v replaced by the integer k = round(1000 v); file b holds column j multiplied
// by f(j) in {1e3, -1e3, 7, -2} (integers below 2^24: exact in float, so b is exactly a rescaled). The
// progressive predictions, printed with 6 decimals, agree within 2e-6 + 1e-5 |ŷ| (-b 24: no collisions).
TEST(Scinol2Cli, PredictionsDoNotMoveWhenColumnsAreRescaled) {
  static const double f[] = {1e3, -1e3, 7, -2};
  const std::string d = scratch_dir("scinol2_inv");
  {
    std::ofstream a(d + "/a.vw"), b(d + "/b.vw");
    for (const auto& line : lines_of(read_file(kHeart))) {
      std::stringstream ss(line);
      std::string tok;
      bool first = true;
      while (ss >> tok) {
        if (!first) a << ' ', b << ' ';
        const size_t colon = tok.find(':');
        if (first || colon == std::string::npos) {
          a << tok;
          b << tok;
        } else {
          const long j = std::strtol(tok.c_str(), nullptr, 10);
          const long long k = std::llround(std::strtod(tok.c_str() + colon + 1, nullptr) * 1000);
          a << tok.substr(0, colon + 1) << k;
          b << tok.substr(0, colon + 1) << std::llround(k * f[j % 4]);
        }
        first = false;
      }
      a << '\n';
      b << '\n';
    }
  }
  for (const std::string learner : {"scinol2", "scinol1"}) {
    SCOPED_TRACE(learner);
    const std::string common = " --learner " + learner + " --loss_function logistic -b 24 --quiet";
    ASSERT_EQ(run_lepus("-d " + d + "/a.vw -p " + d + "/a.p" + common), 0);
    ASSERT_EQ(run_lepus("-d " + d + "/b.vw -p " + d + "/b.p" + common), 0);
    const auto a = read_predictions(d + "/a.p"), b = read_predictions(d + "/b.p");
    ASSERT_EQ(a.size(), 270u);
    ASSERT_EQ(b.size(), a.size());
    double spread = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], b[i], 2e-6 + 1e-5 * std::fabs(a[i])) << "row " << i + 1;
      spread = std::max(spread, std::fabs(a[i]));
    }
    EXPECT_GT(spread, 0.1) << "the run must learn something for the comparison to mean anything";
  }
}

}  // namespace
}  // namespace lepus::e2e

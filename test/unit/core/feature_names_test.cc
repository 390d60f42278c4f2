// Feature names (--audit, --invert_hash, --audit_regressor): kept only when asked, one per feature, in the order
// the features are, through regrouping, n-grams, the constant, interactions and --ignore_linear.
#include <gtest/gtest.h>

#include "core/feature_space.h"
#include "formats/vw_text.h"
#include "pipeline/audit.h"

namespace lepus {
namespace {

class IgnoreWarnings final : public WarningSink {
 public:
  void warn(const std::string&) override {}
};

std::vector<std::string> names_of(const Example& ex) {
  std::vector<std::string> out;
  for (const auto& n : ex.names) out.push_back(audit_name(n));
  return out;
}

Example parsed(const std::string& line, bool keep) {
  ParseOptions po;
  po.keep_names = keep;
  IgnoreWarnings w;
  Example ex;
  parse_vw_line(line, po, ex, w);
  return ex;
}

TEST(FeatureNames, NoneKeptUnlessAsked) {
  Example ex = parsed("1 |a x y |b z:2", false);
  FeatureSpaceOptions fo;
  fo.quadratic = {"ab"};
  FeatureSpace space(fo);
  space.expand(ex);
  EXPECT_TRUE(ex.names.empty());
  EXPECT_EQ(ex.features.size(), 6u);
}

TEST(FeatureNames, FollowRegroupingStringValuesAndTheDefaultNamespace) {
  // |a comes back after |b: the parser regroups a's features together, and their names with them.
  Example ex = parsed("1 | d1 |a x |b y:2 s:red |a :3 q", true);
  ASSERT_EQ(ex.names.size(), ex.features.size());
  EXPECT_EQ(names_of(ex), (std::vector<std::string>{"d1", "a^x", "a^", "a^q", "b^y", "b^s^red"}));
  EXPECT_EQ(ex.names[5].front().str, "red");
  EXPECT_EQ(regressor_name(ex.names[5]), "b^s");  // --audit_regressor leaves string values out
}

TEST(FeatureNames, NgramsConstantInteractionsAndIgnoreLinear) {
  Example ex = parsed("1 |w go until now |x k", true);
  FeatureSpaceOptions fo;
  fo.ngram['w'] = 2;
  fo.quadratic = {"wx"};
  fo.ignore_linear['x'] = true;
  fo.keep_names = true;
  FeatureSpace space(fo);
  space.expand(ex);
  ASSERT_EQ(ex.names.size(), ex.features.size());
  // x's linear feature is dropped (it fed the interactions); every w feature, bigrams included, meets x^k.
  EXPECT_EQ(names_of(ex), (std::vector<std::string>{"w^go", "w^until", "w^now", "w^go^until", "w^until^now",
                                                    "Constant", "w^go*x^k", "w^until*x^k", "w^now*x^k",
                                                    "w^go^until*x^k", "w^until^now*x^k"}));
}

TEST(FeatureNames, SamePairsAsTheFastPath) {
  // Names force the general interaction loop: it must give the same features as the pair kernel does.
  const std::string line = "1 |a x:0.5 y:2 z |b u:3 v:-1";
  Example fast = parsed(line, false), named = parsed(line, true);
  FeatureSpaceOptions fo;
  fo.quadratic = {"aa", "ab"};
  FeatureSpace s1(fo);
  s1.expand(fast);
  fo.keep_names = true;
  FeatureSpace s2(fo);
  s2.expand(named);
  ASSERT_EQ(fast.features.size(), named.features.size());
  for (size_t i = 0; i < fast.features.size(); ++i) {
    EXPECT_EQ(fast.features[i].index, named.features[i].index) << i;
    EXPECT_EQ(fast.features[i].value, named.features[i].value) << i;
  }
  EXPECT_EQ(audit_name(named.names.back()), "a^z*b^v");
}

}  // namespace
}  // namespace lepus

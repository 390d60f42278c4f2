// Hashing and feature generation against VW's own audit output (test/data/hashes, copied from
// ../shared/oracles/vw/hashes): every linear, quadratic and cubic index of crafted.vw.
#include "lepus/hashing.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "core/feature_space.h"
#include "formats/vw_text.h"

namespace lepus {
namespace {

class IgnoreWarnings final : public WarningSink {
 public:
  void warn(const std::string&) override {}
};

TEST(Murmur3, KnownVectors) {
  // Reference values of MurmurHash3_x86_32 (SMHasher verification strings).
  EXPECT_EQ(murmur3_32("", 0), 0u);
  EXPECT_EQ(murmur3_32("", 1), 0x514E28B7u);
  EXPECT_EQ(murmur3_32("hello", 0), 0x248BFA47u);
  EXPECT_EQ(murmur3_32("The quick brown fox jumps over the lazy dog", 0), 0x2E4FF723u);
}

TEST(HashStrings, AllDigitsRuleAndTrim) {
  EXPECT_EQ(hash_strings("007", 0), 7u);
  EXPECT_EQ(hash_strings("4294967296", 5), 5u);
  EXPECT_EQ(hash_strings("  12 ", 3), 15u);
  EXPECT_EQ(hash_strings("", 42), 42u);
  EXPECT_EQ(hash_strings("12x", 0), murmur3_32("12x", 0));
  const uint32_t nshash = hash_strings("f", 0);
  EXPECT_EQ(nshash, 728008763u);
  EXPECT_EQ(hash_strings("a", nshash) & 0x3FFFF, 14355u);
  EXPECT_EQ(hash_strings("1", nshash) & 0x3FFFF, 34876u);
  EXPECT_EQ(hash_strings("a", 0) & 0x3FFFF, 92594u);
}

struct TsvRow {
  int line;
  int order;
  uint64_t index;
  double value;
  std::string name;
};

std::vector<TsvRow> read_tsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<TsvRow> rows;
  std::string l;
  std::getline(in, l);  // header
  while (std::getline(in, l)) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    std::string cell;
    while (std::getline(ss, cell, '\t')) f.push_back(cell);
    if (f.size() < 8) continue;
    rows.push_back(TsvRow{std::stoi(f[0]), std::stoi(f[1]), std::stoull(f[6]), std::stod(f[5]), f[7]});
  }
  return rows;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(in, l)) lines.push_back(l);
  return lines;
}

// Parses and expands every line of crafted.vw with VW's audit options and compares each generated
// feature, in order, with VW's audit: -b 18 -q ff -q xy --cubic xyz.
TEST(FeatureIndices, EqualVwAuditOnCraftedInput) {
  const auto rows = read_tsv(LEPUS_TEST_DATA "/hashes/indices.tsv");
  const auto lines = read_lines(LEPUS_TEST_DATA "/hashes/crafted.vw");
  ASSERT_EQ(lines.size(), 11u);
  ASSERT_GT(rows.size(), 100u);
  ParseOptions po;
  FeatureSpaceOptions fo;
  fo.quadratic = {"ff", "xy"};
  fo.cubic = {"xyz"};
  FeatureSpace space(fo);
  IgnoreWarnings w;
  Example ex;
  size_t r = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    parse_vw_line(lines[i], po, ex, w);
    space.expand(ex);
    std::vector<const TsvRow*> expected;
    for (const auto& row : rows)
      if (row.line == static_cast<int>(i) + 1) expected.push_back(&row);
    ASSERT_EQ(ex.features.size(), expected.size()) << "line " << i + 1;
    for (size_t k = 0; k < expected.size(); ++k, ++r) {
      EXPECT_EQ(ex.features[k].index & 0x3FFFF, expected[k]->index)
          << "line " << i + 1 << " feature " << expected[k]->name;
      EXPECT_NEAR(ex.features[k].value, expected[k]->value,
                  1e-6 * std::max(1.0, std::fabs(expected[k]->value)))
          << "line " << i + 1 << " feature " << expected[k]->name;
    }
  }
  EXPECT_EQ(r, rows.size());
}

// The ':' wildcard expands over the namespaces seen so far (VW's audit_wildcard oracle).
TEST(FeatureIndices, WildcardMatchesVwAudit) {
  const std::string audit = LEPUS_TEST_DATA "/hashes/audit_wildcard.stdout";
  std::ifstream in(audit);
  if (!in) GTEST_SKIP() << "no " << audit;
  const auto lines = read_lines(LEPUS_TEST_DATA "/hashes/crafted.vw");
  ParseOptions po;
  FeatureSpaceOptions fo;
  fo.quadratic = {"::"};
  FeatureSpace space(fo);
  IgnoreWarnings w;
  Example ex;
  std::string l;
  size_t i = 0;
  while (std::getline(in, l)) {
    if (l.empty() || l[0] != '\t') continue;
    std::vector<uint64_t> expected;
    std::stringstream ss(l.substr(1));
    std::string item;
    while (std::getline(ss, item, '\t')) {
      // name:index:value:weight — the name may contain ':' itself, so take fields from the right.
      size_t p3 = item.rfind(':'), p2 = item.rfind(':', p3 - 1), p1 = item.rfind(':', p2 - 1);
      expected.push_back(std::stoull(item.substr(p1 + 1, p2 - p1 - 1)));
    }
    ASSERT_LT(i, lines.size());
    parse_vw_line(lines[i], po, ex, w);
    space.expand(ex);
    ASSERT_EQ(ex.features.size(), expected.size()) << "line " << i + 1;
    for (size_t k = 0; k < expected.size(); ++k) EXPECT_EQ(ex.features[k].index & 0x3FFFF, expected[k]);
    ++i;
  }
  EXPECT_EQ(i, lines.size());
}

// Interactions much larger than expand()'s 2,048-feature block (pairs with and without a self-pair, a cubic with a
// repeated term, --permutations), generated in blocks and, on an AVX2 CPU, two features per vector: the same
// features in the same order as VW's nested loops written out here, bit for bit, and products past FLT_MAX clamped.
TEST(FeatureSpace, LargeInteractionsMatchNestedLoopsBitForBit) {
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  for (const bool permutations : {false, true}) {
    FeatureSpaceOptions fo;
    fo.quadratic = {"ab", "ff"};
    fo.cubic = {"aab"};
    fo.permutations = permutations;
    FeatureSpace space(fo);
    Example ex;
    ex.labeled = true;
    const std::pair<unsigned char, uint32_t> groups[] = {{'a', 61}, {'b', 131}, {'f', 97}};
    for (const auto& [ns, n] : groups) {
      const uint32_t begin = static_cast<uint32_t>(ex.features.size());
      for (uint32_t k = 0; k < n; ++k) {
        float v = unit(rng);
        if (k % 17 == 3) v = 3e30f;  // products with these pass FLT_MAX
        ex.features.push_back(Feature{rng(), v});
      }
      ex.groups.push_back(FeatureGroup{ns, begin, begin + n});
    }
    const Example parsed = ex;
    space.expand(ex);

    // The reference: the linear features, the constant, then each interaction in nested loops (a run of equal
    // terms takes j >= i unless --permutations).
    FeatureVector want(parsed.features);
    want.push_back(Feature{kConstantIndex, 1.0f});
    auto clamp = [](float p) { return std::isinf(p) ? std::copysign(FLT_MAX, p) : p; };
    auto range = [&](unsigned char ns) {
      for (const auto& g : parsed.groups)
        if (g.ns == ns) return g;
      return FeatureGroup{};
    };
    const Feature* f = parsed.features.data();
    const FeatureGroup a = range('a'), b = range('b'), ff = range('f');
    for (uint32_t i = a.begin; i < a.end; ++i)
      for (uint32_t j = b.begin; j < b.end; ++j)
        want.push_back(
            Feature{(kInteractionPrime * f[i].index) ^ f[j].index, clamp(f[i].value * f[j].value)});
    for (uint32_t i = ff.begin; i < ff.end; ++i)
      for (uint32_t j = permutations ? ff.begin : i; j < ff.end; ++j)
        want.push_back(
            Feature{(kInteractionPrime * f[i].index) ^ f[j].index, clamp(f[i].value * f[j].value)});
    for (uint32_t i = a.begin; i < a.end; ++i)
      for (uint32_t j = permutations ? a.begin : i; j < a.end; ++j) {
        const uint64_t h = kInteractionPrime * ((kInteractionPrime * f[i].index) ^ f[j].index);
        const float v = clamp(f[i].value * f[j].value);
        for (uint32_t k = b.begin; k < b.end; ++k)
          want.push_back(Feature{h ^ f[k].index, clamp(v * f[k].value)});
      }
    ASSERT_EQ(ex.features.size(), want.size()) << "permutations " << permutations;
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(ex.features[k].index, want[k].index) << "feature " << k << ", permutations " << permutations;
      ASSERT_EQ(std::bit_cast<uint32_t>(ex.features[k].value), std::bit_cast<uint32_t>(want[k].value))
          << "feature " << k << ", permutations " << permutations;
    }
    EXPECT_GT(space.clamped_values(), 0u);
  }
}

TEST(FeatureSpace, SortsAndDeduplicatesInteractions) {
  EXPECT_EQ(FeatureSpace::normalize({"ba", "ab", "ff", "abc", "aba"}, false),
            (std::vector<std::string>{"ab", "ff", "aab", "abc"}));
  EXPECT_EQ(FeatureSpace::normalize({"ba", "ab"}, true), (std::vector<std::string>{"ab", "ba"}));
}

TEST(FeatureSpace, IgnoreLinearKeepsInteractionsAndCount) {
  ParseOptions po;
  FeatureSpaceOptions fo;
  fo.quadratic = {"ab"};
  fo.ignore_linear['a'] = true;
  FeatureSpace space(fo);
  IgnoreWarnings w;
  Example ex;
  parse_vw_line("1 |a x y |b z", po, ex, w);
  space.expand(ex);
  // linear: b^z, constant; interactions: x*z, y*z. Reported count includes a's two linear terms.
  EXPECT_EQ(ex.features.size(), 4u);
  EXPECT_EQ(ex.num_reported, 6u);
  EXPECT_EQ(ex.features[1].index, kConstantIndex);
}

TEST(FeatureSpace, NoConstant) {
  ParseOptions po;
  FeatureSpaceOptions fo;
  fo.constant = false;
  FeatureSpace space(fo);
  IgnoreWarnings w;
  Example ex;
  parse_vw_line("1 |a x", po, ex, w);
  space.expand(ex);
  ASSERT_EQ(ex.features.size(), 1u);
  EXPECT_NE(ex.features[0].index, kConstantIndex);
}

TEST(FeatureSpace, RejectsBadSpecs) {
  FeatureSpaceOptions fo;
  fo.quadratic = {"abc"};
  EXPECT_THROW(FeatureSpace{fo}, std::exception);
  fo.quadratic = {};
  fo.cubic = {"ab"};
  EXPECT_THROW(FeatureSpace{fo}, std::exception);
}

// --ngram 3 --skips 1 on one namespace of four features (indices a b c d) and a second namespace without grams:
// VW's add_grams order written out by hand, index ((i0 * C + i1) * C + i2) with C = 27942141, value 1; each
// namespace's grams follow its own features, before the constant.
TEST(FeatureSpace, NgramsAndSkipsInVwOrder) {
  FeatureSpaceOptions fo;
  fo.ngram['w'] = 3;
  fo.skips['w'] = 1;
  FeatureSpace space(fo);
  Example ex;
  const uint64_t a = 11, b = 22, c = 33, d = 44, z = 55;
  ex.features = {{a, 0.5f}, {b, 2.0f}, {c, 1.0f}, {d, 3.0f}, {z, 1.0f}};
  ex.groups = {{'w', 0, 4}, {'x', 4, 5}};
  space.expand(ex);
  const uint64_t C = 27942141;
  auto g2 = [&](uint64_t p, uint64_t q) { return p * C + q; };
  auto g3 = [&](uint64_t p, uint64_t q, uint64_t r) { return (p * C + q) * C + r; };
  const std::vector<std::pair<uint64_t, float>> want = {{a, 0.5f},
                                                        {b, 2.0f},
                                                        {c, 1.0f},
                                                        {d, 3.0f},  // w's features
                                                        {g2(a, b), 1.0f},
                                                        {g2(b, c), 1.0f},
                                                        {g2(c, d), 1.0f},  // bigrams
                                                        {g2(a, c), 1.0f},
                                                        {g2(b, d), 1.0f},  // one skipped
                                                        {g3(a, b, c), 1.0f},
                                                        {g3(b, c, d), 1.0f},  // trigrams
                                                        {g3(a, b, d), 1.0f},  // a skip before the third
                                                        {g3(a, c, d), 1.0f},  // a skip before the second
                                                        {z, 1.0f},            // x: no grams
                                                        {kConstantIndex, 1.0f}};
  ASSERT_EQ(ex.features.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(ex.features[i].index, want[i].first) << i;
    EXPECT_EQ(ex.features[i].value, want[i].second) << i;
  }
  ASSERT_GE(ex.groups.size(), 2u);
  EXPECT_EQ(ex.groups[0].ns, 'w');
  EXPECT_EQ(ex.groups[0].end - ex.groups[0].begin, 13u);
  EXPECT_EQ(ex.groups[1].begin, 13u);
  EXPECT_EQ(ex.num_reported, 15u);
}

}  // namespace
}  // namespace lepus

// parse_vw_line against VW 9.11.2's reading and its hash oracles (test/data/hashes/).
#include "formats/vw_text.h"

#include <gtest/gtest.h>

#include "collecting_sink.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lepus {
namespace {

constexpr uint64_t kMask18 = (1u << 18) - 1;

using testing::CollectingSink;
using testing::Parsed;

Parsed parse(std::string_view line, const ParseOptions& options = ParseOptions{}) {
  Parsed out;
  CollectingSink sink;
  parse_vw_line(line, options, out.ex, sink);
  out.warnings = std::move(sink.messages);
  return out;
}

uint32_t h(std::string_view s, uint32_t seed, HashMode mode = HashMode::kStrings) {
  return hash_feature(s, seed, mode);
}

uint32_t ns(std::string_view name) { return h(name, 0); }

// (masked index, value) pairs of the linear features, for compact expectations.
std::vector<std::pair<uint64_t, float>> masked(const Example& ex) {
  std::vector<std::pair<uint64_t, float>> out;
  for (const Feature& f : ex.features) out.emplace_back(f.index & kMask18, f.value);
  return out;
}

std::vector<std::pair<uint64_t, float>> raw(const Example& ex) {
  std::vector<std::pair<uint64_t, float>> out;
  for (const Feature& f : ex.features) out.emplace_back(f.index, f.value);
  return out;
}

using Pairs = std::vector<std::pair<uint64_t, float>>;

void expect_groups(const Example& ex, const std::vector<std::tuple<char, uint32_t, uint32_t>>& expected) {
  ASSERT_EQ(ex.groups.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(ex.groups[i].ns, static_cast<unsigned char>(std::get<0>(expected[i]))) << "group " << i;
    EXPECT_EQ(ex.groups[i].begin, std::get<1>(expected[i])) << "group " << i;
    EXPECT_EQ(ex.groups[i].end, std::get<2>(expected[i])) << "group " << i;
  }
  EXPECT_EQ(ex.num_linear, ex.features.size());
}

// ---- label section ----------------------------------------------------------------------------------------

TEST(VwTextLabel, TagTouchingTheBarIsATag) {
  const Parsed p = parse("1 tg|f a");
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label, 1.0f);
  EXPECT_EQ(p.ex.tag, "tg");
  EXPECT_EQ(masked(p.ex), (Pairs{{14355, 1.0f}}));
  EXPECT_TRUE(p.warnings.empty());
}

TEST(VwTextLabel, LoneNumberTouchingTheBarIsATagNotALabel) {
  const Parsed p = parse("1|f a");
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.tag, "1");
  EXPECT_EQ(p.ex.features.size(), 1u);
}

TEST(VwTextLabel, LineWithoutBarIsATag) {
  const Parsed p = parse("1");
  EXPECT_FALSE(p.ex.empty);
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.tag, "1");
  EXPECT_TRUE(p.ex.features.empty());
  EXPECT_TRUE(p.ex.groups.empty());
  // The same rule makes the last of four tokens a tag, leaving label, weight, initial.
  const Parsed q = parse("1 2 3 4");
  EXPECT_TRUE(q.ex.labeled);
  EXPECT_EQ(q.ex.label, 1.0f);
  EXPECT_EQ(q.ex.weight, 2.0f);
  EXPECT_EQ(q.ex.initial, 3.0f);
  EXPECT_EQ(q.ex.tag, "4");
}

TEST(VwTextLabel, SpaceBeforeBarMeansNoTag) {
  const Parsed p = parse("1 |f a");
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label, 1.0f);
  EXPECT_EQ(p.ex.tag, "");
  EXPECT_EQ(p.ex.weight, 1.0f);
  EXPECT_EQ(p.ex.initial, 0.0f);
}

TEST(VwTextLabel, QuotedTag) {
  const Parsed p = parse("'t |f a");
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.tag, "t");
  const Parsed q = parse("-1 0.5 'house |f a");
  EXPECT_TRUE(q.ex.labeled);
  EXPECT_EQ(q.ex.label, -1.0f);
  EXPECT_EQ(q.ex.weight, 0.5f);
  EXPECT_EQ(q.ex.tag, "house");
  const Parsed r = parse("1 ' |f a");  // a lone quote is an empty tag
  EXPECT_TRUE(r.ex.labeled);
  EXPECT_EQ(r.ex.tag, "");
}

TEST(VwTextLabel, WeightAndInitial) {
  const Parsed p = parse("-1 0.5 0.1 |f a");
  EXPECT_EQ(p.ex.label, -1.0f);
  EXPECT_EQ(p.ex.weight, 0.5f);
  EXPECT_EQ(p.ex.initial, 0.1f);
  EXPECT_EQ(p.ex.tag, "");
  const Parsed q = parse("  1   2  |f a");  // runs of spaces are one separator
  EXPECT_EQ(q.ex.label, 1.0f);
  EXPECT_EQ(q.ex.weight, 2.0f);
}

TEST(VwTextLabel, OnlyTextAfterTheFirstTabCounts) {
  const Parsed p = parse("junk words\t1 2 |f a");
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label, 1.0f);
  EXPECT_EQ(p.ex.weight, 2.0f);
  EXPECT_TRUE(p.warnings.empty());
  // A later TAB is not a separator: "1\t3" is one token, which reads as 1 (the fast path stops at the TAB).
  const Parsed q = parse("x\t1\t3 2 |f a");
  EXPECT_EQ(q.ex.label, 1.0f);
  EXPECT_EQ(q.ex.weight, 2.0f);
}

TEST(VwTextLabel, FourTokensIsAnErrorAndUnlabeled) {
  const Parsed p = parse("1 2 3 4 |f a");
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.weight, 1.0f);
  EXPECT_EQ(p.ex.initial, 0.0f);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0], "4 is too many tokens for a simple label: 1 2 3 4");
  EXPECT_EQ(p.ex.features.size(), 1u);  // the features are still read
}

TEST(VwTextLabel, BadFloatsReadAsZeroWithAWarning) {
  const Parsed p = parse("abc |f a");
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label, 0.0f);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0], "'abc' is not a good float, replacing with 0");

  const Parsed q = parse("1 xyz |f a");
  EXPECT_EQ(q.ex.label, 1.0f);
  EXPECT_EQ(q.ex.weight, 0.0f);
  ASSERT_EQ(q.warnings.size(), 1u);
  EXPECT_EQ(q.warnings[0], "'xyz' is not a good float, replacing with 0");

  const Parsed r = parse("nan |f a");
  EXPECT_TRUE(r.ex.labeled);
  EXPECT_EQ(r.ex.label, 0.0f);
  EXPECT_EQ(r.warnings.size(), 1u);

  const Parsed s = parse("+1 1E+1 |f a");  // strtof fallback, no warning
  EXPECT_EQ(s.ex.label, 1.0f);
  EXPECT_EQ(s.ex.weight, 10.0f);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(VwTextLabel, FltMaxIsVwsNoLabelMarker) {
  const Parsed p = parse("3.40282347e+38 |f a");
  EXPECT_FALSE(p.ex.labeled);
}

// ---- empty lines, line ends, BOM
// ------------------------------------------------------------------------------

TEST(VwTextLine, EmptyLine) {
  Parsed p = parse("");
  EXPECT_TRUE(p.ex.empty);
  EXPECT_FALSE(p.ex.labeled);
  p = parse("\r");
  EXPECT_TRUE(p.ex.empty);
  p = parse("\xEF\xBB\xBF");
  EXPECT_TRUE(p.ex.empty);
}

TEST(VwTextLine, SpacesOnlyIsAnUnlabeledExample) {
  const Parsed p = parse("   ");
  EXPECT_FALSE(p.ex.empty);
  EXPECT_FALSE(p.ex.labeled);
  EXPECT_EQ(p.ex.tag, "");
  EXPECT_TRUE(p.ex.features.empty());
  EXPECT_EQ(p.ex.num_linear, 0u);
}

TEST(VwTextLine, BomAndTrailingCarriageReturn) {
  const Parsed p = parse(
      "\xEF\xBB\xBF"
      "1 |f a\r");
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label, 1.0f);
  EXPECT_EQ(masked(p.ex), (Pairs{{14355, 1.0f}}));
  EXPECT_TRUE(p.warnings.empty());
  const Parsed q = parse("1 tg\r");  // the '\r' is not part of the tag
  EXPECT_EQ(q.ex.tag, "tg");
}

TEST(VwTextLine, CarriageReturnInsideFeaturesEndsTheLine) {
  const Parsed p = parse("1 |f a:2\r |g x");
  EXPECT_EQ(masked(p.ex), (Pairs{{14355, 2.0f}}));
  EXPECT_TRUE(p.warnings.empty());
  expect_groups(p.ex, {{'f', 0, 1}});
}

TEST(VwTextLine, ClearKeepsLineNumberAndResetsTheRest) {
  Example ex;
  CollectingSink sink;
  parse_vw_line("1 2 3 tag|f a b", ParseOptions{}, ex, sink);
  ex.line = 42;
  parse_vw_line("|g c", ParseOptions{}, ex, sink);
  EXPECT_EQ(ex.line, 42u);
  EXPECT_FALSE(ex.labeled);
  EXPECT_EQ(ex.weight, 1.0f);
  EXPECT_EQ(ex.initial, 0.0f);
  EXPECT_EQ(ex.tag, "");
  EXPECT_EQ(ex.features.size(), 1u);
  expect_groups(ex, {{'g', 0, 1}});
}

// ---- features
// ----------------------------------------------------------------------------------------------

TEST(VwTextFeatures, KnownIndicesFromTheCompatDoc) {
  EXPECT_EQ(ns("f"), 728008763u);
  const Parsed p = parse("1 |f a b c 1");
  EXPECT_EQ(masked(p.ex), (Pairs{{14355, 1.0f}, {146788, 1.0f}, {253856, 1.0f}, {34876, 1.0f}}));
  const Parsed q = parse("1 | a");
  EXPECT_EQ(masked(q.ex), (Pairs{{92594, 1.0f}}));
  expect_groups(q.ex, {{' ', 0, 1}});
  const Parsed r = parse("1 |s color:red");
  EXPECT_EQ(masked(r.ex), (Pairs{{226241, 1.0f}}));
}

TEST(VwTextFeatures, DefaultNamespaceForms) {
  // `|` followed by space, TAB, '|' or the end is the default namespace (hash 0 without a seed).
  const Parsed p = parse("|\ta |");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("a", 0), 1.0f}}));
  expect_groups(p.ex, {{' ', 0, 1}});
  // With a seed, VW hashes it as murmur3("", seed) even under --hash strings.
  ParseOptions seeded;
  seeded.hash_seed = 7;
  const Parsed q = parse("| default1", seeded);
  EXPECT_EQ(q.ex.features[0].index & kMask18, 88661u);  // audit_hash_seed7.stdout
  EXPECT_EQ(q.ex.features[0].index, h("default1", murmur3_32("", 7)));
}

TEST(VwTextFeatures, NamespacesSharingAFirstByteShareAGroup) {
  const Parsed p = parse("1 |feat x y |fun x |f z");
  EXPECT_EQ(masked(p.ex),
            (Pairs{{47227, 1.0f}, {3140, 1.0f}, {175734, 1.0f}, {h("z", ns("f")) & kMask18, 1.0f}}));
  expect_groups(p.ex, {{'f', 0, 4}});
}

TEST(VwTextFeatures, InterleavedGroupsAreRegroupedStably) {
  const Parsed p = parse("|a x |b y |a z |c w |b v");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("x", ns("a")), 1.0f},
                              {h("z", ns("a")), 1.0f},
                              {h("y", ns("b")), 1.0f},
                              {h("v", ns("b")), 1.0f},
                              {h("w", ns("c")), 1.0f}}));
  expect_groups(p.ex, {{'a', 0, 2}, {'b', 2, 4}, {'c', 4, 5}});
}

TEST(VwTextFeatures, GroupOrderIsFirstNonEmptyAppearance) {
  // VW registers a group when a block leaves it non-empty: the first `|a` block adds nothing.
  const Parsed p = parse("|a x:0 |b y |a z |b u:2");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("y", ns("b")), 1.0f}, {h("u", ns("b")), 2.0f}, {h("z", ns("a")), 1.0f}}));
  expect_groups(p.ex, {{'b', 0, 2}, {'a', 2, 3}});
}

TEST(VwTextFeatures, UnicodeNamespaceGroupIsTheFirstByte) {
  const Parsed p = parse("1 |\xC3\xA9 caf\xC3\xA9 |\xCE\xA9 \xCF\x89");
  EXPECT_EQ(masked(p.ex), (Pairs{{195524, 1.0f}, {96557, 1.0f}}));
  expect_groups(p.ex, {{'\xC3', 0, 1}, {'\xCE', 1, 2}});
}

TEST(VwTextFeatures, StringValuesChainHash) {
  const Parsed p = parse("|s color:red color:blue :green size:XL");
  EXPECT_EQ(masked(p.ex), (Pairs{{226241, 1.0f}, {90561, 1.0f}, {62842, 1.0f}, {241861, 1.0f}}));
  // The namespace weight does not apply to a string value.
  const Parsed q = parse("|s:3 color:red b:2");
  EXPECT_EQ(masked(q.ex), (Pairs{{226241, 1.0f}, {h("b", ns("s")) & kMask18, 6.0f}}));
}

TEST(VwTextFeatures, StringValueQuirks) {
  // `d: e:x`: the float reader consumes nothing, so the next word is d's string value.
  const Parsed p = parse("|f d: e:x y");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("e:x", h("d", ns("f"))), 1.0f}, {h("y", ns("f")), 1.0f}}));
  // `a:` at the end of the line is `a` with value 1.
  const Parsed q = parse("|f b a:");
  EXPECT_EQ(raw(q.ex), (Pairs{{h("b", ns("f")), 1.0f}, {h("a", ns("f")), 1.0f}}));
  // A lone 'e' reads as the number 0, so the feature is dropped.
  const Parsed r = parse("|f a:e b");
  EXPECT_EQ(raw(r.ex), (Pairs{{h("b", ns("f")), 1.0f}}));
  // `a:|g x`: the string value runs to the next space, '|' included; x stays in f.
  const Parsed s = parse("|f a:|g x");
  EXPECT_EQ(raw(s.ex), (Pairs{{h("|g", h("a", ns("f"))), 1.0f}, {h("x", ns("f")), 1.0f}}));
  expect_groups(s.ex, {{'f', 0, 2}});
  EXPECT_TRUE(p.warnings.empty() && q.warnings.empty() && r.warnings.empty() && s.warnings.empty());
}

TEST(VwTextFeatures, AnonymousFeaturesCountWithinTheBlock) {
  const Parsed p = parse("1 |f :1.5 :2.5 :3 |g :1");
  EXPECT_EQ(masked(p.ex), (Pairs{{34875, 1.5f}, {34876, 2.5f}, {34877, 3.0f}, {189462, 1.0f}}));
  EXPECT_EQ(p.ex.features[0].index, ns("f"));
  // The counter restarts in each block, and a dropped value-0 feature still takes its number.
  const Parsed q = parse("|f :0 :2 |f :4");
  EXPECT_EQ(raw(q.ex), (Pairs{{uint64_t{ns("f")} + 1, 2.0f}, {ns("f"), 4.0f}}));
  // Not masked at parse: nshash + k may pass 2^32.
  ParseOptions all;
  all.hash_mode = HashMode::kAll;
  const Parsed r = parse("|f :1 :1", all);
  EXPECT_EQ(r.ex.features[1].index, uint64_t{h("f", 0, HashMode::kAll)} + 1);
}

TEST(VwTextFeatures, NamespaceWeightMultipliesValues) {
  const Parsed p = parse("1 |w:0.5 a b:4 |W a");
  EXPECT_EQ(masked(p.ex), (Pairs{{217761, 0.5f}, {242687, 2.0f}, {185007, 1.0f}}));
  expect_groups(p.ex, {{'w', 0, 2}, {'W', 2, 3}});
  // A zero namespace weight drops every numeric feature of the block.
  const Parsed q = parse("|w:0 a b:4 c:str");
  EXPECT_EQ(raw(q.ex), (Pairs{{h("str", h("c", ns("w"))), 1.0f}}));
}

TEST(VwTextFeatures, NamespaceWeightAtEndOfLineWarnsLikeVw) {
  const Parsed p = parse("|w:2");
  EXPECT_TRUE(p.ex.features.empty());
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0], "malformed example! Float expected after : \"|w:\"");
  const Parsed q = parse("|w:nan a");
  EXPECT_EQ(raw(q.ex), (Pairs{{h("a", ns("w")), 1.0f}}));
  ASSERT_EQ(q.warnings.size(), 1u);
  EXPECT_EQ(q.warnings[0], "Invalid namespace value:\"nan a\" read as NaN or infinity. Replacing with 1.");
}

TEST(VwTextFeatures, ZeroValuesAreDropped) {
  const Parsed p = parse("1 |f a:0 b:-0 c:-0.0 d:0e5 e:1e-50 g");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("g", ns("f")), 1.0f}}));
  EXPECT_TRUE(p.warnings.empty());
  // Every group in this line is empty: no group entries.
  const Parsed q = parse("1 |f a:0 |g b:0");
  EXPECT_TRUE(q.ex.groups.empty());
  EXPECT_EQ(q.ex.num_linear, 0u);
}

TEST(VwTextFeatures, NanValueIsDroppedWithAWarning) {
  const Parsed p = parse("1 |f a:nan b");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("b", ns("f")), 1.0f}}));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0], "Invalid feature value:\"nan b\" read as NaN or infinity. Replacing with 0.");
}

// lepus deviation from VW (which keeps inf and later predicts NaN): an infinite value is malformed.
TEST(VwTextFeatures, InfinityIsMalformed) {
  const Parsed p = parse("|f a:inf b:1e39 c:2");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("c", ns("f")), 2.0f}}));
  EXPECT_EQ(p.warnings.size(), 2u);
  const Parsed q = parse("|w:1e30 a:1e30 b");  // the product overflows float
  EXPECT_EQ(raw(q.ex), (Pairs{{h("b", ns("w")), 1e30f}}));
  EXPECT_EQ(q.warnings.size(), 1u);
}

TEST(VwTextLabel, InfiniteOrNanLabelIsMalformed) {
  for (const char* line : {"inf |f a", "nan |f a", "1e39 |f a"}) {
    const Parsed p = parse(line);
    EXPECT_TRUE(p.ex.labeled) << line;
    EXPECT_EQ(p.ex.label, 0.0f) << line;
    EXPECT_EQ(p.warnings.size(), 1u) << line;
  }
  const Parsed w = parse("1 inf |f a");
  EXPECT_EQ(w.ex.weight, 0.0f);
  EXPECT_EQ(w.warnings.size(), 1u);
}

TEST(VwTextLabel, PositiveLabelComparesText) {
  ParseOptions o;
  o.has_positive_label = true;
  o.positive_label = "2";
  EXPECT_EQ(parse("2 |f a", o).ex.label, 1.0f);
  EXPECT_EQ(parse("1 |f a", o).ex.label, -1.0f);
  EXPECT_EQ(parse("2.0 |f a", o).ex.label, -1.0f);  // text, not value
  EXPECT_EQ(parse("2 0.5 'tag |f a", o).ex.weight, 0.5f);
  EXPECT_FALSE(parse("|f a", o).ex.labeled);
  o.positive_label = "M";
  const Parsed m = parse("M |f a", o);  // a text label maps without a float warning
  EXPECT_EQ(m.ex.label, 1.0f);
  EXPECT_TRUE(m.warnings.empty());
}

TEST(VwTextFeatures, MalformedValueDropsTheRestOfTheLine) {
  const Parsed p = parse("1 |f a g:1,5 h:3 |g x");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("a", ns("f")), 1.0f}, {h("g", ns("f")), 1.0f}}));
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_EQ(p.warnings[0], "malformed example! '|',space, or EOL expected after : \"|f a g:1\"");
  EXPECT_EQ(p.warnings[1], "malformed example! '|' or EOL expected after : \"|f a g:1\"");
  expect_groups(p.ex, {{'f', 0, 2}});
}

TEST(VwTextFeatures, NamelessNamespaceDropsTheRestOfTheLine) {
  const Parsed p = parse("1 |f a |:2 b |g c");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("a", ns("f")), 1.0f}}));
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_EQ(p.warnings[0], "malformed example! '|',String,space, or EOL expected after : \"|f a |\"");
  EXPECT_EQ(p.warnings[1], "malformed example! '|' or EOL expected after : \"|f a |\"");
  EXPECT_TRUE(p.ex.labeled);
}

TEST(VwTextFeatures, TabsSeparateFeatures) {
  const Parsed p = parse("1 |f\ta\t\tb  c|g\td");
  EXPECT_EQ(raw(p.ex), (Pairs{{h("a", ns("f")), 1.0f},
                              {h("b", ns("f")), 1.0f},
                              {h("c", ns("f")), 1.0f},
                              {h("d", ns("g")), 1.0f}}));
  EXPECT_TRUE(p.warnings.empty());
}

TEST(VwTextFeatures, DroppedGroupsAreSkipped) {
  ParseOptions options;
  options.drop_group[static_cast<unsigned char>('f')] = true;
  const Parsed p = parse("1 |feat a |g b |fun c:nan | d", options);
  EXPECT_EQ(raw(p.ex), (Pairs{{h("b", ns("g")), 1.0f}, {h("d", 0), 1.0f}}));
  expect_groups(p.ex, {{'g', 0, 1}, {' ', 1, 2}});
  EXPECT_EQ(p.warnings.size(), 1u);  // the dropped group is still read, as VW reads it
}

TEST(VwTextFeatures, HashAllAndSeed) {
  ParseOptions all;
  all.hash_mode = HashMode::kAll;
  const Parsed p = parse("1 |num 12 |s :green", all);
  EXPECT_EQ(masked(p.ex), (Pairs{{102697, 1.0f}, {233465, 1.0f}}));  // audit_hash_all.stdout
  ParseOptions seeded;
  seeded.hash_seed = 7;
  const Parsed q = parse("1 |f a 1", seeded);
  EXPECT_EQ(masked(q.ex), (Pairs{{124082, 1.0f}, {136889, 1.0f}}));  // audit_hash_seed7.stdout
}

TEST(VwTextFeatures, ValuesAreVwFloats) {
  const Parsed p = parse("|f a:1e-3 b:1.5e2 c:-0.25 d:0.000001 e:+2 g:0x10");
  ASSERT_EQ(p.ex.features.size(), 6u);
  EXPECT_EQ(p.ex.features[3].value, 9.99999884e-07f);  // VW's fast path, not strtof's 1e-6
  EXPECT_EQ(p.ex.features[1].value, 150.0f);
  EXPECT_EQ(p.ex.features[2].value, -0.25f);
  EXPECT_EQ(p.ex.features[4].value, 2.0f);
  EXPECT_EQ(p.ex.features[5].value, 16.0f);
}

// ---- the crafted oracle -----------------------------------------------------------------------------------

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

const std::string kHashes = std::string(LEPUS_SHARED_DIR) + "/oracles/vw/hashes/";

TEST(VwTextOracle, CraftedLinearIndicesMatchIndicesTsv) {
  if (!file_exists(kHashes + "crafted.vw") || !file_exists(kHashes + "indices.tsv")) {
    GTEST_SKIP() << "oracles/vw/hashes not available";
  }
  const auto lines = read_lines(kHashes + "crafted.vw");
  ASSERT_EQ(lines.size(), 11u);
  // Expected linear rows per line, in file order.
  std::vector<std::vector<std::pair<uint64_t, double>>> expected(lines.size());
  const auto rows = read_lines(kHashes + "indices.tsv");
  ASSERT_GT(rows.size(), 1u);
  for (size_t r = 1; r < rows.size(); ++r) {
    std::vector<std::string> cols;
    std::stringstream ss(rows[r]);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    ASSERT_GE(cols.size(), 7u) << rows[r];
    if (cols[1] != "1" || cols[2] == "(constant)") continue;
    const size_t line = std::stoul(cols[0]);
    ASSERT_GE(line, 1u);
    ASSERT_LE(line, lines.size());
    expected[line - 1].emplace_back(std::stoull(cols[6]), std::strtod(cols[5].c_str(), nullptr));
  }
  size_t total = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE("crafted.vw line " + std::to_string(i + 1));
    const Parsed p = parse(lines[i]);
    EXPECT_TRUE(p.warnings.empty());
    ASSERT_EQ(p.ex.features.size(), expected[i].size());
    for (size_t k = 0; k < expected[i].size(); ++k) {
      EXPECT_EQ(p.ex.features[k].index & kMask18, expected[i][k].first) << "feature " << k;
      EXPECT_NEAR(p.ex.features[k].value, expected[i][k].second, 1e-6 * std::fabs(expected[i][k].second))
          << "feature " << k;
      ++total;
    }
  }
  EXPECT_EQ(total, 50u);
}

// The audit files also cover --hash all and --hash_seed 7 (and show the tag on the prediction line).
void check_audit(const std::string& file, const ParseOptions& options) {
  if (!file_exists(kHashes + "crafted.vw") || !file_exists(kHashes + file)) {
    GTEST_SKIP() << "oracles/vw/hashes not available";
  }
  const auto lines = read_lines(kHashes + "crafted.vw");
  const auto audit = read_lines(kHashes + file);
  size_t example = 0;
  std::string tag;
  for (const std::string& a : audit) {
    if (a.empty()) continue;
    if (a[0] != '\t') {
      const size_t space = a.find(' ');
      tag = space == std::string::npos ? "" : a.substr(space + 1);
      continue;
    }
    ASSERT_LT(example, lines.size());
    SCOPED_TRACE(file + " example " + std::to_string(example + 1));
    const Parsed p = parse(lines[example], options);
    EXPECT_EQ(p.ex.tag, tag);
    std::vector<std::pair<uint64_t, double>> linear;
    std::stringstream ss(a.substr(1));
    std::string item;
    while (std::getline(ss, item, '\t')) {
      if (item.find('*') != std::string::npos || item.rfind("Constant:", 0) == 0) continue;
      // name:index:value:weight, where the name itself may hold ':' only in exotic inputs (not here).
      const size_t c3 = item.rfind(':');
      const size_t c2 = item.rfind(':', c3 - 1);
      const size_t c1 = item.rfind(':', c2 - 1);
      linear.emplace_back(std::stoull(item.substr(c1 + 1, c2 - c1 - 1)),
                          std::strtod(item.substr(c2 + 1, c3 - c2 - 1).c_str(), nullptr));
    }
    ASSERT_EQ(p.ex.features.size(), linear.size());
    for (size_t k = 0; k < linear.size(); ++k) {
      EXPECT_EQ(p.ex.features[k].index & kMask18, linear[k].first) << "feature " << k;
      EXPECT_NEAR(p.ex.features[k].value, linear[k].second, 1e-6 * std::fabs(linear[k].second));
    }
    ++example;
  }
  EXPECT_EQ(example, lines.size());
}

TEST(VwTextOracle, AuditDefault) { check_audit("audit.stdout", ParseOptions{}); }

TEST(VwTextOracle, AuditHashAll) {
  ParseOptions options;
  options.hash_mode = HashMode::kAll;
  check_audit("audit_hash_all.stdout", options);
}

TEST(VwTextOracle, AuditHashSeed7) {
  ParseOptions options;
  options.hash_seed = 7;
  check_audit("audit_hash_seed7.stdout", options);
}

// ---- the whole-feature fast paths, held to the general grammar ------------------------------------------------

uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// parse_vw_line (fast paths on) and parse_vw_line_general (off) must agree on everything a line yields.
void expect_same_as_general(std::string_view line, const ParseOptions& options = ParseOptions{}) {
  std::string trace = "line '";
  trace.append(line);
  trace += '\'';
  SCOPED_TRACE(trace);
  Parsed fast;
  Parsed general;
  CollectingSink fast_sink;
  CollectingSink general_sink;
  parse_vw_line(line, options, fast.ex, fast_sink);
  parse_vw_line_general(line, options, general.ex, general_sink);
  const Example& a = fast.ex;
  const Example& b = general.ex;
  EXPECT_EQ(a.empty, b.empty);
  EXPECT_EQ(a.labeled, b.labeled);
  EXPECT_EQ(float_bits(a.label), float_bits(b.label));
  EXPECT_EQ(float_bits(a.weight), float_bits(b.weight));
  EXPECT_EQ(float_bits(a.initial), float_bits(b.initial));
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_EQ(a.num_linear, b.num_linear);
  ASSERT_EQ(a.features.size(), b.features.size());
  for (size_t i = 0; i < a.features.size(); ++i) {
    EXPECT_EQ(a.features[i].index, b.features[i].index) << "feature " << i;
    EXPECT_EQ(float_bits(a.features[i].value), float_bits(b.features[i].value)) << "feature " << i;
  }
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t i = 0; i < a.groups.size(); ++i) {
    EXPECT_EQ(a.groups[i].ns, b.groups[i].ns);
    EXPECT_EQ(a.groups[i].begin, b.groups[i].begin);
    EXPECT_EQ(a.groups[i].end, b.groups[i].end);
  }
  EXPECT_EQ(fast_sink.messages, general_sink.messages);
}

// Option sets the fast paths depend on: --hash all and a dropped group switch them off, a seed changes the
// namespace hash they add, a namespace weight multiplies the value they read.
std::vector<ParseOptions> fast_path_option_sets() {
  std::vector<ParseOptions> sets(4);
  sets[1].hash_mode = HashMode::kAll;
  sets[2].hash_seed = 42;
  sets[3].drop_group[static_cast<unsigned char>('g')] = true;
  return sets;
}

const std::vector<std::string>& tricky_names() {
  static const std::vector<std::string> names = {"0",
                                                 "7",
                                                 "007",
                                                 "00000000",
                                                 "12345678",
                                                 "123456789",
                                                 "4294967295",
                                                 "4294967296",
                                                 "4294967297",
                                                 "18446744073709551615",
                                                 "18446744073709551616",
                                                 "99999999999999999999999999",
                                                 "-12",
                                                 "+12",
                                                 "12a",
                                                 "a12",
                                                 "1.5",
                                                 "1e5",
                                                 "\xD9\xA1\xD9\xA2" /* Arabic-Indic digits */,
                                                 "\xEF\xBC\x91" /* fullwidth 1 */,
                                                 "\xC3\xA9",
                                                 "12\v",
                                                 "\v12",
                                                 "1\x01",
                                                 "12\xFF",
                                                 "",
                                                 "a"};
  return names;
}

const std::vector<std::string>& tricky_values() {
  static const std::vector<std::string> values = {
      "", "1", "-1", "+1", "0", "-0", "0.0", "-0.0", ".5", "5.", "-.5", "1e5", "1E5", "1e+5", "1e-45",
      "1.4e-45", "1e-38", "1e-37", "1e38", "1e39", "3.5e38", "-3.5e38", "1e127", "1e128", "1e400", "1e-400",
      "6.2699720e-02", "-6.2699720e-02", "1.0517266e-01", "9.9999999e-01", "4294967296", "33554386",
      "16777216", "16777217", "0.16777217", "1234567.1234567", "12345678.1234567", "0.123456789012345678901",
      "007", "nan", "NaN", "inf", "-inf", "infinity", "0x10", "x", "abc", "-", ".", "e", "e5", "1e", "1e-",
      "1.5.5", "1:2", "1,5", "\xEF\xBC\x91", " 5", "5e0005", "5e999999", "123456789012345678901234567890",
      "1e30", "1e31", "9.9999999e37", "1.6777216e30", "1e-36", "1e-37", "1e-38", "5.5e-31", "0.0000001e-30",
      "1.6777215", "1.6777216", "1.6777217", "16.777217", "167772.17", "9999999.9", "0.12345678",
      "-1.2345678e-2",
      // The window's two-digit negative exponent ("e-02") and shapes next to it.
      "1.5E-02", "-1.5e-02", "1.5e-2", "1.5e-123", "1.5e-02e", "1.5e-0a", "1.5e-02.", "1.5e--2", "1.5e+02",
      "1.5e-99", "1.5e-36", "9.9999999e-37", "1.5e-:2", "1.5e-02:", "1.5f-02", "1.5e-02-", "12.5e-02",
      "-.5e-02"};
  return values;
}

TEST(VwTextFastPath, TrickyTokensMatchTheGeneralParse) {
  const std::string filler =
      " 1:1 22:0.25 333:-1.5e-3 4444:7 55555:0.5 6:6";  // enough for the 32-byte window
  int lines = 0;
  for (const ParseOptions& options : fast_path_option_sets()) {
    for (const std::string& name : tricky_names()) {
      for (const std::string& value : tricky_values()) {
        for (const std::string& token : {name + ":" + value, name}) {
          // First (window path), last (byte path, or the general one near the end), and in a weighted namespace.
          for (const std::string& line :
               {"1 |f " + token + filler, "1 |f" + filler + " " + token, "-1 2 'tag |g:0.5 " + token + filler,
                "|f:1e38 " + token + "\t" + token + filler, "1 | " + token + " " + token,
                "0 |f:0 " + token + filler, "|g " + token + filler + "|f " + token + filler}) {
            expect_same_as_general(line, options);
            ++lines;
          }
        }
      }
    }
  }
  EXPECT_GT(lines, 10000);
}

TEST(VwTextFastPath, NumbersReachingTheWindowsEnd) {
  // The fast path looks at 32 bytes from the feature's start: a number whose digits run up to or past that must
  // not be cut short (leading zeros keep the mantissa and exponent in range however long they are).
  for (const std::string& token :
       {std::string("12345678:-0000000.0000001e-0000"), std::string("12345678:-0000000.0000001e-00001"),
        std::string("12345678:-0000000.0000001e-000012"), std::string("12345678:-0000000.0000001e-0000123"),
        std::string("12345678:0000000.0000001e-000012"), std::string("1234567:-0000000.0000001e-0000012"),
        std::string("12345678:0000000.00000015"), std::string("12345678:00000000000000000000005")}) {
    for (const std::string& after : {std::string(" 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8"), std::string("\t9:9"),
                                     std::string("|g 1:1"), std::string("x 1:1 2:2 3:3 4:4 5:5 6:6 7:7")}) {
      expect_same_as_general("1 |f " + token + after);
    }
  }
}

TEST(VwTextFastPath, IntegerNamesHashAsVwDoes) {
  // VW's hashstring: an all-digit name is its decimal value (mod 2^64, truncated to 32 bits) plus the namespace
  // hash, with no murmur; what the fast path computes while scanning.
  const uint32_t f = ns("f");
  const Parsed p =
      parse("1 |f 007:0.5 4294967296:1 4294967297:1 18446744073709551617:1 12:2 1:1 2:2 3:3 4:4 5:5");
  ASSERT_EQ(p.ex.features.size(), 10u);
  EXPECT_EQ(p.ex.features[0].index, static_cast<uint32_t>(7u + f));
  EXPECT_EQ(p.ex.features[1].index, static_cast<uint64_t>(f));       // 2^32 truncates to 0
  EXPECT_EQ(p.ex.features[2].index, static_cast<uint32_t>(1u + f));  // 2^32 + 1 to 1
  EXPECT_EQ(p.ex.features[3].index, static_cast<uint32_t>(1u + f));  // 2^64 + 1 wraps to 1
  EXPECT_EQ(p.ex.features[4].index, static_cast<uint32_t>(12u + f));
  EXPECT_EQ(p.ex.features[4].value, 2.0f);
  EXPECT_EQ(p.ex.features[0].index, h("007", f));
  EXPECT_EQ(p.ex.features[4].index, h("12", f));
}

TEST(VwTextFastPath, RandomLinesMatchTheGeneralParse) {
  std::mt19937 rng(7);
  const std::string bytes = "0123456789012345678901234567890123456789.-eE+: \t|abx\r\v\n";
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d += static_cast<char>('0' + rng() % 10);
    return d;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string line = rng() % 2 ? "1 " : "-1 0.5 ";
    line += rng() % 4 == 0 ? "|g" : "|f";
    // A namespace weight, including ones that make products overflow (1e38) or vanish (0, 1e-30).
    static const char* const kWeights[] = {":0.5", ":2", ":-1", ":0", ":1e38", ":1e-30", ":1"};
    if (rng() % 3 == 0) line += kWeights[rng() % 7];
    const int features = static_cast<int>(rng() % 40);
    for (int k = 0; k < features; ++k) {
      line += rng() % 8 == 0 ? "\t" : " ";
      switch (rng() % 6) {
        case 0:  // random bytes
          for (int n = static_cast<int>(rng() % 12); n > 0; --n) line += bytes[rng() % bytes.size()];
          break;
        case 1: line += digits(1 + static_cast<int>(rng() % 12)); break;
        default: {  // name:number in the shapes data files use
          line += digits(1 + static_cast<int>(rng() % 9)) + ":";
          if (rng() % 4 == 0) line += '-';
          line += digits(static_cast<int>(rng() % 9));
          if (rng() % 3) {
            line += '.';
            line += digits(static_cast<int>(rng() % 10));
          }
          if (rng() % 3 == 0) {
            line += rng() % 2 ? "e-" : "E";
            // Exponents around the window path's limits (10^30, 10^-37) and the table's (10^38).
            line += rng() % 2 ? digits(static_cast<int>(rng() % 4)) : std::to_string(25 + rng() % 25);
          }
        }
      }
    }
    if (rng() % 10 == 0) line += " |h a b:2";
    expect_same_as_general(line);
    if (::testing::Test::HasFailure()) return;
  }
}

// The fast path writes into room it makes at the example's end: a short line must not leave the example with
// room for many more features than it has, since every example of a batch keeps its capacity (a 5M-line log of
// short lines took twice the memory when 256 features' room was made up front).
TEST(VwTextFastPath, RoomFollowsTheLine) {
  for (const char* line : {"1 |a 1:0.5 2:1 3", "1 |a x y z |b 4:1 |c w", "-1 |a 7:1.5 |b 8:2 |c 9:3 |d 10"}) {
    SCOPED_TRACE(line);
    Example ex;
    CollectingSink sink;
    parse_vw_line(line, ParseOptions{}, ex, sink);
    EXPECT_GE(ex.features.size(), 3u);
    EXPECT_LE(ex.features.capacity(), 16u);
  }
  std::string wide = "1 |f";  // and a long line still gets every feature
  for (int i = 0; i < 1000; ++i) wide += " " + std::to_string(i + 1) + ":0.25";
  Example ex;
  CollectingSink sink;
  parse_vw_line(wide, ParseOptions{}, ex, sink);
  EXPECT_EQ(ex.features.size(), 1000u);
  EXPECT_LE(ex.features.capacity(), 2048u);
  expect_same_as_general(wide);
}

}  // namespace
}  // namespace lepus

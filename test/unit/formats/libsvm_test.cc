// parse_libsvm_line: the grammar, and equality with VW's parse of the converted a9a oracle input.
#include "formats/libsvm.h"

#include <gtest/gtest.h>

#include <zlib.h>
#include "collecting_sink.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/vw_text.h"

namespace lepus {
namespace {

constexpr uint64_t kMask18 = (1u << 18) - 1;

using testing::CollectingSink;
using testing::Parsed;

Parsed parse(std::string_view line, const ParseOptions& options = ParseOptions{}) {
  Parsed out;
  CollectingSink sink;
  parse_libsvm_line(line, options, out.ex, sink);
  out.warnings = std::move(sink.messages);
  return out;
}

Parsed parse_vw(std::string_view line, const ParseOptions& options = ParseOptions{}) {
  Parsed out;
  CollectingSink sink;
  parse_vw_line(line, options, out.ex, sink);
  out.warnings = std::move(sink.messages);
  return out;
}

uint32_t f_hash() { return hash_feature("f", 0, HashMode::kStrings); }
uint64_t f_index(std::string_view name) { return hash_feature(name, f_hash(), HashMode::kStrings); }

using Pairs = std::vector<std::pair<uint64_t, float>>;

Pairs raw(const Example& ex) {
  Pairs out;
  for (const Feature& f : ex.features) out.emplace_back(f.index, f.value);
  return out;
}

// Same label, groups, indices and bit-identical values.
void expect_same(const Example& a, const Example& b) {
  EXPECT_EQ(a.empty, b.empty);
  EXPECT_EQ(a.labeled, b.labeled);
  EXPECT_EQ(std::bit_cast<uint32_t>(a.label), std::bit_cast<uint32_t>(b.label));
  EXPECT_EQ(a.weight, b.weight);
  EXPECT_EQ(a.num_linear, b.num_linear);
  ASSERT_EQ(a.features.size(), b.features.size());
  for (size_t i = 0; i < a.features.size(); ++i) {
    EXPECT_EQ(a.features[i].index, b.features[i].index) << "feature " << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(a.features[i].value), std::bit_cast<uint32_t>(b.features[i].value))
        << "feature " << i;
  }
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (size_t i = 0; i < a.groups.size(); ++i) {
    EXPECT_EQ(a.groups[i].ns, b.groups[i].ns);
    EXPECT_EQ(a.groups[i].begin, b.groups[i].begin);
    EXPECT_EQ(a.groups[i].end, b.groups[i].end);
  }
}

TEST(Libsvm, PositiveLabelMapsLabelsAsText) {
  ParseOptions o;
  o.has_positive_label = true;
  o.positive_label = "2";
  const Parsed a = parse("2 1:1", o);
  EXPECT_EQ(a.ex.label, 1.0f);
  EXPECT_TRUE(a.warnings.empty());
  EXPECT_EQ(parse("1 1:1", o).ex.label, -1.0f);
  EXPECT_EQ(parse("+2 1:1", o).ex.label, -1.0f);
}

TEST(Libsvm, InfiniteValueOrLabelIsMalformed) {
  const Parsed a = parse("1 1:inf 2:1e39 3:2");
  EXPECT_EQ(a.ex.features.size(), 1u);
  EXPECT_EQ(a.warnings.size(), 2u);
  const Parsed b = parse("inf 1:1");
  EXPECT_EQ(b.ex.label, 0.0f);
  EXPECT_EQ(b.warnings.size(), 1u);
}

TEST(Libsvm, BasicLine) {
  const Parsed p = parse("+1 1:0.5 3:1 10:-2 # a comment 4:4");
  EXPECT_FALSE(p.ex.empty);
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label, 1.0f);
  EXPECT_EQ(p.ex.weight, 1.0f);
  EXPECT_EQ(raw(p.ex), (Pairs{{f_index("1"), 0.5f}, {f_index("3"), 1.0f}, {f_index("10"), -2.0f}}));
  EXPECT_EQ(p.ex.features[0].index & kMask18, 34876u);  // f^1, VW 9.11.2's index
  ASSERT_EQ(p.ex.groups.size(), 1u);
  EXPECT_EQ(p.ex.groups[0].ns, 'f');
  EXPECT_EQ(p.ex.groups[0].begin, 0u);
  EXPECT_EQ(p.ex.groups[0].end, 3u);
  EXPECT_EQ(p.ex.num_linear, 3u);
  EXPECT_TRUE(p.warnings.empty());
}

TEST(Libsvm, ZeroBasedIndexIsJustAName) {
  const Parsed p = parse("0 0:1.5\t007:2");
  EXPECT_EQ(p.ex.label, 0.0f);
  EXPECT_TRUE(p.ex.labeled);
  // `--hash strings`: all-digit names hash to their value plus the namespace hash, so 007 == 7.
  EXPECT_EQ(raw(p.ex), (Pairs{{uint64_t{f_hash()} + 0, 1.5f}, {uint64_t{f_hash()} + 7, 2.0f}}));
}

TEST(Libsvm, QidIsIgnored) {
  const Parsed p = parse("2 qid:17 1:1 2:3");
  EXPECT_EQ(p.ex.label, 2.0f);
  EXPECT_EQ(raw(p.ex), (Pairs{{f_index("1"), 1.0f}, {f_index("2"), 3.0f}}));
  EXPECT_TRUE(p.warnings.empty());
}

TEST(Libsvm, BadTokensAreSkippedWithAWarning) {
  const Parsed p = parse("-1 1:1 bad 2:x 3:0 :5 4:2 5:1,5 6:nan");
  EXPECT_EQ(p.ex.label, -1.0f);
  EXPECT_EQ(raw(p.ex), (Pairs{{f_index("1"), 1.0f}, {f_index("4"), 2.0f}}));  // 3:0 is dropped silently
  ASSERT_EQ(p.warnings.size(), 5u);
  EXPECT_NE(p.warnings[0].find("'bad'"), std::string::npos);
  EXPECT_NE(p.warnings[1].find("'2:x'"), std::string::npos);
  EXPECT_NE(p.warnings[2].find("':5'"), std::string::npos);
  EXPECT_NE(p.warnings[3].find("'5:1,5'"), std::string::npos);
  EXPECT_NE(p.warnings[4].find("'6:nan'"), std::string::npos);
}

TEST(Libsvm, BadLabelReadsAsZero) {
  const Parsed p = parse("abc 1:1");
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_EQ(p.ex.label, 0.0f);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0], "'abc' is not a good float, replacing with 0");
  EXPECT_EQ(p.ex.features.size(), 1u);
}

TEST(Libsvm, EmptyAndCommentLines) {
  EXPECT_TRUE(parse("").ex.empty);
  EXPECT_TRUE(parse("   \t ").ex.empty);
  EXPECT_TRUE(parse("# just a comment").ex.empty);
  EXPECT_TRUE(parse("\r").ex.empty);
  EXPECT_TRUE(parse("\xEF\xBB\xBF").ex.empty);
  const Parsed p = parse("1");
  EXPECT_FALSE(p.ex.empty);
  EXPECT_TRUE(p.ex.labeled);
  EXPECT_TRUE(p.ex.features.empty());
  EXPECT_TRUE(p.ex.groups.empty());
}

TEST(Libsvm, BomAndCarriageReturn) {
  const Parsed p = parse("\xEF\xBB\xBF-1 2:0.25\r");
  EXPECT_EQ(p.ex.label, -1.0f);
  EXPECT_EQ(raw(p.ex), (Pairs{{f_index("2"), 0.25f}}));
  EXPECT_TRUE(p.warnings.empty());
}

TEST(Libsvm, NamespaceOptionAndDropGroup) {
  ParseOptions options;
  options.libsvm_namespace = "abc";
  const Parsed p = parse("1 5:2", options);
  const uint32_t nshash = hash_feature("abc", 0, HashMode::kStrings);
  EXPECT_EQ(raw(p.ex), (Pairs{{hash_feature("5", nshash, HashMode::kStrings), 2.0f}}));
  ASSERT_EQ(p.ex.groups.size(), 1u);
  EXPECT_EQ(p.ex.groups[0].ns, 'a');

  options.drop_group[static_cast<unsigned char>('a')] = true;
  const Parsed q = parse("1 5:2", options);
  EXPECT_TRUE(q.ex.labeled);
  EXPECT_TRUE(q.ex.features.empty());
  EXPECT_TRUE(q.ex.groups.empty());
  EXPECT_EQ(q.ex.num_linear, 0u);
}

TEST(Libsvm, HashModesAndSeedMatchTheVwConversion) {
  for (const HashMode mode : {HashMode::kStrings, HashMode::kAll}) {
    for (const uint32_t seed : {0u, 7u}) {
      ParseOptions options;
      options.hash_mode = mode;
      options.hash_seed = seed;
      SCOPED_TRACE(std::to_string(seed));
      expect_same(parse("+1 3:1 11:0.5 14:1e-3 19:-2", options).ex,
                  parse_vw("1 |f 3:1 11:0.5 14:1e-3 19:-2", options).ex);
      options.libsvm_namespace = "";
      expect_same(parse("-1 3:1 x:2", options).ex, parse_vw("-1 | 3:1 x:2", options).ex);
    }
  }
}

// Reads up to max_lines lines of a gzip file (without their '\n').
std::vector<std::string> read_gz_lines(const std::string& path, size_t max_lines) {
  std::vector<std::string> lines;
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return lines;
  std::string line;
  char buffer[4096];
  while (lines.size() < max_lines && gzgets(file, buffer, sizeof(buffer)) != nullptr) {
    line += buffer;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      lines.push_back(line);
      line.clear();
    }
  }
  if (!line.empty() && lines.size() < max_lines) lines.push_back(line);
  gzclose(file);
  return lines;
}

TEST(Libsvm, A9aMatchesTheVwConversionExactly) {
  const std::string libsvm_path = std::string(LEPUS_SHARED_DIR) + "/data/a9a/a9a.gz";
  const std::string vw_path = std::string(LEPUS_SHARED_DIR) + "/oracles/vw/inputs/a9a.vw.gz";
  if (!std::ifstream(libsvm_path).good() || !std::ifstream(vw_path).good()) {
    GTEST_SKIP() << "a9a data or its VW conversion not available";
  }
  const auto libsvm_lines = read_gz_lines(libsvm_path, 2000);
  const auto vw_lines = read_gz_lines(vw_path, 2000);
  ASSERT_EQ(libsvm_lines.size(), 2000u);
  ASSERT_EQ(vw_lines.size(), 2000u);
  size_t features = 0;
  size_t positives = 0;
  for (size_t i = 0; i < libsvm_lines.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(i + 1));
    const Parsed a = parse(libsvm_lines[i]);
    const Parsed b = parse_vw(vw_lines[i]);
    EXPECT_TRUE(a.warnings.empty());
    EXPECT_TRUE(b.warnings.empty());
    expect_same(a.ex, b.ex);
    features += a.ex.features.size();
    if (a.ex.label == 1.0f) ++positives;
  }
  EXPECT_GT(features, 2000u * 10);  // a9a rows hold ~14 active features each
  EXPECT_GT(positives, 0u);
}

}  // namespace
}  // namespace lepus

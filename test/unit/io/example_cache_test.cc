// The example cache's records: scalar, multiclass and cost-sensitive examples round-trip through a record and
// through a cache file; a version-1 cache is refused; damaged label fields are malformed records.
#include "io/example_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "lepus/errors.h"

namespace lepus {
namespace {

Example make_example(uint64_t line, std::string tag) {
  Example ex;
  ex.line = line;
  ex.tag = std::move(tag);
  ex.features = {{11, 1.0f}, {12, -2.5f}, {0x123456789ull, 0.25f}};
  ex.groups = {{'a', 0, 2}, {' ', 2, 3}};
  ex.num_linear = 3;
  return ex;
}

// Every kind of label the parsers make, labeled and not.
std::vector<Example> label_zoo() {
  std::vector<Example> out;
  Example scalar = make_example(1, "s");
  scalar.labeled = true;
  scalar.label = -1.5f;
  scalar.weight = 2.0f;
  scalar.initial = 0.5f;
  out.push_back(scalar);

  Example unlabeled = make_example(2, "");
  out.push_back(unlabeled);

  Example multiclass = make_example(3, "m");
  multiclass.labeled = true;
  multiclass.label_kind = LabelKind::kMulticlass;
  multiclass.classes = {{7, 0.0f}};
  multiclass.weight = 3.0f;
  out.push_back(multiclass);

  Example multiclass_zero = make_example(4, "");
  multiclass_zero.labeled = true;
  multiclass_zero.label_kind = LabelKind::kMulticlass;
  multiclass_zero.classes = {{0, 0.0f}};
  out.push_back(multiclass_zero);

  Example multiclass_unlabeled = make_example(5, "bad label");
  multiclass_unlabeled.label_kind = LabelKind::kMulticlass;
  out.push_back(multiclass_unlabeled);

  Example costs = make_example(6, "c");
  costs.labeled = true;
  costs.label_kind = LabelKind::kCostSensitive;
  costs.classes = {{2, 0.5f}, {1, 1.0f}, {3, FLT_MAX}, {4000000000u, -0.25f}};
  out.push_back(costs);

  Example costs_unknown = make_example(7, "");
  costs_unknown.label_kind = LabelKind::kCostSensitive;
  costs_unknown.classes = {{1, FLT_MAX}, {2, FLT_MAX}};
  out.push_back(costs_unknown);

  Example no_features;
  no_features.line = 8;
  no_features.labeled = true;
  no_features.label_kind = LabelKind::kCostSensitive;
  no_features.classes = {{1, 0.0f}};
  out.push_back(no_features);
  return out;
}

void expect_same(const Example& got, const Example& want) {
  EXPECT_EQ(got.line, want.line);
  EXPECT_EQ(got.labeled, want.labeled) << "line " << want.line;
  EXPECT_EQ(got.label_kind, want.label_kind) << "line " << want.line;
  EXPECT_EQ(got.label, want.label) << "line " << want.line;
  EXPECT_EQ(got.weight, want.weight) << "line " << want.line;
  EXPECT_EQ(got.initial, want.initial) << "line " << want.line;
  EXPECT_EQ(got.tag, want.tag) << "line " << want.line;
  ASSERT_EQ(got.classes.size(), want.classes.size()) << "line " << want.line;
  for (size_t i = 0; i < want.classes.size(); ++i) {
    EXPECT_EQ(got.classes[i].klass, want.classes[i].klass) << "line " << want.line << " class " << i;
    EXPECT_EQ(got.classes[i].cost, want.classes[i].cost) << "line " << want.line << " class " << i;
  }
  EXPECT_EQ(got.num_linear, want.num_linear) << "line " << want.line;
  ASSERT_EQ(got.features.size(), want.features.size()) << "line " << want.line;
  for (size_t i = 0; i < want.features.size(); ++i) {
    EXPECT_EQ(got.features[i].index, want.features[i].index) << "line " << want.line;
    EXPECT_EQ(got.features[i].value, want.features[i].value) << "line " << want.line;
  }
  ASSERT_EQ(got.groups.size(), want.groups.size()) << "line " << want.line;
  for (size_t i = 0; i < want.groups.size(); ++i) {
    EXPECT_EQ(got.groups[i].ns, want.groups[i].ns) << "line " << want.line;
    EXPECT_EQ(got.groups[i].begin, want.groups[i].begin) << "line " << want.line;
    EXPECT_EQ(got.groups[i].end, want.groups[i].end) << "line " << want.line;
  }
}

// Decodes into one reused Example, as the driver does, so a record must replace every label field of the one
// before (the zoo alternates kinds).
std::vector<Example> decode_all(const char* p, const char* end) {
  std::vector<Example> out;
  Example ex;
  while (p < end) {
    p = decode_cache_record(p, end, ex, "test");
    out.push_back(ex);
  }
  return out;
}

TEST(ExampleCacheRecord, EveryLabelKindRoundTrips) {
  const std::vector<Example> zoo = label_zoo();
  std::vector<char> bytes;
  for (const Example& ex : zoo) encode_cache_record(ex, bytes);
  const std::vector<Example> back = decode_all(bytes.data(), bytes.data() + bytes.size());
  ASSERT_EQ(back.size(), zoo.size());
  for (size_t i = 0; i < zoo.size(); ++i) expect_same(back[i], zoo[i]);
}

TEST(ExampleCacheRecord, ScalarRecordsCarryNoClassList) {
  // length | line | labeled | kind | label, weight, initial | tag | groups | features: only the kind byte is
  // new.
  const Example ex = label_zoo()[0];
  std::vector<char> bytes;
  encode_cache_record(ex, bytes);
  EXPECT_EQ(bytes.size(), 4u + 8 + 1 + 1 + 12 + (4 + 1) + (2 + 2 * 5) + 3 * 12);
  EXPECT_EQ(bytes[12], 1);  // labeled
  EXPECT_EQ(bytes[13], 0);  // LabelKind::kScalar
  // A multiclass record adds its class count and one (class, cost) pair.
  std::vector<char> multiclass;
  encode_cache_record(label_zoo()[2], multiclass);
  EXPECT_EQ(multiclass.size(), 4u + 8 + 1 + 1 + 12 + (4 + 8) + (4 + 1) + (2 + 2 * 5) + 3 * 12);
  EXPECT_EQ(multiclass[13], static_cast<char>(LabelKind::kMulticlass));
}

TEST(ExampleCacheRecord, DamagedLabelFieldsAreMalformed) {
  std::vector<char> good;
  encode_cache_record(label_zoo()[5], good);  // four classes
  constexpr size_t kKind = 13, kCount = 4 + 8 + 1 + 1 + 12;
  Example ex;
  ASSERT_NO_THROW(decode_cache_record(good.data(), good.data() + good.size(), ex, "test"));

  std::vector<char> bad = good;
  bad[kKind] = 3;  // no such label kind
  EXPECT_THROW(decode_cache_record(bad.data(), bad.data() + bad.size(), ex, "test"), IoError);

  // Class counts beyond the record's bytes, up to one that would ask for 32 GiB, are refused before any
  // allocation.
  for (const uint32_t count : {5u, 1000u, 0xFFFFFFFFu}) {
    bad = good;
    std::memcpy(bad.data() + kCount, &count, 4);
    EXPECT_THROW(decode_cache_record(bad.data(), bad.data() + bad.size(), ex, "test"), IoError) << count;
  }
  // A count that fits the record but leaves the rest misread is caught by the later fields' checks.
  bad = good;
  const uint32_t fewer = 3;
  std::memcpy(bad.data() + kCount, &fewer, 4);
  EXPECT_THROW(decode_cache_record(bad.data(), bad.data() + bad.size(), ex, "test"), IoError);

  // A record cut inside its class list.
  bad.assign(good.begin(), good.begin() + static_cast<long>(kCount + 4 + 12));
  const uint32_t len = static_cast<uint32_t>(bad.size() - 4);
  std::memcpy(bad.data(), &len, 4);
  EXPECT_THROW(decode_cache_record(bad.data(), bad.data() + bad.size(), ex, "test"), IoError);
}

// A scratch directory of its own per test (ctest runs tests as parallel processes), removed afterwards.
class ExampleCacheFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("lepus_cache_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

std::vector<Example> read_cache(CacheReader& reader, size_t block) {
  std::vector<Example> out;
  ByteBuffer buf;
  while (reader.next_block(buf, block)) {
    std::vector<Example> part = decode_all(buf.data(), buf.data() + buf.size());
    for (Example& ex : part) out.push_back(std::move(ex));
  }
  return out;
}

TEST_F(ExampleCacheFile, EveryLabelKindRoundTrips) {
  const std::vector<Example> zoo = label_zoo();
  for (const bool compressed : {false, true}) {
    const std::string file = path(compressed ? "zoo.cache.gz" : "zoo.cache");
    {
      CacheWriter writer(file, "fp", compressed);
      for (const Example& ex : zoo) writer.append(ex);
      writer.finish();
    }
    std::string why;
    const std::unique_ptr<CacheReader> reader = CacheReader::open(file, "fp", &why);
    ASSERT_TRUE(reader) << why;
    for (const size_t block : {size_t{1}, size_t{1} << 16}) {
      reader->rewind();
      const std::vector<Example> back = read_cache(*reader, block);
      ASSERT_EQ(back.size(), zoo.size()) << "compressed " << compressed << ", block " << block;
      for (size_t i = 0; i < zoo.size(); ++i) expect_same(back[i], zoo[i]);
    }
  }
}

TEST_F(ExampleCacheFile, AVersionOneCacheIsRefused) {
  const std::string file = path("old.cache");
  {
    CacheWriter writer(file, "fp");
    writer.append(label_zoo()[0]);
    writer.finish();
  }
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  EXPECT_EQ(version, kCacheVersion);
  EXPECT_GE(kCacheVersion, 2u);  // 1 held scalar labels only
  // The version is not covered by the records' checksum, so this is a well-formed cache of version 1.
  version = 1;
  std::memcpy(bytes.data() + 8, &version, 4);
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string why;
  EXPECT_FALSE(CacheReader::open(file, "fp", &why));
  EXPECT_EQ(why, "cache format version 1");
}

}  // namespace
}  // namespace lepus

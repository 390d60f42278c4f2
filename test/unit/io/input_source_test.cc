// Input sources: gzip recognised by magic, concatenated members, truncation detected, and ISA-L and zlib
// giving the same bytes.
#include "io/input_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "io/block_reader.h"
#include "lepus/errors.h"

namespace lepus {
namespace {

std::string slurp(InputSource& s, size_t chunk = 65536) {
  std::string out;
  std::vector<char> buf(chunk);
  for (;;) {
    const size_t n = s.read(buf.data(), buf.size());
    if (n == 0) return out;
    out.append(buf.data(), n);
  }
}

std::string scratch() {
  const auto d = std::filesystem::temp_directory_path() / ("lepus_src_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

const std::string kGz = LEPUS_TEST_DATA "/vw/inputs/rcv1_small.vw.gz";

TEST(InputSource, GzipBackendsAgreeWithGzip) {
  const std::string d = scratch();
  ASSERT_EQ(std::system(("gzip -dc " + kGz + " > " + d + "/plain").c_str()), 0);
  std::ifstream in(d + "/plain", std::ios::binary);
  const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(expected.size(), 1000000u);
  auto z = InputSource::open(kGz, InputSource::Gzip::kZlib);
  EXPECT_EQ(slurp(*z), expected);
  auto p = InputSource::open(d + "/plain");
  EXPECT_EQ(slurp(*p, 777), expected);
  if (InputSource::have_isal()) {
    auto i = InputSource::open(kGz, InputSource::Gzip::kIsal);
    EXPECT_EQ(slurp(*i, 1000), expected);
  }
  std::filesystem::remove_all(d);
}

TEST(InputSource, ConcatenatedMembersAndTruncation) {
  const std::string d = scratch();
  ASSERT_EQ(
      std::system(
          ("printf 'a b\\n' | gzip > " + d + "/two.gz; printf 'c d\\n' | gzip >> " + d + "/two.gz").c_str()),
      0);
  ASSERT_EQ(std::system(("head -c 200000 " + kGz + " > " + d + "/cut.gz").c_str()), 0);
  for (auto kind : {InputSource::Gzip::kZlib, InputSource::Gzip::kIsal}) {
    if (kind == InputSource::Gzip::kIsal && !InputSource::have_isal()) continue;
    auto two = InputSource::open(d + "/two.gz", kind);
    EXPECT_EQ(slurp(*two), "a b\nc d\n");
    auto cut = InputSource::open(d + "/cut.gz", kind);
    EXPECT_THROW(slurp(*cut), IoError);
  }
  std::filesystem::remove_all(d);
}

TEST(BlockReader, BlocksEndAtLineEnds) {
  const std::string d = scratch();
  std::ofstream(d + "/f") << "one\ntwo two\nthree three three\nno newline at end";
  BlockReader r(InputSource::open(d + "/f"), 8);  // tiny blocks: lines longer than a block still come whole
  ByteBuffer b;
  std::string all;
  int blocks = 0;
  while (r.next(b)) {
    ++blocks;
    const std::string s(b.begin(), b.end());
    if (s.find("no newline") == std::string::npos) {
      EXPECT_EQ(s.back(), '\n');
    }
    all += s;
  }
  EXPECT_EQ(all, "one\ntwo two\nthree three three\nno newline at end");
  EXPECT_GE(blocks, 3);
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace lepus

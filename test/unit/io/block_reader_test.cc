// BlockReader's line count (the line a damage note or a too-long-line error names): exact over inputs whose
// runs of newlines overflow any 8-bit counter, with and without a last line end, whatever the block size. Its
// line ends: a classic Mac OS file (lone CRs) read as lines, plain or compressed, CRLF and LF as they are;
// CSV blocks that end only at record ends.
#include "io/block_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

namespace lepus {
namespace {

TEST(BlockReader, CountsLinesExactly) {
  const auto dir = std::filesystem::temp_directory_path() / ("lepus_blk_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string text;
  uint32_t x = 5;
  for (int i = 0; i < 20000; ++i) {
    x = x * 1664525u + 1013904223u;
    text += std::string(x % 7 == 0 ? 0 : x % 41, 'a');  // empty lines too: runs of '\n' of any length
    text += x % 13 == 0 ? std::string(300, '\n') : "\n";
  }
  for (bool last_newline : {true, false}) {
    const std::string content = last_newline ? text : text + "tail";
    const std::string path = (dir / "f").string();
    std::ofstream(path, std::ios::binary) << content;
    const uint64_t expected =
        static_cast<uint64_t>(std::count(content.begin(), content.end(), '\n')) + (last_newline ? 0 : 1);
    for (size_t block : {size_t{17}, size_t{4096}, size_t{1} << 20}) {
      BlockReader r(InputSource::open(path), block);
      ByteBuffer b;
      std::string all;
      while (r.next(b)) all.append(b.begin(), b.end());
      EXPECT_TRUE(all == content);
      EXPECT_EQ(r.lines_read(), expected) << "block " << block;
    }
  }
  std::filesystem::remove_all(dir);
}

// count_newlines against std::count at every length up to a few vectors past 255 64-byte steps (where its 8-bit
// lanes are emptied) and at every offset, over text dense and sparse in newlines.
TEST(BlockReader, CountNewlinesIsStdCount) {
  std::string text(255 * 64 * 2 + 300, 'x');
  uint32_t x = 11;
  for (char& c : text) {
    x = x * 1664525u + 1013904223u;
    if ((x >> 24) % 3 == 0) c = '\n';
  }
  std::string dense(255 * 64 + 200, '\n');
  for (const std::string* t : {&text, &dense}) {
    for (size_t offset = 0; offset < 20; ++offset) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{47}, size_t{63}, size_t{64},
                       size_t{65}, size_t{127}, size_t{255 * 64}, size_t{255 * 64 + 17},
                       size_t{255 * 64 + 64 * 3 + 5}, t->size() - offset}) {
        if (offset + n > t->size()) continue;
        const char* p = t->data() + offset;
        ASSERT_EQ(count_newlines(p, n), static_cast<size_t>(std::count(p, p + n, '\n')))
            << offset << " " << n;
      }
    }
  }
}

struct Read {
  std::vector<std::string> blocks;
  uint64_t lines = 0;
  std::string all() const {
    std::string a;
    for (const auto& b : blocks) a += b;
    return a;
  }
};

Read read_all(const std::string& path, size_t block, int csv_delimiter = -1) {
  BlockReader r(InputSource::open(path), block, kDefaultMaxLineBytes, false, csv_delimiter);
  Read out;
  ByteBuffer b;
  while (r.next(b)) out.blocks.emplace_back(b.begin(), b.end());
  out.lines = r.lines_read();
  return out;
}

class LineEnds : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("lepus_ends_" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << content;
    return dir_ + "/" + name;
  }
  std::string dir_;
};

// Lines ended by a CR alone (classic Mac OS) are lines, whatever the block size (a CR at a block's end waits
// for the byte after it), with or without a last line end, plain, gzip and zstd; a CRLF inside such a file is
// one line end.
TEST_F(LineEnds, LoneCrEndsLinesInAClassicMacFile) {
  const std::string mac = "1 |f a\r-1 |f b c\r1 |f d\r\r2 |f e\r\n3 |f g\r";
  const std::string lf = "1 |f a\n-1 |f b c\n1 |f d\n\n2 |f e\r\n3 |f g\n";
  for (bool last_end : {true, false}) {
    const std::string content = last_end ? mac : mac.substr(0, mac.size() - 1);
    const std::string expected = last_end ? lf : lf.substr(0, lf.size() - 1);
    const std::string path = write("mac.vw", content);
    std::vector<std::string> paths = {path};
    if (std::system(("gzip -c " + path + " > " + path + ".gz").c_str()) == 0) paths.push_back(path + ".gz");
    if (std::system(("command -v zstd > /dev/null && zstd -q -c " + path + " > " + path + ".zst").c_str()) ==
        0)
      paths.push_back(path + ".zst");
    ASSERT_GE(paths.size(), 2u) << "gzip is needed";
    for (const auto& p : paths) {
      for (size_t block : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{4096}}) {
        const Read r = read_all(p, block);
        EXPECT_EQ(r.all(), expected) << p << " block " << block;
        EXPECT_EQ(r.lines, 6u) << p << " block " << block;
        for (const auto& b : r.blocks) {
          if (&b != &r.blocks.back() || last_end) {
            EXPECT_EQ(b.back(), '\n') << p << " block " << block;
          }
        }
      }
    }
  }
}

// LF and CRLF files (their first line end is LF or CRLF) are read as they are, byte for byte; a CR inside a
// line of such a file stays (VW's parser decides what it means). A file whose first line end is a lone CR is
// a CR file: its later lone CRs end lines too, its LFs and CRLFs still do.
TEST_F(LineEnds, LfAndCrlfFilesAreReadAsTheyAre) {
  const std::string path = write("cr_first.vw", "a\rb\r\nc\rd\r\ne\n");
  for (size_t block : {size_t{1}, size_t{2}, size_t{4096}}) {
    const Read r = read_all(path, block);
    EXPECT_EQ(r.all(), "a\nb\r\nc\nd\r\ne\n") << block;
    EXPECT_EQ(r.lines, 5u) << block;
  }
  for (const std::string content :
       {"1 |f a\r\n-1 |f b\r\n", "1 |f a\n-1 |f b\rc\n1 |f d\n", "x\r\ny\rz\r\nw\rv\n"}) {
    const std::string path = write("t.vw", content);
    for (size_t block : {size_t{1}, size_t{2}, size_t{5}, size_t{4096}}) {
      const Read r = read_all(path, block);
      EXPECT_EQ(r.all(), content) << block;
      EXPECT_EQ(r.lines, static_cast<uint64_t>(std::count(content.begin(), content.end(), '\n'))) << block;
    }
  }
}

// CSV: a block ends only at a record end, never inside a quoted cell that holds line ends (nor between the
// two quotes of an escaped ""), whatever the block size; the line count is still the file's lines. A quote
// inside an unquoted cell is an ordinary byte.
TEST_F(LineEnds, CsvBlocksEndAtRecordEnds) {
  const std::string content =
      "y,t\n1,\"a\nb\"\n-1,\"c\"\"\nd\"\"\"\n1,5\" screen\n-1,\"\"\"\",\"e\n\nf\"\n1,\"g\"";
  const std::set<size_t> record_ends = {4, 12, 25, 37, 52};  // just after each record's '\n'
  const std::string path = write("t.csv", content);
  for (size_t block : {size_t{1}, size_t{2}, size_t{3}, size_t{5}, size_t{4096}}) {
    const Read r = read_all(path, block, ',');
    EXPECT_EQ(r.all(), content) << block;
    EXPECT_EQ(r.lines, 10u) << block;
    size_t at = 0;
    for (size_t i = 0; i + 1 < r.blocks.size(); ++i) {
      at += r.blocks[i].size();
      EXPECT_TRUE(record_ends.count(at)) << "block " << block << " ends at " << at;
    }
  }
  // A classic Mac OS CSV: its CRs become line ends first, then records are joined the same way.
  std::string mac = content;
  std::replace(mac.begin(), mac.end(), '\n', '\r');
  const Read r = read_all(write("mac.csv", mac), 2, ',');
  EXPECT_EQ(r.all(), content);
  EXPECT_EQ(r.lines, 10u);
}

}  // namespace
}  // namespace lepus

// BlockReader's line count (the line a damage note or a too-long-line error names): exact over inputs whose
// runs of newlines overflow any 8-bit counter, with and without a last line end, whatever the block size.
#include "io/block_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

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
      for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{47}, size_t{63}, size_t{64}, size_t{65},
                       size_t{127}, size_t{255 * 64}, size_t{255 * 64 + 17}, size_t{255 * 64 + 64 * 3 + 5},
                       t->size() - offset}) {
        if (offset + n > t->size()) continue;
        const char* p = t->data() + offset;
        ASSERT_EQ(count_newlines(p, n), static_cast<size_t>(std::count(p, p + n, '\n'))) << offset << " " << n;
      }
    }
  }
}

}  // namespace
}  // namespace lepus

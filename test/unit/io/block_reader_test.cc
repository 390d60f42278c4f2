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

}  // namespace
}  // namespace lepus

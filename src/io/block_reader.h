// Reads a byte source in large blocks that end at a line end ('\n'); the partial last line is carried into
// the next block. Never waits for a full block: whatever one read() delivers that completes a line is a
// block, so a pipe that writes one line gets that line back at once.
#pragma once
#include <memory>
#include <vector>

#include "io/byte_buffer.h"
#include "io/input_source.h"

namespace lepus {

class BlockReader {
 public:
  explicit BlockReader(std::unique_ptr<InputSource> source, size_t block_size = size_t{1} << 20);
  // Replaces `out` with the next block of complete lines (the last line of the input may lack '\n');
  // false at the end.
  bool next(ByteBuffer& out);
  const std::string& name() const { return source_->name(); }

 private:
  std::unique_ptr<InputSource> source_;
  ByteBuffer carry_;
  size_t block_;
  bool eof_ = false;
};

}  // namespace lepus

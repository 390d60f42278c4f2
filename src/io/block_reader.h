// Reads a byte source in large blocks that end at a line end ('\n'); the partial last line is carried into
// the next block. Never waits for a full block: whatever one read() delivers that completes a line is a
// block, so a pipe that writes one line gets that line back at once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "io/byte_buffer.h"
#include "io/input_source.h"

namespace lepus {

// The number of '\n' in p[0, n), 16 bytes at a time.
size_t count_newlines(const char* p, size_t n);
// The lines of a block: its newlines, and one more when its last line is not ended (the input's last line).
inline uint64_t count_lines(const char* p, size_t n) {
  return n == 0 ? 0 : count_newlines(p, n) + (p[n - 1] != '\n');
}

inline constexpr size_t kDefaultMaxLineBytes = size_t{256} << 20;  // 256 MiB

class BlockReader {
 public:
  // max_line_bytes bounds the memory one line may take. With lenient_damage, damaged input (truncated or
  // corrupt gzip) ends the input with a note in damage() instead of an error.
  explicit BlockReader(std::unique_ptr<InputSource> source, size_t block_size = size_t{1} << 20,
                       size_t max_line_bytes = kDefaultMaxLineBytes, bool lenient_damage = false);
  // Replaces `out` with the next block of complete lines (the last line of the input may lack '\n');
  // false at the end. Throws ParseError naming the line when one exceeds max_line_bytes.
  bool next(ByteBuffer& out);
  const std::string& name() const { return source_->name(); }
  bool inflates_alone() const { return source_->inflates_alone(); }
  // What damaged the input, and after how many lines, when lenient_damage stopped reading ("" otherwise).
  const std::string& damage() const { return damage_; }
  uint64_t lines_read() const { return lines_; }

 private:
  std::unique_ptr<InputSource> source_;
  ByteBuffer carry_;
  size_t block_;
  size_t max_line_;
  bool lenient_;
  bool eof_ = false;
  uint64_t lines_ = 0;  // complete lines handed out so far
  std::string damage_;
};

}  // namespace lepus

// Reads a byte source in large blocks that end at a line end ('\n'); the partial last line is carried into
// the next block. Never waits for a full block: whatever one read() delivers that completes a line is a
// block, so a pipe that writes one line gets that line back at once.
//
// Line ends: LF and CRLF as they are (the parsers drop a line's last '\r'). A source whose first line end is
// a CR alone (a classic Mac OS file) has its lines ended by CR: each CR not followed by LF becomes '\n' as it
// is read, so every reader downstream sees lines; in any other source a lone CR stays a byte of its line. CSV
// records: with csv_quotes, a block ends only at a '\n' outside quoted cells (formats/csv.h's csv_scan), so a
// quoted cell holding line ends stays in one block.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "formats/csv.h"
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
  // csv_delimiter >= 0: the source is RFC 4180 CSV with that delimiter, and blocks end at record ends.
  explicit BlockReader(std::unique_ptr<InputSource> source, size_t block_size = size_t{1} << 20,
                       size_t max_line_bytes = kDefaultMaxLineBytes, bool lenient_damage = false,
                       int csv_delimiter = -1);
  // Replaces `out` with the next block of complete lines (the last line of the input may lack '\n');
  // false at the end. Throws ParseError naming the line when one exceeds max_line_bytes.
  bool next(ByteBuffer& out);
  const std::string& name() const { return source_->name(); }
  bool inflates_alone() const { return source_->inflates_alone(); }
  // What damaged the input, and after how many lines, when lenient_damage stopped reading ("" otherwise).
  const std::string& damage() const { return damage_; }
  uint64_t lines_read() const { return lines_; }

 private:
  // The first line end decides: LF (and CRLF) lines, read as they are, or CR lines, translated.
  enum class Ends : uint8_t { kUnknown, kLf, kCr };
  // Decides ends_ once the first line end is in out, and in a CR source turns each lone CR of out[from, n -
  // 1) into '\n' (its last byte waits for the byte after it). Returns the first offset it may have changed.
  size_t settle_line_ends(ByteBuffer& out, size_t from);
  // Where the block may end: just after the last line end (or CSV record end) in out, 0 if none; `from` is
  // where the bytes not searched yet begin.
  size_t last_end(const ByteBuffer& out, size_t from);

  std::unique_ptr<InputSource> source_;
  ByteBuffer carry_;
  size_t block_;
  size_t max_line_;
  bool lenient_;
  int csv_delimiter_;
  bool eof_ = false;
  uint64_t lines_ = 0;  // complete lines handed out so far
  std::string damage_;
  Ends ends_ = Ends::kUnknown;
  size_t detect_from_ = 0;  // while kUnknown: out's bytes before this hold no line end
  CsvScan csv_;             // CSV: the record scan over out (carried with the carry)
};

}  // namespace lepus

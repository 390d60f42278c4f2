// Splits a byte source into lines, reading large blocks; a line is valid until the next call.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "io/input_source.h"

namespace lepus {

class LineReader {
 public:
  explicit LineReader(std::unique_ptr<InputSource> source, size_t block_size = size_t{1} << 20);
  // The next line without its '\n'; false at the end of input. A last line without '\n' is returned too.
  bool next(std::string_view& line);
  uint64_t line_number() const { return line_number_; }  // 1-based number of the line last returned
  const std::string& name() const { return source_->name(); }

 private:
  std::unique_ptr<InputSource> source_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  size_t block_;
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace lepus

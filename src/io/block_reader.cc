#include "io/block_reader.h"

#include <algorithm>
#include <cstring>

#include "lepus/errors.h"

namespace lepus {

BlockReader::BlockReader(std::unique_ptr<InputSource> source, size_t block_size, size_t max_line_bytes,
                         bool lenient_damage)
    : source_(std::move(source)), block_(block_size), max_line_(max_line_bytes), lenient_(lenient_damage) {}

bool BlockReader::next(ByteBuffer& out) {
  out.clear();
  out.swap(carry_);
  for (;;) {
    if (eof_) {
      if (!damage_.empty()) {  // the line the damage cut short is not data: drop it
        const void* nl = memrchr(out.data(), '\n', out.size());
        out.resize(nl ? static_cast<size_t>(static_cast<const char*>(nl) - out.data()) + 1 : 0);
      }
      lines_ += static_cast<uint64_t>(std::count(out.begin(), out.end(), '\n'));
      if (!out.empty() && out.back() != '\n') ++lines_;
      return !out.empty();
    }
    const size_t old = out.size();
    out.resize(old + block_);
    size_t got = 0;
    try {
      got = source_->read(out.data() + old, block_);
    } catch (const CorruptInputError& e) {
      if (!lenient_) throw;
      damage_ = e.what();
    }
    out.resize(old + got);
    if (got == 0) {
      eof_ = true;
      continue;
    }
    const void* nl = memrchr(out.data() + old, '\n', got);
    if (nl != nullptr) {
      const size_t cut = static_cast<size_t>(static_cast<const char*>(nl) - out.data()) + 1;
      carry_.assign(out.begin() + static_cast<long>(cut), out.end());
      out.resize(cut);
      lines_ += static_cast<uint64_t>(std::count(out.begin(), out.end(), '\n'));
      return true;
    }
    if (out.size() > max_line_) {
      throw ParseError(source_->name(), lines_ + 1,
                       "line longer than " + std::to_string(max_line_) +
                           " bytes; raise the limit with --max_line_bytes to read it");
    }
  }
}

}  // namespace lepus

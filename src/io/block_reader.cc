#include "io/block_reader.h"

#include <cstring>

namespace lepus {

BlockReader::BlockReader(std::unique_ptr<InputSource> source, size_t block_size)
    : source_(std::move(source)), block_(block_size) {}

bool BlockReader::next(ByteBuffer& out) {
  out.clear();
  out.swap(carry_);
  for (;;) {
    if (eof_) return !out.empty();
    const size_t old = out.size();
    out.resize(old + block_);
    const size_t got = source_->read(out.data() + old, block_);
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
      return true;
    }
  }
}

}  // namespace lepus

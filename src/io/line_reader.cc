#include "io/line_reader.h"

#include <cstring>

namespace lepus {

LineReader::LineReader(std::unique_ptr<InputSource> source, size_t block_size)
    : source_(std::move(source)), buf_(block_size), block_(block_size) {}

bool LineReader::next(std::string_view& line) {
  size_t scanned = begin_;
  for (;;) {
    const char* nl = scanned < end_ ? static_cast<const char*>(
                                          std::memchr(buf_.data() + scanned, '\n', end_ - scanned))
                                    : nullptr;
    if (nl != nullptr) {
      const size_t at = static_cast<size_t>(nl - buf_.data());
      line = std::string_view(buf_.data() + begin_, at - begin_);
      begin_ = at + 1;
      ++line_number_;
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      line = std::string_view(buf_.data() + begin_, end_ - begin_);
      begin_ = end_;
      ++line_number_;
      return true;
    }
    // Keep the partial line, compacted to the front; grow only when one line fills the buffer.
    const size_t partial = end_ - begin_;
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, partial);
      begin_ = 0;
      end_ = partial;
    }
    if (buf_.size() - end_ < block_ / 2) buf_.resize(buf_.size() + block_);
    scanned = end_;
    const size_t got = source_->read(buf_.data() + end_, buf_.size() - end_);
    if (got == 0) eof_ = true;
    end_ += got;
  }
}

}  // namespace lepus

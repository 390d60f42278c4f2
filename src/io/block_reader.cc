#include "io/block_reader.h"

#include <algorithm>
#include <cstring>

#include "lepus/errors.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lepus {

// The number of '\n' in p[0, n). Every byte of the input passes through here on the reader's serial stage:
// std::count widens each byte to a 64-bit sum (about a byte a cycle); this sums 16 bytes at a time in 8-bit
// lanes, emptied before they can overflow.
size_t count_newlines(const char* p, size_t n) {
  size_t total = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (n >= 16) {
    const size_t vectors = std::min<size_t>(n / 16, 255);  // a lane counts at most 255
    __m128i lanes = zero;
    for (size_t i = 0; i < vectors; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(v, nl));  // a match is -1
    }
    const __m128i sums = _mm_sad_epu8(lanes, zero);  // two 64-bit sums of 8 lanes each
    total += static_cast<size_t>(_mm_cvtsi128_si32(sums)) + static_cast<size_t>(_mm_extract_epi16(sums, 4));
    p += 16 * vectors;
    n -= 16 * vectors;
  }
#endif
  for (size_t i = 0; i < n; ++i) total += p[i] == '\n';
  return total;
}

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
      lines_ += count_lines(out.data(), out.size());
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
      lines_ += count_newlines(out.data(), out.size());
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

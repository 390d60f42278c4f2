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
                         bool lenient_damage, int csv_delimiter)
    : source_(std::move(source)),
      block_(block_size),
      max_line_(max_line_bytes),
      lenient_(lenient_damage),
      csv_delimiter_(csv_delimiter) {}

size_t BlockReader::settle_line_ends(ByteBuffer& out, size_t from) {
  char* const p = out.data();
  const size_t n = out.size();
  if (ends_ == Ends::kUnknown) {
    const size_t start = detect_from_;
    const auto* lf = static_cast<const char*>(std::memchr(p + start, '\n', n - start));
    const size_t lf_at = lf != nullptr ? static_cast<size_t>(lf - p) : n;
    const auto* cr = static_cast<const char*>(std::memchr(p + start, '\r', lf_at - start));
    if (cr == nullptr) {
      if (lf != nullptr) ends_ = Ends::kLf;
      detect_from_ = n;
      return n;
    }
    const auto cr_at = static_cast<size_t>(cr - p);
    if (cr_at + 1 == n) {  // the byte after it decides
      detect_from_ = cr_at;
      return n;
    }
    ends_ = p[cr_at + 1] == '\n' ? Ends::kLf : Ends::kCr;
    if (ends_ == Ends::kLf) return n;
    from = cr_at;  // the bytes before it hold no CR
  }
  size_t changed = n;
  for (size_t i = from; i + 1 < n;) {
    const auto* cr = static_cast<const char*>(std::memchr(p + i, '\r', n - 1 - i));
    if (cr == nullptr) break;
    const auto at = static_cast<size_t>(cr - p);
    if (p[at + 1] != '\n') {
      p[at] = '\n';
      changed = std::min(changed, at);
    }
    i = at + 1;
  }
  return changed;
}

size_t BlockReader::last_end(const ByteBuffer& out, size_t from) {
  const size_t n = out.size();
  if (csv_delimiter_ < 0) {
    const void* nl = from < n ? memrchr(out.data() + from, '\n', n - from) : nullptr;
    return nl != nullptr ? static_cast<size_t>(static_cast<const char*>(nl) - out.data()) + 1 : 0;
  }
  // A CR still waiting for the byte after it is not scanned yet (it may become a line end).
  const size_t limit = n - (ends_ != Ends::kLf && n > 0 && out[n - 1] == '\r' ? 1 : 0);
  csv_scan(out.data(), limit, static_cast<char>(csv_delimiter_), csv_);
  return csv_.record_end;
}

bool BlockReader::next(ByteBuffer& out) {
  out.clear();
  out.swap(carry_);
  for (;;) {
    if (eof_) {
      if (ends_ != Ends::kLf && !out.empty() && out.back() == '\r') out.back() = '\n';  // a CR file's last CR
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
    size_t from = old;
    if (ends_ != Ends::kLf) from = std::min(from, settle_line_ends(out, old > 0 ? old - 1 : 0));
    const size_t cut = last_end(out, from);
    if (cut > 0) {
      carry_.assign(out.begin() + static_cast<long>(cut), out.end());
      out.resize(cut);
      csv_.pos -= cut;
      csv_.record_end = 0;
      lines_ += count_newlines(out.data(), out.size());
      return true;
    }
    if (out.size() > max_line_) {
      throw ParseError(
          source_->name(), lines_ + 1,
          (csv_.in_quotes ? "CSV record longer than " : "line longer than ") + std::to_string(max_line_) +
              " bytes" +
              (csv_.in_quotes ? " (a quoted cell opened in it is not closed; quoted cells may hold line "
                                "ends)"
                              : "") +
              "; raise the limit with --max_line_bytes to read it");
    }
  }
}

}  // namespace lepus

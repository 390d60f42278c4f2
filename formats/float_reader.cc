// VW 9.11.2's parse_float (vw/core/parse_primitives.h) restated: see float_reader.h.
#include "formats/float_reader.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "formats/format.h"

namespace lepus {
namespace {

// VW's fast_pow10 table: 10^n for n = 0..38 by repeated f32 *10, 10^-n for n = 1..37 by repeated f32 /10
// from 1 (FLT_MAX_10_EXP = 38, FLT_MIN_10_EXP = -37). Built the same way so every entry has VW's rounding,
// which differs from the correctly rounded 10^n for some n.
struct Pow10Table {
  float positive[39];
  float negative[38];  // negative[n] = 10^-n
};

constexpr Pow10Table make_pow10_table() {
  Pow10Table t{};
  t.positive[0] = 1.0f;
  for (int n = 1; n <= 38; ++n) t.positive[n] = t.positive[n - 1] * 10.0f;
  t.negative[0] = 1.0f;
  for (int n = 1; n <= 37; ++n) t.negative[n] = t.negative[n - 1] / 10.0f;
  return t;
}

constexpr Pow10Table kPow10 = make_pow10_table();

inline float vw_pow10(int8_t e) {
  if (e > 38) return std::numeric_limits<float>::infinity();
  if (e < -37) return 0.0f;
  return e >= 0 ? kPow10.positive[e] : kPow10.negative[-e];
}

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

constexpr uint64_t kPow10Int[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

inline int digit_count(uint32_t m) {  // m < 10^7
  return m >= 1000000  ? 7
         : m >= 100000 ? 6
         : m >= 10000  ? 5
         : m >= 1000   ? 4
         : m >= 100    ? 3
         : m >= 10     ? 2
         : m           ? 1
                       : 0;
}

// The value of eight digit values held one per byte, the first (most significant) in the lowest byte.
inline uint64_t eight_digits(uint64_t x) {
  x = (x * 10) + (x >> 8);  // pairs: 10*d0 + d1 in every even byte
  x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
       (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
      32;
  return x;
}

// isspace() in the C locale: what strtof skips before the number.
inline bool is_c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Every char strtof can consume after the leading spaces: sign, digits, '.', exponent letters, hex digits
// and 'x'/'p', "inf"/"infinity"/"nan" and "nan(n-char-sequence)". Copying only this run keeps the copy short
// without changing where strtof stops.
inline bool is_strtof_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z') || u == '.' || u == '+' ||
         u == '-' || u == '_' || u == '(' || u == ')';
}

// The slow path: VW hands the rest of its line to strtof. The text is not NUL-terminated here, so the
// candidate run is copied to a stack buffer first; a run longer than the buffer (a pathological literal of
// hundreds of digits, where truncating would change the rounding) takes a heap copy instead.
float strtof_fallback(const char* begin, const char* end, const char** stop) {
  const char* q = begin;
  while (q < end && is_c_space(*q)) ++q;
  const char* r = q;
  while (r < end && is_strtof_char(*r)) ++r;
  const auto n = static_cast<size_t>(r - q);
  char buffer[128];
  std::string long_copy;
  char* text = buffer;
  if (n < sizeof(buffer)) {
    std::memcpy(buffer, q, n);
    buffer[n] = '\0';
  } else {
    long_copy.assign(q, n);
    text = long_copy.data();
  }
  char* text_end = nullptr;
  const float value = std::strtof(text, &text_end);
  *stop = text_end == text ? begin : q + (text_end - text);
  return value;
}

}  // namespace

float read_vw_float(const char* begin, const char* end, const char** stop) {
  // VW returns "nothing read" for an empty rest or one starting with NUL.
  if (begin >= end || *begin == '\0') {
    *stop = begin;
    return 0.0f;
  }
  const char* p = begin;
  while (p < end && *p == ' ') ++p;
  float sign = 1.0f;
  if (p < end && *p == '-') {
    sign = -1.0f;
    ++p;
  }

  // VW accumulates every digit in f32. While the accumulator stays below 2^24 every one of those f32 steps is
  // exact, so the first digits are gathered in an integer (m <= 999999 before a step keeps even VW's
  // intermediate acc*10 + '9' below 2^24) and only the digits after that take the f32 path. Leading zeros
  // are free, so this covers every value with at most 7 significant digits.
  uint32_t m = 0;
  unsigned d = 0;
  while (p < end && (d = static_cast<unsigned char>(*p) - '0') <= 9 && m < 1000000) {
    m = m * 10 + d;
    ++p;
  }
  float acc = static_cast<float>(m);
  bool exact = true;
  if (p < end && d <= 9) {
    exact = false;
    // VW writes `acc * 10 + *p - '0'`: f32 roundings after the product, after adding the char code and
    // after subtracting 48. Separate statements keep a compiler from fusing the product into an FMA (which
    // VW's x86 build, without FMA, never does).
    do {
      const float scaled = acc * 10.0f;
      const float with_code = scaled + static_cast<float>(*p);
      acc = with_code - 48.0f;
      ++p;
    } while (p < end && is_digit(*p));
  }

  int num_dec = 0;
  if (p < end && *p == '.') {
    ++p;
    if (exact && end - p >= 8) {
      // Eight bytes at once (SWAR): how many leading digits, and the value of the exactly representable
      // prefix, with the same digit-by-digit semantics as the loops below.
      uint64_t v;
      std::memcpy(&v, p, 8);
      // A byte is a digit iff its high nibble is 3 and adding 6 keeps it 3. Carries and borrows run only from a
      // non-digit byte into later bytes, which are past the first non-digit and never used.
      const uint64_t not_digit =
          ((v & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
          (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL);
      const int k = not_digit ? std::countr_zero(not_digit) / 8 : 8;
      if (k > 0) {
        const uint64_t keep = k == 8 ? ~0ULL : (1ULL << (8 * k)) - 1;
        const uint64_t x = (v - 0x3030303030303030ULL) & keep;  // digit values of the first k bytes
        // Digits absorbed exactly: while fewer than 7 significant digits are in m (leading zeros are free).
        int t;
        if (m == 0) {
          const int leading_zeros = x ? std::countr_zero(x) / 8 : k;
          t = std::min(k, leading_zeros + 7);
        } else {
          t = std::min(k, 7 - digit_count(m));
        }
        if (t > 0) {
          m = static_cast<uint32_t>(m * kPow10Int[t] + eight_digits(x << (8 * (8 - t))));
          num_dec = t;
        }
        acc = static_cast<float>(m);
        if (t < k) {
          exact = false;
          for (int i = t; i < k; ++i) {        // k <= 8 < 35 decimals
            const float scaled = acc * 10.0f;  // not fused, as below
            acc = scaled + static_cast<float>(static_cast<int>((x >> (8 * i)) & 0xFF));
            ++num_dec;
          }
        }
        p += k;
      }
    }
    if (exact) {
      // Leading zeros keep m at 0, so the 35-decimal limit can be reached here too.
      while (p < end && (d = static_cast<unsigned char>(*p) - '0') <= 9 && m < 1000000 && num_dec < 35) {
        m = m * 10 + d;
        ++num_dec;
        ++p;
      }
      acc = static_cast<float>(m);
    }
    while (p < end && is_digit(*p)) {
      if (num_dec < 35) {
        const float scaled = acc * 10.0f;             // not fused, as above
        acc = scaled + static_cast<float>(*p - '0');  // here VW adds the digit value itself
        ++num_dec;
      }
      ++p;
    }
  }

  // The exponent's digits, saturating (VW's int wraps on absurd digit counts; such exponents are out of range).
  uint32_t exponent = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool negative = false;
    if (p < end && *p == '-') {
      negative = true;
      ++p;
    }
    while (p < end && is_digit(*p)) {
      if (exponent < 100000) exponent = exponent * 10 + static_cast<uint32_t>(*p - '0');  // saturates
      ++p;
    }
    if (negative) exponent = 0u - exponent;
  }

  if (p == end || *p == ' ' || *p == '\t' || *p == '\n') {
    // lepus: VW truncates the exponent to int8, so 1e256 reads as 1. An exponent the truncation would change
    // is beyond float range: a large one reads as infinity (which every caller treats as malformed), a small
    // one as 0 (it underflows). Every other number reads exactly as VW reads it.
    const int64_t true_e = static_cast<int64_t>(static_cast<int32_t>(exponent)) - num_dec;
    if (true_e > 127 || true_e < -128) {
      *stop = p;
      return true_e > 0 && acc != 0.0f ? sign * std::numeric_limits<float>::infinity() : sign * 0.0f;
    }
    const auto e = static_cast<int8_t>(true_e);
    *stop = p;
    return sign * (acc * vw_pow10(e));
  }
  return strtof_fallback(begin, end, stop);
}

float read_label_token(std::string_view token, WarningSink& warnings) {
  const char* stop = nullptr;
  float f = read_vw_float(token.data(), token.data() + token.size(), &stop);
  if ((stop == token.data() && !token.empty()) || !std::isfinite(f)) {
    std::string message = "'";
    message.append(token);
    message += "' is not a good float, replacing with 0";
    warnings.warn(message);
    f = 0.0f;
  }
  return f;
}

}  // namespace lepus

// VW 9.11.2's number reader, reproduced bit for bit: labels, feature values and
// namespace weights all go through it, and its single-precision accumulation can differ from a correctly
// rounded strtof by an ulp, so a faster or "better" reader would break parity with VW.
#pragma once
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lepus {

class WarningSink;

// Reads one number from [begin, end). Grammar: leading spaces, optional '-', digits, optional '.' and
// digits (only the first 35 decimals count), optional 'e'/'E', optional '-', digits. If the next char is a
// space, TAB, '\n' or `end`, the value is sign * (acc * P(E - k)) in f32 with VW's power table (exponent
// truncated to int8); otherwise C strtof decides (so `0x10`, `+3`, `1E+2`, `inf`, `nan` work) and the number
// ends where it stopped. *stop is set to the first char not consumed; when nothing is consumed,
// *stop == begin and the result is 0. Never reads outside [begin, end).
float read_vw_float(const char* begin, const char* end, const char** stop);

// A label, importance weight or base-prediction token, as VW's float_of_string reads it: a token that is not a
// number, or (unlike VW) is NaN or infinite, reads as 0 with the warning "'TOKEN' is not a good float, replacing
// with 0". Shared by every format's label reader.
float read_label_token(std::string_view token, WarningSink& warnings);

namespace float_detail {

// VW's fast_pow10 for every int8 exponent, indexed by e + 128: 10^n for n = 0..38 by repeated f32 *10, 10^-n for
// n = 1..37 by repeated f32 /10 from 1 (so every entry has VW's rounding), infinity above 38 and 0 below -37.
constexpr std::array<float, 256> make_pow10() {
  std::array<float, 256> t{};
  float up = 1.0f;
  for (int n = 0; n <= 127; ++n) {
    t[static_cast<size_t>(128 + n)] = n <= 38 ? up : std::numeric_limits<float>::infinity();
    if (n < 38) up = up * 10.0f;
  }
  float down = 1.0f;
  for (int n = 1; n <= 128; ++n) {
    if (n <= 37) down = down / 10.0f;
    t[static_cast<size_t>(128 - n)] = n <= 37 ? down : 0.0f;
  }
  return t;
}
inline constexpr std::array<float, 256> kPow10 = make_pow10();

// Largest accumulator for which every one of VW's f32 digit steps up to it is exact: an integer-part step adds the
// char code (<= 57) before subtracting 48, so its intermediate exceeds the result by at most 48.
inline constexpr uint64_t kExactAccumulator = (uint64_t{1} << 24) - 48;

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

}  // namespace float_detail

// VW's value of a number read as: an optional '-' (negative), its mantissa digits (integer part then decimals,
// at most 19 in all, at least one) as the integer `all`, num_dec of them decimals, and the exponent's value
// (saturated as read_vw_float saturates it). Sets *value exactly as read_vw_float would and returns true, or
// returns false where that takes more than this: a power of ten above 10^38, or an accumulator past
// 2^24 whose inexact steps would reach an integer-part digit.
//
// Speed comes from doing VW's f32 digit steps only where they round: `all` is VW's accumulator exactly while it
// stays below kExactAccumulator; above that, the digits past the largest prefix below it take VW's steps
// `acc * 10 + digit` in f32. No data-dependent branch for mantissas of up to 8 significant digits.
inline bool vw_float_from_parts(bool negative, uint64_t all, int num_dec, int exponent, float* value) {
  const int true_e = exponent - num_dec;
  // Beyond int8 is read_vw_float's out-of-range rule; above 38 its power is infinite, and 0 times that is a NaN
  // whose sign bit the compiler may treat differently here (sign * x may become a negation): both declined.
  if (true_e > 38 || true_e < -128) return false;
  constexpr uint64_t kOneStep = float_detail::kExactAccumulator * 10 + 9;  // all / 10 is still exact
  float acc;
  if (all <= kOneStep) [[likely]] {
    // At most one inexact step, which must be a decimal's. Both candidates are computed and one is picked
    // without a branch: which one applies depends on the data (about a quarter of 8-digit mantissas are
    // exact), so a branch would be mispredicted often.
    if ((all > float_detail::kExactAccumulator) & (num_dec == 0)) return false;
    const uint64_t prefix = all / 10;
    const float scaled =
        static_cast<float>(prefix) * 10.0f;  // separate statements: no FMA (VW's x86 build has none)
    const float stepped = scaled + static_cast<float>(static_cast<uint32_t>(all - prefix * 10));
    const float direct = static_cast<float>(all);
    const uint32_t use_direct = 0u - static_cast<uint32_t>(all <= float_detail::kExactAccumulator);
    acc = std::bit_cast<float>((std::bit_cast<uint32_t>(direct) & use_direct) |
                               (std::bit_cast<uint32_t>(stepped) & ~use_direct));
  } else {
    // Split off the last digits until the prefix is exact; they must all be decimals (an integer-part digit
    // takes VW's other step, `acc * 10 + char - '0'`, which is left to the general reader).
    uint8_t tail[20];
    int r = 0;
    uint64_t prefix = all;
    while (prefix > float_detail::kExactAccumulator) {
      tail[r++] = static_cast<uint8_t>(prefix % 10);
      prefix /= 10;
    }
    if (r > num_dec) return false;
    acc = static_cast<float>(prefix);
    while (r > 0) {
      const float scaled = acc * 10.0f;
      acc = scaled + static_cast<float>(tail[--r]);
    }
  }
  const float sign = negative ? -1.0f : 1.0f;
  *value = sign * (acc * float_detail::kPow10[static_cast<size_t>(true_e + 128)]);
  return true;
}

// read_vw_float's result for the common shape of number, `[-]D*[.D*][(e|E)[-]D*]` with at least one mantissa
// digit and at most 19 in all, then end, space, TAB or '\n': returns the stop pointer with *value set exactly as
// read_vw_float(begin, end, ...) sets them, or nullptr (value untouched) for anything else (leading spaces, '+',
// hex, inf/nan, more digits, a power of ten above 10^38, a number ending in another char: strtof's
// cases), which the caller hands to read_vw_float. Never reads outside [begin, end). Plain byte loops: on
// regular data their branches are predicted, so the bytes that follow are read while this value is computed.
inline const char* read_vw_float_fast(const char* begin, const char* end, float* value) {
  using float_detail::is_digit;
  const char* p = begin;
  if (p == end) return nullptr;
  const bool negative = *p == '-';
  p += negative;
  uint64_t all = 0;  // every mantissa digit, integer part then decimals
  const char* const int_begin = p;
  while (p < end && is_digit(*p)) all = all * 10 + static_cast<uint64_t>(*p++ - '0');
  const char* const int_end = p;
  int num_dec = 0;
  if (p < end && *p == '.') {
    const char* const dec_begin = ++p;
    while (p < end && is_digit(*p)) all = all * 10 + static_cast<uint64_t>(*p++ - '0');
    num_dec = static_cast<int>(p - dec_begin);
  }
  const int num_digits = static_cast<int>(int_end - int_begin) + num_dec;
  // No digit ("-", ".", "e5": VW's odd zeros), or so many that `all` may have wrapped: the general way.
  if (num_digits == 0 || num_digits > 19) return nullptr;
  int exponent = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool exp_negative = p < end && *p == '-';
    p += exp_negative;
    while (p < end && is_digit(*p)) {
      if (exponent < 100000) exponent = exponent * 10 + (*p - '0');  // saturates, as read_vw_float's
      ++p;
    }
    if (exp_negative) exponent = -exponent;
  }
  if (p < end && *p != ' ' && *p != '\t' && *p != '\n') return nullptr;  // strtof decides: the general way
  if (!vw_float_from_parts(negative, all, num_dec, exponent, value)) return nullptr;
  return p;
}

// Eight-bytes-at-a-time digit helpers (SWAR) for the VW text parser's whole-feature path. A word holds eight
// bytes of text, the first byte in the lowest bits.
namespace digits8 {

inline uint64_t load(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // little-endian hosts only (x86-64, aarch64), as murmur3_32
  return v;
}

// The decimal value of the word's first k bytes, which must be ASCII digits (0 <= k <= 8).
inline uint64_t value_of_first(uint64_t v, int k) {
  if (k == 0) return 0;
  // Digit values, moved up so the k digits are the last ones of eight (the bytes shifted in are zeros). Only
  // the k digit bytes matter: a borrow from a non-digit (< '0') byte runs into later bytes, shifted out.
  uint64_t x = (v - 0x3030303030303030ULL) << (8 * (8 - k));
  x = (x * 10) + (x >> 8);  // pairs: 10*d0 + d1 in every even byte
  return (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
          (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
         32;
}

// value_of_first of two words at once, {a's first ka digits, b's first kb digits} (1 <= ka, kb <= 8): the same
// steps in the two 64-bit halves of one SSE2 register (pairs of digits in 16-bit lanes, then quads by pmaddwd,
// then the two halves by pmuludq), about half the instructions of two scalar calls.
inline void values_of_first2(uint64_t a, int ka, uint64_t b, int kb, uint64_t& va, uint64_t& vb) {
#if defined(__SSE2__)
  const uint64_t x0 = (a - 0x3030303030303030ULL) << (8 * (8 - ka));
  const uint64_t x1 = (b - 0x3030303030303030ULL) << (8 * (8 - kb));
  __m128i x = _mm_set_epi64x(static_cast<long long>(x1), static_cast<long long>(x0));
  // Each 16-bit lane holds a digit (low byte, the earlier) and the next: 10 d0 + d1.
  x = _mm_add_epi16(_mm_mullo_epi16(_mm_and_si128(x, _mm_set1_epi16(0xFF)), _mm_set1_epi16(10)),
                    _mm_srli_epi16(x, 8));
  x = _mm_madd_epi16(x, _mm_set1_epi32(0x00010064));  // each 32-bit lane: 100 p0 + p1
  x = _mm_add_epi64(_mm_mul_epu32(x, _mm_set1_epi64x(10000)),
                    _mm_srli_epi64(x, 32));  // each half: 10^4 q0 + q1
  va = static_cast<uint64_t>(_mm_cvtsi128_si64(x));
  vb = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)));
#else
  va = value_of_first(a, ka);
  vb = value_of_first(b, kb);
#endif
}

}  // namespace digits8

}  // namespace lepus

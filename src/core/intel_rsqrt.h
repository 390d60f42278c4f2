// Bit-exact software model of the SSE RSQRTSS/RSQRTPS result on Intel CPUs.
//
// VW computes 1/sqrt(x) with _mm_rsqrt_ss. The instruction is only specified to a relative error of
// 1.5 * 2^-12, and Intel and AMD parts return different bits (rsqrt(1): Intel 0x3f7ff000, AMD
// 0x3f7ff800). Our oracles were produced on an Intel Xeon, so lepus reproduces the Intel result on
// any host with this function.
//
// Model (see intel_rsqrt.cc): the result depends only on the exponent parity and the top 10 bits of
// the input mantissa (2048 intervals). For each interval, 1/sqrt of the interval midpoint (the input
// with mantissa bits 1.yyyyyyyyyy1) is rounded to nearest at 2^-13 absolute, i.e. 12 fraction bits
// of the result significand; the low 11 result mantissa bits are zero.
//
// Special inputs follow the Intel SDM description of RSQRTSS (independent of MXCSR):
//   +0 -> +inf, -0 -> -inf;
//   denormals are treated as zero of the same sign: +denormal -> +inf, -denormal -> -inf;
//   +inf -> +0;
//   negative values other than -0 (including -inf) -> the "floating-point indefinite" QNaN
//     (bits 0xFFC00000);
//   SNaN -> the same NaN quieted (bit 22 set); QNaN -> returned unchanged.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace lepus {

// Result mantissa fields, indexed by (exponent is odd) << 10 | top 10 mantissa bits (see intel_rsqrt.cc).
extern const std::array<std::uint32_t, 2048> kIntelRsqrtTable;

// The same on the raw IEEE-754 bits (for tests and for callers that already hold bits). Inline: it sits in the
// learners' innermost loops.
inline std::uint32_t intel_rsqrt_bits(std::uint32_t x) {
  const std::uint32_t sign = x & 0x80000000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  const std::uint32_t man = x & 0x7fffffu;
  if (exp == 0xffu) [[unlikely]] {
    if (man != 0) return x | 0x400000u;  // NaN: quiet an SNaN, pass a QNaN through
    return sign ? 0xffc00000u : 0u;      // -inf -> indefinite, +inf -> +0
  }
  if (exp == 0) [[unlikely]]
    return sign | 0x7f800000u;  // +-0 and denormals (treated as zero) -> +-inf
  if (sign) [[unlikely]]
    return 0xffc00000u;  // negative normal -> indefinite
  // x = 2^(exp-127) * 1.man. With j = floor((exp-127)/2), x = 2^(2j) * m, m in [1,4), and the result
  // is 2^-j * (N/8192) = 2^(-j-1) * 1.fraction, i.e. biased exponent 126 - j.
  const int j = (static_cast<int>(exp) - 127) >> 1;  // arithmetic shift == floor
  const std::uint32_t k = ((exp & 1u) << 10) | (man >> 13);
  const std::uint32_t out_exp = static_cast<std::uint32_t>(126 - j);
  return (out_exp << 23) | kIntelRsqrtTable[k];
}

inline float intel_rsqrt(float x) {
  return std::bit_cast<float>(intel_rsqrt_bits(std::bit_cast<std::uint32_t>(x)));
}

}  // namespace lepus

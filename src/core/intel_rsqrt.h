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

#include <cstdint>

namespace lepus {

float intel_rsqrt(float x);

// The same on the raw IEEE-754 bits (for tests and for callers that already hold bits).
std::uint32_t intel_rsqrt_bits(std::uint32_t x_bits);

}  // namespace lepus

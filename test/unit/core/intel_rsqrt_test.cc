// The software model of Intel's RSQRTSS (core/intel_rsqrt.h): values observed on Intel hardware, the
// SDM special cases, and the documented accuracy bound over a sweep of inputs.
#include "core/intel_rsqrt.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace lepus {
namespace {

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

TEST(IntelRsqrt, KnownIntelValues) {
  // Intel results (AMD returns 0x3f7ff800 and 0x3efff800 for the first two).
  EXPECT_EQ(bits(intel_rsqrt(1.0f)), 0x3f7ff000u);  // 0.99975586
  EXPECT_EQ(bits(intel_rsqrt(4.0f)), 0x3efff000u);  // 0.49987793
  EXPECT_FLOAT_EQ(intel_rsqrt(1.0f), 0.99975586f);
  EXPECT_FLOAT_EQ(intel_rsqrt(4.0f), 0.49987793f);
  // Further values reported from Intel CPUs in public bug reports.
  EXPECT_EQ(bits(intel_rsqrt(2.0f)), 0x3f34f800u);  // 0.706909
  EXPECT_EQ(bits(intel_rsqrt(6.0f)), 0x3ed10000u);  // 0.408203
  EXPECT_EQ(bits(intel_rsqrt(8.0f)), 0x3eb4f800u);  // 0.353455
  EXPECT_EQ(bits(intel_rsqrt(10.0f)), 0x3ea1e000u);
  EXPECT_EQ(bits(intel_rsqrt(8257.0f)), 0x3c344800u);
}

TEST(IntelRsqrt, SpecialCases) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bits(intel_rsqrt(0.0f)), bits(inf));
  EXPECT_EQ(bits(intel_rsqrt(-0.0f)), bits(-inf));
  // Denormals are treated as zero of the same sign.
  EXPECT_EQ(bits(intel_rsqrt(from_bits(0x00000001u))), bits(inf));
  EXPECT_EQ(bits(intel_rsqrt(from_bits(0x007fffffu))), bits(inf));
  EXPECT_EQ(bits(intel_rsqrt(from_bits(0x80000001u))), bits(-inf));
  EXPECT_EQ(bits(intel_rsqrt(inf)), 0u);  // +0
  // Negative non-zero values, -inf included, give the floating-point indefinite QNaN.
  EXPECT_EQ(bits(intel_rsqrt(-1.0f)), 0xffc00000u);
  EXPECT_EQ(bits(intel_rsqrt(-std::numeric_limits<float>::min())), 0xffc00000u);
  EXPECT_EQ(bits(intel_rsqrt(-inf)), 0xffc00000u);
  // An SNaN is quieted; a QNaN passes through unchanged (sign and payload kept).
  EXPECT_EQ(intel_rsqrt_bits(0x7f800001u), 0x7fc00001u);
  EXPECT_EQ(intel_rsqrt_bits(0xff812345u), 0xffc12345u);
  EXPECT_EQ(intel_rsqrt_bits(0x7fc00000u), 0x7fc00000u);
  EXPECT_EQ(intel_rsqrt_bits(0xffc54321u), 0xffc54321u);
  // Extremes of the normal range stay finite and normal.
  EXPECT_TRUE(std::isnormal(intel_rsqrt(std::numeric_limits<float>::min())));
  EXPECT_TRUE(std::isnormal(intel_rsqrt(std::numeric_limits<float>::max())));
}

TEST(IntelRsqrt, StructureOfTheResult) {
  // Only the exponent parity and the top 10 mantissa bits matter; the result has 12 fraction bits;
  // scaling the input by 4 halves the result exactly.
  for (std::uint32_t b = 0x3f800000u; b < 0x40800000u; b += 0x2000u) {
    const std::uint32_t r = intel_rsqrt_bits(b);
    EXPECT_EQ(r & 0x7ffu, 0u);
    EXPECT_EQ(intel_rsqrt_bits(b | 0x1fffu), r);
    EXPECT_EQ(intel_rsqrt_bits(b + (2u << 23)), r - (1u << 23));
    EXPECT_EQ(intel_rsqrt_bits(b - (2u << 23)), r + (1u << 23));
  }
}

TEST(IntelRsqrt, RelativeErrorWithinSpecOverSweep) {
  const double bound = 1.5 * std::ldexp(1.0, -12);
  double worst = 0;
  // Every table interval (step 2^13 in the bit pattern covers all mantissa prefixes of every
  // exponent) plus odd offsets inside the intervals.
  for (std::uint64_t b = 0x00800000u; b < 0x7f800000u; b += 0x2000u - 7u) {
    const float x = from_bits(static_cast<std::uint32_t>(b));
    const double rel =
        std::fabs(static_cast<double>(intel_rsqrt(x)) * std::sqrt(static_cast<double>(x)) - 1.0);
    if (rel > worst) worst = rel;
    ASSERT_LT(rel, bound) << "x bits 0x" << std::hex << b;
  }
  EXPECT_GT(worst, 0.0);
}

}  // namespace
}  // namespace lepus

#include "core/intel_rsqrt.h"

#include <array>
#include <bit>
#include <cstdint>

namespace lepus {
namespace {

// Entry k of the 2048-entry virtual table: k = (exponent is even ? 0 : 1024) | top 10 mantissa bits.
// The reduced argument is m = s * (1 + (i + 1/2) / 1024) with s = 2 for an even biased exponent
// (x = 2^(2j) * m, m in [2,4)) and s = 1 for an odd one (m in [1,2)). The entry is
//   N = round_to_nearest(2^13 / sqrt(m)),  4096 < N < 8192,
// so that 1/sqrt(m) ~= N * 2^-13 in [0.5, 1). The rounding is decided exactly in integers:
// with D = s * (2048 + 2i + 1) (so m = D / 2048), N + 1/2 > 2^13 / sqrt(m)  <=>  (2N+1)^2 * D > 2^39,
// and N is the smallest integer with that property. (2N+1)^2 * D is never a power of two, so no
// ties arise.
constexpr std::uint32_t table_entry(std::uint32_t k) {
  const std::uint64_t s = (k & 1024u) ? 1u : 2u;
  const std::uint64_t i = k & 1023u;
  const std::uint64_t d = s * (2048u + 2u * i + 1u);
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 39;
  std::uint64_t lo = 4096, hi = 8192;  // predicate false at lo, true at hi
  while (hi - lo > 1) {
    const std::uint64_t mid = (lo + hi) / 2;
    const std::uint64_t t = 2 * mid + 1;
    if (t * t * d > kLimit) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  // Store the result mantissa field: 1/sqrt(m) = N/8192 = 2^-1 * (N/4096), fraction (N-4096)/4096.
  return static_cast<std::uint32_t>(hi - 4096u) << 11;
}

constexpr std::array<std::uint32_t, 2048> make_table() {
  std::array<std::uint32_t, 2048> t{};
  for (std::uint32_t k = 0; k < 2048; ++k) t[k] = table_entry(k);
  return t;
}

constexpr std::array<std::uint32_t, 2048> kTable = make_table();

// Spot checks against values observed on Intel hardware.
static_assert(kTable[1024] == 0x7ff000u, "rsqrt(1) must be 0x3f7ff000");
static_assert(kTable[0] == 0x34f800u, "rsqrt(2) must be 0x3f34f800");

}  // namespace

const std::array<std::uint32_t, 2048> kIntelRsqrtTable = kTable;

}  // namespace lepus

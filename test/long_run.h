// Round counts for long numerical streams. In the ordinary build a test runs its full count (10^6 rounds and
// more: finiteness over long runs is what it checks); in the sanitizer build (LEPUS_SANITIZED, set by
// -DLEPUS_SANITIZE=ON) it runs a twentieth, which exercises every code path under ASan/UBSan at a CI-sized cost.
#pragma once

namespace lepus::test {

#ifdef LEPUS_SANITIZED
inline constexpr int kLongRunDivisor = 20;
#else
inline constexpr int kLongRunDivisor = 1;
#endif

constexpr int long_run(int rounds) { return rounds / kLongRunDivisor; }

}  // namespace lepus::test

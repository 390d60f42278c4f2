// splitmix64's output function (Steele, Lea and Flood 2014, "Fast splittable pseudorandom number generators",
// the mix of SplitMix64): a bijection of 64-bit words whose outputs pass as independent uniform draws. The
// learners hash (seed, round) through it so that a resumed run draws what an uninterrupted one does without
// saving a generator.
#pragma once
#include <cstdint>

namespace lepus {

inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The top 53 bits of a word as a double in [0, 1).
inline double unit_interval(uint64_t z) { return static_cast<double>(z >> 11) * 0x1p-53; }

}  // namespace lepus

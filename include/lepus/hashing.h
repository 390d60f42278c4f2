// VW-compatible feature hashing (VW 9.11.2's): murmur3 x86_32 and the "strings" hasher with its
// all-digits rule. Interaction indices combine parse indices with the FNV prime, in u64, masked at use.
#pragma once
#include <cstdint>
#include <string_view>

namespace lepus {

enum class HashMode { kStrings, kAll };

// MurmurHash3 x86_32 (Austin Appleby), little-endian blocks.
uint32_t murmur3_32(std::string_view bytes, uint32_t seed);

// --hash strings: trim bytes <= 0x20 at both ends; an all-ASCII-digit rest hashes to its decimal value
// (mod 2^64, truncated to u32) plus seed with no murmur; an empty rest gives seed; otherwise murmur3.
uint32_t hash_strings(std::string_view s, uint32_t seed);

inline uint32_t hash_feature(std::string_view s, uint32_t seed, HashMode mode) {
  return mode == HashMode::kAll ? murmur3_32(s, seed) : hash_strings(s, seed);
}

// The FNV-1 32-bit prime VW multiplies an outer index by when it builds an interaction index.
inline constexpr uint64_t kInteractionPrime = 16777619u;
// VW's n-gram constant (its QUADRATIC_CONSTANT): an n-gram's index is ((i0 * C + i1) * C + i2) ... (mod 2^64).
inline constexpr uint64_t kNgramPrime = 27942141u;
// The constant (bias) feature: VW's index and feature group byte.
inline constexpr uint64_t kConstantIndex = 11650396u;
inline constexpr unsigned char kConstantNamespace = 0x80;
// VW's default namespace: group byte ' ' and hash 0 (seed 0).
inline constexpr unsigned char kDefaultNamespace = ' ';

}  // namespace lepus

// murmur3 x86_32 and VW 9.11.2's "strings" hasher.
#include "lepus/hashing.h"

#include <cstring>

namespace lepus {
namespace {

inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

}  // namespace

uint32_t murmur3_32(std::string_view bytes, uint32_t seed) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t len = bytes.size();
  const size_t nblocks = len / 4;
  constexpr uint32_t c1 = 0xcc9e2d51u;
  constexpr uint32_t c2 = 0x1b873593u;
  uint32_t h = seed;
  for (size_t i = 0; i < nblocks; ++i) {
    uint32_t k;
    std::memcpy(&k, data + 4 * i, 4);  // little-endian hosts only (x86-64, aarch64)
    k *= c1;
    k = rotl32(k, 15);
    k *= c2;
    h ^= k;
    h = rotl32(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  const unsigned char* tail = data + 4 * nblocks;
  uint32_t k = 0;
  switch (len & 3) {
    case 3: k ^= static_cast<uint32_t>(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= static_cast<uint32_t>(tail[1]) << 8; [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = rotl32(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<uint32_t>(len);
  return fmix32(h);
}

uint32_t hash_strings(std::string_view s, uint32_t seed) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= 0x20) ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= 0x20) --e;
  if (b == e) return seed;
  uint64_t value = 0;
  for (size_t i = b; i < e; ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') return murmur3_32(s.substr(b, e - b), seed);
    value = value * 10 + static_cast<uint64_t>(c - '0');  // wraps mod 2^64 as VW's does
  }
  return static_cast<uint32_t>(value) + seed;
}

}  // namespace lepus

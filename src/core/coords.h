// One way from an example to a vector, for every learner that does not need VW's per-feature order (sgd keeps
// it for parity): the features' slots masked to 2^b, repeated slots (a feature twice, hash collisions, an
// interaction equal to a linear feature) summed into one coordinate, zero and non-finite values dropped (the
// non-finite ones counted), in the order each slot first appears or sorted by slot, with the squared norm.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "lepus/example.h"

namespace lepus {

// One coordinate of an example: a slot and the sum (in double, in the example's order) of its values there.
struct Coord {
  uint64_t slot;
  double x;
};

// A view of the builder's buffer, valid until its next build().
struct SparseVector {
  const Coord* data = nullptr;  // distinct slots, finite nonzero x
  size_t n = 0;
  uint64_t dropped = 0;  // features dropped for a non-finite value (this example)
  size_t size() const { return n; }
  const Coord* begin() const { return data; }
  const Coord* end() const { return data + n; }
  const Coord& operator[](size_t i) const { return data[i]; }
  double norm2() const {  // sum of x^2, in coordinate order
    double s = 0.0;
    for (const Coord& c : *this) s += c.x * c.x;
    return s;
  }
};

class VectorBuilder {
 public:
  enum class Order { kFirstSeen, kSlot };
  explicit VectorBuilder(int bits) : mask_((uint64_t{1} << bits) - 1) {}
  // The example's vector; valid until the next call. A coordinate whose values sum to 0 is dropped too.
  inline const SparseVector& build(const Example& ex, Order order = Order::kFirstSeen);

 private:
  uint64_t mask_;
  SparseVector v_;
  std::vector<Coord> buf_;       // grows to the widest example, never shrinks
  std::vector<uint32_t> probe_;  // open addressing: 0 = empty, else 1 + position in v_.coords; zero between calls
};

// Inline: it runs once per example in the learners' hot paths.
inline const SparseVector& VectorBuilder::build(const Example& ex, Order order) {
  v_.dropped = 0;
  // An open-addressing table of at least twice the features (multiplicative hash), kept zeroed between calls:
  // O(features) whatever 2^b is.
  const size_t n = ex.features.size();
  size_t cap = 64;
  while (cap < 2 * n) cap *= 2;
  if (probe_.size() < cap) probe_.assign(cap, 0u);
  const int shift = 64 - std::countr_zero(cap);
  const size_t cmask = cap - 1;
  uint32_t* const probe = probe_.data();
  if (buf_.size() < n) buf_.resize(n);
  Coord* const c = buf_.data();
  uint32_t m = 0;
  bool merged = false;
  for (const Feature& f : ex.features) {
    const float v = f.value;
    if (v == 0.0f) continue;
    if (!std::isfinite(v)) [[unlikely]] {
      ++v_.dropped;
      continue;
    }
    const uint64_t slot = f.index & mask_;
    size_t p = static_cast<size_t>((slot * 0x9E3779B97F4A7C15ull) >> shift);
    for (;;) {
      const uint32_t e = probe[p];
      if (e == 0) {
        c[m] = Coord{slot, v};
        probe[p] = ++m;
        break;
      }
      if (c[e - 1].slot == slot) [[unlikely]] {
        c[e - 1].x += v;
        merged = true;
        break;
      }
      p = (p + 1) & cmask;
    }
  }
  std::memset(probe, 0, cap * sizeof(uint32_t));
  if (merged) [[unlikely]]  // a sum may cancel to 0 (or overflow): that coordinate is absent
    m = static_cast<uint32_t>(
        std::remove_if(c, c + m, [](const Coord& k) { return k.x == 0.0 || !std::isfinite(k.x); }) - c);
  v_.data = c;
  v_.n = m;
  if (order == Order::kSlot)
    std::sort(c, c + m, [](const Coord& a, const Coord& b) { return a.slot < b.slot; });
  return v_;
}

}  // namespace lepus

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

// One coordinate of an example: a slot, the sum (in double, in the example's order) of its values there, and
// the position in ex.features of its first feature (whose namespace group it belongs to; 0 when made by hand).
struct Coord {
  uint64_t slot;
  double x;
  uint32_t first = 0;
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
  // kFirstSeen: the order each slot first appears (the example's own order when no slot repeats).
  // kSlot: sorted by slot.
  // kSlotWhenMerged: kFirstSeen when the example already was a vector (no slot repeated, nothing dropped),
  // else kSlot: the FTPRL learners' order, whose sums of squares depend on it in the last bit.
  enum class Order { kFirstSeen, kSlot, kSlotWhenMerged };
  explicit VectorBuilder(int bits) : bits_(bits), mask_((uint64_t{1} << bits) - 1) {}
  int bits() const { return bits_; }
  // The example's vector; valid until the next call. A coordinate whose values sum to 0 is dropped too.
  // Both ways below give the same coordinates, sums and order.
  const SparseVector& build(const Example& ex, Order order = Order::kFirstSeen) {
    v_.dropped = 0;
    const size_t n = ex.features.size();
    if (buf_.size() < n) buf_.resize(n);
    v_.data = buf_.data();
    if (copy_increasing(ex)) return v_;  // in slot order with no slot repeated: every order's answer
    // Wide examples wanted in slot order are sorted first and merged after (with -q ff on rcv1, ~4,600
    // features, sorting the features then merging neighbours beats merging in a hash table then sorting).
    const bool wide_sorted = n >= kRadixFrom && order != Order::kFirstSeen;
    bool merged = wide_sorted ? sort_then_merge(ex) : merge_by_hash(ex);
    if (merged) [[unlikely]]  // a sum may cancel to 0 (or overflow): that coordinate is absent
      v_.n = static_cast<size_t>(
          std::remove_if(buf_.data(), buf_.data() + v_.n,
                         [](const Coord& k) { return k.x == 0.0 || !std::isfinite(k.x); }) -
          buf_.data());
    const bool want_slot =
        order == Order::kSlot || (order == Order::kSlotWhenMerged && (merged || v_.dropped > 0));
    if (want_slot && !wide_sorted) {
      sort_by_slot(buf_.data(), v_.n);
    } else if (!want_slot && wide_sorted) {  // kSlotWhenMerged, nothing merged: the features as they came
      v_.n = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (ex.features[i].value != 0.0f)
          buf_[v_.n++] = Coord{ex.features[i].index & mask_, ex.features[i].value, i};
    }
    return v_;
  }

 private:
  static constexpr size_t kRadixFrom = 256;
  // Features whose slots strictly increase (a libsvm or CSV row, numbered features in one namespace) repeat no
  // slot: they are copied as they come, without a table. Fills buf_[0, v_.n) and v_.dropped and returns true for
  // them; returns false, and leaves v_ as it was, at the first slot not above the one before.
  inline bool copy_increasing(const Example& ex);
  // Both fill buf_[0, v_.n) and v_.dropped, and return whether some slot repeated.
  inline bool merge_by_hash(const Example& ex);    // first-seen order
  inline bool sort_then_merge(const Example& ex);  // slot order
  inline void sort_by_slot(Coord* c, size_t n);
  inline void radix_sort(Coord* c, size_t n);  // stable: equal slots keep the example's order

  int bits_;
  uint64_t mask_;
  SparseVector v_;
  std::vector<Coord> buf_;       // grows to the widest example, never shrinks
  std::vector<Coord> scratch_;   // the radix sort's second buffer
  std::vector<uint32_t> probe_;  // open addressing: 0 = empty, else 1 + position in buf_; zero between calls
};

// Inline: they run once per example in the learners' hot paths.
inline bool VectorBuilder::copy_increasing(const Example& ex) {
  const size_t n = ex.features.size();
  Coord* const c = buf_.data();
  uint32_t m = 0;
  uint64_t dropped = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Feature& f = ex.features[i];
    const float v = f.value;
    if (v == 0.0f) continue;
    if (!std::isfinite(v)) [[unlikely]] {
      ++dropped;
      continue;
    }
    const uint64_t slot = f.index & mask_;
    if (m > 0 && slot <= c[m - 1].slot) return false;
    c[m++] = Coord{slot, v, i};
  }
  v_.n = m;
  v_.dropped = dropped;
  return true;
}

inline bool VectorBuilder::merge_by_hash(const Example& ex) {
  // An open-addressing table of at least twice the features (multiplicative hash), kept zeroed between calls:
  // O(features) whatever 2^b is.
  const size_t n = ex.features.size();
  size_t cap = 64;
  while (cap < 2 * n) cap *= 2;
  if (probe_.size() < cap) probe_.assign(cap, 0u);
  const int shift = 64 - std::countr_zero(cap);
  const size_t cmask = cap - 1;
  uint32_t* const probe = probe_.data();
  Coord* const c = buf_.data();
  uint32_t m = 0;
  bool merged = false;
  for (uint32_t i = 0; i < n; ++i) {
    const Feature& f = ex.features[i];
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
        c[m] = Coord{slot, v, i};
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
  v_.n = m;
  return merged;
}

inline bool VectorBuilder::sort_then_merge(const Example& ex) {
  const size_t n = ex.features.size();
  Coord* const c = buf_.data();
  size_t m = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const float v = ex.features[i].value;
    if (v == 0.0f) continue;
    if (!std::isfinite(v)) [[unlikely]] {
      ++v_.dropped;
      continue;
    }
    c[m++] = Coord{ex.features[i].index & mask_, v, i};
  }
  radix_sort(c, m);
  // Neighbours with one slot, in the example's order (the sort is stable): summed as merge_by_hash does.
  size_t out = 0;
  bool merged = false;
  for (size_t k = 0; k < m; ++k) {
    if (out > 0 && c[out - 1].slot == c[k].slot) {
      c[out - 1].x += c[k].x;
      merged = true;
    } else {
      c[out++] = c[k];
    }
  }
  v_.n = out;
  return merged;
}

// Distinct slots: any sort gives the same order. Below kRadixFrom a comparison sort, else the radix sort.
inline void VectorBuilder::sort_by_slot(Coord* c, size_t n) {
  if (n < kRadixFrom) {
    std::sort(c, c + n, [](const Coord& a, const Coord& b) { return a.slot < b.slot; });
    return;
  }
  radix_sort(c, n);
}

// LSD radix sort on the slot's bits, 11 per pass (2 passes at -b 18): with -q ff on rcv1 std::sort took 42% of
// ftprl-diag's time.
inline void VectorBuilder::radix_sort(Coord* c, size_t n) {
  constexpr int kDigitBits = 11;
  constexpr uint64_t kDigitMask = (uint64_t{1} << kDigitBits) - 1;
  if (scratch_.size() < n) scratch_.resize(n);
  Coord* from = c;
  Coord* to = scratch_.data();
  for (int shift = 0; shift < bits_; shift += kDigitBits) {
    uint32_t start[kDigitMask + 2] = {};
    for (size_t k = 0; k < n; ++k) ++start[((from[k].slot >> shift) & kDigitMask) + 1];
    for (uint64_t d = 0; d <= kDigitMask; ++d) start[d + 1] += start[d];
    for (size_t k = 0; k < n; ++k) to[start[(from[k].slot >> shift) & kDigitMask]++] = from[k];
    std::swap(from, to);
  }
  if (from != c) std::memcpy(c, from, n * sizeof(Coord));
}

}  // namespace lepus

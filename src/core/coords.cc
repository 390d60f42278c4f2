#include "core/coords.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lepus {

const SparseVector& VectorBuilder::build(const Example& ex, Order order) {
  v_.slots.clear();
  v_.values.clear();
  v_.norm2 = 0.0;
  v_.dropped = 0;
  // A table of at least twice the features, cleared per example: O(features) whatever 2^b is.
  size_t cap = 16;
  while (cap < 2 * ex.features.size()) cap *= 2;
  if (table_.size() < cap) table_.resize(cap);
  std::fill(table_.begin(), table_.begin() + static_cast<long>(cap), 0u);
  const size_t tmask = cap - 1;
  for (const Feature& f : ex.features) {
    if (!std::isfinite(f.value)) {
      ++v_.dropped;
      continue;
    }
    if (f.value == 0.0f) continue;
    const uint64_t slot = f.index & mask_;
    size_t h = static_cast<size_t>((slot * 0x9E3779B97F4A7C15ull) >> 32) & tmask;
    for (;; h = (h + 1) & tmask) {
      if (table_[h] == 0) {
        v_.slots.push_back(slot);
        v_.values.push_back(f.value);
        table_[h] = static_cast<uint32_t>(v_.slots.size());
        break;
      }
      if (v_.slots[table_[h] - 1] == slot) {
        v_.values[table_[h] - 1] += f.value;
        break;
      }
    }
  }
  // Coordinates that cancelled out are no coordinates.
  size_t out = 0;
  for (size_t i = 0; i < v_.slots.size(); ++i) {
    if (v_.values[i] == 0.0 || !std::isfinite(v_.values[i])) continue;
    v_.slots[out] = v_.slots[i];
    v_.values[out] = v_.values[i];
    ++out;
  }
  v_.slots.resize(out);
  v_.values.resize(out);
  if (order == Order::kSlot && out > 1) {
    std::vector<size_t> idx(out);
    std::iota(idx.begin(), idx.end(), size_t{0});
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v_.slots[a] < v_.slots[b]; });
    std::vector<uint64_t> s(out);
    std::vector<double> x(out);
    for (size_t i = 0; i < out; ++i) s[i] = v_.slots[idx[i]], x[i] = v_.values[idx[i]];
    v_.slots.swap(s);
    v_.values.swap(x);
  }
  for (double x : v_.values) v_.norm2 += x * x;
  return v_;
}

}  // namespace lepus

// The example-to-vector builder every learner but sgd uses: slots masked, repeats summed in the example's
// order, zero and non-finite values dropped, each coordinate's first feature kept, and the three orders.
#include "core/coords.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace lepus {
namespace {

Example example(std::vector<std::pair<uint64_t, float>> f) {
  Example ex;
  for (const auto& [i, v] : f) ex.features.push_back(Feature{i, v});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  return ex;
}

using Order = VectorBuilder::Order;

TEST(VectorBuilder, MergesMasksAndDrops) {
  VectorBuilder b(4);
  Example ex = example({{3, 1.0f}, {19, 2.0f}, {5, 0.0f}, {7, NAN}, {6, 1.5f}, {22, -1.5f}, {9, 4.0f}});
  const SparseVector& v = b.build(ex);
  // 3 and 19 share slot 3; 6 and 22 share slot 6 and cancel; 5 is zero; 7 is NaN.
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].slot, 3u);
  EXPECT_EQ(v[0].x, 3.0);
  EXPECT_EQ(v[0].first, 0u);
  EXPECT_EQ(v[1].slot, 9u);
  EXPECT_EQ(v[1].first, 6u);
  EXPECT_EQ(v.norm2(), 9.0 + 16.0);
  EXPECT_EQ(v.dropped, 1u);
  const SparseVector& s = b.build(example({{9, 1.0f}, {2, 1.0f}, {5, 1.0f}}), Order::kSlot);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].slot, 2u);
  EXPECT_EQ(s[0].first, 1u);
  EXPECT_EQ(s[1].slot, 5u);
  EXPECT_EQ(s[2].slot, 9u);
  EXPECT_EQ(s[2].first, 0u);
}

// Sums are taken in double in the example's order (0.1f three times is not 0.3 in float arithmetic).
TEST(VectorBuilder, SumsInDoubleInExampleOrder) {
  VectorBuilder b(8);
  const float a = 0.1f, c = 1e8f, d = -1e8f;
  const SparseVector& v = b.build(example({{1, c}, {1, a}, {1, d}}));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].x, (static_cast<double>(c) + a) + d);
}

// kSlotWhenMerged keeps the example's order when it already is a vector, and sorts otherwise.
TEST(VectorBuilder, SlotOrderOnlyWhenMerged) {
  VectorBuilder b(8);
  const SparseVector& plain = b.build(example({{9, 1.0f}, {2, 1.0f}}), Order::kSlotWhenMerged);
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].slot, 9u);
  const SparseVector& merged = b.build(example({{9, 1.0f}, {2, 1.0f}, {9, 1.0f}}), Order::kSlotWhenMerged);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].slot, 2u);
  EXPECT_EQ(merged[1].x, 2.0);
  const SparseVector& dropped =
      b.build(example({{9, 1.0f}, {2, INFINITY}, {4, 1.0f}}), Order::kSlotWhenMerged);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[0].slot, 4u);
}

// The same for a wide example (sorted, then merged): first-seen order when nothing merged, else slot order.
TEST(VectorBuilder, SlotOrderOnlyWhenMergedWide) {
  VectorBuilder b(18);
  Example ex;
  for (uint32_t i = 0; i < 400; ++i) ex.features.push_back(Feature{(i * 7919u) % 262144u, 1.0f + i});
  const SparseVector& plain = b.build(ex, Order::kSlotWhenMerged);
  ASSERT_EQ(plain.size(), 400u);
  for (uint32_t i = 0; i < 400; ++i) ASSERT_EQ(plain[i].first, i);
  ex.features.push_back(Feature{7919u, 0.5f});  // repeats feature 1's slot
  const SparseVector& merged = b.build(ex, Order::kSlotWhenMerged);
  ASSERT_EQ(merged.size(), 400u);
  const Coord* c = std::find_if(merged.begin(), merged.end(), [](const Coord& k) { return k.slot == 7919u; });
  ASSERT_NE(c, merged.end());
  EXPECT_EQ(c->x, 2.5);
  EXPECT_EQ(c->first, 1u);
  for (size_t k = 1; k < merged.size(); ++k) ASSERT_LT(merged[k - 1].slot, merged[k].slot);
}

// Wide examples go through the radix sort: same coordinates as a comparison sort of the first-seen vector,
// at several widths of the slot (one and three digits), with many repeats.
TEST(VectorBuilder, RadixSortAgreesWithComparisonSort) {
  std::mt19937_64 rng(7);
  for (int bits : {6, 11, 18, 30}) {
    for (size_t n : {255u, 256u, 5000u}) {
      Example ex;
      std::uniform_int_distribution<uint64_t> index(0, (uint64_t{1} << std::min(bits + 1, 40)) - 1);
      std::uniform_real_distribution<float> value(-2.0f, 2.0f);
      for (size_t i = 0; i < n; ++i) ex.features.push_back(Feature{index(rng), value(rng)});
      VectorBuilder b(bits);
      const SparseVector& f = b.build(ex, Order::kFirstSeen);
      std::vector<Coord> want(f.begin(), f.end());
      std::sort(want.begin(), want.end(), [](const Coord& p, const Coord& q) { return p.slot < q.slot; });
      const SparseVector& s = b.build(ex, Order::kSlot);
      ASSERT_EQ(s.size(), want.size()) << bits << " " << n;
      for (size_t k = 0; k < want.size(); ++k) {
        ASSERT_EQ(s[k].slot, want[k].slot) << bits << " " << n << " " << k;
        ASSERT_EQ(s[k].x, want[k].x);
        ASSERT_EQ(s[k].first, want[k].first);
      }
    }
  }
}

// Every order against a plain reference (a map from slot to its sum and first feature), on examples whose slots
// strictly increase (the short way: no table, no sort), that increase until the mask wraps them, and that hold
// zeros, non-finite values and one repeat at the end: the short way and the general ones give the same vectors.
struct Reference {
  std::vector<Coord> coords;  // first-seen order
  bool merged = false;        // some slot repeated
  uint64_t dropped = 0;
};

Reference reference(const Example& ex, int bits) {
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  Reference r;
  for (uint32_t i = 0; i < ex.features.size(); ++i) {
    const Feature& f = ex.features[i];
    if (f.value == 0.0f) continue;
    if (!std::isfinite(f.value)) {
      ++r.dropped;
      continue;
    }
    auto at = std::find_if(r.coords.begin(), r.coords.end(),
                           [&](const Coord& c) { return c.slot == (f.index & mask); });
    if (at == r.coords.end()) {
      r.coords.push_back(Coord{f.index & mask, f.value, i});
    } else {
      at->x += f.value;
      r.merged = true;
    }
  }
  std::erase_if(r.coords, [](const Coord& c) { return c.x == 0.0 || !std::isfinite(c.x); });
  return r;
}

TEST(VectorBuilder, IncreasingSlotsGiveWhatTheGeneralWayGives) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (size_t n : {1u, 40u, 300u}) {
    for (int variant = 0; variant < 4; ++variant) {
      Example ex;
      uint64_t index = variant == 1 ? 250 : 3;  // variant 1 wraps past 2^8
      for (size_t i = 0; i < n; ++i) {
        index += (variant == 3 ? 0 : 1) + rng() % 3;  // variant 3: some neighbours repeat a slot
        ex.features.push_back(Feature{index, value(rng)});
      }
      if (variant == 2 && n > 2) {
        ex.features[1].value = 0.0f;
        ex.features[n - 1].value = NAN;
      }
      if (variant == 3)
        ex.features.push_back(Feature{ex.features.front().index, 1.0f});  // a repeat at the end
      const int bits = variant == 1 ? 8 : 18;
      VectorBuilder b(bits);
      for (Order order : {Order::kFirstSeen, Order::kSlot, Order::kSlotWhenMerged}) {
        const Reference r = reference(ex, bits);
        std::vector<Coord> want = r.coords;
        if (order == Order::kSlot || (order == Order::kSlotWhenMerged && (r.merged || r.dropped > 0)))
          std::stable_sort(want.begin(), want.end(),
                           [](const Coord& p, const Coord& q) { return p.slot < q.slot; });
        const SparseVector& got = b.build(ex, order);
        ASSERT_EQ(got.size(), want.size()) << n << " " << variant;
        for (size_t k = 0; k < want.size(); ++k) {
          ASSERT_EQ(got[k].slot, want[k].slot) << n << " " << variant << " " << k;
          ASSERT_EQ(got[k].x, want[k].x);
          ASSERT_EQ(got[k].first, want[k].first);
        }
        EXPECT_EQ(got.dropped, r.dropped);
      }
    }
  }
}

}  // namespace
}  // namespace lepus

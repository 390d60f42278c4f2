// The kernels on sparse points: the sparse merge, each kernel's value against its formula, the median heuristic on
// points whose pairwise distances are known, and the point store (swap-remove, save/load, damaged input refused).
#include "kernels/kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <tbb/global_control.h>

#include "lepus/errors.h"

namespace lepus::kernels {
namespace {

PointRef point(const std::vector<SlotValue>& c) {
  double n2 = 0.0;
  for (const auto& v : c) n2 += v.x * v.x;
  return PointRef{c.data(), c.size(), n2};
}

TEST(Kernels, SparseMergeAndFormulas) {
  const std::vector<SlotValue> a = {{1, 2.0}, {5, -1.0}, {9, 3.0}},
                               b = {{0, 7.0}, {5, 4.0}, {9, 0.5}, {12, 1.0}};
  EXPECT_DOUBLE_EQ(dot(point(a), point(b)), -4.0 + 1.5);
  EXPECT_DOUBLE_EQ(dot(point(b), point(a)), -2.5);
  EXPECT_DOUBLE_EQ(dot(point(a), PointRef{}), 0.0);
  const Kernel lin(KernelParams{KernelKind::kLinear, 2, 1.0, 0.0});
  EXPECT_DOUBLE_EQ(lin(point(a), point(b)), -2.5);
  const Kernel poly(KernelParams{KernelKind::kPolynomial, 3, 0.5, 0.0});
  EXPECT_DOUBLE_EQ(poly(point(a), point(b)), std::pow(-2.5 + 0.5, 3));
  const Kernel rbf(KernelParams{KernelKind::kRbf, 2, 1.0, 1.5});
  const double d2 = 14.0 + 66.25 - 2.0 * -2.5;  // ‖a‖² + ‖b‖² - 2aᵀb
  EXPECT_NEAR(rbf(point(a), point(b)), std::exp(-d2 / (2.0 * 1.5 * 1.5)), 1e-15);
  EXPECT_DOUBLE_EQ(rbf.self(point(a)), 1.0);
  EXPECT_THROW(Kernel(KernelParams{KernelKind::kRbf, 2, 1.0, 0.0}), ConfigError);
  EXPECT_THROW(Kernel(KernelParams{KernelKind::kPolynomial, 0, 1.0, 0.0}), ConfigError);
  EXPECT_THROW(kernel_row("sigmoid"), ConfigError);
  EXPECT_EQ(kernel_names(), "linear, poly, rbf");
}

// Points 0, 1, 3 and 7 on one axis: pair distances 1, 3, 7, 2, 6, 4; the lower median of six is the third
// smallest, 3.
TEST(Kernels, MedianHeuristic) {
  PointStore s;
  for (double x : {0.0, 1.0, 3.0, 7.0}) {
    std::vector<SlotValue> c;
    if (x != 0.0) c.push_back({4, x});
    s.add(point(c));
  }
  EXPECT_DOUBLE_EQ(median_distance(s), 3.0);
  EXPECT_DOUBLE_EQ(median_distance(s, 2), 1.0);  // only the first two points
  PointStore same;
  const std::vector<SlotValue> c = {{1, 2.0}};
  for (int i = 0; i < 3; ++i) same.add(point(c));
  EXPECT_DOUBLE_EQ(median_distance(same), 1.0);  // every distance 0
}

TEST(Kernels, PointStoreRemoveSaveLoad) {
  PointStore s;
  const std::vector<SlotValue> a = {{1, 2.0}}, b = {{3, 1.0}, {8, -2.0}}, c = {{2, 5.0}, {4, 1.0}, {6, 1.0}};
  s.add(point(a));
  s.add(point(b));
  s.add(point(c));
  s.swap_remove(0);  // c takes a's place
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].n, 3u);
  EXPECT_DOUBLE_EQ(s[0].norm2, 27.0);
  EXPECT_EQ(s[1].data[1].slot, 8u);
  ModelWriter w;
  s.save(w);
  const std::vector<uint8_t> bytes = w.bytes();
  PointStore t;
  ModelReader r(bytes.data(), bytes.size(), "mem");
  t.load(r, "test");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(dot(t[0], s[0]), 27.0);
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    PointStore u;
    ModelReader rc(bytes.data(), cut, "cut");
    EXPECT_THROW(u.load(rc, "test"), ModelFormatError) << cut;
  }
}

// Past kParallelFrom points the kernel row is computed on several threads: each entry alone, so one thread and
// four give the same numbers, equal to the serial loop.
TEST(Kernels, ParallelRowEqualsSerial) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0.0, 1.0);
  PointStore s;
  for (size_t i = 0; i < 3 * kParallelFrom; ++i) {
    std::vector<SlotValue> c;
    for (uint64_t j = 0; j < 8; ++j)
      if (g(rng) > 0.0) c.push_back({j * 7 + (i % 5), g(rng)});
    s.add(point(c));
  }
  const std::vector<SlotValue> xc = {{0, 0.5}, {7, -1.0}, {15, 2.0}};
  const Kernel k(KernelParams{KernelKind::kRbf, 2, 1.0, 1.3});
  std::vector<double> one(s.size()), four(s.size());
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    evaluate_all(k, s, point(xc), one.data());
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 4);
    evaluate_all(k, s, point(xc), four.data());
  }
  EXPECT_EQ(one, four);
  for (size_t i = 0; i < s.size(); i += 97) EXPECT_EQ(one[i], k(s[i], point(xc))) << i;
}

}  // namespace
}  // namespace lepus::kernels

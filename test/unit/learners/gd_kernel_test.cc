// The vector kernels of gd_kernel.h (the default mode's bookkeeping, 4-wide SSE2 and 8-wide AVX2, and the AVX2
// weight update) must be bit-identical to the scalar loops: same slot bits, same sums, same cap count, on data that
// exercises every branch (repeated slots inside a group, tiny values whose square is subnormal, zeros, huge values
// that overflow G, |x| growth with and without a previous N, NaN and infinite values). On a CPU without AVX2 the
// AVX2 runs are SSE2 runs, and the comparison still holds.
#include "learners/gd_kernel.h"

#include "core/intel_rsqrt.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace lepus {
namespace {

struct KernelRun {
  std::vector<GdSlot> slots;
  GdKernelArgs args;
};

using gd_kernel::Simd;

// The bookkeeping and the weight update of every example in turn, both by the version `simd`.
KernelRun run(Simd simd, const std::vector<std::vector<Feature>>& examples, const std::vector<float>& g2s,
              int bits, bool lanes = false) {
  KernelRun out{std::vector<GdSlot>(size_t{1} << bits, GdSlot{0.0f, 0.0f, 0.0f, 0.0f}),
                GdKernelArgs{0.0f, 0.5f, 0}};
  uint64_t capped = 0;
  float norm_sum = 0.0f, ppu_sum = 0.0f;
  for (size_t e = 0; e < examples.size(); ++e) {
    GdKernelArgs a{g2s[e], 0.5f, (uint64_t{1} << bits) - 1, lanes};
    gd_accumulate<true, true, true>(out.slots.data(), examples[e].data(), examples[e].size(), a, simd);
    capped += a.capped;
    norm_sum += a.norm_x;
    ppu_sum += a.ppu;
    // Move the weights (so rescaling has something to scale), with a step that varies in sign and size.
    const float u = (e % 3 == 0 ? -0.25f : 0.5f) / (1.0f + static_cast<float>(e % 7));
    gd_update(out.slots.data(), examples[e].data(), examples[e].size(), a.mask, u, simd);
  }
  out.args.norm_x = norm_sum;
  out.args.ppu = ppu_sum;
  out.args.capped = capped;
  return out;
}

void expect_same_bits(const KernelRun& scalar, const KernelRun& simd) {
  ASSERT_EQ(scalar.slots.size(), simd.slots.size());
  EXPECT_EQ(0, std::memcmp(scalar.slots.data(), simd.slots.data(), scalar.slots.size() * sizeof(GdSlot)));
  for (size_t i = 0; i < scalar.slots.size(); ++i) {
    const GdSlot& a = scalar.slots[i];
    const GdSlot& b = simd.slots[i];
    if (std::memcmp(&a, &b, sizeof a) != 0) {
      ADD_FAILURE() << "slot " << i << ": scalar (" << a.w << " " << a.g << " " << a.n << " " << a.r
                    << ") simd (" << b.w << " " << b.g << " " << b.n << " " << b.r << ")";
      break;
    }
  }
  EXPECT_EQ(std::bit_cast<uint32_t>(scalar.args.norm_x), std::bit_cast<uint32_t>(simd.args.norm_x));
  EXPECT_EQ(std::bit_cast<uint32_t>(scalar.args.ppu), std::bit_cast<uint32_t>(simd.args.ppu));
  EXPECT_EQ(scalar.args.capped, simd.args.capped);
}

// Examples with every awkward value; `special` adds NaN and infinite values (NaN then spreads through the slots).
void hostile(bool special, std::vector<std::vector<Feature>>& examples, std::vector<float>& g2s) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> unit(-3.0f, 3.0f);
  for (int e = 0; e < 3000; ++e) {
    std::vector<Feature> fs;
    const int n = static_cast<int>(rng() % 41);  // lengths that are and are not multiples of four and eight
    for (int k = 0; k < n; ++k) {
      float v = unit(rng);
      switch (rng() % 40) {
        case 0: v = 1e-25f; break;  // square is subnormal
        case 1: v = -1e-30f; break;
        case 2: v = 0.0f; break;
        case 3: v = 3e19f; break;  // g2 x^2 overflows
        case 4: v *= 1e6f; break;  // N grows, w rescaled
        case 5:
          if (special) v = std::numeric_limits<float>::quiet_NaN();
          break;
        case 6:
          if (special) v = -std::numeric_limits<float>::infinity();
          break;
        default: break;
      }
      fs.push_back(Feature{rng(), v});
    }
    examples.push_back(std::move(fs));
    g2s.push_back(e % 50 == 0 ? 1e30f : std::uniform_real_distribution<float>(1e-4f, 4.0f)(rng));
  }
}

// A longer example takes exactly the room it needs and does not copy the stale plan: vector's growth would round
// the capacity up to twice the old one and copy it, and the freed smaller blocks stayed resident in the learner
// thread's heap (rcv1 -q ff: 676 KiB for a 410 KiB plan). A shorter example reuses the room.
TEST(GdKernel, PlanGrowsToExactlyTheLongestExample) {
  GdPlan plan;
  plan.size_for(1000);
  plan.size_for(1500);
  EXPECT_EQ(plan.n, 1500u);
  EXPECT_EQ(plan.slot.capacity(), 1500u);
  EXPECT_EQ(plan.x.capacity(), 1500u);
  EXPECT_EQ(plan.shared.capacity(), 1500u / 8);
  const uint32_t* room = plan.slot.data();
  plan.size_for(20);
  EXPECT_EQ(plan.n, 20u);
  EXPECT_EQ(plan.slot.data(), room);
  EXPECT_EQ(plan.slot.size(), 1500u);
}

TEST(GdKernel, VectorDefaultModeIsBitIdenticalToScalar) {
  std::vector<std::vector<Feature>> examples;
  std::vector<float> g2s;
  hostile(false, examples, g2s);  // 64 slots: groups of four or eight often repeat a slot
  const KernelRun scalar = run(Simd::kScalar, examples, g2s, 6);
  expect_same_bits(scalar, run(Simd::kSse2, examples, g2s, 6));
  expect_same_bits(scalar, run(Simd::kAvx2, examples, g2s, 6));
}

TEST(GdKernel, VectorVersionsHandleNanAndInfinityAsScalar) {
  std::vector<std::vector<Feature>> examples;
  std::vector<float> g2s;
  hostile(true, examples, g2s);
  const KernelRun scalar = run(Simd::kScalar, examples, g2s, 14);
  expect_same_bits(scalar, run(Simd::kSse2, examples, g2s, 14));
  expect_same_bits(scalar, run(Simd::kAvx2, examples, g2s, 14));
}

TEST(GdKernel, VectorVersionsMatchScalarOnOrdinaryData) {
  // Mostly distinct slots (the fast path), values of a tf-idf-like scale.
  std::mt19937_64 rng(11);
  std::vector<std::vector<Feature>> examples;
  std::vector<float> g2s;
  for (int e = 0; e < 2000; ++e) {
    std::vector<Feature> fs;
    for (int k = 0; k < 101; ++k)
      fs.push_back(Feature{rng(), std::uniform_real_distribution<float>(0.0f, 0.5f)(rng)});
    examples.push_back(std::move(fs));
    g2s.push_back(std::uniform_real_distribution<float>(1e-3f, 1.0f)(rng));
  }
  const KernelRun scalar = run(Simd::kScalar, examples, g2s, 18);
  expect_same_bits(scalar, run(Simd::kSse2, examples, g2s, 18));
  expect_same_bits(scalar, run(Simd::kAvx2, examples, g2s, 18));
}

// Long examples (sums in lanes): every version adds the same terms in the same lanes, colliding slots included.
TEST(GdKernel, LaneSumsAreTheSameOnEveryVersion) {
  std::vector<std::vector<Feature>> examples;
  std::vector<float> g2s;
  hostile(false, examples, g2s);
  for (int bits : {6, 14}) {  // 64 slots: collisions in most groups of eight; 16k: few
    const KernelRun scalar = run(Simd::kScalar, examples, g2s, bits, true);
    expect_same_bits(scalar, run(Simd::kSse2, examples, g2s, bits, true));
    expect_same_bits(scalar, run(Simd::kAvx2, examples, g2s, bits, true));
  }
}

// The lane order as documented: feature i's terms in lane i mod 8 for the first 8 floor(n/8), the lanes combined
// by combine_lanes, the rest in order. Checked against that definition written out with the one-feature step, on
// an example with repeated slots; and the lane sums are not VW's order (else the mode would do nothing).
TEST(GdKernel, LaneSumsFollowTheirDefinition) {
  std::mt19937_64 rng(5);
  std::vector<Feature> fs;
  for (int k = 0; k < 1203; ++k)
    fs.push_back(Feature{rng() % 700, std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng)});
  const uint64_t mask = (uint64_t{1} << 10) - 1;
  std::vector<GdSlot> start(mask + 1, GdSlot{0.1f, 0.5f, 0.25f, 0.0f});

  std::vector<GdSlot> ref = start;
  GdKernelArgs r{0.75f, 0.5f, mask};
  float ln[8] = {0.0f}, lp[8] = {0.0f};
  const size_t m = fs.size() / 8 * 8;
  for (size_t i = 0; i < m; ++i)
    gd_kernel::step<true, true, true>(ref[fs[i].index & mask], fs[i].value, r, ln[i % 8], lp[i % 8]);
  float norm_x = gd_kernel::combine_lanes(ln), ppu = gd_kernel::combine_lanes(lp);
  for (size_t i = m; i < fs.size(); ++i)
    gd_kernel::step<true, true, true>(ref[fs[i].index & mask], fs[i].value, r, norm_x, ppu);

  for (Simd simd : {Simd::kScalar, Simd::kSse2, Simd::kAvx2}) {
    std::vector<GdSlot> got = start;
    GdKernelArgs a{0.75f, 0.5f, mask, true};
    gd_accumulate<true, true, true>(got.data(), fs.data(), fs.size(), a, simd);
    EXPECT_EQ(std::bit_cast<uint32_t>(a.norm_x), std::bit_cast<uint32_t>(norm_x));
    EXPECT_EQ(std::bit_cast<uint32_t>(a.ppu), std::bit_cast<uint32_t>(ppu));
    EXPECT_EQ(0, std::memcmp(got.data(), ref.data(), ref.size() * sizeof(GdSlot)));
  }
  std::vector<GdSlot> exact = start;
  GdKernelArgs e{0.75f, 0.5f, mask};
  gd_accumulate<true, true, true>(exact.data(), fs.data(), fs.size(), e);
  EXPECT_NE(std::bit_cast<uint32_t>(e.ppu), std::bit_cast<uint32_t>(ppu));
  EXPECT_NEAR(e.ppu, ppu, 1e-5 * std::fabs(ppu));
  EXPECT_NEAR(e.norm_x, norm_x, 1e-5 * std::fabs(norm_x));
  EXPECT_EQ(0,
            std::memcmp(exact.data(), ref.data(), ref.size() * sizeof(GdSlot)));  // the slots do not change
}

#if defined(LEPUS_GD_X86)
TEST(GdKernel, FourWideRsqrtIsIntelRsqrtBitForBit) {
  // Random bit patterns (every sign, exponent and NaN), with ordinary positive numbers and zeros mixed in so that
  // both the vector path (four positive normals) and the fallback run.
  std::mt19937 rng(3);
  uint64_t vector_groups = 0;
  for (int t = 0; t < 400000; ++t) {
    alignas(16) uint32_t in[4];
    for (auto& b : in) {
      b = static_cast<uint32_t>(rng());
      if (t % 4 != 0) b &= 0x7fffffffu;                                     // positive
      if (t % 8 == 1) b = (b & 0x807fffffu) | ((1u + rng() % 254u) << 23);  // normal
    }
    if (t % 97 == 0) in[rng() % 4] = 0;
    const __m128 x = _mm_load_ps(reinterpret_cast<const float*>(in));
    alignas(16) uint32_t out[4];
    _mm_store_ps(reinterpret_cast<float*>(out), gd_kernel::rsqrt4(x));
    bool all_normal = true;
    for (int l = 0; l < 4; ++l) {
      const uint32_t e = in[l] >> 23;
      all_normal = all_normal && e > 0 && e < 255;
      ASSERT_EQ(out[l], intel_rsqrt_bits(in[l])) << std::hex << "input 0x" << in[l];
    }
    vector_groups += all_normal;
  }
  EXPECT_GT(vector_groups, 10000u);
}

// rsqrt8 of eight lanes, out of a function compiled for AVX2 (the test file is not).
LEPUS_AVX2 void rsqrt8_of(const uint32_t* in, uint32_t* out) {
  _mm256_storeu_ps(reinterpret_cast<float*>(out),
                   gd_kernel::rsqrt8(_mm256_loadu_ps(reinterpret_cast<const float*>(in))));
}

TEST(GdKernel, EightWideRsqrtIsIntelRsqrtBitForBit) {
  if (gd_simd() != Simd::kAvx2) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(5);
  uint64_t vector_groups = 0;
  for (int t = 0; t < 200000; ++t) {
    uint32_t in[8];
    for (auto& b : in) {
      b = static_cast<uint32_t>(rng());
      if (t % 4 != 0) b &= 0x7fffffffu;
      if (t % 8 == 1 || t % 8 == 3) b = (b & 0x807fffffu) | ((1u + rng() % 254u) << 23);
    }
    if (t % 97 == 0) in[rng() % 8] = 0;
    uint32_t out[8];
    rsqrt8_of(in, out);
    bool all_normal = true;
    for (int l = 0; l < 8; ++l) {
      const uint32_t e = in[l] >> 23;
      all_normal = all_normal && e > 0 && e < 255;
      ASSERT_EQ(out[l], intel_rsqrt_bits(in[l])) << std::hex << "input 0x" << in[l];
    }
    vector_groups += all_normal;
  }
  EXPECT_GT(vector_groups, 10000u);
}
#endif

}  // namespace
}  // namespace lepus

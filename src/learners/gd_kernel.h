// The per-feature bookkeeping of one sgd update (VW's pred_per_update_feature), in VW's arithmetic and order.
//
// For every feature (x, slot s) of the example, in order: G += g2 x^2 (adaptive); if |x| > N, rescale w and set
// N = |x| (normalized; Ross, Mineiro & Langford 2013, Alg. 1); norm_x += x^2 / N^2; cache the slot's rate
// r = G^-1/2 / N (power_t 0.5) or G^-p (N^2)^(p-1); and ppu += x^2 r. gd.cc runs one instantiation per update mode.
//
// The default mode (adaptive, normalized, power_t 0.5) also has vector versions: 4-wide SSE2 (baseline x86-64,
// what the build targets) and 8-wide AVX2, compiled for AVX2 alone and chosen at run time when the CPU has it
// (gd_simd()). Slots are loaded and transposed into w, G, N vectors, the IEEE divisions x^2/N^2 and 1/N and the
// rsqrt model run in all lanes at once, and the two sums are still added lane by lane in feature order, so the
// result is bit-identical to the scalar loop: the same IEEE operations on the same operands (no FMA: AVX2 is
// enabled without it, so nothing is contracted). A group whose slots collide falls back to the scalar step, as the
// later feature must see the earlier one's update. The weight update (gd_update) has an AVX2 version too.
// gd_kernel_test.cc checks the bits of every version against the scalar loops.
//
// Sums in eight lanes (GdKernelArgs::lanes; GdLearner sets it for an example of kLaneMin or more features unless
// --vw_exact): VW adds the terms of a sum one after another, so a long example's bookkeeping waits on a chain of
// dependent additions. In lane mode feature i's terms go to lane i mod 8 (in order within each lane) for the first
// 8 floor(n/8) features, the lanes are combined by combine_lanes(), and the rest are added in order. Every version
// (scalar, SSE2, AVX2) keeps that order, so results still do not depend on the CPU; they differ from VW's in the
// last bits of a sum.
#pragma once
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cpu.h"
#include "core/intel_rsqrt.h"
#include "lepus/default_init_allocator.h"
#include "lepus/example.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define LEPUS_GD_X86 1
// The AVX2 kernel's functions: compiled for AVX2 (without FMA) whatever the build's baseline.
#define LEPUS_AVX2 __attribute__((target("avx2")))
// The vector steps are large for the inliner's taste, but called out of line their two sums would go through
// memory, one store-to-load round trip per addition.
#define LEPUS_GD_INLINE inline __attribute__((always_inline))
#endif

namespace lepus {

// Per-slot state, interleaved so one feature touches one 16-byte cell.
struct GdSlot {
  float w;  // weight
  float g;  // sum of squared gradients (adaptive)
  float n;  // largest |x| seen (normalized)
  float r;  // rate cached by the last example that touched the slot
};
static_assert(sizeof(GdSlot) == 16);

struct GdKernelArgs {
  float g2;  // importance weight * squared gradient
  float power_t;
  uint64_t mask;        // 2^b - 1
  bool lanes = false;   // the sums in eight lanes (see above)
  float norm_x = 0.0f;  // out: sum x^2 / N^2
  float ppu = 0.0f;     // out: sum x^2 r
  uint64_t capped = 0;  // out: adaptive sums capped at FLT_MAX
};

// One example's features as the AVX2 update passes read them, written once, by the prediction pass that
// precedes them (gd_kernel::score_plan_avx2) or by gd_kernel::plan_avx2(): each feature's masked slot index
// and value, and for each group of eight features whether two of them share a slot. The first 8 floor(n/8)
// features are kept by groups of eight in the order 0 2 4 6 1 3 5 7, the lane order in which the kernels
// transpose pairs of slots; the rest in order (plan_pos). So the passes load a group's values with one vector
// load and test its collisions with one byte, where each pass had taken the masked indices and values out of
// the 16-byte features and compared all eight.
struct GdPlan {
  std::vector<uint32_t, DefaultInitAllocator<uint32_t>> slot;
  std::vector<float, DefaultInitAllocator<float>> x;
  std::vector<uint8_t, DefaultInitAllocator<uint8_t>> shared;  // per group of eight: 1 when two share a slot
  size_t n = 0;
  // Room for n features. The vectors only grow, and an example's plan is rewritten whole by the next one, so a
  // longer example drops the old vectors before it takes exactly what it needs: growing them in place would copy
  // the stale plan and leave the freed smaller blocks resident in the learner thread's heap (rcv1 -q ff: 676 KiB
  // for a 410 KiB plan).
  void size_for(size_t count) {
    n = count;
    if (slot.size() >= count) return;
    decltype(slot)().swap(slot);
    decltype(x)().swap(x);
    decltype(shared)().swap(shared);
    slot.resize(count);
    x.resize(count);
    shared.resize(count / 8);
  }
};

namespace gd_kernel {

// Where feature i of an n-feature example is kept in its GdPlan.
inline size_t plan_pos(size_t i, size_t n) {
  static constexpr uint8_t kPos[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  return i < (n & ~size_t{7}) ? (i & ~size_t{7}) | kPos[i & 7] : i;
}

// The fewest features an example has for GdLearner to sum it in lanes (by default): below it the chain of additions
// is short enough for the CPU to overlap with the rest of the work (rcv1's ~75 features: no faster in lanes), and
// most examples without interactions stay below it (rcv1's longest has 316), so their results are VW's to the bit.
inline constexpr size_t kLaneMin = 1024;

// The eight lane sums s[0..7] (lane l: features i = l mod 8), combined in this fixed order (an AVX2 register's
// halves added, then its pairs).
inline float combine_lanes(const float* s) {
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

// Values whose square would be subnormal are replaced by +-sqrt(FLT_MIN) in the rate bookkeeping.
inline constexpr float kXMin = 1.084202172485504434e-19f;  // sqrt(FLT_MIN) = 2^-63, exact
inline constexpr float kX2Min = kXMin * kXMin;             // FLT_MIN
static_assert(kX2Min == FLT_MIN);

// Slots are touched in hash order, i.e. at random: fetch the slot of the feature this far ahead while the current
// one is computed (the prediction pass has just brought most of them into L2).
inline constexpr size_t kPrefetch = 32;

// The prediction pass's distance: it is the first pass over the example's slots, mostly L2 misses, so it
// requests this many features' slots at once, then keeps that many in flight. On rcv1 -q ff (4,600 features
// an example, -b 18), utl/bench_learn: 256 took 0.86-0.90 of 64's time, 128 0.89, 32 0.94.
inline constexpr size_t kScoreAhead = 256;

// The vector versions of the default mode's kernel.
enum class Simd { kScalar, kSse2, kAvx2 };

// VW's 1/sqrt is the SSE rsqrtss approximation, whose bits differ between CPU vendors: lepus uses a bit-exact model
// of Intel's (the oracles' CPU), so results are the same on any host.
inline float rsqrt(float x) { return intel_rsqrt(x); }

// One feature. Values live in registers and each slot field is stored once: a read-back of a just-stored field
// would put store-forwarding latency on the critical path.
template <bool kAdaptive, bool kNormalized, bool kSqrtRate>
inline void step(GdSlot& s, float xv, GdKernelArgs& a, float& norm_x, float& ppu) {
  float x2 = xv * xv;
  if (x2 < kX2Min) [[unlikely]] {
    xv = xv > 0.0f ? kXMin : -kXMin;
    x2 = kX2Min;
  }
  float g = s.g;
  if constexpr (kAdaptive) {
    g += a.g2 * x2;
    // lepus safeguard (VW lets G overflow to inf, and keeps it): an |x| near 1e19 or beyond overflows g2 x^2; G is
    // capped at FLT_MAX, which freezes the slot (rate ~ 0) as VW's inf does, with finite state.
    if (g > FLT_MAX) [[unlikely]] {
      g = FLT_MAX;
      ++a.capped;
    }
    s.g = g;
  }
  float nn = s.n;
  if constexpr (kNormalized) {
    const float ax = std::fabs(xv);
    if (ax > nn) {
      if (nn > 0.0f) {
        if constexpr (kSqrtRate) {
          const float rescale = nn / ax;
          s.w *= kAdaptive ? rescale : rescale * rescale;
        } else {
          const float rescale = ax / nn;
          s.w *= std::pow(rescale * rescale, a.power_t - 1.0f);
        }
      }
      nn = ax;
      s.n = nn;
    }
    norm_x += std::isinf(x2) ? 1.0f : x2 / (nn * nn);
  }
  float r = 1.0f;
  if constexpr (kSqrtRate) {
    if constexpr (kAdaptive) r = rsqrt(g);
    if constexpr (kNormalized) {
      const float inv = 1.0f / nn;
      r *= kAdaptive ? inv : inv * inv;
    }
  } else {
    if constexpr (kAdaptive) r = std::pow(g, -a.power_t);
    if constexpr (kNormalized) r *= std::pow(nn * nn, a.power_t - 1.0f);  // VW uses p-1 in both modes
  }
  s.r = r;
  ppu += x2 * r;
}

#if defined(LEPUS_GD_X86)
inline __m128 select(__m128 mask, __m128 yes, __m128 no) {
  return _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no));
}

// intel_rsqrt of four lanes. When all four are positive normal numbers (G always is, once a feature was seen) the
// result is computed in vector registers as in intel_rsqrt_bits: biased exponent 126 - floor((e - 127) / 2), and
// the table entry indexed by the exponent's parity and the top 10 mantissa bits, i.e. bits 13..23 of the input.
LEPUS_GD_INLINE __m128 rsqrt4(__m128 x) {
  const __m128i bits = _mm_castps_si128(x);
  const __m128i e = _mm_srli_epi32(bits, 23);  // biased exponent, plus 256 when the sign is set
  const __m128i normal =
      _mm_and_si128(_mm_cmpgt_epi32(e, _mm_setzero_si128()), _mm_cmplt_epi32(e, _mm_set1_epi32(255)));
  if (_mm_movemask_epi8(normal) != 0xffff) [[unlikely]] {
    alignas(16) float v[4];
    _mm_store_ps(v, x);
    return _mm_setr_ps(rsqrt(v[0]), rsqrt(v[1]), rsqrt(v[2]), rsqrt(v[3]));
  }
  const __m128i j = _mm_srai_epi32(_mm_sub_epi32(e, _mm_set1_epi32(127)), 1);
  const __m128i out_exp = _mm_slli_epi32(_mm_sub_epi32(_mm_set1_epi32(126), j), 23);
  alignas(16) uint32_t k[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(k),
                  _mm_and_si128(_mm_srli_epi32(bits, 13), _mm_set1_epi32(0x7ff)));
  const __m128i mantissa =
      _mm_setr_epi32(static_cast<int>(kIntelRsqrtTable[k[0]]), static_cast<int>(kIntelRsqrtTable[k[1]]),
                     static_cast<int>(kIntelRsqrtTable[k[2]]), static_cast<int>(kIntelRsqrtTable[k[3]]));
  return _mm_castsi128_ps(_mm_or_si128(out_exp, mantissa));
}

// Features [0, 4) of fs in the default mode, four at a time; false when two of them share a slot.
LEPUS_GD_INLINE bool step4(GdSlot* slots, const Feature* fs, GdKernelArgs& a, float& norm_x, float& ppu) {
  const uint64_t k0 = fs[0].index & a.mask, k1 = fs[1].index & a.mask;
  const uint64_t k2 = fs[2].index & a.mask, k3 = fs[3].index & a.mask;
  if (k0 == k1 || k0 == k2 || k0 == k3 || k1 == k2 || k1 == k3 || k2 == k3) [[unlikely]]
    return false;
  GdSlot* s0 = slots + k0;
  GdSlot* s1 = slots + k1;
  GdSlot* s2 = slots + k2;
  GdSlot* s3 = slots + k3;
  __m128 w = _mm_loadu_ps(&s0->w), g = _mm_loadu_ps(&s1->w), nn = _mm_loadu_ps(&s2->w),
         r = _mm_loadu_ps(&s3->w);
  _MM_TRANSPOSE4_PS(w, g, nn, r);  // w = (w0..w3), g = (G0..G3), nn = (N0..N3); r is recomputed

  const __m128 xv = _mm_setr_ps(fs[0].value, fs[1].value, fs[2].value, fs[3].value);
  __m128 x2 = _mm_mul_ps(xv, xv);
  __m128 ax = _mm_and_ps(xv, _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)));
  const __m128 tiny = _mm_cmplt_ps(x2, _mm_set1_ps(kX2Min));
  if (_mm_movemask_ps(tiny)) [[unlikely]] {
    x2 = select(tiny, _mm_set1_ps(kX2Min), x2);
    ax = select(tiny, _mm_set1_ps(kXMin), ax);
  }
  // G += g2 x^2, capped at FLT_MAX.
  g = _mm_add_ps(g, _mm_mul_ps(_mm_set1_ps(a.g2), x2));
  const __m128 over = _mm_cmpgt_ps(g, _mm_set1_ps(FLT_MAX));
  if (const int m = _mm_movemask_ps(over)) [[unlikely]] {
    g = select(over, _mm_set1_ps(FLT_MAX), g);
    a.capped += static_cast<uint64_t>(std::popcount(static_cast<unsigned>(m)));
  }
  // |x| > N: w *= N/|x| where N > 0, then N = |x|.
  const __m128 grow = _mm_cmpgt_ps(ax, nn);
  if (_mm_movemask_ps(grow)) {
    const __m128 rescale = _mm_and_ps(grow, _mm_cmpgt_ps(nn, _mm_setzero_ps()));
    if (_mm_movemask_ps(rescale)) w = select(rescale, _mm_mul_ps(w, _mm_div_ps(nn, ax)), w);
    nn = select(grow, ax, nn);
  }
  // x^2 / N^2 (1 where x^2 is inf; x^2 >= 0, so isinf is == +inf), and r = G^-1/2 * (1/N).
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 norm =
      select(_mm_cmpeq_ps(x2, _mm_set1_ps(INFINITY)), one, _mm_div_ps(x2, _mm_mul_ps(nn, nn)));
  r = _mm_mul_ps(rsqrt4(g), _mm_div_ps(one, nn));
  alignas(16) float nv[4], pv[4];
  _mm_store_ps(nv, norm);
  _mm_store_ps(pv, _mm_mul_ps(x2, r));
  // The two sums, lane by lane in feature order (float addition is not associative).
  norm_x += nv[0];
  norm_x += nv[1];
  norm_x += nv[2];
  norm_x += nv[3];
  ppu += pv[0];
  ppu += pv[1];
  ppu += pv[2];
  ppu += pv[3];
  _MM_TRANSPOSE4_PS(w, g, nn, r);
  _mm_storeu_ps(&s0->w, w);
  _mm_storeu_ps(&s1->w, g);
  _mm_storeu_ps(&s2->w, nn);
  _mm_storeu_ps(&s3->w, r);
  return true;
}
#endif

#if defined(LEPUS_GD_X86)
LEPUS_AVX2 inline __m256 select8(__m256 mask, __m256 yes, __m256 no) {
  return _mm256_blendv_ps(no, yes, mask);
}

// intel_rsqrt of eight positive normal numbers (rsqrt8 without its test).
LEPUS_AVX2 LEPUS_GD_INLINE __m256 rsqrt8_normal(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i j =
      _mm256_srai_epi32(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127)), 1);
  const __m256i out_exp = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(126), j), 23);
  // Eight scalar loads: vpgatherdd is slower on AMD's cores (it took a third of this kernel's time on Zen 5).
  alignas(32) uint32_t k[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(k),
                     _mm256_and_si256(_mm256_srli_epi32(bits, 13), _mm256_set1_epi32(0x7ff)));
  const uint32_t* t = kIntelRsqrtTable.data();
  const __m256i mantissa =
      _mm256_setr_epi32(static_cast<int>(t[k[0]]), static_cast<int>(t[k[1]]), static_cast<int>(t[k[2]]),
                        static_cast<int>(t[k[3]]), static_cast<int>(t[k[4]]), static_cast<int>(t[k[5]]),
                        static_cast<int>(t[k[6]]), static_cast<int>(t[k[7]]));
  return _mm256_castsi256_ps(_mm256_or_si256(out_exp, mantissa));
}

// intel_rsqrt of eight lanes, as rsqrt4.
LEPUS_AVX2 LEPUS_GD_INLINE __m256 rsqrt8(__m256 x) {
  const __m256i e =
      _mm256_srli_epi32(_mm256_castps_si256(x), 23);  // biased exponent, plus 256 when the sign is set
  const __m256i normal = _mm256_and_si256(_mm256_cmpgt_epi32(e, _mm256_setzero_si256()),
                                          _mm256_cmpgt_epi32(_mm256_set1_epi32(255), e));
  if (_mm256_movemask_epi8(normal) != -1) [[unlikely]] {
    alignas(32) float v[8];
    _mm256_store_ps(v, x);
    for (float& f : v) f = rsqrt(f);
    return _mm256_load_ps(v);
  }
  return rsqrt8_normal(x);
}

// Eight features fs[0, 8): their masked slot indices (the low half of each index; -b is at most 30) and values, in
// lane order (0 2 4 6 | 1 3 5 7), the order in which slot pairs (0 | 1), (2 | 3), (4 | 5), (6 | 7) transpose.
LEPUS_AVX2 LEPUS_GD_INLINE void load8(const Feature* fs, uint32_t mask, __m256i& k, __m256& x) {
  static_assert(sizeof(Feature) == 16 && offsetof(Feature, value) == 8);
  const __m256 f01 = _mm256_loadu_ps(reinterpret_cast<const float*>(fs));  // lo0 hi0 v0 . | lo1 hi1 v1 .
  const __m256 f23 = _mm256_loadu_ps(reinterpret_cast<const float*>(fs + 2));
  const __m256 f45 = _mm256_loadu_ps(reinterpret_cast<const float*>(fs + 4));
  const __m256 f67 = _mm256_loadu_ps(reinterpret_cast<const float*>(fs + 6));
  const __m256 a = _mm256_shuffle_ps(f01, f23, _MM_SHUFFLE(2, 0, 2, 0));  // lo0 v0 lo2 v2 | lo1 v1 lo3 v3
  const __m256 b = _mm256_shuffle_ps(f45, f67, _MM_SHUFFLE(2, 0, 2, 0));  // lo4 v4 lo6 v6 | lo5 v5 lo7 v7
  k = _mm256_and_si256(_mm256_castps_si256(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))),
                       _mm256_set1_epi32(static_cast<int>(mask)));
  x = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}

// Whether two of eight lanes are equal: comparing the lanes with their rotations by 1 to 4 meets every pair.
LEPUS_AVX2 LEPUS_GD_INLINE bool any_equal8(__m256i k) {
  const __m256i c1 =
      _mm256_cmpeq_epi32(k, _mm256_permutevar8x32_epi32(k, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0)));
  const __m256i c2 =
      _mm256_cmpeq_epi32(k, _mm256_permutevar8x32_epi32(k, _mm256_setr_epi32(2, 3, 4, 5, 6, 7, 0, 1)));
  const __m256i c3 =
      _mm256_cmpeq_epi32(k, _mm256_permutevar8x32_epi32(k, _mm256_setr_epi32(3, 4, 5, 6, 7, 0, 1, 2)));
  const __m256i c4 =
      _mm256_cmpeq_epi32(k, _mm256_permutevar8x32_epi32(k, _mm256_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3)));
  const __m256i any = _mm256_or_si256(_mm256_or_si256(c1, c2), _mm256_or_si256(c3, c4));
  return !_mm256_testz_si256(any, any);
}

// The slots of features 0..7 as rows (0 | 1), (2 | 3), (4 | 5), (6 | 7), transposed within each 128-bit half into
// w, G, N, r in lane order (0 2 4 6 | 1 3 5 7).
LEPUS_AVX2 LEPUS_GD_INLINE void load_slots8(GdSlot* const* s, __m256& w, __m256& g, __m256& nn, __m256& r) {
  const __m256 y0 =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(&s[0]->w)), _mm_loadu_ps(&s[1]->w), 1);
  const __m256 y1 =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(&s[2]->w)), _mm_loadu_ps(&s[3]->w), 1);
  const __m256 y2 =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(&s[4]->w)), _mm_loadu_ps(&s[5]->w), 1);
  const __m256 y3 =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(&s[6]->w)), _mm_loadu_ps(&s[7]->w), 1);
  const __m256 t0 = _mm256_unpacklo_ps(y0, y1);  // w0 w2 g0 g2 | w1 w3 g1 g3
  const __m256 t1 = _mm256_unpackhi_ps(y0, y1);  // n0 n2 r0 r2 | n1 n3 r1 r3
  const __m256 t2 = _mm256_unpacklo_ps(y2, y3);  // w4 w6 g4 g6 | w5 w7 g5 g7
  const __m256 t3 = _mm256_unpackhi_ps(y2, y3);
  w = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));  // w0 w2 w4 w6 | w1 w3 w5 w7
  g = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  nn = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  r = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

// The slot pointers of a plan's group of eight at ks (features 0..7, which the plan keeps at 0 4 1 5 2 6 3
// 7).
LEPUS_GD_INLINE void group_slots(GdSlot* slots, const uint32_t* ks, GdSlot** s) {
  s[0] = slots + ks[0];
  s[1] = slots + ks[4];
  s[2] = slots + ks[1];
  s[3] = slots + ks[5];
  s[4] = slots + ks[2];
  s[5] = slots + ks[6];
  s[6] = slots + ks[3];
  s[7] = slots + ks[7];
}

// One group of eight features of a plan in the default mode, none sharing a slot: slot indices ks, values xs
// (lane order 0 2 4 6 | 1 3 5 7). Its terms of the two sums come out as vectors norm_out (x^2/N^2) and
// ppu_out (x^2 r), in the same lane order.
LEPUS_AVX2 LEPUS_GD_INLINE void step8(GdSlot* slots, const uint32_t* ks, const float* xs, float g2,
                                      uint64_t& capped, __m256& norm_out, __m256& ppu_out) {
  GdSlot* s[8];
  group_slots(slots, ks, s);
  const __m256 xv = _mm256_loadu_ps(xs);
  __m256 w, g0, nn, r;
  load_slots8(s, w, g0, nn, r);  // r is recomputed

  __m256 x2 = _mm256_mul_ps(xv, xv);
  __m256 ax = _mm256_and_ps(xv, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  const __m256 g2v = _mm256_set1_ps(g2);
  __m256 g = _mm256_add_ps(g0, _mm256_mul_ps(g2v, x2));
  const __m256 one = _mm256_set1_ps(1.0f);
  __m256 norm;
  // The common case takes one test: no x^2 below FLT_MIN, no |x| above N, and G a normal number (not capped and
  // not NaN, so x^2 is not infinite either as g2 > 0; rsqrt8's own test is then moot). Otherwise every case is
  // handled as in step().
  const __m256 g_normal = _mm256_and_ps(_mm256_cmp_ps(g, _mm256_set1_ps(FLT_MIN), _CMP_GE_OQ),
                                        _mm256_cmp_ps(g, _mm256_set1_ps(FLT_MAX), _CMP_LE_OQ));
  const __m256 rare = _mm256_or_ps(
      _mm256_or_ps(_mm256_cmp_ps(x2, _mm256_set1_ps(kX2Min), _CMP_LT_OQ), _mm256_cmp_ps(ax, nn, _CMP_GT_OQ)),
      _mm256_xor_ps(g_normal, _mm256_castsi256_ps(_mm256_set1_epi32(-1))));
  if (!_mm256_movemask_ps(rare)) [[likely]] {
    norm = _mm256_div_ps(x2, _mm256_mul_ps(nn, nn));
    r = _mm256_mul_ps(rsqrt8_normal(g), _mm256_div_ps(one, nn));  // G^-1/2 * (1/N)
  } else {
    const __m256 tiny = _mm256_cmp_ps(x2, _mm256_set1_ps(kX2Min), _CMP_LT_OQ);
    if (_mm256_movemask_ps(tiny)) {
      x2 = select8(tiny, _mm256_set1_ps(kX2Min), x2);
      ax = select8(tiny, _mm256_set1_ps(kXMin), ax);
      g = _mm256_add_ps(g0, _mm256_mul_ps(g2v, x2));
    }
    // G capped at FLT_MAX.
    const __m256 over = _mm256_cmp_ps(g, _mm256_set1_ps(FLT_MAX), _CMP_GT_OQ);
    if (const int m = _mm256_movemask_ps(over)) {
      g = select8(over, _mm256_set1_ps(FLT_MAX), g);
      capped += static_cast<uint64_t>(std::popcount(static_cast<unsigned>(m)));
    }
    // |x| > N: w *= N/|x| where N > 0, then N = |x|.
    const __m256 grow = _mm256_cmp_ps(ax, nn, _CMP_GT_OQ);
    if (_mm256_movemask_ps(grow)) {
      const __m256 rescale = _mm256_and_ps(grow, _mm256_cmp_ps(nn, _mm256_setzero_ps(), _CMP_GT_OQ));
      if (_mm256_movemask_ps(rescale)) w = select8(rescale, _mm256_mul_ps(w, _mm256_div_ps(nn, ax)), w);
      nn = select8(grow, ax, nn);
    }
    // x^2 / N^2, 1 where x^2 is inf (x^2 >= 0, so isinf is == +inf).
    norm = select8(_mm256_cmp_ps(x2, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ), one,
                   _mm256_div_ps(x2, _mm256_mul_ps(nn, nn)));
    r = _mm256_mul_ps(rsqrt8(g), _mm256_div_ps(one, nn));
  }
  norm_out = norm;
  ppu_out = _mm256_mul_ps(x2, r);
  const __m256 u0 = _mm256_unpacklo_ps(w, g);   // w0 g0 w2 g2 | w1 g1 w3 g3
  const __m256 u1 = _mm256_unpackhi_ps(w, g);   // w4 g4 w6 g6 | w5 g5 w7 g7
  const __m256 u2 = _mm256_unpacklo_ps(nn, r);  // n0 r0 n2 r2 | n1 r1 n3 r3
  const __m256 u3 = _mm256_unpackhi_ps(nn, r);
  const __m256 z0 = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(1, 0, 1, 0));  // slot 0 | slot 1
  const __m256 z1 = _mm256_shuffle_ps(u0, u2, _MM_SHUFFLE(3, 2, 3, 2));  // slot 2 | slot 3
  const __m256 z2 = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(1, 0, 1, 0));  // slot 4 | slot 5
  const __m256 z3 = _mm256_shuffle_ps(u1, u3, _MM_SHUFFLE(3, 2, 3, 2));  // slot 6 | slot 7
  // The pointers again from the plan: kept across the loop body they would be spilled to the stack and
  // reloaded.
  group_slots(slots, ks, s);
  _mm_storeu_ps(&s[0]->w, _mm256_castps256_ps128(z0));
  _mm_storeu_ps(&s[1]->w, _mm256_extractf128_ps(z0, 1));
  _mm_storeu_ps(&s[2]->w, _mm256_castps256_ps128(z1));
  _mm_storeu_ps(&s[3]->w, _mm256_extractf128_ps(z1, 1));
  _mm_storeu_ps(&s[4]->w, _mm256_castps256_ps128(z2));
  _mm_storeu_ps(&s[5]->w, _mm256_extractf128_ps(z2, 1));
  _mm_storeu_ps(&s[6]->w, _mm256_castps256_ps128(z3));
  _mm_storeu_ps(&s[7]->w, _mm256_extractf128_ps(z3, 1));
}

// A plan's group of eight from fs[0, 8): masked slot indices ks and values xs in lane order, and whether two
// of them share a slot.
LEPUS_AVX2 LEPUS_GD_INLINE void plan_group(const Feature* fs, uint32_t mask, uint32_t* ks, float* xs,
                                           uint8_t* shared) {
  __m256i k;
  __m256 xv;
  load8(fs, mask, k, xv);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(ks), k);
  _mm256_storeu_ps(xs, xv);
  *shared = any_equal8(k);
}

// The plan of fs[0, n) without a score (--l1, whose prediction reads truncated weights; --oaa's classes).
LEPUS_AVX2 inline void plan_avx2(const Feature* fs, size_t n, uint32_t mask, GdPlan& plan) {
  plan.size_for(n);
  const size_t m = n & ~size_t{7};
  for (size_t i = 0; i < m; i += 8) plan_group(fs + i, mask, &plan.slot[i], &plan.x[i], &plan.shared[i / 8]);
  for (size_t i = m; i < n; ++i) {
    plan.slot[i] = static_cast<uint32_t>(fs[i].index) & mask;
    plan.x[i] = fs[i].value;
  }
}

// The prediction pass over fs[0, n) that also writes the example's plan (GdPlan): the score sum_i w_i x_i
// added to raw, in VW's order, or with `lanes` in eight lane sums over the first 8 floor(n/8) features,
// combined by combine_lanes, then the rest in order (as GdLearner::raw_score). Slots are requested
// kScoreAhead features ahead.
LEPUS_AVX2 inline float score_plan_avx2(const GdSlot* slots, const Feature* fs, size_t n, uint32_t mask,
                                        bool lanes, float raw, GdPlan& plan) {
  plan.size_for(n);
  uint32_t* const ks = plan.slot.data();
  float* const xs = plan.x.data();
  uint8_t* const shared = plan.shared.data();
  for (size_t i = 0; i < std::min(n, kScoreAhead); ++i) __builtin_prefetch(&slots[fs[i].index & mask], 0);
  const size_t m = n & ~size_t{7};
  float s[8] = {0.0f};
  for (size_t i = 0; i < m; i += 8) {
    if (i + kScoreAhead + 8 <= n) {
      for (size_t k = i + kScoreAhead; k < i + kScoreAhead + 8; ++k)
        __builtin_prefetch(&slots[fs[k].index & mask], 0);
    }
    plan_group(fs + i, mask, ks + i, xs + i, shared + i / 8);
    if (lanes) {
      for (size_t l = 0; l < 8; ++l) s[l] += slots[fs[i + l].index & mask].w * fs[i + l].value;
    } else {
      for (size_t l = 0; l < 8; ++l) raw += slots[fs[i + l].index & mask].w * fs[i + l].value;
    }
  }
  if (lanes) raw += combine_lanes(s);
  for (size_t i = m; i < n; ++i) {
    const uint32_t k = static_cast<uint32_t>(fs[i].index) & mask;
    ks[i] = k;
    xs[i] = fs[i].value;
    raw += slots[k].w * fs[i].value;
  }
  return raw;
}

// A plan's groups [0, m/8) in the default mode (the AVX2 build of gd_accumulate's loop); m is a multiple
// of 8. With a.lanes the terms are added to the lane sums ln[8] and lp[8] (feature lane order), else to the
// sums in order.
LEPUS_AVX2 inline void accumulate_avx2(GdSlot* slots, const GdPlan& plan, size_t m, GdKernelArgs& a,
                                       float& norm_x_out, float& ppu_out, float* ln = nullptr,
                                       float* lp = nullptr) {
  // Locals: through the references the sums would make a round trip to memory per addition (the slot stores might
  // alias them), and a's fields would be reloaded after every store.
  float norm_x = norm_x_out, ppu = ppu_out;
  const float g2 = a.g2;
  const bool lanes = a.lanes;
  const uint32_t* const ks = plan.slot.data();
  const float* const xs = plan.x.data();
  const uint8_t* const shared = plan.shared.data();
  // Lane sums in step8's lane order: vector lane j holds feature lane kOf[j].
  static constexpr int kOf[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  __m256 vn = _mm256_setzero_ps(), vp = _mm256_setzero_ps();
  uint64_t capped = 0;
  for (size_t i = 0; i < m; i += 8) {
    if (i + kPrefetch + 8 <= m) {
      for (size_t k = i + kPrefetch; k < i + kPrefetch + 8; ++k) __builtin_prefetch(&slots[ks[k]], 1);
    }
    if (!shared[i / 8]) [[likely]] {
      __m256 tn, tp;
      step8(slots, ks + i, xs + i, g2, capped, tn, tp);
      if (lanes) {
        vn = _mm256_add_ps(vn, tn);
        vp = _mm256_add_ps(vp, tp);
      } else {
        alignas(32) float nv[8], pv[8];
        _mm256_store_ps(nv, tn);
        _mm256_store_ps(pv, tp);
        // The two sums in feature order (float addition is not associative): features 0..7 are lanes 0 4 1 5 2 6 3 7.
        for (int l = 0; l < 4; ++l) {
          norm_x += nv[l];
          ppu += pv[l];
          norm_x += nv[l + 4];
          ppu += pv[l + 4];
        }
      }
    } else if (lanes) {  // a slot twice: one at a time, in order, each into its lane
      alignas(32) float nv[8], pv[8], fn[8], fp[8];
      _mm256_store_ps(nv, vn);
      _mm256_store_ps(pv, vp);
      for (int j = 0; j < 8; ++j) {
        fn[kOf[j]] = nv[j];
        fp[kOf[j]] = pv[j];
      }
      for (size_t l = 0; l < 8; ++l) {
        const size_t at = plan_pos(i + l, m);
        step<true, true, true>(slots[ks[at]], xs[at], a, fn[l], fp[l]);
      }
      for (int j = 0; j < 8; ++j) {
        nv[j] = fn[kOf[j]];
        pv[j] = fp[kOf[j]];
      }
      vn = _mm256_load_ps(nv);
      vp = _mm256_load_ps(pv);
    } else {
      for (size_t l = 0; l < 8; ++l) {
        const size_t at = plan_pos(i + l, m);
        step<true, true, true>(slots[ks[at]], xs[at], a, norm_x, ppu);
      }
    }
  }
  if (lanes) {
    alignas(32) float nv[8], pv[8];
    _mm256_store_ps(nv, vn);
    _mm256_store_ps(pv, vp);
    for (int j = 0; j < 8; ++j) {
      ln[kOf[j]] += nv[j];
      lp[kOf[j]] += pv[j];
    }
  }
  a.capped += capped;
  norm_x_out = norm_x;
  ppu_out = ppu;
}

// w += u (x r) over a plan's features (the AVX2 build of gd_update); a feature whose value is not finite is
// skipped.
LEPUS_AVX2 inline void update_avx2(GdSlot* slots, const GdPlan& plan, float u) {
  const __m256 uu = _mm256_set1_ps(u);
  const size_t n = plan.n, m = n & ~size_t{7};
  const uint32_t* const ks = plan.slot.data();
  const float* const xs = plan.x.data();
  const uint8_t* const shared = plan.shared.data();
  for (size_t i = 0; i < m; i += 8) {
    if (shared[i / 8]) [[unlikely]] {  // a slot twice: one at a time, in order
      for (size_t l = 0; l < 8; ++l) {
        const size_t at = plan_pos(i + l, n);
        GdSlot& s = slots[ks[at]];
        if (std::isfinite(xs[at])) s.w += u * (xs[at] * s.r);
      }
      continue;
    }
    GdSlot* s[8];
    group_slots(slots, ks + i, s);
    const __m256 xv = _mm256_loadu_ps(xs + i);
    __m256 w, g, nn, r;
    load_slots8(s, w, g, nn, r);
    // Finite: |x|'s bits below infinity's (a NaN's are above).
    const __m256 finite = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f800000),
                           _mm256_and_si256(_mm256_castps_si256(xv), _mm256_set1_epi32(0x7fffffff))));
    const __m256 nw = select8(finite, _mm256_add_ps(w, _mm256_mul_ps(uu, _mm256_mul_ps(xv, r))), w);
    const __m128 lo = _mm256_castps256_ps128(nw),
                 hi = _mm256_extractf128_ps(nw, 1);  // features 0 2 4 6 | 1 3 5 7
    _mm_store_ss(&s[0]->w, lo);
    _mm_store_ss(&s[2]->w, _mm_shuffle_ps(lo, lo, 1));
    _mm_store_ss(&s[4]->w, _mm_shuffle_ps(lo, lo, 2));
    _mm_store_ss(&s[6]->w, _mm_shuffle_ps(lo, lo, 3));
    _mm_store_ss(&s[1]->w, hi);
    _mm_store_ss(&s[3]->w, _mm_shuffle_ps(hi, hi, 1));
    _mm_store_ss(&s[5]->w, _mm_shuffle_ps(hi, hi, 2));
    _mm_store_ss(&s[7]->w, _mm_shuffle_ps(hi, hi, 3));
  }
  for (size_t i = m; i < n; ++i) {
    GdSlot& s = slots[ks[i]];
    if (std::isfinite(xs[i])) s.w += u * (xs[i] * s.r);
  }
}
#endif

}  // namespace gd_kernel

// The best vector version this CPU runs (AVX2 when it has it), decided once.
inline gd_kernel::Simd gd_simd() {
#if defined(LEPUS_GD_X86)
  return has_avx2() ? gd_kernel::Simd::kAvx2 : gd_kernel::Simd::kSse2;
#else
  return gd_kernel::Simd::kScalar;
#endif
}

#if defined(LEPUS_GD_X86)
// The default mode's bookkeeping over a plan's features (AVX2 only; as gd_accumulate<true, true, true>).
LEPUS_AVX2 inline void gd_accumulate_plan(GdSlot* slots, const GdPlan& plan, GdKernelArgs& a) {
  using namespace gd_kernel;
  float norm_x = a.norm_x, ppu = a.ppu;
  const size_t n = plan.n, m = n & ~size_t{7};
  if (a.lanes) {
    float ln[8] = {0.0f}, lp[8] = {0.0f};
    accumulate_avx2(slots, plan, m, a, norm_x, ppu, ln, lp);
    norm_x += combine_lanes(ln);
    ppu += combine_lanes(lp);
  } else {
    accumulate_avx2(slots, plan, m, a, norm_x, ppu);
  }
  for (size_t i = m; i < n; ++i) step<true, true, true>(slots[plan.slot[i]], plan.x[i], a, norm_x, ppu);
  a.norm_x = norm_x;
  a.ppu = ppu;
}
#endif

// The weight update of the adaptive or normalized modes: w += u (x r) for each feature in order, with the rate r the
// bookkeeping cached in the slot; a feature whose value is not finite is skipped.
inline void gd_update(GdSlot* slots, const Feature* fs, size_t n, uint64_t mask, float u,
                      gd_kernel::Simd simd = gd_simd()) {
#if defined(LEPUS_GD_X86)
  if (simd == gd_kernel::Simd::kAvx2 && gd_simd() == gd_kernel::Simd::kAvx2) {
    GdPlan plan;
    gd_kernel::plan_avx2(fs, n, static_cast<uint32_t>(mask), plan);
    gd_kernel::update_avx2(slots, plan, u);
    return;
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    if (i + gd_kernel::kPrefetch < n)
      __builtin_prefetch(&slots[fs[i + gd_kernel::kPrefetch].index & mask], 1);
    if (!std::isfinite(fs[i].value)) continue;
    GdSlot& s = slots[fs[i].index & mask];
    s.w += u * (fs[i].value * s.r);
  }
}

// Runs the bookkeeping over the features of one example and leaves the sums in a.norm_x and a.ppu (in lanes with
// a.lanes). `simd` picks the default mode's vector version (gd_simd(), or another for tests; AVX2 on a CPU without
// it runs as SSE2).
template <bool kAdaptive, bool kNormalized, bool kSqrtRate>
void gd_accumulate(GdSlot* slots, const Feature* fs, size_t n, GdKernelArgs& a,
                   gd_kernel::Simd simd = gd_simd()) {
  using namespace gd_kernel;
#if defined(LEPUS_GD_X86)
  if constexpr (kAdaptive && kNormalized && kSqrtRate) {
    if (simd == Simd::kAvx2 && gd_simd() == Simd::kAvx2) {
      GdPlan plan;
      gd_kernel::plan_avx2(fs, n, static_cast<uint32_t>(a.mask), plan);
      gd_accumulate_plan(slots, plan, a);
      return;
    }
  }
#endif
  float norm_x = a.norm_x, ppu = a.ppu;
  size_t i = 0;
  if (a.lanes) {
    const size_t m = n & ~size_t{7};
    float ln[8] = {0.0f}, lp[8] = {0.0f};
    for (; i < m; ++i) {
      if (i + kPrefetch < n) __builtin_prefetch(&slots[fs[i + kPrefetch].index & a.mask], 1);
      step<kAdaptive, kNormalized, kSqrtRate>(slots[fs[i].index & a.mask], fs[i].value, a, ln[i & 7],
                                              lp[i & 7]);
    }
    norm_x += combine_lanes(ln);
    ppu += combine_lanes(lp);
  }
#if defined(LEPUS_GD_X86)
  if constexpr (kAdaptive && kNormalized && kSqrtRate) {
    if (!a.lanes && simd != Simd::kScalar) {
      for (; i + 4 <= n; i += 4) {
        if (i + kPrefetch + 4 <= n) {
          for (size_t k = i + kPrefetch; k < i + kPrefetch + 4; ++k)
            __builtin_prefetch(&slots[fs[k].index & a.mask], 1);
        }
        if (!step4(slots, fs + i, a, norm_x, ppu)) [[unlikely]] {
          for (size_t k = i; k < i + 4; ++k)
            step<true, true, true>(slots[fs[k].index & a.mask], fs[k].value, a, norm_x, ppu);
        }
      }
    }
  }
#endif
  for (; i < n; ++i) {
    if (i + kPrefetch < n) __builtin_prefetch(&slots[fs[i + kPrefetch].index & a.mask], 1);
    step<kAdaptive, kNormalized, kSqrtRate>(slots[fs[i].index & a.mask], fs[i].value, a, norm_x, ppu);
  }
  a.norm_x = norm_x;
  a.ppu = ppu;
}

}  // namespace lepus

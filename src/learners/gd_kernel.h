// The per-feature bookkeeping of one sgd update (VW's pred_per_update_feature), in VW's arithmetic and order.
//
// For every feature (x, slot s) of the example, in order: G += g2 x^2 (adaptive); if |x| > N, rescale w and set
// N = |x| (normalized; Ross, Mineiro & Langford 2013, Alg. 1); norm_x += x^2 / N^2; cache the slot's rate
// r = G^-1/2 / N (power_t 0.5) or G^-p (N^2)^(p-1); and ppu += x^2 r. gd.cc runs one instantiation per update mode.
//
// The default mode (adaptive, normalized, power_t 0.5) also has a 4-wide SSE2 version, kSimd: four slots are
// loaded and transposed into w, G, N, r vectors, the IEEE divisions x^2/N^2 and 1/N run four at a time, and the two
// sums are still added lane by lane in feature order, so the result is bit-identical to the scalar loop (there is
// no FMA: the build targets baseline x86-64). A group of four whose slots collide falls back to the scalar step, as
// the later feature must see the earlier one's update. gd_kernel_test.cc checks the bits against the scalar loop.
#pragma once
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/intel_rsqrt.h"
#include "lepus/example.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
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
  float g2;              // importance weight * squared gradient
  float power_t;
  uint64_t mask;         // 2^b - 1
  float norm_x = 0.0f;   // out: sum x^2 / N^2
  float ppu = 0.0f;      // out: sum x^2 r
  uint64_t capped = 0;   // out: adaptive sums capped at FLT_MAX
};

namespace gd_kernel {

// Values whose square would be subnormal are replaced by +-sqrt(FLT_MIN) in the rate bookkeeping.
inline constexpr float kXMin = 1.084202172485504434e-19f;  // sqrt(FLT_MIN) = 2^-63, exact
inline constexpr float kX2Min = kXMin * kXMin;             // FLT_MIN
static_assert(kX2Min == FLT_MIN);

// Slots are touched in hash order, i.e. at random: fetch the slot of the feature this far ahead while the current
// one is computed (the prediction pass has just brought most of them into L2).
inline constexpr size_t kPrefetch = 32;

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

#if defined(__SSE2__)
inline __m128 select(__m128 mask, __m128 yes, __m128 no) {
  return _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no));
}

// intel_rsqrt of four lanes. When all four are positive normal numbers (G always is, once a feature was seen) the
// result is computed in vector registers as in intel_rsqrt_bits: biased exponent 126 - floor((e - 127) / 2), and
// the table entry indexed by the exponent's parity and the top 10 mantissa bits, i.e. bits 13..23 of the input.
inline __m128 rsqrt4(__m128 x) {
  const __m128i bits = _mm_castps_si128(x);
  const __m128i e = _mm_srli_epi32(bits, 23);  // biased exponent, plus 256 when the sign is set
  const __m128i normal = _mm_and_si128(_mm_cmpgt_epi32(e, _mm_setzero_si128()), _mm_cmplt_epi32(e, _mm_set1_epi32(255)));
  if (_mm_movemask_epi8(normal) != 0xffff) [[unlikely]] {
    alignas(16) float v[4];
    _mm_store_ps(v, x);
    return _mm_setr_ps(rsqrt(v[0]), rsqrt(v[1]), rsqrt(v[2]), rsqrt(v[3]));
  }
  const __m128i j = _mm_srai_epi32(_mm_sub_epi32(e, _mm_set1_epi32(127)), 1);
  const __m128i out_exp = _mm_slli_epi32(_mm_sub_epi32(_mm_set1_epi32(126), j), 23);
  alignas(16) uint32_t k[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(k), _mm_and_si128(_mm_srli_epi32(bits, 13), _mm_set1_epi32(0x7ff)));
  const __m128i mantissa = _mm_setr_epi32(
      static_cast<int>(kIntelRsqrtTable[k[0]]), static_cast<int>(kIntelRsqrtTable[k[1]]),
      static_cast<int>(kIntelRsqrtTable[k[2]]), static_cast<int>(kIntelRsqrtTable[k[3]]));
  return _mm_castsi128_ps(_mm_or_si128(out_exp, mantissa));
}

// Features [i, i+4) of the default mode, four at a time; false when two of them share a slot.
inline bool step4(GdSlot* slots, const Feature* fs, GdKernelArgs& a, float& norm_x, float& ppu) {
  const uint64_t k0 = fs[0].index & a.mask, k1 = fs[1].index & a.mask;
  const uint64_t k2 = fs[2].index & a.mask, k3 = fs[3].index & a.mask;
  if (k0 == k1 || k0 == k2 || k0 == k3 || k1 == k2 || k1 == k3 || k2 == k3) [[unlikely]] return false;
  GdSlot* s0 = slots + k0;
  GdSlot* s1 = slots + k1;
  GdSlot* s2 = slots + k2;
  GdSlot* s3 = slots + k3;
  __m128 w = _mm_loadu_ps(&s0->w), g = _mm_loadu_ps(&s1->w), nn = _mm_loadu_ps(&s2->w), r = _mm_loadu_ps(&s3->w);
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
  const __m128 norm = select(_mm_cmpeq_ps(x2, _mm_set1_ps(INFINITY)), one, _mm_div_ps(x2, _mm_mul_ps(nn, nn)));
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

}  // namespace gd_kernel

// Runs the bookkeeping over the features of one example and leaves the sums in a.norm_x and a.ppu.
template <bool kAdaptive, bool kNormalized, bool kSqrtRate, bool kSimd = true>
void gd_accumulate(GdSlot* slots, const Feature* fs, size_t n, GdKernelArgs& a) {
  using namespace gd_kernel;
  float norm_x = a.norm_x, ppu = a.ppu;
  size_t i = 0;
#if defined(__SSE2__)
  if constexpr (kSimd && kAdaptive && kNormalized && kSqrtRate) {
    for (; i + 4 <= n; i += 4) {
      if (i + kPrefetch + 4 <= n) {
        for (size_t k = i + kPrefetch; k < i + kPrefetch + 4; ++k) __builtin_prefetch(&slots[fs[k].index & a.mask], 1);
      }
      if (!step4(slots, fs + i, a, norm_x, ppu)) [[unlikely]] {
        for (size_t k = i; k < i + 4; ++k) step<true, true, true>(slots[fs[k].index & a.mask], fs[k].value, a, norm_x, ppu);
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

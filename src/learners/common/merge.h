// --distributed: the merges of per-slot learner state that Learner::merge implementations share, written once.
// Every function is collective: each rank calls it with the same sizes, in the same order.
#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "dist/collective.h"
#include "learners/common/plumbing.h"
#include "sketch/frequent_directions.h"

namespace lepus::common {

// VW's allreduce average (its accumulate_weighted_avg, the merge of sgd --adaptive), for a table of `records`
// records of `stride` doubles each: rank r's record enters with the share a_r / sum_q a_q of its weight a_r =
// weight(record) >= 0, and every field becomes sum_r share_r v_r. With a the record's own accumulator (sum of
// squares: s2, G) the merge keeps one learner's worth of state instead of adding the ranks' up, and for every pair
// of fields (v, a) the merged v^2 / a is at most the largest v_r^2 / a_r over the ranks (Jensen): a merged
// parameter-free learner never bets bolder than its boldest rank. A record that only one rank moved takes that
// rank's record whole. A record with no weight on any rank takes the plain mean. Fields listed in `maxed` become
// their largest value over the ranks instead (a running max such as max |x|).
template <class Weight>
void weighted_average(Collective& ranks, double* table, size_t records, size_t stride, Weight weight,
                      std::span<const size_t> maxed = {}) {
  if (ranks.size() == 1) return;
  std::vector<double> total(records), largest(records * maxed.size());
  for (size_t i = 0; i < records; ++i) total[i] = weight(table + i * stride);
  ranks.sum(total.data(), records);
  for (size_t i = 0; i < records; ++i)
    for (size_t k = 0; k < maxed.size(); ++k) largest[i * maxed.size() + k] = table[i * stride + maxed[k]];
  if (!maxed.empty()) ranks.max(largest.data(), largest.size());
  const double plain = 1.0 / ranks.size();
  for (size_t i = 0; i < records; ++i) {
    double* r = table + i * stride;
    const double share = total[i] > 0.0 ? weight(r) / total[i] : plain;
    for (size_t f = 0; f < stride; ++f) r[f] *= share;
  }
  ranks.sum(table, records * stride);
  for (size_t i = 0; i < records; ++i)
    for (size_t k = 0; k < maxed.size(); ++k) table[i * stride + maxed[k]] = largest[i * maxed.size() + k];
}

// The registry line (LearnerTraits::merge) of a learner merged with weighted_average.
inline constexpr const char* kWeightedAverageMerge =
    "VW's allreduce average per feature, each rank weighted by its sum of squares (never bolder than its "
    "boldest "
    "rank), rounds averaged; an approximation of one learner over all the data, exact with one rank";

inline LearnerTraits weighted_average_traits() {
  LearnerTraits t;
  t.merge = kWeightedAverageMerge;
  return t;
}

// A round counter that goes with weighted_average's state (one learner's worth): the ranks' mean, rounded to a
// whole round. Every rank starts from the same count, so this is that count plus the mean of the ranks' rounds.
void average_rounds(Collective& ranks, double& t);

// Counters that count examples or rounds: what one learner over all the data would hold, the value at the last
// merge plus every rank's increments since. `at_merge` holds those values (equal on every rank) and is updated;
// a learner sets it where it sets the counters (construction, load).
void sum_increments(Collective& ranks, std::span<double* const> now, std::span<double> at_merge);

// In place: v becomes the ranks' mean of v (every rank the same length). VW's plain average (accumulate_avg).
void mean(Collective& ranks, std::vector<double>& v);

// The ranks' mean second moment (1/N) Σ_r (B_rᵀB_r + Δ_r I) as one Frequent Directions sketch of rank `rank` and
// column cap `cap`: every rank's rows, each column first multiplied by factor(slot), times 1/sqrt(N), appended in
// rank order (the same sketch on every rank) and so shrunk as they come; Δ is the ranks' mean plus the merge's own
// shrinkage. Sketches merge this way (Ghashami, Liberty, Phillips, Woodruff, "Frequent Directions: Simple and
// Deterministic Matrix Sketching", SIAM J. Comput. 2016, Section 2.2). `means` travel in the same exchange and come
// back as the ranks' mean.
FrequentDirections merge_sketches(Collective& ranks, const FrequentDirections& mine, uint32_t rank,
                                  uint64_t cap, const std::function<double(uint64_t)>& factor,
                                  std::span<double> means);

// The clipping range widened by every rank's labels (VW's range is the labels seen; the ranks saw different ones).
void merge_range(Collective& ranks, LabelClip& clip);

}  // namespace lepus::common

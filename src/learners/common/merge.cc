#include "learners/common/merge.h"

#include <cmath>

namespace lepus::common {

void sum_increments(Collective& ranks, std::span<double* const> now, std::span<double> at_merge) {
  std::vector<double> step(now.size());
  for (size_t i = 0; i < now.size(); ++i) step[i] = *now[i] - at_merge[i];
  ranks.sum(step.data(), step.size());
  for (size_t i = 0; i < now.size(); ++i) *now[i] = at_merge[i] += step[i];
}

void average_rounds(Collective& ranks, double& t) {
  if (ranks.size() == 1) return;
  ranks.sum(&t, 1);
  t = std::round(t / ranks.size());
}

void mean(Collective& ranks, std::vector<double>& v) {
  ranks.sum(v.data(), v.size());
  for (double& x : v) x /= ranks.size();
}

FrequentDirections merge_sketches(Collective& ranks, const FrequentDirections& mine, uint32_t rank,
                                  uint64_t cap, const std::function<double(uint64_t)>& factor,
                                  std::span<double> means) {
  // This rank's message: the means, Δ, then per row its length and (slot, value) pairs.
  std::vector<double> message(means.begin(), means.end());
  message.push_back(mine.shrinkage());
  std::vector<Coord> row;
  for (uint32_t j = 0; j < mine.rows(); ++j) {
    mine.row(j, row);
    message.push_back(static_cast<double>(row.size()));
    for (const Coord& c : row) {
      message.push_back(static_cast<double>(c.slot));
      message.push_back(c.x * factor(c.slot));
    }
  }
  const double k = ranks.size();
  for (double& m : means) m = 0.0;
  FrequentDirections merged(rank, cap);
  double delta = 0.0;
  for (const std::vector<double>& r : ranks.gather(message)) {
    for (size_t i = 0; i < means.size(); ++i) means[i] += r[i] / k;
    delta += r[means.size()] / k;
    for (size_t at = means.size() + 1; at < r.size();) {
      const size_t length = static_cast<size_t>(r[at++]);
      row.clear();
      for (size_t e = 0; e < length; ++e, at += 2) row.push_back({static_cast<uint64_t>(r[at]), r[at + 1]});
      merged.append(row, 1.0 / std::sqrt(k));
    }
  }
  merged.add_shrinkage(delta);
  return merged;
}

void merge_range(Collective& ranks, LabelClip& clip) {
  const LabelRange r = clip.range();
  double ends[2] = {-static_cast<double>(r.lo), static_cast<double>(r.hi)};
  ranks.max(ends, 2);
  clip.widen(static_cast<float>(-ends[0]), static_cast<float>(ends[1]));
}

}  // namespace lepus::common

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

void merge_range(Collective& ranks, LabelClip& clip) {
  const LabelRange r = clip.range();
  double ends[2] = {-static_cast<double>(r.lo), static_cast<double>(r.hi)};
  ranks.max(ends, 2);
  clip.widen(static_cast<float>(-ends[0]), static_cast<float>(ends[1]));
}

}  // namespace lepus::common

// The K instances' shared kernel rows: see row_cache.h.
#include "kernels/row_cache.h"

#include <algorithm>
#include <cstring>

namespace lepus::kernels {

uint64_t RowCache::id_of(PointRef x) {
  const bool same = next_ > 0 && x.n == last_.size() && x.norm2 == last_norm2_ &&
                    (x.n == 0 || std::memcmp(x.data, last_.data(), x.n * sizeof(SlotValue)) == 0);
  if (same) return last_id_;
  last_.assign(x.data, x.data + x.n);
  last_norm2_ = x.norm2;
  last_id_ = next_++;
  return last_id_;
}

bool RowCache::same_kernel(const KernelParams& p) const {
  return p.kind == row_kernel_.kind && p.degree == row_kernel_.degree && p.coef0 == row_kernel_.coef0 &&
         p.bandwidth == row_kernel_.bandwidth;
}

void RowCache::row(const Kernel& kernel, const PointStore& points, std::span<const uint64_t> ids, PointRef x,
                   double* out) {
  const uint64_t xid = id_of(x);
  if (xid != row_x_ || !same_kernel(kernel.params())) {  // another example or kernel: the held row is stale
    row_x_ = xid;
    row_kernel_ = kernel.params();
    ++generation_;
  }
  if (stamp_.size() < next_) {
    stamp_.resize(std::max<size_t>(next_, 2 * stamp_.size()), 0);
    value_.resize(stamp_.size());
  }
  missing_.clear();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (stamp_[ids[i]] == generation_)
      out[i] = value_[ids[i]];
    else
      missing_.push_back(i);
  }
  evaluate_some(kernel, points, missing_, x, out);
  for (size_t i : missing_) {
    value_[ids[i]] = out[i];
    stamp_[ids[i]] = generation_;
  }
}

size_t CachedPoints::add(PointRef p) {
  if (cache_) ids_.push_back(cache_->id_of(p));
  return points_.add(p);
}

void CachedPoints::assign(PointStore points) {
  points_ = std::move(points);
  ids_.clear();
  if (cache_)
    for (size_t i = 0; i < points_.size(); ++i) ids_.push_back(cache_->fresh_id());
}

void CachedPoints::row(const Kernel& kernel, PointRef x, double* out) const {
  if (points_.size() == 0) return;
  if (!cache_) {
    evaluate_all(kernel, points_, x, out);
    return;
  }
  cache_->row(kernel, points_, ids_, x, out);
}

}  // namespace lepus::kernels

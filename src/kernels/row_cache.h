// Kernel values shared by the K instances of an exact kernel learner under --oaa / --csoaa (one instance per
// class: each keeps its own stored points and dual state). The instances see the same examples in the same
// order and mostly store the same points, so the row k(x_s, x) of an example x against a stored point x_s is
// the same in every instance that stored x_s: it is computed once per example and read by the others.
//
// A point gets an id when it is met: the id of the last point met if it has the same coordinates (the K
// instances' calls on one example), else a new one. A stored point keeps the id of the example it came from,
// so equal ids mean equal coordinates, and a cached value k(id, x) is exactly what the instance would have
// computed itself: results do not change, to the bit. Points loaded from a model file get ids of their own in
// each instance (they are not matched across instances), so a run resumed with -i computes their values once
// per class.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/kernel.h"

namespace lepus::kernels {

class RowCache {
 public:
  // The id of x: the last id handed out when x has its coordinates, else a new one.
  uint64_t id_of(PointRef x);
  // A new id for a point met nowhere else (a point loaded from a model file).
  uint64_t fresh_id() { return next_++; }
  // out[i] = kernel(points[i], x), with ids[i] the id of points[i]: values this cache holds for x's id and
  // the same kernel are read, the others computed (and counted by evaluations()) and kept.
  void row(const Kernel& kernel, const PointStore& points, std::span<const uint64_t> ids, PointRef x,
           double* out);

 private:
  bool same_kernel(const KernelParams& p) const;

  std::vector<SlotValue> last_;  // the coordinates of the last point met, and its squared norm and id
  double last_norm2_ = 0.0;
  uint64_t last_id_ = 0;
  uint64_t next_ = 0;
  // The row held: for x's id under row_kernel_, value_[id] is k(point id, x) where stamp_[id] == generation_.
  uint64_t row_x_ = UINT64_MAX;
  KernelParams row_kernel_;
  uint64_t generation_ = 1;
  std::vector<double> value_;
  std::vector<uint64_t> stamp_;
  std::vector<size_t> missing_;
};

// A kernel learner's stored points with their ids, whose rows come through a RowCache once share() gave one
// (else straight from evaluate_all).
class CachedPoints {
 public:
  void share(std::shared_ptr<RowCache> cache) { cache_ = std::move(cache); }
  size_t add(PointRef p);
  // Replaces the points (a model's); ids are fresh.
  void assign(PointStore points);
  CachedPoints& operator=(PointStore points) {  // the same (a declared state moves the points it read in)
    assign(std::move(points));
    return *this;
  }
  // out[i] = kernel(points[i], x) for every stored point.
  void row(const Kernel& kernel, PointRef x, double* out) const;
  PointRef operator[](size_t i) const { return points_[i]; }
  size_t size() const { return points_.size(); }
  const PointStore& store() const { return points_; }
  void save(ModelWriter& out) const { points_.save(out); }

 private:
  PointStore points_;
  std::vector<uint64_t> ids_;  // with a cache: each point's id
  std::shared_ptr<RowCache> cache_;
};

// The capability an exact kernel learner offers the multiclass wrapper: its K instances (one per class) share
// one RowCache, given to each before it learns or loads anything.
class SharesKernelRows {
 public:
  virtual ~SharesKernelRows() = default;
  // false: this instance has no exact store (a budgeted learner), and computes its own rows.
  virtual bool share_kernel_rows(std::shared_ptr<RowCache> cache) = 0;
};

}  // namespace lepus::kernels

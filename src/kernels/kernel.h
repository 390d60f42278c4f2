// Kernels on hashed sparse examples, for the kernel learners (KONS, Sketched-KONS, kernel WEMM/LASER, kernel
// AIOLI) and the KORS dictionary sampler (src/sketch/kors.h).
//
// A stored point is its coordinates sorted by slot plus its squared norm, so every kernel below costs one
// sparse merge, O(nnz(x) + nnz(x')):
//   linear      K(x, x') = xᵀx'
//   polynomial  K(x, x') = (xᵀx' + c₀)^p                       (--degree p, --coef0 c₀)
//   rbf         K(x, x') = exp(-‖x - x'‖² / (2h²)),  ‖x - x'‖² = ‖x‖² + ‖x'‖² - 2xᵀx'   (--bandwidth h)
// The RBF bandwidth defaults to the median heuristic (Gretton, Borgwardt, Rasch, Schölkopf, Smola, "A kernel
// two-sample test", JMLR 13, 2012, §8): h = the median distance between pairs of the first points seen.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/coords.h"
#include "lepus/model_io.h"

namespace lepus::kernels {

struct SlotValue {
  uint64_t slot;
  double x;
};

// One point: its coordinates in increasing slot order, and ‖x‖². Valid while the store it came from is
// unchanged.
struct PointRef {
  const SlotValue* data = nullptr;
  size_t n = 0;
  double norm2 = 0.0;
};

// The sparse merge xᵀx'.
double dot(PointRef a, PointRef b);

// Points kept by a kernel learner, in one flat array of coordinates: B points cost B offsets and their
// nonzeros.
class PointStore {
 public:
  // Appends v (any order; copied sorted by slot) and returns its index.
  size_t add(const SparseVector& v);
  size_t add(PointRef p);
  PointRef operator[](size_t i) const {
    return PointRef{coords_.data() + start_[i], static_cast<size_t>(start_[i + 1] - start_[i]), norm2_[i]};
  }
  size_t size() const { return norm2_.size(); }
  size_t nonzeros() const { return coords_.size(); }
  // Removes point i; the last point takes its index (budgeted dictionaries evict points).
  void swap_remove(size_t i);
  void clear();
  void save(ModelWriter& out) const;
  void load(ModelReader& in, const std::string& who);  // validates counts, order and finiteness

 private:
  std::vector<SlotValue> coords_;
  std::vector<uint64_t> start_{0};  // point i is coords_[start_[i], start_[i + 1])
  std::vector<double> norm2_;
};

// A sparse vector's coordinates sorted by slot, as a point (the buffer is the caller's scratch).
PointRef sorted_point(const SparseVector& v, std::vector<SlotValue>& buffer);

enum class KernelKind : uint8_t { kLinear = 0, kPolynomial = 1, kRbf = 2 };

struct KernelParams {
  KernelKind kind = KernelKind::kRbf;
  int degree = 2;          // polynomial
  double coef0 = 1.0;      // polynomial
  double bandwidth = 0.0;  // rbf; 0: not known yet (the median heuristic sets it)
  // rbf without a bandwidth: the median distance times this (1: the median heuristic as published)
  double median_factor = 1.0;
};

// THE kernel table: one row per kernel, its option name and one line of help.
struct KernelRow {
  std::string_view name;
  KernelKind kind;
  std::string_view help;
};
const std::vector<KernelRow>& kernel_table();
const KernelRow& kernel_row(std::string_view name);  // throws ConfigError naming the table's kernels
std::string kernel_names();                          // "linear, poly, rbf"
std::string_view kernel_name(KernelKind kind);

class Kernel {
 public:
  explicit Kernel(const KernelParams& params);  // throws ConfigError for a degree < 1 or a bandwidth <= 0
  double operator()(PointRef a, PointRef b) const { return of_dot(dot(a, b), a.norm2, b.norm2); }
  // K from xᵀx' and the two squared norms (the hot loop computes the dot products itself).
  double of_dot(double xy, double xx, double yy) const;
  double self(PointRef a) const { return of_dot(a.norm2, a.norm2, a.norm2); }
  const KernelParams& params() const { return p_; }
  // "rbf, bandwidth 1.5" for the preamble.
  std::string describe() const;
  void save(ModelWriter& out) const;
  static Kernel load(ModelReader& in, const std::string& who);

 private:
  KernelParams p_;
  double inv_two_h2_ = 0.0;
};

// out[i] = K(points[i], x) for every stored point: the kernel learners' hot loop. From kParallelFrom points
// on it is spread over the cores (oneTBB, within the driver's --threads); each entry is computed alone, so
// the results do not depend on the number of threads.
constexpr size_t kParallelFrom = 1024;
void evaluate_all(const Kernel& kernel, const PointStore& points, PointRef x, double* out);
// out[i] = K(points[i], x) for the indices i in `which` alone (a RowCache's missing values), as evaluate_all.
void evaluate_some(const Kernel& kernel, const PointStore& points, std::span<const size_t> which, PointRef x,
                   double* out);
// The kernel values evaluate_all has computed in this process, over every learner (the learners' rows of
// kernel values, KORS's included, all go through it): what the tests count.
uint64_t evaluations();

// The median heuristic: the median of ‖x_i - x_j‖ over the pairs i < j of `points` (at most the first
// `limit`), or 1 when every distance is 0 (fewer than two distinct points).
double median_distance(const PointStore& points, size_t limit = 256);

}  // namespace lepus::kernels

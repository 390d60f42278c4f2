// Kernels on hashed sparse examples: see kernel.h for the formulas and the median heuristic's paper.
#include "kernels/kernel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "lepus/errors.h"

namespace lepus::kernels {
namespace {

std::string short_number(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace

double dot(PointRef a, PointRef b) {
  if (a.n > b.n) std::swap(a, b);
  double s = 0.0;
  size_t i = 0, j = 0;
  while (i < a.n && j < b.n) {
    const uint64_t si = a.data[i].slot, sj = b.data[j].slot;
    if (si == sj) {
      s += a.data[i].x * b.data[j].x;
      ++i, ++j;
    } else if (si < sj) {
      ++i;
    } else {
      ++j;
    }
  }
  return s;
}

PointRef sorted_point(const SparseVector& v, std::vector<SlotValue>& buffer) {
  buffer.resize(v.size());
  for (size_t k = 0; k < v.size(); ++k) buffer[k] = SlotValue{v[k].slot, v[k].x};
  std::sort(buffer.begin(), buffer.end(),
            [](const SlotValue& a, const SlotValue& b) { return a.slot < b.slot; });
  double n2 = 0.0;
  for (const SlotValue& c : buffer) n2 += c.x * c.x;
  return PointRef{buffer.data(), buffer.size(), n2};
}

size_t PointStore::add(PointRef p) {
  coords_.insert(coords_.end(), p.data, p.data + p.n);
  start_.push_back(coords_.size());
  norm2_.push_back(p.norm2);
  return norm2_.size() - 1;
}

size_t PointStore::add(const SparseVector& v) {
  std::vector<SlotValue> buffer;
  return add(sorted_point(v, buffer));
}

void PointStore::swap_remove(size_t i) {
  const size_t last = size() - 1;
  if (i != last) {
    // Rebuild the flat array with the last point in place of i: O(nonzeros), rare (an eviction).
    std::vector<SlotValue> coords;
    std::vector<uint64_t> start{0};
    coords.reserve(coords_.size());
    for (size_t k = 0; k < last; ++k) {
      const PointRef p = (*this)[k == i ? last : k];
      coords.insert(coords.end(), p.data, p.data + p.n);
      start.push_back(coords.size());
    }
    norm2_[i] = norm2_[last];
    coords_.swap(coords);
    start_.swap(start);
  } else {
    coords_.resize(start_[last]);
    start_.pop_back();
  }
  norm2_.pop_back();
}

void PointStore::clear() {
  coords_.clear();
  start_.assign(1, 0);
  norm2_.clear();
}

void PointStore::save(ModelWriter& out) const {
  out.put_u64(size());
  out.put_u64(coords_.size());
  for (size_t i = 0; i < size(); ++i) out.put_u64(start_[i + 1] - start_[i]);
  for (const SlotValue& c : coords_) {
    out.put_u64(c.slot);
    out.put_f64(c.x);
  }
}

void PointStore::load(ModelReader& in, const std::string& who) {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": " + who + " points: " + what);
  };
  const uint64_t points = in.get_u64("point count");
  const uint64_t nonzeros = in.get_u64("point nonzeros");
  // Bounded by the bytes present before anything is allocated: 8 per count, 16 per coordinate.
  if (points > in.remaining() / 8 || nonzeros > in.remaining() / 16)
    throw bad("counts beyond the file's size");
  std::vector<uint64_t> start{0};
  start.reserve(points + 1);
  for (uint64_t i = 0; i < points; ++i) {
    const uint64_t n = in.get_u64("point size");
    if (n > nonzeros - start.back()) throw bad("point sizes do not add up");
    start.push_back(start.back() + n);
  }
  if (start.back() != nonzeros) throw bad("point sizes do not add up");
  std::vector<SlotValue> coords(nonzeros);
  std::vector<double> norm2(points, 0.0);
  for (uint64_t i = 0; i < points; ++i)
    for (uint64_t k = start[i]; k < start[i + 1]; ++k) {
      coords[k].slot = in.get_u64("point slot");
      coords[k].x = in.get_f64("point value");
      if (!std::isfinite(coords[k].x)) throw bad("a non-finite value");
      if (k > start[i] && !(coords[k - 1].slot < coords[k].slot)) throw bad("slots not increasing");
      norm2[i] += coords[k].x * coords[k].x;
    }
  coords_.swap(coords);
  start_.swap(start);
  norm2_.swap(norm2);
}

const std::vector<KernelRow>& kernel_table() {
  static const std::vector<KernelRow> rows = {
      {"linear", KernelKind::kLinear, "K(x, x') = x.x'"},
      {"poly", KernelKind::kPolynomial, "K(x, x') = (x.x' + coef0)^degree"},
      {"rbf", KernelKind::kRbf, "K(x, x') = exp(-|x - x'|^2 / (2 bandwidth^2)), Gaussian"},
  };
  return rows;
}

std::string kernel_names() {
  std::string s;
  for (const auto& r : kernel_table()) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

const KernelRow& kernel_row(std::string_view name) {
  for (const auto& r : kernel_table())
    if (r.name == name) return r;
  throw ConfigError("unknown --kernel '" + std::string(name) + "' (one of: " + kernel_names() + ")");
}

std::string_view kernel_name(KernelKind kind) {
  for (const auto& r : kernel_table())
    if (r.kind == kind) return r.name;
  return "?";
}

Kernel::Kernel(const KernelParams& params) : p_(params) {
  if (p_.kind == KernelKind::kPolynomial && !(p_.degree >= 1 && p_.degree <= 64))
    throw ConfigError("--degree must be a whole number in [1, 64]");
  if (p_.kind == KernelKind::kPolynomial && !std::isfinite(p_.coef0))
    throw ConfigError("--coef0 must be finite");
  if (p_.kind == KernelKind::kRbf) {
    if (!(p_.bandwidth > 0.0) || !std::isfinite(p_.bandwidth)) throw ConfigError("--bandwidth must be > 0");
    inv_two_h2_ = 1.0 / (2.0 * p_.bandwidth * p_.bandwidth);
  }
}

double Kernel::of_dot(double xy, double xx, double yy) const {
  switch (p_.kind) {
    case KernelKind::kLinear: return xy;
    case KernelKind::kPolynomial: {
      const double base = xy + p_.coef0;
      double r = 1.0;
      for (int k = 0; k < p_.degree; ++k) r *= base;
      return r;
    }
    case KernelKind::kRbf: {
      const double d2 = std::max(0.0, xx + yy - 2.0 * xy);  // rounding can make a tiny distance negative
      return std::exp(-d2 * inv_two_h2_);
    }
  }
  return 0.0;
}

std::string Kernel::describe() const {
  std::string s(kernel_name(p_.kind));
  if (p_.kind == KernelKind::kPolynomial)
    s += ", degree " + std::to_string(p_.degree) + ", coef0 " + short_number(p_.coef0);
  if (p_.kind == KernelKind::kRbf) s += ", bandwidth " + short_number(p_.bandwidth);
  return s;
}

void Kernel::save(ModelWriter& out) const {
  out.put_u8(static_cast<uint8_t>(p_.kind));
  out.put_u32(static_cast<uint32_t>(p_.degree));
  out.put_f64(p_.coef0);
  out.put_f64(p_.bandwidth);
}

Kernel Kernel::load(ModelReader& in, const std::string& who) {
  KernelParams p;
  const uint8_t kind = in.get_u8("kernel kind");
  if (kind > static_cast<uint8_t>(KernelKind::kRbf))
    throw ModelFormatError(in.source() + ": " + who + ": unknown kernel");
  p.kind = static_cast<KernelKind>(kind);
  p.degree = static_cast<int>(in.get_u32("kernel degree"));
  p.coef0 = in.get_f64("kernel coef0");
  p.bandwidth = in.get_f64("kernel bandwidth");
  try {
    return Kernel(p);
  } catch (const ConfigError& e) {
    throw ModelFormatError(in.source() + ": " + who + ": " + e.what());
  }
}

namespace {
std::atomic<uint64_t> evaluated{0};
}  // namespace

uint64_t evaluations() { return evaluated.load(std::memory_order_relaxed); }

void evaluate_all(const Kernel& kernel, const PointStore& points, PointRef x, double* out) {
  const size_t n = points.size();
  evaluated.fetch_add(n, std::memory_order_relaxed);
  if (n < kParallelFrom) {
    for (size_t i = 0; i < n; ++i) out[i] = kernel(points[i], x);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 256), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t i = r.begin(); i != r.end(); ++i) out[i] = kernel(points[i], x);
  });
}

void evaluate_some(const Kernel& kernel, const PointStore& points, std::span<const size_t> which, PointRef x,
                   double* out) {
  const size_t n = which.size();
  evaluated.fetch_add(n, std::memory_order_relaxed);
  if (n < kParallelFrom) {
    for (size_t i : which) out[i] = kernel(points[i], x);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 256), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t j = r.begin(); j != r.end(); ++j) out[which[j]] = kernel(points[which[j]], x);
  });
}

double median_distance(const PointStore& points, size_t limit) {
  const size_t n = std::min(points.size(), limit);
  std::vector<double> d2;
  d2.reserve(n * (n - (n > 0 ? 1 : 0)) / 2);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const PointRef a = points[i], b = points[j];
      d2.push_back(std::max(0.0, a.norm2 + b.norm2 - 2.0 * dot(a, b)));
    }
  if (d2.empty()) return 1.0;
  // The lower median of the pairs (nth_element: O(pairs)).
  const auto mid = d2.begin() + static_cast<std::ptrdiff_t>((d2.size() - 1) / 2);
  std::nth_element(d2.begin(), mid, d2.end());
  const double h = std::sqrt(*mid);
  if (h > 0.0 && std::isfinite(h)) return h;
  // More than half the pairs coincide: the median of the nonzero distances, else 1.
  std::vector<double> nonzero;
  for (double v : d2)
    if (v > 0.0) nonzero.push_back(v);
  if (nonzero.empty()) return 1.0;
  const auto m2 = nonzero.begin() + static_cast<std::ptrdiff_t>((nonzero.size() - 1) / 2);
  std::nth_element(nonzero.begin(), m2, nonzero.end());
  const double h2 = std::sqrt(*m2);
  return std::isfinite(h2) ? h2 : 1.0;
}

}  // namespace lepus::kernels

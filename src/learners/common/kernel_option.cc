// The kernel options and the kernel a learner holds: see kernel_option.h.
#include "learners/common/kernel_option.h"

#include <cmath>
#include <limits>

#include "core/splitmix.h"
#include "learners/common/plumbing.h"
#include "lepus/errors.h"

namespace lepus::common {
namespace {

// The kernel to build while the bandwidth is unknown (nothing is evaluated before it is set).
kernels::KernelParams usable(kernels::KernelParams p) {
  if (p.kind == kernels::KernelKind::kRbf && p.bandwidth == 0.0) p.bandwidth = 1.0;
  return p;
}

}  // namespace

std::vector<OptionSpec> kernel_options() {
  using Kind = OptionSpec::Kind;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return {
      {"kernel",
       "",
       Kind::kText,
       "rbf",
       "kernel: linear, poly or rbf (Gaussian)",
       {},
       {"linear", "poly", "rbf"}},
      {"degree", "", Kind::kNumber, "2", "polynomial kernel's degree", {1.0, 64.0, false, false}},
      {"coef0", "", Kind::kNumber, "1", "polynomial kernel's constant term"},
      {"bandwidth",
       "",
       Kind::kNumber,
       "",
       "Gaussian kernel's bandwidth (default: --bandwidth_factor times the median distance between pairs of "
       "the "
       "first 256 examples, saved in the model)",
       {0.0, kInf, true, false}},
      {"bandwidth_factor",
       "",
       Kind::kNumber,
       "",
       "without --bandwidth: the Gaussian kernel's bandwidth is this times the median distance between pairs "
       "of "
       "the first 256 examples (default: 0.5 for the logistic loss, 1, the median heuristic, for the squared "
       "loss)",
       {0.0, kInf, true, false}},
  };
}

kernels::KernelParams kernel_params_of(const OptionValues& v, double default_factor) {
  kernels::KernelParams p;
  p.median_factor = v.has("bandwidth_factor") ? v.number("bandwidth_factor") : default_factor;
  if (v.has("kernel")) p.kind = kernels::kernel_row(v.text("kernel")).kind;
  if (v.has("degree")) {
    const double d = v.number("degree");
    if (d != std::floor(d)) throw ConfigError("--degree must be a whole number");
    p.degree = static_cast<int>(d);
  }
  if (v.has("coef0")) p.coef0 = v.number("coef0");
  if (v.has("bandwidth")) p.bandwidth = v.number("bandwidth");
  kernels::Kernel check(usable(p));  // throws for a bad degree or coefficient
  return p;
}

OptionSpec budget_option() {
  return {
      "budget",
      "",
      OptionSpec::Kind::kNumber,
      "0",
      "at most this many landmarks, picked by leverage-score sampling: learns on their Nystrom embedding, so "
      "time and memory per example stay bounded (0: exact, every example stored)",
      {0.0, 1e6, false, false},
      {},
      {"20"}};
}

uint64_t budget_of(const OptionValues& v) {
  if (!v.has("budget")) return 0;
  const double b = v.number("budget");
  if (b != std::floor(b) || b < 0.0) throw ConfigError("--budget must be a whole number");
  return static_cast<uint64_t>(b);
}

double hashed_uniform(uint64_t seed, uint64_t round) {
  return unit_interval(splitmix64_mix(seed * 0x9E3779B97F4A7C15ull + round + 0x632BE59BD9B4E019ull));
}

KernelSetting::KernelSetting(const kernels::KernelParams& p) : params_(p), kernel_(usable(p)) {}

void KernelSetting::set(double h, uint8_t source) {
  params_.bandwidth = h > 0.0 && std::isfinite(h) ? h : 1.0;
  source_ = source;
  kernel_ = kernels::Kernel(params_);
}

void KernelSetting::estimate(std::span<const Example> prefix, VectorBuilder& builder) {
  if (!pending()) return;
  kernels::PointStore points;
  for (const Example& x : prefix) points.add(builder.build(x));
  const double factor = params_.median_factor;
  set(factor * kernels::median_distance(points, kKernelWarmup), factor == 1.0 ? 2 : 4);
}

void KernelSetting::estimate_from(const SparseVector& first) {
  if (pending()) set(std::sqrt(first.norm2()), 3);
}

std::string KernelSetting::text() const {
  const std::string times = params_.median_factor == 1.0 ? "" : number(params_.median_factor) + " x ";
  if (pending())
    return "rbf, bandwidth: " + times + "the median distance between the first " +
           std::to_string(kKernelWarmup) + " examples";
  if (source_ == 2)
    return kernel_.describe() + " (median heuristic over the first " + std::to_string(kKernelWarmup) +
           " examples)";
  if (source_ == 4)
    return kernel_.describe() + " (" + times + "the median distance over the first " +
           std::to_string(kKernelWarmup) + " examples)";
  if (source_ == 3) return kernel_.describe() + " (the first example's norm)";
  return kernel_.describe();
}

void KernelSetting::save(ModelWriter& out) const {
  kernels::Kernel(usable(params_)).save(out);
  out.put_u8(pending() ? 0 : source_);
  if (!pending() && source_ == 4) out.put_f64(params_.median_factor);
}

void KernelSetting::load(ModelReader& in, const std::string& who) {
  const kernels::Kernel k = kernels::Kernel::load(in, who);
  const uint8_t source = in.get_u8("kernel bandwidth source");
  if (source > 4) throw ModelFormatError(in.source() + ": " + who + ": unknown bandwidth source");
  const double factor = source == 4 ? in.get_f64("kernel bandwidth factor") : params_.median_factor;
  if (!(factor > 0.0) || !std::isfinite(factor))
    throw ModelFormatError(in.source() + ": " + who + ": a bandwidth factor out of range");
  params_ = k.params();
  params_.median_factor = source == 2 ? 1.0 : factor;
  if (source == 0) params_.bandwidth = 0.0;
  source_ = source == 0 ? 1 : source;
  kernel_ = kernels::Kernel(usable(params_));
}

SparseVector dense_as_sparse(const Eigen::VectorXd& psi, std::vector<Coord>& coords) {
  coords.clear();
  for (Eigen::Index j = 0; j < psi.size(); ++j)
    if (psi(j) != 0.0 && std::isfinite(psi(j))) coords.push_back(Coord{static_cast<uint64_t>(j), psi(j)});
  return SparseVector{coords.data(), coords.size(), 0};
}

}  // namespace lepus::common

// The kernel options of every kernel learner (--kernel, --degree, --coef0, --bandwidth), declared once, and the
// kernel a learner holds: its parameters, with the RBF bandwidth estimated by the median heuristic over the
// warm-up prefix when not given (src/kernels/kernel.h), saved with the model.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/coords.h"
#include "kernels/kernel.h"
#include "lepus/example.h"
#include "lepus/model_io.h"
#include "lepus/options.h"

namespace lepus::common {

constexpr uint64_t kKernelWarmup = 256;  // examples the median heuristic looks at

std::vector<OptionSpec> kernel_options();
kernels::KernelParams kernel_params_of(const OptionValues& v);  // throws ConfigError
// --budget: at most B landmarks (a Nyström embedding) instead of every example (0, the default).
OptionSpec budget_option();
uint64_t budget_of(const OptionValues& v);  // throws ConfigError for a fraction

// A uniform draw in [0, 1) from (seed, round) by splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom
// number generators", OOPSLA 2014): a run resumed from a saved model draws what the uninterrupted one would.
double hashed_uniform(uint64_t seed, uint64_t round);

// A dense vector (a Nyström embedding ψ) as the sparse vector a primal learner reads, a slot per coordinate (zero
// and non-finite entries left out), its entries kept in coords.
SparseVector dense_as_sparse(const Eigen::VectorXd& psi, std::vector<Coord>& coords);

class KernelSetting {
 public:
  explicit KernelSetting(const kernels::KernelParams& p);
  // The kernel in force (one object for the learner's life: components may keep a reference to it).
  const kernels::Kernel& kernel() const { return kernel_; }
  // The RBF bandwidth is still to be estimated.
  bool pending() const { return params_.kind == kernels::KernelKind::kRbf && params_.bandwidth == 0.0; }
  // The median heuristic over the prefix's vectors (the driver's warm-up).
  void estimate(std::span<const Example> prefix, VectorBuilder& builder);
  // Without a warm-up: the first vector's norm.
  void estimate_from(const SparseVector& first);
  // "rbf, bandwidth 1.2 (median heuristic over the first 256 examples)".
  std::string text() const;
  void save(ModelWriter& out) const;
  void load(ModelReader& in, const std::string& who);

 private:
  void set(double h, uint8_t source);
  kernels::KernelParams params_;
  uint8_t source_ = 1;  // 1 given (or no bandwidth), 2 the median heuristic, 3 the first example's norm
  kernels::Kernel kernel_;
};

}  // namespace lepus::common

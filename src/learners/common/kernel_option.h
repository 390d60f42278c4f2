// The kernel options of every kernel learner (--kernel, --degree, --coef0, --bandwidth, --bandwidth_factor),
// declared once, and the kernel a learner holds: its parameters, with the RBF bandwidth estimated over the warm-up
// prefix when not given (the median heuristic of src/kernels/kernel.h times --bandwidth_factor), saved with the model.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/coords.h"
#include "kernels/kernel.h"
#include "kernels/row_cache.h"
#include "lepus/example.h"
#include "lepus/model_io.h"
#include "lepus/options.h"

namespace lepus::common {

constexpr uint64_t kKernelWarmup = 256;  // examples the median heuristic looks at

// --bandwidth_factor's default for classification (the logistic loss; regression keeps 1, the median heuristic as
// published): the median distance is too wide a bandwidth there. Half of it is about the width of scikit-learn's
// SVC default, gamma = 1/(n_features Var X), i.e. 1/(2h²) = 2/E‖x - x'‖² (0.50 times the median on the MNIST pairs).
// Measured with kons --budget 1000 (docs/algorithms/kons.md, "Defaults"): on 9 classification sets 0.5 lowered the
// test loss on 7 and by 13.5% in geometric mean (1/√2, kernlab's sigest middle value 1/median‖x - x'‖², by 8.6%),
// while on the regression sets it raised kons's test RMSE by up to 23% and kwemm's by up to 65% (cpusmall).
constexpr double kClassificationBandwidthFactor = 0.5;

std::vector<OptionSpec> kernel_options();
// default_factor: --bandwidth_factor when not given (the learner's, by its loss). Throws ConfigError.
kernels::KernelParams kernel_params_of(const OptionValues& v, double default_factor = 1.0);
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
  // 1 given (or no bandwidth), 2 the median heuristic, 3 the first example's norm, 4 the median heuristic times
  // --bandwidth_factor (saved after it)
  uint8_t source_ = 1;
  kernels::Kernel kernel_;
};

// An exact kernel learner's stored points in its declared state (learners/common/state.h): read as a point store
// and moved into the cache of kernel rows; readable "points N". The points read.
template <class V, class Points>
const auto& points_part(V& v, Points& points) {
  return v.part(
      "points", points, [] { return kernels::PointStore(); },
      [](std::ostream& out, const kernels::CachedPoints& p) { out << "points " << p.size() << "\n"; });
}

}  // namespace lepus::common

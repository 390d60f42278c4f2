// KORS, Kernel Online Row Sampling (Calandriello, Lazaric, Valko, "Second-order kernel online convex
// optimization with adaptive sketching", ICML 2017, Algorithm 2, Eq. (4), Theorem 2): an online dictionary of
// points, each kept with probability p_t = min(β τ̃_t, 1) from an estimate of its ridge leverage score, and weighted
// 1/p_t, so that Φ S Sᵀ Φᵀ + αI stays within 1 ± ε of Φ Φᵀ + αI (with probability 1 - δ when β >= 3 log(T/δ)/ε²).
//
// The score with the temporary dictionary I ∪ {t} of Eq. (4) equals, with q computed on I alone,
//     q = (k̄_tt - k̄_Iᵀ W (W K̄_I W + αI)⁻¹ W k̄_I) / α,   W = diag(1/√p_i),   τ̃ = (1 + ε) q / (1 + q),
// and inserting bordering (W K̄_I W + αI)⁻¹ has the Schur complement α(1 + q/p) >= α.
// Points are rescaled: φ̄ = d·φ(x), so k̄(i, j) = d_i d_j K(x_i, x_j) (Sketched-KONS scores ġ√η·φ, paper §3,
// the proof of Theorem 3); d = 1 gives plain KORS. A point with d = 0 scores 0.
// The caller supplies the uniform draw of each coin (one stream per learner, seeded by --random_seed).
#pragma once
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/row_cache.h"
#include "lepus/model_io.h"
#include "sketch/bordered_inverse.h"

namespace lepus {

struct KorsOptions {
  double alpha = 1.0;  // the ridge α
  double eps = 0.5;    // the accuracy ε in (0, 1)
  double beta = 30.0;  // the oversampling factor β (the paper's "budget"): keep min(β τ̃, 1)
};

class Kors {
 public:
  Kors(const kernels::Kernel& kernel, const KorsOptions& options);
  struct Step {
    double tau = 0.0;  // τ̃_t, the leverage estimate
    double p = 0.0;    // min(β τ̃_t, 1)
    bool kept = false;
  };
  // τ̃ for the point x rescaled by d, without changing the dictionary.
  double score(kernels::PointRef x, double d) const;
  // Scores x, keeps it when u < p (u uniform in [0, 1), the caller's draw), and says what happened.
  Step step(kernels::PointRef x, double d, double u);
  size_t size() const { return points_.size(); }
  const kernels::PointStore& points() const { return points_.store(); }
  // The K instances of an exact sketched-kons under --oaa share one cache (src/kernels/row_cache.h).
  void share_kernel_rows(std::shared_ptr<kernels::RowCache> cache) { points_.share(std::move(cache)); }
  double scale(size_t i) const { return d_[i]; }
  double probability(size_t i) const { return p_[i]; }
  void save(ModelWriter& out) const;
  void load(ModelReader& in, const std::string& who);

 private:
  // kI = W k̄_I for x, into k_ (the score's and the insertion's column); returns q.
  double leverage(kernels::PointRef x, double d) const;
  const kernels::Kernel& kernel_;
  KorsOptions opt_;
  kernels::CachedPoints points_;
  std::vector<double> d_, p_;
  BorderedInverse inverse_;  // (W K̄_I W + αI)⁻¹
  mutable Eigen::VectorXd k_, v_;
};

}  // namespace lepus

// A Nyström embedding that grows one landmark at a time, for the kernel learners under a budget: landmarks
// z_1..z_m chosen by KORS (src/sketch/kors.h, on the unscaled points: a label-free choice), and
//
//     ψ(x) = L⁻¹ k(x),   k(x)_j = K(z_j, x),   K_ZZ = L Lᵀ (Cholesky),
//
// so ψ(x)ᵀψ(x') is the kernel projected on the landmarks' span (Williams & Seeger, "Using the Nyström method to
// speed up kernel machines", NIPS 2000) and a linear learner on ψ is a kernel learner restricted to that span
// (Calandriello, Lazaric, Valko, "Efficient second-order online kernel learning with adaptive embedding", NIPS 2017,
// the authors' follow-up to Sketched-KONS, runs its second-order update in this space).
// Because L is lower triangular, a new landmark appends one row to L and one coordinate to ψ and leaves the first
// m coordinates of every ψ(x) unchanged: a learner on ψ keeps its state and gives the new coordinate its prior.
// The new row is ψ(z) itself and the new diagonal √(K(z, z) - ‖ψ(z)‖²), the norm of z's part outside the span; a
// point whose part is below 1e-6 of its norm adds nothing and is not taken. At most `budget` landmarks.
#pragma once
#include <Eigen/Dense>
#include <memory>
#include <string>

#include "kernels/kernel.h"
#include "lepus/model_io.h"
#include "sketch/kors.h"

namespace lepus {

class NystromEmbedding {
 public:
  NystromEmbedding(const kernels::Kernel& kernel, const KorsOptions& kors, size_t budget);
  size_t size() const { return landmarks_.size(); }
  size_t budget() const { return budget_; }
  // ψ(x) into out (size() entries).
  void embed(kernels::PointRef x, Eigen::VectorXd& out) const;
  // After embed(x, psi): offers x as a landmark (u uniform in [0, 1), the caller's draw); true when it was taken,
  // and then psi has grown by x's own new coordinate. A learner offers x before it learns from it, so that x's own
  // direction is in the span it learns in (the choice depends on x alone, never on its label).
  bool offer(kernels::PointRef x, Eigen::VectorXd& psi, double u);
  const kernels::PointStore& landmarks() const { return landmarks_; }
  void save(ModelWriter& out) const;
  void load(ModelReader& in, const std::string& who);

 private:
  const kernels::Kernel& kernel_;
  size_t budget_;
  kernels::PointStore landmarks_;
  Eigen::MatrixXd
      l_;  // lower-triangular Cholesky factor of K_ZZ in its top-left size() block; capacity doubles
  std::unique_ptr<Kors> kors_;
  mutable Eigen::VectorXd k_;
};

}  // namespace lepus

#pragma once
// The eigendecomposition of a symmetric matrix, A = V diag(λ) Vᵀ with λ ascending: Eigen's
// SelfAdjointEigenSolver (Householder tridiagonalisation, then implicit symmetric QR), reached through this
// one class so that the solver is compiled once for every learner and sketch that needs it rather than once
// per source file (it is the largest template in the build). Only A's lower triangle is read.

#include <Eigen/Dense>

namespace lepus {

class SymEigen {
 public:
  SymEigen() = default;
  explicit SymEigen(const Eigen::Ref<const Eigen::MatrixXd>& a, bool vectors = true) { compute(a, vectors); }
  // vectors = false: the eigenvalues alone (eigenvectors() is then not to be read).
  void compute(const Eigen::Ref<const Eigen::MatrixXd>& a, bool vectors = true);
  const Eigen::VectorXd& eigenvalues() const { return solver_.eigenvalues(); }
  const Eigen::MatrixXd& eigenvectors() const { return solver_.eigenvectors(); }

 private:
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver_;
};

}  // namespace lepus

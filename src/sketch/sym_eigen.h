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
  // The same decomposition of a (its lower triangle read) in place: a becomes V, bit for bit the eigenvectors
  // compute() gives, without the solver's own n x n copy (Eigen's steps of SelfAdjointEigenSolver::compute:
  // scaling, Householder tridiagonalisation, Q formed in place, implicit symmetric QR).
  static void in_place(Eigen::Map<Eigen::MatrixXd> a, Eigen::VectorXd& values);

 private:
  static constexpr int kMaxIterations = 30;  // SelfAdjointEigenSolver's m_maxIterations
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver_;
};

}  // namespace lepus

#include "sketch/sym_eigen.h"

namespace lepus {

void SymEigen::compute(const Eigen::Ref<const Eigen::MatrixXd>& a, bool vectors) {
  solver_.compute(a, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
}

void SymEigen::in_place(Eigen::Map<Eigen::MatrixXd> a, Eigen::VectorXd& values) {
  const Eigen::Index n = a.rows();
  values.resize(n);
  if (n == 0) return;
  if (n == 1) {
    values(0) = a(0, 0);
    a.setOnes();
    return;
  }
  a.triangularView<Eigen::StrictlyUpper>().setZero();  // as the solver's copy of the lower triangle
  double scale = a.cwiseAbs().maxCoeff();
  if (scale == 0.0) scale = 1.0;
  a.triangularView<Eigen::Lower>() /= scale;
  Eigen::VectorXd subdiagonal(n - 1), householder(n - 1);
  Eigen::internal::tridiagonalization_inplace(a, householder);
  values = a.diagonal();
  subdiagonal = a.diagonal<-1>();
  a = Eigen::HouseholderSequence<Eigen::Map<Eigen::MatrixXd>, Eigen::VectorXd>(a, householder)
          .setLength(n - 1)
          .setShift(1);
  Eigen::internal::computeFromTridiagonal_impl(values, subdiagonal, kMaxIterations, true, a);
  values *= scale;
}

}  // namespace lepus

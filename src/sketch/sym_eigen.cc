#include "sketch/sym_eigen.h"

namespace lepus {

void SymEigen::compute(const Eigen::Ref<const Eigen::MatrixXd>& a, bool vectors) {
  solver_.compute(a, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
}

}  // namespace lepus

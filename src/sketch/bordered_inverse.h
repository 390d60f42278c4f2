// The inverse of a symmetric positive definite matrix that grows by one row and column at a time, as the kernel
// learners' Gram matrices do (KONS's N = Γ^½KΓ^½ + αI, KORS's (S̄ᵀK̄S̄ + αI)): bordering by (b, d) is
//
//     [N  b]⁻¹   [N⁻¹ + v vᵀ/s   -v/s]
//     [bᵀ d]   = [-vᵀ/s           1/s],   v = N⁻¹b,  s = d - bᵀv  (the Schur complement),
//
// O(n²) per added point instead of O(n³). The caller passes s, which each algorithm computes in a form free of
// cancellation (Calandriello, Lazaric, Valko, "Second-order kernel online convex optimization with adaptive
// sketching", ICML 2017: s = α(1 + γτ̃) for KONS, α(1 + q/p) for KORS, both >= α).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>

#include "lepus/model_io.h"

namespace lepus {

class BorderedInverse {
 public:
  size_t size() const { return n_; }
  // out = N⁻¹ b (b has size() entries).
  void solve(const Eigen::VectorXd& b, Eigen::VectorXd& out) const {
    const auto n = static_cast<Eigen::Index>(n_);
    if (n == 0) {  // an empty product would bind a reference to the empty matrix's null data
      out.resize(0);
      return;
    }
    out.noalias() = m_.topLeftCorner(n, n).selfadjointView<Eigen::Upper>() * b.head(n);
  }
  // Borders N by a row whose N⁻¹b is v and whose Schur complement is s > 0.
  void border(const Eigen::VectorXd& v, double s);
  // Entry (i, j) of N⁻¹.
  double at(size_t i, size_t j) const {
    return i <= j ? m_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))
                  : m_(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(i));
  }
  Eigen::MatrixXd dense() const;  // N⁻¹ (tests)
  void clear() { n_ = 0; }
  void save(ModelWriter& out) const;
  void load(ModelReader& in, const std::string& who);  // validates the size against the bytes present

 private:
  Eigen::MatrixXd m_;  // upper triangle of N⁻¹ in its top-left n_ x n_ block; capacity doubles
  size_t n_ = 0;
};

}  // namespace lepus

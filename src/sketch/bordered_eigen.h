// The eigendecomposition of a symmetric matrix bordered by one row and column, from that of the matrix it
// borders, in O(n²) plus one n x n x n product (a full decomposition is O(n³) with a much larger constant):
//     G = U diag(d) Uᵀ (p x p),   G' = [[G, b], [bᵀ, β]] (n = p + 1)   =>   G' = P A Pᵀ,   P = diag(U, 1),
//     A = [[diag(d), z], [zᵀ, β]],   z = Uᵀ b,
// A an arrowhead matrix (D. P. O'Leary and G. W. Stewart, "Computing the eigenvalues and eigenvectors of
// symmetric arrowhead matrices", J. Comput. Phys. 90(2), 1990). With d strictly increasing and every z_i
// nonzero, A's eigenvalues are the roots of the secular equation
//     ψ(λ) = λ − β + Σ_i z_i² / (d_i − λ) = 0,
// ψ increasing from −∞ to +∞ between consecutive poles: exactly one root λ_j in each (d_{j−1}, d_j),
// j = 0..p (d_{−1} = −∞, d_p = +∞), and its eigenvector is [z_i / (λ_j − d_i); 1], normalised.
//
// Roots: each is sought as an offset τ from its nearer pole d_o (λ = d_o + τ), so every difference λ − d_i
// is formed as τ − (d_i − d_o) to high relative accuracy, by the rational iteration of J. R. Bunch,
// C. P. Nielsen and D. C. Sorensen ("Rank-one modification of the symmetric eigenproblem", Numer. Math. 31,
// 1978), adapted to the arrowhead's linear term: ψ is modelled as a constant plus the interval's two poles,
// matching value and slope at the iterate, the pole d_o keeping its own weight z_o² and the other taking the
// rest of the slope (the fixed weight method of R.-C. Li, "Solving secular equations stably and efficiently",
// LAPACK Working Note 89, 1993, as LAPACK's dlaed4; at the ends, one pole and a linear term taking the rest of
// the slope); the model's root (a quadratic's) is the next iterate, kept inside the bracket of sign
// changes, until |ψ| is below its rounding error (LAPACK's dlaed4 test) or the step is below 1e-9 of the
// offset (the iteration converges at least quadratically: the next step would be at rounding level). Where the
// model's root falls outside the bracket (rounding, when a root hugs its pole and the model's coefficients
// cancel), Newton's step is taken if it lands inside, bisection otherwise.
// Vectors: the computed roots are the exact eigenvalues of the arrowhead matrix with z replaced by ẑ, from
// the characteristic polynomial det(λI − A) = Π_j (λ − λ_j) at λ = d_k (M. Gu and S. C. Eisenstat, "A
// divide-and-conquer algorithm for the symmetric tridiagonal eigenproblem", SIAM J. Matrix Anal. Appl.
// 16(1), 1995, Section 3):
//     ẑ_k² = (d_k − λ_k)(λ_{k+1} − d_k) Π_{j<k} (λ_j − d_k)/(d_j − d_k) Π_{j>k+1} (λ_j − d_k)/(d_{j−1} − d_k),
// and the vectors are formed with ẑ (z's signs): numerically orthogonal however close the roots.
// Deflation (some |z_i| or gap d_{i+1} − d_i below 8 ε ||A||) is not handled: compute() declines and the
// caller decomposes G' in full.
#pragma once
#include <Eigen/Dense>

namespace lepus {

class BorderedEigen {
 public:
  // G' = vectors diag(values) vectorsᵀ over the top-left n x n block (values ascending, n = p + 1), from d
  // (first p entries, ascending), u (top-left p x p: G = u diag(d) uᵀ), b (first p entries) and β. values and
  // vectors must hold n entries / n x n and must not be d or u. Returns false, writing nothing, when the
  // route above does not apply (deflation, or a root that does not converge).
  bool compute(const Eigen::Ref<const Eigen::VectorXd>& d, const Eigen::Ref<const Eigen::MatrixXd>& u,
               Eigen::Index p, const Eigen::Ref<const Eigen::VectorXd>& b, double beta,
               Eigen::VectorXd& values, Eigen::MatrixXd& vectors);
  // ψ's evaluations in the last compute() (all roots): about 3 per root once converging, more when a root
  // hugs its pole.
  int evaluations() const { return evaluations_; }

 private:
  // Root j: origin_[j] (the pole it is measured from) and tau_[j].
  bool root(const Eigen::Ref<const Eigen::VectorXd>& d, Eigen::Index j, Eigen::Index p, double beta,
            double znorm);
  Eigen::VectorXd z_, z2_, delta_, tau_, zhat_;
  Eigen::VectorXi origin_;
  Eigen::Index delta_origin_ = -1;  // the pole delta_ is measured from now (-1: none yet)
  Eigen::MatrixXd diff_, v_;        // λ_j − d_i (n x p); A's eigenvectors (n x n)
  int evaluations_ = 0;
};

}  // namespace lepus

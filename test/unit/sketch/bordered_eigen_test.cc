// The bordered eigendecomposition (sketch/bordered_eigen.h) against Eigen's full one: for Gram matrices of
// random rows (dense, nearly rank-deficient, widely scaled) bordered by one more row, the eigenvalues agree
// to 1e-13 of
// ||G'||, U diag(λ) Uᵀ reproduces G' and U is orthogonal (1e-13); a zero z_i (deflation) and repeated
// eigenvalues are declined, writing nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sketch/bordered_eigen.h"

namespace lepus {
namespace {

TEST(BorderedEigen, MatchesTheFullDecomposition) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  BorderedEigen bordered;
  int declined = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int p = trial % 21, n = p + 1;
    const int columns = trial % 3 == 0 ? n + 1 : 60;
    Eigen::MatrixXd b(n, columns);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < columns; ++c)
        b(i, c) = normal(rng) * (trial % 4 == 1 ? std::pow(10.0, -(i % 7)) : 1.0);
    const Eigen::MatrixXd g = b * b.transpose();
    Eigen::VectorXd d = Eigen::VectorXd::Zero(p);
    Eigen::MatrixXd u = Eigen::MatrixXd::Zero(p, p);
    if (p > 0) {
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> old(g.topLeftCorner(p, p));
      d = old.eigenvalues();
      u = old.eigenvectors();
    }
    Eigen::VectorXd values = Eigen::VectorXd::Zero(n);
    Eigen::MatrixXd vectors = Eigen::MatrixXd::Zero(n, n);
    if (!bordered.compute(d, u, p, g.col(p).head(p), g(p, p), values, vectors)) {
      ++declined;
      continue;
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> full(g);
    const double norm = g.norm();
    EXPECT_LE((values - full.eigenvalues()).cwiseAbs().maxCoeff(), 1e-13 * norm) << trial;
    EXPECT_LE((vectors * values.asDiagonal() * vectors.transpose() - g).norm(), 1e-13 * norm) << trial;
    EXPECT_LE((vectors.transpose() * vectors - Eigen::MatrixXd::Identity(n, n)).norm(), 1e-13) << trial;
  }
  EXPECT_LE(declined, 5);
}

TEST(BorderedEigen, DeclinesDeflation) {
  BorderedEigen bordered;
  Eigen::VectorXd values = Eigen::VectorXd::Constant(3, 7.0);
  Eigen::MatrixXd vectors = Eigen::MatrixXd::Constant(3, 3, 7.0);
  const Eigen::MatrixXd u = Eigen::MatrixXd::Identity(2, 2);
  // z_0 = 0: the first direction is an eigenvector already.
  EXPECT_FALSE(
      bordered.compute(Eigen::Vector2d(1.0, 2.0), u, 2, Eigen::Vector2d(0.0, 1.0), 3.0, values, vectors));
  // d_0 = d_1: a repeated eigenvalue.
  EXPECT_FALSE(
      bordered.compute(Eigen::Vector2d(2.0, 2.0), u, 2, Eigen::Vector2d(1.0, 1.0), 3.0, values, vectors));
  EXPECT_EQ(values, Eigen::VectorXd::Constant(3, 7.0));
  EXPECT_EQ(vectors, Eigen::MatrixXd::Constant(3, 3, 7.0));
  // The same without deflation: accepted, and [[1, 0, 1], [0, 2, 1], [1, 1, 3]] has trace 6.
  EXPECT_TRUE(
      bordered.compute(Eigen::Vector2d(1.0, 2.0), u, 2, Eigen::Vector2d(1.0, 1.0), 3.0, values, vectors));
  EXPECT_NEAR(values.sum(), 6.0, 1e-14);
}

}  // namespace
}  // namespace lepus

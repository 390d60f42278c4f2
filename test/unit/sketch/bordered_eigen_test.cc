// The bordered eigendecomposition (sketch/bordered_eigen.h) against Eigen's full one: for Gram matrices of
// random rows (dense, nearly rank-deficient, widely scaled) bordered by one more row, the eigenvalues agree
// to 1e-13 of
// ||G'||, U diag(λ) Uᵀ reproduces G' and U is orthogonal (1e-13); a zero z_i (deflation) and repeated
// eigenvalues are declined, writing nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "sketch/bordered_eigen.h"
#include "sketch/sym_eigen.h"

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
      const lepus::SymEigen old(g.topLeftCorner(p, p));
      d = old.eigenvalues();
      u = old.eigenvectors();
    }
    Eigen::VectorXd values = Eigen::VectorXd::Zero(n);
    Eigen::MatrixXd vectors = Eigen::MatrixXd::Zero(n, n);
    if (!bordered.compute(d, u, p, g.col(p).head(p), g(p, p), values, vectors)) {
      ++declined;
      continue;
    }
    const lepus::SymEigen full(g);
    const double norm = g.norm();
    EXPECT_LE((values - full.eigenvalues()).cwiseAbs().maxCoeff(), 1e-13 * norm) << trial;
    EXPECT_LE((vectors * values.asDiagonal() * vectors.transpose() - g).norm(), 1e-13 * norm) << trial;
    EXPECT_LE((vectors.transpose() * vectors - Eigen::MatrixXd::Identity(n, n)).norm(), 1e-13) << trial;
  }
  EXPECT_LE(declined, 5);
}

// A root hugging its pole (rcv1, ftprl-full's sketch at rank 10: the third root sits 8.4e-10 above d_1 in a
// gap of 0.08, z_1 = -9.3e-8): the model's quadratic cannot resolve the last digits and its root falls on the
// bracket's end; bisection from there took 78 evaluations in all. Newton's step finishes it in 60.
TEST(BorderedEigen, RootHuggingItsPoleConvergesFast) {
  const Eigen::VectorXd d{{6.1161152824000186e-08, 1.1422045042808972e-05, 0.082471472838340096,
                           0.13997564896094067, 0.15876757028420233, 0.20059546360485109, 0.28119944450863704,
                           0.74912099475713723, 0.8128340361742169, 0.8529089873465, 0.86733773718010299,
                           0.92298517368365429, 0.93355524681148927, 0.96288890411929851, 0.98679497452924725,
                           0.99868882613990184, 1.056882370257235, 25.1974513677042}};
  const Eigen::VectorXd z{{-7.2627829101842102e-09, -9.3299251750558387e-08, -3.0359369402559037e-06,
                           -5.2284056309005672e-06, -3.8221410979461524e-06, -6.737708737026483e-06,
                           -7.4336491227895079e-06, 5.5411934854762506e-06, 5.8192349892333871e-06,
                           -1.5156220646279061e-05, -9.3774183250835324e-07, 2.6925748094952431e-06,
                           -9.0986421344301049e-06, -4.3009837206437309e-06, -1.3948673293007782e-05,
                           -3.2239925567759657e-06, -1.4237364393833961e-07, 0.005079220116967962}};
  const double beta = 2.098057346351796e-06;
  const Eigen::Index p = d.size(), n = p + 1;
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(n, n);
  g.topLeftCorner(p, p).diagonal() = d;
  g.col(p).head(p) = z;
  g.row(p).head(p) = z.transpose();
  g(p, p) = beta;
  BorderedEigen bordered;
  Eigen::VectorXd values = Eigen::VectorXd::Zero(n);
  Eigen::MatrixXd vectors = Eigen::MatrixXd::Zero(n, n);
  ASSERT_TRUE(bordered.compute(d, Eigen::MatrixXd::Identity(p, p), p, z, beta, values, vectors));
  EXPECT_LE(bordered.evaluations(), 7 * n / 2);  // 60 (78 when bisection took over)
  const lepus::SymEigen full(g);
  EXPECT_LE((values - full.eigenvalues()).cwiseAbs().maxCoeff(), 1e-13 * g.norm());
  EXPECT_LE((vectors * values.asDiagonal() * vectors.transpose() - g).norm(), 1e-13 * g.norm());
  EXPECT_LE((vectors.transpose() * vectors - Eigen::MatrixXd::Identity(n, n)).norm(), 1e-13);
  // The root near d_1, to high relative accuracy in its offset (the vectors need it).
  EXPECT_NEAR((values(2) - d(1)) / 8.41024426038543e-10, 1.0, 1e-9);
}

// Roots hugging their poles, as a sketch's Gram matrix gives them (a new row nearly in the span of the old: z
// small against the gaps between the d_i): the fixed weight model (the pole the root is measured from keeps
// its own weight) finds them in 3.43 evaluations each on average; the model that fits both poles' weights to
// the slope took 4.31 here. Accuracy as above.
TEST(BorderedEigen, PoleHuggingRootsTakeFewEvaluations) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  BorderedEigen bordered;
  long evaluations = 0, roots = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Eigen::Index p = 10 + trial % 10, n = p + 1;
    Eigen::VectorXd d(p), z(p);
    for (Eigen::Index i = 0; i < p; ++i) {
      d(i) = std::pow(10.0, -6.0 * unit(rng));
      z(i) = (unit(rng) < 0.5 ? -1.0 : 1.0) * std::pow(10.0, -3.0 - 4.0 * unit(rng));
    }
    std::sort(d.data(), d.data() + p);
    const double beta = std::pow(10.0, -4.0 * unit(rng));
    Eigen::VectorXd values = Eigen::VectorXd::Zero(n);
    Eigen::MatrixXd vectors = Eigen::MatrixXd::Zero(n, n);
    ASSERT_TRUE(bordered.compute(d, Eigen::MatrixXd::Identity(p, p), p, z, beta, values, vectors)) << trial;
    evaluations += bordered.evaluations();
    roots += n;
    Eigen::MatrixXd g = Eigen::MatrixXd::Zero(n, n);
    g.topLeftCorner(p, p).diagonal() = d;
    g.col(p).head(p) = z;
    g.row(p).head(p) = z.transpose();
    g(p, p) = beta;
    const double norm = g.norm();
    const lepus::SymEigen full(g);
    EXPECT_LE((values - full.eigenvalues()).cwiseAbs().maxCoeff(), 1e-13 * norm) << trial;
    EXPECT_LE((vectors * values.asDiagonal() * vectors.transpose() - g).norm(), 1e-13 * norm) << trial;
    EXPECT_LE((vectors.transpose() * vectors - Eigen::MatrixXd::Identity(n, n)).norm(), 1e-13) << trial;
  }
  const double per_root = static_cast<double>(evaluations) / static_cast<double>(roots);
  EXPECT_LE(per_root, 3.7);
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

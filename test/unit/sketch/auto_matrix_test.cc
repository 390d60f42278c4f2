// auto: exactly the full matrix up to max_dense slots; past it a sketch whose rows have the full matrix's Gram
// matrix, so on data of rank <= m it still equals the exact matrix, or the full matrix's diagonal; save/load on
// either side of the switch.
// And the plain sketch (shrink_back = 0): exactly λ I + BᵀB.
#include <gtest/gtest.h>

#include "lepus/errors.h"
#include "matrix_test_util.h"
#include "sketch/auto_matrix.h"
#include "sketch/full_matrix.h"
#include "sketch/sketch_matrix.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

using namespace matrix_test;

MatrixOptions auto_options(double lambda, uint64_t max_dense, uint32_t rank, double shrink_back = 1.0) {
  MatrixOptions o;
  o.kind = MatrixKind::kAuto;
  o.lambda = lambda;
  o.max_dense = max_dense;
  o.sketch_rank = rank;
  o.sketch_shrink_back = shrink_back;
  return o;
}

// Rows in a random r-dimensional subspace of the pool (so the data has rank r), nnz = the whole pool.
Vec low_rank_row(std::mt19937_64& rng, const Pool& pool, const Eigen::MatrixXd& basis) {
  std::normal_distribution<double> g;
  Eigen::VectorXd coef(basis.cols());
  for (Eigen::Index k = 0; k < coef.size(); ++k) coef(k) = g(rng);
  const Eigen::VectorXd v = basis * coef;
  Vec x;
  for (int i = 0; i < pool.size(); ++i) x.push_back({pool.slots[i], v(i)});
  return x;
}

TEST(AutoMatrix, IsTheFullMatrixUpToMaxDense) {
  const Pool pool(40, 3);
  std::mt19937_64 rng(5);
  AutoMatrix m(auto_options(0.7, 40, 4));
  Reference ref(pool.size(), 0.7);
  for (int t = 0; t < 60; ++t) {
    const Vec x = random_vector(rng, pool, 0, pool.size(), 6);
    m.rank_one_update(x, 0.3 + t % 3);
    ref.update(x, 0.3 + t % 3, pool);
  }
  EXPECT_FALSE(m.sketched());
  EXPECT_LT(max_error(m, ref, pool, queries(pool, 9)), 1e-10);
}

TEST(AutoMatrix, SwitchesToASketchThatIsExactOnLowRankData) {
  const Pool pool(30, 4);
  std::mt19937_64 rng(6);
  std::normal_distribution<double> g;
  Eigen::MatrixXd basis(pool.size(), 5);
  for (Eigen::Index i = 0; i < basis.size(); ++i) basis.data()[i] = g(rng);
  for (double shrink_back : {1.0, 0.0}) {
    AutoMatrix m(auto_options(1.3, 12, 6, shrink_back));  // 30 slots > 12: switches on the first update
    Reference ref(pool.size(), 1.3);
    for (int t = 0; t < 50; ++t) {
      const Vec x = low_rank_row(rng, pool, basis);
      m.rank_one_update(x, 0.5);
      ref.update(x, 0.5, pool);
    }
    EXPECT_TRUE(m.sketched());
    EXPECT_LT(max_error(m, ref, pool, queries(pool, 10)), 1e-6);
  }
}

// The switch turns the held full matrix into a sketch: on rank <= m data it equals the exact matrix, also for
// slots the full matrix held when it switched.
TEST(AutoMatrix, SwitchKeepsWhatTheFullMatrixHeld) {
  const Pool pool(30, 8);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g;
  Eigen::MatrixXd basis = Eigen::MatrixXd::Zero(pool.size(), 3);
  for (Eigen::Index i = 0; i < basis.size(); ++i) basis.data()[i] = g(rng);
  AutoMatrix m(auto_options(0.9, 29, 8));
  Reference ref(pool.size(), 0.9);
  m.scale(0.8);  // forgetting before the switch is carried over
  ref.a *= 0.8;
  // First updates over 20 slots only (rows of the basis restricted to them), then over all 30: the switch.
  for (int t = 0; t < 40; ++t) {
    Vec x = low_rank_row(rng, pool, basis);
    if (t < 20) x.resize(20);
    m.rank_one_update(x, 1.0);
    ref.update(x, 1.0, pool);
    if (t == 19) {
      EXPECT_FALSE(m.sketched());
    }
  }
  EXPECT_TRUE(m.sketched());
  // The rows restricted to 20 slots span another 3 dimensions: rank <= 6 <= m, so the sketch is exact.
  EXPECT_LT(max_error(m, ref, pool, queries(pool, 11)), 1e-6);
}

TEST(AutoMatrix, SaveLoadOnEitherSideOfTheSwitch) {
  const Pool pool(25, 9);
  std::mt19937_64 rng(8);
  for (int updates : {2, 40}) {
    AutoMatrix m(auto_options(1.0, 15, 4));
    for (int t = 0; t < updates; ++t) m.rank_one_update(random_vector(rng, pool, 0, pool.size(), 5), 1.0);
    EXPECT_EQ(m.sketched(), updates == 40);
    AutoMatrix back(auto_options(1.0, 15, 4));
    load_bytes(back, saved(m));
    EXPECT_EQ(saved(back), saved(m));
    EXPECT_EQ(back.sketched(), m.sketched());
    for (const Vec& q : queries(pool, 13)) EXPECT_EQ(back.quad(q), m.quad(q));
    AutoMatrix other(auto_options(1.0, 16, 4));
    EXPECT_THROW(load_bytes(other, saved(m)), ModelFormatError);
  }
}

// beyond = diag: past max_dense the diagonal of everything so far (the full matrix's A_ii, the forgetting
// carried over), then diagonal updates; b moves over as it is.
TEST(AutoMatrix, GoesOnWithTheDiagonal) {
  const Pool pool(30, 21, (uint64_t{1} << 18) - 1);
  std::mt19937_64 rng(22);
  MatrixOptions o = auto_options(0.8, 12, 4);
  o.beyond = MatrixKind::kDiag;
  o.tracked = true;
  AutoMatrix m(o);
  Reference diag(pool.size(), 0.8);  // A_ii = λ s + Σ w x_i² whatever came before the switch
  m.scale(0.9);
  diag.a *= 0.9;
  for (int t = 0; t < 40; ++t) {
    Vec x = random_vector(rng, pool, 0, t < 10 ? 10 : pool.size(), 4);
    const double w = 0.5 + t % 3, beta = 0.1 * (t % 5) - 0.2;
    m.update(x, w, beta);
    diag.update_diag(x, w, pool);
    diag.add_b(x, beta, pool);
    if (t == 9) {
      EXPECT_FALSE(m.switched());
    }
  }
  EXPECT_TRUE(m.switched());
  EXPECT_FALSE(m.sketched());
  EXPECT_LT(max_error(m, diag, pool, queries(pool, 23)), 1e-9);
  // Saved and loaded on either side of the switch; another beyond refuses the state.
  const AutoMatrix fresh(o);
  for (bool switched : {false, true}) {
    const AutoMatrix& a = switched ? m : fresh;
    AutoMatrix back(o);
    load_bytes(back, saved(a));
    EXPECT_EQ(saved(back), saved(a));
    EXPECT_EQ(back.switched(), switched);
    MatrixOptions sketch_next = o;
    sketch_next.beyond = MatrixKind::kSketch;
    AutoMatrix other(sketch_next);
    EXPECT_THROW(load_bytes(other, saved(a)), ModelFormatError);
  }
}

TEST(AutoMatrix, OptionsAreChecked) {
  EXPECT_THROW(AutoMatrix(auto_options(1.0, 0, 4)), ConfigError);
  EXPECT_THROW(AutoMatrix(auto_options(1.0, 100000, 4)), ConfigError);
  EXPECT_THROW(AutoMatrix(auto_options(1.0, 10, 0)), ConfigError);
  EXPECT_THROW(AutoMatrix(auto_options(1.0, 10, 4, 1.5)), ConfigError);
  MatrixOptions full_next = auto_options(1.0, 10, 4);
  full_next.beyond = MatrixKind::kFull;
  EXPECT_THROW(AutoMatrix{full_next}, ConfigError);
}

// shrink_back = 0: A = λ I + BᵀB exactly (no shrinkage mass in the ridge), so A ⪯ the true matrix.
// The switch decomposes A⁻¹ in place (SymEigen::in_place, within the full matrix's own storage): the eigenvalues
// and eigenvectors are those of SymEigen::compute (Eigen's SelfAdjointEigenSolver) bit for bit, whatever the size,
// for a zero matrix, and when the n x n matrix sits at the start of a larger buffer (as a full matrix's capacity).
TEST(SymEigen, InPlaceIsTheSolverBitForBit) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g;
  Eigen::VectorXd none;
  SymEigen::in_place(Eigen::Map<Eigen::MatrixXd>(nullptr, 0, 0),
                     none);  // n = 0: nothing (the solver refuses it)
  EXPECT_EQ(none.size(), 0);
  for (const Eigen::Index n : {1, 2, 3, 17, 120}) {
    for (const bool zero : {false, true}) {
      Eigen::MatrixXd a(n, n);
      for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = j; i < n; ++i) a(i, j) = a(j, i) = zero ? 0.0 : g(rng) * (1 + i);
      SymEigen solver(a);
      std::vector<double> buffer(static_cast<size_t>((n + 5) * (n + 5)), -1.0);
      Eigen::Map<Eigen::MatrixXd> m(buffer.data(), n, n);
      m = a;
      Eigen::VectorXd values;
      SymEigen::in_place(m, values);
      ASSERT_EQ(values.size(), n);
      for (Eigen::Index k = 0; k < n; ++k) {
        EXPECT_EQ(values(k), solver.eigenvalues()(k)) << n << " " << k;
        for (Eigen::Index i = 0; i < n; ++i) EXPECT_EQ(m(i, k), solver.eigenvectors()(i, k)) << n;
      }
    }
  }
}

TEST(SketchMatrix, PlainSketchIsLambdaPlusBTB) {
  const Pool pool(60, 10);
  std::mt19937_64 rng(9);
  SketchMatrix m(0.5, 4, SketchMatrix::kDefaultCap, 0.0);
  Reference ref(pool.size(), 0.5);
  for (int t = 0; t < 80; ++t) {
    const Vec x = random_vector(rng, pool, 0, pool.size(), 8);
    m.rank_one_update(x, 1.0);
    ref.update(x, 1.0, pool);
  }
  ASSERT_GT(m.shrinkage(), 0.0);
  // λ I + BᵀB from the sketch's own rows.
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(8, pool.size());
  const FrequentDirections& fd = m.sketch();
  for (size_t p = 0; p < fd.columns(); ++p)
    for (uint32_t r = 0; r < fd.rows(); ++r)
      b(r, pool.position.at(fd.index().slot(static_cast<uint32_t>(p)))) =
          fd.value(r, static_cast<uint32_t>(p));
  Reference plain(pool.size(), 0.5);
  plain.a += b.transpose() * b;
  EXPECT_LT(max_error(m, plain, pool, queries(pool, 14)), 1e-8);
  for (const Vec& q : queries(pool, 15))
    EXPECT_GE(m.quad(q), ref.quad(q, pool) * (1 - 1e-9));  // A_sketch ⪯ A
}

}  // namespace
}  // namespace lepus

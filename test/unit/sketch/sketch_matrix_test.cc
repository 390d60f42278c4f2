// sketch and Frequent Directions. With m >= the rank of the data the sketch equals the exact matrix (1e-6)
// through many shrinks, also for data of rank exactly m (which a shrink by the m-th value would cut). With
// m < rank the guarantees of Ghashami, Liberty, Phillips, Woodruff (2016) hold, with ℓ = m + 1:
//     0 ⪯ XᵀX − BᵀB ⪯ Δ I,   Δ <= (‖X‖_F² − ‖B‖_F²) / (m + 1),   ‖XᵀX − BᵀB‖₂ <= ‖X − X_k‖_F² / (m + 1 − k),
// so the sketched A = (λ + Δ) I + BᵀB dominates the true A by at most Δ and grows by at least w x xᵀ per
// update; the two-level Woodbury products equal the inverse of that dense A (1e-9). The checks are shown to
// catch errors: the sketch without its shrinkage mass breaks the Loewner order, a reference with one update
// missing is told apart.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "lepus/errors.h"
#include "matrix_test_util.h"
#include "sketch/full_matrix.h"
#include "sketch/sketch_matrix.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

using namespace matrix_test;

// The visitor's scalars and B's entries.
struct Collected : MatrixVisitor {
  std::map<std::string, double> scalars;
  std::vector<std::tuple<uint64_t, uint64_t, double>> entries;
  void scalar(std::string_view name, double value) override { scalars[std::string(name)] = value; }
  void entry(std::string_view, uint64_t row, uint64_t col, double value) override {
    entries.emplace_back(row, col, value);
  }
};

Eigen::MatrixXd sketch_b(const SketchMatrix& m, const Pool& pool) {
  Collected c;
  m.visit(c);
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(2 * m.sketch().rank(), pool.size());
  for (const auto& [row, col, v] : c.entries) b(row, pool.position.at(col)) = v;
  return b;
}

Eigen::MatrixXd sketch_a(const SketchMatrix& m, const Pool& pool) {
  Collected c;
  m.visit(c);
  const Eigen::MatrixXd b = sketch_b(m, pool);
  const double ridge = c.scalars.at("prior") + c.scalars.at("shrinkage");
  return ridge * Eigen::MatrixXd::Identity(pool.size(), pool.size()) + b.transpose() * b;
}

double min_eigenvalue(const Eigen::MatrixXd& s) { return lepus::SymEigen(s, false).eigenvalues()(0); }
double spectral_norm(const Eigen::MatrixXd& s) {
  return lepus::SymEigen(s, false).eigenvalues().cwiseAbs().maxCoeff();
}

// A random combination of the given sparse directions: data of exactly their rank.
Vec low_rank_row(std::mt19937_64& rng, const Pool& pool, const std::vector<Eigen::VectorXd>& basis) {
  std::normal_distribution<double> normal;
  Eigen::VectorXd v = Eigen::VectorXd::Zero(pool.size());
  for (const auto& d : basis) v += normal(rng) * d;
  Vec x;
  for (int i = 0; i < pool.size(); ++i)
    if (v(i) != 0.0) x.push_back({pool.slots[i], v(i)});
  return x;
}

TEST(SketchMatrix, EqualsExactMatrixWhenFewerSlotsThanTheRank) {
  const Pool pool(20, 31);
  SketchMatrix s(0.3, 6);
  FullMatrix f(0.3);
  Reference ref(pool.size(), 0.3);
  const auto qs = queries(pool, 32);
  std::mt19937_64 rng(33);
  for (int t = 0; t < 300; ++t) {  // 6 slots: rank <= 6 = m; a shrink every 6 updates after the first 12
    const Vec x = random_vector(rng, pool, 0, 6, 1 + t % 4);
    s.rank_one_update(x, 0.5 + t % 3);
    f.rank_one_update(x, 0.5 + t % 3);
    ref.update(x, 0.5 + t % 3, pool);
  }
  EXPECT_LT(max_error(s, ref, pool, qs), 1e-6);
  EXPECT_LT(s.shrinkage(), 1e-9 * ref.a.trace());
  for (const Vec& x : qs) EXPECT_NEAR(s.quad(x), f.quad(x), 1e-6 * f.quad(x));
}

TEST(SketchMatrix, EqualsExactMatrixOnDataOfRankExactlyM) {
  const Pool pool(30, 34);
  const int m = 4;
  std::mt19937_64 rng(35);
  std::vector<Eigen::VectorXd> basis;  // 4 sparse directions over 24 slots (overlapping)
  for (int k = 0; k < m; ++k) {
    Eigen::VectorXd d = Eigen::VectorXd::Zero(pool.size());
    for (const Coord& c : random_vector(rng, pool, 0, 24, 8)) d(pool.position.at(c.slot)) = c.x;
    basis.push_back(d);
  }
  SketchMatrix s(1.0, m);
  Reference ref(pool.size(), 1.0);
  Reference missing_one(pool.size(), 1.0);
  for (int t = 0; t < 200; ++t) {
    const Vec x = low_rank_row(rng, pool, basis);
    s.rank_one_update(x, 1.0);
    ref.update(x, 1.0, pool);
    if (t != 100) missing_one.update(x, 1.0, pool);
  }
  auto qs = queries(pool, 36);
  for (int i = 0; i < 5; ++i)
    qs.push_back(low_rank_row(rng, pool, basis));  // inside the span: its spectrum counts
  EXPECT_LT(max_error(s, ref, pool, qs), 1e-6);
  EXPECT_GT(max_error(s, missing_one, pool, qs), 1e-4);
  EXPECT_LT(s.shrinkage(), 1e-9 * ref.a.trace());
}

// Forgetting lets the prior λ r^t fall far below the data (condition number ~3e7 here): the two-level form
// keeps about 1e-9 where a single Woodbury core over all rows measured 2e-3.
TEST(SketchMatrix, StaysAccurateWhenThePriorIsSmallAgainstTheData) {
  const Pool pool(40, 71, (uint64_t{1} << 20) - 1);
  SketchMatrix s(0.6, 8);
  Reference ref(pool.size(), 0.6);
  std::mt19937_64 rng(72);
  std::uniform_real_distribution<double> u(0.6, 1.0);
  for (int t = 0; t < 150; ++t) {
    const Vec x = random_vector(rng, pool, 0, std::min(8, 2 + t / 4), 1 + t % 5);
    const double w = 0.2 + u(rng);
    s.rank_one_update(x, w);
    ref.update(x, w, pool);
    if (t % 3 == 2) {
      const double r = u(rng);
      s.scale(r);
      ref.a *= r;
    }
  }
  const Eigen::VectorXd eig = lepus::SymEigen(ref.a).eigenvalues();
  EXPECT_GT(eig.maxCoeff() / eig.minCoeff(), 1e7);
  EXPECT_LT(max_error(s, ref, pool, queries(pool, 73)), 1e-7);
}

TEST(SketchMatrix, WoodburyProductsEqualTheDenseSketchedMatrix) {
  const Pool pool(40, 37);
  SketchMatrix s(0.5, 5);
  std::mt19937_64 rng(38);
  const auto qs = queries(pool, 39);
  for (int t = 0; t < 157; ++t) {  // ends between shrinks, with rows appended since the last one
    s.rank_one_update(random_vector(rng, pool, 0, 35, 1 + t % 6), 1.0 + t % 2);
    if (t % 10 == 9) {
      if (t == 99) s.scale(0.8);
      Reference dense(pool.size(), 1.0);
      dense.a = sketch_a(s, pool);
      ASSERT_LT(max_error(s, dense, pool, qs), 1e-9) << t;
    }
  }
  EXPECT_GT(s.shrinkage(), 0.0);
}

TEST(FrequentDirections, ErrorBoundsOfThePaperHold) {
  for (const int m : {2, 5, 10}) {
    const Pool pool(50, 40 + m);
    const double lambda = 0.1;
    SketchMatrix s(lambda, m);
    Eigen::MatrixXd xtx = Eigen::MatrixXd::Zero(pool.size(), pool.size());
    double frobenius2 = 0.0;  // ‖X‖_F² of the rows √w x
    std::mt19937_64 rng(50 + m);
    Reference r(pool.size(), 0.0);
    for (int t = 0; t < 400; ++t) {
      const Vec x = random_vector(rng, pool, 0, pool.size(), 1 + t % 9);
      const double w = 0.5 + (t % 4);
      s.rank_one_update(x, w);
      const Eigen::VectorXd v = r.dense(x, pool);
      xtx += w * v * v.transpose();
      frobenius2 += w * v.squaredNorm();
    }
    const Eigen::MatrixXd b = sketch_b(s, pool);
    const double delta = s.shrinkage();
    const Eigen::MatrixXd gap = xtx - b.transpose() * b;  // XᵀX − BᵀB
    const double tol = 1e-9 * frobenius2;
    EXPECT_GT(delta, 0.0) << m;
    EXPECT_GT(min_eigenvalue(gap), -tol) << m;  // 0 ⪯ XᵀX − BᵀB
    EXPECT_GT(min_eigenvalue(delta * Eigen::MatrixXd::Identity(50, 50) - gap), -tol) << m;  // ⪯ Δ I
    EXPECT_LE(delta, (frobenius2 - b.squaredNorm()) / (m + 1) + tol) << m;
    const Eigen::VectorXd sigma2 = lepus::SymEigen(xtx, false).eigenvalues().reverse();
    for (int k = 0; k <= m; ++k) {  // ‖XᵀX − BᵀB‖₂ <= ‖X − X_k‖_F² / (m + 1 − k)
      const double tail = sigma2.tail(sigma2.size() - k).sum();
      EXPECT_LE(spectral_norm(gap), tail / (m + 1 - k) + tol) << m << " " << k;
    }
    // The sketched A dominates the true A by at most Δ; without Δ it would not dominate it.
    const Eigen::MatrixXd a_true = lambda * Eigen::MatrixXd::Identity(50, 50) + xtx;
    const Eigen::MatrixXd a_sketch = sketch_a(s, pool);
    EXPECT_GT(min_eigenvalue(a_sketch - a_true), -tol) << m;
    EXPECT_LE(spectral_norm(a_sketch - a_true), delta + tol) << m;
    EXPECT_LE(spectral_norm(a_sketch - a_true), frobenius2 / (m + 1) + tol) << m;
    EXPECT_LT(min_eigenvalue(a_sketch - delta * Eigen::MatrixXd::Identity(50, 50) - a_true), -1e3 * tol) << m;
  }
}

TEST(FrequentDirections, SketchedMatrixGrowsByAtLeastEachUpdate) {  // the Loewner step the regret proofs need
  const Pool pool(25, 60);
  SketchMatrix s(0.2, 3);
  std::mt19937_64 rng(61);
  Reference r(pool.size(), 0.0);
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(pool.size(), pool.size());
  Eigen::MatrixXd before = sketch_a(s, pool);
  double delta_before = 0.0;
  double worst = 0.0, worst_without_shrinkage = 0.0;
  for (int t = 0; t < 120; ++t) {
    const Vec x = random_vector(rng, pool, 0, pool.size(), 1 + t % 5);
    s.rank_one_update(x, 1.0);
    const Eigen::VectorXd v = r.dense(x, pool);
    const Eigen::MatrixXd after = sketch_a(s, pool);
    const Eigen::MatrixXd step = after - before - v * v.transpose();
    worst = std::min(worst, min_eigenvalue(step) / after.trace());
    // The same step for λ I + BᵀB (the sketch without its shrinkage mass) goes negative at a shrink.
    const double added = s.shrinkage() - delta_before;
    worst_without_shrinkage =
        std::min(worst_without_shrinkage, min_eigenvalue(step - added * identity) / after.trace());
    before = after;
    delta_before = s.shrinkage();
  }
  EXPECT_GT(worst, -1e-12);
  EXPECT_LT(worst_without_shrinkage, -1e-6);
  EXPECT_GT(s.shrinkage(), 0.0);
}

TEST(FrequentDirections, ShrinkKeepsMRowsAndColumnsOnlyForSeenSlots) {
  FrequentDirections fd(3, 100);
  std::mt19937_64 rng(62);
  const Pool pool(30, 63);
  int shrinks = 0;
  for (int t = 0; t < 40; ++t) {
    const bool shrank = fd.append(random_vector(rng, pool, 0, 10, 4), 1.0);
    shrinks += shrank;
    if (shrank) {
      EXPECT_EQ(fd.rows(), 4u);  // m kept, then the new row
    }
    EXPECT_LE(fd.rows(), 6u);
  }
  EXPECT_EQ(shrinks, (40 - 6 + 2) / 3);  // the first at append 7, then every 3
  EXPECT_EQ(fd.columns(), 10u);
  EXPECT_EQ(fd.append(Vec{{5, 0.0}}, 1.0), false);  // a zero row is not appended
  EXPECT_THROW(FrequentDirections(0, 10), ConfigError);
  EXPECT_THROW(FrequentDirections(4, 0), ConfigError);
}

// The deferred rotation (B = W [C; R], the base formed again only every ~sqrt(m · columns / 5) rows) against
// the textbook form that rotates every column at every shrink, written here densely: the same B (up to the
// sign of each kept row, which an eigenvector leaves free: compared as BᵀB), the same Gram matrix, shrinkage
// and B x, through many re-formings of the base; and the state saved mid-way resumes to the same bytes.
TEST(FrequentDirections, DeferredRotationEqualsTheTextbookForm) {
  for (const uint32_t m : {1u, 3u, 6u}) {
    const Pool pool(120, 90 + m);
    FrequentDirections fd(m, 1000);
    Eigen::MatrixXd b = Eigen::MatrixXd::Zero(2 * m, pool.size());  // the textbook B
    int rows = 0, rebases = 0;
    double shrinkage = 0.0;
    std::mt19937_64 rng(91 + m);
    Reference r(pool.size(), 0.0);
    std::vector<uint8_t> mid;
    std::vector<Vec> rest;
    for (int t = 0; t < 900; ++t) {
      const Vec x = random_vector(rng, pool, 0, std::min(pool.size(), 10 + t / 6), 1 + t % 7);
      const double c = 0.5 + (t % 3);
      if (rows == static_cast<int>(2 * m)) {  // textbook shrink: rotate every column
        const Eigen::MatrixXd g = b * b.transpose();
        const lepus::SymEigen eig(g);
        const double delta = std::max(eig.eigenvalues()(m - 1), 0.0);
        Eigen::MatrixXd w = Eigen::MatrixXd::Zero(2 * m, 2 * m);
        for (uint32_t k = 0; k < m; ++k) {
          const double mu = eig.eigenvalues()(2 * m - 1 - k);
          w.row(k) = (mu > delta ? std::sqrt((mu - delta) / mu) : 0.0) *
                     eig.eigenvectors().col(2 * m - 1 - k).transpose();
        }
        b = (w * b).eval();
        shrinkage += delta;
        rows = static_cast<int>(m);
      }
      b.row(rows++) = c * r.dense(x, pool).transpose();
      const uint32_t raw_before = fd.raw_rows();
      fd.append(x, c);
      rebases += fd.raw_rows() < raw_before;
      if (t == 450) {
        ModelWriter w;
        fd.save(w);
        mid = w.bytes();
      }
      if (t > 450) rest.push_back(x);
    }
    Eigen::MatrixXd got = Eigen::MatrixXd::Zero(2 * m, pool.size());
    Eigen::VectorXd column;
    for (uint32_t pos = 0; pos < fd.columns(); ++pos) {
      fd.column(pos, column);
      got.block(0, pool.position.at(fd.index().slot(pos)), fd.rows(), 1) = column;
    }
    const double scale = (b.transpose() * b).norm();
    EXPECT_GT(rebases, 5) << m;
    EXPECT_EQ(fd.rows(), static_cast<uint32_t>(rows)) << m;
    EXPECT_LT((got.transpose() * got - b.transpose() * b).norm(), 1e-10 * scale) << m;
    EXPECT_NEAR(fd.shrinkage(), shrinkage, 1e-10 * scale) << m;
    EXPECT_LT(
        (fd.gram().topLeftCorner(rows, rows) - got.topRows(rows) * got.topRows(rows).transpose()).norm(),
        1e-10 * scale)
        << m;
    const Vec probe = random_vector(rng, pool, 0, pool.size(), 9);
    Eigen::VectorXd p;
    fd.multiply(probe, p);
    EXPECT_LT((p - got.topRows(rows) * r.dense(probe, pool)).norm(), 1e-10 * std::sqrt(scale)) << m;
    // Resumed from the middle: the same state, byte for byte.
    FrequentDirections resumed(m, 1000);
    ModelReader in(mid.data(), mid.size(), "test");
    resumed.load(in);
    for (size_t i = 0; i < rest.size(); ++i) resumed.append(rest[i], 0.5 + ((451 + i) % 3));
    ModelWriter a, z;
    fd.save(a);
    resumed.save(z);
    EXPECT_EQ(a.bytes(), z.bytes()) << m;
  }
}

TEST(SketchMatrix, CapIsATypedErrorThatChangesNothing) {
  SketchMatrix s(1.0, 2, 5);
  s.rank_one_update(Vec{{1, 1.0}, {2, 1.0}, {3, 1.0}}, 1.0);
  for (int t = 0; t < 4; ++t)
    s.rank_one_update(Vec{{1, 1.0 + t}, {3, -1.0}}, 1.0);  // buffer full: next update shrinks
  const Vec probe = {{1, 1.0}, {2, 0.5}, {9, 1.0}};
  const double before = s.quad(probe), shrinkage = s.shrinkage();
  try {
    s.rank_one_update(Vec{{4, 1.0}, {5, 1.0}, {6, 1.0}}, 1.0);
    FAIL() << "no ConfigError past the cap";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cap of 5"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.quad(probe), before);
  EXPECT_EQ(s.shrinkage(), shrinkage);
  EXPECT_EQ(s.sketch().columns(), 3u);
}

}  // namespace
}  // namespace lepus

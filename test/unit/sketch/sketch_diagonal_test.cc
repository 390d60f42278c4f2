// The sketch's diagonal correction (sketch_matrix.h): A = D + BᵀB with D = λ' + c·diag(R) refreshed when the
// sketch forms its base again. Its one-level Woodbury products equal the inverse of that dense matrix, built
// from what the component reports (B's entries, the floor, each column's ridge), through shrinks, refreshes,
// forgetting and renormalization (1e-8); at a refresh each ridge is c times the column's exact removed mass;
// a saved state resumes bit for bit and is refused by another c.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "lepus/errors.h"
#include "matrix_test_util.h"
#include "sketch/sketch_matrix.h"

namespace lepus {
namespace {

using namespace matrix_test;

constexpr int kBits = 16;

// What visit() reports: scalars, B's entries and the ridges.
struct Reported : MatrixVisitor {
  std::map<std::string, double> scalars;
  std::map<std::string, std::vector<std::tuple<uint64_t, uint64_t, double>>> entries;
  void scalar(std::string_view name, double value) override { scalars[std::string(name)] = value; }
  void entry(std::string_view matrix, uint64_t row, uint64_t col, double value) override {
    entries[std::string(matrix)].emplace_back(row, col, value);
  }
};

// D + BᵀB over the pool, from the component's own report.
Eigen::MatrixXd reported_a(const SketchMatrix& s, const Pool& pool) {
  Reported r;
  s.visit(r);
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(2 * s.sketch().rank(), pool.size());
  for (const auto& [row, slot, v] : r.entries["sketch"]) b(row, pool.position.at(slot)) = v;
  Eigen::VectorXd d = Eigen::VectorXd::Constant(pool.size(), r.scalars.at("floor"));
  for (const auto& [slot, unused, v] : r.entries["ridge"]) d(pool.position.at(slot)) += v;
  return Eigen::MatrixXd(d.asDiagonal()) + b.transpose() * b;
}

// Each column's squared norm in B, from the report.
std::vector<double> kept_mass(const SketchMatrix& s, const Pool& pool) {
  Reported r;
  s.visit(r);
  std::vector<double> kept(pool.size(), 0.0);
  for (const auto& [row, slot, v] : r.entries["sketch"]) kept[pool.position.at(slot)] += v * v;
  return kept;
}

double reported_ridge(const SketchMatrix& s, const Pool& pool, int i) {
  Reported r;
  s.visit(r);
  for (const auto& [slot, unused, v] : r.entries["ridge"])
    if (pool.position.at(slot) == i) return v;
  return 0.0;
}

TEST(SketchDiagonal, ProductsEqualTheDenseMatrixOfItsDiagonalAndRows) {
  const Pool pool(40, 51, (uint64_t{1} << kBits) - 1);
  SketchMatrix s(0.5, 5, SketchMatrix::kDefaultCap, 0.0, kBits, 1.0);
  Reference ref(pool.size(), 0.5);
  std::mt19937_64 rng(52);
  const auto qs = queries(pool, 53);
  int refreshes = 0;
  double unit = 1.0;  // the weights' scale: after the forgetting at t = 200, updates as small as A
  for (int t = 0; t < 301; ++t) {
    const Vec x = random_vector(rng, pool, 0, 35, 1 + t % 9);
    const double beta = (t % 3) - 1.0;
    refreshes += s.sketch().append_rebases();
    s.update(x, unit * (1.0 + t % 2), beta);
    ref.add_b(x, beta, pool);
    if (t == 150) s.scale(0.8);
    if (t == 200) {  // A <- 1e-31 A, past 2^-100: the stored numbers are renormalized; products scale by 1e31
      std::vector<Matrix::Products> before;
      for (const Vec& q : qs) before.push_back(s.products(q));
      s.scale(1e-31);
      for (size_t i = 0; i < qs.size(); ++i) {
        const Matrix::Products p = s.products(qs[i]);
        EXPECT_NEAR(p.quad * 1e-31, before[i].quad, 1e-12 * before[i].quad) << i;
        EXPECT_NEAR(p.cross * 1e-31, before[i].cross, 1e-9 * (1.0 + std::fabs(before[i].cross))) << i;
      }
      unit = 1e-31;
    }
    if (t % 10 == 9) {
      ref.a = reported_a(s, pool);
      ASSERT_LT(max_error(s, ref, pool, qs), 1e-8) << t;
    }
  }
  EXPECT_GT(refreshes, 3);
  EXPECT_GT(s.shrinkage(), 0.0);
}

TEST(SketchDiagonal, EachRidgeIsCTimesTheColumnsRemovedMassAtARefresh) {
  const Pool pool(30, 61);
  SketchMatrix one(1.0, 4, SketchMatrix::kDefaultCap, 0.0, 0, 1.0);
  SketchMatrix three(1.0, 4, SketchMatrix::kDefaultCap, 0.0, 0, 3.0);
  std::vector<double> mass(pool.size(), 0.0);
  std::mt19937_64 rng(62);
  int checked = 0;
  for (int t = 0; t < 200; ++t) {
    const Vec x = random_vector(rng, pool, 0, pool.size(), 2 + t % 7);
    const double w = 0.5 + t % 3;
    const bool refreshes = one.sketch().append_rebases();
    one.rank_one_update(x, w);
    three.rank_one_update(x, w);
    for (const Coord& c : x) mass[pool.position.at(c.slot)] += w * c.x * c.x;
    if (!refreshes) continue;
    const std::vector<double> kept = kept_mass(one, pool);
    for (int i = 0; i < pool.size(); ++i) {
      const double removed = std::max(mass[i] - kept[i], 0.0);
      ASSERT_NEAR(reported_ridge(one, pool, i), removed, 1e-9 * (1.0 + mass[i])) << t << " " << i;
      ASSERT_NEAR(reported_ridge(three, pool, i), 3.0 * removed, 3e-9 * (1.0 + mass[i])) << t << " " << i;
    }
    ++checked;
  }
  EXPECT_GT(checked, 3);
  const Vec probe = {{pool.slots[0], 1.0}, {pool.slots[7], -0.5}};
  EXPECT_GT(one.quad(probe), three.quad(probe));  // a larger ridge, a smaller inverse
}

TEST(SketchDiagonal, SavedStateResumesBitForBitAndOtherCorrectionsAreRefused) {
  const Pool pool(25, 71, (uint64_t{1} << kBits) - 1);
  SketchMatrix a(1.0, 3, SketchMatrix::kDefaultCap, 0.0, kBits, 1.0);
  std::mt19937_64 rng(72);
  std::vector<Vec> stream;
  for (int t = 0; t < 120; ++t) stream.push_back(random_vector(rng, pool, 0, pool.size(), 1 + t % 6));
  for (int t = 0; t < 61; ++t) a.update(stream[t], 1.0, 0.5);
  SketchMatrix b(1.0, 3, SketchMatrix::kDefaultCap, 0.0, kBits, 1.0);
  load_bytes(b, saved(a));
  for (int t = 61; t < 120; ++t) {
    a.update(stream[t], 1.0, -0.25);
    b.update(stream[t], 1.0, -0.25);
  }
  EXPECT_EQ(saved(a), saved(b));
  for (const Vec& q : queries(pool, 73)) {
    EXPECT_EQ(a.products(q).quad, b.products(q).quad);
    EXPECT_EQ(a.products(q).cross, b.products(q).cross);
  }
  SketchMatrix other(1.0, 3, SketchMatrix::kDefaultCap, 0.0, kBits, 2.0);
  EXPECT_THROW(load_bytes(other, saved(a)), ModelFormatError);
  SketchMatrix plain(1.0, 3, SketchMatrix::kDefaultCap, 0.0, kBits, 0.0);
  EXPECT_THROW(load_bytes(plain, saved(a)), ModelFormatError);
}

TEST(SketchDiagonal, CapIsATypedErrorThatChangesNothing) {
  SketchMatrix s(1.0, 2, 5, 0.0, 0, 1.0);
  s.rank_one_update(Vec{{1, 1.0}, {2, 1.0}, {3, 1.0}}, 1.0);
  for (int t = 0; t < 6; ++t) s.rank_one_update(Vec{{1, 1.0 + t}, {3, -1.0}}, 1.0);
  const Vec probe = {{1, 1.0}, {2, 0.5}, {9, 1.0}};
  const std::vector<uint8_t> before = saved(s);
  EXPECT_THROW(s.rank_one_update(Vec{{4, 1.0}, {5, 1.0}, {6, 1.0}}, 1.0), ConfigError);
  EXPECT_EQ(saved(s), before);
  EXPECT_THROW(SketchMatrix(1.0, 2, 5, 0.0, 0, -1.0), ConfigError);
}

}  // namespace
}  // namespace lepus

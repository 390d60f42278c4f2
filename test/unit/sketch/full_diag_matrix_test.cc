// full and diag against a dense Eigen reference on random sparse data (fixed seeds): quad and solve within
// 1e-9 relative, after every batch of updates, on vectors that touch held and never-updated slots; a
// perturbed reference (lambda off by 1e-6, one update missing) is detected. The full matrix's cap is a typed
// error that changes nothing; a new slot enters with the prior the fixed-d matrix has there; the visitor
// gives A⁻¹ (full) and diag(A) (diag).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "lepus/errors.h"
#include "matrix_test_util.h"
#include "sketch/compact_index.h"
#include "sketch/diag_matrix.h"
#include "sketch/full_matrix.h"

namespace lepus {
namespace {

using namespace matrix_test;

constexpr double kTol = 1e-9;

// Updates on the first 30 of 40 pool slots; the rest of the pool stays at the prior. Checks every 25 updates.
template <class M>
void run_against_reference(M& m, bool diagonal, uint64_t seed) {
  const Pool pool(40, seed, (uint64_t{1} << 20) - 1);  // within diag's 2^20 slots
  const int updated = 30;
  const double lambda = m.lambda();
  Reference ref(pool.size(), lambda);
  Reference missing_one(pool.size(), lambda);              // one update left out
  Reference lambda_off(pool.size(), lambda * (1 + 1e-6));  // the prior off by 1e-6
  const auto qs = queries(pool, seed + 1);
  std::mt19937_64 rng(seed + 2);
  std::uniform_real_distribution<double> weight(0.1, 3.0);
  for (int t = 0; t < 200; ++t) {
    const Vec x = random_vector(rng, pool, 0, updated, 1 + t % 8);
    const double w = weight(rng);
    m.rank_one_update(x, w);
    for (Reference* r : {&ref, &missing_one, &lambda_off})
      if (r != &missing_one || t != 150) diagonal ? r->update_diag(x, w, pool) : r->update(x, w, pool);
    if (t % 25 == 24) {
      ASSERT_LT(max_error(m, ref, pool, qs), kTol) << "after update " << t;
    }
  }
  EXPECT_GT(max_error(m, missing_one, pool, qs), 100 * kTol);
  EXPECT_GT(max_error(m, lambda_off, pool, qs), 100 * kTol);
}

TEST(FullMatrix, MatchesDenseReference) {
  FullMatrix m(0.7);
  run_against_reference(m, false, 11);
  EXPECT_EQ(m.size(), 30u);  // only updated slots are held
}

TEST(FullMatrix, MatchesDenseReferenceWithSmallLambda) {
  FullMatrix m(1e-3);
  run_against_reference(m, false, 12);
}

TEST(DiagMatrix, MatchesDiagonalReference) {
  DiagMatrix m(0.7, 20);
  run_against_reference(m, true, 13);
}

TEST(DiagMatrix, FullReferenceIsNotDiagonal) {  // the check would catch a diag that is not the diagonal rule
  DiagMatrix m(0.7, 20);
  const Pool pool(20, 14, (uint64_t{1} << 20) - 1);
  Reference full(pool.size(), 0.7);
  std::mt19937_64 rng(15);
  for (int t = 0; t < 30; ++t) {
    const Vec x = random_vector(rng, pool, 0, pool.size(), 4);
    m.rank_one_update(x, 1.0);
    full.update(x, 1.0, pool);
  }
  EXPECT_GT(max_error(m, full, pool, queries(pool, 16)), 1e-3);
}

TEST(DiagMatrix, EqualsFullOnOneHotVectors) {
  DiagMatrix d(2.0, 20);
  FullMatrix f(2.0);
  const Pool pool(10, 17, (uint64_t{1} << 20) - 1);
  std::mt19937_64 rng(18);
  for (int t = 0; t < 50; ++t) {
    const Vec x = random_vector(rng, pool, 0, pool.size(), 1);
    d.rank_one_update(x, 0.5 + t % 3);
    f.rank_one_update(x, 0.5 + t % 3);
    if (t % 7 == 0) {
      d.scale(0.9);
      f.scale(0.9);
    }
  }
  for (int i = 0; i < pool.size(); ++i) {
    const Vec e = {{pool.slots[i], 1.5}};
    EXPECT_NEAR(d.quad(e), f.quad(e), 1e-12 * f.quad(e)) << i;
  }
}

TEST(FullMatrix, NewSlotEntersWithThePriorOfTheFixedDimensionMatrix) {
  FullMatrix m(4.0);
  m.rank_one_update(Vec{{5, 1.0}, {9, 2.0}}, 1.0);
  m.scale(0.5);  // A = 0.5 (4 I + x xᵀ): a slot never seen has A_ii = 2
  EXPECT_DOUBLE_EQ(m.quad(Vec{{77, 3.0}}), 9.0 / 2.0);
  m.rank_one_update(Vec{{77, 1.0}}, 2.0);  // A_77,77 = 2 + 2 = 4, coupled to nothing
  EXPECT_DOUBLE_EQ(m.quad(Vec{{77, 3.0}}), 9.0 / 4.0);
  std::vector<Coord> out;
  m.solve(Vec{{77, 3.0}}, out);
  for (const Coord& c : out) EXPECT_DOUBLE_EQ(c.x, c.slot == 77 ? 0.75 : 0.0) << c.slot;
}

TEST(FullMatrix, CapIsATypedErrorThatChangesNothing) {
  FullMatrix m(1.0, 10);
  std::vector<Coord> x;
  for (uint64_t s = 0; s < 8; ++s) x.push_back({s * 1000, 1.0 + s});
  m.rank_one_update(x, 1.0);
  const Vec probe = {{0, 1.0}, {7000, -1.0}, {123456, 2.0}};
  const double before = m.quad(probe);
  try {
    m.rank_one_update(Vec{{0, 1.0}, {1, 1.0}, {2, 1.0}, {3, 1.0}}, 1.0);  // 3 new slots: 11 > 10
    FAIL() << "no ConfigError past the cap";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cap of 10"), std::string::npos) << what;
    EXPECT_NE(what.find("--matrix diag or sketch"), std::string::npos) << what;
  }
  EXPECT_EQ(m.size(), 8u);
  EXPECT_EQ(m.quad(probe), before);
  m.rank_one_update(Vec{{0, 1.0}, {1, 1.0}, {2, 1.0}}, 1.0);  // exactly at the cap: fine
  EXPECT_EQ(m.size(), 10u);
  EXPECT_THROW(FullMatrix(1.0, 0), ConfigError);
  EXPECT_THROW(FullMatrix(0.0), ConfigError);
}

struct Collect : MatrixVisitor {
  std::map<std::string, double> scalars;
  std::map<std::pair<uint64_t, uint64_t>, double> entries;
  void scalar(std::string_view name, double value) override { scalars[std::string(name)] = value; }
  void entry(std::string_view, uint64_t row, uint64_t col, double value) override {
    entries[{row, col}] = value;
  }
};

TEST(FullMatrix, VisitorGivesTheInverse) {
  const Pool pool(12, 19);
  FullMatrix m(0.5);
  Reference ref(pool.size(), 0.5);
  std::mt19937_64 rng(20);
  for (int t = 0; t < 40; ++t) {
    const Vec x = random_vector(rng, pool, 0, 9, 3);
    m.rank_one_update(x, 1.0);
    ref.update(x, 1.0, pool);
  }
  m.scale(0.25);
  ref.a *= 0.25;
  Collect c;
  m.visit(c);
  EXPECT_DOUBLE_EQ(c.scalars.at("lambda"), 0.5);
  EXPECT_DOUBLE_EQ(c.scalars.at("prior"), 0.125);
  EXPECT_EQ(c.scalars.at("slots"), 9.0);
  EXPECT_EQ(c.entries.size(), 9u * 10 / 2);
  const Eigen::MatrixXd inv = ref.a.inverse();
  for (const auto& [ij, v] : c.entries) {
    const double want = inv(pool.position.at(ij.first), pool.position.at(ij.second));
    EXPECT_NEAR(v, want, 1e-9 * inv.cwiseAbs().maxCoeff());
  }
}

TEST(DiagMatrix, VisitorGivesTheDiagonal) {
  DiagMatrix m(1.0, 8);
  m.rank_one_update(Vec{{3, 2.0}, {200, -1.0}}, 0.5);
  m.rank_one_update(Vec{{3, 1.0}}, 1.0);
  m.scale(0.5);
  Collect c;
  m.visit(c);
  EXPECT_DOUBLE_EQ(c.scalars.at("prior"), 0.5);
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_DOUBLE_EQ((c.entries.at({3, 3})), 0.5 * (1.0 + 0.5 * 4.0 + 1.0));
  EXPECT_DOUBLE_EQ((c.entries.at({200, 200})), 0.5 * (1.0 + 0.5));
  EXPECT_DOUBLE_EQ(m.diagonal(3 + 256), m.diagonal(3));  // slots are masked to 2^bits
  EXPECT_THROW(DiagMatrix(1.0, 33), ConfigError);
}

TEST(MatrixCompactIndex, PositionsInFirstSeenOrder) {
  CompactIndex index;
  std::mt19937_64 rng(21);
  std::vector<uint64_t> slots;
  for (int i = 0; i < 5000; ++i) slots.push_back(i % 3 == 0 ? static_cast<uint64_t>(i) : rng());
  for (size_t i = 0; i < slots.size(); ++i) EXPECT_EQ(index.insert(slots[i]), i);
  for (size_t i = 0; i < slots.size(); ++i) {
    EXPECT_EQ(index.find(slots[i]), i);
    EXPECT_EQ(index.insert(slots[i]), i);
    EXPECT_EQ(index.slot(static_cast<uint32_t>(i)), slots[i]);
  }
  EXPECT_EQ(index.find(1), CompactIndex::kNone);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find(slots[0]), CompactIndex::kNone);
  EXPECT_EQ(index.insert(slots[7]), 0u);
}

}  // namespace
}  // namespace lepus

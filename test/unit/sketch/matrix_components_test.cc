// What every matrix component promises, run on each (full, diag, sketch): forgetting A <- r A matches a dense
// reference scaled the same way (new slots entering after it with the scaled prior) and equals dividing quad
// and solve by r, also across the renormalization of the forgetting factor; save/load round trips bit for bit
// and resumed updates equal uninterrupted ones; truncated, damaged or foreign state is refused with
// ModelFormatError and leaves the object as it was; weight 0 and empty vectors change nothing; reset equals a
// fresh object; contract violations are refused. The sketch is run with m above the data's rank, where it is
// exact (1e-6). Each kind runs twice: as A alone, and keeping the tracked vector b (update(x, w, β)), where
// products' xᵀA⁻¹b is checked against the reference's too.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lepus/errors.h"
#include "matrix_test_util.h"
#include "sketch/diag_matrix.h"
#include "sketch/full_matrix.h"
#include "sketch/sketch_matrix.h"

namespace lepus {
namespace {

using namespace matrix_test;

struct Case {
  std::string name;
  std::function<std::unique_ptr<Matrix>(double lambda)> make;
  bool diagonal;                  // the reference updates only the diagonal
  int updated;                    // pool slots the updates use
  double tolerance;               // quad and solve against the reference, relative
  std::vector<size_t> counts_at;  // byte offsets of the state's counts (slots held, rows)
};

std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.name; }

// Bytes of the tracked section that closes a component's state (bits, count, entries; sketch: and B b).
size_t tracked_bytes(const Matrix& m) {
  ModelWriter w;
  m.tracked().save(w);
  size_t n = w.bytes().size();
  if (const auto* s = dynamic_cast<const SketchMatrix*>(&m); s && m.tracked().enabled())
    n += 8 * s->sketch().rows();
  return n;
}

class MatrixComponents : public ::testing::TestWithParam<Case> {
 protected:
  std::unique_ptr<Matrix> make(double lambda = 0.6) const { return GetParam().make(lambda); }
  const Pool pool_{40, 71, (uint64_t{1} << 12) - 1};
  void update(Matrix& m, Reference* ref, const Vec& x, double w) const {
    const double beta = m.tracked().enabled() ? 0.9 - w : 0.0;  // both signs
    if (beta != 0.0)
      m.update(x, w, beta);
    else
      m.rank_one_update(x, w);
    if (ref) {
      GetParam().diagonal ? ref->update_diag(x, w, pool_) : ref->update(x, w, pool_);
      ref->add_b(x, beta, pool_);
    }
  }
  // t updates over the first `updated` slots, the slots in use growing with t, a forgetting step every third.
  void train(Matrix& m, Reference* ref, int steps, uint64_t seed) const {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.6, 1.0);
    const int updated = GetParam().updated;
    for (int t = 0; t < steps; ++t) {
      const int in_use = std::min(updated, 2 + t / 4);
      update(m, ref, random_vector(rng, pool_, 0, in_use, 1 + t % 5), 0.2 + u(rng));
      if (t % 3 ==
          2) {  // mild enough that λ r^t stays within 1e4 of the data (the sketch's error grows with it)
        const double r = 0.75 + 0.25 * u(rng);
        m.scale(r);
        if (ref) ref->a *= r;
      }
    }
  }
};

TEST_P(MatrixComponents, ForgettingMatchesTheScaledReference) {
  auto m = make();
  Reference ref(pool_.size(), 0.6);
  train(*m, &ref, 240, 72);
  const auto qs = queries(pool_, 73);
  EXPECT_LT(max_error(*m, ref, pool_, qs), GetParam().tolerance);
  Reference unscaled(pool_.size(), 0.6);  // the same updates, forgetting all but the last step: caught
  auto plain = make();
  train(*plain, &unscaled, 240, 72);
  unscaled.a /= 0.99;
  EXPECT_GT(max_error(*m, unscaled, pool_, qs), 1e-3);
}

TEST_P(MatrixComponents, ForgettingDividesQuadAndSolveByTheFactor) {
  auto m = make();
  train(*m, nullptr, 50, 74);
  int crosses = 0;  // queries with xᵀA⁻¹b != 0
  for (const Vec& x : queries(pool_, 75)) {
    std::vector<Coord> before, after;
    const double q = m->quad(x);
    const double c = m->products(x).cross;
    m->solve(x, before);
    auto copy = make();
    load_bytes(*copy, saved(*m));
    copy->scale(0.37);
    EXPECT_NEAR(copy->quad(x), q / 0.37, 1e-13 * q / 0.37);
    EXPECT_NEAR(copy->products(x).cross, c / 0.37, 1e-13 * std::fabs(c / 0.37));
    crosses += c != 0.0;
    copy->solve(x, after);
    ASSERT_EQ(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      EXPECT_EQ(after[i].slot, before[i].slot);
      EXPECT_NEAR(after[i].x, before[i].x / 0.37, 1e-13 * std::fabs(before[i].x / 0.37) + 1e-300);
    }
  }
  EXPECT_EQ(crosses > 0, m->tracked().enabled());
}

TEST_P(MatrixComponents, RenormalizingTheForgettingFactorKeepsTheMatrix) {
  auto m = make();
  Reference ref(pool_.size(), 0.6);
  std::mt19937_64 rng(76);
  double level = 1.0;  // updates follow the forgetting so A stays well conditioned: A = level (0.6 I + ...)
  const int updated = GetParam().updated;
  for (int t = 0; t < 260;
       ++t) {  // 2^-260: two renormalizations below 2^-100; new slots keep coming until ~200
    const int in_use = 2 + t * (updated - 2) / 200;
    update(*m, &ref, random_vector(rng, pool_, 0, std::min(in_use, updated), 1 + t % 4),
           level * (0.5 + t % 3));
    m->scale(0.5);
    ref.a *= 0.5;
    level *= 0.5;
  }
  EXPECT_LT(max_error(*m, ref, pool_, queries(pool_, 77)), GetParam().tolerance);
}

TEST_P(MatrixComponents, SaveLoadRoundTripsAndResumedEqualsUninterrupted) {
  auto whole = make(), first = make();
  train(*whole, nullptr, 120, 78);
  train(*first, nullptr, 120, 78);
  const auto bytes = saved(*first);
  auto resumed = make();
  load_bytes(*resumed, bytes);
  EXPECT_EQ(saved(*resumed), bytes);
  for (const Vec& x : queries(pool_, 79)) {
    std::vector<Coord> a, b;
    EXPECT_EQ(resumed->quad(x), first->quad(x));
    EXPECT_EQ(resumed->products(x).cross, first->products(x).cross);
    EXPECT_EQ(resumed->solve(x, a), first->solve(x, b));
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i].slot == b[i].slot && a[i].x == b[i].x);
  }
  train(*whole, nullptr, 90, 80);  // more slots, shrinks, forgetting after the cut
  train(*resumed, nullptr, 90, 80);
  EXPECT_EQ(saved(*resumed), saved(*whole));
}

TEST_P(MatrixComponents, TruncatedStateIsRefusedAndChangesNothing) {
  auto m = make();
  train(*m, nullptr, 30, 81);
  const auto bytes = saved(*m);
  auto other = make();
  train(*other, nullptr, 10, 82);
  const auto other_bytes = saved(*other);
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(load_bytes(*other, cut), ModelFormatError) << n << " of " << bytes.size();
    ASSERT_EQ(saved(*other), other_bytes) << n;
  }
}

TEST_P(MatrixComponents, DamagedStateIsRefused) {
  auto m = make();
  train(*m, nullptr, 30, 83);
  const auto bytes = saved(*m);
  auto try_load = [&](const std::vector<uint8_t>& b) {
    auto fresh = make();
    load_bytes(*fresh, b);
  };
  {  // another kind, another version
    auto b = bytes;
    b[0] = static_cast<uint8_t>(b[0] % 3 + 1);
    EXPECT_THROW(try_load(b), ModelFormatError);
    b = bytes;
    b[1] ^= 0x40;
    EXPECT_THROW(try_load(b), ModelFormatError);
  }
  for (const size_t at :
       GetParam().counts_at) {  // a count far beyond the bytes present: refused before allocating
    auto b = bytes;
    const uint64_t huge = uint64_t{1} << 40;
    std::memcpy(&b[at], &huge, 8);
    EXPECT_THROW(try_load(b), ModelFormatError) << at;
    const uint32_t huge32 = 1u << 30;  // (the sketch's rank and rows are u32)
    b = bytes;
    std::memcpy(&b[at], &huge32, 4);
    EXPECT_THROW(try_load(b), ModelFormatError) << at;
  }
  {  // the forgetting factor (right after the 5-byte header and lambda; diag: and its bits; sketch: and the
     // fraction of the shrinkage added back) made NaN or 0
    const size_t at = bytes[0] == static_cast<uint8_t>(MatrixKind::kFull)   ? 13
                      : bytes[0] == static_cast<uint8_t>(MatrixKind::kDiag) ? 17
                                                                            : 21;
    for (const double v : {std::nan(""), 0.0, 2.0}) {
      auto b = bytes;
      std::memcpy(&b[at], &v, 8);
      EXPECT_THROW(try_load(b), ModelFormatError) << v;
    }
  }
  // NaN written over every 8-byte window: refused with ModelFormatError or (where it only renames a slot)
  // loaded; never another exception or a crash.
  const double nan = std::nan("");
  for (size_t at = 0; at + 8 <= bytes.size(); ++at) {
    auto b = bytes;
    std::memcpy(&b[at], &nan, 8);
    try {
      try_load(b);
    } catch (const ModelFormatError&) {
    }
  }
  // The last value before the tracked section is a diagonal entry (of A⁻¹, of A, of the sketch's factor L):
  // NaN or negative is refused.
  const size_t last = bytes.size() - 8 - tracked_bytes(*m);
  for (const double v : {nan, -1.0, 0.0}) {
    auto b = bytes;
    std::memcpy(&b[last], &v, 8);
    EXPECT_THROW(try_load(b), ModelFormatError) << v;
  }
  if (m->tracked().enabled()) {  // a tracked entry (and the sketch's last B b entry) made NaN: refused
    auto b = bytes;
    std::memcpy(&b[b.size() - 8], &nan, 8);
    EXPECT_THROW(try_load(b), ModelFormatError);
    auto other_bits = bytes;
    other_bits[last + 8] ^= 1;  // the tracked vector's bits
    EXPECT_THROW(try_load(other_bits), ModelFormatError);
  }
}

TEST_P(MatrixComponents, ForeignShapeIsRefused) {
  auto m = make(0.6);
  train(*m, nullptr, 30, 84);
  const auto bytes = saved(*m);
  auto other_lambda = make(0.7);
  EXPECT_THROW(load_bytes(*other_lambda, bytes), ModelFormatError);
  std::unique_ptr<Matrix> other_shape;
  switch (m->kind()) {
    case MatrixKind::kFull: other_shape = std::make_unique<FullMatrix>(0.6, 3); break;  // fewer than held
    case MatrixKind::kDiag: other_shape = std::make_unique<DiagMatrix>(0.6, 11); break;
    case MatrixKind::kSketch: other_shape = std::make_unique<SketchMatrix>(0.6, 9); break;
    case MatrixKind::kAuto: FAIL() << "a matrix reports the kind it holds, never auto";
  }
  EXPECT_THROW(load_bytes(*other_shape, bytes), ModelFormatError);
  for (const MatrixKind k : {MatrixKind::kFull, MatrixKind::kDiag, MatrixKind::kSketch}) {
    if (k == m->kind()) continue;
    MatrixOptions o;
    o.kind = k;
    o.lambda = 0.6;
    o.bits = 12;
    auto foreign = make_matrix(o);
    try {
      load_bytes(*foreign, bytes);
      FAIL() << "loaded as " << matrix_kind_name(k);
    } catch (const ModelFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(matrix_kind_name(m->kind()))), std::string::npos)
          << e.what();
    }
  }
}

TEST_P(MatrixComponents, WeightZeroAndEmptyVectorsChangeNothing) {
  auto m = make();
  train(*m, nullptr, 20, 85);
  const auto bytes = saved(*m);
  m->rank_one_update(Vec{{pool_.slots[39], 2.0}}, 0.0);
  m->rank_one_update(Vec{}, 1.0);
  m->rank_one_update(Vec{{pool_.slots[38], 0.0}}, 1.0);
  m->scale(1.0);
  EXPECT_EQ(saved(*m), bytes);
}

TEST_P(MatrixComponents, ResetEqualsAFreshMatrix) {
  auto m = make();
  train(*m, nullptr, 40, 86);
  m->reset();
  EXPECT_EQ(saved(*m), saved(*make()));
  Reference ref(pool_.size(), 0.6);
  train(*m, &ref, 40, 87);
  EXPECT_LT(max_error(*m, ref, pool_, queries(pool_, 88)), GetParam().tolerance);
}

TEST_P(MatrixComponents, ContractViolationsAreRefusedAndChangeNothing) {
  auto m = make();
  train(*m, nullptr, 20, 89);
  const auto bytes = saved(*m);
  const double nan = std::nan("");
  EXPECT_THROW(m->rank_one_update(Vec{{1, 1.0}}, -1.0), std::invalid_argument);
  EXPECT_THROW(m->rank_one_update(Vec{{1, 1.0}}, nan), std::invalid_argument);
  EXPECT_THROW(m->rank_one_update(Vec{{1, 1.0}}, INFINITY), std::invalid_argument);
  EXPECT_THROW(m->rank_one_update(Vec{{1, 1.0}, {2, nan}}, 1.0), std::invalid_argument);
  EXPECT_THROW(m->update(Vec{{1, 1.0}}, 1.0, nan), std::invalid_argument);
  if (!m->tracked().enabled()) {
    EXPECT_THROW(m->update(Vec{{1, 1.0}}, 1.0, 0.5), std::logic_error);
  }
  for (const double r : {0.0, -0.5, 1.5, nan}) EXPECT_THROW(m->scale(r), std::invalid_argument) << r;
  EXPECT_EQ(saved(*m), bytes);
  EXPECT_THROW(make(0.0), ConfigError);
  EXPECT_THROW(make(-1.0), ConfigError);
  EXPECT_THROW(make(nan), ConfigError);
}

TEST_P(MatrixComponents, FactoryNamesTheKind) {
  auto m = make();
  EXPECT_EQ(matrix_kind_from(matrix_kind_name(m->kind())), m->kind());
  EXPECT_EQ(matrix_kind_name(m->kind()), GetParam().name.substr(0, GetParam().name.find('_')));
  EXPECT_THROW(matrix_kind_from("lowrank"), ConfigError);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, MatrixComponents,
    ::testing::Values(
        Case{"full", [](double l) { return std::make_unique<FullMatrix>(l); }, false, 30, 1e-9, {29}},
        Case{"diag", [](double l) { return std::make_unique<DiagMatrix>(l, 12); }, true, 30, 1e-9, {33}},
        // 8 slots for rank 8: exact through the shrinks (one every 8 updates)
        Case{"sketch",
             [](double l) { return std::make_unique<SketchMatrix>(l, 8); },
             false,
             8,
             1e-6,
             {37, 41, 45, 57}},
        Case{"full_tracked",
             [](double l) { return std::make_unique<FullMatrix>(l, 4096, 12); },
             false,
             30,
             1e-9,
             {29}},
        Case{"diag_tracked",
             [](double l) { return std::make_unique<DiagMatrix>(l, 12, true); },
             true,
             30,
             1e-9,
             {33}},
        Case{
            "sketch_tracked",
            [](double l) { return std::make_unique<SketchMatrix>(l, 8, SketchMatrix::kDefaultCap, 1.0, 12); },
            false,
            8,
            1e-6,
            {37, 41, 45, 57}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace lepus

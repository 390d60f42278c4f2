// ftprl-full --matrix sketch (McMahan & Streeter, COLT 2010, FTPRL on the L2 ball with Q_{1:t} =
// M~_t^{1/2}/R, M~_t = BᵀB + Δ_t I the Frequent Directions sketch of the gradients plus its shrinkage ridge):
// while the gradients span at most m dimensions every iterate equals the full mode's; with m below the data's
// rank the iterates equal a dense reference that forms Q_{1:t} from the same sketch and runs the textbook
// recurrence (y += Q_t w_t − g_t, w = the Q-norm projection onto the ball), every increment Q_t is ⪰ 0 and
// Theorem 2's a-posteriori bound holds; 10^5 rounds with feature scales from 1e-6 to 1e6 stay finite and in
// the ball; the modes refuse each other's state.
#include <gtest/gtest.h>
#include "long_run.h"

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "learners/ftprl_full.h"
#include "learners/ftprl_sketch.h"
#include "lepus/errors.h"
#include "lepus/model_io.h"
#include "losses/losses.h"
#include "sketch/frequent_directions.h"
#include "sketch/sym_eigen.h"

namespace lepus {
namespace {

const LogisticLoss kLogistic(-1.0f, 1.0f);
const SquaredLoss kSquared;

Example example(const std::vector<double>& x, float y = 0.0f) {
  Example ex;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != 0.0) ex.features.push_back(Feature{i, static_cast<float>(x[i])});
  ex.num_linear = static_cast<uint32_t>(ex.features.size());
  ex.label = y;
  ex.labeled = true;
  return ex;
}

FtprlFullOptions opts(double r) {
  FtprlFullOptions o;
  o.radius = r;
  return o;
}

// Rows of rank `rank` in d features (a random basis, the directions entering one by one: a rank-deficient
// start). exact: small integers throughout, so the float features hold the rows exactly and their rank is
// exactly `rank` (rounding to float would add directions at 1e-8 of the scale, which the full mode's
// tolerance keeps and the sketch's drops).
std::vector<std::vector<double>> rows(int n, int d, int rank, uint64_t seed, bool exact = false) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  auto draw = [&] { return exact ? std::round(3.0 * normal(rng)) : normal(rng); };
  std::vector<std::vector<double>> basis(rank, std::vector<double>(d));
  for (auto& b : basis)
    for (double& v : b) v = draw();
  std::vector<std::vector<double>> out;
  for (int t = 0; t < n; ++t) {
    std::vector<double> x(d, 0.0);
    for (int k = 0; k < std::min(rank, 1 + t / 5); ++k) {
      const double c = draw();
      for (int i = 0; i < d; ++i) x[i] += c * basis[k][i];
    }
    for (double& v : x) v = static_cast<float>(v);
    out.push_back(x);
  }
  return out;
}

// The same gradients (fixed, so that float-rounded predictions do not feed back) give the same iterates.
TEST(FtprlSketch, EqualsTheFullModeWhileTheGradientsSpanAtMostM) {
  for (const auto& [rank, m, radius] :
       {std::tuple{3, 3u, 0.5}, std::tuple{4, 6u, 5.0}, std::tuple{2, 2u, 100.0}}) {
    SCOPED_TRACE("rank " + std::to_string(rank) + " m " + std::to_string(m) + " R " + std::to_string(radius));
    FtprlFullLearner full(opts(radius), kLogistic, 10);
    FtprlSketchLearner sketch(opts(radius), m, kLogistic, 10);
    std::mt19937_64 rng(rank);
    std::normal_distribution<double> normal;
    int active = 0;
    double worst = 0.0;
    const auto data = rows(400, 7, rank, 20 + rank, true);
    for (size_t t = 0; t < data.size(); ++t) {
      const double dloss = normal(rng);
      full.update(example(data[t]), dloss);
      sketch.update(example(data[t]), dloss);
      active += sketch.mu() > 0.0;
      for (uint64_t i = 0; i < 7; ++i) {
        const double dev =
            std::fabs(sketch.weight(i) - full.weight(i)) / (std::fabs(full.weight(i)) + 1e-3 * radius);
        ASSERT_LT(dev, 1e-7) << "round " << t << " w_" << i << " " << sketch.weight(i) << " "
                             << full.weight(i);
        worst = std::max(worst, dev);
      }
    }
    EXPECT_EQ(sketch.sketch().shrinkage(), 0.0);
    EXPECT_GT(sketch.sketch().columns(), 0u);
    if (radius < 1.0) {
      EXPECT_GT(active, 0);  // the ball was active: the projection was compared too
    }
  }
}

// The dense reference: the same gradient rows through a second sketch, Q_{1:t} = (Δ I + BᵀB)^{1/2} / R formed
// densely, y += Q_t w_t − g_t, w = argmin_{||w|| <= R} (w − Q⁺y)ᵀ Q (w − Q⁺y).
struct Reference {
  int d;
  double r;
  FrequentDirections fd;
  Eigen::MatrixXd q = Eigen::MatrixXd::Zero(d, d);
  Eigen::VectorXd y = Eigen::VectorXd::Zero(d), w = Eigen::VectorXd::Zero(d);
  std::vector<Eigen::MatrixXd> qs;      // Q_{1:t}
  std::vector<Eigen::VectorXd> ws, gs;  // w_t played, g_t

  Reference(int d_, double r_, uint32_t m) : d(d_), r(r_), fd(m, 1024) {}
  void step(const std::vector<double>& x, double dloss) {
    Eigen::VectorXd g(d);
    std::vector<Coord> row;
    for (int i = 0; i < d; ++i) {
      g(i) = dloss * x[i];
      if (x[i] != 0.0) row.push_back({static_cast<uint64_t>(i), x[i], 0});
    }
    ws.push_back(w);
    gs.push_back(g);
    fd.append(row, std::fabs(dloss));
    Eigen::MatrixXd m = fd.shrinkage() * Eigen::MatrixXd::Identity(d, d);
    Eigen::VectorXd col;
    for (uint32_t p = 0; p < fd.columns(); ++p) {
      fd.column(p, col);
      for (uint32_t p2 = 0; p2 < fd.columns(); ++p2) {
        Eigen::VectorXd col2;
        fd.column(p2, col2);
        m(fd.index().slot(p), fd.index().slot(p2)) += col.dot(col2);
      }
    }
    lepus::SymEigen eig(m);
    Eigen::VectorXd l = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt() / r;
    const double top = l.maxCoeff();
    Eigen::VectorXd inv = Eigen::VectorXd::Zero(d);
    for (int i = 0; i < d; ++i) {
      if (!(eig.eigenvalues()(i) > 1e-12 * eig.eigenvalues().maxCoeff())) l(i) = 0.0;
      inv(i) = l(i) > 0.0 ? 1.0 / l(i) : 0.0;
    }
    (void)top;
    const Eigen::MatrixXd next = eig.eigenvectors() * l.asDiagonal() * eig.eigenvectors().transpose();
    y += (next - q) * w - g;
    q = next;
    qs.push_back(q);
    const Eigen::VectorXd u = eig.eigenvectors() * inv.asDiagonal() * eig.eigenvectors().transpose() * y;
    w = ftprl_ball_projection(eig.eigenvectors(), l, u, r);
  }
};

TEST(FtprlSketch, BelowTheDataRankEqualsTheDenseReferenceAndKeepsTheoremTwo) {
  const int d = 6;
  for (const auto& [m, radius, seed] :
       {std::tuple{2u, 0.7, 1}, std::tuple{3u, 3.0, 2}, std::tuple{1u, 1.0, 3}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " R " + std::to_string(radius));
    FtprlSketchLearner sketch(opts(radius), m, kSquared, 8);
    Reference ref(d, radius, m);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    const auto data = rows(250, d, d, 50 + seed);
    for (size_t t = 0; t < data.size(); ++t) {
      const double dloss = normal(rng);
      sketch.update(example(data[t]), dloss);
      ref.step(data[t], dloss);
      for (int i = 0; i < d; ++i)
        ASSERT_NEAR(sketch.weight(i), ref.w(i), 1e-7 * (1.0 + std::fabs(ref.w(i))))
            << "round " << t << " w_" << i;
      ASSERT_LE(sketch.weight_norm(), radius * (1.0 + 1e-12));
    }
    EXPECT_GT(sketch.sketch().shrinkage(), 0.0);  // the ridge was exercised
    // Every increment Q_t = Q_{1:t} − Q_{1:t−1} is ⪰ 0 (Theorem 2's requirement), and its bound holds.
    double pen = 0.0;
    for (size_t t = 0; t < ref.qs.size(); ++t) {
      const Eigen::MatrixXd inc = ref.qs[t] - (t ? ref.qs[t - 1] : Eigen::MatrixXd::Zero(d, d));
      EXPECT_GE(lepus::SymEigen(inc).eigenvalues().minCoeff(), -1e-9 * ref.qs[t].norm()) << t;
      pen += ref.gs[t].dot(ref.qs[t].completeOrthogonalDecomposition().pseudoInverse() * ref.gs[t]);
    }
    for (int k = 0; k < 20; ++k) {
      Eigen::VectorXd u(d);
      for (int i = 0; i < d; ++i) u(i) = normal(rng);
      u *= radius / u.norm() * (k % 2 ? 1.0 : 0.5);
      double regret = 0.0, prox = 0.0;
      for (size_t t = 0; t < ref.gs.size(); ++t) {
        regret += ref.gs[t].dot(ref.ws[t] - u);
        const Eigen::MatrixXd inc = ref.qs[t] - (t ? ref.qs[t - 1] : Eigen::MatrixXd::Zero(d, d));
        prox += 0.5 * (u - ref.ws[t]).dot(inc * (u - ref.ws[t]));
      }
      EXPECT_LE(regret, prox + pen + 1e-9) << k;
    }
  }
}

// 10^6 rounds in d = 20, m = 5, feature scales from 1e-6 to 1e6: every prediction finite, w in the ball (its
// norm from the representation equal to the one from the weights), the sketch's Gram matrix exactly
// symmetric.
TEST(FtprlSketch, MillionRoundsWithWildScalesStayFiniteAndInTheBall) {
  std::mt19937_64 rng(43);
  std::uniform_real_distribution<double> u(-1, 1);
  const int d = 20;
  FtprlSketchLearner l(opts(1.0), 5, kLogistic, 6);
  for (int t = 0; t < test::long_run(1000000); ++t) {
    std::vector<double> x(d, 0.0);
    for (int i = 0; i < d; ++i)
      if (u(rng) > 0.2) x[i] = u(rng) * std::pow(10.0, -6 + 12.0 * i / (d - 1));
    const Prediction p = l.learn(example(x, u(rng) > 0 ? 1.0f : -1.0f));
    ASSERT_TRUE(std::isfinite(p.raw)) << t;
  }
  EXPECT_LE(l.weight_norm(), 1.0 + 1e-12);
  const Eigen::Index n = l.sketch().rows();
  const Eigen::MatrixXd g = l.sketch().gram().topLeftCorner(n, n);
  EXPECT_TRUE(g.allFinite());
  EXPECT_EQ(g, g.transpose());
  double norm2 = 0.0;
  for (int i = 0; i < d; ++i) norm2 += l.weight(i) * l.weight(i);
  EXPECT_NEAR(std::sqrt(norm2), l.weight_norm(), 1e-6);
  EXPECT_GT(l.sketch().shrinkage(), 0.0);
}

TEST(FtprlSketch, TheModesRefuseEachOthersState) {
  FtprlFullLearner full(opts(1.0), kLogistic, 6);
  FtprlSketchLearner sketch(opts(1.0), 4, kLogistic, 6);
  full.learn(example({1, 2}, 1));
  sketch.learn(example({1, 2}, 1));
  auto bytes = [](const Learner& l) {
    ModelWriter w;
    l.save(w);
    return std::vector<uint8_t>(w.bytes().begin(), w.bytes().end());
  };
  auto load = [](Learner& l, const std::vector<uint8_t>& b) {
    ModelReader r(b.data(), b.size(), "test");
    l.load(r);
  };
  EXPECT_THROW(load(sketch, bytes(full)), ModelFormatError);
  EXPECT_THROW(load(full, bytes(sketch)), ModelFormatError);
  FtprlSketchLearner other_rank(opts(1.0), 5, kLogistic, 6);
  EXPECT_THROW(load(other_rank, bytes(sketch)), ModelFormatError);
}

// A model of state version 0xF5C1 (before G's eigendecomposition was saved: the same bytes up to that part)
// still loads; the next update recomputes the decomposition, and its predictions are the current format's.
TEST(FtprlSketch, ModelWithoutTheEigendecompositionLoads) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  FtprlSketchLearner l(opts(2.0), 3, kLogistic, 6);
  std::vector<Example> data;
  for (int t = 0; t < 40; ++t) {
    std::vector<double> x(6);
    for (double& v : x) v = u(rng);
    data.push_back(example(x, u(rng) > 0 ? 1.0f : -1.0f));
  }
  for (int t = 0; t < 20; ++t) l.learn(data[t]);
  ModelWriter w;
  l.save(w);
  std::vector<uint8_t> old(w.bytes().begin(), w.bytes().end());
  const size_t n = static_cast<size_t>(l.sketch().rows());
  uint32_t flag;
  const size_t eig_bytes = n * (n + 1) * sizeof(double);
  std::memcpy(&flag, old.data() + old.size() - 4 - (old.size() >= 4 + eig_bytes ? eig_bytes : 0), 4);
  const size_t cut = old.size() - 4 - (flag == 1 ? eig_bytes : 0);
  old.resize(cut);
  const uint32_t v1 = 0xF5C1;
  std::memcpy(old.data(), &v1, 4);
  // 0xF5C1 had no data-derived radius: its flag (u8) and X (f64) after the radius (offset 16) go too.
  old.erase(old.begin() + 16, old.begin() + 25);
  FtprlSketchLearner back(opts(2.0), 3, kLogistic, 6), same(opts(2.0), 3, kLogistic, 6);
  ModelReader r(old.data(), old.size(), "old");
  back.load(r);
  ModelReader r2(w.bytes().data(), w.bytes().size(), "new");
  same.load(r2);
  for (int t = 20; t < 40; ++t) {
    const double a = back.learn(data[t]).raw, b = same.learn(data[t]).raw;
    EXPECT_NEAR(a, b, 1e-9 * std::max(1.0, std::fabs(b))) << t;
  }
}

}  // namespace
}  // namespace lepus

// Shared by the matrix component tests: random sparse vectors over a pool of random 64-bit slots, a dense
// Eigen reference (A, b) over the pool, and the largest relative error of a component's quad, solve and
// products (xᵀA⁻¹x, xᵀA⁻¹b) against it.
#pragma once
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/coords.h"
#include "lepus/errors.h"
#include "sketch/matrix.h"

namespace lepus::matrix_test {

using Vec = std::vector<Coord>;

// D distinct slots; the reference's coordinate i is slots[i].
struct Pool {
  std::vector<uint64_t> slots;
  std::unordered_map<uint64_t, int> position;
  Pool(int d, uint64_t seed, uint64_t mask = ~uint64_t{0}) {
    std::mt19937_64 rng(seed);
    while (static_cast<int>(slots.size()) < d) {
      const uint64_t s = rng() & mask;
      if (position.emplace(s, static_cast<int>(slots.size())).second) slots.push_back(s);
    }
  }
  int size() const { return static_cast<int>(slots.size()); }
};

// nnz distinct coordinates among pool positions [first, first + count), standard normal values.
inline Vec random_vector(std::mt19937_64& rng, const Pool& pool, int first, int count, int nnz) {
  std::vector<int> p(count);
  for (int i = 0; i < count; ++i) p[i] = first + i;
  std::shuffle(p.begin(), p.end(), rng);
  std::normal_distribution<double> normal;
  Vec x;
  for (int i = 0; i < std::min(nnz, count); ++i) x.push_back({pool.slots[p[i]], normal(rng)});
  return x;
}

struct Reference {
  Eigen::MatrixXd a;
  Eigen::VectorXd b;  // the tracked vector (stays 0 for a component that does not keep it)
  Reference(int d, double lambda)
      : a(lambda * Eigen::MatrixXd::Identity(d, d)), b(Eigen::VectorXd::Zero(d)) {}
  void add_b(const Vec& x, double beta, const Pool& pool) { b += beta * dense(x, pool); }
  double cross(const Vec& x, const Pool& pool) const { return solve(x, pool).dot(b); }
  Eigen::VectorXd dense(const Vec& x, const Pool& pool) const {
    Eigen::VectorXd v = Eigen::VectorXd::Zero(a.rows());
    for (const Coord& c : x) v(pool.position.at(c.slot)) += c.x;
    return v;
  }
  void update(const Vec& x, double w, const Pool& pool) {  // A += w x xᵀ
    const Eigen::VectorXd v = dense(x, pool);
    a += w * v * v.transpose();
  }
  void update_diag(const Vec& x, double w, const Pool& pool) {  // A_ii += w x_i²
    const Eigen::VectorXd v = dense(x, pool);
    a.diagonal() += w * v.cwiseAbs2();
  }
  Eigen::VectorXd solve(const Vec& x, const Pool& pool) const { return a.ldlt().solve(dense(x, pool)); }
  double quad(const Vec& x, const Pool& pool) const { return dense(x, pool).dot(solve(x, pool)); }
};

// The largest relative error of quad, solve's returned quad, and the solve vector (in max norm) on x. A slot
// outside the pool with a nonzero value, or a slot listed twice, is an infinite error.
inline double error(const Matrix& m, const Reference& ref, const Pool& pool, const Vec& x) {
  const double inf = std::numeric_limits<double>::infinity();
  const double want_q = ref.quad(x, pool);
  const Eigen::VectorXd want = ref.solve(x, pool);
  std::vector<Coord> out;
  const double q1 = m.quad(x), q2 = m.solve(x, out);
  const Matrix::Products p = m.products(x);
  const double want_c = ref.cross(x, pool);
  Eigen::VectorXd got = Eigen::VectorXd::Zero(pool.size());
  std::set<uint64_t> listed;
  for (const Coord& c : out) {
    if (!listed.insert(c.slot).second) return inf;
    const auto it = pool.position.find(c.slot);
    if (it == pool.position.end()) {
      if (c.x != 0.0) return inf;
      continue;
    }
    got(it->second) = c.x;
  }
  const double scale_q = std::max(std::fabs(want_q), 1e-300);
  const double scale_v = std::max(want.lpNorm<Eigen::Infinity>(), 1e-300);
  // cross against |x|ᵀ|A⁻¹||b|-like scale: xᵀA⁻¹b may cancel to near 0
  const double scale_c = std::max(want.cwiseAbs().dot(ref.b.cwiseAbs()), 1e-300);
  return std::max({std::fabs(q1 - want_q) / scale_q, std::fabs(q2 - want_q) / scale_q,
                   std::fabs(p.quad - want_q) / scale_q, std::fabs(p.cross - want_c) / scale_c,
                   (got - want).lpNorm<Eigen::Infinity>() / scale_v});
}

// Queries over the whole pool: random sparse vectors (touching held and never-updated slots), single slots.
inline std::vector<Vec> queries(const Pool& pool, uint64_t seed, int count = 12) {
  std::mt19937_64 rng(seed);
  std::vector<Vec> q;
  for (int i = 0; i < count; ++i) q.push_back(random_vector(rng, pool, 0, pool.size(), 1 + i % 7));
  q.push_back({{pool.slots[0], 1.0}});
  q.push_back({{pool.slots[pool.size() - 1], -2.5}});
  return q;
}

inline double max_error(const Matrix& m, const Reference& ref, const Pool& pool, const std::vector<Vec>& qs) {
  double e = 0.0;
  for (const Vec& x : qs) e = std::max(e, error(m, ref, pool, x));
  return e;
}

inline std::vector<uint8_t> saved(const Matrix& m) {
  ModelWriter w;
  m.save(w);
  return w.bytes();
}

inline void load_bytes(Matrix& m, const std::vector<uint8_t>& bytes) {
  ModelReader r(bytes.data(), bytes.size(), "test");
  m.load(r);
  if (r.remaining() != 0) throw ModelFormatError("test: trailing bytes");
}

}  // namespace lepus::matrix_test

#include "sketch/full_matrix.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "core/cpu.h"
#include "lepus/errors.h"
#include "sketch/dense_io.h"

namespace lepus {
namespace {
constexpr uint64_t kMaxCap = 65536;  // 32 GiB of inverse at the cap
constexpr size_t kMinCapacity = 16;
constexpr size_t kPad = 8;

// The two loops that are most of a full-matrix learner's time (aioli on a9a: 40% and 3%, the update on the
// upper triangle only; the row walk of times_inverse another 18%), written for AVX2 where the CPU has it.
// Each element is formed by the same multiply and add (or subtract) as Eigen's SSE2 code, two roundings,
// never fused: the results are bit for bit those of the portable path.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void axpy_avx2(double* y, const double* x, double a, Eigen::Index n) {
  const __m256d va = _mm256_set1_pd(a);
  Eigen::Index i = 0;
  for (; i + 4 <= n; i += 4)
    _mm256_storeu_pd(y + i, _mm256_add_pd(_mm256_loadu_pd(y + i), _mm256_mul_pd(va, _mm256_loadu_pd(x + i))));
  for (; i < n; ++i) y[i] += a * x[i];
}

// The upper triangle of the n x n block (rows 0..j of column j) minus u uᵀ.
__attribute__((target("avx2"))) void sub_outer_avx2(double* m, Eigen::Index ld, const double* u,
                                                    Eigen::Index n) {
  for (Eigen::Index j = 0; j < n; ++j) {
    double* col = m + j * ld;
    const __m256d vj = _mm256_set1_pd(u[j]);
    Eigen::Index i = 0;
    for (; i + 4 <= j + 1; i += 4)
      _mm256_storeu_pd(col + i,
                       _mm256_sub_pd(_mm256_loadu_pd(col + i), _mm256_mul_pd(vj, _mm256_loadu_pd(u + i))));
    for (; i <= j; ++i) col[i] -= u[j] * u[i];
  }
}

const bool kAvx2 = has_avx2();
#else
constexpr bool kAvx2 = false;
void axpy_avx2(double*, const double*, double, Eigen::Index) {}
void sub_outer_avx2(double*, Eigen::Index, const double*, Eigen::Index) {}
#endif
}  // namespace

FullMatrix::Scratch& FullMatrix::scratch() {
  thread_local Scratch s;
  return s;
}

uint64_t FullMatrix::fresh_version() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// u = C x over the held slots of x (scratch().seen): n entries. Column p of C is column p of the stored upper triangle
// down to the diagonal, then row p of it; each u_i sums its terms in seen_'s order.
// A product already formed for the same x and C (the prediction's, then the update's) is kept.
void FullMatrix::times_inverse(std::span<const Coord> x, Eigen::Index n, Scratch& s) const {
  if (s.u_version == version_ && s.u.size() == n &&
      std::ranges::equal(x, s.u_x,
                         [](const Coord& a, const Coord& b) { return a.slot == b.slot && a.x == b.x; }))
    return;
  s.u_x.assign(x.begin(), x.end());
  s.u_version = version_;
  s.u.setZero(n);
  const double* c = inv_.data();
  const Eigen::Index ld = inv_.outerStride();
  for (const Seen& a : s.seen) {
    const Eigen::Index p = a.position;
    if (kAvx2)
      axpy_avx2(s.u.data(), c + p * ld, a.x, p + 1);
    else
      s.u.head(p + 1).noalias() += a.x * inv_.col(p).head(p + 1);
    for (Eigen::Index i = p + 1; i < n; ++i) s.u(i) += a.x * c[i * ld + p];
  }
}

FullMatrix::FullMatrix(double lambda, uint64_t cap, int tracked_bits)
    : lambda_(lambda), cap_(cap), prior_(lambda), b_(tracked_bits) {
  matrix_detail::check_lambda(lambda, "full matrix");
  if (cap < 1 || cap > kMaxCap)
    throw ConfigError("full matrix: the cap on distinct features must be between 1 and " +
                      std::to_string(kMaxCap) + ", got " + std::to_string(cap));
}

void FullMatrix::gather(std::span<const Coord> x, double& outside, Scratch& s) const {
  s.seen.clear();
  outside = 0.0;
  for (const Coord& c : x) {
    if (c.x == 0.0) continue;
    const uint32_t p = index_.find(c.slot);
    if (p == CompactIndex::kNone)
      outside += c.x * c.x;
    else
      s.seen.push_back({p, c.x});
  }
}

double FullMatrix::quad(std::span<const Coord> x) const {
  Scratch& s = scratch();
  double outside;
  gather(x, outside, s);
  double q = 0.0;  // x_Sᵀ C_SS x_S over the held slots S of x: O(nnz²)
  for (const Seen& b : s.seen) {
    double column = 0.0;
    for (const Seen& a : s.seen) column += upper(a.position, b.position) * a.x;
    q += column * b.x;
  }
  return (q + outside / prior_) / scale_;
}

double FullMatrix::solve(std::span<const Coord> x, std::vector<Coord>& out) const {
  Scratch& s = scratch();
  double outside;
  gather(x, outside, s);
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  times_inverse(x, n, s);  // u = C x: nnz columns of C
  double q = 0.0;
  for (const Seen& a : s.seen) q += a.x * s.u(a.position);
  out.clear();
  out.reserve(static_cast<size_t>(n) + x.size() - s.seen.size());
  for (Eigen::Index i = 0; i < n; ++i)
    out.push_back({index_.slot(static_cast<uint32_t>(i)), s.u(i) / scale_});
  if (outside > 0.0) {  // slots not held: A is prior · s there
    const double d = prior_ * scale_;
    for (const Coord& c : x)
      if (c.x != 0.0 && index_.find(c.slot) == CompactIndex::kNone) out.push_back({c.slot, c.x / d});
  }
  return (q + outside / prior_) / scale_;
}

Matrix::Products FullMatrix::products(std::span<const Coord> x) const {
  Scratch& s = scratch();
  if (!b_.enabled()) return {quad(x), 0.0};
  double outside;
  gather(x, outside, s);
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  times_inverse(x, n, s);  // u = C x
  Products p;
  for (const Seen& a : s.seen) p.quad += a.x * s.u(a.position);
  for (Eigen::Index i = 0; i < n; ++i) p.cross += s.u(i) * b_[index_.slot(static_cast<uint32_t>(i))];
  if (outside > 0.0) {  // slots not held: A is the prior there
    double cross = 0.0;
    for (const Coord& c : x)
      if (c.x != 0.0 && index_.find(c.slot) == CompactIndex::kNone) cross += c.x * b_[c.slot];
    p.quad += outside / prior_;
    p.cross += cross / prior_;
  }
  p.quad /= scale_;
  p.cross /= scale_;
  return p;
}

void FullMatrix::update(std::span<const Coord> x, double weight, double beta) {
  matrix_detail::check_beta(beta, b_, "full matrix");
  rank_one_update(x, weight);  // throws, changing nothing, past the cap
  b_.add(x, beta);
}

void FullMatrix::reserve(size_t n) {
  const size_t capacity = static_cast<size_t>(inv_.cols());
  if (n <= capacity) return;
  size_t c = std::max(kMinCapacity, capacity);
  while (c < n) c *= 2;
  c = std::min<size_t>(c, cap_);
  const Eigen::Index k = static_cast<Eigen::Index>(size());
  // Beyond the held block it is written when a position is given. A column 64 bytes longer than a power of
  // two keeps times_inverse's walk along a row (one entry per column) from mapping every column to a few
  // cache sets.
  Eigen::MatrixXd grown(c + kPad, c);
  for (Eigen::Index j = 0; j < k; ++j) grown.col(j).head(j + 1) = inv_.col(j).head(j + 1);
  inv_.swap(grown);
}

void FullMatrix::rank_one_update(std::span<const Coord> x, double weight) {
  matrix_detail::check_update(x, weight, "full matrix");
  if (weight == 0.0) return;
  size_t fresh = 0;
  for (const Coord& c : x) fresh += c.x != 0.0 && index_.find(c.slot) == CompactIndex::kNone;
  if (size() + fresh > cap_)
    throw ConfigError(
        "full matrix: this example would bring the distinct features to " + std::to_string(size() + fresh) +
        ", past the cap of " + std::to_string(cap_) +
        " (memory 8 cap^2 bytes); raise the cap, use fewer bits (-b) or use --matrix diag or sketch");
  if (fresh > 0) {
    version_ = fresh_version();
    reserve(size() + fresh);
    for (const Coord& c : x) {
      if (c.x == 0.0 || index_.find(c.slot) != CompactIndex::kNone) continue;
      const uint32_t p =
          index_.insert(c.slot);          // enters with the fixed-d prior: Â_pp = prior, nothing coupled
      inv_.col(p).head(p + 1).setZero();  // the upper triangle's new column
      inv_(p, p) = 1.0 / prior_;
    }
  }
  Scratch& s = scratch();
  double outside;
  gather(x, outside, s);
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  times_inverse(x, n, s);
  double q = 0.0;
  for (const Seen& a : s.seen) q += a.x * s.u(a.position);
  const double gamma = weight / scale_;  // Â += γ x xᵀ
  version_ = fresh_version();            // s.u is scaled below
  s.u *= std::sqrt(gamma / (1.0 + gamma * q));
  if (kAvx2) {  // the upper triangle only: v_i v_j == v_j v_i, so it is all of C
    sub_outer_avx2(inv_.data(), inv_.outerStride(), s.u.data(), n);
  } else {
    for (Eigen::Index j = 0; j < n; ++j) inv_.col(j).head(j + 1) -= s.u(j) * s.u.head(j + 1);
  }
}

Eigen::Map<Eigen::MatrixXd> FullMatrix::take_inverse() {
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  for (Eigen::Index j = 0; j < n; ++j)  // the lower triangle, which is what an eigensolver reads
    for (Eigen::Index i = 0; i <= j; ++i) inv_(j, i) = inv_(i, j) / scale_;
  // Column j moves from j * ld to j * n (<= it): in increasing j nothing is overwritten before it is moved.
  double* data = inv_.data();
  const Eigen::Index ld = inv_.outerStride();
  for (Eigen::Index j = 1; j < n; ++j)
    std::memmove(data + j * n, data + j * ld, static_cast<size_t>(n) * sizeof(double));
  version_ = fresh_version();
  return Eigen::Map<Eigen::MatrixXd>(data, n, n);
}

void FullMatrix::scale(double r) {
  matrix_detail::check_scale(r, "full matrix");
  scale_ *= r;
  if (scale_ < matrix_detail::kMinScale) renormalize();
}

void FullMatrix::renormalize() {  // Â <- s Â (so C <- C / s), s <- 1
  version_ = fresh_version();
  const Eigen::Index n = static_cast<Eigen::Index>(size());
  for (Eigen::Index j = 0; j < n; ++j) inv_.col(j).head(j + 1) /= scale_;
  prior_ *= scale_;
  scale_ = 1.0;
}

void FullMatrix::reset() {
  version_ = fresh_version();
  index_.clear();
  b_.clear();
  scale_ = 1.0;
  prior_ = lambda_;
}

void FullMatrix::save(ModelWriter& out) const {
  matrix_detail::put_header(out, kind());
  out.put_f64(lambda_);
  out.put_f64(scale_);
  out.put_f64(prior_);
  const uint64_t n = size();
  out.put_u64(n);
  dense_io::put_index(out, index_);
  dense_io::put_upper(out, inv_, n);
  b_.save(out);
}

void FullMatrix::load(ModelReader& in) {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": full matrix state: " + what);
  };
  matrix_detail::get_header(in, kind());
  const double lambda = in.get_f64("full matrix lambda");
  const double scale = in.get_f64("full matrix scale");
  const double prior = in.get_f64("full matrix prior");
  if (lambda != lambda_)
    throw bad("saved with lambda " + std::to_string(lambda) + ", this run has " + std::to_string(lambda_));
  if (!(scale > 0.0 && scale <= 1.0) || !(prior > 0.0 && prior <= lambda))
    throw bad("scale or prior out of range");
  const uint64_t n = in.get_u64("full matrix size");
  if (n > cap_)
    throw bad("holds " + std::to_string(n) + " slots, past this run's cap of " + std::to_string(cap_));
  if (n * 8 + n * (n + 1) / 2 * 8 > in.remaining())
    throw bad("slot count does not fit the file");  // n <= 2^16
  CompactIndex index = dense_io::get_index(in, n, "full matrix");
  Eigen::MatrixXd inv(std::max<Eigen::Index>(static_cast<Eigen::Index>(n), 1), std::max<Eigen::Index>(n, 1));
  dense_io::get_upper(in, inv, n, "full matrix inverse");
  for (uint64_t j = 0; j < n; ++j) {
    const auto c = static_cast<Eigen::Index>(j);
    for (Eigen::Index i = 0; i <= c; ++i)
      if (!std::isfinite(inv(i, c))) throw bad("a non-finite entry");
    if (!(inv(c, c) > 0.0)) throw bad("a diagonal entry of the inverse <= 0");
  }
  const TrackedVector::Entries b = b_.read(in);
  version_ = fresh_version();
  scale_ = scale;
  prior_ = prior;
  index_ = std::move(index);
  inv_.swap(inv);
  b_.assign(b);
}

void FullMatrix::visit(MatrixVisitor& v) const {
  v.scalar("lambda", lambda_);
  v.scalar("prior", prior_ * scale_);
  v.scalar("slots", static_cast<double>(size()));
  const uint32_t n = static_cast<uint32_t>(size());
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t i = 0; i <= j; ++i) v.entry("inverse", index_.slot(i), index_.slot(j), inv_(i, j) / scale_);
  b_.visit(v);
}

}  // namespace lepus

#include "sketch/auto_matrix.h"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "lepus/errors.h"
#include "sketch/sym_eigen.h"

namespace lepus {

AutoMatrix::AutoMatrix(const MatrixOptions& options) : opt_(options) {
  if (opt_.beyond != MatrixKind::kSketch && opt_.beyond != MatrixKind::kDiag)
    throw ConfigError("--matrix auto goes on with a sketch or the diagonal, not " +
                      std::string(matrix_kind_name(opt_.beyond)));
  if (opt_.max_dense < 1 || opt_.max_dense > opt_.full_cap)
    throw ConfigError("--max_dense_features must be between 1 and " + std::to_string(opt_.full_cap) +
                      ", got " + std::to_string(opt_.max_dense));
  full_ = make_full();
  SketchMatrix check(opt_.lambda, opt_.sketch_rank, opt_.sketch_cap, opt_.sketch_shrink_back, 0,
                     opt_.sketch_diagonal);  // the rank, cap and correction are checked now
}

std::unique_ptr<FullMatrix> AutoMatrix::make_full() const {
  return std::make_unique<FullMatrix>(opt_.lambda, opt_.max_dense, opt_.tracked ? opt_.bits : 0);
}

std::unique_ptr<SketchMatrix> AutoMatrix::make_sketch() const {
  return std::make_unique<SketchMatrix>(opt_.lambda, opt_.sketch_rank, opt_.sketch_cap,
                                        opt_.sketch_shrink_back, opt_.tracked ? opt_.bits : 0,
                                        opt_.sketch_diagonal);
}

const Matrix& AutoMatrix::current() const {
  if (full_) return *full_;
  if (sketch_) return *sketch_;
  return *diag_;
}

void AutoMatrix::switch_if_full(std::span<const Coord> x, double weight) {
  if (!full_ || !(weight > 0.0)) return;
  uint64_t fresh = 0;
  for (const Coord& c : x) fresh += full_->index().find(c.slot) == CompactIndex::kNone && c.x != 0.0;
  if (full_->size() + fresh <= opt_.max_dense) return;
  if (opt_.beyond == MatrixKind::kDiag)
    switch_to_diag();
  else
    switch_to_sketch();
}

void AutoMatrix::rank_one_update(std::span<const Coord> x, double weight) {
  switch_if_full(x, weight);
  current().rank_one_update(x, weight);
}

void AutoMatrix::update(std::span<const Coord> x, double weight, double beta) {
  switch_if_full(x, weight);
  current().update(x, weight, beta);
}

AutoMatrix::Held AutoMatrix::take_held(Matrix& next) {
  const uint32_t n = static_cast<uint32_t>(full_->size());
  const double prior = full_->prior();
  if (prior < opt_.lambda) next.scale(prior / opt_.lambda);  // the forgetting so far
  std::vector<uint64_t> slots(n);
  for (uint32_t i = 0; i < n; ++i) slots[i] = full_->index().slot(i);
  TrackedVector b = full_->take_tracked();
  return Held{std::move(slots), prior, std::move(b), full_->take_inverse()};
}

void AutoMatrix::switch_to_sketch() {
  auto s = make_sketch();
  Held h = take_held(*s);
  const uint32_t n = static_cast<uint32_t>(h.slots.size());
  const double prior = h.prior;
  // A⁻¹'s eigenvectors, where the full matrix kept A⁻¹ (it is dropped after): one n x n matrix at the peak.
  Eigen::Map<Eigen::MatrixXd>& vectors = h.inverse;
  Eigen::VectorXd values;
  SymEigen::in_place(vectors, values);
  // A's eigenvalues are 1/e; the largest μ come from the smallest e (Eigen sorts e increasing).
  std::vector<Coord> row(n);
  for (uint32_t k = 0; k < n; ++k) {
    const double e = values(k);
    const double mu = e > 0.0 ? 1.0 / e - prior : 0.0;
    if (!(mu > 0.0) || !std::isfinite(mu)) continue;  // rounding around the prior: no mass
    for (uint32_t i = 0; i < n; ++i) row[i] = Coord{h.slots[i], vectors(i, k)};
    s->rank_one_update(row, mu);
  }
  full_.reset();
  if (opt_.tracked) s->adopt_tracked(std::move(h.b));
  sketch_ = std::move(s);
}

void AutoMatrix::switch_to_diag() {
  auto d = std::make_unique<DiagMatrix>(opt_.lambda, opt_.bits, opt_.tracked);
  Held h = take_held(*d);
  const Eigen::Index n = h.inverse.rows();
  // A = (A⁻¹)⁻¹ over the held block; its diagonal is all the diagonal matrix keeps.
  const Eigen::LDLT<Eigen::MatrixXd, Eigen::Lower> ldlt(h.inverse);
  const Eigen::MatrixXd a = ldlt.solve(Eigen::MatrixXd::Identity(n, n));
  for (Eigen::Index i = 0; i < n; ++i) {
    const double aii = a(i, i);
    // Rounding can leave an entry at or below the prior it started from: keep the prior's floor.
    d->set_diagonal(h.slots[static_cast<size_t>(i)], std::isfinite(aii) ? std::max(aii, h.prior) : h.prior);
  }
  full_.reset();
  if (opt_.tracked) d->adopt_tracked(std::move(h.b));
  diag_ = std::move(d);
}

void AutoMatrix::reset() {
  sketch_.reset();
  diag_.reset();
  full_ = make_full();
}

void AutoMatrix::save(ModelWriter& out) const {
  matrix_detail::put_header(out, MatrixKind::kAuto);
  out.put_u64(opt_.max_dense);
  out.put_u8(state_code());
  current().save(out);
}

void AutoMatrix::load(ModelReader& in) {
  matrix_detail::get_header(in, MatrixKind::kAuto);
  const uint64_t max_dense = in.get_u64("auto matrix max_dense");
  if (max_dense != opt_.max_dense)
    throw ModelFormatError(in.source() + ": matrix state: saved with --max_dense_features " +
                           std::to_string(max_dense) + ", this run has " + std::to_string(opt_.max_dense));
  const uint8_t code = in.get_u8("auto matrix mode");
  if (code > 3) throw ModelFormatError(in.source() + ": matrix state: unknown auto mode");
  const MatrixKind beyond = code < 2 ? MatrixKind::kSketch : MatrixKind::kDiag;
  if (beyond != opt_.beyond)
    throw ModelFormatError(in.source() + ": matrix state: saved with --beyond_dense " +
                           std::string(matrix_kind_name(beyond)) + ", this run has " +
                           std::string(matrix_kind_name(opt_.beyond)));
  std::unique_ptr<FullMatrix> f;
  std::unique_ptr<SketchMatrix> s;
  std::unique_ptr<DiagMatrix> d;
  if (code == 0 || code == 2) {
    f = make_full();
    f->load(in);
  } else if (code == 1) {
    s = make_sketch();
    s->load(in);
  } else {
    d = std::make_unique<DiagMatrix>(opt_.lambda, opt_.bits, opt_.tracked);
    d->load(in);
  }
  full_ = std::move(f);
  sketch_ = std::move(s);
  diag_ = std::move(d);
}

// The saved mode: 0 full (a sketch next), 1 sketch, 2 full (the diagonal next), 3 diagonal. Files before
// beyond = diag hold 0 or 1 and load as they did.
uint8_t AutoMatrix::state_code() const {
  const uint8_t base = opt_.beyond == MatrixKind::kDiag ? 2 : 0;
  return static_cast<uint8_t>(base + (full_ ? 0 : 1));
}

void AutoMatrix::visit(MatrixVisitor& v) const {
  v.scalar("sketched", sketch_ ? 1.0 : 0.0);
  if (diag_) v.scalar("diagonal", 1.0);
  current().visit(v);
}

}  // namespace lepus

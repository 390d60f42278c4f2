#include "sketch/sketch_matrix.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "lepus/errors.h"

namespace lepus {

SketchMatrix::SketchMatrix(double lambda, uint32_t rank, uint64_t cap, double shrink_back, int tracked_bits,
                           double diagonal)
    : lambda_(lambda),
      shrink_back_(shrink_back),
      prior_(lambda),
      sketch_(rank, cap),
      b_(tracked_bits),
      diagonal_(diagonal),
      floor_(lambda) {
  matrix_detail::check_lambda(lambda, "sketch matrix");
  if (!(shrink_back >= 0.0 && shrink_back <= 1.0))
    throw ConfigError("sketch matrix: the fraction of the shrinkage added back must be in [0, 1]");
  if (!(diagonal >= 0.0 && diagonal <= 1e6))
    throw ConfigError("sketch matrix: the diagonal correction must be in [0, 1e6]");
  l_.setZero(2 * Eigen::Index{rank}, 2 * Eigen::Index{rank});
  q_.setZero(2 * Eigen::Index{rank});
  kd_.setZero(2 * Eigen::Index{rank}, 2 * Eigen::Index{rank});
}

double SketchMatrix::core(std::span<const Coord> x) const {
  double norm2 = 0.0;
  for (const Coord& c : x) norm2 += c.x * c.x;
  sketch_.multiply(x, p_);
  const Eigen::MatrixXd& g = sketch_.gram();
  const Eigen::Index m1 = sketch_.orthogonal_rows(), j = sketch_.rows() - m1;
  const double d = delta();
  z_.resize(m1);
  double q = norm2;  // level 1, direction by direction
  for (Eigen::Index k = 0; k < m1; ++k) {
    z_(k) = p_(k) / (d + g(k, k));
    q -= p_(k) * z_(k);
  }
  y_.noalias() =
      p_.segment(m1, j) - g.block(0, m1, m1, j).transpose() * z_;  // level 2: w = B₂A₁⁻¹x, then L⁻¹w
  y_ /= d;
  l_.topLeftCorner(j, j).triangularView<Eigen::Lower>().solveInPlace(y_);
  return q / d - y_.squaredNorm();
}

double SketchMatrix::quad(std::span<const Coord> x) const {
  if (diagonal_ > 0.0) return std::max(diag_core(x), 0.0) / scale_;
  return std::max(core(x), 0.0) / scale_;  // >= 0 exactly; rounding may cross it for x deep in B's span
}

double SketchMatrix::solve(std::span<const Coord> x, std::vector<Coord>& out) const {
  if (diagonal_ > 0.0) return diag_solve(x, out);
  const double q = std::max(core(x), 0.0) / scale_;
  const Eigen::MatrixXd& g = sketch_.gram();
  const Eigen::Index m1 = sketch_.orthogonal_rows(), j = sketch_.rows() - m1;
  const double d = delta();
  l_.topLeftCorner(j, j).triangularView<Eigen::Lower>().transpose().solveInPlace(y_);  // t = N⁻¹w
  c_.resize(m1 + j);
  c_.head(m1).noalias() = g.block(0, m1, m1, j) * y_;
  for (Eigen::Index k = 0; k < m1; ++k) c_(k) = z_(k) - c_(k) / (d + g(k, k));
  c_.tail(j) = y_;
  const double ds = d * scale_;
  const uint32_t n = static_cast<uint32_t>(sketch_.columns());
  sketch_.multiply_transpose(c_, column_);  // −Bᵀc / δ
  out.clear();
  out.reserve(n + x.size());
  for (uint32_t pos = 0; pos < n; ++pos) out.push_back({sketch_.index().slot(pos), -column_[pos] / ds});
  add_into(x, ds, out);  // + x / δ
  return q;
}

void SketchMatrix::add_into(std::span<const Coord> v, double divisor, std::vector<Coord>& out) const {
  for (const Coord& e : v) {
    if (e.x == 0.0) continue;
    const uint32_t pos = sketch_.index().find(e.slot);
    if (pos == CompactIndex::kNone)
      out.push_back({e.slot, e.x / divisor});
    else
      out[pos].x += e.x / divisor;
  }
}

Matrix::Products SketchMatrix::products(std::span<const Coord> x) const {
  if (diagonal_ > 0.0) return diag_products(x);
  Products out;
  out.quad = std::max(core(x), 0.0) / scale_;  // leaves z_ = diag(1/(δ+g)) p₁ and y_ = L⁻¹w
  if (!b_.enabled()) return out;
  const Eigen::MatrixXd& g = sketch_.gram();
  const Eigen::Index m1 = sketch_.orthogonal_rows(), j = sketch_.rows() - m1;
  const double d = delta();
  zb_.resize(m1);
  for (Eigen::Index k = 0; k < m1; ++k) zb_(k) = q_(k) / (d + g(k, k));
  yb_.noalias() = q_.segment(m1, j) - g.block(0, m1, m1, j).transpose() * zb_;  // w_b, then L⁻¹w_b
  yb_ /= d;
  l_.topLeftCorner(j, j).triangularView<Eigen::Lower>().solveInPlace(yb_);
  out.cross = ((b_.dot(x) - z_.dot(q_.head(m1))) / d - y_.dot(yb_)) / scale_;
  return out;
}

void SketchMatrix::update(std::span<const Coord> x, double weight, double beta) {
  matrix_detail::check_update(x, weight, "sketch matrix");
  matrix_detail::check_beta(beta, b_, "sketch matrix");
  if (beta != 0.0) {  // q += β B̂x (u += β B̂D̂⁻¹x) before the row of x joins (which then reads the new b)
    if (diagonal_ > 0.0) {
      scaled(x, xs_);
      sketch_.multiply(xs_, p_);
    } else {
      sketch_.multiply(x, p_);
    }
    q_.head(sketch_.rows()) += beta * p_;
    b_.add(x, beta);
  }
  rank_one_update(x, weight);
}

void SketchMatrix::adopt_tracked(TrackedVector b) {
  if (b.bits() != b_.bits()) throw std::logic_error("sketch matrix: tracked vector of another size");
  b_ = std::move(b);
  q_.setZero();
  Eigen::VectorXd q;
  if (diagonal_ > 0.0)
    sketch_.multiply_all([&](uint64_t slot) { return b_[slot] / d_at(sketch_.index().find(slot)); }, q);
  else
    sketch_.multiply_all([&](uint64_t slot) { return b_[slot]; }, q);
  q_.head(sketch_.rows()) = q;
}

void SketchMatrix::border(uint32_t row) {
  const Eigen::MatrixXd& g = sketch_.gram();
  const Eigen::Index m1 = sketch_.orthogonal_rows(), jj = row - m1;
  const double d = delta();
  z_.resize(m1);  // diag(1/(δ+g)) B₁b
  for (Eigen::Index k = 0; k < m1; ++k) z_(k) = g(k, row) / (d + g(k, k));
  // N's new column: B₂A₁⁻¹b over the earlier B₂ rows, and 1 + bᵀA₁⁻¹b.
  y_.noalias() = g.col(row).segment(m1, jj) - g.block(0, m1, m1, jj).transpose() * z_;
  y_ /= d;
  const double diagonal = 1.0 + (g(row, row) - g.col(row).head(m1).dot(z_)) / d;
  l_.topLeftCorner(jj, jj).triangularView<Eigen::Lower>().solveInPlace(y_);
  l_.row(jj).head(jj) = y_.transpose();
  l_(jj, jj) = std::sqrt(std::max(diagonal - y_.squaredNorm(), 1.0));  // Schur complement 1 + bᵀA_old⁻¹b >= 1
}

void SketchMatrix::rank_one_update(std::span<const Coord> x, double weight) {
  matrix_detail::check_update(x, weight, "sketch matrix");
  if (weight == 0.0) return;
  if (diagonal_ > 0.0) return diag_update(x, weight);
  const uint32_t rows = sketch_.rows();
  const double root = std::sqrt(weight / scale_);
  const bool shrank = sketch_.append(x, root, b_.enabled() ? &q_ : nullptr);  // the row √(w/s) x; ConfigError
                                                                              // past the cap
  if (b_.enabled() && (shrank || sketch_.rows() == rows + 1)) q_(sketch_.rows() - 1) = root * b_.dot(x);
  if (shrank) {  // δ and B₁ changed: N afresh, for the rows after the orthogonal ones
    for (uint32_t r = sketch_.orthogonal_rows(); r < sketch_.rows(); ++r) border(r);
  } else if (sketch_.rows() == rows + 1) {
    border(rows);
  }
}

void SketchMatrix::scale(double r) {
  matrix_detail::check_scale(r, "sketch matrix");
  scale_ *= r;
  if (scale_ < matrix_detail::kMinScale) renormalize();
}

void SketchMatrix::renormalize() {  // Â <- s Â (B <- √s B; G, Δ and the prior <- s ·; N unchanged), s <- 1
  sketch_.scale(scale_);
  if (diagonal_ > 0.0) {  // D̂ and the masses <- s ·; K and L unchanged; u = B̂D̂⁻¹b <- u / √s
    q_ /= std::sqrt(scale_);
    floor_ *= scale_;
    for (double& v : mass_) v *= scale_;
    for (double& v : ridge_) v *= scale_;
  } else {
    q_ *= std::sqrt(scale_);
  }
  prior_ *= scale_;
  scale_ = 1.0;
}

void SketchMatrix::reset() {
  sketch_.clear();
  l_.setZero();
  b_.clear();
  q_.setZero();
  scale_ = 1.0;
  prior_ = lambda_;
  floor_ = lambda_;
  mass_.clear();
  ridge_.clear();
  kd_.setZero();
}

void SketchMatrix::save(ModelWriter& out) const {
  matrix_detail::put_header(out, kind());
  out.put_f64(lambda_);
  out.put_f64(shrink_back_);
  out.put_f64(scale_);
  out.put_f64(prior_);
  sketch_.save(out);
  const uint32_t j = factor_size(sketch_);
  for (uint32_t k = 0; k < j; ++k) out.put_values(l_.col(k).data() + k, j - k);  // lower triangle
  b_.save(out);
  if (b_.enabled()) out.put_values(q_.data(), sketch_.rows());
  if (diagonal_ == 0.0) return;  // the diagonal correction's state follows (its c is the learner's option)
  out.put_f64(diagonal_);
  out.put_f64(floor_);
  out.put_u64(mass_.size());
  out.put_values(mass_.data(), mass_.size());
  out.put_u64(ridge_.size());
  out.put_values(ridge_.data(), ridge_.size());
  for (uint32_t k = 0; k < sketch_.rows(); ++k) out.put_values(kd_.col(k).data() + k, sketch_.rows() - k);
}

uint32_t SketchMatrix::factor_size(const FrequentDirections& sketch) const {
  return diagonal_ > 0.0 ? sketch.rows() : sketch.rows() - sketch.orthogonal_rows();
}

void SketchMatrix::load(ModelReader& in) {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": sketch matrix state: " + what);
  };
  matrix_detail::get_header(in, kind());
  const double lambda = in.get_f64("sketch matrix lambda");
  const double shrink_back = in.get_f64("sketch matrix shrink-back fraction");
  const double scale = in.get_f64("sketch matrix scale");
  const double prior = in.get_f64("sketch matrix prior");
  if (lambda != lambda_)
    throw bad("saved with lambda " + std::to_string(lambda) + ", this run has " + std::to_string(lambda_));
  if (shrink_back != shrink_back_)
    throw bad("saved adding back " + std::to_string(shrink_back) + " of the shrinkage, this run " +
              std::to_string(shrink_back_));
  if (!(scale > 0.0 && scale <= 1.0) || !(prior > 0.0 && prior <= lambda))
    throw bad("scale or prior out of range");
  FrequentDirections sketch(sketch_.rank(), sketch_.cap());
  sketch.load(in);
  const uint32_t j = factor_size(sketch);
  Eigen::MatrixXd l = Eigen::MatrixXd::Zero(l_.rows(), l_.cols());
  for (uint32_t k = 0; k < j; ++k) {
    in.get_raw(l.col(k).data() + k, (j - k) * sizeof(double), "sketch matrix factor");
    if (!(l(k, k) > 0.0)) throw bad("a factor diagonal entry <= 0");
    for (uint32_t i = k; i < j; ++i)
      if (!std::isfinite(l(i, k))) throw bad("a non-finite factor entry");
  }
  const TrackedVector::Entries b = b_.read(in);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(q_.size());
  if (b_.enabled()) {
    in.get_raw(q.data(), sketch.rows() * sizeof(double), "sketch matrix tracked product");
    for (uint32_t k = 0; k < sketch.rows(); ++k)
      if (!std::isfinite(q(k))) throw bad("a non-finite tracked product");
  }
  Diagonal d;
  if (diagonal_ > 0.0) d = load_diagonal(in, sketch);
  scale_ = scale;
  prior_ = prior;
  sketch_ = std::move(sketch);
  l_.swap(l);
  b_.assign(b);
  q_.swap(q);
  floor_ = diagonal_ > 0.0 ? d.floor : prior_;
  mass_.swap(d.mass);
  ridge_.swap(d.ridge);
  kd_.swap(d.kd);
  if (diagonal_ == 0.0) kd_.setZero(l_.rows(), l_.cols());
}

SketchMatrix::Diagonal SketchMatrix::load_diagonal(ModelReader& in, const FrequentDirections& sketch) const {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": sketch matrix state: " + what);
  };
  Diagonal d;
  const double c = in.get_f64("sketch matrix diagonal correction");
  if (c != diagonal_)
    throw bad("saved with the diagonal correction " + std::to_string(c) + ", this run has " +
              std::to_string(diagonal_));
  d.floor = in.get_f64("sketch matrix floor");
  if (!(d.floor > 0.0) || !std::isfinite(d.floor)) throw bad("floor out of range");
  auto values = [&](std::vector<double>& v, uint64_t most, const char* what) {
    const uint64_t n = in.get_u64(what);
    if (n > most || n > in.remaining() / sizeof(double)) throw bad(std::string(what) + " out of range");
    v.resize(n);
    in.get_raw(v.data(), n * sizeof(double), what);
    for (double x : v)
      if (!(x >= 0.0) || !std::isfinite(x)) throw bad(std::string("a bad value in the ") + what);
  };
  values(d.mass, sketch.columns(), "sketch matrix column masses");
  if (d.mass.size() != sketch.columns()) throw bad("column masses for another number of columns");
  values(d.ridge, sketch.columns(), "sketch matrix column ridges");
  const Eigen::Index r = sketch.rows();
  d.kd = Eigen::MatrixXd::Zero(l_.rows(), l_.cols());
  for (Eigen::Index k = 0; k < r; ++k) {
    in.get_raw(d.kd.col(k).data() + k, (r - k) * sizeof(double), "sketch matrix core");
    for (Eigen::Index i = k; i < r; ++i) {
      if (!std::isfinite(d.kd(i, k))) throw bad("a non-finite core entry");
      d.kd(k, i) = d.kd(i, k);
    }
  }
  return d;
}

void SketchMatrix::visit(MatrixVisitor& v) const {
  v.scalar("lambda", lambda_);
  v.scalar("prior", prior_ * scale_);
  v.scalar("shrinkage", shrinkage());
  if (diagonal_ > 0.0) {
    v.scalar("diagonal correction", diagonal_);
    v.scalar("floor", floor_ * scale_);
  }
  v.scalar("rows", sketch_.rows());
  v.scalar("slots", static_cast<double>(sketch_.columns()));
  const double root = std::sqrt(scale_);
  Eigen::VectorXd column;
  for (uint32_t pos = 0; pos < sketch_.columns(); ++pos) {
    sketch_.column(pos, column);
    for (uint32_t row = 0; row < sketch_.rows(); ++row)
      if (column(row) != 0.0) v.entry("sketch", row, sketch_.index().slot(pos), column(row) * root);
  }
  for (uint32_t pos = 0; pos < ridge_.size(); ++pos)  // the diagonal correction's D − floor, where nonzero
    if (ridge_[pos] != 0.0)
      v.entry("ridge", sketch_.index().slot(pos), sketch_.index().slot(pos), ridge_[pos] * scale_);
  b_.visit(v);
}

}  // namespace lepus

#include "sketch/diag_matrix.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "lepus/errors.h"

namespace lepus {

DiagMatrix::DiagMatrix(double lambda, int bits, bool tracked) : lambda_(lambda), bits_(bits), prior_(lambda) {
  matrix_detail::check_lambda(lambda, "diag matrix");
  if (bits < 1 || bits > 32)
    throw ConfigError("diag matrix: bits must be between 1 and 32, got " + std::to_string(bits));
  mask_ = (uint64_t{1} << bits) - 1;
  diag_ = ZeroedTable<double>(size_t{1} << bits);
  if (tracked) b_ = TrackedVector(bits);
}

void DiagMatrix::update(std::span<const Coord> x, double weight, double beta) {
  matrix_detail::check_beta(beta, b_, "diag matrix");
  rank_one_update(x, weight);
  b_.add(x, beta);
}

double DiagMatrix::solve(std::span<const Coord> x, std::vector<Coord>& out) const {
  out.clear();
  out.reserve(x.size());
  double q = 0.0;
  for (const Coord& c : x) {
    const double y = c.x / stored(c.slot);
    q += c.x * y;
    out.push_back({c.slot, y / scale_});
  }
  return q / scale_;
}

void DiagMatrix::rank_one_update(std::span<const Coord> x, double weight) {
  matrix_detail::check_update(x, weight, "diag matrix");
  if (weight == 0.0) return;
  const double gamma = weight / scale_;  // Â_ii += γ x_i²
  for (const Coord& c : x) {
    if (c.x == 0.0) continue;
    double& a = diag_[c.slot & mask_];
    a = (a == 0.0 ? prior_ : a) + gamma * c.x * c.x;
  }
}

void DiagMatrix::adopt_tracked(TrackedVector b) {
  if (b.bits() != b_.bits()) throw std::logic_error("diag matrix: tracked vector of another size");
  b_ = std::move(b);
}

void DiagMatrix::scale(double r) {
  matrix_detail::check_scale(r, "diag matrix");
  scale_ *= r;
  if (scale_ < matrix_detail::kMinScale) renormalize();
}

void DiagMatrix::renormalize() {  // Â <- s Â, s <- 1 (0 stays 0: "the prior", which is multiplied too)
  for (double& a : diag_) a *= scale_;
  prior_ *= scale_;
  scale_ = 1.0;
}

void DiagMatrix::reset() {
  diag_.clear();
  b_.clear();
  scale_ = 1.0;
  prior_ = lambda_;
}

void DiagMatrix::save(ModelWriter& out) const {
  matrix_detail::put_header(out, kind());
  out.put_f64(lambda_);
  out.put_u32(static_cast<uint32_t>(bits_));
  out.put_f64(scale_);
  out.put_f64(prior_);
  uint64_t touched = 0;
  diag_.for_each_touched([&](size_t i) { touched += diag_[i] != 0.0; });
  out.put_u64(touched);
  diag_.for_each_touched([&](size_t i) {
    if (diag_[i] == 0.0) return;
    out.put_u64(i);
    out.put_f64(diag_[i]);
  });
  b_.save(out);
}

void DiagMatrix::load(ModelReader& in) {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": diag matrix state: " + what);
  };
  matrix_detail::get_header(in, kind());
  const double lambda = in.get_f64("diag matrix lambda");
  const uint32_t bits = in.get_u32("diag matrix bits");
  const double scale = in.get_f64("diag matrix scale");
  const double prior = in.get_f64("diag matrix prior");
  if (lambda != lambda_)
    throw bad("saved with lambda " + std::to_string(lambda) + ", this run has " + std::to_string(lambda_));
  if (bits != static_cast<uint32_t>(bits_))
    throw bad("saved with " + std::to_string(bits) + " bits, this run has " + std::to_string(bits_));
  if (!(scale > 0.0 && scale <= 1.0) || !(prior > 0.0 && prior <= lambda))
    throw bad("scale or prior out of range");
  const uint64_t touched = in.get_u64("diag matrix slot count");
  if (touched > diag_.size() || touched > in.remaining() / 16) throw bad("slot count does not fit the file");
  ZeroedTable<double> diag(diag_.size());
  uint64_t previous = 0;
  for (uint64_t k = 0; k < touched; ++k) {
    const uint64_t i = in.get_u64("diag matrix slot");
    const double a = in.get_f64("diag matrix entry");
    if (i >= diag.size() || (k > 0 && i <= previous)) throw bad("slot out of range or out of order");
    if (!(a > 0.0) || !std::isfinite(a)) throw bad("an entry not finite and > 0");
    diag[i] = a;
    previous = i;
  }
  const TrackedVector::Entries b = b_.read(in);
  scale_ = scale;
  prior_ = prior;
  diag_.swap(diag);
  b_.assign(b);
}

void DiagMatrix::visit(MatrixVisitor& v) const {
  v.scalar("lambda", lambda_);
  v.scalar("prior", prior_ * scale_);
  diag_.for_each_touched([&](size_t i) {
    if (diag_[i] != 0.0) v.entry("diagonal", i, i, diag_[i] * scale_);
  });
  b_.visit(v);
}

}  // namespace lepus

#include "sketch/matrix.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lepus/errors.h"
#include "sketch/auto_matrix.h"
#include "sketch/diag_matrix.h"
#include "sketch/full_matrix.h"
#include "sketch/sketch_matrix.h"

namespace lepus {
namespace {
constexpr uint32_t kStateVersion = 2;  // 2: the tracked vector
}  // namespace

std::string_view matrix_kind_name(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::kFull: return "full";
    case MatrixKind::kDiag: return "diag";
    case MatrixKind::kSketch: return "sketch";
    case MatrixKind::kAuto: return "auto";
  }
  return "unknown";
}

MatrixKind matrix_kind_from(std::string_view name) {
  if (name == "full") return MatrixKind::kFull;
  if (name == "diag") return MatrixKind::kDiag;
  if (name == "sketch") return MatrixKind::kSketch;
  if (name == "auto") return MatrixKind::kAuto;
  throw ConfigError("--matrix must be auto, full, diag or sketch, got '" + std::string(name) + "'");
}

std::unique_ptr<Matrix> make_matrix(const MatrixOptions& o) {
  switch (o.kind) {
    case MatrixKind::kFull: return std::make_unique<FullMatrix>(o.lambda, o.full_cap, o.tracked ? o.bits : 0);
    case MatrixKind::kDiag: return std::make_unique<DiagMatrix>(o.lambda, o.bits, o.tracked);
    case MatrixKind::kSketch:
      return std::make_unique<SketchMatrix>(o.lambda, o.sketch_rank, o.sketch_cap, o.sketch_shrink_back,
                                            o.tracked ? o.bits : 0, o.sketch_diagonal);
    case MatrixKind::kAuto: return std::make_unique<AutoMatrix>(o);
  }
  throw ConfigError("unknown matrix kind");
}

TrackedVector::TrackedVector(int bits) : bits_(bits) {
  if (bits < 0 || bits > 32)
    throw ConfigError("tracked vector: bits must be between 0 and 32, got " + std::to_string(bits));
  if (bits > 0) {
    mask_ = (uint64_t{1} << bits) - 1;
    v_ = ZeroedTable<double>(size_t{1} << bits);
  }
}

double TrackedVector::dot(std::span<const Coord> x) const {
  if (!enabled()) return 0.0;
  double s = 0.0;
  for (const Coord& c : x) s += c.x * v_[c.slot & mask_];
  return s;
}

void TrackedVector::add(std::span<const Coord> x, double beta) {
  if (beta == 0.0) return;
  if (!enabled()) throw std::logic_error("tracked vector: b is not kept by this matrix");
  for (const Coord& c : x) v_[c.slot & mask_] += beta * c.x;
}

void TrackedVector::set(uint64_t slot, double value) {
  if (!enabled()) throw std::logic_error("tracked vector: b is not kept by this matrix");
  v_[slot & mask_] = value;
}

void TrackedVector::clear() { v_.clear(); }

void TrackedVector::save(ModelWriter& out) const {
  out.put_u32(static_cast<uint32_t>(bits_));
  uint64_t nonzero = 0;
  for_each_nonzero([&](uint64_t, double) { ++nonzero; });
  out.put_u64(nonzero);
  for_each_nonzero([&](uint64_t i, double b) {
    out.put_u64(i);
    out.put_f64(b);
  });
}

TrackedVector::Entries TrackedVector::read(ModelReader& in) const {
  auto bad = [&](const std::string& what) {
    return ModelFormatError(in.source() + ": tracked vector: " + what);
  };
  const uint32_t bits = in.get_u32("tracked vector bits");
  if (bits != static_cast<uint32_t>(bits_))
    throw bad("saved with " + std::to_string(bits) + " bits, this run keeps " + std::to_string(bits_));
  const uint64_t n = in.get_u64("tracked vector count");
  if (n > v_.size() || n > in.remaining() / 16) throw bad("entry count does not fit the file");
  Entries e;
  e.nonzero.reserve(n);
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t i = in.get_u64("tracked vector slot");
    const double b = in.get_f64("tracked vector entry");
    if (i >= v_.size() || (k > 0 && i <= e.nonzero.back().first))
      throw bad("slot out of range or out of order");
    if (!std::isfinite(b) || b == 0.0) throw bad("an entry zero or not finite");
    e.nonzero.emplace_back(i, b);
  }
  return e;
}

void TrackedVector::assign(const Entries& entries) {
  clear();
  for (const auto& [i, b] : entries.nonzero) v_[i] = b;
}

void TrackedVector::visit(MatrixVisitor& v) const {
  for_each_nonzero([&](uint64_t i, double b) { v.entry("tracked", i, i, b); });
}

namespace matrix_detail {

void check_beta(double beta, const TrackedVector& b, const char* who) {
  if (!std::isfinite(beta)) throw std::invalid_argument(std::string(who) + ": tracked step must be finite");
  if (beta != 0.0 && !b.enabled())
    throw std::logic_error(std::string(who) + ": b is not kept (MatrixOptions::tracked is off)");
}

void check_lambda(double lambda, const char* who) {
  if (!(lambda > 0.0) || !std::isfinite(lambda))
    throw ConfigError(std::string(who) + ": the prior A = lambda I needs a finite lambda > 0, got " +
                      std::to_string(lambda));
}

void check_update(std::span<const Coord> x, double weight, const char* who) {
  if (!(weight >= 0.0) || !std::isfinite(weight))
    throw std::invalid_argument(std::string(who) + ": rank-one update weight must be finite and >= 0");
  for (const Coord& c : x)
    if (!std::isfinite(c.x)) throw std::invalid_argument(std::string(who) + ": non-finite vector value");
}

void check_scale(double r, const char* who) {
  if (!(r > 0.0 && r <= 1.0))
    throw std::invalid_argument(std::string(who) + ": forgetting factor must be in (0, 1]");
}

void put_header(ModelWriter& out, MatrixKind kind) {
  out.put_u8(static_cast<uint8_t>(kind));
  out.put_u32(kStateVersion);
}

void get_header(ModelReader& in, MatrixKind kind) {
  const uint8_t k = in.get_u8("matrix kind");
  if (k != static_cast<uint8_t>(kind)) {
    const bool known = k >= 1 && k <= 4;
    throw ModelFormatError(in.source() + ": matrix state: the model holds " +
                           (known ? "a '" + std::string(matrix_kind_name(static_cast<MatrixKind>(k))) + "'"
                                  : std::string("an unknown")) +
                           " matrix, this run uses '" + std::string(matrix_kind_name(kind)) + "'");
  }
  if (in.get_u32("matrix state version") != kStateVersion)
    throw ModelFormatError(in.source() + ": matrix state: unknown state version");
}

}  // namespace matrix_detail
}  // namespace lepus

#include "sketch/matrix.h"

#include <cmath>
#include <stdexcept>

#include "lepus/errors.h"
#include "sketch/auto_matrix.h"
#include "sketch/diag_matrix.h"
#include "sketch/full_matrix.h"
#include "sketch/sketch_matrix.h"

namespace lepus {
namespace {
constexpr uint32_t kStateVersion = 1;
}  // namespace

std::string_view matrix_kind_name(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::kFull:
      return "full";
    case MatrixKind::kDiag:
      return "diag";
    case MatrixKind::kSketch:
      return "sketch";
    case MatrixKind::kAuto:
      return "auto";
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
    case MatrixKind::kFull:
      return std::make_unique<FullMatrix>(o.lambda, o.full_cap);
    case MatrixKind::kDiag:
      return std::make_unique<DiagMatrix>(o.lambda, o.diag_bits);
    case MatrixKind::kSketch:
      return std::make_unique<SketchMatrix>(o.lambda, o.sketch_rank, o.sketch_cap, o.sketch_shrink_back);
    case MatrixKind::kAuto:
      return std::make_unique<AutoMatrix>(o);
  }
  throw ConfigError("unknown matrix kind");
}

namespace matrix_detail {

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

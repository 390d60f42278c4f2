// The matrix a second-order, min-max or kernel learner keeps, behind one interface about matrices (not
// learners).
//
// A is symmetric positive definite over the hashed slots, conceptually
//     A = λ I + Σ_t w_t x_t x_tᵀ          (λ > 0, w_t >= 0; optionally forgotten: A <- r A, 0 < r <= 1)
// and the learners ask of it what the online Newton step, recursive least squares, AROW and the last-step
// min-max regressors ask: the quadratic form xᵀA⁻¹x, the product A⁻¹x, and the rank-one update A += w x xᵀ,
// kept current with Sherman–Morrison (A + w x xᵀ)⁻¹ = A⁻¹ − w (A⁻¹x)(A⁻¹x)ᵀ / (1 + w xᵀA⁻¹x) or a
// low-rank (Woodbury) form. Three components, chosen by a learner's --matrix option:
//   full   (full_matrix.h)   exactly A, dense (Eigen) over the slots seen so far, up to a cap;
//   diag   (diag_matrix.h)   diag(A) only, one number per slot, O(nnz) per operation;
//   sketch (sketch_matrix.h) (λ + Δ) I + BᵀB with B a Frequent Directions sketch of the rows √w_t x_tᵀ and Δ
//                            the mass the sketch shrank away (Ghashami, Liberty, Phillips, Woodruff 2016), so
//                            A_sketch ⪰ A and A_sketch grows at least by w x xᵀ each update (Loewner order);
//   auto   (auto_matrix.h)   full while at most max_dense slots are held, then a sketch of the full matrix.
// Slots that were never in an update are not stored: there A is λ I (times the forgetting since), exactly as
// in the fixed d x d matrix, and block-diagonal to the rest, so every operation is exact for them too.
//
// Vectors are lists of (slot, value) coordinates with distinct slots and finite values, as core/coords.h
// builds them. A component is used from one thread at a time (like a Learner: it keeps scratch buffers). For
// a per-feature hot loop a learner holds the concrete (final) class, so calls are not virtual.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/coords.h"
#include "lepus/model_io.h"

namespace lepus {

// Recorded in the model file (each component's state opens with it), so a model is never read as another
// kind.
enum class MatrixKind : uint8_t { kFull = 1, kDiag = 2, kSketch = 3, kAuto = 4 };

std::string_view matrix_kind_name(MatrixKind kind);  // "full", "diag", "sketch", "auto"
MatrixKind matrix_kind_from(std::string_view name);  // the reverse; ConfigError for any other name

// Receives a component's state, in true units (forgetting applied): for --readable_model, finite-state checks
// and digests. Scalars first ("lambda"; "prior", the diagonal of A on never-seen slots, λ times the
// forgetting; full and sketch: "slots" held; sketch: "shrinkage" Δ and "rows"), then the stored numbers:
// full:
// ("inverse", slot_i, slot_j, (A⁻¹)_ij) for i <= j in first-seen order; diag:
// ("diagonal", slot, slot, A_ii) for each slot touched, in slot order; sketch: ("sketch", row, slot,
// B_row,slot) for each nonzero of B, slots in first-seen order.
class MatrixVisitor {
 public:
  virtual ~MatrixVisitor() = default;
  virtual void scalar(std::string_view name, double value) = 0;
  virtual void entry(std::string_view matrix, uint64_t row, uint64_t col, double value) = 0;
};

class Matrix {
 public:
  virtual ~Matrix() = default;
  virtual MatrixKind kind() const = 0;

  // xᵀ A⁻¹ x.
  virtual double quad(std::span<const Coord> x) const = 0;
  // out <- A⁻¹ x as (slot, value) over every slot where it may be nonzero (full and sketch: every slot held,
  // in first-seen order, then x's other slots; diag: x's slots in x's order). Returns xᵀ A⁻¹ x as a
  // by-product.
  virtual double solve(std::span<const Coord> x, std::vector<Coord>& out) const = 0;
  // A += weight x xᵀ, weight >= 0 and finite (0 or an empty x: no change). full and sketch take x's new slots
  // into their index first and throw ConfigError, changing nothing, when that would pass their cap.
  virtual void rank_one_update(std::span<const Coord> x, double weight = 1.0) = 0;
  // Forgetting: A <- r A, 0 < r <= 1, the prior of slots not yet seen included. O(1) (a lazy global factor).
  virtual void scale(double r) = 0;
  // Back to A = λ I, nothing held.
  virtual void reset() = 0;

  // The state, bit for bit (training resumed after load equals training uninterrupted). load checks the kind,
  // the version and the shape against this object's own (λ, bits, rank must be equal; the slots held must fit
  // the cap), bounds every count by the bytes present before allocating, and throws ModelFormatError on bad
  // data, leaving the object unchanged.
  virtual void save(ModelWriter& out) const = 0;
  virtual void load(ModelReader& in) = 0;
  virtual void visit(MatrixVisitor& v) const = 0;
};

struct MatrixOptions {
  MatrixKind kind = MatrixKind::kFull;
  double lambda = 1.0;            // the prior A = λ I; > 0
  uint64_t full_cap = 4096;       // full: most slots held (memory 8 cap² bytes at the cap: 128 MiB for 4096)
  int diag_bits = 18;             // diag: slots are < 2^bits (memory 8 · 2^bits bytes)
  uint32_t sketch_rank = 32;      // sketch: m, the directions kept after a shrink (buffer 2m rows)
  uint64_t sketch_cap = 1 << 20;  // sketch: most slots held (memory 16 m bytes per slot)
  double sketch_shrink_back = 1.0;  // sketch: the fraction of the shrinkage mass Δ added to the ridge
  uint64_t max_dense = 1000;      // auto: full up to this many slots, then sketch
};

// The component `options.kind` names; ConfigError for an out-of-range option.
std::unique_ptr<Matrix> make_matrix(const MatrixOptions& options);

// Shared by the components (matrix.cc).
namespace matrix_detail {
// Forgetting is kept as a global factor s (A = s Â, the component stores Â). When s falls below this the
// stored numbers are multiplied out (O(state), every ln(2^100)/ln(1/r) calls of scale(r)), so Â stays in
// range.
constexpr double kMinScale = 0x1p-100;
void check_lambda(double lambda, const char* who);  // ConfigError unless finite and > 0
void check_update(std::span<const Coord> x, double weight, const char* who);  // std::invalid_argument
void check_scale(double r, const char* who);  // std::invalid_argument unless 0 < r <= 1
void put_header(ModelWriter& out, MatrixKind kind);
void get_header(ModelReader& in, MatrixKind kind);  // ModelFormatError for another kind or version
}  // namespace matrix_detail

}  // namespace lepus

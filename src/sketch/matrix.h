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
// The tracked vector (MatrixOptions::tracked): a learner's sufficient statistics are often the pair (A, b),
// b = Σ_t β_t x_t (AIOLI's b, recursive least squares' Σ y_t x_t, the min-max regressors' b), and its
// prediction reads xᵀA⁻¹b. A component built with tracked = true keeps b itself (dense over the 2^bits slots)
// and answers xᵀA⁻¹x and xᵀA⁻¹b together at the cost of xᵀA⁻¹x: full reads the nnz columns of A⁻¹ it reads
// anyway, diag divides per slot, and the sketch keeps the product B b current, so neither needs a pass over
// every slot held (which solve() costs).
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
#include <utility>
#include <vector>

#include "core/coords.h"
#include "core/zeroed_table.h"
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

// b of the tracked pair (A, b): dense over 2^bits slots (slots are masked), 0 bits = not kept. Saved as its
// nonzero entries.
class TrackedVector {
 public:
  explicit TrackedVector(int bits = 0);  // 0 <= bits <= 32 (ConfigError)
  bool enabled() const { return !v_.empty(); }
  int bits() const { return bits_; }
  double operator[](uint64_t slot) const { return v_[slot & mask_]; }
  double dot(std::span<const Coord> x) const;       // xᵀb
  void add(std::span<const Coord> x, double beta);  // b += β x (std::logic_error when not kept)
  void set(uint64_t slot, double value);            // b_slot = value (std::logic_error when not kept)
  void clear();
  void save(ModelWriter& out) const;
  // Loading in two steps, so a component can check all of its state before changing any: read checks the
  // saved entries (their bits must equal this vector's; ModelFormatError on bad data) and returns them;
  // assign then makes them this vector's.
  struct Entries {
    std::vector<std::pair<uint64_t, double>> nonzero;
  };
  Entries read(ModelReader& in) const;
  void assign(const Entries& entries);
  void visit(MatrixVisitor& v) const;  // ("tracked", slot, slot, b_slot) for each nonzero
  // f(slot, b_slot) for each nonzero entry, in slot order; costs the pages touched, not 2^bits.
  template <class F>
  void for_each_nonzero(F&& f) const {
    v_.for_each_touched([&](size_t i) {
      if (v_[i] != 0.0) f(uint64_t{i}, v_[i]);
    });
  }

 private:
  int bits_;
  uint64_t mask_ = 0;
  ZeroedTable<double> v_;  // costs the pages touched
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
  // The tracked pair (see above). products(x) = {xᵀA⁻¹x, xᵀA⁻¹b} (cross = 0 when b is not kept); update(x, w,
  // β) is A += w x xᵀ and b += β x (β != 0 needs a kept b: std::logic_error). Forgetting (scale) applies to A
  // only.
  struct Products {
    double quad = 0.0, cross = 0.0;
  };
  virtual Products products(std::span<const Coord> x) const = 0;
  // Whether quad(), solve() and products() may run on several threads at once (a daemon's concurrent
  // predictions); false for a matrix that forms them in scratch space of its own.
  virtual bool concurrent_products() const { return false; }
  virtual void update(std::span<const Coord> x, double weight, double beta) = 0;
  virtual const TrackedVector& tracked() const = 0;
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
  int bits = 18;                  // slots are < 2^bits: diag and the tracked b keep 8 · 2^bits bytes
  bool tracked = false;           // keep the tracked vector b (see above)
  uint32_t sketch_rank = 32;      // sketch: m, the directions kept after a shrink (buffer 2m rows)
  uint64_t sketch_cap = 1 << 20;  // sketch: most slots held (memory 16 m bytes per slot)
  double sketch_shrink_back = 1.0;  // sketch: the fraction of the shrinkage mass Δ added to the ridge
  double sketch_diagonal = 0.0;     // sketch: the diagonal correction's c (sketch_matrix.h; 0: none)
  uint64_t max_dense = 1000;        // auto: full up to this many slots, then `beyond`
  MatrixKind beyond = MatrixKind::kSketch;  // auto: what follows the full matrix, kSketch or kDiag
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
void check_beta(double beta, const TrackedVector& b, const char* who);  // invalid_argument / logic_error
}  // namespace matrix_detail

}  // namespace lepus
